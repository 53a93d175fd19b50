"""The Argo CD health checks overlays/argocd ships, run as Argo CD runs them.

Argo CD runs a `resource.customizations.health.<group>_<kind>` script from argocd-cm in
gopher-lua (Lua 5.1) with only the base, table and package libraries and a reduced `os`
(argo-cd util/lua/lua.go `runLuaWithResourceActionParameters`: SkipOpenLibs, then those three
and OpenSafeOs), the object as the global `obj`; the table it returns is read as
`{status, message}`, and a status outside Argo CD's codes becomes Unknown. Here a real Lua 5.1
(lupa) runs the scripts exactly as the component puts them into argocd-cm, in that reduced
environment (strings have no methods: `string` is not opened), on each `health_test.yaml`
case (argo-cd's own format), whose inputs are statuses captured from a real cluster (Jobs) or
built from the controllers' own code (JobSet, Volcano Job, TrainJob; each file says where).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT, kustomize_binary

lua51 = pytest.importorskip("lupa.lua51", reason="lupa (a [test] dependency) runs the Lua health checks")

HEALTH = ROOT / "overlays" / "argocd" / "health"
CHECKS = {  # argocd-cm key → the directory of its script and tests
    "resource.customizations.health.batch_Job": HEALTH / "batch" / "Job",
    "resource.customizations.health.jobset.x-k8s.io_JobSet": HEALTH / "jobset.x-k8s.io" / "JobSet",
    "resource.customizations.health.batch.volcano.sh_Job": HEALTH / "batch.volcano.sh" / "Job",
    "resource.customizations.health.trainer.kubeflow.org_TrainJob": HEALTH / "trainer.kubeflow.org" / "TrainJob",
}
#: gitops-engine pkg/health: the codes a script may return.
CODES = ("Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown")
#: What gopher-lua's base library holds (the globals a ConfigMap script sees, with package,
#: table and the safe os).
BASE = (
    "assert", "collectgarbage", "dofile", "error", "getfenv", "getmetatable", "ipairs", "load",
    "loadfile", "loadstring", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawset",
    "select", "setfenv", "setmetatable", "tonumber", "tostring", "type", "unpack", "xpcall",
    "_VERSION", "require", "module",
)


def argocd_cm(tmp_path: Path) -> dict[str, str]:
    """argocd-cm as the component leaves it on top of Argo CD's own (built with kustomize);
    without kustomize, the script files themselves."""
    kustomize = kustomize_binary()
    if kustomize is None:
        return {key: (path / "health.lua").read_text() for key, path in CHECKS.items()}
    install = tmp_path / "argocd-install"
    install.mkdir()
    from .test_gitops_argocd import ARGOCD_CM, REPO_SERVER

    (install / "argocd-cm.yaml").write_text(yaml.safe_dump(ARGOCD_CM))
    # the component also patches the repo server: give it one
    (install / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": ["argocd-cm.yaml", "repo-server.yaml"],
                        "components": [os.path.relpath(ROOT / "overlays" / "argocd", install)]})
    )

    (install / "repo-server.yaml").write_text(yaml.safe_dump(REPO_SERVER))
    done = subprocess.run([kustomize, "build", str(install)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found = [o for o in yaml.safe_load_all(done.stdout) if o["metadata"]["name"] == "argocd-cm"]
    assert len(found) == 1
    assert found[0]["metadata"]["labels"] == ARGOCD_CM["metadata"]["labels"]  # merged, not replaced
    assert found[0]["data"]["url"] == ARGOCD_CM["data"]["url"]
    data: dict[str, str] = found[0]["data"]
    return data


class ArgoLua:
    """A Lua 5.1 state set up as Argo CD sets one up for a ConfigMap health script."""

    def __init__(self) -> None:
        self.runtime = lua51.LuaRuntime(unpack_returned_tuples=True)
        self.run_in = self.runtime.eval(
            """
            function(script, obj, base_names)
              local env = {}
              for _, name in ipairs(base_names) do env[name] = _G[name] end
              env.table = table
              env.package = package
              env.os = {time = os.time, date = os.date}
              env.obj = obj
              env._G = env
              local chunk, err = loadstring(script, "health.lua")
              if chunk == nil then error(err) end
              setfenv(chunk, env)
              local strings = debug.getmetatable("")
              local methods = strings.__index
              strings.__index = nil  -- no string library: strings have no methods
              local ok, result = pcall(chunk)
              strings.__index = methods
              if not ok then error(result) end
              return result
            end
            """
        )

    def lua_value(self, value: Any) -> Any:
        """argo-cd util/lua decodeValue: maps and lists become tables (lists 1-based)."""
        if isinstance(value, dict):
            return self.runtime.table_from({k: self.lua_value(v) for k, v in value.items()})
        if isinstance(value, list):
            return self.runtime.table_from([self.lua_value(v) for v in value])
        return value

    def health(self, script: str, obj: dict[str, Any]) -> dict[str, str]:
        """ExecuteHealthLua: the returned table as {status, message}."""
        result = self.run_in(script, self.lua_value(obj), self.runtime.table_from(list(BASE)))
        if result is None:
            return {"status": "", "message": ""}
        status, message = result["status"], result["message"]
        if status not in CODES:
            return {"status": "Unknown", "message": 'Lua returned an invalid health status'}
        return {"status": status, "message": message or ""}


def cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for key, directory in CHECKS.items():
        for test in yaml.safe_load((directory / "health_test.yaml").read_text())["tests"]:
            out.append((key, test))
    return out


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return argocd_cm(tmp_path_factory.mktemp("health"))


@pytest.mark.parametrize(("key", "test"), cases(), ids=lambda v: v if isinstance(v, str) else v["inputPath"])
def test_health_script_reads_each_status_as_expected(scripts: dict[str, str], key: str, test: dict[str, Any]) -> None:
    obj = yaml.safe_load((CHECKS[key] / test["inputPath"]).read_text())
    expected = {"status": test["healthStatus"]["status"], "message": test["healthStatus"].get("message", "")}
    assert ArgoLua().health(scripts[key], obj) == expected


def test_every_shipped_script_has_tests_and_is_in_argocd_cm(scripts: dict[str, str]) -> None:
    on_disk = {p.parent for p in HEALTH.rglob("health.lua")}
    assert on_disk == set(CHECKS.values())
    for key, directory in CHECKS.items():
        assert scripts[key] == (directory / "health.lua").read_text()
        inputs = {t["inputPath"] for t in yaml.safe_load((directory / "health_test.yaml").read_text())["tests"]}
        assert inputs == {f"testdata/{p.name}" for p in (directory / "testdata").glob("*.yaml")}


def test_the_environment_is_as_narrow_as_argo_cds() -> None:
    """A script using the string library, which a ConfigMap script does not get, fails here
    as it fails in Argo CD (so the shipped scripts cannot come to depend on it)."""
    lua = ArgoLua()
    with pytest.raises(lua51.LuaError):
        lua.health('local s = "Job"\nreturn {status = s:lower()}', {})
    with pytest.raises(lua51.LuaError):
        lua.health('return {status = string.lower("x")}', {})
    with pytest.raises(lua51.LuaError):
        lua.health('return {status = math.floor(1)}', {})
    assert lua.health('return {status = "Healthy", message = "a" .. tostring(1)}', {}) == {"status": "Healthy", "message": "a1"}
    assert lua.health('return {status = "Fine"}', {})["status"] == "Unknown"
