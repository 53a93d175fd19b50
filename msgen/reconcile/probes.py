"""The controller's HTTP endpoints: its health, for the kubelet's probes (`--health-port`), and
its metrics, for Prometheus (`--metrics-port`), each on a port of its own.

A controller whose watches fail would otherwise look fine from outside while it serves a
stale copy; the Deployment's readiness probe reads `/readyz` (every watch listed and
current), its liveness probe `/healthz` (the loop turns and the watch threads run), so
`kubectl get deployment` shows a replica that cannot do its work, and a stuck one is
restarted. `/metrics` serves what `metrics.Metrics` counts, for Prometheus to scrape.

Whatever shares the pod's network can reach these ports, and a liveness probe that cannot get
through restarts the controller. So the server is built for connections that never finish
(it is the standard library's `selectors`, no framework: a probe must not need more than the
controller has):

- one thread serves every connection of a port, none of them blocks it: it reads what has
  arrived, answers a request once its head is complete, writes what the socket takes;
- a connection has REQUEST_SECONDS for its whole exchange, from its accept to the last byte
  of the answer, however it trickles bytes (a timeout per read would never fire on one that
  sends a byte every few seconds), and a request head of MAX_REQUEST_BYTES at most;
- at most MAX_CONNECTIONS are open at once; the next one closes the oldest, never itself, so
  a new probe is always read, and answered at once, however many connections others hold.

The probes and the metrics are separate servers: the metrics' port can be closed to all but
the scraper (overlays/controller's NetworkPolicy) while the kubelet, on the node, still
reaches the probes; neither's connections count against the other's bound.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

#: Seconds a connection has for its whole exchange (request and answer).
REQUEST_SECONDS = 5.0
#: Connections open at once on one port; one more closes the oldest.
MAX_CONNECTIONS = 256
#: The longest request head read (a probe's is about 150 bytes, Prometheus' 300).
MAX_REQUEST_BYTES = 8192

#: What a path answers: (HTTP status, body, content type).
Answer = tuple[int, bytes, str]
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"}


class Checks(Protocol):
    def ready(self) -> bool: ...

    def alive(self) -> bool: ...


class _Connection:
    __slots__ = ("sock", "deadline", "received", "answer")

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self.received = b""
        self.answer: bytes | None = None


class Server:
    """A small HTTP/1.1 server of fixed GET routes on one port, in a daemon thread (see the
    module's notes). `server_address` is where it listens; `shutdown()` stops it."""

    def __init__(self, routes: dict[str, Callable[[], Answer]], host: str, port: int, *,
                 request_seconds: float = REQUEST_SECONDS, max_connections: int = MAX_CONNECTIONS) -> None:
        self.routes = routes
        self.request_seconds = request_seconds
        self.max_connections = max_connections
        self.listener = socket.create_server((host, port), backlog=128, reuse_port=False)
        self.listener.setblocking(False)
        self.server_address: tuple[str, int] = self.listener.getsockname()[:2]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.listener, selectors.EVENT_READ)
        self._open: OrderedDict[socket.socket, _Connection] = OrderedDict()  # oldest first
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"http-{self.server_address[1]}", daemon=True)
        self._thread.start()

    def open_connections(self) -> int:
        return len(self._open)

    def shutdown(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def server_close(self) -> None:
        """Kept for the callers of the standard library's servers: `shutdown` closes all."""

    def _serve(self) -> None:
        try:
            while not self._stop.is_set():
                for key, events in self._selector.select(timeout=self._wait()):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        self._step(key.data, events)
                self._expire(time.monotonic())
        finally:
            for connection in list(self._open.values()):
                self._close(connection)
            self._selector.close()
            self.listener.close()

    def _wait(self) -> float:
        """Until the oldest connection's deadline (they are in deadline order), at most 0.5 s."""
        if not self._open:
            return 0.5
        oldest = next(iter(self._open.values()))
        return max(0.0, min(0.5, oldest.deadline - time.monotonic()))

    def _accept(self) -> None:
        for _ in range(64):  # what is waiting now; the rest on the next turn
            try:
                sock, _address = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of file descriptors, a connection reset before its accept
                return
            if len(self._open) >= self.max_connections:
                self._close(next(iter(self._open.values())))
            sock.setblocking(False)
            connection = _Connection(sock, time.monotonic() + self.request_seconds)
            self._open[sock] = connection
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _step(self, connection: _Connection, events: int) -> None:
        try:
            if events & selectors.EVENT_READ and connection.answer is None:
                chunk = connection.sock.recv(4096)
                if not chunk:
                    self._close(connection)
                    return
                connection.received += chunk
                answer = self._answer(connection.received)
                if answer is not None:
                    connection.answer = answer
                    self._selector.modify(connection.sock, selectors.EVENT_WRITE, connection)
            elif events & selectors.EVENT_WRITE and connection.answer is not None:
                sent = connection.sock.send(connection.answer)
                connection.answer = connection.answer[sent:]
                if not connection.answer:
                    self._close(connection)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(connection)

    def _answer(self, received: bytes) -> bytes | None:
        """The whole answer once the request head is complete (or too long); None before."""
        head, found, _ = received.partition(b"\r\n\r\n")
        if not found:
            if len(received) > MAX_REQUEST_BYTES:
                return _response(431, b"request head too long\n", "text/plain")
            return None
        if len(head) > MAX_REQUEST_BYTES:
            return _response(431, b"request head too long\n", "text/plain")
        parts = head.split(b"\r\n", 1)[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            return _response(400, b"bad request\n", "text/plain")
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        route = self.routes.get(target.decode("ascii", "replace"))
        if route is None:
            return _response(404, b"not found\n", "text/plain")
        if method not in (b"GET", b"HEAD"):
            return _response(405, b"only GET\n", "text/plain")
        try:
            status, body, content_type = route()
        except Exception as exc:  # noqa: BLE001 - one failed answer must not stop the server
            return _response(500, f"{type(exc).__name__}\n".encode("ascii", "replace"), "text/plain")
        return _response(status, body, content_type, head_only=method == b"HEAD")

    def _expire(self, now: float) -> None:
        while self._open:
            oldest = next(iter(self._open.values()))
            if oldest.deadline > now:
                return
            self._close(oldest)

    def _close(self, connection: _Connection) -> None:
        if self._open.pop(connection.sock, None) is None:
            return
        try:
            self._selector.unregister(connection.sock)
        except (KeyError, ValueError):
            pass
        connection.sock.close()


def _response(status: int, body: bytes, content_type: str, *, head_only: bool = False) -> bytes:
    head = (f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode("ascii") + (b"" if head_only else body)


def serve(checks: Checks, port: int, host: str = "", *, request_seconds: float = REQUEST_SECONDS,
          max_connections: int = MAX_CONNECTIONS) -> Server:
    """Answer GET /readyz, /healthz and /livez (200 ok, 503 not) on `port`, in a daemon thread."""

    def probe(check: Callable[[], bool]) -> Callable[[], Answer]:
        def answer() -> Answer:
            good = check()
            return (200, b"ok\n", "text/plain") if good else (503, b"not ok\n", "text/plain")
        return answer

    routes = {"/readyz": probe(checks.ready), "/healthz": probe(checks.alive), "/livez": probe(checks.alive)}
    return Server(routes, host, port, request_seconds=request_seconds, max_connections=max_connections)


def serve_metrics(exposition: Callable[[], tuple[bytes, str]], port: int, host: str = "", *,
                  request_seconds: float = REQUEST_SECONDS, max_connections: int = MAX_CONNECTIONS) -> Server:
    """Answer GET /metrics with what `exposition` gives (the text and its content type)."""

    def metrics() -> Answer:
        body, content_type = exposition()
        return 200, body, content_type

    return Server({"/metrics": metrics}, host, port, request_seconds=request_seconds, max_connections=max_connections)
