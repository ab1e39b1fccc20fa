"""Benchmark: a full-domain release where the table lives (DuckDB, Spark) against the pandas path.

Adult is replicated in SQL with age jitter (±2 years, a different but reproducible
value per copy) into a DuckDB file; each measurement runs in a fresh subprocess
so that its peak RSS is its own. Problem: QIs age, education, marital-status,
native-country, race, sex, workclass; sensitive occupation; k=5, distinct l=2,
5% suppression; optimal search.

Run:
    .venv/bin/python benchmarks/bench_engines.py make --rows 10000000 --db /tmp/adult10m.duckdb
    .venv/bin/python benchmarks/bench_engines.py run --db /tmp/adult10m.duckdb --mode duckdb [--method case|join]
    .venv/bin/python benchmarks/bench_engines.py run --db /tmp/adult10m.duckdb --mode pandas
    .venv/bin/python benchmarks/bench_engines.py run --db /tmp/adult10m.duckdb --mode spark
    .venv/bin/python benchmarks/bench_engines.py release --db /tmp/adult10m.duckdb --mode duckdb|pandas
    .venv/bin/python benchmarks/bench_engines.py spark-release --db /tmp/adult10m.duckdb --destination spark|duckdb
    .venv/bin/python benchmarks/bench_engines.py release --db /tmp/adult10m.duckdb --mode duckdb \
        --destination same|duckdb-other|parquet
    .venv/bin/python benchmarks/bench_engines.py copy --db /tmp/adult10m.duckdb --destination duckdb-other|parquet
    .venv/bin/python benchmarks/bench_engines.py goal --db /tmp/adult10m.duckdb
``run`` times the engine layer alone; ``release`` a whole ``run_release`` (diagnosis and
publishing included) — the comparison a user sees. ``spark-release`` runs ``run_release``
from a Spark source (the table exported to Parquet) to a Spark folder destination (no row
leaves Spark) or to a DuckDB file (the published rows streamed out with ``toLocalIterator``).
``copy`` times DuckDB itself copying the table to the same kind of destination (``ATTACH`` +
``CREATE TABLE … AS`` into another file; ``COPY … TO`` a Parquet file); ``goal`` runs the
release and the copy for both destinations, each in its own subprocess, and prints the
ratio release / copy and the release's peak RSS (issue 25's goal: ratio ≤ 4, RSS < 1 GB).
Each ``run`` prints one JSON line: mode, rows, snapshot units, node, suppressed,
published class-count digest, seconds per phase and peak RSS (MB).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SA = "occupation"


def make(rows: int, db: Path) -> None:
    """Adult × ⌈rows/30162⌉ copies, cut to ``rows``, age jittered by a hash of (copy, row)."""
    import duckdb

    db.unlink(missing_ok=True)
    connection = duckdb.connect(str(db))
    connection.execute(
        "CREATE TEMP TABLE adult AS SELECT *, row_number() OVER () AS rid FROM read_csv(?, delim=';', header=true)",
        [str(ADULT / "adult.csv")],
    )
    copies = -(-rows // 30162)
    connection.execute(
        f"""CREATE TABLE adult_big AS
        SELECT a.sex, LEAST(GREATEST(a.age + CAST(hash(c.i, a.rid) % 5 AS INTEGER) - 2, 1), 99) AS age,
               a.race, a."marital-status", a.education, a."native-country", a.workclass, a.occupation,
               a."salary-class"
        FROM adult a, range({copies}) c(i) LIMIT {rows}"""
    )
    connection.close()


def _problem() -> tuple[list, dict]:
    from privacy_plugins.core.hierarchies import read_hierarchy
    from privacy_plugins.core.models import DistinctLDiversity, KAnonymity

    hierarchies = {q: read_hierarchy(ADULT / f"adult_hierarchy_{q}.csv", attribute=q) for q in QIS}
    return [KAnonymity(5), DistinctLDiversity(SA, 2)], hierarchies


def _digest(frame: pd.DataFrame) -> str:
    """Digest of the published class counts (QI labels + count), order-free."""
    counts = frame.groupby(QIS, dropna=False).size().reset_index(name="n").astype(str)
    text = "\n".join(sorted("|".join(row) for row in counts.itertuples(index=False)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run(db: Path, mode: str, method: str, memory_limit: str = "1GB") -> dict[str, object]:
    """One release of ``adult_big``; the published table stays in the engine (DuckDB: a new table)."""
    models, hierarchies = _problem()
    times: dict[str, float] = {}
    start = time.perf_counter()
    if mode == "pandas":
        import duckdb

        from privacy_plugins.core.anonymize import anonymize

        frame = duckdb.connect(str(db), read_only=True).execute("SELECT * FROM adult_big").df()
        times["load"] = time.perf_counter() - start
        result = anonymize(frame, algorithm="optimal", quasi_identifiers=QIS, hierarchies=hierarchies, models=models,
                           sensitive_attributes=[SA], suppression_limit=0.05)  # fmt: skip
        times["anonymize"] = time.perf_counter() - start - times["load"]
        levels, suppressed, units = dict(result.details.levels), result.suppressed, None
        rows, digest = len(frame), _digest(result.table)
    else:
        from privacy_plugins.engines import anonymize_in_engine, measure_in_engine

        if mode == "duckdb":
            import sqlalchemy as sa

            from privacy_plugins.engines import SqlTable

            config = {"memory_limit": memory_limit, "threads": 2}
            engine = sa.create_engine(f"duckdb:///{db}", connect_args={"config": config})
            table = SqlTable.from_table(engine, "adult_big")
        else:
            import os

            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            from pyspark.sql import SparkSession

            from privacy_plugins.engines import SparkTable

            spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                     .config("spark.driver.memory", "2g").config("spark.ui.showConsoleProgress", "false")
                     .getOrCreate())  # fmt: skip
            spark.sparkContext.setLogLevel("ERROR")
            parquet = db.with_suffix(".parquet")
            if not parquet.exists():
                import duckdb

                duckdb.connect(str(db), read_only=True).execute(f"COPY adult_big TO '{parquet}' (FORMAT parquet)")
            table = SparkTable(spark.read.parquet(str(parquet)))
        done = anonymize_in_engine(table, quasi_identifiers=QIS, hierarchies=hierarchies, models=models,
                                   sensitive_attributes=[SA], suppression_limit=0.05, method=method)  # type: ignore[arg-type]  # fmt: skip
        times["snapshot+search"] = time.perf_counter() - start
        mark = time.perf_counter()
        if mode == "duckdb":
            with table.engine.begin() as connection:
                connection.exec_driver_sql("DROP TABLE IF EXISTS adult_published")
                connection.exec_driver_sql(f"CREATE TABLE adult_published AS {done.published.select_sql()}")  # type: ignore[attr-defined]
            published = SqlTable.from_table(table.engine, "adult_published")
        else:
            published = done.published
        times["apply"] = time.perf_counter() - mark
        mark = time.perf_counter()
        checks = measure_in_engine(published, quasi_identifiers=QIS, models=models)
        assert all(c.passed for c in checks)
        counts = published.group_counts(QIS)
        times["measure"] = time.perf_counter() - mark
        text = "\n".join(sorted("|".join(map(str, r)) for r in counts.itertuples(index=False)))
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        levels, suppressed, units, rows = (
            dict(done.solution.details.levels),
            done.solution.suppressed,
            len(done.snapshot.units),
            done.rows_in,
        )
        if mode == "duckdb":
            done.published.close()  # type: ignore[attr-defined]
    times["total"] = time.perf_counter() - start
    return {
        "mode": mode, "method": method, "rows": rows, "snapshot_units": units, "levels": levels,
        "suppressed": suppressed, "class_counts_digest": digest,
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }  # fmt: skip


def _target(db: Path, destination: str, name: str) -> tuple[dict[str, object], Path]:
    """The release's destination section and the path it writes (removed first: every run starts alike)."""
    if destination == "duckdb-other":
        path = db.with_name(db.stem + "_published.duckdb")
        path.unlink(missing_ok=True)
        return {"duckdb": str(path), "table": name}, path
    if destination == "parquet":
        path = db.with_name(db.stem + "_published")
        shutil.rmtree(path, ignore_errors=True)
        return {"parquet": str(path), "table": name}, path
    return {"duckdb": str(db), "table": name}, db


def copy(db: Path, destination: str) -> dict[str, object]:
    """DuckDB itself copying ``adult_big`` to another file (``ATTACH`` + ``CREATE TABLE … AS``) or to Parquet."""
    import duckdb

    _, path = _target(db, destination, "adult_copy")
    start = time.perf_counter()
    connection = duckdb.connect(str(db))
    if destination == "duckdb-other":
        connection.execute(f"ATTACH '{path}' AS target")
        connection.execute("CREATE TABLE target.adult_copy AS SELECT * FROM adult_big")
        connection.execute("DETACH target")
    else:
        path.mkdir(parents=True)
        connection.execute(f"COPY adult_big TO '{path / 'adult_copy.parquet'}' (FORMAT parquet)")
    connection.close()
    seconds = time.perf_counter() - start
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return {
        "copy": destination,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def goal(db: Path) -> list[dict[str, object]]:
    """Release and DuckDB's own copy, per destination, each in a fresh subprocess: the ratio and the RSS."""

    def measured(*args: str) -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, __file__, *args, "--db", str(db)], check=True, capture_output=True, text=True
        ).stdout
        return dict(json.loads(out.strip().splitlines()[-1]))

    lines = []
    for destination in ("duckdb-other", "parquet"):
        copied = measured("copy", "--destination", destination)
        released = measured("release", "--mode", "duckdb", "--destination", destination)
        total = float(released["seconds"]["total"])  # type: ignore[index]
        lines.append(
            {
                "destination": destination,
                "release_seconds": total,
                "copy_seconds": copied["seconds"],
                "ratio": round(total / float(copied["seconds"]), 2),  # type: ignore[arg-type]
                "release_peak_rss_mb": released["peak_rss_mb"],
                "copy_peak_rss_mb": copied["peak_rss_mb"],
                "steps": released["seconds"],
            }
        )
    return lines


def release(db: Path, mode: str, destination: str = "same") -> dict[str, object]:
    """One full release through ``run_release`` (load, diagnose, anonymize, check, publish into ``db``).

    ``duckdb``: the source is the table in ``db``, so the release runs inside DuckDB
    (pushdown); ``destination`` ``same`` publishes into ``db``, ``duckdb-other`` into another
    DuckDB file, ``parquet`` into a Parquet folder beside it. ``pandas``: the same rows from a Parquet copy below
    ``source.out_of_core_bytes``, so the in-memory flow reads them, diagnoses the
    records and publishes through pandas into the same DuckDB file.
    """
    from privacy_plugins.release import ReleaseSpec, run_release

    if mode == "duckdb":
        source: dict[str, object] = {"duckdb": str(db), "table": "adult_big"}
    else:
        parquet = db.with_suffix(".parquet")
        if not parquet.exists():
            import duckdb

            duckdb.connect(str(db), read_only=True).execute(f"COPY adult_big TO '{parquet}' (FORMAT parquet)")
        source = {"path": str(parquet), "out_of_core_bytes": 10 * parquet.stat().st_size}
    report = Path(tempfile.mkdtemp(prefix="bench_engines_"))
    target, written = _target(db, destination, f"adult_released_{mode}")
    spec = ReleaseSpec.from_dict(
        {
            "name": f"bench_{mode}",
            "source": source,
            "quasi_identifiers": QIS,
            "sensitive_attributes": [SA],
            "hierarchies": str(ADULT),
            "requirements": {"k": 5, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05},
            "algorithm": {"name": "optimal"},
            "destination": target,
            "report": {"directory": str(report)},
        }
    )
    steps: dict[str, float] = {}
    mark = [time.perf_counter(), ""]

    def on_step(name: str) -> None:
        now = time.perf_counter()
        if mark[1]:
            steps[str(mark[1])] = round(now - float(mark[0]), 2)
        mark[0], mark[1] = now, name

    start = time.perf_counter()
    result = run_release(spec, on_step=on_step)
    on_step("")
    shutil.rmtree(report, ignore_errors=True)
    if written != db:
        shutil.rmtree(written, ignore_errors=True) if written.is_dir() else written.unlink(missing_ok=True)
    assert result.passed, result.failure
    assert result.candidate is not None
    return {
        "release": mode,
        "destination": destination,
        "rows": result.loaded.rows,
        "levels": result.candidate.levels,
        "suppressed": result.candidate.suppressed,
        "published": result.candidate.rows_out,
        "seconds": steps | {"total": round(time.perf_counter() - start, 2)},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def spark_release(db: Path, destination: str) -> dict[str, object]:
    """One ``run_release`` from a Spark source (``local[2]``) to a Spark folder or a DuckDB file."""
    import os

    from privacy_plugins.release import ReleaseSpec, run_release
    from privacy_plugins.release.linked import read_release

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    parquet = db.with_suffix(".parquet")
    if not parquet.exists():
        import duckdb

        duckdb.connect(str(db), read_only=True).execute(f"COPY adult_big TO '{parquet}' (FORMAT parquet)")
    settings = {"spark.master": "local[2]", "spark.driver.memory": "2g", "spark.ui.enabled": "false"}
    with tempfile.TemporaryDirectory(prefix="bench_release_") as folder:
        target = {"spark": f"{folder}/out/adult_release"}
        if destination == "duckdb":
            target = {"duckdb": f"{folder}/release.duckdb", "table": "adult_release"}
        spec = ReleaseSpec.from_dict({
            "name": "bench_release", "source": {"spark": str(parquet), "spark_settings": settings},
            "quasi_identifiers": QIS, "sensitive_attributes": [SA], "hierarchies": str(ADULT),
            "requirements": {"k": 5, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05},
            "destination": target, "report": {"directory": f"{folder}/reports"},
        })  # fmt: skip
        start = time.perf_counter()
        result = run_release(spec)
        seconds = time.perf_counter() - start
        assert result.passed and result.candidate is not None, result.failure
        published = read_release(spec)
        assert published is not None
        return {
            "mode": f"release spark -> {destination}", "rows": result.loaded.rows,
            "levels": result.candidate.levels, "suppressed": result.candidate.suppressed,
            "class_counts_digest": _digest(published), "seconds": {"total": round(seconds, 2)},
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    making = sub.add_parser("make")
    making.add_argument("--rows", type=int, required=True)
    making.add_argument("--db", type=Path, required=True)
    running = sub.add_parser("run")
    running.add_argument("--db", type=Path, required=True)
    running.add_argument("--mode", choices=["duckdb", "pandas", "spark"], required=True)
    running.add_argument("--method", choices=["case", "join"], default="case")
    running.add_argument("--memory-limit", default="1GB", help="DuckDB memory_limit (spills to disk beyond it)")
    releasing = sub.add_parser("release", help="a full release through run_release (what a user runs)")
    releasing.add_argument("--db", type=Path, required=True)
    releasing.add_argument("--mode", choices=["duckdb", "pandas"], required=True)
    releasing.add_argument("--destination", choices=["same", "duckdb-other", "parquet"], default="same")
    copying = sub.add_parser("copy", help="DuckDB itself copying the table to another file or to Parquet")
    copying.add_argument("--db", type=Path, required=True)
    copying.add_argument("--destination", choices=["duckdb-other", "parquet"], required=True)
    goal_parser = sub.add_parser("goal", help="release vs DuckDB's own copy, both destinations: ratio and RSS")
    goal_parser.add_argument("--db", type=Path, required=True)
    spark_releasing = sub.add_parser("spark-release", help="run_release from a Spark source to Spark or DuckDB")
    spark_releasing.add_argument("--db", type=Path, required=True)
    spark_releasing.add_argument("--destination", choices=["spark", "duckdb"], required=True)
    args = parser.parse_args()
    if args.command == "make":
        make(args.rows, args.db)
    elif args.command == "release":
        print(json.dumps(release(args.db, args.mode, args.destination)))
    elif args.command == "copy":
        print(json.dumps(copy(args.db, args.destination)))
    elif args.command == "goal":
        for line in goal(args.db):
            print(json.dumps(line))
    elif args.command == "spark-release":
        print(json.dumps(spark_release(args.db, args.destination)))
    else:
        print(json.dumps(run(args.db, args.mode, args.method, args.memory_limit)))


if __name__ == "__main__":
    main()
