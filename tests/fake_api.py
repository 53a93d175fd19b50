"""A small Kubernetes API server in process, for the reconciler's tests and bench/controller_scale.py.

It serves what `msgen status` and `msgen controller` ask over plain HTTP, as the real one
answers: lists with a resourceVersion and label selectors (`k=v`, `k!=v`, `k`, `!k`,
`k in (a,b)`, `k notin (a,b)`), watches from a version (newline-delimited JSON, chunked,
ended after `timeoutSeconds`, 410 Gone for a version older than it keeps), get, create
(`generateName`), replace (409 on a stale resourceVersion), JSON merge patch and delete
(what an object owns goes with it, as the garbage collector does), with `metadata.generation`
as the server keeps it (one more on each change of a spec). Kinds it does not serve
answer 404, as a missing CRD does. Every request is counted (`requests`), and every write
is kept with its time (`writes`), so a test or the benchmark can tell what the client did,
how often and when. `restart()` drops every connection, refuses new ones for a while and
forgets its watch history, as an API server restart does (watches must list again).
Optionally (`Cluster(served=...)`) it serves the custom resources msgen renders too
(`CUSTOM`), and deletes running pods gracefully (`graceful_pods`): such a pod stays, with its
deletionTimestamp, until its kubelet is done (`finish_terminating`), as on a real cluster.

Not a Kubernetes: no validation, admission, defaulting or controllers. The benchmark's
simulated kubelet and Job controller drive the objects through `cluster` directly.
"""

from __future__ import annotations

import bisect
import copy
import functools
import json
import re
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: (group/version, plural) → kind, for what this server serves.
SERVED = {
    ("v1", "pods"): "Pod", ("v1", "services"): "Service", ("v1", "events"): "Event",
    ("v1", "namespaces"): "Namespace", ("batch/v1", "jobs"): "Job", ("apps/v1", "statefulsets"): "StatefulSet",
    ("coordination.k8s.io/v1", "leases"): "Lease",
}  # fmt: skip
#: The custom resources of the targets msgen renders, served when a test asks (else 404).
CUSTOM = {
    ("jobset.x-k8s.io/v1alpha2", "jobsets"): "JobSet", ("batch.volcano.sh/v1alpha1", "jobs"): "Job",
    ("trainer.kubeflow.org/v1alpha1", "trainjobs"): "TrainJob",
    ("trainer.kubeflow.org/v1alpha1", "trainingruntimes"): "TrainingRuntime",
}  # fmt: skip
#: Watch events kept per collection; a watch from an older version gets 410 Gone.
HISTORY = 20000


@dataclass(frozen=True)
class Write:
    """One write the server accepted: when (monotonic), what, and the object after it."""

    at: float
    method: str
    kind: str
    namespace: str
    name: str
    body: dict[str, Any]
    result: dict[str, Any] | None


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


_TERM = re.compile(r"\s*(!?)([\w./-]+)\s*(?:(==|=|!=)\s*([\w./-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def selects(selector: str, labels: dict[str, str]) -> bool:
    """Whether `labels` match a label selector's text."""
    for negated, key, operator, value, set_operator, values in _terms(selector):
        assert key is not None  # every term names a key (_TERM)
        if set_operator:
            assert values is not None
            members = {v.strip() for v in values.split(",")}
            if (labels.get(key) in members) != (set_operator == "in"):
                return False
        elif operator:
            if (labels.get(key) == value) != (operator in ("=", "==")):
                return False
        elif (key in labels) == bool(negated):
            return False
    return True


@functools.lru_cache(maxsize=1024)
def _terms(selector: str) -> tuple[tuple[str | None, ...], ...]:
    out = []
    for term in _split(selector):
        found = _TERM.match(term)
        if found is None:
            raise ValueError(f"unparsable label selector term {term!r}")
        out.append(tuple(found.groups()))
    return tuple(out)


def _split(selector: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [t for t in [*terms, current] if t.strip()]


class Cluster:
    """The objects, their versions and the watch history; thread-safe."""

    def __init__(self, served: dict[tuple[str, str], str] | None = None, graceful_pods: bool = False) -> None:
        self.lock = threading.Condition()
        self.version = 1
        self.served = dict(SERVED if served is None else served)
        #: a running or pending pod deleted is terminating until `finish_terminating`
        self.graceful_pods = graceful_pods
        self.objects: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in self.served}
        self.history: dict[tuple[str, str], list[tuple[int, str, dict[str, Any]]]] = {k: [] for k in self.served}
        self.versions: dict[tuple[str, str], list[int]] = {k: [] for k in self.served}  # the history's, sorted
        self.oldest = 0  # watches from before this version get 410 Gone
        self.requests: Counter[tuple[str, str]] = Counter()
        self.writes: list[Write] = []
        self.down_until = 0.0
        self.generation = 0  # bumped by restart(): open watches end
        #: lists being read page by page: continue token → (items, version)
        self.pages: dict[str, tuple[list[dict[str, Any]], str]] = {}
        #: called after each write a client made (what a controller of the cluster reacts to)
        self.hooks: list[Callable[[Write], None]] = []

    # --- objects -------------------------------------------------------------------------
    def _stamp(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        return obj

    def _record(self, collection: tuple[str, str], event: str, obj: dict[str, Any]) -> None:
        history, versions = self.history[collection], self.versions[collection]
        history.append((self.version, event, obj))
        versions.append(self.version)
        if len(history) > HISTORY:
            self.oldest = max(self.oldest, history[len(history) - HISTORY - 1][0])
            del history[: len(history) - HISTORY]
            del versions[: len(versions) - HISTORY]
        self.lock.notify_all()

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace `obj` as a controller would (no version check)."""
        collection = _collection(obj, self.served)
        metadata = obj.setdefault("metadata", {})
        with self.lock:
            store = self.objects[collection]
            key = (str(metadata.get("namespace") or ""), metadata["name"])
            existed = key in store
            if not existed:
                metadata.setdefault("uid", secrets.token_hex(8))
                metadata.setdefault("creationTimestamp", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            else:
                metadata.setdefault("uid", store[key]["metadata"]["uid"])
            generation = _generation(store.get(key), obj)
            if generation is not None:
                metadata["generation"] = generation
            stored = self._stamp(copy.deepcopy(obj))
            store[key] = stored
            self._record(collection, "MODIFIED" if existed else "ADDED", stored)
            return copy.deepcopy(stored)

    def get(self, api_version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            found = self.objects[(api_version, plural)].get((namespace, name))
            return copy.deepcopy(found) if found is not None else None

    def patch(self, api_version: str, plural: str, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any] | None:
        with self.lock:
            found = self.objects[(api_version, plural)].get((namespace, name))
            if found is None:
                return None
            merged = merge_patch(found, patch)
            return copy.deepcopy(found) if merged == found else self.put(merged)  # no change, no event

    def delete(self, api_version: str, plural: str, namespace: str, name: str,
               force: bool = False) -> dict[str, Any] | None:
        with self.lock:
            found = self.objects[(api_version, plural)].get((namespace, name))
            if found is None:
                return None
            if (self.graceful_pods and not force and (api_version, plural) == ("v1", "pods")
                    and (found.get("status") or {}).get("phase") in ("Pending", "Running")):
                if found["metadata"].get("deletionTimestamp"):
                    return copy.deepcopy(found)
                asked = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                return self.put({**found, "metadata": {**found["metadata"], "deletionGracePeriodSeconds": 30,
                                                       "deletionTimestamp": asked}})
            del self.objects[(api_version, plural)][(namespace, name)]
            self._stamp(found)
            self._record((api_version, plural), "DELETED", found)
            uid = found["metadata"].get("uid")
            for collection, store in self.objects.items():  # the garbage collector's part
                for key, obj in list(store.items()):
                    if any(o.get("uid") == uid for o in obj["metadata"].get("ownerReferences") or []):
                        self.delete(collection[0], collection[1], key[0], key[1])
            return found

    def finish_terminating(self) -> list[str]:
        """The kubelets are done with every pod being deleted: they go; their names."""
        with self.lock:
            pods = [key for key, o in self.objects[("v1", "pods")].items() if o["metadata"].get("deletionTimestamp")]
            for namespace, name in pods:
                self.delete("v1", "pods", namespace, name, force=True)
            return [name for _, name in pods]

    def listing(self, collection: tuple[str, str], namespace: str, selector: str) -> tuple[list[dict[str, Any]], str]:
        with self.lock:
            items = [copy.deepcopy(o) for (ns, _), o in sorted(self.objects[collection].items())
                     if namespace in ("", ns) and selects(selector, o["metadata"].get("labels") or {})]
            return items, str(self.version)

    def events_after(self, collection: tuple[str, str], version: int, namespace: str, selector: str,
                     until: float, generation: int) -> Iterator[tuple[str, dict[str, Any]] | None]:
        """Watch events after `version`; None when the watch must end with 410 Gone."""
        with self.lock:
            if version < self.oldest:
                yield None
                return
        sent = version
        while time.monotonic() < until:
            with self.lock:
                if self.generation != generation:
                    return
                pending = self.history[collection][bisect.bisect_right(self.versions[collection], sent):]
                if not pending:
                    self.lock.wait(min(1.0, max(0.0, until - time.monotonic())))
                    continue
            for v, event, obj in pending:
                sent = v
                metadata = obj["metadata"]
                if namespace in ("", metadata.get("namespace")) and selects(selector, metadata.get("labels") or {}):
                    yield event, obj

    def restart(self, down: float) -> None:
        """Every open watch ends, connections are refused for `down` seconds, and the watch
        history is gone: a watch resuming from an old version gets 410 Gone."""
        with self.lock:
            self.generation += 1
            self.down_until = time.monotonic() + down
            self.version += 1  # a watch from before the restart is too old (410); one from a list made
            self.oldest = self.version  # after it is fine, as with a real API server
            for history in self.history.values():
                history.clear()
            for versions in self.versions.values():
                versions.clear()
            self.lock.notify_all()

    def written(self, method: str, kind: str, namespace: str, name: str, body: dict[str, Any],
                result: dict[str, Any] | None) -> None:
        write = Write(time.monotonic(), method, kind, namespace, name, body, result)
        with self.lock:
            self.writes.append(write)
        for hook in self.hooks:
            hook(write)


def _generation(stored: dict[str, Any] | None, obj: dict[str, Any]) -> int | None:
    """`metadata.generation` as the API server keeps it, whatever the client sent: 1 when an
    object with a spec is made, one more on each change of its spec (a Job suspended or
    resumed starts another generation); a status written leaves it as it was."""
    if "spec" not in obj:
        return None
    if stored is None:
        return 1
    before = int(stored["metadata"].get("generation") or 1)
    return before + 1 if stored.get("spec") != obj.get("spec") else before


def _collection(obj: dict[str, Any], served: dict[tuple[str, str], str]) -> tuple[str, str]:
    for (api_version, plural), kind in served.items():
        if api_version == obj.get("apiVersion") and kind == obj.get("kind"):
            return api_version, plural
    raise ValueError(f"not served: {obj.get('apiVersion')} {obj.get('kind')}")


_PATH = re.compile(r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+/[^/]+))(?:/namespaces/(?P<ns>[^/]+))?"
                   r"/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>status))?$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: Buffered, so headers and body leave in one segment (flushed after each answer and each
    #: watch chunk), and TCP_NODELAY: else every answer waits on Nagle's algorithm and the
    #: client's delayed ACK, 40 ms a request, and the benchmark would measure that.
    wbufsize = 1 << 16
    server: Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, reason: str, message: str) -> None:
        self._send(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                          "reason": reason, "code": code})

    def _route(self) -> tuple[tuple[str, str], str, str | None, dict[str, list[str]]] | None:
        cluster = self.server.cluster
        if time.monotonic() < cluster.down_until:
            self.close_connection = True
            self.connection.close()
            return None
        url = urlsplit(self.path)
        found = _PATH.match(url.path)
        query = parse_qs(url.query)
        if found is None:
            if url.path == "/version":
                self._send(200, {"major": "1", "minor": "36", "gitVersion": "v1.36.0"})
            else:
                self._status(404, "NotFound", f"the server could not find the requested resource ({url.path})")
            return None
        collection = (found["core"] or found["group"], found["plural"])
        cluster.requests[(self.command, "watch" if query.get("watch") == ["true"] else
                          ("list" if found["name"] is None and self.command == "GET" else found["plural"]))] += 1
        if collection not in cluster.served:
            self._status(404, "NotFound", "the server could not find the requested resource")
            return None
        return collection, found["ns"] or "", found["name"], query

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        found = json.loads(self.rfile.read(length) or b"{}") if length else {}
        return found if isinstance(found, dict) else {}

    def do_GET(self) -> None:  # noqa: N802
        routed = self._route()
        if routed is None:
            return
        collection, namespace, name, query = routed
        cluster = self.server.cluster
        if name is not None:
            found = cluster.get(collection[0], collection[1], namespace, name)
            if found is None:
                self._status(404, "NotFound", f'{collection[1]} "{name}" not found')
            else:
                self._send(200, found)
            return
        selector = (query.get("labelSelector") or [""])[0]
        if query.get("watch") == ["true"]:
            self._watch(collection, namespace, selector, query)
            return
        kind = cluster.served[collection]
        limit = int((query.get("limit") or ["0"])[0])
        token = (query.get("continue") or [""])[0]
        if token:  # the next page of the same list: a real server pages one snapshot too
            items, version, begin = *cluster.pages[token.split(":")[0]], int(token.split(":")[1])
        else:
            items, version = cluster.listing(collection, namespace, selector)
            begin = 0
        metadata = {"resourceVersion": version}
        if limit:
            if begin + limit < len(items):
                snapshot = token.split(":")[0] if token else secrets.token_hex(4)
                cluster.pages[snapshot] = (items, version)
                metadata["continue"] = f"{snapshot}:{begin + limit}"
            items = items[begin:begin + limit]
        self._send(200, {"kind": f"{kind}List", "apiVersion": collection[0], "metadata": metadata,
                         "items": [{**o, "apiVersion": collection[0], "kind": kind} for o in items]})

    def _watch(self, collection: tuple[str, str], namespace: str, selector: str, query: dict[str, list[str]]) -> None:
        cluster = self.server.cluster
        version = int((query.get("resourceVersion") or ["0"])[0] or 0)
        until = time.monotonic() + float((query.get("timeoutSeconds") or ["60"])[0])
        generation = cluster.generation
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for item in cluster.events_after(collection, version, namespace, selector, until, generation):
                if item is None:
                    line = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                        "reason": "Expired", "code": 410,
                                                        "message": "too old resource version"}}
                else:
                    line = {"type": item[0], "object": item[1]}
                self._chunk(json.dumps(line).encode() + b"\n")
            if cluster.generation != generation:
                self.close_connection = True
                self.connection.close()  # a restart: the connection drops
                return
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _write(self, method: str) -> None:
        routed = self._route()
        if routed is None:
            return
        collection, namespace, name, _ = routed
        cluster = self.server.cluster
        body = self._body()
        kind = cluster.served[collection]
        if method == "POST":
            metadata = body.setdefault("metadata", {})
            if not metadata.get("name"):
                metadata["name"] = str(metadata.get("generateName", "")) + secrets.token_hex(3)
            metadata["namespace"] = namespace or metadata.get("namespace")
            if cluster.get(collection[0], collection[1], namespace, metadata["name"]) is not None:
                self._status(409, "AlreadyExists", f'{collection[1]} "{metadata["name"]}" already exists')
                return
            result: dict[str, Any] | None = cluster.put({**body, "apiVersion": collection[0], "kind": kind})
            name = metadata["name"]
        elif name is None:
            self._status(405, "MethodNotAllowed", "no name")
            return
        elif method == "PUT":
            with cluster.lock:
                live = cluster.get(collection[0], collection[1], namespace, name)
                if live is None:
                    self._status(404, "NotFound", f'{collection[1]} "{name}" not found')
                    return
                asked = (body.get("metadata") or {}).get("resourceVersion")
                if asked and asked != live["metadata"]["resourceVersion"]:
                    self._status(409, "Conflict", "the object has been modified")
                    return
                result = cluster.put({**body, "apiVersion": collection[0], "kind": kind})
        elif method == "PATCH":
            result = cluster.patch(collection[0], collection[1], namespace, name, body)
        else:
            result = cluster.delete(collection[0], collection[1], namespace, name)
        cluster.written(method, kind, namespace, name, body, result)
        if result is None:
            self._status(404, "NotFound", f'{collection[1]} "{name}" not found')
        else:
            self._send(201 if method == "POST" else 200, result)

    def do_POST(self) -> None:  # noqa: N802
        self._write("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._write("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._write("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._write("DELETE")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the listen backlog: a burst of connections is not refused

    def __init__(self, cluster: Cluster, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.cluster = cluster

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-answer (a restart, a killed controller) is no error here."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> Server:
        threading.Thread(target=self.serve_forever, name="fake-api", daemon=True).start()
        return self

    def kubeconfig(self, namespace: str = "default") -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Config", "current-context": "fake",
                "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                "users": [{"name": "fake", "user": {"token": "not-a-secret"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake",
                                                          "namespace": namespace}}]}
