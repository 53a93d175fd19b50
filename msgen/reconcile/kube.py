"""The only module that talks to the API server: lightkube, with timeouts and retries.

Objects travel as plain dicts (what msgen renders, what the cluster returns): every kind is
a lightkube generic resource, so custom resources (JobSet, Volcano Job, PodGroup) need no
generated code and no field is dropped by a model. Every call has a timeout; 429, 5xx and
dropped connections are retried with exponential backoff; the caller sees `KubeError`,
whose text names the object and never holds a credential.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import httpx2
from lightkube import Client, KubeConfig
from lightkube.core.exceptions import ApiError, ConfigError
from lightkube.generic_resource import (
    GenericNamespacedResource,
    create_namespaced_resource,
    get_generic_resource,
)

from .applyset import FIELD_MANAGER
from .informer import WATCH_SECONDS

T = TypeVar("T")

#: Seconds: connecting, and waiting for one answer (a list of every pod of a big job).
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)
_RETRIED = {429, 500, 502, 503, 504}
_ATTEMPTS = 5


class KubeError(Exception):
    """A failed API call, with its HTTP status (0: no answer) and the server's reason."""

    def __init__(self, message: str, code: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


def connect(kubeconfig: str | None, context: str | None) -> Client:
    """A client from --kubeconfig/--context, else $KUBECONFIG or ~/.kube/config, else the
    pod's service account (in-cluster)."""
    try:
        config = KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()
        client = Client(config.get(context_name=context), timeout=TIMEOUT, field_manager=FIELD_MANAGER)
    except (ConfigError, OSError, KeyError, ValueError) as exc:
        where = kubeconfig or "$KUBECONFIG, ~/.kube/config or the in-cluster service account"
        raise KubeError(f"cannot load a cluster configuration from {where}: {exc}") from None
    # lightkube reads watches without a timeout; the server closes each watch after
    # WATCH_SECONDS, so a read silent for longer means the connection is gone.
    generic = getattr(client, "_client", None)
    if generic is not None and hasattr(generic, "_watch_timeout"):
        generic._watch_timeout = httpx2.Timeout(TIMEOUT.connect or 10.0, read=WATCH_SECONDS + 30.0)
    return client


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


def call(what: str, action: Callable[[], T]) -> T:
    """`action` with retries on 429, 5xx and dropped connections; `what` names the object."""
    delay = 0.5
    for attempt in range(_ATTEMPTS):
        try:
            return action()
        except ApiError as exc:
            code = int(exc.status.code or 0)
            if code not in _RETRIED or attempt == _ATTEMPTS - 1:
                causes = [(c.field, c.message) for c in (exc.status.details.causes or [])] if exc.status.details else []
                message = invalid_fields(causes) if code == 422 and causes else None
                raise KubeError(f"{what}: {message or exc.status.message}", code, exc.status.reason or "") from None
        except httpx2.HTTPStatusError as exc:
            code = exc.response.status_code
            if code not in _RETRIED or attempt == _ATTEMPTS - 1:
                raise KubeError(f"{what}: HTTP {code}", code, exc.response.reason_phrase) from None
        except httpx2.TransportError as exc:
            if attempt == _ATTEMPTS - 1:
                raise KubeError(f"{what}: no answer from the API server ({type(exc).__name__})") from None
        time.sleep(delay)
        delay = min(delay * 2, 8.0)
    raise AssertionError("unreachable")


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
    return to_dict(call(describe(obj), lambda: client.apply(body, force=force, dry_run=dry_run)))


def get(client: Client, api_version: str, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
    res = resource(api_version, kind)
    try:
        return to_dict(call(f"{kind} {namespace}/{name}",
                            lambda: client.get(res, name, namespace=namespace)))
    except KubeError as exc:
        if exc.code == 404:
            return None
        raise


def listing(
    client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, str]
) -> list[dict[str, Any]]:
    res = resource(api_version, kind)

    def run() -> list[dict[str, Any]]:
        selector: dict[str, Any] = dict(labels)
        found: Iterator[Any] = iter(client.list(res, namespace=namespace, labels=selector))
        # List items come without apiVersion and kind; the decisions need both.
        return [{**to_dict(o), "apiVersion": api_version, "kind": kind} for o in found]

    return call(f"listing {kind} in {namespace}", run)


def listing_with_version(
    client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, Any]
) -> tuple[list[dict[str, Any]], str | None]:
    """Every object of the selection, and the list's resourceVersion a watch resumes from."""
    res = resource(api_version, kind)

    def run() -> tuple[list[dict[str, Any]], str | None]:
        found = client.list(res, namespace=namespace, labels=dict(labels) or None)
        items = [{**to_dict(o), "apiVersion": api_version, "kind": kind} for o in found]
        return items, cast(Any, found).resourceVersion

    return call(f"listing {kind} in {namespace}", run)


def watch_events(
    client: Client, api_version: str, kind: str, namespace: str, labels: dict[str, Any],
    version: str | None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event type, object) from `version` on, until the connection fails: KubeError with
    the HTTP status (410 Gone: relist; 0: no answer). The server ends each request after
    WATCH_SECONDS; lightkube then watches again from the last version seen."""
    from lightkube.types import on_error_raise

    res = resource(api_version, kind)
    stream = client.watch(res, namespace=namespace, labels=dict(labels) or None,
                          server_timeout=WATCH_SECONDS, resource_version=version,
                          on_error=on_error_raise)
    try:
        for event, obj in stream:
            yield event, {**to_dict(obj), "apiVersion": api_version, "kind": kind}
    except ApiError as exc:
        raise KubeError(f"watching {kind}: {exc.status.message}", int(exc.status.code or 0),
                        exc.status.reason or "") from None
    except httpx2.HTTPStatusError as exc:
        raise KubeError(f"watching {kind}: HTTP {exc.response.status_code}",
                        exc.response.status_code) from None
    except httpx2.TransportError as exc:
        raise KubeError(f"watching {kind}: no answer ({type(exc).__name__})") from None


def exists(client: Client, api_version: str, kind: str, namespace: str) -> bool:
    """Whether the API server serves `kind` (a CRD may be missing): a list of one item."""
    res = resource(api_version, kind)
    try:
        call(f"{kind}", lambda: next(iter(client.list(res, namespace=namespace, chunk_size=1)), None))
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
                                   cascade=cascade))
    except KubeError as exc:
        if exc.code != 404:
            raise


def merge_patch(client: Client, obj: dict[str, Any], patch: dict[str, Any]) -> None:
    from lightkube.types import PatchType

    res = resource(obj["apiVersion"], obj["kind"])
    metadata = obj["metadata"]
    call(f"patching {describe(obj)}",
         lambda: client.patch(res, metadata["name"], patch, namespace=metadata.get("namespace"),
                              patch_type=PatchType.MERGE))


def create(client: Client, obj: dict[str, Any]) -> dict[str, Any]:
    res = resource(obj["apiVersion"], obj["kind"])
    body = cast(Any, res)(obj)
    return to_dict(call(f"creating {describe(obj)}", lambda: client.create(body)))


def namespace_exists(client: Client, name: str) -> bool:
    from lightkube.resources.core_v1 import Namespace

    try:
        call(f"Namespace {name}", lambda: client.get(Namespace, name))
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
    return to_dict(call(f"replacing {describe(obj)}", lambda: client.replace(body)))
