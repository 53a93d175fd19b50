"""A pod template as the API server checks it beyond its schema: `ValidatePodTemplateSpec`.

The schema check (`checks.pod_schema`) has already found unknown fields and wrong types; this
module checks the values: names that must be DNS names, volumes with exactly one source,
DNS settings, deadlines, node selectors, (through `containers`) everything per container, and
(through `host_ports`) the ports that take ports of the node. Only what a template carries is
checked, with one default of the server's: under hostNetwork a port's host port is its
containerPort, which can clash with another port's.
"""

from __future__ import annotations

from ...model.diagnostics import did_you_mean
from ...model.source import Path
from ...model import names
from . import containers, enums, host_ports, metadata, releases
from .findings import Findings, items, mapping, shown, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Volume sources a volume may have exactly one of (`core/v1 VolumeSource`).
VOLUME_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi",
    "downwardAPI", "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk",
    "gitRepo", "glusterfs", "hostPath", "image", "iscsi", "nfs", "persistentVolumeClaim",
    "photonPersistentDisk", "portworxVolume", "projected", "quobyte", "rbd", "scaleIO", "secret",
    "storageos", "vsphereVolume",
)  # fmt: skip
#: Per source, the string fields that must not be empty (beyond the schema's `required`).
REQUIRED_TEXT = {
    "hostPath": ("path",), "secret": ("secretName",), "configMap": ("name",),
    "persistentVolumeClaim": ("claimName",), "nfs": ("server", "path"), "csi": ("driver",),
    "gitRepo": ("repository",),
}  # fmt: skip
HOST_PATH_TYPES = (
    "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
    "BlockDevice",
)  # fmt: skip
#: A file mode in a volume: 0 to 0777 (octal).
MAX_MODE = 0o777
MAX_NAMESERVERS = 3
MAX_SEARCHES = 32
MAX_SEARCH_CHARACTERS = 2048


def check_template(found: Findings, template: Any, path: Path) -> None:
    template = mapping(template)
    meta = template.get("metadata")
    metadata.check_object_meta(found, path + ("metadata",), meta, namespace=False)
    check_spec(found, mapping(template.get("spec")), path + ("spec",))
    enums.check(found, template, path)


def check_spec(found: Findings, spec: dict[str, Any], path: Path) -> None:
    volumes = _check_volumes(found, spec.get("volumes"), path + ("volumes",))
    containers.check_containers(found, spec, path, volumes)
    host_ports.check(found, spec, path)
    if spec.get("ephemeralContainers"):
        found.refuse(
            path + ("ephemeralContainers",),
            "ephemeral containers are not accepted in a pod template; accepted: containers,"
            " initContainers",
            key=True,
        )
    for field, rule in (("hostname", names.dns1123_label), ("subdomain", names.dns1123_label)):
        value = spec.get(field)
        if isinstance(value, str) and value:
            found.check(path + (field,), field, value, rule(value))
    for field in ("serviceAccountName", "serviceAccount", "nodeName", "priorityClassName"):
        value = spec.get(field)
        if isinstance(value, str) and value:
            found.check(path + (field,), field, value, names.dns1123_subdomain(value))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and found.facts.pods_run_until_deleted:
        found.refuse(
            path + ("activeDeadlineSeconds",),
            f"activeDeadlineSeconds is not accepted in a StatefulSet's pods (target {found.target}),"
            " which run until deleted; accepted: no activeDeadlineSeconds, or another target",
            key=True,
        )
    elif isinstance(deadline, int) and not 1 <= deadline <= 2**31 - 1:
        found.refuse(
            path + ("activeDeadlineSeconds",),
            f"{deadline} is not accepted; accepted: 1 to 2147483647 seconds",
        )
    metadata.check_labels(found, path + ("nodeSelector",), spec.get("nodeSelector"))
    _check_dns(found, spec, path)


def _check_volumes(found: Findings, volumes: Any, path: Path) -> set[str]:
    """Errors in `volumes`; the names of the valid ones (what mounts may name)."""
    valid: set[str] = set()
    for i, volume in items(volumes):
        where = path + (i,)
        before = len(found.errors)
        name = text(volume.get("name"))
        if not name:
            found.refuse(
                where + ("name",) if "name" in volume else where,
                "a volume needs a name; accepted: a DNS-1123 label",
            )
        else:
            found.check(where + ("name",), "volume name", name, names.dns1123_label(name))
        if name and name in valid:
            found.refuse(
                where + ("name",),
                f"volume name {name!r} is used twice in the pod; accepted: a name of its own",
            )
        # A volume without a source is given an emptyDir by the server's defaults.
        sources = [s for s in VOLUME_SOURCES if volume.get(s) is not None] or ["emptyDir"]
        for extra in sources[1:]:
            found.refuse(
                where + (extra,),
                f"volume {name!r} has {' and '.join(sources)}; accepted: one source per volume",
                key=True,
            )
        if sources:
            _check_source(found, sources[0], mapping(volume.get(sources[0])), where + (sources[0],))
        if len(found.errors) == before:
            valid.add(name)
            if sources == ["emptyDir"]:
                found.empty_dirs.add(name)
        elif name:
            found.broken_volumes.add(name)
    return valid


def _check_source(found: Findings, kind: str, source: dict[str, Any], path: Path) -> None:
    for field in REQUIRED_TEXT.get(kind, ()):
        if not text(source.get(field)):
            found.refuse(
                path + (field,) if field in source else path, f"{kind}.{field} must not be empty"
            )
    if kind == "hostPath":
        host = text(source.get("path"))
        if ".." in host.split("/"):
            found.refuse(
                path + ("path",), f"hostPath {host!r} is not accepted: it must not contain '..'"
            )
        kind_of_path = source.get("type")
        if isinstance(kind_of_path, str) and kind_of_path not in HOST_PATH_TYPES:
            found.refuse(
                path + ("type",),
                f"{kind_of_path!r} is not accepted{did_you_mean(kind_of_path, HOST_PATH_TYPES)};"
                f" accepted: {', '.join(t for t in HOST_PATH_TYPES if t)}",
            )
    if kind == "emptyDir" and "sizeLimit" in source:
        from .resources import check_quantity

        check_quantity(found, path + ("sizeLimit",), source["sizeLimit"], what="sizeLimit")
    if kind in ("secret", "configMap"):
        _check_mode(found, source.get("defaultMode"), path + ("defaultMode",))
        for i, item in items(source.get("items")):
            _check_key_to_path(found, item, path + ("items", i))
    if kind == "nfs" and text(source.get("path")) and not text(source.get("path")).startswith("/"):
        found.refuse(
            path + ("path",),
            f"nfs path {source['path']!r} is not accepted: it must be an absolute path",
        )


def _check_key_to_path(found: Findings, item: dict[str, Any], path: Path) -> None:
    if not text(item.get("key")):
        found.refuse(path + ("key",) if "key" in item else path, "key must not be empty")
    target = text(item.get("path"))
    if not target:
        found.refuse(path + ("path",) if "path" in item else path, "path must not be empty")
    else:
        problems = containers.relative_path_problems(target)
        if target.startswith(".."):
            problems.append("must not start with '..'")
        found.check(path + ("path",), "path", target, problems)
    _check_mode(found, item.get("mode"), path + ("mode",))


def _check_mode(found: Findings, mode: Any, path: Path) -> None:
    if isinstance(mode, int) and not 0 <= mode <= MAX_MODE:
        found.refuse(
            path, f"file mode {mode} is not accepted; accepted: 0 to 0777 (octal), 511 in decimal"
        )


def _check_dns(found: Findings, spec: dict[str, Any], path: Path) -> None:  # noqa: C901 - one branch per dnsPolicy/dnsConfig rule of the API server's validation, in its order
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if not isinstance(config, dict):
            found.refuse(
                path + ("dnsPolicy",),
                "dnsPolicy None needs a dnsConfig with at least one nameserver; accepted: a"
                " dnsConfig, or another dnsPolicy",
            )
            return
        if not config.get("nameservers"):
            found.refuse(
                path + ("dnsConfig",),
                "dnsPolicy None needs at least one nameserver in dnsConfig.nameservers",
            )
    if not isinstance(config, dict):
        return
    where = path + ("dnsConfig",)
    servers = config.get("nameservers")
    if isinstance(servers, list):
        if len(servers) > MAX_NAMESERVERS:
            found.refuse(
                where + ("nameservers",),
                f"{len(servers)} nameservers are not accepted; accepted: at most {MAX_NAMESERVERS}",
            )
        for i, server in enumerate(servers):
            if isinstance(server, str) and not _is_ip(server):
                found.refuse(
                    where + ("nameservers", i),
                    f"nameserver {shown(server)} is not accepted; accepted: an IPv4 or IPv6"
                    " address",
                )
    searches = config.get("searches")
    if isinstance(searches, list):
        texts = [s for s in searches if isinstance(s, str)]
        if len(searches) > MAX_SEARCHES:
            found.refuse(
                where + ("searches",),
                f"{len(searches)} search domains are not accepted; accepted: at most"
                f" {MAX_SEARCHES}",
            )
        if len(" ".join(texts)) > MAX_SEARCH_CHARACTERS:
            found.refuse(
                where + ("searches",),
                f"search domains of more than {MAX_SEARCH_CHARACTERS} characters in all are not"
                " accepted",
            )
        relaxed = releases.has("relaxed-dns-search", found.kube_version)
        for i, search in enumerate(searches):
            if isinstance(search, str) and not (relaxed and search == "."):
                name = search[:-1] if search.endswith(".") else search
                found.check(
                    where + ("searches", i),
                    "search domain",
                    search,
                    names.dns1123_subdomain(name, underscores=relaxed),
                )
    for i, option in items(config.get("options")):
        if not text(option.get("name")):
            found.refuse(where + ("options", i), "a DNS option needs a name")


def _is_ip(value: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return "%" not in value  # an IPv6 zone is not an address the API server accepts
