"""Does the Ibis prototype give what ``SqlTable`` gives? (benchmark-side check, not part of the test suite)

For DuckDB, SQLite and PostgreSQL (a throwaway cluster from tests/pg_cluster.py; left out
with the reason when it cannot start) and three tables — the tests' demo census (3,000
rows), the tests' Adult sample (3,016) and the whole Adult file (30,162) — it runs:

1. the every-engine acceptance check of tests/engines/engine_checks.py
   (``assert_same_release``: same node, suppression, NCP, published multiset and
   in-engine measures as the in-memory anonymizer) on an ``IbisTable``, by CASE and by join;
2. a direct comparison with ``SqlTable`` on the same database table: ``count``, the
   ``group_counts`` multiset over the QIs and the sensitive column, the generalized-and-
   suppressed row multiset (CASE and join, the node and classes ``anonymize_in_engine``
   chose) and ``batches(1000)`` equal to ``to_pandas``.

Run (a venv with the project, its test extra, ``ibis-framework[duckdb,sqlite,postgres]``):
    python benchmarks/sql_layers/check_ibis_table.py
Prints one line per backend × table and exits 1 on the first difference.
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests"), str(REPO / "tests" / "engines")]

try:
    import ibis  # noqa: F401
except ImportError:
    print("skipped: ibis is not installed (pip install 'ibis-framework[duckdb,sqlite,postgres]')")
    sys.exit(0)

import duckdb_engine  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from engine_checks import ADULT, ADULT_QIS, assert_same_release, multiset  # noqa: E402
from ibis_table import IbisTable, connect  # noqa: E402

import privacy_plugins as pp  # noqa: E402
from privacy_plugins.core.hierarchies import read_hierarchy  # noqa: E402
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity  # noqa: E402
from privacy_plugins.engines import SqlTable, anonymize_in_engine  # noqa: E402
from privacy_plugins.release.spec import ReleaseSpec  # noqa: E402


def problems() -> dict[str, tuple[pd.DataFrame, dict[str, object]]]:
    """The tests' two problems (tests/engines/conftest.py) and the same Adult problem on the whole file."""
    spec = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census.yaml")
    census = pp.generate_census(3000, seed=3)
    adult_hierarchies = {q: read_hierarchy(ADULT / f"adult_hierarchy_{q}.csv", attribute=q) for q in ADULT_QIS}
    adult_problem = {
        "quasi_identifiers": ADULT_QIS,
        "hierarchies": adult_hierarchies,
        "models": [KAnonymity(5), DistinctLDiversity("occupation", 2)],
        "sensitive_attributes": ["occupation"],
        "suppression_limit": 0.05,
    }
    return {
        "census": (
            census,
            {
                "quasi_identifiers": list(spec.quasi_identifiers),
                "hierarchies": spec.build_hierarchies(census),
                "models": spec.models(),
                "identifiers": ["person_id"],
                "sensitive_attributes": list(spec.sensitive_attributes),
                "suppression_limit": 0.05,
            },
        ),
        "adult_sample": (pp.read_table(ADULT / "adult_subset.csv"), adult_problem),
        "adult_30k": (pp.read_table(ADULT / "adult.csv"), adult_problem),
    }


class RecordingSqlTable(SqlTable):
    """``SqlTable`` that keeps the arguments of its last ``_generalize`` (to give the prototype the same ones)."""

    last: dict[str, object] = {}  # noqa: RUF012

    def _generalize(self, keep, mappings, suppressed, method):  # type: ignore[no-untyped-def]
        RecordingSqlTable.last = {"keep": list(keep), "mappings": dict(mappings), "suppressed": suppressed}
        return super()._generalize(keep, mappings, suppressed, method)


@contextmanager
def postgres() -> Iterator[str | None]:
    """The URL of a throwaway PostgreSQL cluster's ``postgres`` database, or ``None`` (with the reason printed)."""
    from pg_cluster import Unavailable, cluster

    try:
        with cluster() as url:
            yield url
    except Unavailable as reason:
        print(f"postgresql: left out ({reason})")
        yield None


def fresh_url(backend: str, folder: Path, server: str | None) -> str:
    """The URL of a new empty database of ``backend``."""
    name = uuid.uuid4().hex[:12]
    if backend != "postgresql":
        return f"{backend}:///{folder / name}.{backend}"
    assert server is not None
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "t_{name}"'))
    admin.dispose()
    return server.replace("/postgres?", f"/t_{name}?", 1)


def compare(url: str, frame: pd.DataFrame, problem: dict[str, object]) -> int:
    """The SqlTable and the IbisTable on the same stored table give the same results; the rows suppressed."""
    engine = sa.create_engine(url)
    frame.to_sql("raw", engine, index=False)
    reference = RecordingSqlTable.from_table(engine, "raw")
    # One DuckDB file opened twice in a process needs the same configuration: duckdb_engine's user agent.
    same = {"custom_user_agent": f"duckdb_engine/{duckdb_engine.__version__}(sqlalchemy/{sa.__version__})"}
    prototype = IbisTable.from_table(connect(url, **same) if url.startswith("duckdb") else connect(url), "raw")
    qis = list(problem["quasi_identifiers"])  # type: ignore[call-overload]
    grouped = [*qis, *problem["sensitive_attributes"]]  # type: ignore[misc]
    assert prototype.columns() == reference.columns()
    assert prototype.count() == reference.count() == len(frame)
    assert multiset(prototype.group_counts(grouped)).equals(multiset(reference.group_counts(grouped)))
    assert_same_release(prototype, frame, method="case", **problem)
    assert_same_release(prototype, frame, method="join", **problem)
    suppressed_rows = 0
    for method in ("case", "join"):
        done = anonymize_in_engine(reference, method=method, **problem)  # type: ignore[arg-type]
        suppressed_rows = done.solution.suppressed
        mine = prototype.generalized(method=method, **RecordingSqlTable.last)  # type: ignore[arg-type]
        theirs = multiset(done.published.to_pandas())
        assert list(mine.columns()) == list(theirs.columns)
        assert multiset(mine.to_pandas()).equals(theirs), method
        assert mine.count() == done.rows_out
        batches = list(mine.batches(1000))
        assert max(len(b) for b in batches) <= 1000
        assert multiset(pd.concat(batches, ignore_index=True)).equals(theirs), method
        done.published.close()  # type: ignore[attr-defined]
    engine.dispose()
    return suppressed_rows


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sqlayer_check_") as folder, postgres() as server:
        backends = ["duckdb", "sqlite"] + (["postgresql"] if server else [])
        for table, (frame, problem) in problems().items():
            for backend in backends:
                suppressed = compare(fresh_url(backend, Path(folder), server), frame, problem)
                print(
                    f"{backend:10} {table:12} {len(frame):6} rows, {suppressed:4} suppressed: "
                    "same as SqlTable and as the in-memory release (case, join)"
                )


if __name__ == "__main__":
    main()
