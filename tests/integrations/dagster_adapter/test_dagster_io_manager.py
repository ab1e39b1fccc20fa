"""The release reader: downstream assets load ``published`` (DataFrame or DuckDB relation); the candidate by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

dg = pytest.importorskip("dagster")
duckdb = pytest.importorskip("duckdb")

import pandas as pd  # noqa: E402

from privacy_plugins.core import k_anonymity  # noqa: E402
from privacy_plugins.integrations.dagster import build_release_assets  # noqa: E402
from privacy_plugins.release import ReleaseSpec, read_published  # noqa: E402


def _downstream(release: Any) -> list[Any]:
    """Three downstream assets, defined as a user would (no __future__ annotations in their module matters here)."""

    @dg.asset(ins={"people": release.published_in()})
    def as_frame(people: pd.DataFrame) -> dg.MaterializeResult[None]:
        return dg.MaterializeResult(metadata={"rows": len(people), "columns": ",".join(map(str, people.columns))})

    @dg.asset(ins={"people": release.published_in()})
    def as_relation(people: duckdb.DuckDBPyRelation) -> dg.MaterializeResult[None]:
        ((count,),) = people.aggregate("count(*)").fetchall()
        # queried in place: the relation is over the destination's file (a read-only connection), not a copy
        ((access,),) = people.query("people", "SELECT current_setting('access_mode')").fetchall()
        return dg.MaterializeResult(metadata={"rows": int(count), "type": type(people).__name__, "access": access})

    @dg.asset(ins={"candidate": release.candidate_in()})
    def reviewer(candidate: pd.DataFrame) -> dg.MaterializeResult[None]:
        return dg.MaterializeResult(metadata={"rows": len(candidate)})

    return [as_frame, as_relation, reviewer]


def _metadata(result: Any, key: str) -> dict[str, Any]:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey(key)]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def _materialize(release: Any, extra: list[Any], readers: list[str]) -> Any:
    return dg.materialize(
        [*release.assets, *release.asset_checks, *extra],
        resources=release.resources(candidate_readers=readers),
        raise_on_error=False,
    )


def test_downstream_assets_load_published_and_the_named_reader_loads_the_candidate(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    spec = ReleaseSpec.from_dict(census_spec())
    release = build_release_assets(spec)
    result = _materialize(release, _downstream(release), readers=["reviewer"])
    assert result.success
    published = read_published(spec.destination)
    assert published is not None
    assert (
        k_anonymity(published, quasi_identifiers=list(spec.quasi_identifiers)) >= 3
    )  # what downstream got meets the release's k
    frame = _metadata(result, "as_frame")
    assert frame["rows"] == len(published) and "person_id" not in frame["columns"]
    assert _metadata(result, "as_relation") == {
        "rows": len(published),
        "type": "DuckDBPyRelation",
        "access": "read_only",
    }
    candidate = pd.read_parquet(next((tmp_path / "work").rglob("candidate.parquet")))
    assert _metadata(result, "reviewer") == {"rows": len(candidate)}


def test_an_asset_not_named_in_candidate_readers_cannot_load_the_candidate(
    census_spec: Callable[..., dict[str, Any]],
) -> None:
    spec = ReleaseSpec.from_dict(census_spec())
    release = build_release_assets(spec)
    result = _materialize(release, _downstream(release), readers=[])
    assert not result.success
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["reviewer"]
    assert "may not read census/anonymized_candidate" in str(failures[0].event_specific_data.error.message)
    assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} >= {
        "as_frame",
        "as_relation",
        "census/published",
    }


def test_the_reader_reaches_a_conn_id_destination_through_an_env_var(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's ``connection_url`` resource field, set with ``dg.EnvVar``: no ``AIRFLOW_CONN_*`` needed."""
    from privacy_plugins.release import publish_table
    from privacy_plugins.release.connections import connection_resolver

    spec = ReleaseSpec.from_dict({**census_spec(), "destination": {"conn_id": "mart", "table": "census_release"}})
    release = build_release_assets(spec)
    mart = f"sqlite:///{tmp_path / 'mart.db'}"
    with connection_resolver(lambda conn_id: mart):
        publish_table(pd.DataFrame({"age": ["[20-39]", "[40-59]"], "disease": ["flu", "none"]}), spec.destination)
    monkeypatch.delenv("AIRFLOW_CONN_MART", raising=False)
    monkeypatch.setenv("PRIVACY_MART_URL", mart)

    @dg.asset(ins={"people": release.published_in()})
    def mart_rows(people: pd.DataFrame) -> dg.MaterializeResult[None]:
        return dg.MaterializeResult(metadata={"rows": len(people)})

    def run(reader: Any) -> Any:
        resources = {**release.resources(), release.reader_key: reader}
        return dg.materialize(
            [*release.assets, mart_rows], selection=[mart_rows.key], resources=resources, raise_on_error=False
        )

    result = run(release.reader(connection_url=dg.EnvVar("PRIVACY_MART_URL")))
    assert result.success and _metadata(result, "mart_rows") == {"rows": 2}
    assert mart not in repr(result.dagster_run.run_config)  # config holds the variable's name only
    assert not run(release.reader()).success  # without it: AIRFLOW_CONN_MART is not set


def test_the_reader_reads_where_the_runs_configured_resource_says(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    """The reader requires the graph's resource by key: run config given to it reaches the reader too."""
    from privacy_plugins.release import publish_table
    from privacy_plugins.release.spec import DestinationSpec

    spec = ReleaseSpec.from_dict(census_spec())
    release = build_release_assets(spec)
    other = tmp_path / "other.duckdb"
    publish_table(pd.DataFrame({"age": ["a", "b", "c"]}), DestinationSpec(table=spec.destination.table, duckdb=other))

    @dg.asset(ins={"people": release.published_in()})
    def other_rows(people: pd.DataFrame) -> dg.MaterializeResult[None]:
        return dg.MaterializeResult(metadata={"rows": len(people)})

    result = dg.materialize(
        [*release.assets, other_rows],
        selection=[other_rows.key],
        resources=release.resources(),
        run_config={"resources": {release.resource_key: {"config": {"destination_duckdb": str(other)}}}},
    )
    assert _metadata(result, "other_rows") == {"rows": 3}


def test_the_reader_refuses_to_write(census_spec: Callable[..., dict[str, Any]]) -> None:
    release = build_release_assets(ReleaseSpec.from_dict(census_spec()))

    @dg.asset(io_manager_key=release.reader_key)
    def sneaky() -> pd.DataFrame:
        return pd.DataFrame({"x": [1]})

    result = dg.materialize(
        [sneaky],
        resources=release.resources(),
        raise_on_error=False,
    )
    assert not result.success


def _requested(evaluation: Any) -> set[Any]:
    """The assets and checks an automation evaluation requested."""
    return {result.key for result in evaluation.results if result.true_subset.size}


def test_the_monitoring_check_re_measures_published_on_each_cron_tick(
    census_spec: Callable[..., dict[str, Any]],
) -> None:
    """An ``AutomationCondition`` on the check (issue 29 item 9), not a job on a schedule."""
    import datetime

    from privacy_plugins.release import publish_table

    spec = ReleaseSpec.from_dict(census_spec())
    release = build_release_assets(spec)
    defs = dg.Definitions.merge(release.definitions(), release.monitoring(cron_schedule="0 6 * * *"))
    assert list(defs.schedules or []) == []
    check_key = dg.AssetCheckKey(release.key("published"), "still_meets_requirements")
    with dg.instance_for_test() as instance:
        before = datetime.datetime(2026, 3, 2, 5, 0, tzinfo=datetime.UTC)
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance, evaluation_time=before)
        assert _requested(first) == set()  # no tick passed yet
        after = before + datetime.timedelta(hours=1, minutes=1)  # 06:01: the 06:00 tick passed
        ticked = dg.evaluate_automation_conditions(
            defs=defs, instance=instance, cursor=first.cursor, evaluation_time=after
        )
        assert _requested(ticked) == {check_key}  # only the check: nothing is re-published
    monitor = defs.resolve_job_def("census_monitor")
    assert not monitor.execute_in_process(raise_on_error=False).get_asset_check_evaluations()[0].passed  # nothing yet
    assert defs.resolve_implicit_global_asset_job_def().execute_in_process(raise_on_error=False).success
    (evaluation,) = monitor.execute_in_process().get_asset_check_evaluations()
    numbers = {k: v.value for k, v in evaluation.metadata.items()}
    published = read_published(spec.destination)
    assert evaluation.passed and published is not None and numbers["rows"] == len(published)
    assert numbers["measured k_anonymity"] >= numbers["target k_anonymity"] == 3
    publish_table(published.head(1), spec.destination)  # one row left: k = 1
    (evaluation,) = monitor.execute_in_process(raise_on_error=False).get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
