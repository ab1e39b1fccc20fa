"""Outlets derived from the destination (Airflow's asset URI rules), the provider's hook/connection type/asset
URIs as Airflow's providers manager sees them, and OpenLineage of the publish task."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest
import yaml

pytest.importorskip("airflow")

from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckOperator,
    PublishOperator,
)
from privacy_plugins.integrations.airflow.assets import destination_uri
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.connections import connection_resolver

REPO = Path(__file__).resolve().parents[3]
PASSWORD = "Lin-9zK-secret"
HAS_OPENLINEAGE = importlib.util.find_spec("airflow.providers.openlineage") is not None


def _spec(tmp_path: Path, destination: dict[str, Any]) -> ReleaseSpec:
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8"))
    data["destination"] = {
        key: str(tmp_path / v) if key in ("duckdb", "parquet") else v for key, v in destination.items()
    }
    return ReleaseSpec.from_dict(data, base_dir=REPO / "specs")


def test_the_outlet_uri_follows_airflows_asset_uri_rules(tmp_path: Path) -> None:
    from airflow.sdk import Asset

    postgres = f"postgresql+psycopg://writer:{PASSWORD}@db.internal/mart"
    expected = {
        "duckdb": (
            {"duckdb": "out/r.duckdb", "table": "census"},
            f"duckdb://{tmp_path.resolve()}/out/r.duckdb/main/census",
        ),
        "parquet": ({"parquet": "pq", "table": "census"}, f"file://{tmp_path.resolve()}/pq/census.parquet"),
        "url": ({"url": postgres, "table": "census"}, "postgres://db.internal:5432/mart/public/census"),
        "conn_id": ({"conn_id": "mart", "table": "census"}, "postgres://db.internal:5432/mart/public/census"),
        "spark folder": ({"spark": str(tmp_path / "sp"), "table": "census"}, f"file://{tmp_path.resolve()}/sp"),
        "spark table": ({"spark": "db.census"}, None),
    }
    with connection_resolver(lambda conn_id: postgres):
        derived = {kind: destination_uri(_spec(tmp_path, dest)) for kind, (dest, _) in expected.items()}
    assert derived == {kind: uri for kind, (_, uri) in expected.items()}
    assert PASSWORD not in repr(derived) and "writer" not in repr(derived)
    for uri in filter(None, derived.values()):  # Airflow (with this provider's duckdb handler) keeps them as they are
        assert Asset(uri=uri).uri == uri
    with pytest.raises(ValueError, match="duckdb:///path/to/file.duckdb/schema/table"):
        Asset(uri="duckdb://host/r.duckdb")


def test_airflow_lists_the_hook_connection_type_and_asset_uris(capsys: pytest.CaptureFixture[str]) -> None:
    """``airflow providers get privacy-plugins --full`` (Airflow's CLI command, run in-process)."""
    from airflow.cli import cli_parser

    args = cli_parser.get_parser().parse_args(["providers", "get", "privacy-plugins", "--full", "-o", "json"])
    args.func(args)
    out = capsys.readouterr().out
    (provider,) = json.loads(out[out.index("[") :])
    assert provider["hooks"][0]["python-modules"] == ["privacy_plugins.integrations.airflow.hooks"]
    assert provider["connection-types"][0]["connection-type"] == "privacy_duckdb"
    assert [u["schemes"] for u in provider["asset-uris"]] == [["duckdb"]]


def test_a_privacy_duckdb_connection_opens_through_common_sql(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.common.sql.hooks.sql import DbApiHook

    from privacy_plugins.integrations.airflow.connections import airflow_resolver
    from privacy_plugins.integrations.airflow.hooks import PrivacyHook

    database = tmp_path / "mart.duckdb"
    monkeypatch.setenv("AIRFLOW_CONN_MART", json.dumps({"conn_type": "privacy_duckdb", "host": str(database)}))
    hook = PrivacyHook(privacy_conn_id="mart")
    assert isinstance(hook, DbApiHook)
    assert airflow_resolver("mart") == f"duckdb:///{database}"
    assert hook.get_first("SELECT 41 + 1") == (42,)  # common.sql's own query path over our engine


def _release_operators(spec_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    context = {"ti": Mock()}
    loaded = LoadOperator(task_id="load", spec_path=str(spec_path)).execute(context)  # type: ignore[arg-type]
    candidate = AnonymizeOperator(task_id="anonymize", spec_path=str(spec_path), loaded=loaded).execute(context)  # type: ignore[arg-type]
    check = PrivacyCheckOperator(task_id="check", spec_path=str(spec_path), candidate=candidate).execute(context)  # type: ignore[arg-type]
    return candidate, check


@pytest.fixture(scope="module")
def published(module_specs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo census published once by the operators to a Parquet folder, with Airflow's real outlet events."""
    from airflow.sdk import DAG
    from airflow.sdk.execution_time.context import OutletEventAccessors

    out = tmp_path_factory.mktemp("lineage_out")
    overrides = {"destination": {"duckdb": None, "parquet": str(out), "table": "census_v3"}}
    spec_path = module_specs["demo_census"]
    data = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    data["destination"] = overrides["destination"]
    parquet_spec = spec_path.with_name("lineage_census.yaml")
    parquet_spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    candidate, check = _release_operators(parquet_spec)
    with DAG("lineage_dag", schedule=None):
        publish = PublishOperator(task_id="publish", spec_path=str(parquet_spec), candidate=candidate, check=check)
    events = OutletEventAccessors()
    publication = publish.execute({"ti": Mock(), "outlet_events": events})  # type: ignore[arg-type]
    return {"publish": publish, "events": events, "publication": publication, "out": out}


def test_publish_adds_an_event_of_the_destinations_asset(published: dict[str, Any]) -> None:
    publish, events = published["publish"], published["events"]
    assert (
        publish.release_alias.name == "privacy-release/lineage_dag/publish" and publish.release_alias in publish.outlets
    )
    (event,) = events[publish.release_alias].asset_alias_events
    assert event.dest_asset_key.uri == f"file://{published['out'].resolve()}/census_v3.parquet"
    assert event.extra == published["publication"] and event.extra["numbers"]["rows"] > 0


@pytest.mark.skipif(not HAS_OPENLINEAGE, reason="Airflow's OpenLineage provider is not installed")
def test_openlineage_reports_datasets_schema_and_counts_only(published: dict[str, Any]) -> None:
    from openlineage.client.serde import Serde

    lineage = published["publish"].get_openlineage_facets_on_complete(Mock())
    ((output,), inputs) = lineage.outputs, lineage.inputs
    assert inputs == []  # the generated demo census has no dataset
    assert (output.namespace, output.name) == ("file", f"{published['out'].resolve()}/census_v3.parquet")
    numbers = published["publication"]["numbers"]
    columns = [field.name for field in output.facets["schema"].fields]
    assert columns and "person_id" not in columns
    assert output.outputFacets["outputStatistics"].rowCount == numbers["rows"]
    facet = json.loads(Serde.to_json(lineage.run_facets["privacyRelease"]))
    assert facet["numbers"]["rows"] == numbers["rows"] and facet["numbers"]["measured"] == numbers["measured"]
    assert facet["_schemaURL"].endswith("#PrivacyReleaseRunFacet")
    leaves = json.dumps(facet["numbers"])
    assert all(isinstance(v, (int, float, bool, type(None))) for v in _leaves(facet["numbers"])), leaves


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


@pytest.mark.skipif(not HAS_OPENLINEAGE, reason="Airflow's OpenLineage provider is not installed")
def test_openlineage_translates_a_duckdb_asset_through_this_providers_converter(tmp_path: Path) -> None:
    """The OpenLineage provider's asset translation (providers manager → our converter) names it as the facets do."""
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset
    from airflow.sdk import Asset

    from privacy_plugins.integrations._destination import dataset_name

    uri = destination_uri(_spec(tmp_path, {"duckdb": "out/r.duckdb", "table": "census"}))
    assert uri is not None
    dataset = translate_airflow_asset(Asset(uri=uri), Mock())
    assert dataset is not None
    assert (
        (dataset.namespace, dataset.name)
        == dataset_name(uri)
        == (f"duckdb://{tmp_path.resolve()}/out/r.duckdb", "main.census")
    )
