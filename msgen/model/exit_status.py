"""The exit statuses of every msgen command, named once.

Every host (the `msgen` command line, `msgen-krm`, the kustomize and Helm plug-ins, Argo CD's
commands) and the reconciler's commands end with one of these; nothing else spells a status.
A command raises `SystemExit(<status>)` where it decides; everything else is decided at the
one error boundary (`msgen.hosts.compile_command.guarded`): a bug is EXIT_INTERNAL, Ctrl-C
EXIT_INTERRUPTED. The README ("Using it") and docs/reconciler.md list them for users.
"""

#: Done (warnings may have been printed).
EXIT_OK = 0
#: The input has errors (nothing was written); the cluster refused, or cannot be reached; the
#: job failed (`apply --wait`, `status --watch`); the output's reader went away (a closed pipe).
EXIT_INPUT = 1
#: The command line is wrong, or what the command needs is not installed (`msgen-k8s[apply]`).
EXIT_USAGE = 2
#: `--timeout` passed first; the job keeps running.
EXIT_TIMEOUT = 3
#: A bug in msgen (sysexits' EX_SOFTWARE): one line saying so; MSGEN_DEBUG=1 shows the traceback.
EXIT_INTERNAL = 70
#: A signal ended the command: 128 + its number, as a shell reports it.
EXIT_SIGNALLED = 128
#: Ctrl-C (SIGINT, 2), and SIGTERM where a command stops on it as on Ctrl-C (`msgen controller`).
EXIT_INTERRUPTED = EXIT_SIGNALLED + 2

#: `msgen diff` exits as `kubectl diff` does: EXIT_OK no difference, EXIT_DIFFERENT the
#: objects differ, EXIT_DIFF_ERROR any error (of the input, the command line or the cluster).
EXIT_DIFFERENT = 1
EXIT_DIFF_ERROR = 2
