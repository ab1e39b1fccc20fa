"""Benchmark: what the composition check costs a release at 1M rows (issue 26's goal: ≤ 20%).

Adult replicated to ``--rows`` rows with age jitter (``bench_engines.make``) in a DuckDB file,
released ``--releases`` times on growing nested batches (e.g. 80% / 90% / 100% of the rows, a
hash of the row number choosing which) through ``run_release`` from the DuckDB source into a
DuckDB table of the same file, so every release is checked against the history of the earlier
ones. Spec: the seven Adult QIs along their hierarchies, sensitive ``occupation``, k = 5,
distinct 2-diversity, 5% suppression; ``--algorithms optimal,mondrian``. Each release runs in
this process with ``composition_check`` (the gate's call) wrapped: its seconds are summed per
release (the check step and the publish step each run it), and the same arguments are passed
to the implementation of b7ed0a1 (``git show`` into a temporary folder; its time is *not*
counted in the release's) to print the speed-up and assert the same result.

Printed per release: rows, release seconds (wall), composition-check seconds, their ratio,
``run_targets`` seconds (the targets read from the run's snapshot or rows), the old check's
seconds and the speed-up, and whether the release passed. ``--check`` exits 1 when a ratio
exceeds 0.20 or a result differs from the old one.

Measured 2026-11-26 on compspeed (shared 2-core machine, load 5–11: wall seconds inflated),
``--rows 1000000 --releases 3`` (nested batches of 799,554 / 899,690 / 1,000,000 rows):

    algorithm  release  release s  check s  share  targets s  old check s  speed-up
    optimal    1         27.1       0.8     2.8%   1.7         1.5         2.0x
    optimal    2         26.2       2.1     8.1%   2.0         3.5         1.6x
    optimal    3         24.3       1.8     7.5%   2.3         5.9         3.2x
    mondrian   1         88.5       2.4     2.7%   3.6         8.0         3.3x
    mondrian   2        169.1      10.8     6.4%   5.0        37.4         3.5x
    mondrian   3        172.3      19.6    11.4%   6.1        64.6         3.3x

Every release passed; every result equal to the old implementation's. ``--store parquet``
(the in-memory path; 2026-11-27, load 2–6): optimal 1.0% / 2.5% / 2.3% of 16.5 / 12.2 / 15.3 s,
mondrian 2.2% / 5.0% / 6.7% of 17.0 / 32.9 / 37.7 s.

``--protect-domain`` (2026-11-27, main e698d30, quiet machine, load < 1), seconds per release,
records / domain: optimal 3.9 / 3.7, 3.8 / 4.3, 4.2 / 4.7; mondrian 11.2 / 10.9, 16.8 / 56.6,
20.1 / 75.2 (the domain rule judged on every cut's halves; ``docs/composition.md``).

``release_cpu_s``: the process's CPU per release (the old check's excluded). Over many releases
(``mondcost26``, 2026-11-27, load 4–8, ``--algorithms mondrian --rows 200000 --releases 6``), CPU s per
release, records 3.8 … 12.8, domain main 3.8 / 13.7 / 23.8 / 32.9 / 41.3 / 54.5, now 4.4 / 10.0 / 14.5 /
19.1 / 24.7 / 30.0; 1M rows domain 11.3 / 32.5 / 39.3 (main 11.3 / 41.6 / 55.6, records 11.2 / 17.9 / 20.2).

Run:  PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_history_speed.py [--rows 1000000]
      [--releases 3] [--algorithms optimal,mondrian] [--db /tmp/adult1m_hist.duckdb]
      [--store duckdb|parquet] [--protect-domain] [--check]
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
OLD = "b7ed0a1"


def old_check() -> Any:
    """``composition_check`` as of ``OLD``: its three core modules written to a temporary package."""
    folder = Path(tempfile.mkdtemp(prefix="bench_history_old_"))
    package = folder / "pp_old_history"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("composition", "coverage", "history_check"):
        text = subprocess.run(
            ["git", "show", f"{OLD}:privacy_plugins/core/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for module in ("composition", "coverage"):
            text = text.replace(f"privacy_plugins.core.{module}", f"pp_old_history.{module}")
        (package / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    return importlib.import_module("pp_old_history.history_check").composition_check


def batches(db: Path, rows: int, releases: int) -> list[tuple[str, int]]:
    """Nested batches of the replicated table: the last holds every row."""
    import duckdb

    if not db.exists():
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_engines import make

        make(rows, db)
    connection = duckdb.connect(str(db))
    tables = []
    for number in range(1, releases + 1):
        share = 1000 - (releases - number) * 100  # 80%, 90%, 100% for three releases
        name = f"batch_{releases}_{number}"
        connection.execute(
            f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM "
            f"(SELECT *, row_number() OVER () AS _r FROM adult_big) WHERE hash(_r) % 1000 < {share}"
        )
        connection.execute(f"ALTER TABLE {name} DROP COLUMN _r")
        tables.append((name, connection.execute(f"SELECT count(*) FROM {name}").fetchone()[0]))
    for table in [row[0] for row in connection.execute("SHOW TABLES").fetchall()]:
        if table.startswith(("released_", "pp_history_")):
            connection.execute(f'DROP TABLE "{table}"')
    connection.close()
    return tables


def export(db: Path, table: str, folder: Path) -> Path:
    """The batch as a Parquet file, so the release reads it into memory (the pandas path)."""
    import duckdb

    path = folder / f"{table}.parquet"
    with duckdb.connect(str(db), read_only=True) as connection:
        connection.execute(f"COPY {table} TO '{path}' (FORMAT parquet)")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--algorithms", default="optimal,mondrian")
    parser.add_argument("--db", type=Path, default=Path("/tmp/adult1m_hist.duckdb"))
    parser.add_argument(
        "--store",
        choices=("duckdb", "parquet"),
        default="duckdb",
        help="duckdb: source and destination in the DuckDB file (the engine path); parquet: each "
        "batch exported to a Parquet file read into memory, released to a Parquet folder",
    )
    parser.add_argument(
        "--protect-domain",
        action="store_true",
        help="history: {protect: domain} (judge points of the QI domain; compare the release seconds with a run "
        "without it)",
    )
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not ADULT.exists():
        print(f"skipped: Adult data not found at {ADULT}")
        return 0
    from privacy_plugins.release import ReleaseSpec, composition_gate, run_release

    old = old_check()
    new = composition_gate.composition_check
    read_targets = composition_gate.run_targets
    timing: dict[str, float] = {}
    differences: list[str] = []

    def timed_check(*args_: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = new(*args_, **kwargs)
        timing["check"] += time.perf_counter() - started
        started, cpu = time.perf_counter(), time.process_time()
        before = old(*args_, **kwargs)
        timing["old"] += time.perf_counter() - started
        timing["old_cpu"] += time.process_time() - cpu
        if before.to_dict() != result.to_dict() or not np.array_equal(before.at_risk, result.at_risk):
            differences.append(f"{result} != {before}")
        return result

    def timed_targets(*args_: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        targets = read_targets(*args_, **kwargs)
        timing["targets"] += time.perf_counter() - started
        timing["combinations"] = len(targets)
        return targets

    composition_gate.composition_check = timed_check
    composition_gate.run_targets = timed_targets
    import privacy_plugins.release.steps as steps

    steps.run_targets = timed_targets
    missed = []
    for algorithm in args.algorithms.split(","):
        tables = batches(args.db, args.rows, args.releases)
        report = Path(tempfile.mkdtemp(prefix="bench_history_speed_"))
        store = Path(tempfile.mkdtemp(prefix="bench_history_store_"))
        for position, (table, rows) in enumerate(tables, start=1):
            source: dict[str, Any] = {"duckdb": str(args.db), "table": table}
            destination: dict[str, Any] = {"duckdb": str(args.db), "table": f"released_{algorithm}"}
            if args.store == "parquet":
                source = {"path": str(export(args.db, table, store)), "out_of_core_bytes": 1 << 40}
                destination = {"parquet": str(store), "table": f"released_{algorithm}"}
            spec = ReleaseSpec.from_dict(
                {
                    "name": f"speed_{algorithm}",
                    "source": source,
                    "quasi_identifiers": QIS,
                    "sensitive_attributes": ["occupation"],
                    "insensitive": ["salary-class"],
                    "hierarchies": str(ADULT),
                    "requirements": {"k": 5, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05},
                    "algorithm": {"name": algorithm},
                    "destination": destination,
                    "report": {"directory": str(report)},
                }
                | {"history": {"protect": "domain" if args.protect_domain else "records"}}  # stated: auto may be either
            )
            timing.update(check=0.0, old=0.0, old_cpu=0.0, targets=0.0, combinations=0)
            started, cpu = time.perf_counter(), time.process_time()
            result = run_release(spec)
            seconds = time.perf_counter() - started - timing["old"]
            cpu_seconds = time.process_time() - cpu - timing["old_cpu"]  # this process's CPU (DuckDB's threads too)
            ratio = timing["check"] / seconds
            line = {
                "algorithm": algorithm,
                "store": args.store,
                "protect": "domain" if args.protect_domain else "records",
                "release": position,
                "rows": rows,
                "passed": result.passed,
                "release_s": round(seconds, 2),
                "release_cpu_s": round(cpu_seconds, 2),
                "check_s": round(timing["check"], 2),
                "ratio": round(ratio, 3),
                "targets_s": round(timing["targets"], 2),
                "target_combinations": int(timing["combinations"]),
                "old_check_s": round(timing["old"], 2),
                "speedup": round(timing["old"] / timing["check"], 1) if timing["check"] else None,
            }
            print(json.dumps(line), flush=True)
            if position > 1 and ratio > 0.20:
                missed.append(f"{algorithm} release {position}: check {ratio:.0%} of the release")
        shutil.rmtree(report, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
    if differences:
        print("results differ from the old implementation: " + "; ".join(differences[:3]))
    if args.check and (missed or differences):
        print("goal missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
