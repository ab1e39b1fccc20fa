"""The pseudonym key from a Dagster resource set with dg.EnvVar: right tokens, the key in no event or metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

pytest.importorskip("dagster")

import dagster as dg

from privacy_plugins import generate_census
from privacy_plugins.core.pseudonyms import PseudonymKey, pseudonymize
from privacy_plugins.integrations.dagster import PseudonymKeyResource, build_release_assets
from privacy_plugins.release import ReleaseSpec

KEY = "a-dagster-test-key-long-enough-0123456789"
VARIABLE = "PP_TEST_DAGSTER_PSEUDONYM_KEY"


def _release(census_spec: Any) -> Any:
    data = census_spec(name="keyed", l=None)
    data["source"]["rows"] = 200
    data["identifiers"] = []
    data["pseudonymize"] = {"columns": ["person_id"], "key": {"resource": "pseudonym_key"}, "scope": "stable"}
    return build_release_assets(ReleaseSpec.from_dict(data))


def _run(release: Any, key_resource: Any) -> Any:
    return dg.materialize(
        [*release.assets, *release.asset_checks],
        resources={**release.resources(), "pseudonym_key": key_resource},
        raise_on_error=False,
    )


def test_the_key_comes_from_the_resource_and_appears_in_no_event(
    census_spec: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, KEY)
    release = _release(census_spec)
    result = _run(release, PseudonymKeyResource(key=dg.EnvVar(VARIABLE)))
    assert result.success
    with duckdb.connect(str(tmp_path / "release.duckdb"), read_only=True) as connection:
        published = connection.execute("SELECT person_id FROM census_release").df()["person_id"]
    raw = generate_census(200, seed=0)["person_id"]
    expected = set(pseudonymize(raw, PseudonymKey(KEY.encode()), scope="stable"))
    assert set(published) <= expected and len(published) > 100  # tokens under the resource's key, none raw
    assert not set(raw.astype(str)) & set(published.astype(str))
    diagnosis = next(
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.asset_key.path[-1] == "privacy_diagnosis"
    )
    flagged = diagnosis.metadata["direct identifiers flagged"].value  # the diagnosis names flagged columns, counts only
    assert [(f["column"], f["category"], f["rows"]) for f in flagged] == [("zip", "zip_code", 200)]
    events = "\n".join(repr(event) for event in result.all_events)
    assert KEY not in events and VARIABLE not in events.replace(f"'{VARIABLE}'", "")  # only the variable's name, if any


def test_a_missing_or_short_key_fails_the_load_naming_the_resource_not_the_key(
    census_spec: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "short-key")
    result = _run(_release(census_spec), PseudonymKeyResource(key=dg.EnvVar(VARIABLE)))
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    text = failure.event_specific_data.error.to_string()  # the step error and its cause
    assert "Dagster resource 'pseudonym_key'" in text and "too short" in text and "short-key" not in text


def test_without_the_resource_the_release_assets_do_not_load(census_spec: Any) -> None:
    release = _release(census_spec)
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="pseudonym_key"):
        resources = release.resources()
        dg.Definitions(assets=release.assets, resources=resources).resolve_all_job_defs()
