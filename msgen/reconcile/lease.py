"""Leader election over a coordination.k8s.io Lease, so two controller replicas never act twice.

The protocol is client-go's (k8s.io/client-go/tools/leaderelection): the leader writes its
identity and `renewTime` into the Lease every few seconds; another replica takes the Lease
only once `renewTime + leaseDurationSeconds` has passed. Writes carry the Lease's
resourceVersion, so of two replicas racing for an expired Lease the API server lets one
win (the other gets 409 Conflict). A leader that cannot renew within `RENEW_DEADLINE` stops
acting before anyone else may take over. `decide` and `claimed` are pure.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

#: Seconds: how long a Lease holds without renewal, how long a leader keeps acting without
#: a successful renewal (less, so leadership ends before another can begin), and how often
#: every replica tries.
LEASE_SECONDS = 15
RENEW_DEADLINE = 10.0
RETRY_SECONDS = 2.0


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def micro_time(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decide(spec: dict[str, Any] | None, me: str, now: datetime) -> str:
    """`acquire` (no holder, or its lease expired), `renew` (ours) or `wait` (another's)."""
    if not spec or not spec.get("holderIdentity"):
        return "acquire"
    if spec["holderIdentity"] == me:
        return "renew"
    renewed = _time(spec.get("renewTime")) or _time(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or LEASE_SECONDS)
    if renewed is None or now >= renewed + timedelta(seconds=duration):
        return "acquire"
    return "wait"


def claimed(spec: dict[str, Any] | None, me: str, now: datetime) -> dict[str, Any]:
    """The Lease spec that makes `me` the holder (renewing keeps acquireTime)."""
    existed = bool(spec)
    spec = dict(spec or {})
    stamp = micro_time(now)
    if spec.get("holderIdentity") != me:  # a new holder of an existing Lease is a transition
        spec["acquireTime"] = stamp
        spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if existed else 0)
    spec.update(holderIdentity=me, leaseDurationSeconds=LEASE_SECONDS, renewTime=stamp)
    return spec


class Elector:
    """Keeps trying to hold the Lease `namespace/name` (in a thread, once `start`ed);
    `leading()` says whether this replica may act now."""

    def __init__(self, client: Any, namespace: str, name: str, identity: str) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.problem: str | None = None
        #: set when leadership or its problem changes, to wake whoever waits on it
        self.changed: threading.Event | None = None
        self._renewed = -1e9
        self._stop = threading.Event()

    def leading(self) -> bool:
        return time.monotonic() - self._renewed < RENEW_DEADLINE

    def try_once(self) -> bool:
        """One attempt to acquire or renew; True when this replica holds the Lease."""
        from . import kube

        started = time.monotonic()
        try:
            live = kube.get(self.client, "coordination.k8s.io/v1", "Lease", self.name, self.namespace)
            now = datetime.now(timezone.utc)
            spec = (live or {}).get("spec")
            if decide(spec, self.identity, now) == "wait":
                self.problem = None
                return False
            metadata = {"name": self.name, "namespace": self.namespace}
            if live is not None:
                metadata["resourceVersion"] = live["metadata"]["resourceVersion"]
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata,
                    "spec": claimed(spec, self.identity, now)}
            (kube.create if live is None else kube.replace)(self.client, body)
        except kube.KubeError as exc:
            if exc.code != 409:  # 409: another replica wrote first; it leads
                self.problem = str(exc)
            return False
        self.problem = None
        self._renewed = started
        return True

    def release(self) -> None:
        """Give the Lease up on a clean stop (as client-go's ReleaseOnCancel), so a new
        replica need not wait for it to expire. Best effort: a failure leaves it to expire."""
        from . import kube

        self._stop.set()
        if not self.leading():
            return
        self._renewed = -1e9  # stop acting before the Lease is given up
        try:
            live = kube.get(self.client, "coordination.k8s.io/v1", "Lease", self.name, self.namespace)
            if live is None or (live.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = {**live["spec"], "holderIdentity": None, "leaseDurationSeconds": 1}
            kube.replace(self.client, {**live, "spec": spec})
        except kube.KubeError:
            pass

    def start(self) -> Elector:
        threading.Thread(target=self._run, name="lease", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            before = (self.leading(), self.problem)
            self.try_once()
            if (self.leading(), self.problem) != before and self.changed is not None:
                self.changed.set()  # a new leader acts at once, not at its next resync
            self._stop.wait(RETRY_SECONDS)
