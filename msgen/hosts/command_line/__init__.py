"""The command line: `msgen` and the commands a user types (render, validate, convert, schema,
samples, the reconciler's apply, diff, delete, status and controller).

`entry` reads a plain `msgen render` without click; `cli` is the click group, which loads the
commands of the other hosts (kustomize's, Argo CD's, Helm's) by module name when they are named.
"""
