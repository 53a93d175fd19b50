"""The controller's work queue: which jobs to reconcile next, as client-go's work queue has it.

A pass over every job on every watched change costs the number of jobs times each event:
at a thousand jobs whose pods start and end all the time, the controller would never rest
and every action would wait for a whole pass. So a change queues only its own job (the
`training.kubeflow.org/job-name` label of the object that changed), and a pass takes the
queued jobs alone; a resync queues every job, at most every `--interval` seconds.

A job queued several times before its pass is reconciled once (a set, as client-go's
"dirty" set), and keeps the time it was first queued *at its rank*: a change that raises its
rank (a pod's end on a job already waiting as progress) is what it now waits for, and its
time is that change's. How long it waited is what the `workqueue_queue_duration_seconds`
histogram and the policy actions' delay measure: timed from the first progress update
still queued, a pod's end acted on within seconds read as a minute (the progress waited
that long; the end, queued ahead of it, did not). A job can also be queued for later
(`add_after`): a TTL that falls due with no change on the cluster, or a reconcile that
failed, retried with backoff (`retry`, forgotten on success); either is urgent when its
time comes, and timed from it.

Each key waits with a rank. `URGENT`: a change that may make an action due (a pod ended or
went, a workload reached its verdict): the job's end is acted on ahead of everything else.
`CHANGE`: any other change (a pod created, started, a status written back). `BACKGROUND`:
the jobs a resync or a new leader queues all at once (and the progress a replica that did
not lead queued long before it took over: `demote`; never an end, which stays URGENT). A
pass takes the queue in that order, oldest first within a rank, and gives back what it has not started when something of a
better rank is waiting (`give_back`): at a thousand jobs whose pods start all the time, a
pass of hundreds of progress updates (each a status write) held the cleanPodPolicy of a pod
that ended meanwhile for up to a minute; and a thousand jobs looked at for safety never hold
up the one whose pod just ended. Background work is given back only once it has had a
slice of the pass of its own (`controller.reconcile_queued`), so progress that never stops
does not starve it.
Thread-safe: the watches add from their threads, the loop takes from its own.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Hashable, Iterable

from .metrics import NOTHING, Recorder

#: A key's rank in the queue: lower goes first (`take`).
URGENT, CHANGE, BACKGROUND = -1, 0, 1
#: Seconds before a failed job's first retry; doubled each time, up to RETRY_CAP.
RETRY_FIRST = 0.5
RETRY_CAP = 60.0


def retry_delay(failures: int) -> float:
    """Seconds before retry `failures` (1, 2, ...): 0.5, 1, 2, ... up to RETRY_CAP."""
    return float(min(RETRY_CAP, RETRY_FIRST * 2 ** max(0, failures - 1)))


class WorkQueue:
    """Keys waiting for a pass, each with the monotonic time it was first queued and its rank."""

    def __init__(self, recorder: Recorder = NOTHING, wake: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._recorder = recorder
        self._wake = wake
        self._clock = clock
        self._lock = threading.Lock()
        self._ready: dict[Hashable, float] = {}
        self._later: list[tuple[float, int, Hashable]] = []
        self._order = itertools.count()
        self._failures: dict[Hashable, int] = {}
        self._rank: dict[Hashable, int] = {}
        #: how many keys wait with each rank (`best`, asked before every job a pass starts)
        self._ranks = {URGENT: 0, CHANGE: 0, BACKGROUND: 0}

    def add(self, key: Hashable, urgent: bool = False) -> None:
        self.add_all([key], urgent=urgent)

    def add_all(self, keys: Iterable[Hashable], background: bool = False, urgent: bool = False) -> None:
        """Queue `keys` (a key queued already at this rank or a better one keeps its time;
        raised to a better rank, it is timed from now: the change it waits for is this one)."""
        rank = URGENT if urgent else BACKGROUND if background else CHANGE
        now = self._clock()
        added = 0
        with self._lock:
            for key in keys:
                if key not in self._ready:
                    self._ready[key] = now
                    self._set_rank(key, rank)
                    added += 1
                elif rank < self._rank[key]:  # a change on a resync's job, an end on progress:
                    self._ready[key] = now  # its wait (the actions' delay) counts from this change
                    self._set_rank(key, rank)
            depth = len(self._ready)
        if added:
            for _ in range(added):
                self._recorder.queue_added()
            self._recorder.queue_depth(depth)
        if (added or urgent) and self._wake is not None:
            self._wake()

    def _set_rank(self, key: Hashable, rank: int) -> None:
        """(The lock held.)"""
        old = self._rank.get(key)
        if old is not None:
            self._ranks[old] -= 1
        self._rank[key] = rank
        self._ranks[rank] += 1

    def add_after(self, key: Hashable, seconds: float) -> None:
        """Queue `key` once `seconds` have passed (at once when not positive). The loop is
        woken: it may be waiting already, for longer, while the reconcile that asks this runs."""
        if seconds <= 0:
            self.add(key)
            return
        with self._lock:
            heapq.heappush(self._later, (self._clock() + seconds, next(self._order), key))
        if self._wake is not None:
            self._wake()

    def retry(self, key: Hashable) -> float:
        """Queue a job whose reconcile failed again, after a delay that grows with each
        failure in a row; returns the delay."""
        with self._lock:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
        delay = retry_delay(failures)
        self._recorder.queue_retried()
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """A reconcile worked: the next failure starts the backoff again."""
        with self._lock:
            self._failures.pop(key, None)

    def take(self) -> list[tuple[Hashable, float, int]]:
        """Every key ready now (those queued for later whose time has come included), as
        (key, time queued, rank): the urgent first, then the changes, then the background,
        each oldest first. The queue keeps none of them."""
        now = self._clock()
        with self._lock:
            while self._later and self._later[0][0] <= now:
                # due now: a TTL that fell due, or a job whose reconcile failed (often midway
                # through its actions): urgent
                when, _, key = heapq.heappop(self._later)
                urgent_since = self._ready.get(key) if self._rank.get(key) == URGENT else None
                self._ready[key] = when if urgent_since is None else min(when, urgent_since)
                self._set_rank(key, URGENT)
            ready, self._ready = self._ready, {}
            rank, self._rank = self._rank, {}
            self._ranks = dict.fromkeys(self._ranks, 0)
        self._recorder.queue_depth(0)
        for queued in ready.values():
            self._recorder.queue_waited(max(0.0, now - queued))
        return sorted(((k, t, rank[k]) for k, t in ready.items()), key=lambda e: (e[2], e[1]))

    def best(self) -> int | None:
        """The best rank waiting (URGENT, CHANGE or BACKGROUND), None when nothing waits; a
        key queued for later whose time has come is urgent."""
        with self._lock:
            if self._later and self._later[0][0] <= self._clock():
                return URGENT
            return next((r for r in (URGENT, CHANGE, BACKGROUND) if self._ranks[r]), None)

    def demote(self, before: float) -> None:
        """The progress (CHANGE) queued before `before` (monotonic) becomes background work.
        A replica that does not lead queues every change and acts on none; when it takes
        over, the leader before it has most likely acted on those older changes, and the
        newest must not wait behind them (a thousand jobs' worth, oldest first). An end
        (URGENT) is never demoted: the leader before may not have acted on it (it was killed,
        or lost the Lease to a slow API server and took it again, demoting its own queue),
        and an end acted on already costs a reconcile that finds nothing due."""
        with self._lock:
            for key in [k for k, queued in self._ready.items() if queued < before and self._rank[k] == CHANGE]:
                self._set_rank(key, BACKGROUND)

    def give_back(self, taken: list[tuple[Hashable, float, int]]) -> None:
        """Keys taken but not reached, queued again as they were. A key queued again
        meanwhile keeps the better rank, with that rank's time (the older of the two when
        both have the same rank): progress taken before an end was queued must not lend the
        end its older time."""
        with self._lock:
            for key, queued, rank in taken:
                found = self._ready.get(key)
                if found is None or int(rank) < self._rank[key] or (int(rank) == self._rank[key] and queued < found):
                    self._ready[key] = queued
                    self._set_rank(key, int(rank))
            depth = len(self._ready)
        self._recorder.queue_depth(depth)

    def depth(self) -> int:
        with self._lock:
            return len(self._ready)

    def next_in(self) -> float | None:
        """Seconds until the next key queued for later is ready (None: none is)."""
        with self._lock:
            return None if not self._later else max(0.0, self._later[0][0] - self._clock())

    def drop(self, keys: Iterable[Hashable]) -> None:
        """Forget keys whose jobs are gone (their retries and later times)."""
        gone = set(keys)
        if not gone:
            return
        with self._lock:
            for key in gone:
                self._failures.pop(key, None)
            self._later = [item for item in self._later if item[2] not in gone]
            heapq.heapify(self._later)
