"""Dagster test fixtures: DAGSTER_HOME in a temporary folder, small release specs writing under tmp_path."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session", autouse=True)
def dagster_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Keep Dagster out of ~/.dagster and quiet (no telemetry)."""
    home = tmp_path_factory.mktemp("dagster_home")
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home))
        yield home


@pytest.fixture
def census_spec(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Return a function building the demo census spec (400 rows, k=3, l=2 on disease) under ``tmp_path``.

    Keyword arguments replace requirements (``l=None`` drops one); ``source`` replaces the source.
    """

    def build(*, name: str = "census", source: dict[str, Any] | None = None, **requirements: Any) -> dict[str, Any]:
        data = copy.deepcopy(yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8")))
        data["name"] = name
        data["source"] = source or {"generate": "census", "rows": 400, "seed": 0}
        merged = {"k": 3, "l": 2, "suppression_limit": 0.1, **requirements}
        data["requirements"] = {key: value for key, value in merged.items() if value is not None}
        data["sensitive_attributes"] = ["disease"]
        data["insensitive"] = ["occupation", "income"]  # every column has a role (issue 27)
        data["destination"] = {"duckdb": str(tmp_path / "release.duckdb"), "table": "census_release"}
        data["report"] = {"directory": str(tmp_path / "reports" / name)}
        data["workdir"] = str(tmp_path / "work")
        return data

    return build


@pytest.fixture
def run_graph() -> Callable[..., Any]:
    """Return a function materializing a release graph in process (``raise_on_error=False``)."""
    import dagster as dg

    def run(release: Any, resource: Any = None, *, selection: Sequence[str] | None = None) -> Any:
        return dg.materialize(
            [*release.assets, *release.asset_checks],
            resources=release.resources(resource),
            selection=[release.key(name) for name in selection] if selection is not None else None,
            raise_on_error=False,
        )

    return run


def materialized(result: Any) -> set[str]:
    """Names of the assets a run materialized."""
    return {event.asset_key.path[-1] for event in result.get_asset_materialization_events()}


def evaluations(result: Any) -> dict[str, Any]:
    """Asset check evaluations of a run, by check name."""
    return {evaluation.check_name: evaluation for evaluation in result.get_asset_check_evaluations()}


def started_steps(result: Any) -> set[str]:
    """Step keys that started."""
    return {event.step_key for event in result.all_events if event.event_type_value == "STEP_START"}


@pytest.fixture
def inspect_run() -> SimpleNamespace:
    """The run helpers in one namespace: ``materialized``, ``evaluations``, ``started_steps``."""
    return SimpleNamespace(materialized=materialized, evaluations=evaluations, started_steps=started_steps)
