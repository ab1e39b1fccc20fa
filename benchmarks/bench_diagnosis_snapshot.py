"""Benchmark: the diagnosis of the records against the diagnosis of their weighted snapshot.

A release inside the database diagnoses its snapshot (one row per distinct
combination of the QIs and the sensitive attribute, and its count):
``diagnose(snapshot, ..., weights=COUNT)`` gives the same ``PrivacyDiagnosis``
(checked here: same JSON, floats to 1e-12). How much faster is it?

1. Adult, 30,162 rows; the 8 QIs of ``bench_diagnosis.py`` (every column but
   occupation), sensitive occupation, k=5, distinct l=2: all 255 subsets.
2. Adult replicated to 1,000,000 rows in DuckDB with age jittered
   (``bench_engines.py make``); the 7 QIs of ``bench_engines.py``, sensitive
   occupation: all 128 subsets (``max_cost=None``: the default budget would send
   1M × 2^7 row-subsets level-wise, for the records and the snapshot alike).
   The snapshot is DuckDB's ``GROUP BY``; the records are read into pandas.

Times are the best of ``--repeat`` after a warm-up, diagnosis only (the
group-by is timed apart). Not a test: numbers vary with the machine.

Run:  .venv/bin/python benchmarks/bench_diagnosis_snapshot.py [--repeat 3] [--rows 1000000] [--db /tmp/adult1m.duckdb]
Data: ../shared/data/adult (skipped with a message when absent).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.diagnosis import PrivacyDiagnosis, diagnose
from privacy_plugins.core.io import read_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engines import QIS as BIG_QIS  # sibling scripts, not a package
from bench_engines import make

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
SENSITIVE = "occupation"
COUNT = "__count__"


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time over ``repeat`` runs after one warm-up, and the last result."""
    result = function()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def same(left: Any, right: Any) -> bool:
    """Equal JSON trees, floats to 1e-12 relative."""
    if isinstance(left, dict):
        return isinstance(right, dict) and list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return isinstance(right, list) and len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float) and isinstance(right, float):
        return math.isclose(left, right, rel_tol=1e-12)
    return bool(left == right)


def compare(name: str, records: pd.DataFrame, snapshot: pd.DataFrame, qis: list[str], repeat: int) -> None:
    options: dict[str, Any] = {
        "quasi_identifiers": qis,
        "sensitive_attributes": [SENSITIVE],
        "k": 5,
        "l": 2,
        "max_cost": None,
        "time_budget": None,
    }
    on_rows, by_rows = timed(lambda: diagnose(records, **options), repeat)
    on_snapshot, by_snapshot = timed(lambda: diagnose(snapshot, weights=COUNT, **options), repeat)
    assert isinstance(by_rows, PrivacyDiagnosis) and isinstance(by_snapshot, PrivacyDiagnosis)
    verdict = "same diagnosis" if same(by_rows.to_dict(), by_snapshot.to_dict()) else "DIFFERENT DIAGNOSES"
    print(
        f"{name}: {len(records):,} records, snapshot {len(snapshot):,} rows; "
        f"all {len(by_rows.subsets)} subsets of {len(qis)} QIs ({verdict})\n"
        f"  records  {on_rows * 1e3:9.0f} ms\n"
        f"  snapshot {on_snapshot * 1e3:9.0f} ms   records/snapshot = {on_rows / on_snapshot:.2f}"
    )


def bench_adult(repeat: int) -> None:
    adult = read_table(ADULT)
    qis = [c for c in adult.columns if c != SENSITIVE]
    started = time.perf_counter()
    snapshot = adult.groupby([*qis, SENSITIVE], dropna=False).size().rename(COUNT).reset_index()
    print(f"adult: pandas group-by to the snapshot {(time.perf_counter() - started) * 1e3:.0f} ms")
    compare("adult", adult, snapshot, qis, repeat)


def bench_replicated(rows: int, db: Path | None, repeat: int) -> None:
    import duckdb

    with tempfile.TemporaryDirectory() as folder:
        path = db or Path(folder) / "adult_big.duckdb"
        if db is None or not db.exists():
            make(rows, path)
        connection = duckdb.connect(str(path), read_only=True)
        columns = ", ".join(f'"{c}"' for c in [*BIG_QIS, SENSITIVE])
        started = time.perf_counter()
        snapshot = connection.execute(f"SELECT {columns}, COUNT(*) AS {COUNT} FROM adult_big GROUP BY ALL").df()
        print(f"\nreplicated adult: DuckDB GROUP BY to the snapshot {(time.perf_counter() - started) * 1e3:.0f} ms")
        records = connection.execute(f"SELECT {columns} FROM adult_big").df()
        connection.close()
    compare("replicated adult", records, snapshot, list(BIG_QIS), repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the replicated Adult")
    parser.add_argument("--db", type=Path, help="a DuckDB file from bench_engines.py make (made when absent)")
    args = parser.parse_args()
    if not ADULT.exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    print(f"pandas {pd.__version__}")
    bench_adult(args.repeat)
    bench_replicated(args.rows, args.db, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
