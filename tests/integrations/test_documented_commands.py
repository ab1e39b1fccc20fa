"""Every shell command in ``dagster_defs/README.md`` and ``dags/README.md`` runs as documented.

The ```` ```bash ```` blocks are extracted (``\\`` continuations joined) and run one by one with
``bash`` in a throw-away copy of the repository's DAGs, Dagster code location, specs and suites
(the specs' tables shrunk to 1 500 rows, so the runs take seconds and nothing is written into the
repository). ``export`` lines carry over to the following commands; ``DAGSTER_HOME``, ``TMPDIR``
(so ``mktemp -d`` stays inside the test's folder) and the ``PATH`` of this interpreter's
environment (its ``dagster``/``airflow`` CLIs) are set by the test. A command documented with
``# exit code N`` must exit with N, any other with 0. Commands that need a long-running server
are listed in ``EXCLUDED`` with the reason; placeholders in the docs are mapped in ``PLACEHOLDERS``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import privacy_plugins

REPO = Path(__file__).resolve().parents[2]
ROWS = 1_500

# command prefix -> why it is not run here
EXCLUDED = {
    "dagster dev": "starts the Dagster webserver and daemon and runs until stopped",
    "dg dev": "starts the Dagster webserver and daemon and runs until stopped",
}
# a command's program -> the module that must be importable to run it here (else the command is skipped)
NEEDS = {"dg": "dagster_dg_cli"}
# text in a documented command -> what it becomes in the test (relative to the copy)
PLACEHOLDERS = {
    "/path/to/my_release.yaml": "specs/demo_census.yaml",
    "/tmp/release.duckdb": "elsewhere/release.duckdb",
    "/tmp/work": "elsewhere/work",
}
READMES = {
    "dagster_defs/README.md": "dagster",
    "dags/README.md": "airflow",
}
# files (in the copy) the commands of a README must have written
WRITTEN = {
    "dagster_defs/README.md": ["release_output/release.duckdb", "elsewhere/release.duckdb"],
    "dags/README.md": ["release_output/release.duckdb", "release_output/impossible/diagnosis.html"],
}


def documented_commands(markdown: str) -> list[str]:
    """The commands of the ```` ```bash ```` blocks, continuation lines joined, blank lines dropped."""
    commands = []
    for block in re.findall(r"^```(?:bash|sh|shell)\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL):
        for command in re.sub(r"\\\n\s*", "", block).splitlines():
            if command.strip() and not command.lstrip().startswith("#"):
                commands.append(command.strip())
    return commands


def expected_exit_code(command: str) -> int:
    """``N`` from a trailing ``# exit code N`` comment, else 0."""
    match = re.search(r"#.*\bexit code (\d+)", command)
    return int(match.group(1)) if match else 0


def excluded(command: str) -> str | None:
    words = shlex.split(command, comments=True)
    for prefix, reason in EXCLUDED.items():
        if words[: len(prefix.split())] == prefix.split():
            return reason
    return None


def test_documented_commands_are_extracted() -> None:
    """The parser finds the commands this test is meant to run (a README edit that hides them fails here)."""
    dagster = documented_commands((REPO / "dagster_defs" / "README.md").read_text(encoding="utf-8"))
    airflow = documented_commands((REPO / "dags" / "README.md").read_text(encoding="utf-8"))
    assert sum(c.startswith("dagster asset materialize") for c in dagster) >= 3
    assert [expected_exit_code(c) for c in dagster if "--select '*'" in c] == [1]
    assert any(c.startswith("dagster asset materialize") and "--config-json" in c for c in dagster)
    assert [c.split()[:2] for c in airflow if not c.startswith("export")] == [
        ["airflow", "db"],
        *[["airflow", "dags"]] * 5,
    ]
    assert [excluded(c) is not None for c in dagster].count(True) == 2
    assert [c.split()[:2] for c in dagster if c.startswith("dg ") and not excluded(c)] == [
        ["dg", "check"],
        ["dg", "launch"],
        ["dg", "scaffold"],
        ["dg", "check"],
        ["dg", "launch"],
    ]


def test_documented_dagster_selections_resolve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each ``--select`` in the Dagster README selects assets of ``dagster_defs`` (parsed as the CLI does)."""
    dg = pytest.importorskip("dagster")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    from dagster_defs.definitions import defs

    graph = defs.resolve_asset_graph()
    commands = documented_commands((REPO / "dagster_defs" / "README.md").read_text(encoding="utf-8"))
    selections = [words[words.index("--select") + 1] for words in map(shlex.split, commands) if "--select" in words]
    assert selections
    for selection in selections:  # `dagster asset materialize` splits on commas, then AssetSelection.from_coercible
        keys = dg.AssetSelection.from_coercible(selection.split(",")).resolve(graph)
        assert keys, selection
        if "demo_census" in selection:
            assert {key.path[0] for key in keys} == {"demo_census"}, selection


def copy_of_the_repo(directory: Path) -> Path:
    """The DAGs, Dagster definitions, specs (smaller tables) and suites, as in the repository."""
    for name in ("dags", "dagster_defs", "specs", "expectations"):
        shutil.copytree(REPO / name, directory / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", directory / "pyproject.toml")  # [tool.dagster]
    for spec in (directory / "specs").glob("*.yaml"):
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        if "rows" in data.get("source", {}):
            data["source"]["rows"] = ROWS
            spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return directory


def base_environment(tmp_path: Path, copy: Path) -> dict[str, str]:
    """This environment without Airflow/Dagster settings (the Airflow tests' conftest sets some)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "DAGSTER"))}
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    source_root = str(Path(privacy_plugins.__file__).resolve().parents[1])
    env.update(
        DAGSTER_HOME=str(home),
        TMPDIR=str(tmp_path),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join([str(copy), source_root]),
        GX_ANALYTICS_ENABLED="False",
    )
    return env


def run_export(command: str, env: dict[str, str], cwd: Path) -> dict[str, str]:
    """The environment after ``command`` (an ``export`` line), evaluated by bash."""
    result = subprocess.run(
        ["bash", "-c", f"{command}\nenv -0"], env=env, cwd=cwd, capture_output=True, text=True, check=True
    )
    return dict(item.split("=", 1) for item in result.stdout.split("\0") if "=" in item)


@pytest.mark.slow
@pytest.mark.parametrize("readme", list(READMES))
def test_documented_commands_run(readme: str, tmp_path: Path) -> None:
    pytest.importorskip(READMES[readme])
    copy = copy_of_the_repo(tmp_path / "repo")
    (copy / "elsewhere").mkdir()
    env = base_environment(tmp_path, copy)
    ran = []
    for documented in documented_commands((REPO / readme).read_text(encoding="utf-8")):
        if excluded(documented):
            continue
        program = documented.split()[0]
        if program in NEEDS and importlib.util.find_spec(NEEDS[program]) is None:
            continue  # e.g. dg without dagster-dg-cli; tests/integrations/dagster_adapter covers it when installed
        command = documented
        for placeholder, value in PLACEHOLDERS.items():
            command = command.replace(placeholder, str(copy / value))
        if command.startswith("export "):
            env = run_export(command, env, copy)
            continue
        result = subprocess.run(["bash", "-c", command], env=env, cwd=copy, capture_output=True, text=True)
        output = (result.stdout + result.stderr)[-4000:]
        assert result.returncode == expected_exit_code(documented), f"{documented}\nexit {result.returncode}\n{output}"
        ran.append(documented)
    assert ran
    assert [path for path in WRITTEN[readme] if not (copy / path).is_file()] == []
