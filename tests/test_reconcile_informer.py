"""Watching with plain data: the cache's steps, what follows a failed call, and the loop's
resume from resourceVersion and relist on 410 Gone, driven by scripted list/watch calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from msgen.reconcile import informer
from msgen.reconcile.kube import KubeError


def obj(name: str, version: str, phase: str = "Pending") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
            "status": {"phase": phase}}


def test_events_update_the_copy_and_its_version() -> None:
    cache = informer.relisted([obj("a", "5"), obj("b", "6")], "7")
    cache = informer.applied(cache, "MODIFIED", obj("a", "8", "Running"))
    cache = informer.applied(cache, "DELETED", obj("b", "9"))
    cache = informer.applied(cache, "ADDED", obj("c", "10"))
    assert cache.version == "10"
    assert {k: v["status"]["phase"] for k, v in cache.objects.items()} == {"ns/a": "Running", "ns/c": "Pending"}
    bookmark = informer.applied(cache, "BOOKMARK", {"metadata": {"resourceVersion": "12"}})
    assert bookmark.version == "12" and bookmark.objects == cache.objects


def test_an_error_event_with_410_asks_for_a_relist() -> None:
    with pytest.raises(informer.Gone):
        informer.applied(informer.Cache(), "ERROR", {"kind": "Status", "code": 410, "message": "too old"})


@pytest.mark.parametrize(("code", "step"), [
    (410, "relist"), (0, "resume"), (409, "resume"), (429, "resume"), (500, "resume"), (503, "resume"),
    (504, "resume"), (403, "give_up"), (404, "give_up"), (401, "give_up"),
])  # fmt: skip
def test_what_follows_a_failed_call(code: int, step: str) -> None:
    assert informer.next_step(code) == step


def test_backoff_doubles_up_to_a_cap() -> None:
    assert [informer.backoff(n) for n in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]


class Script:
    """A server that answers lists and watches from a script, and records what was asked."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.lists = [([obj("a", "1")], "1"), ([obj("a", "20", "Running")], "20")]
        self.watches: list[list[Any]] = [
            [("MODIFIED", obj("a", "2", "Running")), KubeError("dropped", 0)],
            [("ADDED", obj("b", "3")), KubeError("watching Pod: too old", 410)],
            [("DELETED", obj("b", "21"))],
        ]
        self.done = threading.Event()

    def lister(self) -> tuple[list[dict[str, Any]], str | None]:
        self.calls.append("list")
        return self.lists.pop(0)

    def watcher(self, version: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
        self.calls.append(f"watch from {version}")
        if not self.watches:
            self.done.set()
            threading.Event().wait(5)
            return
        for step in self.watches.pop(0):
            if isinstance(step, Exception):
                raise step
            yield step


def test_the_loop_resumes_after_a_dropped_watch_and_relists_after_410(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(informer, "backoff", lambda attempt: 0.0)
    script = Script()
    watching = informer.Informer(None, "v1", "Pod", "ns", {}, threading.Event(),
                                 lister=script.lister, watcher=script.watcher).start()
    assert script.done.wait(10)
    watching.stop()
    # A dropped connection resumes from the last event's version; 410 relists, then watches
    # from the new list's version; the relist replaced what the old watch had added.
    assert script.calls == ["list", "watch from 1", "watch from 2", "list", "watch from 20", "watch from 21"]
    assert [o["metadata"]["name"] for o in watching.items()] == ["a"]
    assert watching.items()[0]["status"]["phase"] == "Running"


def test_a_kind_the_server_does_not_serve_is_an_empty_set() -> None:
    changed = threading.Event()

    def refused() -> tuple[list[dict[str, Any]], str | None]:
        raise KubeError("listing JobSet: the server could not find the requested resource", 404)

    def never(version: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
        raise AssertionError("no watch without a list")

    watching = informer.Informer(None, "jobset.x-k8s.io/v1alpha2", "JobSet", "ns", {}, changed,
                                 lister=refused, watcher=never).start()
    assert watching.synced.wait(5)
    watching.stop()
    assert watching.items() == [] and not watching.served and "could not find" in (watching.problem or "")


def _pod(name: str, phase: str, **annotations: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "annotations": annotations},
            "status": {"phase": phase}}


def test_select_finds_policy_workloads_and_pods_in_the_watched_copies() -> None:
    from msgen.reconcile import watch

    policy_text = '{"job":"j","roles":{"Worker":{"replicas":1,"restartPolicy":"Never"}},"target":"indexed-job"}'
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j-worker", "uid": "u1", "annotations": {"msgen/run-policy": policy_text}}}
    made = _pod("j-worker-0-bcdfg", "Running")
    made["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j-worker",
                                            "uid": "u1", "controller": True}]
    made["metadata"]["labels"] = {"training.kubeflow.org/replica-type": "worker",
                                  "batch.kubernetes.io/controller-uid": "u1"}
    policy, workloads, pods = watch.select("j", "ns", [job, made, _pod("j-worker-0-cdfgh", "Running")])
    assert policy.target == "indexed-job" and workloads == [job] and [p["metadata"]["name"] for p in pods] == [
        "j-worker-0-bcdfg"]
    with pytest.raises(watch.NotFound):
        watch.select("j", "ns", [_pod("j-worker-0-x", "Running")])


def test_pending_reasons_name_the_waiting_pod_and_the_event() -> None:
    from msgen.reconcile import watch

    events = [
        {"involvedObject": {"name": "p0"}, "reason": "FailedScheduling", "lastTimestamp": "2026-01-01T00:00:02Z",
         "message": "0/3 nodes are available: 3 Insufficient huawei.com/Ascend910. "},
        {"involvedObject": {"name": "p1"}, "reason": "FailedScheduling", "message": "running pod: not shown"},
        {"involvedObject": {"name": "p0"}, "reason": "Scheduled", "message": "not a reason to wait"},
    ]  # fmt: skip
    found = watch.pending_reasons(events, [_pod("p0", "Pending"), _pod("p1", "Running")])
    assert found == ["pod p0: FailedScheduling: 0/3 nodes are available: 3 Insufficient huawei.com/Ascend910."]


def test_pending_reasons_include_the_kubelets_image_pull_events_and_waiting_containers() -> None:
    from msgen.reconcile import watch

    events = [
        {"involvedObject": {"name": "p0"}, "reason": "Failed", "lastTimestamp": "2026-01-01T00:00:01Z",
         "message": 'Failed to pull image "mindspore/mindspore:9.9": not found'},
        {"involvedObject": {"name": "p0"}, "reason": "BackOff", "lastTimestamp": "2026-01-01T00:00:02Z",
         "message": 'Back-off pulling image "mindspore/mindspore:9.9"'},
    ]  # fmt: skip
    pulling = _pod("p0", "Pending")
    pulling["status"]["containerStatuses"] = [
        {"name": "mindspore", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}}}]
    starting = _pod("p1", "Pending")
    starting["status"]["containerStatuses"] = [{"name": "mindspore", "state": {"waiting": {"reason": "ContainerCreating"}}}]
    assert watch.pending_reasons(events, [pulling, starting]) == [
        'pod p0: Failed: Failed to pull image "mindspore/mindspore:9.9": not found',
        'pod p0: BackOff: Back-off pulling image "mindspore/mindspore:9.9"',
        "pod p0 container mindspore: ImagePullBackOff: Back-off pulling",
    ]


# --- a watch never dies quietly -----------------------------------------------------------------


def test_an_error_event_is_a_failed_call_with_its_code() -> None:
    with pytest.raises(informer.WatchError) as caught:
        informer.applied(informer.Cache(), "ERROR", {"kind": "Status", "code": 500, "message": "etcd leader changed"})
    assert caught.value.code == 500 and informer.next_step(caught.value.code) == "resume"


def _run_script(watches: list[list[Any]], monkeypatch: pytest.MonkeyPatch) -> tuple[informer.Informer, Script]:
    monkeypatch.setattr(informer, "backoff", lambda attempt: 0.0)
    script = Script()
    script.lists = [([obj("a", "1")], "1")]
    script.watches = watches
    watching = informer.Informer(None, "v1", "Pod", "ns", {}, threading.Event(),
                                 lister=script.lister, watcher=script.watcher).start()
    assert script.done.wait(10)
    return watching, script


def test_a_watch_error_event_500_resumes_and_the_thread_keeps_the_copy_current(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's ERROR event (code 500) used to end the thread with a ValueError: a
    frozen copy, no problem reported. It is now resumed from the last version."""
    error = {"kind": "Status", "code": 500, "message": "etcd leader changed"}
    watching, script = _run_script([[("MODIFIED", obj("a", "2", "Running")), ("ERROR", error)],
                                    [("MODIFIED", obj("a", "3", "Succeeded"))]], monkeypatch)
    assert watching.alive()
    watching.stop()
    assert script.calls == ["list", "watch from 1", "watch from 2", "watch from 3"]
    assert watching.items()[0]["status"]["phase"] == "Succeeded"
    assert watching.problem is None and watching.healthy()


def test_anything_unexpected_in_a_watch_is_kept_as_a_problem_and_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    watching, script = _run_script([[("MODIFIED", None)], []], monkeypatch)
    assert watching.alive()
    watching.stop()
    # The event msgen could not read changed nothing and was reported; the watch resumed.
    assert script.calls[:3] == ["list", "watch from 1", "watch from 1"]
    assert watching.problem is None and watching.items()[0]["metadata"]["name"] == "a"


def test_a_refusal_is_reported_and_the_informer_is_not_healthy() -> None:
    def forbidden() -> tuple[list[dict[str, Any]], str | None]:
        raise KubeError('listing Pod in every namespace: pods is forbidden: User "u" cannot list resource "pods"', 403)

    watching = informer.Informer(None, "v1", "Pod", "*", {}, threading.Event(), lister=forbidden,
                                 watcher=lambda version: iter(())).start()
    assert watching.synced.wait(5)
    watching.stop()
    assert watching.refused and "forbidden" in (watching.problem or "") and not watching.healthy()


def test_wait_synced_keeps_its_timeout_and_names_who_did_not_list() -> None:
    import time

    stuck = threading.Event()

    def hanging() -> tuple[list[dict[str, Any]], str | None]:
        stuck.wait(30)
        return [], "1"

    slow = informer.Informer(None, "v1", "Pod", "ns", {}, threading.Event(), lister=hanging,
                             watcher=lambda version: iter(())).start()
    started = time.monotonic()
    late = informer.wait_synced([slow], timeout=0.5)
    assert late == [slow] and time.monotonic() - started < 5
    stuck.set()
    slow.stop()


def test_a_watch_the_server_answers_again_is_current_before_any_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a dropped connection, the watch the server answers again makes the copy current
    at once. A kind with no objects (StatefulSets where there are none) sends no event: it
    used to stay failing until the server ended that quiet watch, a minute later, and the
    controller acted on nothing meanwhile."""
    from msgen.reconcile import kube

    monkeypatch.setattr(informer, "backoff", lambda attempt: 0.0)
    release = threading.Event()
    calls: list[str | None] = []

    def quiet(client: Any, api_version: str, kind: str, namespace: str, labels: dict[str, Any],
              version: str | None, opened: Any = None) -> Iterator[tuple[str, dict[str, Any]]]:
        calls.append(version)
        if len(calls) == 1:
            raise KubeError("watching StatefulSet: no answer (connection reset)", 0)
        if opened is not None:
            opened()  # the server answered 200; no event follows
        release.wait(10)
        return
        yield

    monkeypatch.setattr(kube, "watch_events", quiet)
    watching = informer.Informer(None, "apps/v1", "StatefulSet", "ns", {}, threading.Event(),
                                 lister=lambda: ([], "7")).start()
    try:
        deadline = threading.Event()
        for _ in range(100):
            if len(calls) >= 2 and watching.healthy():
                break
            deadline.wait(0.05)
        assert calls[:2] == ["7", "7"] and watching.healthy() and watching.problem is None
    finally:
        watching.stop()
        release.set()


class _Watched(threading.Event):
    """An Event that records what the informer says (problem, served, refused) each time it
    wakes its readers."""

    def __init__(self) -> None:
        super().__init__()
        self.informer: informer.Informer | None = None
        self.seen: list[tuple[str | None, bool, bool]] = []

    def set(self) -> None:
        if self.informer is not None:
            self.seen.append((self.informer.problem, self.informer.served, self.informer.refused))
        super().set()


@pytest.mark.parametrize("code", [404, 403])
def test_a_reader_woken_by_a_refusal_sees_it_whole(code: int) -> None:
    """The controller's loop reads `problem` and `served` as soon as `changed` wakes it: a kind
    the server does not serve (404, no CRD) must never look like a watch that fails (which
    `msgen controller --once` reports as an error), nor a refusal like a passing failure."""
    changed = _Watched()

    def refused() -> tuple[list[dict[str, Any]], str | None]:
        raise KubeError(f"listing TrainJob in ns: HTTP {code}", code)

    watching = informer.Informer(None, "trainer.kubeflow.org/v1alpha1", "TrainJob", "ns", {}, changed,
                                 lister=refused, watcher=lambda version: iter(()))
    changed.informer = watching
    watching.start()
    assert watching.synced.wait(5)
    watching.stop()
    woken_with_problem = [(served, refused_) for problem, served, refused_ in changed.seen if problem]
    assert woken_with_problem, changed.seen
    assert all(served == (code != 404) and refused_ == (code != 404) for served, refused_ in woken_with_problem), changed.seen
