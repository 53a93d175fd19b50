"""What the API server says of itself: its version and the APIs it serves (`msgen apply` and
`msgen diff` render for the cluster that is there). Plain HTTP reads, retried as every call."""

from __future__ import annotations

from lightkube import Client

from .kube import TIMEOUT, _refusal, _watch_http, call


def served_api_versions(client: Client) -> frozenset[str]:
    """Every `group/version` the API server serves (`v1` for the core group), from
    discovery (/api, /apis), in the form Argo CD's KUBE_API_VERSIONS lists them."""
    def run() -> frozenset[str]:
        found: set[str] = set()
        for path in ("/api", "/apis"):
            answer = _watch_http(client).get(path, timeout=TIMEOUT)
            if answer.status_code != 200:
                raise _refusal(f"reading {path}", answer)
            body = answer.json()
            found.update(str(v) for v in body.get("versions") or [])
            found.update(str(v.get("groupVersion")) for g in body.get("groups") or [] for v in g.get("versions") or [])
        return frozenset(found)

    return call("reading the served APIs", run, client)


def server_version(client: Client) -> str:
    """The API server's version (`v1.36.2`), from /version."""
    def run() -> str:
        answer = _watch_http(client).get("/version", timeout=TIMEOUT)
        if answer.status_code != 200:
            raise _refusal("reading the server version", answer)
        return str(answer.json().get("gitVersion") or "")

    return call("reading the server version", run, client)
