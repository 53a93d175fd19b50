"""The controller's own writes that its watches do not show yet (client-go's "expectations").

A job is reconciled again as soon as anything of it changes, often before the watch has
brought back what the last reconcile wrote: the pod it deleted still looks alive, the Job
it suspended still active, the status it published not there. Acting on that copy would
delete the pod again, patch the Job again and send the Event again: doubled actions. So each
write is remembered until the watched copy shows it (`shows`): a deletion until the copy has
its deletionTimestamp (or is gone), a suspension until it is suspended, the published status
until its annotation holds what was written; meanwhile the write is taken as done (the
action is not due, the published status is the one written). A newer version alone is not
enough: the copy may come from a write someone else made just before this one (a kubelet's
status update): taken as caught up, it made the controller announce a phase twice, on a
real API server under load. Then the memory is dropped: the cluster is the record again, as
after a restart. A write of another verb is remembered while the copy has the version it had
when it was written. Entries older than `KEEP_SECONDS` are dropped too (an object whose
change never came back, deleted meanwhile), so the memory stays as small as the writes in
flight. Thread-safe: the controller's workers reconcile several jobs at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: The annotation a "status" write sets (published.ANNOTATION).
STATUS_ANNOTATION = "msgen/status"
#: Seconds a write is remembered at most; far longer than a watch takes to bring it back.
KEEP_SECONDS = 300.0

_Key = tuple[str, str, str, str]


def _version(obj: dict[str, Any]) -> str | None:
    found = (obj.get("metadata") or {}).get("resourceVersion")
    return str(found) if found is not None else None


def shows(verb: str, obj: dict[str, Any], value: str) -> bool | None:
    """Whether the copy `obj` shows the write `verb` (with `value`) done; None for a verb
    whose effect is not read here."""
    metadata = obj.get("metadata") or {}
    if verb == "delete":
        return bool(metadata.get("deletionTimestamp"))
    if verb == "suspend":
        return bool((obj.get("spec") or {}).get("suspend"))
    if verb == "status":
        return bool((metadata.get("annotations") or {}).get(STATUS_ANNOTATION) == value)
    return None


class Writes:
    """What was written (verb on namespace/kind/name) on which version, with what."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._written: dict[_Key, tuple[str | None, str, float]] = {}
        self._lock = threading.Lock()

    def wrote(self, verb: str, obj: dict[str, Any], value: str = "") -> None:
        """`verb` (delete, suspend, status, ...) was done on `obj` as the copy had it."""
        with self._lock:
            self._written[self._key(verb, obj)] = (_version(obj), value, self._clock())

    def pending(self, verb: str, obj: dict[str, Any]) -> str | None:
        """The value written by `verb` on `obj` while the copy does not show it yet; else
        None, and the write is forgotten."""
        key = self._key(verb, obj)
        with self._lock:
            found = self._written.get(key)
            if found is None:
                return None
            version, value, _ = found
            seen = shows(verb, obj, value)
            if seen is False or (seen is None and version is not None and version == _version(obj)):
                return value
            del self._written[key]
            return None

    def expire(self) -> None:
        oldest = self._clock() - KEEP_SECONDS
        with self._lock:
            for key in [k for k, (_, _, when) in self._written.items() if when < oldest]:
                del self._written[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._written)

    @staticmethod
    def _key(verb: str, obj: dict[str, Any]) -> _Key:
        metadata = obj.get("metadata") or {}
        return (verb, str(metadata.get("namespace")), str(obj.get("kind")), str(metadata.get("name")))
