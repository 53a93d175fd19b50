"""The reconciler's commands (`msgen apply`, `diff`, `delete`, `status`, `controller`): click
front ends over `msgen.reconcile`."""
