"""A small data-parallel MindSpore training that every pod of a live-test job runs.

The live tests (`tests/test_live_training.py`) mount this file into the pods of the jobs they
render, under the path each job's own command names, as ms-operator's samples mount their
scripts from a volume. Every process of the job runs it:

- the Scheduler (`MS_ROLE=MS_SCHED`): `init()` runs MindSpore's scheduler until the cluster ends;
- a PS pod (`MS_ROLE=MS_PSERVER`): `init()`, as a parameter server's script would, then it
  stays in the cluster for a while (it has nothing to serve in MindSpore 2.x);
- a Worker: `init()` joins the cluster, an AllReduce of `rank + 1` checks the collective sum,
  then a linear regression trains for a few steps on data only this rank sees, with the
  gradients averaged across ranks (data parallel); every worker prints its final parameters,
  which agree only if the gradient AllReduce worked;
- no `MS_ROLE` (a job without a Scheduler): the same training, alone.

For the failure suites, a few environment variables make the training longer or make one
worker fail in the middle of it: `LIVE_STEPS` (default 20) steps of `LIVE_STEP_SECONDS` each
(default 0; with more, every step prints a `step` line), and `LIVE_FAIL_NODE=<node id>` with
`LIVE_FAIL_AT_STEP=<step>`: there that worker exits with `LIVE_FAIL_EXIT` (default 3), or,
with `LIVE_FAIL_EXIT=oom`, allocates memory until the kernel kills it (its container needs a
memory limit).

Whatever device the job's command names, it runs on the CPU. Unknown arguments (the samples'
`--data_path`, `--epochs`, ...) are accepted and ignored. Each result is one line
`MSGEN-LIVE {json}` on stdout, for the tests to read from the pod's log.
"""

import argparse
import json
import os
import sys
import time

STEPS = int(os.environ.get("LIVE_STEPS", "20"))
STEP_SECONDS = float(os.environ.get("LIVE_STEP_SECONDS", "0"))
#: Seconds a PS stays in the cluster after joining (it is deleted sooner when its job ends).
PS_STAYS = 120
TRUE_WEIGHTS = (1.0, -2.0, 3.0, 0.5)
TRUE_BIAS = 0.25


def say(event: str, **fields: object) -> None:
    print("MSGEN-LIVE " + json.dumps({"event": event, **fields}, sort_keys=True), flush=True)


def fail_once(node_id: str) -> None:
    """`LIVE_FAIL_ONCE=<node id>` with `LIVE_MARKER_DIR` (a volume that outlives the container):
    that node's first run exits 1 here, once it has joined the cluster, as a crash would."""
    if os.environ.get("LIVE_FAIL_ONCE") != node_id:
        return
    marker = os.path.join(os.environ["LIVE_MARKER_DIR"], f"failed-once-{node_id}")
    if os.path.exists(marker):
        say("restarted", node_id=node_id)
        return
    open(marker, "w").close()
    say("crash", node_id=node_id)
    os._exit(1)


def fail_at(node_id: str, step: int) -> None:
    """`LIVE_FAIL_NODE` fails at `LIVE_FAIL_AT_STEP`: an exit code, or an OOM kill."""
    if os.environ.get("LIVE_FAIL_NODE") != node_id or os.environ.get("LIVE_FAIL_AT_STEP") != str(step):
        return
    how = os.environ.get("LIVE_FAIL_EXIT", "3")
    say("fail", node_id=node_id, step=step, how=how)
    if how != "oom":
        os._exit(int(how))
    hog = []
    while True:  # touched pages, 64 MiB at a time, until the cgroup's limit kills the process
        hog.append(bytearray(64 << 20))
        hog[-1][::4096] = b"x" * len(range(0, 64 << 20, 4096))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device_target", default="CPU")
    asked, _ = parser.parse_known_args()
    role = os.environ.get("MS_ROLE", "")
    node_id = os.environ.get("MS_NODE_ID", "")
    say("start", role=role, node_id=node_id, asked_device=asked.device_target,
        sched_host=os.environ.get("MS_SCHED_HOST", ""), pid=os.getpid())

    import numpy as np
    import mindspore as ms
    from mindspore import Tensor, nn, ops
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_context(device_target="CPU")
    started = time.monotonic()
    if role:
        init()
        if role == "MS_PSERVER":
            # MindSpore 2.10 has no parameter-server training left: a PS joins (its init()
            # returns once the PS processes formed their own group) and has nothing to serve.
            # It stays in the cluster as a serving PS would: PS processes that ended while the
            # workers were still forming their group were followed by the workers' init()
            # failing ("Failed to AllGather host's hash name due to timeout") on the test cluster.
            say("role-joined", role=role, node_id=node_id)
            time.sleep(PS_STAYS)
            return 0
        if role != "MS_WORKER":
            # The Scheduler's init() returns only when the cluster has ended (where it returns).
            say("role-done", role=role, node_id=node_id)
            return 0
        rank, size = get_rank(), get_group_size()
    else:
        rank, size = 0, 1
    say("cluster", rank=rank, size=size, node_id=node_id, seconds=round(time.monotonic() - started, 1))
    fail_once(node_id)

    if size > 1:
        total = ops.AllReduce()(Tensor(np.array([rank + 1.0], np.float32)))
        say("allreduce", rank=rank, sum=float(total.asnumpy()[0]), expected=size * (size + 1) / 2)

    net = nn.Dense(4, 1, weight_init="zeros", bias_init="zeros")
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=size) if size > 1 else None

    def forward(x: object, y: object) -> object:
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    data = np.random.default_rng(1000 + rank)  # each rank its own shard
    weights = np.array(TRUE_WEIGHTS, np.float32)
    losses = []
    for step in range(STEPS):
        fail_at(node_id, step)
        x = data.normal(size=(32, 4)).astype(np.float32)
        y = (x @ weights + TRUE_BIAS).reshape(-1, 1).astype(np.float32)
        loss, grads = grad_fn(Tensor(x), Tensor(y))
        if reducer is not None:
            grads = reducer(grads)
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
        if STEP_SECONDS:
            say("step", rank=rank, step=step, loss=losses[-1])
            time.sleep(STEP_SECONDS)
    params = [float(v) for p in net.trainable_params() for v in p.asnumpy().reshape(-1)]
    say("trained", rank=rank, size=size, steps=STEPS, first_loss=losses[0], last_loss=losses[-1],
        params=params, seconds=round(time.monotonic() - started, 1))
    if size > 1:
        # A last collective: no rank exits (ending its Job) before every rank has printed.
        ops.AllReduce()(Tensor(np.array([1.0], np.float32)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
