"""Partitioned releases and their shared release history (issue 29 item 9, issue 26 item 5).

A daily-partitioned release of a DuckDB table: each partition's release reads only its
day's rows (``{partition_start}``/``{partition_end}`` in the source query), publishes its own
table and is checked against the history of every partition published before it. The rows
are built so that the second day, alone, meets k = 2 and distinct 2-diversity — and, with the
first day's release, either keeps every target's diseases at two (it publishes) or leaves a
target of age 21 with one disease (flu) whatever the generalization (its diseases are
{flu, cancer} only): that partition is blocked and publishes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

dg = pytest.importorskip("dagster")

import duckdb  # noqa: E402
import pandas as pd  # noqa: E402

from privacy_plugins.errors import ConfigurationError  # noqa: E402
from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, read_published  # noqa: E402

DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-04")
FIRST = [(20, "flu"), (21, "cold"), (25, "flu"), (26, "cancer")]
SAFE_SECOND = [(21, "flu"), (23, "cold"), (26, "cancer"), (28, "flu")]
DISCLOSING_SECOND = [(21, "flu"), (23, "cancer"), (26, "cancer"), (28, "flu")]


def _spec(tmp_path: Path, second: list[tuple[int, str]], **changes: Any) -> ReleaseSpec:
    rows = [("2026-01-01 08:00:00", *r) for r in FIRST] + [("2026-01-02 09:30:00", *r) for r in second]
    frame = pd.DataFrame(rows, columns=["day", "age", "disease"]).astype({"day": "datetime64[us]"})
    with duckdb.connect(str(tmp_path / "visits.duckdb")) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE OR REPLACE TABLE visits AS SELECT * FROM frame")
    data: dict[str, Any] = {
        "name": "visits",
        "source": {
            "duckdb": str(tmp_path / "visits.duckdb"),
            "query": "SELECT age, disease FROM visits WHERE day >= {partition_start} AND day < {partition_end}",
        },
        "quasi_identifiers": ["age"],
        "sensitive_attributes": ["disease"],  # every column of the query has a role
        "hierarchies": {"age": {"interval": {"widths": [5, 10]}}},
        "requirements": {"k": 2, "l": 2, "suppression_limit": 0},
        "algorithm": {"name": "optimal"},
        "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "visits_release"},
        "report": {"directory": str(tmp_path / "reports")},
        "history": {"name": "daily_visits"},
        **changes,
    }
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def _materialize(release: Any, day: str, **options: Any) -> Any:
    return dg.materialize(
        [*release.assets, *release.asset_checks],
        resources=release.resources(),
        partition_key=day,
        raise_on_error=False,
        **options,
    )


def _day_table(spec: ReleaseSpec, day: str) -> Any:
    import dataclasses

    return read_published(dataclasses.replace(spec.destination, table=f"visits_release_{day.replace('-', '_')}"))


@pytest.mark.parametrize("disclosing", [False, True], ids=["second-day-passes", "second-day-discloses"])
def test_the_second_partition_is_checked_against_the_first_partitions_release(
    tmp_path: Path, inspect_run: SimpleNamespace, disclosing: bool
) -> None:
    spec = _spec(tmp_path, DISCLOSING_SECOND if disclosing else SAFE_SECOND)
    release = build_release_assets(spec, partitions_def=DAYS)
    first = _materialize(release, "2026-01-01")
    assert first.success
    published = _day_table(spec, "2026-01-01")
    assert published is not None and len(published) == len(FIRST)  # the first day's rows only, in its own table

    second = _materialize(release, "2026-01-02")
    composition = inspect_run.evaluations(second)["composition"]
    assert "against 1 earlier release" in composition.description  # the first day's release is in the history
    if disclosing:
        assert not second.success and not composition.passed
        assert composition.severity == dg.AssetCheckSeverity.ERROR
        assert "published" not in inspect_run.materialized(second)
        assert _day_table(spec, "2026-01-02") is None  # blocked: nothing published for the second day
    else:
        assert second.success and composition.passed
        assert len(_day_table(spec, "2026-01-02")) == len(SAFE_SECOND)
    assert len(_day_table(spec, "2026-01-01")) == len(FIRST)  # the first day's release is untouched
    monitor = dg.Definitions.merge(release.definitions(), release.monitoring()).resolve_job_def("visits_monitor")
    (evaluation,) = monitor.execute_in_process(raise_on_error=False).get_asset_check_evaluations()
    published_days = 1 if disclosing else 2
    assert evaluation.passed and evaluation.metadata["partitions measured"].value == published_days


def test_a_partition_key_names_its_own_extract_file(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, inspect_run: SimpleNamespace
) -> None:
    """Static partitions: ``{partition_key}`` in ``source.path`` picks the partition's file."""
    from privacy_plugins import generate_census

    people = generate_census(400, seed=0)
    (tmp_path / "extracts").mkdir()
    people.iloc[:300].to_parquet(tmp_path / "extracts" / "north.parquet")
    data = census_spec(source={"path": str(tmp_path / "extracts" / "{partition_key}.parquet")})
    release = build_release_assets(
        ReleaseSpec.from_dict(data, base_dir=tmp_path), partitions_def=dg.StaticPartitionsDefinition(["north", "south"])
    )
    assert _materialize(release, "north").success
    spec = ReleaseSpec.from_dict(data, base_dir=tmp_path)
    import dataclasses

    north = read_published(dataclasses.replace(spec.destination, table="census_release_north"))
    assert north is not None and 0 < len(north) <= 300
    missing = _materialize(release, "south")  # no extract for that partition: the load step says so
    assert not missing.success and inspect_run.materialized(missing) == set()


def test_a_partitioned_release_whose_source_cannot_name_the_partition_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path, SAFE_SECOND, source={"duckdb": str(tmp_path / "visits.duckdb"), "table": "visits"})
    with pytest.raises(ConfigurationError, match="does not name the partition"):
        build_release_assets(spec, partitions_def=DAYS)
    windowed = _spec(tmp_path, SAFE_SECOND)
    with pytest.raises(ConfigurationError, match="only time partitions have"):
        build_release_assets(windowed, partitions_def=dg.StaticPartitionsDefinition(["a"]))


def test_two_static_partition_keys_naming_one_table_are_refused_when_the_graph_is_defined(tmp_path: Path) -> None:
    spec = _spec(tmp_path, SAFE_SECOND, source={"duckdb": str(tmp_path / "visits.duckdb"), "query": "{partition_key}"})
    with pytest.raises(ConfigurationError, match=r"partitions '2026-01' and '2026_01' would both publish to table"):
        build_release_assets(spec, partitions_def=dg.StaticPartitionsDefinition(["2026-01", "north", "2026_01"]))
    build_release_assets(spec, partitions_def=dg.StaticPartitionsDefinition(["2026-01", "2026-02"]))  # distinct


def test_a_dynamic_partition_naming_another_partitions_table_publishes_nothing(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, inspect_run: SimpleNamespace
) -> None:
    """Dynamic keys are known only to the instance: the step refuses before reading, the other table stays."""
    from privacy_plugins import generate_census

    (tmp_path / "extracts").mkdir()
    for key in ("north-1", "north_1"):
        generate_census(300, seed=0).to_parquet(tmp_path / "extracts" / f"{key}.parquet")
    data = census_spec(source={"path": str(tmp_path / "extracts" / "{partition_key}.parquet")})
    regions = dg.DynamicPartitionsDefinition(name="regions")
    release = build_release_assets(ReleaseSpec.from_dict(data, base_dir=tmp_path), partitions_def=regions)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("regions", ["north-1"])
        assert _materialize(release, "north-1", instance=instance).success
        instance.add_dynamic_partitions("regions", ["north_1"])
        second = _materialize(release, "north_1", instance=instance)
    assert not second.success and inspect_run.materialized(second) == set()
    failure = next(e for e in second.all_events if e.is_step_failure)
    assert "would both publish to table 'census_release_north_1'" in str(failure.event_specific_data)


@pytest.mark.slow
def test_the_monthly_demo_publishes_two_months_the_second_checked_against_the_first(tmp_path: Path) -> None:
    """``dagster_defs/monthly.py`` as shipped (a copy writing under ``tmp_path``): two months through ``dg``'s job."""
    import importlib.util
    import shutil

    repo = Path(__file__).resolve().parents[3]
    (tmp_path / "dagster_defs").mkdir()
    (tmp_path / "specs").mkdir()
    shutil.copy(repo / "dagster_defs" / "monthly.py", tmp_path / "dagster_defs" / "monthly.py")
    shutil.copy(repo / "specs" / "demo_census_monthly.yaml", tmp_path / "specs" / "demo_census_monthly.yaml")
    loader = importlib.util.spec_from_file_location("monthly_demo", tmp_path / "dagster_defs" / "monthly.py")
    assert loader is not None and loader.loader is not None
    demo = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(demo)
    demo.PEOPLE = 1_500  # a smaller register, the same code
    graph = demo.defs.resolve_asset_graph()
    raw = dg.AssetKey(["demo_census_monthly", "raw"])
    assert dg.AssetKey("census_extract") in graph.get(raw).parent_keys
    assert graph.get(raw).partitions_def == demo.MONTHS
    monitor = dg.AssetCheckKey(dg.AssetKey(["demo_census_monthly", "published"]), "still_meets_requirements")
    assert demo.defs.resolve_assets_def(monitor.asset_key).get_spec_for_check_key  # (the check exists)
    job = demo.defs.resolve_implicit_global_asset_job_def()
    verdicts = []
    for month in ("2026-01-01", "2026-02-01"):
        result = job.execute_in_process(partition_key=month, raise_on_error=False)
        composition = {e.check_name: e for e in result.get_asset_check_evaluations()}["composition"]
        published = "published" in {e.asset_key.path[-1] for e in result.get_asset_materialization_events()}
        assert published == composition.passed == result.success, month  # published exactly when it passed
        verdicts.append(composition)
    assert verdicts[0].passed and "against 0 earlier releases" in verdicts[0].description
    assert "against 1 earlier release" in verdicts[1].description  # January's release is in February's history
    with duckdb.connect(str(tmp_path / "release_output" / "monthly.duckdb"), read_only=True) as connection:
        tables = {name for (name,) in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"census_monthly_2026_01_01", "pp_history_census_monthly"} <= tables
    assert ("census_monthly_2026_02_01" in tables) == verdicts[1].passed  # (this register: 2 incomes disclosed)
