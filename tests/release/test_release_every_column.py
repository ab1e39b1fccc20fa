"""Issue 27 in the release: every source column has a role, keyed pseudonyms, the identifier gate, no leaks."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.cli import main
from privacy_plugins.core.pseudonyms import TOKEN_LENGTH
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, run_release
from privacy_plugins.release.steps import load_step
from privacy_plugins.release.workarea import remove_run_dir

KEY = "a-test-key-that-is-long-enough-0123456789"
KEY_ENV = "PRIVACY_PLUGINS_PSEUDONYM_KEY"


def _people(rows: int = 200) -> pd.DataFrame:
    """People with a per-row id, an e-mail, an age and a sex: small and fast to release."""
    index = pd.RangeIndex(rows)
    return pd.DataFrame(
        {
            "patient_id": [f"P{i:06d}" for i in index],
            "email": [f"person{i}@example.org" for i in index],
            "age": 20 + index % 50,
            "sex": ["Female", "Male"] * (rows // 2),
            "disease": ["flu", "cold", "asthma", "none"] * (rows // 4),
        }
    )


def _spec(tmp_path: Path, frame: pd.DataFrame, **overrides: object) -> dict:
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    data: dict = {
        "name": "people",
        "source": {"path": str(source)},
        "identifiers": ["email"],
        "quasi_identifiers": ["age", "sex"],
        "sensitive_attributes": ["disease"],
        "hierarchies": {"age": {"interval": {"widths": [10, 20, 40]}}, "sex": {"taxonomy": {"*": ["Female", "Male"]}}},
        "requirements": {"k": 5},
        "destination": {"duckdb": str(tmp_path / "out.duckdb"), "table": "people_release"},
        "report": {"directory": str(tmp_path / "reports")},
    }
    data.update(overrides)
    return data


def _published(tmp_path: Path) -> pd.DataFrame:
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT * FROM people_release").df()


# -- every column has a role -------------------------------------------------------------------------------


def test_a_column_the_spec_does_not_name_stops_the_release_before_anything_is_written(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(_spec(tmp_path, _people()))  # patient_id has no role
    with pytest.raises(ConfigurationError, match=r"\['patient_id'\] have no role.*insensitive.*unlisted_columns: drop"):
        load_step(spec)
    assert not (tmp_path / "out.duckdb").exists() and not (tmp_path / "reports").exists()


def test_unlisted_columns_drop_drops_them_and_reports_them_by_name(tmp_path: Path) -> None:
    spec = ReleaseSpec.from_dict(_spec(tmp_path, _people(), unlisted_columns="drop"))
    result = run_release(spec)
    assert result.passed
    assert "patient_id" not in _published(tmp_path).columns
    report = json.loads(spec.report.release_json.read_text())
    assert report["loaded"]["column_roles"] == {
        "patient_id": "unlisted_dropped",
        "email": "identifier",
        "age": "quasi_identifier",
        "sex": "quasi_identifier",
        "disease": "sensitive",
    }
    from privacy_plugins.release.release_report import release_html_path

    page = release_html_path(spec).read_text(encoding="utf-8")  # the page for people names the dropped columns too
    assert "<td>patient_id</td><td>unlisted_dropped</td>" in page and "<td>email</td><td>identifier</td>" in page


def test_the_cli_release_exits_2_naming_the_unlisted_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec(tmp_path, _people())))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'patient_id'" in err and "Traceback" not in err


def test_the_in_database_path_refuses_from_the_schema_without_reading_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "source.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", _people())
        connection.sql("CREATE TABLE people AS SELECT * FROM frame")

    def no_rows(*args: object, **kwargs: object) -> None:
        raise AssertionError("a row was read")

    for method in ("group_counts", "batches", "to_pandas", "count"):
        monkeypatch.setattr(SqlTable, method, no_rows)
    data = _spec(tmp_path, _people(), source={"duckdb": str(database), "table": "people"})
    spec = ReleaseSpec.from_dict(data | {"algorithm": {"name": "optimal"}})
    with pytest.raises(ConfigurationError, match=r"\['patient_id'\] have no role"):
        load_step(spec)


def test_every_shipped_spec_names_every_column_of_its_source(tmp_path: Path) -> None:
    for shipped in sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml")):
        data = yaml.safe_load(shipped.read_text())
        data["destination"] = {"duckdb": str(tmp_path / "x.duckdb"), "table": "t"}
        data["report"] = {"directory": str(tmp_path / "r")}
        if "generate" not in data["source"]:
            # The partitioned/interval examples read extracts their DAG or asset writes first: samples of
            # the generated census (dags/privacy_release_intervals.py's visits add visit_day, which the
            # spec's query leaves out), so the generated census has exactly their columns.
            data["source"] = {"generate": "census", "seed": 0}
        data["source"]["rows"] = 300
        spec = ReleaseSpec.from_dict(data)
        loaded = load_step(spec)
        assert "unlisted_dropped" not in loaded.column_roles.values(), shipped.name


# -- keyed pseudonyms ----------------------------------------------------------------------------------------


def _pseudonymized(tmp_path: Path, scope: str, **overrides: object) -> dict:
    return _spec(
        tmp_path,
        _people(),
        pseudonymize={"columns": ["patient_id"], "key": {"env": KEY_ENV}, "scope": scope},
        **overrides,
    )


def test_pseudonyms_replace_the_column_in_the_release_and_no_raw_value_or_key_appears_anywhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_pseudonymized(tmp_path, "release")))
    with caplog.at_level(logging.DEBUG):
        assert main(["release", str(path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    published = _published(tmp_path)
    tokens = published["patient_id"]
    assert tokens.str.fullmatch(f"[a-z2-7]{{{TOKEN_LENGTH}}}").all() and tokens.is_unique
    people = _people()
    raw = set(people["patient_id"]) | set(people["email"])
    assert not raw & set(published.astype(str).to_numpy().ravel())
    texts = [out, err, caplog.text, path.read_text()]
    texts += [p.read_text(errors="replace") for p in (tmp_path / "reports").rglob("*") if p.is_file()]
    for text in texts:
        assert KEY not in text
        assert not any(value in text for value in raw)
    report = json.loads(out)
    assert report["loaded"]["column_roles"]["patient_id"] == "pseudonym"


def _release_tokens(tmp_path: Path, scope: str, key: str, monkeypatch: pytest.MonkeyPatch) -> pd.Series:
    """The tokens one release run computes (its load step's working file: nothing later changes them)."""
    monkeypatch.setenv(KEY_ENV, key)
    spec = ReleaseSpec.from_dict(_pseudonymized(tmp_path, scope))
    loaded = load_step(spec)
    try:
        return pd.read_parquet(loaded.path)["patient_id"]
    finally:
        remove_run_dir(spec, loaded.run_id)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=st.text(alphabet="abcdef0123456789", min_size=1, max_size=8))
def test_tokens_in_the_release_are_stable_under_one_key_and_scope_and_differ_across_keys_and_salts(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    tmp_path = tmp_path_factory.mktemp("tokens")
    key, other = KEY + suffix, KEY + suffix + "x"
    stable = set(_release_tokens(tmp_path, "stable", key, monkeypatch))
    assert stable == set(_release_tokens(tmp_path, "stable", key, monkeypatch))  # the same in every release
    assert not stable & set(_release_tokens(tmp_path, "stable", other, monkeypatch))  # another key: unrelated
    first = set(_release_tokens(tmp_path, "release", key, monkeypatch))
    assert not first & set(_release_tokens(tmp_path, "release", key, monkeypatch))  # a fresh salt per release
    assert not first & stable


@pytest.mark.parametrize(
    ("key", "env", "message"),
    [
        ({"env": KEY_ENV}, None, f"environment variable {KEY_ENV}\\) is not set"),
        ({"env": KEY_ENV}, "k3y!!", "too short: 5 bytes, at least 32"),
        ({"env": KEY_ENV}, "", "is not set"),
        ({"conn_id": "pseudonym_key"}, None, "connection 'pseudonym_key'.*is not defined"),
    ],
)
def test_a_missing_or_short_key_exits_2_before_any_work_and_never_shows_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: dict,
    env: str | None,
    message: str,
) -> None:
    if env is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, env)
    monkeypatch.delenv("AIRFLOW_CONN_PSEUDONYM_KEY", raising=False)
    data = _pseudonymized(tmp_path, "release")
    data["pseudonymize"]["key"] = key
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and pytest.importorskip("re").search(message, err), err
    assert not (tmp_path / "out.duckdb").exists() and not (tmp_path / "reports").exists()
    if env:
        assert env not in err


def test_a_pseudonym_column_missing_from_the_source_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    data = _pseudonymized(tmp_path, "stable")
    data["pseudonymize"]["columns"] = ["patient_idd"]
    with pytest.raises(ConfigurationError, match=r"pseudonymize.columns not found in table: \['patient_idd'\]"):
        load_step(ReleaseSpec.from_dict(data))


def test_a_key_from_a_connection_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PSEUDONYM_KEY", f"generic://:{KEY}@")
    data = _pseudonymized(tmp_path, "stable")
    data["pseudonymize"]["key"] = {"conn_id": "pseudonym_key"}
    spec = ReleaseSpec.from_dict(data)
    loaded = load_step(spec)
    from_connection = set(pd.read_parquet(loaded.path)["patient_id"])
    remove_run_dir(spec, loaded.run_id)
    assert from_connection == set(_release_tokens(tmp_path, "stable", KEY, monkeypatch))


@pytest.mark.parametrize(
    ("pseudonymize", "message"),
    [
        ({"columns": ["patient_id"], "key": KEY}, "the key itself never goes into a spec file"),
        ({"columns": ["patient_id"], "key": {"value": KEY}}, "the key itself never goes into a spec file"),
        ({"columns": ["patient_id"], "scope": "forever"}, "scope must be 'release' or 'stable'"),
        ({"columns": ["age"]}, r"\['age'\] already have another role"),
        ({"columns": "patient_id"}, "must be a list of column names"),
    ],
)
def test_bad_pseudonymize_sections_are_refused_without_echoing_a_key(
    tmp_path: Path, pseudonymize: dict, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        ReleaseSpec.from_dict(_spec(tmp_path, _people(), pseudonymize=pseudonymize))
    assert KEY not in str(caught.value)


# -- the identifier gate -------------------------------------------------------------------------------------


def test_an_insensitive_column_that_holds_e_mail_addresses_exits_2_naming_column_and_category(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _spec(tmp_path, _people(), identifiers=["patient_id"], insensitive=["email"])
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "'email' (email" in err and "acknowledged_identifiers" in err and "@example.org" not in err
    assert not (tmp_path / "out.duckdb").exists()


def test_an_acknowledged_identifier_is_published_and_reported_as_flagged(tmp_path: Path) -> None:
    data = _spec(
        tmp_path, _people(), identifiers=["patient_id"], insensitive=["email"], acknowledged_identifiers=["email"]
    )
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed and "email" in _published(tmp_path).columns
    flagged = {f["column"]: f for f in result.loaded.flagged_identifiers}
    assert flagged["email"]["category"] == "email" and flagged["email"]["role"] == "insensitive"


def test_a_flagged_quasi_identifier_left_at_level_0_fails_the_check(tmp_path: Path) -> None:
    frame = _people().assign(zip=lambda t: [f"{47000 + i % 3:05d}" for i in range(len(t))])
    data = _spec(
        tmp_path,
        frame,
        identifiers=["patient_id", "email"],
        quasi_identifiers=["age", "zip"],
        insensitive=["sex"],
        hierarchies={"age": {"interval": {"widths": [10, 20, 40]}}, "zip": {"masking": {}}},
    )
    result = run_release(ReleaseSpec.from_dict(data))
    assert not result.passed and result.candidate is not None and result.candidate.levels["zip"] == 0
    failed = [c for c in result.check.checks if not c.passed] if result.check else []
    assert [c.name for c in failed] == ["no_direct_identifiers"] and "zip (zip_code)" in failed[0].detail
    assert not (tmp_path / "out.duckdb").exists()
    acknowledged = run_release(ReleaseSpec.from_dict(data | {"acknowledged_identifiers": ["zip"]}))
    assert acknowledged.passed
