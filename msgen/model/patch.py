"""What plug-ins ask of a pod, and how those asks are merged into the user's template.

Frameworks and devices never edit a template: each returns a `Patch` (environment variables
per container, and where a plug-in needs them volumes, mounts, a command wrapper, node
selector entries and extra objects such as ConfigMaps). `apply_patches` merges them in one
place, where a conflict is a diagnostic: two plug-ins setting one variable two ways is a bug
we report, and a user's own value msgen must replace (an env variable, a volume or mount
path, a node selector entry) is an error with its position unless the user allowed the
override (env only). A *default* env value (`EnvValue.default`) yields to the user's own.
"""

from __future__ import annotations

from .diagnostics import Diagnostic
from .plan import Options, Plan, PodSlot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from .type_forms import NamedTuple

ALL_CONTAINERS = "*"


class EnvValue(NamedTuple):
    """A value for an environment variable: literal text or a downward-API field.

    `requires` lists variables that must be defined earlier in the same container, for values
    that use Kubernetes' `$(NAME)` expansion.
    """

    value: str | None = None
    field_path: str | None = None
    requires: tuple[tuple[str, "EnvValue"], ...] = ()
    default: bool = False

    def as_env(self, name: str) -> dict[str, Any]:
        if self.field_path is not None:
            return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": self.field_path}}}
        return {"name": name, "value": self.value if self.value is not None else ""}


def literal(value: str | int) -> EnvValue:
    return EnvValue(value=str(value))


def field_ref(path: str) -> EnvValue:
    return EnvValue(field_path=path)


def default(value: str | int) -> EnvValue:
    """A literal the user's own value for the same variable replaces, silently."""
    return EnvValue(value=str(value), default=True)


class CommandWrap(NamedTuple):
    """Run `command` instead, with the container's own command and args as its arguments.

    The container must set `command`: an image's entrypoint is unknown at render time.
    """

    command: tuple[str, ...]


class Patch(NamedTuple):
    """What a plug-in adds to a pod.

    `env`: `(container name or ALL_CONTAINERS, variable, value)`; `volumes`: pod volumes;
    `mounts`: `(container, volumeMount)`; `command_wrap`: `(container, CommandWrap)`;
    `node_selector`: `(label, value)`; `objects`: objects the pods need (ConfigMaps), emitted
    once per job however many pods ask for them.
    """

    contributor: str
    env: tuple[tuple[str, str, EnvValue], ...] = ()
    volumes: tuple[dict[str, Any], ...] = ()
    mounts: tuple[tuple[str, dict[str, Any]], ...] = ()
    command_wrap: tuple[tuple[str, CommandWrap], ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()
    objects: tuple[dict[str, Any], ...] = ()


class WorkloadLabels(NamedTuple):
    """Labels for one workload a target renders (`kind`, `name`): on the object, and on its
    pod template. A contributor says what; `with_workload_labels` makes the new objects, so
    nothing edits a target's output in place."""

    kind: str
    name: str
    labels: tuple[tuple[str, str], ...]
    template_labels: tuple[tuple[str, str], ...] = ()


def apply_patches(
    plan: Plan, slot: PodSlot, patches: list[Patch], options: Options
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """A copy of the role's pod template with every patch merged in."""
    template = _patchable(slot.role.template)
    diagnostics: list[Diagnostic] = []
    containers: list[dict[str, Any]] = template["spec"]["containers"]
    wanted: dict[str, dict[str, tuple[dict[str, Any], str, bool]]] = {}
    for patch in patches:
        for target, name, env_value in patch.env:
            for container in containers:
                if target not in (ALL_CONTAINERS, container["name"]):
                    continue
                own = wanted.setdefault(container["name"], {})
                for req_name, req_value in env_value.requires:
                    own.setdefault(
                        req_name, (req_value.as_env(req_name), patch.contributor, req_value.default)
                    )
                entry = env_value.as_env(name)
                previous = own.get(name)
                if previous is not None and previous[0] != entry:
                    raise AssertionError(
                        f"{patch.contributor} and {previous[1]} both set {name} differently"
                    )
                own[name] = (entry, patch.contributor, env_value.default)
    for ci, container in enumerate(containers):
        additions = wanted.get(container["name"])
        if not additions:
            continue
        user_env: list[dict[str, Any]] = container.get("env") or []
        user_by_name = {e["name"]: (ei, e) for ei, e in enumerate(user_env)}
        merged = list(user_env)
        for name, (entry, contributor, is_default) in additions.items():
            found = user_by_name.get(name)
            if found is None:
                merged.append(entry)
                continue
            ei, user_entry = found
            if user_entry == entry or options.allow_env_override or is_default:
                continue
            path = slot.role.path + ("template", "spec", "containers", ci, "env", ei)
            diagnostics.append(
                plan.document.diagnostic(
                    path,
                    f"container {container['name']!r} sets {name}, which msgen sets for "
                    f"{contributor} ({_describe(entry)}); accepted: leave {name} out, "
                    "or pass --allow-env-override to keep your value",
                )
            )
        container["env"] = merged
    for patch in patches:
        diagnostics.extend(_pod_parts(plan, slot, template, patch))
    return template, diagnostics


def _patchable(template: dict[str, Any]) -> dict[str, Any]:
    """A copy of `template` that patches may change: the pod spec and its containers are new
    (the lists and maps patches extend are copied where they are extended); everything else is
    shared, read only, with the role's template, which many pods share. A deep copy here cost
    more than the rest of a bare-pod render; `decorate` copies each object it emits anyway.
    """
    spec = dict(template["spec"])
    spec["containers"] = [dict(container) for container in spec["containers"]]
    return {**template, "spec": spec}


def _pod_parts(  # noqa: C901 - one branch per pod part a Patch sets (volumes, mounts, command, node selector), merged in one pass
    plan: Plan, slot: PodSlot, template: dict[str, Any], patch: Patch
) -> list[Diagnostic]:
    """Volumes, mounts, command wrappers and node selector entries of one patch."""
    out: list[Diagnostic] = []
    spec = template["spec"]
    spec_path = slot.role.path + ("template", "spec")
    who = patch.contributor
    volumes: list[dict[str, Any]] = list(spec.get("volumes") or [])
    if patch.volumes:
        spec["volumes"] = volumes  # (also when the template wrote `volumes: null`)
    for volume in patch.volumes:
        clash = next((vi for vi, v in enumerate(volumes) if v.get("name") == volume["name"]), None)
        if clash is None:
            volumes.append(copy_data(volume))
        elif volumes[clash] != volume:
            out.append(
                plan.document.diagnostic(
                    spec_path + ("volumes", clash),
                    f"volume {volume['name']!r} is a name msgen uses for {who}; accepted: "
                    "another volume name",
                )
            )
    containers: list[dict[str, Any]] = spec["containers"]
    for name, mount in patch.mounts:
        for ci, container in enumerate(containers):
            if container["name"] != name:
                continue
            mounts: list[dict[str, Any]] = list(container.get("volumeMounts") or [])
            container["volumeMounts"] = mounts
            clash = next(
                (mi for mi, m in enumerate(mounts) if m.get("mountPath") == mount["mountPath"]),
                None,
            )
            if clash is None:
                mounts.append(dict(mount))
            elif mounts[clash] != mount:
                out.append(
                    plan.document.diagnostic(
                        spec_path + ("containers", ci, "volumeMounts", clash),
                        f"container {name!r} mounts {mount['mountPath']}, where msgen mounts "
                        f"volume {mount['name']!r} for {who}; accepted: leave this mount out",
                    )
                )
    for name, wrap in patch.command_wrap:
        for ci, container in enumerate(containers):
            if container["name"] != name:
                continue
            if not container.get("command"):
                out.append(
                    plan.document.diagnostic(
                        spec_path + ("containers", ci),
                        f"container {name!r} sets no command, and {who} must wrap it (the "
                        "image's entrypoint is unknown when msgen renders); accepted: the full "
                        "command in `command` (and `args`)",
                    )
                )
                continue
            argv = [*container["command"], *(container.get("args") or [])]
            container["command"] = list(wrap.command)
            container["args"] = argv
    selector: dict[str, str] = dict(spec.get("nodeSelector") or {})
    for label, value in patch.node_selector:
        if label in selector and selector[label] != value:
            out.append(
                plan.document.diagnostic(
                    spec_path + ("nodeSelector", label),
                    f"nodeSelector {label}: {selector[label]!r} differs from {value!r}, which "
                    f"msgen sets for {who}; accepted: {value!r} or leave it out",
                )
            )
        else:
            selector[label] = value
    if selector:
        spec["nodeSelector"] = selector
    return out


def _describe(entry: dict[str, Any]) -> str:
    if "valueFrom" in entry:
        return "from " + str(entry["valueFrom"]["fieldRef"]["fieldPath"])
    return repr(entry["value"])


def copy_data(value: Any) -> Any:
    """A copy of parsed YAML data (mappings, lists, scalars) that shares no mapping or list.

    Each role's template is copied before msgen fills it in; `copy.deepcopy` spent most of
    its time on its memo and per-scalar dispatch, which data straight from the loader does
    not need (parts repeated through YAML aliases come out as separate copies, so filling in
    one never changes another).
    """
    if isinstance(value, dict):
        return {key: copy_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_data(item) for item in value]
    return value
