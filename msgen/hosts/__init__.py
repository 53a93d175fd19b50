"""The front ends: the command line, the KRM function, the kustomize plug-in and Argo CD.

Each reads its options and inputs its own way and hands the documents to `msgen.compile`;
nothing else in msgen imports a host."""
