"""The controller's health endpoints, for the kubelet's probes (`--health-port`).

A controller whose watches fail would otherwise look fine from outside while it serves a
stale copy; the Deployment's readiness probe reads `/readyz` (every watch listed and
current), its liveness probe `/healthz` (the loop turns and the watch threads run), so
`kubectl get deployment` shows a replica that cannot do its work, and a stuck one is
restarted. Standard library only: a probe must not need more than the controller has.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class Checks(Protocol):
    def ready(self) -> bool: ...

    def alive(self) -> bool: ...


def serve(checks: Checks, port: int, host: str = "") -> ThreadingHTTPServer:
    """Answer GET /readyz and /healthz (200 ok, 503 not) on `port`, in a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            check = {"/readyz": checks.ready, "/healthz": checks.alive, "/livez": checks.alive}.get(self.path)
            if check is None:
                self.send_error(404)
                return
            good = check()
            body = b"ok\n" if good else b"not ok\n"
            self.send_response(200 if good else 503)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # probes every few seconds would drown the controller's own lines

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="probes", daemon=True).start()
    return server
