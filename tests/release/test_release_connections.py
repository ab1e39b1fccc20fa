"""Named connections (``conn_id``): resolved from ``AIRFLOW_CONN_<ID>`` outside Airflow; passwords never leak."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.demo import generate_census
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.connections import (
    ConnectionFields,
    connection_resolver,
    env_variable,
    from_environment,
    resolve_url,
)
from tests.release.release_fixtures import demo_spec_dict

PASSWORD = "pw-Zq81+/x@y"  # characters that must be URL-quoted


def test_env_uri_resolves_to_a_sqlalchemy_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_WAREHOUSE", "postgres://ann:pw-Zq81%2B%2Fx%40y@db.Example.org:5433/people")
    from sqlalchemy.engine import make_url

    url = make_url(from_environment("warehouse"))
    assert (url.drivername, url.username, url.password, url.host, url.port, url.database) == (
        "postgresql",
        "ann",
        PASSWORD,
        "db.Example.org",
        5433,
        "people",
    )


def test_env_json_and_sqlite_forms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    database = tmp_path / "a.db"
    monkeypatch.setenv("AIRFLOW_CONN_LITE_HOST", f"sqlite://{str(database).replace('/', '%2F')}")
    monkeypatch.setenv("AIRFLOW_CONN_LITE_PATH", f"sqlite:///{database}")
    monkeypatch.setenv(
        "AIRFLOW_CONN_JSONDB",
        json.dumps({"conn_type": "postgres", "host": "h", "login": "u", "password": PASSWORD, "schema": "d"}),
    )
    assert from_environment("lite_host") == f"sqlite:///{database}"
    assert from_environment("lite_path") == f"sqlite:///{database}"
    assert "postgresql://u:" in from_environment("jsondb")


@settings(max_examples=40, deadline=None)
@given(password=st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20))
def test_any_password_round_trips_and_never_shows_in_repr(password: str) -> None:
    from sqlalchemy.engine import make_url

    from privacy_plugins.release.connections import sqlalchemy_url

    secret = "zq9" + password
    fields = ConnectionFields(conn_type="postgres", host="h", login="u", password=secret, schema="d")
    assert make_url(sqlalchemy_url("x", fields)).password == secret
    assert "zq9" not in repr(fields) and "password" not in repr(fields)


def test_undefined_connection_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_NOWHERE", raising=False)
    with pytest.raises(
        ConfigurationError, match=r"source\.conn_id: connection 'nowhere' is not defined.*AIRFLOW_CONN_NOWHERE"
    ):
        resolve_url("nowhere", setting="source.conn_id")
    with pytest.raises(ConfigurationError, match="connection id"):
        resolve_url("bad id!", setting="source.conn_id")


def test_unknown_connection_type_names_the_connection_not_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_FTP", f"ftp://u:{PASSWORD.replace('@', '%40')}@host")
    with pytest.raises(ConfigurationError) as info:
        resolve_url("ftp", setting="destination.conn_id")
    assert "'ftp'" in str(info.value) and "pw-Zq81" not in str(info.value)


def test_a_resolver_plugged_in_by_an_orchestrator_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_W", "sqlite:////env.db")
    with connection_resolver(lambda conn_id: f"sqlite:////{conn_id}-from-orchestrator.db"):
        assert resolve_url("w", setting="x") == "sqlite:////w-from-orchestrator.db"
    assert resolve_url("w", setting="x") == "sqlite:////env.db"


def _people_db(path: Path, rows: int) -> None:
    frame = generate_census(rows, seed=3)
    with sqlite3.connect(path) as connection:
        frame.to_sql("people", connection, index=False)


def test_release_reads_and_publishes_through_connections_without_leaking(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Source and destination by conn_id; rows in = published + suppressed; no password in any output."""
    _people_db(tmp_path / "src.db", 1_500)
    quoted = PASSWORD.replace("@", "%40").replace("/", "%2F").replace("+", "%2B")
    monkeypatch.setenv(
        env_variable("warehouse"), f"sqlite://ann:{quoted}@{str(tmp_path / 'src.db').replace('/', '%2F')}"
    )
    monkeypatch.setenv(env_variable("mart"), f"sqlite://bob:{quoted}@{str(tmp_path / 'out.db').replace('/', '%2F')}")
    data = demo_spec_dict(tmp_path, source={"conn_id": "warehouse", "table": "people"})
    data["destination"] = {"conn_id": "mart", "table": "census_release"}
    spec = ReleaseSpec.from_dict(data)
    assert spec.destination.describe() == "conn:mart#census_release"
    caplog.set_level("DEBUG")
    result = run_release(spec)
    assert result.published is not None and result.candidate is not None
    assert result.loaded.rows == 1_500 == result.candidate.rows_out + result.candidate.suppressed
    assert result.published.destination == "conn:mart#census_release"
    published = read_published(spec.destination)
    assert published is not None and len(published) == result.published.rows
    assert "person_id" not in published.columns
    outputs = [json.dumps(result.published.to_dict()), repr(spec), caplog.text]
    outputs += [p.read_text(encoding="utf-8") for p in spec.report.directory.rglob("*") if p.is_file()]
    assert not [text[:80] for text in outputs if "pw-Zq81" in text]


def test_a_missing_connection_fails_before_anything_is_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_GONE", raising=False)
    data = demo_spec_dict(tmp_path)
    data["destination"] = {"conn_id": "gone", "table": "census_release"}
    with pytest.raises(ConfigurationError, match=r"destination\.conn_id: connection 'gone' is not defined"):
        run_release(ReleaseSpec.from_dict(data))
    assert not (tmp_path / "reports").exists() and not (tmp_path / "work").exists()


def test_a_missing_driver_names_the_connection_not_the_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PG", f"oracle://u:{PASSWORD.replace('@', '%40')}@localhost:1/db")
    data = demo_spec_dict(tmp_path, source={"conn_id": "pg", "table": "people"})
    with pytest.raises(ConfigurationError) as info:
        run_release(ReleaseSpec.from_dict(data))
    assert "'pg'" in str(info.value) and "pw-Zq81" not in str(info.value)


def test_spec_refuses_two_kinds_of_source(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"exactly one of path, url, conn_id, duckdb, spark or generate"):
        ReleaseSpec.from_dict(demo_spec_dict(tmp_path, source={"conn_id": "a", "url": "sqlite://", "table": "t"}))
    with pytest.raises(ConfigurationError, match="a conn_id source needs exactly one of table or query"):
        ReleaseSpec.from_dict(demo_spec_dict(tmp_path, source={"conn_id": "a"}))
