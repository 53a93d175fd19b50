"""msgen's options in Argo CD's environment, as the cmp-server hands them to the plugin.

The repo server builds the environment (argo-cd `reposerver/repository.getPluginEnvs` and
`ApplicationSourcePluginParameters.Environ`): `ARGOCD_APP_NAMESPACE`, `KUBE_VERSION` (the
cluster's version, `1.29.4`; older Argo CD sent `v1.29.4+k3s1`), `KUBE_API_VERSIONS` (the
served `group/version` and `group/version/Kind`, comma-separated), each `plugin.env` entry as
`ARGOCD_ENV_<name>`, and the Application's parameters twice: all of them as JSON in
`ARGOCD_APP_PARAMETERS` (`[{"name": ..., "string": ...} | {"name", "map": {...}} |
{"name", "array": [...]}]`) and one variable per value, `PARAM_<NAME>` for a string,
`PARAM_<NAME>_<KEY>` for a map entry, `PARAM_<NAME>_<i>` for an array item (names upper-cased,
other characters `_`).

Every msgen option is a string; a parameter msgen does not know, or one given as a map or an
array, is an error, as a misspelt `ARGOCD_ENV_MSGEN_...` variable is. The precedence of the
places is `msgen.options.option_layers`'.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from . import text as option_text
from .option_layers import Handoff, Layer, Override, resolve
from .option_table import names
from ..model.plan import Options

#: The options the plugin's env and the Application's parameters may set are this host's
#: (`msgen.options.option_table`); plugin.yaml announces the same.
HOST = "argocd"
ENV_PREFIX = "ARGOCD_ENV_MSGEN_"
PARAMETERS_VARIABLE = "ARGOCD_APP_PARAMETERS"


def env_name(option: str) -> str:
    """Argo CD's escaping of a name: upper-cased, every character but A-Z0-9_ as `_`."""
    return re.sub(r"[^A-Z0-9_]", "_", option.upper())


def env_variables(prefix: str = ENV_PREFIX, host: str = HOST) -> list[str]:
    """Every `ARGOCD_ENV_MSGEN_<OPTION>` variable the plugin reads (`<prefix><OPTION>` for
    another host), in option order."""
    return [prefix + env_name(option) for option in names(host)]


def _unknown(key: str, what: str, known: list[str]) -> option_text.OptionError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return option_text.OptionError(
        key, f"unknown msgen {what} {key!r}{hint}; accepted: {', '.join(known)}", unknown_name=True
    )


def env_layer(env: Mapping[str, str], prefix: str = ENV_PREFIX, host: str = HOST) -> Layer:
    """The plugin env's options (`<prefix><OPTION>` for another host); a misspelt
    `ARGOCD_ENV_MSGEN_...` variable is an error."""
    known = env_variables(prefix, host)
    values = {}
    for key in sorted(env):
        if not key.startswith(prefix):
            continue
        if key not in known:
            raise _unknown(key, "variable", known)
        if env[key]:
            option = names(host)[known.index(key)]
            values[option] = (env[key], key)
    return Layer(values, host)


def parameter_layer(env: Mapping[str, str]) -> Layer:
    """The Application's parameters: from `ARGOCD_APP_PARAMETERS` when Argo CD sent it (it
    keeps each parameter's own name and form), else from the `PARAM_*` variables."""
    text = env.get(PARAMETERS_VARIABLE)
    if text:
        return _from_json(text)
    return _from_variables(env)


#: Argo CD's parameters nest three levels; deeper JSON is refused before it is parsed
#: (Python's parser recurses per level: 50,000 levels ended as an internal error).
MAX_JSON_DEPTH = 32


def _too_deep(text: str) -> str | None:
    """Where `text` first nests deeper than MAX_JSON_DEPTH (`line 1 column 33`), or None."""
    depth, quoted, escaped, line, column = 0, False, False, 1, 0
    for char in text:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        if quoted:
            escaped, quoted = (not escaped and char == "\\"), (quoted if escaped or char != '"' else False)
            continue
        if char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"line {line} column {column}"
        elif char in "]}":
            depth -= 1
    return None


def _from_json(text: str) -> Layer:
    deep = _too_deep(text)
    if deep is not None:
        raise option_text.OptionError(
            PARAMETERS_VARIABLE,
            f"{PARAMETERS_VARIABLE} nests deeper than {MAX_JSON_DEPTH} levels at {deep}; "
            "accepted: the JSON array Argo CD sends",
        )
    try:
        parameters = json.loads(text)
    except ValueError as exc:
        raise option_text.OptionError(
            PARAMETERS_VARIABLE,
            f"{PARAMETERS_VARIABLE} is not JSON ({exc}); accepted: the JSON array Argo CD sends",
        ) from None
    if parameters is None:
        # An Application without parameters: Argo CD marshals its nil list as `null`.
        parameters = []
    if not isinstance(parameters, list):
        raise option_text.OptionError(
            PARAMETERS_VARIABLE,
            f"{PARAMETERS_VARIABLE} is not a JSON array; accepted: the JSON array Argo CD sends",
        )
    known = names(HOST)
    values: dict[str, tuple[str, str]] = {}
    for parameter in parameters:
        name = parameter.get("name") if isinstance(parameter, dict) else None
        if not isinstance(name, str):
            raise option_text.OptionError(
                PARAMETERS_VARIABLE,
                f"{PARAMETERS_VARIABLE} holds {parameter!r}; accepted: parameters with a name",
            )
        shown = f"parameter {name}"
        if name not in known:
            raise _unknown(name, "parameter", known)
        if name in values:
            raise option_text.OptionError(
                name, f"{shown} is given twice; accepted: each parameter once"
            )
        form = _form(parameter)
        if form not in (None, "string"):
            raise option_text.OptionError(
                name,
                f"{shown} is given as {_article(form)} {form}; accepted: a string (every msgen"
                " option is one)",
            )
        value = parameter.get("string")
        if isinstance(value, str) and value:
            values[name] = (value, shown)
    return Layer(values, HOST)


def _form(parameter: dict[str, Any]) -> str | None:
    """How a parameter was given; the first of string, map, array present (Argo CD sends one)."""
    for form in ("map", "array", "string"):
        if parameter.get(form) is not None:
            return form
    return None


def _from_variables(env: Mapping[str, str]) -> Layer:
    """`PARAM_<OPTION>`: what older hosts, or a hand-run plugin, give. A `PARAM_` variable that
    no option explains (a misspelt name, a map entry or an array item) is an error."""
    by_variable = {"PARAM_" + env_name(option): option for option in names(HOST)}
    values = {}
    for key in sorted(env):
        if not key.startswith("PARAM_"):
            continue
        if key not in by_variable:
            raise _unknown(key, "parameter variable", list(by_variable))
        if env[key]:
            values[by_variable[key]] = (env[key], key)
    return Layer(values, HOST)


def fact_layer(env: Mapping[str, str]) -> Layer:
    """What Argo CD says about the cluster: the destination namespace, the version, and that
    Argo CD applies (and re-creates) what the plugin prints."""
    values = {"gitops": ("true", "the Argo CD plugin")}
    for option, variable in (("namespace", "ARGOCD_APP_NAMESPACE"), ("kube-version", "KUBE_VERSION")):
        if env.get(variable):
            values[option] = (env[variable], variable)
    return Layer(values)


def api_versions(env: Mapping[str, str]) -> tuple[str, ...] | None:
    """`KUBE_API_VERSIONS` as a tuple; None when Argo CD sent none (a local render)."""
    text = env.get("KUBE_API_VERSIONS", "").strip()
    if not text:
        return None
    return tuple(sorted({part.strip() for part in text.split(",") if part.strip()}))


#: The sidecar's ceilings, set in the sidecar container's env by its administrator (an
#: Application sets only `ARGOCD_ENV_*`): the most a render may write. A repository's function
#: config, the plugin env and the parameters may lower these bounds, never raise them
#: (msgen.options.ceilings). The defaults keep the worst a repository can make the sidecar
#: spend, msgen and kustomize together, within its 1 GiB limit (bench/sidecar_bounds.py).
CEILING_VARIABLES = {"max-output-size": "MSGEN_ARGOCD_MAX_OUTPUT_SIZE",
                     "max-output-objects": "MSGEN_ARGOCD_MAX_OUTPUT_OBJECTS"}  # fmt: skip
CEILING_DEFAULTS = {"max-output-size": "16Mi", "max-output-objects": "20000"}


def ceiling_layer(env: Mapping[str, str]) -> Layer:
    """The administrator's ceilings (the defaults where a variable is unset or empty); raises
    OptionError naming a variable whose value the option does not accept."""
    from .ceilings import checked

    values = {}
    for option, variable in CEILING_VARIABLES.items():
        values[option] = (env.get(variable, "").strip() or CEILING_DEFAULTS[option], variable)
    return Layer(dict(checked(values)))


def handoff(env: Mapping[str, str]) -> Handoff:
    """Every option source in Argo CD's environment, checked: raises OptionError naming the
    variable or parameter that is misspelt, holds a value msgen does not accept, or goes
    above the sidecar's ceiling. The destination namespace is handed on apart too: Argo CD
    places the objects in it itself."""
    facts = [fact_layer(env)]
    choices = [env_layer(env), parameter_layer(env)]
    ceilings = ceiling_layer(env)
    resolve([*facts, *choices], ceilings=ceilings)  # every value checked here, before any build
    return Handoff(facts, choices, api_versions(env), ceilings, env.get("ARGOCD_APP_NAMESPACE") or None)


def options_from_env(env: Mapping[str, str]) -> tuple[Options, list[Override], Handoff]:
    """The options of a plain directory's render, the overrides to report, and the hand-off
    for a kustomize build."""
    found = handoff(env)
    options, overrides = resolve([*found.facts, *found.choices], ceilings=found.ceilings)
    if found.api_versions is not None:
        options = options._replace(served_apis=frozenset(found.api_versions))
    return options, overrides, found


def _article(word: str) -> str:
    """'a' or 'an' before `word` (Argo CD's forms: map, array)."""
    return "an" if word[:1] in "aeiou" else "a"

