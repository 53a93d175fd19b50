"""`msgen convert`: rewrite older job files in today's format, keeping everything else.

- A 2020 `kubeflow.org/v1 MSJob` becomes a `mindspore.gitee.com/v1 MSJob`. Its MASTER trained
  as rank 0, while today's Scheduler only coordinates: the MASTER's template becomes the
  Scheduler's, and the Workers count one more so the job keeps as many training processes.
  `masterPort` becomes the Scheduler's `msjob-port` (`MS_SCHED_PORT`), `backend` is dropped
  (MindSpore's dynamic cluster has no such choice), a pod's only container is renamed
  `mindspore`, and the pod template's `restartPolicy` moves to the replica.
- An `mxnet.mlkube.io/v1beta1 MxJob` (or `mlkube.io/v1beta1`, the group the seed files show)
  becomes a `kubeflow.org/v1 MXJob`: `jobMode` dist/local → MXTrain, the `replicaSpecs` list
  → the `mxReplicaSpecs` map, `PsRootPort` → the `mxnet` container's `mxjob-port`, the pod
  template's `restartPolicy` → the replica's. The pods then get kubeflow's MXNet env, a
  superset of the original operator's, on every container.

The rewrite is a ruamel.yaml round trip: comments and the order of every key it does not
touch survive. That is why this command reads YAML a second way: msgen's own loader
(yamlio.yaml_loader, PyYAML's safe loader with positions) keeps no comments. What it checks
is still read by that loader (the job must compile first), and ruamel.yaml's scanner is
given the text as that loader's tokens see it (`_tabs_as_spaces`). Each change is explained on stderr with the line it was made at. A file is
converted only when msgen can compile it (its errors are reported instead), and files
without anything to convert are left byte for byte as they were.
"""

from __future__ import annotations

import copy
import io
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ... import kinds
from ...yamlio.atomic_file import OutputError, write_whole
from ...model.diagnostics import Diagnostic, InputError, format_diagnostic, has_errors
from ...yamlio.inputs import MissingPath, expand_paths, read_source
from ...model.plan import Options
from ...model.source import Source
from ...yamlio.yaml_loader import load_documents, tokens

LEGACY_MSJOB = ("kubeflow.org/v1", "MSJob")
OLD_MXJOBS = (("mxnet.mlkube.io/v1beta1", "MxJob"), ("mlkube.io/v1beta1", "MxJob"))
CONVERTIBLE = (LEGACY_MSJOB, *OLD_MXJOBS)
MXNET_DEFAULT_PORT = 9091


@dataclass(frozen=True)
class Change:
    """One edit, explained: where it was made (1-based) and why."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: converted: {self.message}"


@dataclass
class Conversion:
    source: Source
    text: str | None = None
    changes: list[Change] | None = None
    diagnostics: list[Diagnostic] | None = None


Note = Callable[[Any, Any, str], None]


def _yaml() -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def convert_source(source: Source) -> Conversion:
    """The converted text of one source (None when nothing needed converting)."""
    result = Conversion(source, changes=[], diagnostics=[])
    assert result.changes is not None and result.diagnostics is not None
    try:
        documents = load_documents(source)
    except InputError as exc:
        result.diagnostics.extend(exc.diagnostics)
        return result
    wanted = []
    for document in documents:
        data = document.data
        key = (data.get("apiVersion"), data.get("kind")) if isinstance(data, dict) else None
        wanted.append(key in CONVERTIBLE)
        if key in CONVERTIBLE:
            job_kind = kinds.lookup(*key)
            assert job_kind is not None
            _plan, found = job_kind.to_plan(document, Options())
            result.diagnostics.extend(d for d in found if d.is_error)
    if not any(wanted) or has_errors(result.diagnostics):
        return result
    yaml = _yaml()
    trees = list(yaml.load_all(_tabs_as_spaces(source.text)))
    changes = result.changes

    def note(mapping: Any, key: Any, message: str) -> None:
        line = mapping.lc.key(key)[0] if key in mapping else mapping.lc.line
        changes.append(Change(source.name, line + 1, message))

    for tree, convert in zip(trees, wanted):
        if not convert:
            continue
        if (tree["apiVersion"], tree["kind"]) == LEGACY_MSJOB:
            _convert_legacy_msjob(tree, note)
        else:
            _convert_old_mxjob(tree, note)
    changes.sort(key=lambda change: change.line)
    stream = io.StringIO()
    yaml.dump_all(trees, stream)
    result.text = stream.getvalue()
    return result


def _tabs_as_spaces(text: str) -> str:
    """`text` with each tab that only separates tokens (`key:<TAB>value`, `value<TAB>`) made a
    space, for ruamel.yaml's scanner, which refuses them where PyYAML's (and so `msgen render`'s)
    accepts them. Tabs inside scalars and comments are kept: only the gaps between the tokens
    PyYAML finds are touched, and a gap's comment runs from its `#` to the end of its line.
    The text was loaded by msgen already, with the same loader, so it scans."""
    if "\t" not in text:
        return text
    chars = list(text)
    end = 0
    for token in tokens(text):
        _spaces_in_gap(chars, end, token.start_mark.index)
        end = max(end, token.end_mark.index)
    _spaces_in_gap(chars, end, len(chars))
    return "".join(chars)


def _spaces_in_gap(chars: list[str], start: int, stop: int) -> None:
    in_comment = False
    for i in range(start, stop):
        if chars[i] == "#":
            in_comment = True
        elif chars[i] in "\n\r":
            in_comment = False
        elif chars[i] == "\t" and not in_comment:
            chars[i] = " "


def _delete(mapping: CommentedMap, key: str) -> None:
    """Remove `key`, keeping a comment written on its line on a neighbouring scalar key."""
    comment = mapping.ca.items.pop(key, None)
    keys = list(mapping)
    position = keys.index(key)
    del mapping[key]
    if comment is None or len(comment) < 3 or comment[2] is None:
        return
    for neighbour in keys[position - 1 :: -1] if position else []:
        if neighbour in mapping and not isinstance(mapping[neighbour], (dict, list)):
            if not mapping.ca.items.get(neighbour):
                mapping.ca.items[neighbour] = [None, None, comment[2], None]
                return
    for neighbour in keys[position + 1 :]:
        if not isinstance(mapping[neighbour], (dict, list)) and not mapping.ca.items.get(neighbour):
            mapping.ca.items[neighbour] = [None, None, comment[2], None]
            return


def _replace_key(mapping: CommentedMap, old: str, new: str, value: Any) -> None:
    """Put `new: value` where `old` was, so the keys keep their order."""
    position = list(mapping).index(old)
    del mapping[old]
    mapping.insert(position, new, value)


def _move_restart_policy(replica: CommentedMap, note: Note) -> None:
    pod_spec = replica["template"]["spec"]
    if "restartPolicy" not in pod_spec:
        return
    note(pod_spec, "restartPolicy", "the pod template's restartPolicy moved to the replica, "
         "where the new kind reads it")  # fmt: skip
    value = pod_spec.pop("restartPolicy")
    replica.insert(list(replica).index("template"), "restartPolicy", value)


def _add_port(container: CommentedMap, name: str, port: int) -> bool:
    ports = container.get("ports")
    if ports is None:
        ports = container["ports"] = CommentedSeq()
    if any(p.get("name") == name for p in ports):
        return False
    ports.append(CommentedMap([("containerPort", port), ("name", name)]))
    return True


def _replicas(replica: CommentedMap) -> int:
    count = replica.get("replicas")
    return 1 if count is None else int(count)


def _set_replicas(replica: CommentedMap, count: int) -> None:
    if "replicas" in replica:
        replica["replicas"] = count
    else:
        replica.insert(0, "replicas", count)


def _port(value: Any) -> int | None:
    return int(str(value).strip()) if value is not None else None


def _convert_legacy_msjob(job: CommentedMap, note: Note) -> None:
    note(job, "apiVersion", "apiVersion kubeflow.org/v1 → mindspore.gitee.com/v1 (MSJob of "
         "ms-operator today); the pods now get MindSpore's MS_* env instead of MS_CONFIG, "
         "MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK")  # fmt: skip
    job["apiVersion"] = "mindspore.gitee.com/v1"
    spec = job["spec"]
    by_type = {r["replicaType"]: r for r in spec["replicaSpecs"]}
    master, worker = by_type["MASTER"], by_type.get("WORKER")
    port = _port(master.get("masterPort")) or _port(spec.get("masterPort")) or 23456
    written_at = master if "masterPort" in master else spec if "masterPort" in spec else None
    if written_at is not None:
        note(written_at, "masterPort", f"masterPort {port} → port msjob-port of the "
             "Scheduler's container (MS_SCHED_PORT)")  # fmt: skip
    if "backend" in spec:
        note(spec, "backend", f"backend {spec['backend']!r} dropped: MindSpore's dynamic "
             "cluster chooses its own communication")  # fmt: skip
        _delete(spec, "backend")
    if "masterPort" in spec:
        _delete(spec, "masterPort")
    workers = worker if worker is not None else copy.deepcopy(master)
    training = _replicas(master) + (_replicas(worker) if worker is not None else 0)
    for replica in (master, workers):
        for key in ("replicaType", "masterPort"):
            if key in replica:
                _delete(replica, key)
        _move_restart_policy(replica, note)
        containers = replica["template"]["spec"]["containers"]
        if len(containers) == 1 and containers[0]["name"] != "mindspore":
            note(containers[0], "name", f"container {containers[0]['name']!r} renamed "
                 "'mindspore', the container MSJob configures")  # fmt: skip
            containers[0]["name"] = "mindspore"
    note(master, "replicas", "the MASTER became the Scheduler (it coordinates, no longer trains)")
    _set_replicas(master, 1)
    note(workers, "replicas", f"Worker replicas {training}: every process that trained "
         "before (the MASTER and each WORKER) is a Worker now")  # fmt: skip
    _set_replicas(workers, training)
    main = next(c for c in master["template"]["spec"]["containers"] if c["name"] == "mindspore")
    # A msjob-port written already is the port (the 2020 MSJob kind checks they agree).
    if _add_port(main, "msjob-port", port) and written_at is None:
        note(master, "template", f"port msjob-port {port} (the 2020 default masterPort) "
             "added to the Scheduler's container")  # fmt: skip
    _replace_key(spec, "replicaSpecs", "msReplicaSpecs",
                 CommentedMap([("Scheduler", master), ("Worker", workers)]))  # fmt: skip


def _convert_old_mxjob(job: CommentedMap, note: Note) -> None:
    note(job, "apiVersion", f"apiVersion {job['apiVersion']} MxJob → kubeflow.org/v1 MXJob "
         "(its pods get MX_CONFIG, DMLC_USE_KUBERNETES=1 and, on Workers, DMLC_WORKER_ID as "
         "well as the original DMLC_* env, on every container instead of only 'mxnet')")  # fmt: skip
    job["apiVersion"] = "kubeflow.org/v1"
    job["kind"] = "MXJob"
    spec = job["spec"]
    note(spec, "jobMode", f"jobMode {spec['jobMode']} → MXTrain")
    spec["jobMode"] = "MXTrain"
    names = {"SCHEDULER": "Scheduler", "SERVER": "Server", "WORKER": "Worker"}
    replicas = CommentedMap()
    for replica in spec["replicaSpecs"]:
        name = names[replica["mxReplicaType"]]
        _delete(replica, "mxReplicaType")
        if "PsRootPort" in replica:
            value = replica["PsRootPort"]
            port = MXNET_DEFAULT_PORT if value is None else int(value)
            main = next(c for c in replica["template"]["spec"]["containers"] if c["name"] == "mxnet")
            if any(p.get("name") == "mxjob-port" for p in main.get("ports") or []):
                note(replica, "PsRootPort", "PsRootPort dropped: container 'mxnet' names its "
                     "mxjob-port")  # fmt: skip
            elif port == MXNET_DEFAULT_PORT:
                note(replica, "PsRootPort", f"PsRootPort dropped: {port} is the default port")
            else:
                _add_port(main, "mxjob-port", port)
                note(replica, "PsRootPort", f"PsRootPort {port} → port mxjob-port of "
                     "container 'mxnet'")  # fmt: skip
            _delete(replica, "PsRootPort")
        _move_restart_policy(replica, note)
        replicas[name] = replica
    _replace_key(spec, "replicaSpecs", "mxReplicaSpecs", replicas)


def convert_paths(given: list[str], in_place: bool) -> int:
    """The `msgen convert` command: exit status 0, 1 (input errors) or 2 (usage)."""
    import click

    try:
        paths = expand_paths(given)
    except MissingPath as exc:
        raise click.BadParameter(f"no such file or directory: {exc}", param_hint="PATH") from None
    if in_place and "-" in paths:
        raise click.BadParameter("--in-place needs files, not standard input", param_hint="PATH")
    conversions = []
    failed = False
    for path in paths:
        source, error = read_source(path)
        if source is None:
            assert error is not None
            click.echo(format_diagnostic(error), err=True)
            failed = True
            continue
        conversion = convert_source(source)
        for diag in conversion.diagnostics or []:
            click.echo(format_diagnostic(diag, source.text), err=True)
        failed = failed or has_errors(conversion.diagnostics or [])
        conversions.append((path, conversion))
    if failed:
        click.echo("msgen: nothing was converted: fix the errors above first", err=True)
        return 1
    outputs = []
    for path, conversion in conversions:
        for change in conversion.changes or []:
            click.echo(str(change), err=True)
        text = conversion.text if conversion.text is not None else conversion.source.text
        if in_place:
            if conversion.text is not None:
                try:
                    write_atomically(path, text)
                except OutputError as exc:
                    click.echo(f"msgen: cannot rewrite {exc}", err=True)
                    return 1
        else:
            outputs.append(text)
    if not in_place:
        sys.stdout.write("---\n".join(t if t.endswith("\n") else t + "\n" for t in outputs))
    return 0


def write_atomically(path: str, text: str) -> None:
    """Replace `path` whole or not at all, keeping its permissions."""
    write_whole(path, text)
