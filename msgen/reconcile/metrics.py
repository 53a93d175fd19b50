"""What `msgen controller` counts, for Prometheus to scrape from `/metrics` on the health port.

Operators of controllers built on controller-runtime watch a known set of families:
reconciles by result and their time, the work queue's depth, adds and wait, leader status,
the API client's requests. msgen exposes the same names and labels, so the dashboards and
alerts written for those controllers read it too, plus its own: policy actions by policy,
action, kind and result, the delay from the change that made an action due (or the TTL
falling due) to the action, watch lists, events, restarts and errors by resource, jobs by
phase, and build info. Python's process and garbage-collector families come with the
client library (`process_resident_memory_bytes`, `process_cpu_seconds_total`, ...).

Every label takes a bounded set of values (a result, an HTTP code, a resource, a phase): no
job, pod or namespace name is a label, so the series stay a few hundred at any number of jobs.

`Recorder` is the interface the loop, the watches and the API calls report to; its methods
do nothing, which is what `msgen apply --wait` and `msgen status --watch` use. `Metrics`
records into a prometheus_client registry of its own (thread-safe; the library is imported
only here, when the controller serves metrics, never on the render path).
"""

from __future__ import annotations

import platform
from typing import Any

#: The `controller` label's value, and the work queue's `name`.
CONTROLLER = "msgen"
#: controller-runtime's buckets for reconcile_time_seconds (seconds), used for the action
#: delay too: both are judged against a second or two.
RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
                     0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
                     10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0)
#: client-go's buckets for rest_client_request_duration_seconds: whether the controller's
#: actions wait on the API server's answers (an end is three rounds of writes).
REQUEST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
#: client-go's work-queue buckets: 10 ns to 1000 s, by tens.
QUEUE_BUCKETS = tuple(1e-8 * 10**power for power in range(12))
#: The phases a job is counted in (`msgen_jobs`), always all exposed, 0 when none.
PHASES = ("Created", "Running", "Succeeded", "Failed")


class Recorder:
    """Where the controller reports what it does; this one forgets it all."""

    def reconciled(self, result: str, seconds: float) -> None:
        """One job reconciled: `success`, `error` or `requeue_after` (a TTL to wait for)."""

    def queue_depth(self, depth: int) -> None: ...

    def queue_added(self) -> None: ...

    def queue_waited(self, seconds: float) -> None:
        """A key left the queue `seconds` after it was added."""

    def queue_worked(self, seconds: float) -> None: ...

    def queue_retried(self) -> None: ...

    def working(self, since: float | None, now: float, active: int = 1) -> None:
        """A pass started at monotonic `since` is running, `active` reconciles at once
        (None: none is)."""

    def leading(self, leads: bool) -> None: ...

    def request(self, method: str, code: int, seconds: float | None = None) -> None:
        """One answer (or none: code 0) from the API server, `seconds` after the request
        went out (None: not timed, a watch's)."""

    def action(self, policy: str, action: str, kind: str, ok: bool, delay: float | None) -> None:
        """A policy action done (or failed), `delay` seconds after it was due."""

    def watch_listed(self, resource: str) -> None: ...

    def watch_event(self, resource: str, event: str) -> None: ...

    def watch_restarted(self, resource: str) -> None:
        """A watch started again after it ended (the server's timeout, a failure)."""

    def watch_failed(self, resource: str, code: int) -> None: ...

    def jobs(self, by_phase: dict[str, int]) -> None: ...


NOTHING = Recorder()


class Metrics(Recorder):
    """The families above, in a registry of their own (so two in one process never clash)."""

    def __init__(self, version: str, lease: str = "msgen-controller", workers: int = 1) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            Gauge,
            Histogram,
            GCCollector,
            PlatformCollector,
            ProcessCollector,
        )

        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        by_controller = ["controller"]
        self._reconciles = Counter("controller_runtime_reconcile_total", "Reconciles of one job, by result.",
                                   ["controller", "result"], registry=registry)
        self._errors = Counter("controller_runtime_reconcile_errors_total", "Reconciles that failed.",
                               by_controller, registry=registry)
        self._reconcile_time = Histogram("controller_runtime_reconcile_time_seconds",
                                         "Time one job's reconcile took.", by_controller,
                                         buckets=RECONCILE_BUCKETS, registry=registry)
        self._active = Gauge("controller_runtime_active_workers", "Reconciles running now.", by_controller, registry=registry)
        Gauge("controller_runtime_max_concurrent_reconciles", "Reconciles that may run at once.",
              by_controller, registry=registry).labels(CONTROLLER).set(workers)
        queue = ["name", "controller"]
        self._depth = Gauge("workqueue_depth", "Jobs waiting to be reconciled.", queue, registry=registry)
        self._adds = Counter("workqueue_adds_total", "Jobs added to the work queue.", queue, registry=registry)
        self._waited = Histogram("workqueue_queue_duration_seconds",
                                 "Time a job waited in the work queue before its reconcile began.", queue,
                                 buckets=QUEUE_BUCKETS, registry=registry)
        self._worked = Histogram("workqueue_work_duration_seconds", "Time a pass over the queued jobs took.",
                                 queue, buckets=QUEUE_BUCKETS, registry=registry)
        self._retries = Counter("workqueue_retries_total", "Jobs queued again after a failed reconcile.",
                                queue, registry=registry)
        self._unfinished = Gauge("workqueue_unfinished_work_seconds",
                                 "Seconds the running pass has been at work.", queue, registry=registry)
        self._longest = Gauge("workqueue_longest_running_processor_seconds",
                              "Seconds the longest running pass has been at work.", queue, registry=registry)
        self._leader = Gauge("leader_election_master_status",
                             "1 while this replica holds the Lease and acts, else 0.", ["name"], registry=registry)
        self._requests = Counter("rest_client_requests_total", "Requests to the API server, by method and "
                                 "HTTP status (code 0: no answer).", ["code", "method"], registry=registry)
        self._request_time = Histogram("rest_client_request_duration_seconds", "Time from a request to its "
                                       "answer (or to no answer), watches not included.", ["verb"],
                                       buckets=REQUEST_BUCKETS, registry=registry)
        self._actions = Counter("msgen_policy_actions_total", "Policy actions, by policy, action, the kind "
                                "of object and result.", ["policy", "action", "kind", "result"], registry=registry)
        self._delay = Histogram("msgen_policy_action_delay_seconds",
                                "Time from the watched change that made an action due (for a TTL: from "
                                "its expiry) to the action done.", ["policy"], buckets=RECONCILE_BUCKETS, registry=registry)
        self._lists = Counter("msgen_watch_lists_total", "Lists of a watched resource (each watch begins "
                              "with one, and lists again after 410 Gone).", ["resource"], registry=registry)
        self._events = Counter("msgen_watch_events_total", "Watch events received.", ["resource", "type"], registry=registry)
        self._restarts = Counter("msgen_watch_restarts_total", "Watches started again after one ended.",
                                 ["resource"], registry=registry)
        self._watch_errors = Counter("msgen_watch_errors_total", "Lists and watches that failed, by HTTP "
                                     "status (0: no answer).", ["resource", "code"], registry=registry)
        self._jobs = Gauge("msgen_jobs", "Jobs the controller watches, by phase.", ["phase"], registry=registry)
        info = Gauge("msgen_build_info", "msgen's version and Python's; always 1.", ["version", "python_version"], registry=registry)
        info.labels(version, platform.python_version()).set(1)
        self._controller = CONTROLLER
        for result in ("success", "error", "requeue_after"):
            self._reconciles.labels(CONTROLLER, result)
        self._errors.labels(CONTROLLER)
        for phase in PHASES:
            self._jobs.labels(phase).set(0)
        self._lease = lease
        self._leader.labels(lease).set(0)
        self.queue_depth(0)
        self._adds.labels(CONTROLLER, CONTROLLER)
        self._retries.labels(CONTROLLER, CONTROLLER)

    def reconciled(self, result: str, seconds: float) -> None:
        self._reconciles.labels(self._controller, result).inc()
        if result == "error":
            self._errors.labels(self._controller).inc()
        self._reconcile_time.labels(self._controller).observe(seconds)

    def queue_depth(self, depth: int) -> None:
        self._depth.labels(CONTROLLER, CONTROLLER).set(depth)

    def queue_added(self) -> None:
        self._adds.labels(CONTROLLER, CONTROLLER).inc()

    def queue_waited(self, seconds: float) -> None:
        self._waited.labels(CONTROLLER, CONTROLLER).observe(seconds)

    def queue_worked(self, seconds: float) -> None:
        self._worked.labels(CONTROLLER, CONTROLLER).observe(seconds)

    def queue_retried(self) -> None:
        self._retries.labels(CONTROLLER, CONTROLLER).inc()

    def working(self, since: float | None, now: float, active: int = 1) -> None:
        running = 0.0 if since is None else max(0.0, now - since)
        self._active.labels(self._controller).set(0 if since is None else active)
        self._unfinished.labels(CONTROLLER, CONTROLLER).set(running)
        self._longest.labels(CONTROLLER, CONTROLLER).set(running)

    def leading(self, leads: bool) -> None:
        self._leader.labels(self._lease).set(1 if leads else 0)

    def request(self, method: str, code: int, seconds: float | None = None) -> None:
        self._requests.labels(str(code), method).inc()
        if seconds is not None:
            self._request_time.labels(method).observe(max(0.0, seconds))

    def action(self, policy: str, action: str, kind: str, ok: bool, delay: float | None) -> None:
        self._actions.labels(policy, action, kind, "success" if ok else "error").inc()
        if ok and delay is not None:
            self._delay.labels(policy).observe(max(0.0, delay))

    def watch_listed(self, resource: str) -> None:
        self._lists.labels(resource).inc()

    def watch_event(self, resource: str, event: str) -> None:
        self._events.labels(resource, event).inc()

    def watch_restarted(self, resource: str) -> None:
        self._restarts.labels(resource).inc()

    def watch_failed(self, resource: str, code: int) -> None:
        self._watch_errors.labels(resource, str(code)).inc()

    def jobs(self, by_phase: dict[str, int]) -> None:
        for phase in PHASES:
            self._jobs.labels(phase).set(by_phase.get(phase, 0))

    def exposition(self) -> tuple[bytes, str]:
        """The text exposition format 0.0.4 (what every Prometheus scrapes) and its type."""
        from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_PLAIN_0_0_4


def families(text: str) -> dict[str, Any]:
    """The metric families in an exposition, by name (prometheus_client's parser): for tests
    and the scale benchmark."""
    from prometheus_client.parser import text_string_to_metric_families

    return {family.name: family for family in text_string_to_metric_families(text)}
