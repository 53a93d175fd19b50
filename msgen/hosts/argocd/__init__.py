"""Argo CD's Config Management Plugin: `discover` (is a directory msgen's), `commands`
(`argocd-generate`), and the sidecar's own kustomize build (`kustomize_build`) on a copy of the
repository's tree (`sidecar_tree`) in which msgen's function is msgen's own step
(`sidecar_step`, `plugin_home`) and no program a repository names runs.
"""
