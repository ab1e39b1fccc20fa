"""A server destination is probed before any work: unreachable, no schema or no right to create → exit 2.

The release says so naming ``destination``, writes nothing (no reports), and never
prints the password of the URL or connection.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.cli import main
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.locations import probe_database

SECRET = "s3cr3t-pw"
UNREACHABLE = f"postgresql+psycopg://user:{SECRET}@127.0.0.1:1/db"  # port 1: nothing listens
# Connecting needs the driver (the test extra); without it the probe says so (tested below).
needs_psycopg = pytest.mark.skipif(importlib.util.find_spec("psycopg") is None, reason="psycopg is not installed")


def _release(tmp_path: Path, capsys: pytest.CaptureFixture[str], destination: dict[str, str]) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    data = demo_spec_dict(tmp_path, rows=300)
    data["destination"] = destination
    path.write_text(yaml.safe_dump(data))
    code = main(["release", str(path), "--quiet"])
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    assert not (tmp_path / "reports").exists()  # nothing written: the probe comes before the diagnosis
    assert not any((tmp_path / "work").glob("**/*.parquet"))
    return code, err.strip()


@needs_psycopg
def test_an_unreachable_url_fails_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _release(tmp_path, capsys, {"url": UNREACHABLE, "table": "census_release"})
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("privacy-plugins: error: destination.url: cannot connect to postgresql+psycopg://user:***@")
    assert "Connection refused" in err or "connection" in err.lower()


@needs_psycopg
def test_an_unreachable_connection_names_the_conn_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_WAREHOUSE", f"postgres://user:{SECRET}@127.0.0.1:1/db")
    code, err = _release(tmp_path, capsys, {"conn_id": "warehouse", "table": "census_release"})
    assert code == 2 and len(err.splitlines()) == 1
    assert "destination.conn_id: cannot connect to connection 'warehouse'" in err


def test_a_missing_schema_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_url: str) -> None:
    url = postgres_url + "&options=-csearch_path%3Dnosuch"
    code, err = _release(tmp_path, capsys, {"url": url, "table": "census_release"})
    assert code == 2 and "destination.url" in err and "no schema" in err


def test_a_user_who_may_not_create_tables_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_url: str
) -> None:
    engine = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sa.text("DROP ROLE IF EXISTS reader"))
        connection.execute(sa.text(f"CREATE ROLE reader LOGIN PASSWORD '{SECRET}'"))
        connection.execute(sa.text("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    engine.dispose()
    url = postgres_url.replace("://postgres@", f"://reader:{SECRET}@", 1)
    code, err = _release(tmp_path, capsys, {"url": url, "table": "census_release"})
    assert code == 2 and "destination.url" in err and "may not create tables in schema 'public'" in err


def test_a_reachable_writable_server_passes_the_probe(postgres_url: str) -> None:
    probe_database("destination.url", postgres_url)  # no error, and nothing created
    engine = sa.create_engine(postgres_url)
    with engine.connect() as connection:
        assert sa.inspect(connection).get_table_names() == []
    engine.dispose()
    with pytest.raises(ConfigurationError, match=r"^destination.url: cannot connect to .*:\*\*\*@"):
        probe_database("destination.url", UNREACHABLE)


def test_a_missing_driver_is_named_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert importlib.util.find_spec("pg8000") is None  # a driver no extra installs
    url = f"postgresql+pg8000://user:{SECRET}@127.0.0.1:1/db"
    code, err = _release(tmp_path, capsys, {"url": url, "table": "census_release"})
    assert code == 2 and len(err.splitlines()) == 1
    expected = "destination.url: the driver for 'postgresql+pg8000' is not installed (pg8000)"
    assert err == f"privacy-plugins: error: {expected}"


def test_no_secret_of_the_url_is_shown_not_even_in_its_query_string() -> None:
    with pytest.raises(ConfigurationError) as info:
        probe_database("destination.url", f"{UNREACHABLE}?sslpassword={SECRET}x&application_name=pp")
    assert SECRET not in str(info.value) and "user:***@127.0.0.1:1/db:" in str(info.value)
