"""GX test fixtures: ephemeral contexts (no disk, no network, no progress bars) and one batch per engine."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

SQL_ENGINES = ("sqlite", "duckdb", "postgresql")


@pytest.fixture
def context() -> Any:
    pytest.importorskip("great_expectations")  # the adapter imports it: skip, not fail, without the gx extra
    gx = pytest.importorskip("privacy_plugins.integrations.gx")
    return gx.ephemeral_context()


@pytest.fixture
def pandas_batch(context: Any) -> Callable[[pd.DataFrame], Any]:
    """Return a function that gives a GX pandas batch of a frame."""
    asset = context.data_sources.add_pandas("pandas").add_dataframe_asset("table")
    definition = asset.add_batch_definition_whole_dataframe("whole")
    return lambda frame: definition.get_batch(batch_parameters={"dataframe": frame})


def write_table(
    frame: pd.DataFrame, engine: str, directory: Path, name: str = "people", postgres_url: str | None = None
) -> str:
    """Store ``frame`` as table ``name`` in a new SQLite or DuckDB file, or in ``postgres_url``; return the URL."""
    if engine in ("sqlite", "postgresql"):
        import sqlalchemy as sa

        url = str(postgres_url) if engine == "postgresql" else f"sqlite:///{directory / f'{name}.sqlite'}"
        sa_engine = sa.create_engine(url)
        frame.to_sql(name, sa_engine, index=False, if_exists="replace")
        sa_engine.dispose()
        return url
    import duckdb

    path = directory / f"{name}.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.register("source_frame", frame)
        connection.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM source_frame")
    return f"duckdb:///{path}"


@pytest.fixture
def sql_batch(context: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[pd.DataFrame, str], Any]:
    """Return a function that stores a frame in SQLite, DuckDB or PostgreSQL and gives a GX SQL batch of that table.

    PostgreSQL is a fresh database in the session's throwaway server (``postgres_url``
    in tests/conftest.py), requested only by the PostgreSQL cases so that the others
    never wait for it; it skips with the reason when no server can start here.

    (At exit DuckDB's bindings may print "nanobind: leaked ..." once GX has reflected a
    DuckDB table; that is GX holding the engine until shutdown, not a test failure.)
    """
    count = iter(range(1_000))

    def make(frame: pd.DataFrame, engine: str) -> Any:
        number = next(count)
        server = str(request.getfixturevalue("postgres_url")) if engine == "postgresql" else None
        url = write_table(frame, engine, tmp_path, name=f"people_{number}", postgres_url=server)
        name = f"{engine}_{number}"
        # PostgreSQL through the generic SQL source: GX's add_postgres wants a TCP host and the
        # test server listens on a unix socket only; the metrics run the same SQLAlchemy queries.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="You are using a generic SQLDatasource")
            source = (
                context.data_sources.add_sqlite(name, connection_string=url)
                if engine == "sqlite"
                else context.data_sources.add_sql(name, connection_string=url)
            )
        asset = source.add_table_asset("table", table_name=f"people_{number}")
        return asset.add_batch_definition_whole_table("whole").get_batch()

    return make


@pytest.fixture
def demo_release_table() -> pd.DataFrame:
    """A table of the demo release's shape (generalized QIs as strings) that is 5-anonymous and 2-diverse."""
    rows = []
    for age in ("[20-39]", "[40-59]"):
        for sex in ("Female", "Male"):
            for disease in ("flu", "none", "asthma", "flu", "none"):
                rows.append((age, sex, "47***", "*", "*", disease))
    columns = ["age", "sex", "zip", "education", "marital_status", "disease"]
    return pd.DataFrame(rows, columns=columns)


@pytest.fixture
def expectations_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "expectations"
