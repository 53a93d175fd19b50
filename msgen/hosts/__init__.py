"""The front ends, a package per host: `command_line` (`msgen` and the commands a user types),
`kustomize` (the KRM function `msgen-krm` and the legacy exec plug-in), `argocd` (the Config
Management Plugin and its sidecar's build) and `helm` (the post-renderer and its plug-in).

Each reads its options and inputs its own way and hands the documents to `msgen.compile`.
What they share lies beside them: `compile_command` (compiling paths, reporting findings, the
error boundary and exit status), `click_options` (the options every compiling command takes),
`fast_exit` (leaving a render without the interpreter's clean-up), `job_text` (whether a text
holds a job) and `plugin_script` (the script a plug-in host runs). Within `hosts`, the command
line loads the other hosts' commands by name; Argo CD's sidecar builds with kustomize's plug-in;
Helm and Argo CD use nothing of each other; nothing else in msgen imports a host.
"""
