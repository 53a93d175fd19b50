"""The only module that talks to the API server: lightkube, with timeouts and retries.

Objects travel as plain dicts (what msgen renders, what the cluster returns): every kind is
a lightkube generic resource, so custom resources (JobSet, Volcano Job, PodGroup) need no
generated code and no field is dropped by a model. Every call has a timeout; 429, 5xx and
dropped connections are retried with exponential backoff; the caller sees `KubeError`,
whose text names the object and never holds a credential.
"""

from __future__ import annotations

import json
import re
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import httpx2
from lightkube import Client
from lightkube.core.exceptions import ApiError, ConfigError
from lightkube.models.meta_v1 import ObjectMeta, Status
from lightkube.generic_resource import (
    GenericNamespacedResource,
    create_namespaced_resource,
    get_generic_resource,
)

from .applyset import FIELD_MANAGER
from .metrics import NOTHING, Recorder

T = TypeVar("T")

#: Seconds the server keeps one watch request open before it closes it (then the informer
#: watches again from the last version seen).
WATCH_SECONDS = 60
#: Seconds: connecting, and waiting for one answer (a list of every pod of a big job).
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)
_RETRIED = {429, 500, 502, 503, 504}
#: A connection never made: the server is down, or the address or port is wrong.
_UNREACHABLE = (httpx2.ConnectError, httpx2.ConnectTimeout)
_ATTEMPTS = 5
LIST_PAGE = 500  # objects per page of a list (`limit`, then `continue`)
#: Told of every answer from the API server (method, HTTP status, 200 for any success; 0: none).
recorder: Recorder = NOTHING


class KubeError(Exception):
    """A failed API call, with its HTTP status (0: no answer) and the server's reason."""

    def __init__(self, message: str, code: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


#: What each client talks to, for messages: "the API server URL (context NAME)".
_WHERE: weakref.WeakKeyDictionary[Client, str] = weakref.WeakKeyDictionary()


def connect(kubeconfig: str | None, context: str | None) -> Client:
    """A client for the cluster kubectl would use: --kubeconfig/--context, else the
    `$KUBECONFIG` list (merged), else ~/.kube/config, else the pod's service account."""
    from . import kubeconfig as config_files

    try:
        config = config_files.load(kubeconfig, context)
        client = Client(config, timeout=TIMEOUT, field_manager=FIELD_MANAGER)
    except (ConfigError, ValueError, OSError) as exc:
        where = kubeconfig or "$KUBECONFIG, ~/.kube/config or the in-cluster service account"
        raise KubeError(f"cannot load a cluster configuration from {where}: {exc}") from None
    _WHERE[client] = f"{config.cluster.server} (context {config.context_name})"
    # lightkube reads an error's Status and objects' metadata with msgspec, whose first use of
    # a type is not safe in two threads at once (the controller crashed, SIGSEGV): first here.
    Status.from_dict({"kind": "Status", "code": 404, "details": {"causes": [{"field": "f"}]}})
    ObjectMeta.from_dict({"name": "n", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}],
                          "managedFields": [{"manager": "m"}]})
    return client


def where(client: Client | None) -> str:
    """The API server and context a client talks to, for a message."""
    return _WHERE.get(client, "the API server") if client is not None else "the API server"


def plural(kind: str) -> str:
    """The resource name of the kinds msgen renders and reads (all regular plurals)."""
    return kind.lower() + ("es" if kind.endswith("s") else "s")


def resource(api_version: str, kind: str) -> type[GenericNamespacedResource]:
    group, _, version = api_version.rpartition("/")
    found = cast(Any, get_generic_resource)(api_version, kind)
    if found is not None and issubclass(found, GenericNamespacedResource):
        return cast(type[GenericNamespacedResource], found)
    return create_namespaced_resource(group, version, kind, plural(kind))


def describe(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    where = f"{metadata.get('namespace')}/" if metadata.get("namespace") else ""
    return f"{obj.get('kind')} {where}{metadata.get('name')}"


def call(what: str, action: Callable[[], T], client: Client | None = None, method: str = "GET") -> T:
    """`action` (HTTP `method`) with retries on 429, 5xx and dropped connections; `what`
    names the object. A server that cannot be reached is reported at once, naming it (as
    kubectl does): a user waits for no silent retries."""
    delay = 0.5
    for attempt in range(_ATTEMPTS):
        sent = time.monotonic()
        try:
            found = action()
            recorder.request(method, 200, time.monotonic() - sent)
            return found
        except ApiError as exc:
            code = int(exc.status.code or 0)
            recorder.request(method, code, time.monotonic() - sent)
            if code not in _RETRIED or attempt == _ATTEMPTS - 1:
                causes = [(c.field, c.message) for c in (exc.status.details.causes or [])] if exc.status.details else []
                message = invalid_fields(causes) if code == 422 and causes else None
                raise KubeError(f"{what}: {message or exc.status.message}", code, exc.status.reason or "") from None
        except httpx2.HTTPStatusError as exc:
            recorder.request(method, code := exc.response.status_code, time.monotonic() - sent)
            if code not in _RETRIED or attempt == _ATTEMPTS - 1:
                raise KubeError(f"{what}: HTTP {code}", code, exc.response.reason_phrase) from None
        except httpx2.TransportError as exc:
            recorder.request(method, 0, time.monotonic() - sent)
            if isinstance(exc, _UNREACHABLE) or attempt == _ATTEMPTS - 1:
                raise KubeError(f"{what}: no answer from {where(client)}: {transport_problem(exc)}") from None
        time.sleep(delay)
        delay = min(delay * 2, 8.0)
    raise AssertionError("unreachable")


def transport_problem(exc: Exception) -> str:
    """`connection refused (ConnectError)`: the OS's words when there are any, and the kind."""
    text = str(exc).strip()
    if "] " in text:  # "[Errno 111] Connection refused"
        text = text.split("] ", 1)[1]
    return f"{text} ({type(exc).__name__})" if text else type(exc).__name__


def invalid_fields(causes: list[tuple[str | None, str | None]]) -> str:
    """A 422's causes as `field: detail; ...`. The server's own message repeats the whole
    rejected value (a Job's pod template: thousands of characters of Go struct) before the
    detail; a user needs the field and why."""
    parts = []
    for field, message in causes:
        detail = message or ""
        if detail.startswith("Invalid value: ") and len(detail) > 120:
            detail = detail.rsplit(": ", 1)[-1]
        parts.append(f"{field}: {detail}" if field else detail)
    return "; ".join(parts)


def to_dict(found: Any) -> dict[str, Any]:
    out: dict[str, Any] = found.to_dict() if hasattr(found, "to_dict") else dict(found)
    return out


def apply(
    client: Client, obj: dict[str, Any], *, force: bool = False, dry_run: bool = False
) -> dict[str, Any]:
    """Server-side apply with field manager `msgen`; returns the object as the server has it."""
    res = resource(obj["apiVersion"], obj["kind"])
    body = cast(Any, res)(obj)
    return to_dict(call(describe(obj), lambda: client.apply(body, force=force, dry_run=dry_run), client, "PATCH"))


def get(client: Client, api_version: str, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    res = resource(api_version, kind)
    try:
        return to_dict(call(f"{kind} {namespace}/{name}",
                            lambda: client.get(res, name, namespace=namespace), client))
    except KubeError as exc:
        if exc.code == 404:
            return None
        raise


def listing(client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, Any]) -> list[dict[str, Any]]:
    return listing_with_version(client, api_version, kind, namespace, labels)[0]


def listing_with_version(
    client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, Any],
    keep: Callable[[dict[str, Any]], dict[str, Any]] = lambda obj: obj,
) -> tuple[list[dict[str, Any]], str | None]:
    """Every object of the selection (what `keep` keeps of each), and the list's resourceVersion
    a watch resumes from; LIST_PAGE at a time, so no more is ever held whole (pods: many MB).
    Read as the watches are (plain JSON): lightkube's decoding of an error's Status in
    several threads at once crashed the process (msgspec, at its first use)."""
    url = api_path(api_version, kind, namespace)
    asked: dict[str, Any] = {"limit": LIST_PAGE, **({"labelSelector": selector_text(labels)} if labels else {})}

    def run() -> tuple[list[dict[str, Any]], str | None]:
        items: list[dict[str, Any]] = []
        page = dict(asked)
        while True:
            answer = _watch_http(client).get(url, params=page, timeout=TIMEOUT)
            if answer.status_code in _RETRIED:
                answer.raise_for_status()
            if answer.status_code != 200:
                recorder.request("GET", answer.status_code)
                raise _refusal(f"listing {kind} in {_space(namespace)}", answer)
            body = answer.json()
            # List items come without apiVersion and kind; the decisions need both.
            items += [keep({**o, "apiVersion": api_version, "kind": kind}) for o in body.get("items") or []]
            metadata = body.get("metadata") or {}
            if not metadata.get("continue"):
                return items, metadata.get("resourceVersion")
            recorder.request("GET", 200)
            page = {**asked, "continue": metadata["continue"]}

    return call(f"listing {kind} in {_space(namespace)}", run, client)


def watch_events(
    client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, Any],
    version: str | None, opened: Callable[[], None] | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event type, object) from `version` on, for one watch request, which the server ends
    after WATCH_SECONDS; then the caller watches again from the last version seen. `opened`
    is called once the server has accepted the watch (a quiet kind may send no event for the
    whole request, and the watch is current all the same). A failure
    is KubeError with the HTTP status (410 Gone: relist; 0: no answer), whether the server
    answers the request with it or sends it as an ERROR event. A read silent for longer
    than the server's own timeout means the connection is gone: KubeError too."""
    params: dict[str, Any] = {"watch": "true", "timeoutSeconds": WATCH_SECONDS,
                              "allowWatchBookmarks": "true"}
    if version:
        params["resourceVersion"] = version
    if labels:
        params["labelSelector"] = selector_text(labels)
    url = api_path(api_version, kind, namespace)
    answered = False
    try:
        with _watch_http(client).stream("GET", url, params=params) as answer:
            answered = True
            recorder.request("GET", answer.status_code)
            if answer.status_code != 200:
                answer.read()
                raise _refusal(f"watching {kind}", answer)
            if opened is not None:
                opened()
            for line in answer.iter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                found = event.get("object") or {}
                if event.get("type") == "ERROR":
                    raise KubeError(f"watching {kind}: {found.get('message')}", int(found.get("code") or 0),
                                    str(found.get("reason") or ""))
                yield str(event.get("type")), {**found, "apiVersion": api_version, "kind": kind}
    except httpx2.TransportError as exc:
        if not answered:
            recorder.request("GET", 0)
        raise KubeError(f"watching {kind}: no answer from {where(client)}: {transport_problem(exc)}") from None
    except ValueError as exc:  # a line that is not JSON: a proxy in the way, or a cut line
        raise KubeError(f"watching {kind}: unreadable answer ({exc})") from None


def api_path(api_version: str, kind: str, namespace: str) -> str:
    """The collection's URL path; namespace "*" is every namespace."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    where = "" if namespace == "*" else f"/namespaces/{namespace}"
    return f"{base}{where}/{plural(kind)}"


#: A label selector's value for "the label is absent" (`!key`).
ABSENT = False


def selector_text(labels: dict[str, Any]) -> str:
    """A label selector's text: `key=value`, `key` (exists) for None, `!key` for ABSENT,
    `key in (a,b)` for a list."""
    return ",".join(key if value is None else f"!{key}" if value is ABSENT
                    else f"{key} in ({','.join(value)})" if isinstance(value, list)
                    else f"{key}={value}" for key, value in sorted(labels.items()))


def _space(namespace: str) -> str:
    return "every namespace" if namespace == "*" else namespace


def _refusal(what: str, answer: httpx2.Response) -> KubeError:
    try:
        body = answer.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    text = body.get("message") or f"HTTP {answer.status_code}"
    return KubeError(f"{what}: {text}" if what else str(text), answer.status_code,
                     str(body.get("reason") or answer.reason_phrase))


_HTTP: weakref.WeakKeyDictionary[Client, httpx2.Client] = weakref.WeakKeyDictionary()


def _watch_http(client: Client) -> httpx2.Client:
    """An HTTP client for `client`'s cluster (its server, credentials and CA, through
    lightkube's public config adapter) whose reads time out a margin after the server's
    watch timeout: lightkube's own watches wait for ever on a silent connection."""
    from lightkube.config.client_adapter import Client as http_client
    from lightkube.config.client_adapter import ConnectionParams

    found = _HTTP.get(client)
    if found is None:
        timeout = httpx2.Timeout(TIMEOUT.read, connect=TIMEOUT.connect, read=WATCH_SECONDS + 30.0)
        found = _HTTP[client] = http_client(client.config, ConnectionParams(timeout=timeout))
    return found


def pod_log(client: Client, namespace: str, pod: str, container: str | None, lines: int,
            previous: bool = False) -> list[str]:
    """A container's last `lines` log lines; `previous`: of the instance before its restart. Asked
    once (a summary must not wait on retries); KubeError when there are none, or the kubelet no
    longer has the container (said in a 200 answer: it began the stream before it looked)."""
    params: dict[str, Any] = {"tailLines": lines}
    if container:
        params["container"] = container
    if previous:
        params["previous"] = "true"
    try:
        answer = _watch_http(client).get(f"/api/v1/namespaces/{namespace}/pods/{pod}/log", params=params,
                                         timeout=TIMEOUT)
    except httpx2.TransportError as exc:
        raise KubeError(transport_problem(exc)) from None
    if answer.status_code != 200:
        raise _refusal("", answer)
    if re.fullmatch(r"unable to retrieve container logs for [a-z]+://[0-9a-f]+\n?", text := answer.text):
        raise KubeError(f"the kubelet no longer has it: {text.strip()}")
    return text.splitlines()


def exists(client: Client, api_version: str, kind: str, namespace: str) -> bool:
    """Whether the API server serves `kind` (a CRD may be missing): a list of one item."""
    res = resource(api_version, kind)
    try:
        call(f"listing {kind} in {_space(namespace)}",
             lambda: next(iter(client.list(res, namespace=namespace, chunk_size=1)), None), client)
    except KubeError as exc:
        if exc.code == 404:
            return False
        raise
    return True


def delete(client: Client, obj: dict[str, Any], *, wait_pods: bool = True) -> None:
    """Delete with foreground propagation, so a workload goes only once its pods have."""
    from lightkube.types import CascadeType

    res = resource(obj["apiVersion"], obj["kind"])
    metadata = obj["metadata"]
    cascade = CascadeType.FOREGROUND if wait_pods else CascadeType.BACKGROUND
    try:
        call(f"deleting {describe(obj)}",
             lambda: client.delete(res, metadata["name"], namespace=metadata.get("namespace"),
                                   cascade=cascade), client, "DELETE")
    except KubeError as exc:
        if exc.code != 404:
            raise


def merge_patch(client: Client, obj: dict[str, Any], patch: dict[str, Any]) -> None:
    from lightkube.types import PatchType

    res = resource(obj["apiVersion"], obj["kind"])
    metadata = obj["metadata"]
    call(f"patching {describe(obj)}",
         lambda: client.patch(res, metadata["name"], patch, namespace=metadata.get("namespace"),
                              patch_type=PatchType.MERGE), client, "PATCH")


def create(client: Client, obj: dict[str, Any]) -> dict[str, Any]:
    res = resource(obj["apiVersion"], obj["kind"])
    body = cast(Any, res)(obj)
    return to_dict(call(f"creating {describe(obj)}", lambda: client.create(body), client, "POST"))


def namespace_exists(client: Client, name: str) -> bool:
    from lightkube.resources.core_v1 import Namespace

    try:
        call(f"Namespace {name}", lambda: client.get(Namespace, name), client)
    except KubeError as exc:
        if exc.code == 404:
            return False
        raise
    return True


def replace(client: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """PUT `obj` whole; with its metadata.resourceVersion, the server refuses (409) a write
    based on an older version than it holds."""
    res = resource(obj["apiVersion"], obj["kind"])
    body = cast(Any, res)(obj)
    return to_dict(call(f"replacing {describe(obj)}", lambda: client.replace(body), client, "PUT"))
