"""Shared test configuration: hypothesis profiles (``dev`` default, ``ci`` in CI)."""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _cache_bytecode() -> None:
    """Keep compiled bytecode when the environment says PYTHONDONTWRITEBYTECODE.

    Without .pyc files every interpreter compiles each module it imports from
    source: importing Great Expectations, Airflow or Dagster then takes about
    twice as long, in this process and again in every subprocess a test starts
    (the console script, a fresh DAG parse, a crash). The bytecode goes to a
    cache folder outside the source trees and the virtualenv (``PYTHONPYCACHEPREFIX``
    if set, else ``privacy-plugins-pycache-<uid>`` in the temp folder), so nothing
    is written beside the sources. Set PRIVACY_PLUGINS_TEST_NO_PYCACHE=1 to opt out.
    """
    if not sys.dont_write_bytecode or os.environ.get("PRIVACY_PLUGINS_TEST_NO_PYCACHE"):
        return
    default = Path(tempfile.gettempdir()) / f"privacy-plugins-pycache-{os.getuid()}"
    prefix = sys.pycache_prefix or os.environ.get("PYTHONPYCACHEPREFIX") or str(default)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix  # the subprocesses the tests start
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_cache_bytecode()

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# DuckDB's bindings (nanobind) and PySpark's py4j print leak reports and logging
# errors while the interpreter tears down, after pytest's summary line. They are
# harmless but bury the summary CI reads last, so once pytest is completely done
# the process exits with pytest's own status without the teardown. Set
# PRIVACY_PLUGINS_FULL_TEARDOWN=1 to see them.
_exit_status: int | None = None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if _exit_status is not None and not os.environ.get("PRIVACY_PLUGINS_FULL_TEARDOWN"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status)


@pytest.fixture(scope="module")
def spark(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Spark session (``local[1]``), one per test module: starting one costs seconds.

    Catalog tables go to a temporary warehouse folder (Spark's default is ./spark-warehouse).
    The modules that use it skip themselves first when PySpark or a Java runtime is missing.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName(f"privacy_plugins-{request.module.__name__}")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --doctest-modules would also import every conftest.py as a doctest module; with
# several conftest.py files in folders without __init__.py that clashes on the
# module name "conftest". Doctests live in the package, not here.
collect_ignore_glob = ["*/conftest.py", "conftest.py"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """One throwaway PostgreSQL cluster per session (tests/pg_cluster.py); skipped with the reason if unavailable."""
    from pg_cluster import Unavailable, cluster

    try:
        with cluster() as url:
            yield url
    except Unavailable as reason:
        pytest.skip(str(reason))


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A SQLAlchemy URL of a fresh, empty database in the session's cluster (tables never collide)."""
    import sqlalchemy as sa

    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return postgres_server.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture(autouse=True)
def _own_work_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Release working folders under this pytest run's own temporary root, unless the environment names one.

    Otherwise every run shares ``/tmp/privacy-plugins-<uid>``, and two pytest runs side by side
    (CI runs its jobs in parallel) would meet there: tests name their runs ``r``, ``r1`` … A test
    of the default root removes the variable itself (``monkeypatch.delenv``).
    """
    if not os.environ.get("PRIVACY_PLUGINS_WORKDIR"):
        monkeypatch.setenv("PRIVACY_PLUGINS_WORKDIR", str(tmp_path_factory.getbasetemp() / "work"))
