"""The thin reconciler: apply, diff, status, delete, and the run-time policies.

Decisions are pure functions of plain data (what was rendered, what the cluster reports):
`status` (observed objects → the job's aggregated status), `actions` (→ the policy actions
due), `applyset` (ApplySet ids, the prune set, apply order). Only `kube` and the command
modules import the Kubernetes client (lightkube, the `msgen-k8s[apply]` extra), so `msgen
render` and every plug-in host never load it.
"""
