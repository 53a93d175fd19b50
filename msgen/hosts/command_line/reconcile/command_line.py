"""What the reconciler's commands share: cluster options, connecting, rendering for the
cluster that is there, following a job to its end (`apply --wait`, `status --watch`), and errors.

Exit status of every reconciler command: 0 done; 1 the input has errors, the cluster refused
or cannot be reached, or the job failed; 2 the command line is wrong, or the Kubernetes
client (`msgen-k8s[apply]`) is not installed; 3 --timeout passed first; 130 interrupted.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ....model import run_policy, versions
from ...click_options import CONTEXT as CONTEXT
from ...compile_command import compile_paths, options_from

if TYPE_CHECKING:
    from lightkube import Client

EXIT_USAGE = 2
#: The modules of the `msgen-k8s[apply]` extra the reconciler imports itself.
CLIENT_MODULES = ("httpx2", "lightkube", "lightkube.models")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?\Z")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}


def duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    found = _DURATION.match(value)
    if not found:
        raise click.BadParameter(f"{value!r}; accepted: a duration such as 90s, 10m or 2h")
    return float(found.group(1)) * _UNITS[found.group(2)]


def cluster_options(func: Any) -> Any:
    for decorator in reversed([
        click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig file (default: the files $KUBECONFIG lists, merged as kubectl does; ~/.kube/config; in a pod, its service account)."),
        click.option("--context", metavar="NAME", help="The kubeconfig context to use."),
    ]):  # fmt: skip
        func = decorator(func)
    return func


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"msgen: error: {message}", err=True)
    raise SystemExit(code)


#: How to add the `apply` extra: by the distribution's name on the package index (`msgen`
#: there is another project), or from msgen's own source tree, as it is installed before
#: it is published.
INSTALL_APPLY = "pip install 'msgen-k8s[apply]' (in msgen's source tree: pip install '.[apply]')"


def require_client() -> None:
    """Exit 2 naming what to install when the Kubernetes client is missing: `msgen render`
    needs none of it, so a plain `pip install msgen-k8s` has none."""
    import importlib

    for module in CLIENT_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            command = click.get_current_context(silent=True)
            name = command.info_name if command is not None else "this command"
            fail(f"msgen {name} talks to a cluster through the Kubernetes client, which is not "
                 f"installed ({exc}): {INSTALL_APPLY}", EXIT_USAGE)


def connect(kwargs: dict[str, Any]) -> Client:
    """The client for --kubeconfig/--context (popped from `kwargs`)."""
    require_client()
    from ....reconcile.kube import KubeError
    from ....reconcile.kube import connect as client_for

    try:
        return client_for(kwargs.pop("kubeconfig"), kwargs.pop("context"))
    except KubeError as exc:
        fail(str(exc), 1)


def rendered(kwargs: dict[str, Any], client: Client, *, ask_server: bool = False,
             say: Callable[[str], None] | None = None) -> tuple[list[dict[str, Any]], str]:
    """The inputs rendered as `msgen render` does, placed in their namespace; with
    `ask_server`, for the cluster's Kubernetes version unless --kube-version (or
    KUBE_VERSION) names one, and for the APIs it serves."""
    from ....reconcile.run import place

    served = None
    if ask_server:
        if not _given(click.get_current_context(), "kube_version"):
            kwargs["kube_version"] = cluster_version(client)
            if say is not None:
                say(f"msgen: rendering for Kubernetes {versions.show(kwargs['kube_version'])}, the cluster's "
                    "(--kube-version overrides it)")
        served = served_apis(client)
    compilation = compile_paths(list(kwargs.pop("paths")), options_from(kwargs)._replace(served_apis=served))
    namespace = job_namespace(compilation.objects, kwargs["namespace"], client)
    return place(compilation.objects, namespace), namespace


def job_namespace(objects: list[dict[str, Any]], given: str | None, client: Any) -> str:
    """Where a job's objects (and its ApplySet) are: -n, else the namespace its file names,
    else the kubeconfig context's."""
    own = {(o.get("metadata") or {}).get("namespace") for o in objects} - {None}
    return str(given or (own.pop() if len(own) == 1 else client.namespace))


def _given(ctx: click.Context, name: str) -> bool:
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)


def cluster_version(client: Client) -> tuple[int, int]:
    """The server's MAJOR.MINOR, within what msgen renders for: a newer cluster gets the
    newest msgen knows (its fields stay valid there), an older one is an error."""
    from ....reconcile.discovery import server_version
    from ....reconcile.kube import KubeError

    try:
        text = server_version(client)
        found = versions.parse(text)
    except KubeError as exc:
        if exc.code == 0:  # no answer: a version given would not reach the server either
            fail(str(exc), 1)
        fail(f"{exc}; name the cluster's version with --kube-version to render without asking", 1)
    except ValueError as exc:
        fail(f"the cluster's version: {exc}", 1)
    return min(found, versions.NEWEST)


def served_apis(client: Client) -> frozenset[str]:
    """What the cluster serves: a render that needs more (a JobSet without its CRD, a Kueue
    queue without Kueue) is an error naming what to install, before anything is applied."""
    from ....reconcile.discovery import served_api_versions
    from ....reconcile.kube import KubeError

    try:
        return served_api_versions(client)
    except KubeError as exc:
        fail(str(exc), 1)


def render_paths(paths: list[str], kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """`paths` rendered with the command's render options (warnings are apply's to show)."""
    return compile_paths(paths, options_from(kwargs)).objects


def follow_job(client: Client, job: str, namespace: str, timeout: float | None, started: float) -> None:
    from ....reconcile import kube, watch
    from ....reconcile.witness import Witness

    echo = click.echo
    out = sys.stdout

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    lines = watch.Lines(write, out.isatty())
    witness = Witness(lambda failure: watch.last_logs(client, namespace, failure))
    try:
        found = watch.follow(client, job, namespace, timeout=timeout, echo=lines, witness=witness)
    except KeyboardInterrupt:
        lines.close()
        echo(f"\nmsgen: stopped watching; the job keeps running. Resume with:\n"
             f"  msgen status {job} -n {namespace} --watch", err=True)
        raise SystemExit(130) from None
    except TimeoutError as exc:
        fail(f"timed out; the job keeps running: {exc}", watch.EXIT_TIMEOUT)
    except (watch.NotFound, kube.KubeError, run_policy.PolicyError) as exc:
        fail(str(exc), 1)
    for line in watch.summary(found, time.monotonic() - started):
        echo(line)
    if found.phase == "Failed":
        for failure in found.failures[:3]:
            echo(f"  last log lines of pod {failure.pod}:")
            for line in witness.log_of(failure) or watch.last_logs(client, namespace, failure):
                echo(line)
        raise SystemExit(1)
