"""A TCP relay between the controller replicas and a shared API server, which can play an
API server outage for them alone.

Why: restarting the real kube-apiserver of a cluster other people use breaks their work. What
the controller has to survive in a restart is seen from its side of the connection: every
connection (its watches, a request in flight) cut at once, and no new one accepted until the
server is back. The relay does exactly that to the connections that pass through it, and
nobody else's. TLS passes through untouched (the replicas' kubeconfig names the relay at
127.0.0.1, which the harness's serving certificate names too). What it does not play is the
watch cache a new API server builds: a watch resumed from a version the restarted server no
longer holds gets 410 Gone and lists again; here the server still holds it.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time


class OutageProxy:
    """Relays 127.0.0.1:port to (host, port) until `outage(seconds)` cuts every connection."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.down_until = 0.0
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        self.connections = 0
        threading.Thread(target=self._accept, name="outage-proxy", daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            if time.monotonic() < self.down_until:
                client.close()  # the server is "down": refused at once, as a closed port is
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                self.open |= {client, server}
                self.connections += 1
            threading.Thread(target=self._relay, args=(client, server), daemon=True).start()

    def _relay(self, client: socket.socket, server: socket.socket) -> None:
        peer = {client: server, server: client}
        with selectors.DefaultSelector() as chosen:
            chosen.register(client, selectors.EVENT_READ)
            chosen.register(server, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in chosen.select():
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        peer[source].sendall(data)
            except OSError:
                return
            finally:
                with self.lock:
                    self.open -= {client, server}
                for end in (client, server):
                    end.close()

    def outage(self, seconds: float) -> int:
        """Cut every connection and refuse new ones for `seconds`; returns how many were cut."""
        self.down_until = time.monotonic() + seconds
        with self.lock:
            cut = list(self.open)
        for end in cut:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return len(cut) // 2
