"""The controller's health endpoints, for the kubelet's probes, and its metrics (`--health-port`).

A controller whose watches fail would otherwise look fine from outside while it serves a
stale copy; the Deployment's readiness probe reads `/readyz` (every watch listed and
current), its liveness probe `/healthz` (the loop turns and the watch threads run), so
`kubectl get deployment` shows a replica that cannot do its work, and a stuck one is
restarted. `/metrics` serves what `metrics.Metrics` counts, for Prometheus to scrape. The
server is the standard library's: a probe must not need more than the controller has.

The port is reachable by whatever shares the pod's network: a connection that sends nothing
is closed after IDLE_TIMEOUT seconds, and at most MAX_CONNECTIONS are served at once (the
rest are closed at once), so idle connections cannot pile up threads (200 held 200).
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any, Protocol

IDLE_TIMEOUT = 5.0
MAX_CONNECTIONS = 16


class Checks(Protocol):
    def ready(self) -> bool: ...

    def alive(self) -> bool: ...


class _BoundedServer(ThreadingHTTPServer):
    """A thread per connection, at most `limit` of them; a connection beyond is closed."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, limit: int):
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(limit)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def serve(checks: Checks, port: int, host: str = "",
          metrics: Callable[[], tuple[bytes, str]] | None = None, *,
          idle_timeout: float = IDLE_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> ThreadingHTTPServer:
    """Answer GET /readyz and /healthz (200 ok, 503 not) on `port`, in a daemon thread, and
    /metrics with what `metrics` gives (the exposition and its content type)."""

    class Handler(BaseHTTPRequestHandler):
        timeout = idle_timeout  # the socket's: a request not sent by then ends the connection

        def handle(self) -> None:
            try:
                super().handle()
            except (socket.timeout, ConnectionError):
                self.close_connection = True

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            path = self.path.split("?", 1)[0]
            if path == "/metrics" and metrics is not None:
                body, content_type = metrics()
                self._answer(200, body, content_type)
                return
            check = {"/readyz": checks.ready, "/healthz": checks.alive, "/livez": checks.alive}.get(path)
            if check is None:
                self.send_error(404)
                return
            good = check()
            self._answer(200 if good else 503, b"ok\n" if good else b"not ok\n", "text/plain")

        def _answer(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # probes every few seconds would drown the controller's own lines

    server = _BoundedServer((host, port), Handler, max_connections)
    threading.Thread(target=server.serve_forever, name="probes", daemon=True).start()
    return server
