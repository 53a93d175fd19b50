"""A pod's containers as the API server checks them: names, images, env, ports, mounts.

Written after `validateContainers`, `validateInitContainers`, `validateContainerCommon`,
`ValidateEnv`, `validateContainerPorts` and `ValidateVolumeMounts` of Kubernetes'
`pkg/apis/core/validation`, with the release differences of `releases`.
"""

from __future__ import annotations

import posixpath

from ...model.diagnostics import did_you_mean
from ...model.source import Path
from ...model import names
from . import releases, resources
from .findings import Findings, items, mapping, shown, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: `fieldRef.fieldPath` values an env var may read (subscripted labels and annotations too).
ENV_FIELD_PATHS = (
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
)  # fmt: skip
#: `resourceFieldRef.resource` values (and the `requests.hugepages-` / `limits.hugepages-` ones).
RESOURCE_FIELDS = (
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.ephemeral-storage",
)  # fmt: skip
CONTAINER_RESTART_POLICIES = ("Always", "OnFailure", "Never")


def check_containers(found: Findings, spec: dict[str, Any], path: Path, volumes: set[str]) -> None:
    """`containers` and `initContainers` of the pod spec at `path`; `volumes` are the names
    of the pod's valid volumes (what a mount may name)."""
    containers = spec.get("containers")
    if isinstance(containers, list) and not containers:
        found.refuse(
            path + ("containers",), "[] is not accepted: a pod needs at least one container"
        )
    used: set[str] = set()
    for field in ("containers", "initContainers"):
        for i, container in items(spec.get(field)):
            where = path + (field, i)
            name = text(container.get("name"))
            if name in used:
                found.refuse(
                    where + ("name",),
                    f"container name {name!r} is used twice in the pod; accepted: a name of"
                    " its own",
                )
            elif name:
                used.add(name)
            _check_container(found, container, where, volumes)
            _check_restart_policy(found, container, where, init=field == "initContainers")


def _check_container(
    found: Findings, container: dict[str, Any], path: Path, volumes: set[str]
) -> None:
    name = text(container.get("name"))
    if not name:
        found.refuse(path + ("name",), "a container needs a name; accepted: a DNS-1123 label")
    else:
        found.check(path + ("name",), "container name", name, names.dns1123_label(name))
    if not text(container.get("image")):
        found.refuse(
            path + ("image",) if "image" in container else path,
            "a container needs an image; accepted: an image reference such as"
            " mindspore/mindspore:2.3.0",
        )
    _check_env(found, container.get("env"), path + ("env",))
    _check_env_from(found, container.get("envFrom"), path + ("envFrom",))
    _check_ports(found, container.get("ports"), path + ("ports",))
    _check_mounts(found, container.get("volumeMounts"), path + ("volumeMounts",), volumes)
    resources.check_requirements(found, container.get("resources"), path + ("resources",))


def _check_restart_policy(
    found: Findings, container: dict[str, Any], path: Path, *, init: bool
) -> None:
    policy = container.get("restartPolicy")
    if policy is None:
        return
    where = path + ("restartPolicy",)
    if releases.has("container-restart-rules", found.kube_version):
        if policy not in CONTAINER_RESTART_POLICIES:
            found.refuse(
                where,
                f"{shown(policy)} is not accepted; accepted:"
                f" {', '.join(CONTAINER_RESTART_POLICIES)}",
            )
    elif not init:
        found.refuse(
            where,
            "a container's own restartPolicy needs Kubernetes"
            f" {releases.show('container-restart-rules')} or newer (--kube-version is"
            f" {found.version_text()}); accepted: the pod's restartPolicy, or restartPolicy on init"
            " containers (sidecars)",
        )
    elif not releases.has("sidecar-containers", found.kube_version):
        found.refuse(
            where,
            "init containers with restartPolicy (sidecars) need Kubernetes"
            f" {releases.show('sidecar-containers')} or newer (--kube-version is"
            f" {found.version_text()})",
        )
    elif policy != "Always":
        found.refuse(
            where,
            f"{shown(policy)} is not accepted for an init container at Kubernetes"
            f" {found.version_text()}; accepted: Always (a sidecar), or no restartPolicy",
        )


def _check_env(found: Findings, env: Any, path: Path) -> None:
    relaxed = releases.has("relaxed-env-names", found.kube_version)
    for i, var in items(env):
        where = path + (i,)
        name = text(var.get("name"))
        if not name:
            found.refuse(where + ("name",) if "name" in var else where, "an env var needs a name")
        else:
            problems = names.env_name(name, relaxed=relaxed)
            if problems and not relaxed and not names.env_name(name, relaxed=True):
                problems.append(
                    f"Kubernetes {releases.show('relaxed-env-names')} and newer accept any"
                    f" printable ASCII but '=' (--kube-version is {found.version_text()})"
                )
            found.check(where + ("name",), "env name", name, problems)
        source = var.get("valueFrom")
        if source is not None:
            _check_value_from(
                found, mapping(source), where + ("valueFrom",), bool(text(var.get("value")))
            )


_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def _check_value_from(found: Findings, source: dict[str, Any], path: Path, has_value: bool) -> None:
    given = [s for s in _SOURCES if source.get(s) is not None]
    if not given:
        accepted = _SOURCES if releases.has("env-files", found.kube_version) else _SOURCES[:-1]
        found.refuse(path, f"valueFrom names no source; accepted: one of {', '.join(accepted)}")
    elif has_value:
        found.refuse(
            path,
            "valueFrom is not accepted beside a non-empty value; accepted: one of value or"
            " valueFrom",
        )
    elif len(given) > 1:
        found.refuse(
            path + (given[1],), f"valueFrom has {' and '.join(given)}; accepted: one source"
        )
    if "fileKeyRef" in given and not releases.has("env-files", found.kube_version):
        found.refuse(
            path + ("fileKeyRef",),
            f"fileKeyRef needs Kubernetes {releases.show('env-files')} or newer (--kube-version is"
            f" {found.version_text()})",
            key=True,
        )
    field = mapping(source.get("fieldRef"))
    if "fieldRef" in given:
        _check_field_ref(found, field, path + ("fieldRef",))
    resource = mapping(source.get("resourceFieldRef"))
    if "resourceFieldRef" in given:
        _check_resource_field(found, resource, path + ("resourceFieldRef",))
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if kind in given:
            _check_key_selector(found, mapping(source.get(kind)), path + (kind,))
    if "fileKeyRef" in given:
        _check_file_key(found, mapping(source.get("fileKeyRef")), path + ("fileKeyRef",))


def _check_file_key(found: Findings, ref: dict[str, Any], path: Path) -> None:
    """A key of an env file in one of the pod's emptyDir volumes (`validateFileKeySelector`,
    `validateFileKeyRefVolumes`)."""
    key = text(ref.get("key"))
    found.check(
        path + ("key",) if "key" in ref else path, "key", key, names.env_name(key, relaxed=True)
    )
    volume = text(ref.get("volumeName"))
    if volume not in found.empty_dirs:
        found.refuse(
            path + ("volumeName",) if "volumeName" in ref else path,
            f"volume {volume!r} is not an emptyDir volume of this pod; accepted: the name of an"
            f" emptyDir volume in spec.volumes ({', '.join(sorted(found.empty_dirs)) or 'none'})",
        )
    file = text(ref.get("path"))
    if not file:
        found.refuse(path + ("path",) if "path" in ref else path, "path must not be empty")
    elif ".." in file.split("/"):
        found.refuse(path + ("path",), f"path {file!r} is not accepted: it must not contain '..'")


def _check_field_ref(found: Findings, ref: dict[str, Any], path: Path) -> None:
    version = text(ref.get("apiVersion")) or "v1"
    field = text(ref.get("fieldPath"))
    if version != "v1":
        found.refuse(path + ("apiVersion",), f"{version!r} is not accepted; accepted: v1")
        return
    if not field:
        found.refuse(
            path + ("fieldPath",) if "fieldPath" in ref else path, "fieldRef needs a fieldPath"
        )
        return
    for prefix in ("metadata.labels['", "metadata.annotations['"):
        if field.startswith(prefix) and field.endswith("']"):
            key = field[len(prefix) : -2]
            key = key.lower() if "annotations" in prefix else key
            found.check(path + ("fieldPath",), "fieldPath key", key, names.qualified_name(key))
            return
    accepted = [
        p
        for p in ENV_FIELD_PATHS
        if p != "status.hostIPs" or releases.has("host-ips-field", found.kube_version)
    ]
    if field not in accepted:
        found.refuse(
            path + ("fieldPath",),
            f"{field!r} is not accepted in env; accepted: {', '.join(accepted)},"
            " metadata.labels['KEY'], metadata.annotations['KEY']",
        )


def _check_resource_field(found: Findings, ref: dict[str, Any], path: Path) -> None:
    resource = text(ref.get("resource"))
    if not resource:
        found.refuse(
            path + ("resource",) if "resource" in ref else path, "resourceFieldRef needs a resource"
        )
    elif resource not in RESOURCE_FIELDS and not resource.startswith(
        ("requests.hugepages-", "limits.hugepages-")
    ):
        found.refuse(
            path + ("resource",),
            f"{resource!r} is not accepted{did_you_mean(resource, RESOURCE_FIELDS)}; accepted:"
            f" {', '.join(RESOURCE_FIELDS)}",
        )
    if "divisor" in ref:
        resources.check_divisor(found, resource, ref["divisor"], path + ("divisor",))


def _check_key_selector(found: Findings, ref: dict[str, Any], path: Path) -> None:
    name = text(ref.get("name"))
    found.check(
        path + ("name",) if "name" in ref else path, "name", name, names.dns1123_subdomain(name)
    )
    key = text(ref.get("key"))
    if not key:
        found.refuse(
            path + ("key",) if "key" in ref else path,
            "a key is needed; accepted: a ConfigMap or Secret key",
        )
    else:
        found.check(path + ("key",), "key", key, names.config_key(key))


def _check_env_from(found: Findings, sources: Any, path: Path) -> None:
    relaxed = releases.has("relaxed-env-names", found.kube_version)
    for i, source in items(sources):
        prefix = text(source.get("prefix"))
        if prefix:
            found.check(
                path + (i, "prefix"), "prefix", prefix, names.env_name(prefix, relaxed=relaxed)
            )
        given = [k for k in ("configMapRef", "secretRef") if source.get(k) is not None]
        if len(given) != 1:
            found.refuse(path + (i,), "envFrom needs exactly one of configMapRef and secretRef")
        for kind in given:
            name = text(mapping(source[kind]).get("name"))
            found.check(path + (i, kind, "name"), "name", name, names.dns1123_subdomain(name))


def _check_ports(found: Findings, ports: Any, path: Path) -> None:
    used: set[str] = set()
    for i, port in items(ports):
        name = port.get("name")
        if isinstance(name, str) and name:
            problems = names.port_name(name)
            found.check(path + (i, "name"), "port name", name, problems)
            if not problems and name in used:
                found.refuse(
                    path + (i, "name"),
                    f"port name {name!r} is used twice in the container; accepted: a name of"
                    " its own",
                )
            used.add(name)


def _check_mounts(found: Findings, mounts: Any, path: Path, volumes: set[str]) -> None:
    mount_paths: set[str] = set()
    for i, mount in items(mounts):
        where = path + (i,)
        name = text(mount.get("name"))
        if name in found.broken_volumes:
            pass  # the volume's own error is reported; "not a volume" would only confuse
        elif name not in volumes:
            known = ", ".join(sorted(volumes)) or "none"
            found.refuse(
                where + ("name",) if "name" in mount else where,
                f"volume {name!r} is not a volume of this pod; accepted: a name from spec.volumes"
                f" ({known})",
            )
        mount_path = text(mount.get("mountPath"))
        if not mount_path:
            found.refuse(
                where + ("mountPath",) if "mountPath" in mount else where,
                "mountPath must not be empty",
            )
        elif mount_path in mount_paths:
            found.refuse(
                where + ("mountPath",),
                f"mountPath {mount_path!r} is mounted twice in the container; accepted: one mount"
                " per path",
            )
        mount_paths.add(mount_path)
        for field in ("subPath", "subPathExpr"):
            sub = text(mount.get(field))
            if sub:
                found.check(where + (field,), field, sub, relative_path_problems(sub))
        if text(mount.get("subPath")) and text(mount.get("subPathExpr")):
            found.refuse(
                where + ("subPathExpr",),
                "subPath and subPathExpr are not accepted together; accepted: one of them",
            )


def relative_path_problems(value: str) -> list[str]:
    """`validateLocalDescendingPath`: relative, and no `..` element."""
    out = ["must be a relative path"] if posixpath.isabs(value) else []
    if ".." in value.replace("\\", "/").split("/"):
        out.append("must not contain '..'")
    return out
