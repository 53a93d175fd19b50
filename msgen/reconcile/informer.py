"""A local, current copy of the objects one list + watch sees (an informer, as client-go has).

The reconciler's decisions need complete views (every pod of a job), and a user wants to see
a pod's change when it happens, not at the next poll. So each kind is listed once, then
watched from the list's resourceVersion; every event updates the copy and wakes whoever
waits on `changed`. What can go wrong is decided by functions of plain data, tested with it:

- `applied`: an event's effect on the copy, in place (ADDED/MODIFIED put, DELETED removes, BOOKMARK
  moves the version only); an ERROR event is a failed call like any other (`WatchError`
  with its code: 410 Gone means the version is too old, 500 a server that may answer later).
- `next_step`: after a failed call, `relist` (410 Gone: events were missed, only a fresh list
  is complete), `resume` (429, 5xx, a dropped or timed-out connection: watch again from the
  last version seen, after `backoff`), or `give_up` (403 and other refusals; 404 a kind the
  server does not serve, retried slowly in case its CRD is installed later).

Each object is kept without its `metadata.managedFields` (`trimmed`): the server's
bookkeeping of who set which field, which no decision reads; the controller keeps even less
(`records.essentials`: the fields its decisions read, each string interned). An event
changes the copy in place: a copy of the whole cache per event cost 5 % of a leader's time
at 6,000 pods.
`notify` is told of every object that changed or went (what a relist changed included), so
the controller queues its job alone and keeps its objects by job; `recorder` counts lists, events, restarts and failures.

A watch is current again as soon as the server accepts it (`opened`), not at its first event:
a kind with no objects sends none, and would keep the controller idle until the server ends
that quiet watch, a minute later.

Every request has a timeout: lists the client's, watches the server's `timeoutSeconds`
(`kube.WATCH_SECONDS`) plus a margin on reads, so a silent connection is noticed. A watch never dies quietly: whatever
goes wrong in its thread is kept in `problem` (and logged by the caller) and the thread tries
again; `healthy()` says whether the copy is current, which the controller's readiness probe
and `--once` report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .metrics import NOTHING, Recorder
from .records import essentials as essentials

_TRANSIENT = {0, 408, 409, 429, 500, 502, 503, 504}


class WatchError(Exception):
    """An ERROR event in a watch: the server's Status, with its HTTP code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class Gone(WatchError):
    """410 Gone: the resourceVersion is older than the server keeps; relist."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 410)


@dataclass(frozen=True)
class Cache:
    """What one list + watch has seen: objects by namespace/name, and the last version."""

    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: str | None = None


def _key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name')}"


def relisted(items: list[dict[str, Any]], version: str | None) -> Cache:
    return Cache({_key(o): o for o in items}, version)


def resource_of(api_version: str, kind: str) -> str:
    """`pods`, `jobs.batch`, `jobs.batch.volcano.sh`: the resource as Kubernetes names it
    (the `resource` label of the watch metrics)."""
    from .kube import plural

    group = api_version.rpartition("/")[0]
    return plural(kind) + (f".{group}" if group else "")


def trimmed(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without `metadata.managedFields` (a shallow copy when it had them)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


def relist_changes(before: Cache, after: Cache) -> list[tuple[dict[str, Any], bool]]:
    """The objects a relist added, changed (another resourceVersion) or removed (True):
    what a watch would have reported had it not been interrupted."""
    changed = [(o, False) for key, o in after.objects.items()
               if _version(before.objects.get(key)) != _version(o) or key not in before.objects]
    return changed + [(o, True) for key, o in before.objects.items() if key not in after.objects]


def _version(obj: dict[str, Any] | None) -> str | None:
    return None if obj is None else (obj.get("metadata") or {}).get("resourceVersion")


def applied(cache: Cache, event: str, obj: dict[str, Any]) -> Cache:
    """The copy after one watch event; an ERROR event raises WatchError (Gone for 410).
    `cache.objects` is changed in place, not copied (the caller holds the informer's lock):
    a copy per event grows with the cache, and a cache holds thousands of pods."""
    if event == "ERROR":
        code = int(obj.get("code") or 0)
        if code == 410:
            raise Gone(str(obj.get("message") or "resourceVersion too old"))
        raise WatchError(f"watch error {code}: {obj.get('message')}", code)
    version = (obj.get("metadata") or {}).get("resourceVersion") or cache.version
    if event == "BOOKMARK":
        return Cache(cache.objects, version)
    objects = cache.objects
    if event == "DELETED":
        objects.pop(_key(obj), None)
    else:  # ADDED, MODIFIED
        objects[_key(obj)] = obj
    return Cache(objects, version)


def next_step(code: int) -> str:
    """What to do after a call failed with HTTP status `code` (0: no answer)."""
    if code == 410:
        return "relist"
    if code in _TRANSIENT:
        return "resume"
    return "give_up"


def backoff(attempt: int, cap: float = 30.0) -> float:
    """Seconds to wait before attempt `attempt` + 1: 0.5, 1, 2, ... up to `cap`."""
    return float(min(cap, 0.5 * 2**attempt))


Lister = Callable[[], tuple[list[dict[str, Any]], str | None]]
Watcher = Callable[[str | None], Iterator[tuple[str, dict[str, Any]]]]


class Informer:
    """One kind, one namespace (or every: "*"), one label selector, kept current in a thread.

    `changed` is set after every change (and after the first list); `synced` once the first
    list is in (or the first refusal: the caller must not wait for ever). `problem` holds
    what went wrong last and is cleared once a list or watch works again; `failing_since`
    says since when (monotonic seconds), `refused` whether the server said no (403).
    `lister` and `watcher` are the two calls to the
    server (kube's, unless a test gives its own).
    """

    def __init__(self, client: Any, api_version: str, kind: str, namespace: str,
                 labels: dict[str, Any], changed: threading.Event, *,
                 lister: Lister | None = None, watcher: Watcher | None = None,
                 notify: Callable[[dict[str, Any], bool], None] | None = None, recorder: Recorder = NOTHING,
                 transform: Callable[[dict[str, Any]], dict[str, Any]] = trimmed) -> None:
        from . import kube

        self.kind = kind
        self.resource = resource_of(api_version, kind)
        self.notify = notify
        self.recorder = recorder
        self.transform = transform
        self.namespace = namespace
        self.changed = changed
        #: lists what `transform` keeps of each object, a page at a time (kube's does it as it
        #: reads; a given lister's answer is transformed here), so a relist makes each record once
        self.lister: Lister = _transforming(lister, transform) if lister else (
            lambda: kube.listing_with_version(client, api_version, kind, namespace, labels, transform))
        self.watcher: Watcher = watcher or (
            lambda version: kube.watch_events(client, api_version, kind, namespace, labels, version,
                                              opened=self._recovered))
        self.synced = threading.Event()
        self.cache = Cache()
        self.problem: str | None = None
        self.failing_since: float | None = None
        self.served = True
        #: the server refused (403, 401, ...): retrying slowly will not help by itself
        self.refused = False
        self.listed = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"watch {kind}", daemon=True)

    def start(self) -> Informer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def healthy(self) -> bool:
        """Listed, and the copy is being kept current (a kind the server does not serve
        counts: its copy is rightly empty)."""
        return self.alive() and self.listed and (self.problem is None or not self.served)

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.cache.objects.values())

    def _set(self, cache: Cache) -> None:
        with self._lock:
            self.cache = cache
        self.changed.set()

    def _failed(self, problem: str) -> None:
        if self.failing_since is None:
            self.failing_since = time.monotonic()
        self.problem = problem
        self.changed.set()

    def _recovered(self) -> None:
        if self.problem is not None:
            self.problem, self.failing_since, self.refused = None, None, False
            self.changed.set()

    def _tell(self, changes: list[tuple[dict[str, Any], bool]]) -> None:
        """`notify` each (object, deleted)."""
        if self.notify is not None:
            for obj, deleted in changes:
                self.notify(obj, deleted)

    def _run(self) -> None:
        attempt = 0
        relist = True
        watched = False
        while not self._stop.is_set():
            try:
                if relist:
                    items, version = self.lister()
                    self.recorder.watch_listed(self.resource)
                    before, after = self.cache, relisted(items, version)
                    self._set(after)
                    self._tell(relist_changes(before, after))
                    self._recovered()  # the problem goes before the kind counts as served again
                    self.served, relist, self.listed = True, False, True
                    self.synced.set()
                if watched:
                    self.recorder.watch_restarted(self.resource)
                watched = True
                for event, obj in self.watcher(self.cache.version):
                    self.recorder.watch_event(self.resource, event)
                    obj = self.transform(obj)
                    with self._lock:
                        self.cache = applied(self.cache, event, obj)
                    self.changed.set()
                    if event != "BOOKMARK":
                        self._tell([(obj, event == "DELETED")])
                    self._recovered()
                    attempt = 0
                    if self._stop.is_set():
                        return
                self._recovered()  # the server ended the watch as it does: it works
                attempt = 0  # watch again (after backoff(0))
            except Exception as exc:  # noqa: BLE001 - a watch thread must never end quietly
                step, code = _step(exc)
                self.recorder.watch_failed(self.resource, code or 0)
                if step == "relist":
                    relist = True
                    continue
                if step == "give_up":
                    # Said before the problem is: a reader woken by it (the controller's
                    # loop) must never see a kind the server does not serve as a failing watch.
                    self.refused = code != 404
                    if code == 404:
                        self.served = False
                self._failed(f"{exc}" if code is not None else f"{type(exc).__name__}: {exc}")
                if step == "give_up":
                    if code == 404:  # not served (yet): an empty set, looked at again later
                        self.listed = True
                        self._tell([(o, True) for o in self.items()])
                        self._set(Cache())
                    self.synced.set()
                    relist = True
                    self._stop.wait(30.0)
                    continue
            self._stop.wait(backoff(attempt))
            attempt += 1


def _transforming(lister: Lister, transform: Callable[[dict[str, Any]], dict[str, Any]]) -> Lister:
    def listed() -> tuple[list[dict[str, Any]], str | None]:
        items, version = lister()
        return [transform(o) for o in items], version
    return listed


def _step(exc: Exception) -> tuple[str, int | None]:
    """What follows `exc` in a watch thread, and its HTTP code when it has one. Anything
    else (a bug, an answer msgen cannot read) is retried slowly, never the thread's end."""
    from . import kube

    if isinstance(exc, (kube.KubeError, WatchError)):
        return next_step(exc.code), exc.code
    return "resume", None


def wait_synced(informers: list[Informer], timeout: float) -> list[Informer]:
    """Wait, at most `timeout` seconds in all, until every informer has listed (or been
    refused); returns those that have not, for the caller to report."""
    deadline = time.monotonic() + timeout
    for informer in informers:
        informer.synced.wait(max(0.0, deadline - time.monotonic()))
    return [i for i in informers if not i.synced.is_set()]
