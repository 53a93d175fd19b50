"""Helm's post-renderer: `helm-post-renderer` (`commands`, `post_renderer`) for Helm 3's
`--post-renderer`, and the Helm 4 plug-in `msgen install-helm-plugin` writes (`plugin`).
"""
