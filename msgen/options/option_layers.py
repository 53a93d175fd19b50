"""Options from several places at once: one precedence, and who set what.

Under Argo CD a job's options come from up to six places. Later ones win:

1. msgen's defaults;
2. what Argo CD says about the cluster (the *facts*): `ARGOCD_APP_NAMESPACE`, `KUBE_VERSION`,
   and that a GitOps tool applies the output;
3. the overlay's KRM function config (`data` of the ConfigMap that runs `msgen-krm`);
4. the plugin's env `ARGOCD_ENV_MSGEN_<OPTION>` (the Application's `plugin.env`);
5. the Application's parameters (`ARGOCD_APP_PARAMETERS`, `PARAM_<OPTION>`);
6. the job's own `msgen/<option>` annotations, for that job.

The Application (4, 5) is more specific than the repository it deploys (3), as a job is more
specific than its Application (6). Each place is a `Layer`. A value that loses to a later one
is reported, never dropped silently: `resolve` returns one warning per overridden value, and
`Options.origins` remembers who set each option so that an annotation overriding it says so.

`argocd-generate` builds kustomize overlays with `msgen-krm` (or the legacy plugin) running
inside the build; it hands them the facts and the Application's choices in the environment
variable `MSGEN_HOST_OPTIONS` (JSON), so every path compiles with the same options. It also
hands them Argo CD's destination namespace apart, which they leave off the objects: Argo CD
puts it on every object that names none, and a ConfigMap the overlay generates names none, so
the job's objects must name none either for kustomize to follow its hashed name into them.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import text as option_text
from .option_table import BY_NAME
from ..model.plan import Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..model.type_forms import NamedTuple

#: The hand-off from `argocd-generate` to the functions kustomize runs inside its build.
HANDOFF_VARIABLE = "MSGEN_HOST_OPTIONS"


class Layer(NamedTuple):
    """One place options come from: option name → (text, how the user wrote its name); and
    the host it is (`msgen.options.option_table.HOSTS`), whose options alone it may set (None: msgen's
    own values, and layers a host checked before handing them over)."""

    values: dict[str, tuple[str, str]]
    host: str | None = None


class Override(NamedTuple):
    """A value that lost to a later layer's different value."""

    option: str
    lost: str  # `SHOWN='text'`
    won: str

    def message(self) -> str:
        return f"{self.lost} is overridden by {self.won} ({describe(self.won)} wins)"


class Handoff(NamedTuple):
    """What a host resolved and passes on: the layers below and above a function config,
    the API versions the cluster serves (None: unknown), its administrator's ceilings
    (`msgen.options.ceilings`; None: none), and the namespace the host puts on objects that
    name none (`Options.destination_namespace`; None: it puts none)."""

    facts: list[Layer]
    choices: list[Layer]
    api_versions: tuple[str, ...] | None = None
    ceilings: Layer | None = None
    destination_namespace: str | None = None


def resolve(
    layers: list[Layer], base: Options | None = None, ceilings: Layer | None = None
) -> tuple[Options, list[Override]]:
    """`base` with every layer applied in order; and each value a later layer overrode with
    a different one. `ceilings` (an administrator's, msgen.options.ceilings) are the values
    where no layer sets one, and no layer may go above them. Raises option_text.OptionError
    for a bad value or one above its ceiling."""
    options = base or Options()
    ceiling_origins: dict[str, str] = {}
    if ceilings is not None:
        from .ceilings import check

        check([layer.values for layer in layers], ceilings.values)
        options = option_text.apply(options, {n: t for n, (t, _s) in ceilings.values.items()},
                                    shown_as={n: s for n, (_t, s) in ceilings.values.items()})  # fmt: skip
        ceiling_origins = {name: f"{shown}={text!r}" for name, (text, shown) in ceilings.values.items()}
    chosen: dict[str, tuple[Any, str, str]] = {}  # option → (value, text, shown)
    overrides = []
    for layer in layers:
        texts = {name: text for name, (text, _shown) in layer.values.items()}
        shown_as = {name: shown for name, (_text, shown) in layer.values.items()}
        options = option_text.apply(options, texts, shown_as=shown_as, host=layer.host)
        for name, (text, shown) in layer.values.items():
            value = getattr(options, BY_NAME[name].field)
            before = chosen.get(name)
            if before is not None and before[0] != value:
                overrides.append(Override(name, f"{before[2]}={before[1]!r}", f"{shown}={text!r}"))
            chosen[name] = (value, text, shown)
    origins = tuple((name, f"{shown}={text!r}") for name, (_v, text, shown) in chosen.items())
    kept = tuple((name, origin) for name, origin in ceiling_origins.items() if name not in chosen)
    return options._replace(origins=kept + origins), overrides


def describe(shown: str) -> str:
    """Which place a name belongs to, for messages."""
    if shown.startswith("ARGOCD_ENV_"):
        return "the plugin env"
    if shown.startswith("HELM_MSGEN_"):
        return "the post-renderer's env"
    if shown.startswith("parameter ") or shown.startswith("PARAM_"):
        return "the Application's parameter"
    if shown.startswith("functionConfig"):
        return "the overlay's function config"
    if shown.startswith("msgen/"):
        return "the job's annotation"
    if shown.startswith("--"):
        return "the plugin's arguments"
    return "Argo CD's value"


def to_env(handoff: Handoff) -> str:
    """The hand-off as the text of HANDOFF_VARIABLE."""
    data = {
        "facts": [layer.values for layer in handoff.facts],
        "choices": [layer.values for layer in handoff.choices],
        "apiVersions": list(handoff.api_versions) if handoff.api_versions is not None else None,
        "ceilings": handoff.ceilings.values if handoff.ceilings is not None else None,
        "destinationNamespace": handoff.destination_namespace,
    }
    import json  # a host handing options on (the Argo CD sidecar): never on a render

    return json.dumps(data, sort_keys=True)


def from_env(env: Mapping[str, str]) -> Handoff | None:
    """The hand-off a host left in the environment, or None when there is none. A value
    that is not one msgen wrote raises option_text.OptionError naming the variable."""
    text = env.get(HANDOFF_VARIABLE)
    if not text:
        return None
    import json  # only where a host left a hand-off (inside the Argo CD sidecar's build)

    try:
        data = json.loads(text)
        facts = [_layer(values) for values in data["facts"]]
        choices = [_layer(values) for values in data["choices"]]
        versions = data.get("apiVersions")
        api_versions = None if versions is None else tuple(str(v) for v in versions)
        ceilings = None if data.get("ceilings") is None else _layer(data["ceilings"])
        destination = data.get("destinationNamespace")
        if destination is not None and not isinstance(destination, str):
            raise TypeError(destination)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise option_text.OptionError(
            HANDOFF_VARIABLE,
            f"${HANDOFF_VARIABLE} is not what msgen argocd-generate writes; accepted: unset "
            "(msgen sets it for the kustomize build it runs)",
        ) from None
    return Handoff(facts, choices, api_versions, ceilings, destination)


def _layer(values: dict[str, Any]) -> Layer:
    return Layer({str(k): (str(v[0]), str(v[1])) for k, v in values.items()})


def with_function_config(handoff: Handoff | None, config: Layer) -> tuple[Options, list[Override]]:
    """The options of a function inside a host's build: the facts, the function's own
    config, then the host's choices. Only overrides that involve the config are returned
    (the host reported the others already)."""
    if handoff is None:
        return resolve([config])
    options, overrides = resolve([*handoff.facts, config, *handoff.choices], ceilings=handoff.ceilings)
    mine = {f"{shown}={text!r}" for text, shown in config.values.values()}
    overrides = [o for o in overrides if o.lost in mine or o.won in mine]
    if handoff.api_versions is not None:
        options = options._replace(served_apis=frozenset(handoff.api_versions))
    return options._replace(destination_namespace=handoff.destination_namespace), overrides
