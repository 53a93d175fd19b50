"""kustomize's hosts: the KRM function `msgen-krm` (`krm`, its config `krm_config`, its console
script's entry point `krm_entry`) and the legacy exec plug-in (`legacy_plugin`, its commands in
`commands`), the only exec route `kubectl kustomize` runs.
"""
