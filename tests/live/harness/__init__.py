"""msgen's live test harness: a Kubernetes of one node or several, built from registry packages only.

`tests/live/cluster` (an executable, stdlib only) is its command line:

    tests/live/cluster up [--with a,b,c]   build what is missing, start the cluster and the named
                                           components, wait until ready; the last lines printed
                                           are `MSGEN_TEST_KUBECONFIG=<path>` and the other
                                           `MSGEN_TEST_<NAME>=<value>` the live tests need
        [--nodes N]                        N nodes (default: as many as now; 1 at first), node 1
                                           `msgen-node` on the host, `msgen-node-<i>` each in a
                                           network namespace of its own (topology.py)
        [--node-resources cpu=,memory=,<device>=]  what each node advertises
        [--mindspore-version X,Y]          MindSpore images of those releases, on every node
        [--feature-gates A=true]           Kubernetes feature gates of the control plane (features.py)
        [--kube-version X.Y]               another Kubernetes release, from a home of its own
                                           (releases.py; `node`, `down` and `status` take it too)
        [--port-offset N]                  that home's control plane only, its ports moved by N,
                                           beside a cluster on the usual ports: no node, so no
                                           --nodes above 1, --node-resources, --with or
                                           --mindspore-version there
    tests/live/cluster node stop NAME      lose an extra node: its processes and containers
                                           killed, no clean shutdown (node_runtime.lose); the
                                           extra nodes' network is held by one home at a time
                                           (network.claim)
    tests/live/cluster node start NAME     bring it back, Ready
    tests/live/cluster down                stop what `up` started, remove its containers (and
                                           the extra nodes' namespaces, veths, routes, rules)
    tests/live/cluster status              say what runs

Everything is idempotent. State and builds live under `$MSGEN_HARNESS_HOME` (default
`/root/.cache/msgen-harness`): `bin/` (binaries), `images/` (image tarballs, root filesystems),
`pki/`, `etc/` (configuration, kubeconfigs), `data/` (etcd, kubelet), `logs/` (one log per
process and per build), `run/` (pid files).

Components
----------
An add-on is a module `harness/components/<name>.py` (`--with <name>`) with:

    NAME: str
    def build(h: Harness) -> None             build its binaries/images when missing
    def up(h: Harness) -> dict[str, str]      install it into the running cluster, wait until it
                                              is ready, return extra `MSGEN_TEST_*` values
    def down(h: Harness) -> None              remove/stop it
    def status(h: Harness) -> str             one line: what runs

`h` is a `harness.core.Harness`: its paths (`home`, `bin`, `images`, `logs`, `run`, `etc`, `data`,
`kubeconfig`, `repo`), node 1 (`node_ip`, `node_name`), `nodes()` (every node's plan), and
helpers: `go_build(module_dir, package, out, ldflags=())`, `kubectl(*args, input=None) -> str`,
`spawn(name, argv, env=None, netns=None)` (a background process with a pid file and
`logs/<name>.log`), `stop(name)`, `kill(name)`, `alive(name)`, `wait_for(what, check, timeout)`,
`import_image(tarball)`, `image_present(ref)`, `build_image(ref, containerfile, context,
build_args=None, tags=())` (buildah, then imported into node 1's containerd) and
`log(message)`.

Go builds: one module directory per build under `tests/live/go/<name>/` (go.mod and go.sum pin
every dependency; a small main.go of ours where upstream has no main package to build).
"""
