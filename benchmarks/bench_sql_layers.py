"""Benchmark: today's SQL layer (SQLAlchemy ``SqlTable``) against an Ibis prototype, SQLGlot and hand-written SQL.

Issue 25 item 6 (docs/sql-layer-evaluation.md). On the 10M-row Adult table of
``bench_engines.py`` it times, each in a fresh subprocess (DuckDB ``threads=2``,
``memory_limit=1GB``, as ``bench_engines.py run``), best of ``--repeat`` runs:

- ``group_counts``: one GROUP BY over the 7 QIs + occupation, the aggregates as a pandas frame;
- ``case`` / ``join``: the node bench_engines' problem chooses (k=5, distinct l=2, 5%
  suppression, optimal) applied by CASE or by mapping-table join, suppressed classes removed,
  written to a new table by ``CREATE TABLE … AS`` (helper tables included in the time);

for four layers: ``sqlalchemy`` (privacy_plugins.engines.SqlTable, as the release runs it),
``ibis`` (benchmarks/sql_layers/ibis_table.py), ``sqlglot`` (the hand SQL written once in
PostgreSQL's dialect, transpiled to DuckDB's, then run: transpiling included) and ``hand``
(DuckDB SQL written for DuckDB through its own Python API: the floor). Every layer's result
is checked against the floor's (same aggregates; same row count and class counts).

Run (a venv with the project, ``ibis-framework[duckdb,sqlite,postgres]`` and ``sqlglot``;
Ibis 12.0.0 needs ``sqlglot<=30.17``, see the doc):
    python benchmarks/bench_engines.py make --rows 10000000 --db /tmp/adult10m.duckdb
    python benchmarks/bench_sql_layers.py run --db /tmp/adult10m.duckdb [--repeat 3] [--ops group_counts,case,join]
    python benchmarks/bench_sql_layers.py footprint     # import time and installed size each library adds
    python benchmarks/bench_sql_layers.py transpile     # SQLGlot on today's hand-written statements, per dialect
    python benchmarks/sql_layers/check_ibis_table.py    # the prototype gives SqlTable's results (DuckDB, SQLite, PG)
``run`` first stores the node and the suppressed classes beside the database (``<db>.node.pkl``,
one search, reused). Not part of the test suite; it exits with a message when Ibis or SQLGlot
is not installed.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as metadata
import json
import os
import pickle
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "sql_layers"))
ADULT = HERE.parents[1] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SA = "occupation"
SOURCE, TARGET = "adult_big", "adult_sql_layers_out"
LAYERS = ("hand", "sqlglot", "sqlalchemy", "ibis")
OPS = ("group_counts", "case", "join")
CONFIG = {"threads": 2, "memory_limit": "1GB"}


def _require(*modules: str) -> None:
    missing = []
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:  # a skip, not a failure (exit 0), as the other benchmarks do without their data
        print(f"skipped: {', '.join(missing)} not installed (pip install 'ibis-framework[duckdb]' sqlglot)")
        sys.exit(0)


# --- the node to apply (one search, stored beside the database) ---------------------------------------------


class _Recorder:
    """An engine table that only knows its columns and keeps what ``anonymize_in_engine`` asks it to apply."""

    def __init__(self, columns: list[str]) -> None:
        self._columns = columns
        self.applied: dict[str, Any] = {}

    def columns(self) -> list[str]:
        return self._columns

    def generalized(self, *, keep: Any, mappings: Any, suppressed: Any, method: Any) -> _Recorder:
        self.applied = {"keep": list(keep), "mappings": dict(mappings), "suppressed": suppressed}
        return self


def node(db: Path) -> dict[str, Any]:
    """keep, mappings and suppressed classes of bench_engines' problem on ``db`` (computed once, then read)."""
    import duckdb

    stored = db.with_name(db.name + ".node.pkl")
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = int(connection.execute(f"SELECT count(*) FROM {SOURCE}").fetchone()[0])
    if stored.exists():
        kept = pickle.loads(stored.read_bytes())
        if kept.pop("source_rows", None) == rows:
            return kept

    from privacy_plugins.core.hierarchies import read_hierarchy
    from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
    from privacy_plugins.engines import COUNT_COLUMN, anonymize_in_engine

    with duckdb.connect(str(db), read_only=True) as connection:
        columns = [row[0] for row in connection.execute(f"DESCRIBE {SOURCE}").fetchall()]
        aggregates = connection.execute(
            f"SELECT {_names([*QIS, SA])}, count(*) AS {COUNT_COLUMN} FROM {SOURCE} GROUP BY ALL"
        ).df()
    hierarchies = {q: read_hierarchy(ADULT / f"adult_hierarchy_{q}.csv", attribute=q) for q in QIS}
    recorder = _Recorder(columns)
    anonymize_in_engine(
        recorder,  # type: ignore[arg-type]
        quasi_identifiers=QIS,
        hierarchies=hierarchies,
        models=[KAnonymity(5), DistinctLDiversity(SA, 2)],
        sensitive_attributes=[SA],
        suppression_limit=0.05,
        aggregates=aggregates,
    )
    stored.write_bytes(pickle.dumps(recorder.applied | {"source_rows": rows}))
    return recorder.applied


# --- hand-written DuckDB SQL (the floor) and the same text through SQLGlot ----------------------------------


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _names(columns: list[str]) -> str:
    return ", ".join(_ident(c) for c in columns)


def _literal(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def hand_group_counts() -> str:
    """The GROUP BY as one would write it for any database (no ``GROUP BY ALL``: SQLGlot reads it too)."""
    columns = _names([*QIS, SA])
    return f"SELECT {columns}, COUNT(*) AS n FROM {SOURCE} GROUP BY {columns}"


def hand_generalized(applied: Mapping[str, Any], method: str) -> tuple[str, dict[str, pd.DataFrame]]:
    """The generalized-and-suppressed SELECT (portable SQL: CASE or JOIN, LEFT JOIN … IS NULL) and its helper frames."""
    mappings, suppressed, keep = applied["mappings"], applied["suppressed"], applied["keep"]
    helpers: dict[str, pd.DataFrame] = {}
    joins, selected = [], []
    for index, column in enumerate(keep):
        if column not in mappings:
            selected.append(f"s.{_ident(column)}")
        elif method == "case":
            whens = " ".join(
                f"WHEN {_literal(v)} THEN {_literal(label)}"
                for v, label in zip(mappings[column]["value"], mappings[column]["label"], strict=True)
            )
            selected.append(f"CASE s.{_ident(column)} {whens} END AS {_ident(column)}")
        else:
            helpers[f"map_{index}"] = mappings[column]
            joins.append(f"JOIN map_{index} ON map_{index}.value = s.{_ident(column)}")
            selected.append(f"map_{index}.label AS {_ident(column)}")
    mapped = f"SELECT {', '.join(selected)} FROM {SOURCE} AS s {' '.join(joins)}"
    helpers["suppressed_classes"] = suppressed.assign(flag=1)
    on = " AND ".join(f"g.{_ident(c)} = x.{_ident(c)}" for c in suppressed.columns)
    published = ", ".join("g." + _ident(c) for c in keep)
    select = f"SELECT {published} FROM ({mapped}) AS g LEFT JOIN suppressed_classes AS x ON {on} WHERE x.flag IS NULL"
    return select, helpers


# --- one measurement ---------------------------------------------------------------------------------------------


def _check_digest(fetch: Callable[[str], list[Any]]) -> dict[str, object]:
    """Row count and class-count digest of the written table (run after the timer; ``fetch`` runs a query)."""
    rows = fetch(f"SELECT count(*) FROM {TARGET}")[0][0]
    counts = fetch(f"SELECT {_names(QIS)}, count(*) FROM {TARGET} GROUP BY ALL")
    return {"rows": int(rows), "digest": _digest(counts)}


def _digest(rows: Any) -> str:
    text = "\n".join(sorted("|".join(map(str, row)) for row in rows))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _aggregates_digest(frame: pd.DataFrame) -> dict[str, object]:
    return {"rows": len(frame), "digest": _digest(frame.itertuples(index=False))}


def _cpu() -> float:
    """CPU seconds of this process, DuckDB's threads included (steadier than wall time on a shared machine)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one(db: Path, layer: str, op: str) -> dict[str, object]:
    """One timed operation of one layer (run in its own process by :func:`run`)."""
    applied = node(db)
    method = op if op != "group_counts" else "case"
    out: dict[str, object] = {"layer": layer, "op": op}
    cpu = _cpu()
    if layer in ("hand", "sqlglot"):
        import duckdb

        connection = duckdb.connect(str(db), config=CONFIG)
        connection.execute(f"DROP TABLE IF EXISTS {TARGET}")
        start = time.perf_counter()
        if op == "group_counts":
            query = hand_group_counts()
        else:
            select, helpers = hand_generalized(applied, method)
            for name, frame in helpers.items():  # TEMP tables of this connection, as SqlTable's helpers
                connection.register("helper_frame", frame)
                connection.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM helper_frame")
                connection.unregister("helper_frame")
            query = f"CREATE TABLE {TARGET} AS {select}"
        if layer == "sqlglot":
            import sqlglot

            mark = time.perf_counter()
            query = sqlglot.transpile(query, read="postgres", write="duckdb")[0]
            out["transpile_seconds"] = round(time.perf_counter() - mark, 4)
        if op == "group_counts":
            result = _aggregates_digest(connection.execute(query).df())
        else:
            connection.execute(query)
        seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu
        if op != "group_counts":
            result = _check_digest(lambda sql: connection.execute(sql).fetchall())
            connection.execute(f"DROP TABLE IF EXISTS {TARGET}")
        connection.close()
    elif layer == "sqlalchemy":
        import sqlalchemy as sa

        from privacy_plugins.engines import SqlTable

        engine = sa.create_engine(f"duckdb:///{db}", connect_args={"config": CONFIG})
        with engine.begin() as connection:
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS {TARGET}")
        start = time.perf_counter()
        table = SqlTable.from_table(engine, SOURCE)
        if op == "group_counts":
            result = _aggregates_digest(table.group_counts([*QIS, SA]))
            seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu
        else:
            published = table.generalized(method=method, **applied)
            with published.transaction() as connection:  # as release/pushdown.py stages it
                connection.execute(sa.text(f"CREATE TABLE {TARGET} AS {published.select_sql()}"))
            seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu
            with published.transaction() as connection:
                result = _check_digest(lambda sql: connection.exec_driver_sql(sql).fetchall())
                connection.exec_driver_sql(f"DROP TABLE IF EXISTS {TARGET}")
            published.close()
        engine.dispose()
    elif layer == "ibis":
        import ibis
        from ibis_table import IbisTable

        backend = ibis.duckdb.connect(str(db), **CONFIG)
        backend.raw_sql(f"DROP TABLE IF EXISTS {TARGET}")
        start = time.perf_counter()
        table = IbisTable.from_table(backend, SOURCE)
        if op == "group_counts":
            result = _aggregates_digest(table.group_counts([*QIS, SA]))
            seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu
        else:
            table.generalized(method=method, **applied).create_table(TARGET)  # type: ignore[attr-defined]
            seconds, cpu_seconds = time.perf_counter() - start, _cpu() - cpu
            result = _check_digest(lambda sql: backend.con.execute(sql).fetchall())
            backend.raw_sql(f"DROP TABLE IF EXISTS {TARGET}")
        backend.disconnect()
    else:
        raise SystemExit(f"unknown layer {layer!r}")
    return out | result | {"seconds": round(seconds, 3), "cpu_seconds": round(cpu_seconds, 3)}


def run(db: Path, repeat: int, ops: list[str], layers: list[str]) -> None:
    """Every layer × operation ``repeat`` times, each in a fresh process; the best time, and its ratio to ``hand``."""
    _require("ibis", "sqlglot")
    node(db)  # once, before the timed processes
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(repeat):
        for op in ops:
            for layer in layers:
                command = [sys.executable, __file__, "one", "--db", str(db), "--layer", layer, "--op", op]
                line = subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()
                measured = json.loads(line[-1])
                print(json.dumps(measured), flush=True)
                key = (op, layer)
                kept = best.setdefault(key, measured)
                kept["seconds"] = min(kept["seconds"], measured["seconds"])
                kept["cpu_seconds"] = min(kept["cpu_seconds"], measured["cpu_seconds"])
                kept["same"] = kept.get("same", True) and measured["digest"] == best[(op, layers[0])]["digest"]
    print(f"\nbest of {repeat}: wall and CPU seconds, ratio to {layers[0]}; load average now {os.getloadavg()[0]:.1f}")
    for op in ops:
        floor = best[(op, layers[0])]
        for layer in layers:
            m = best[(op, layer)]
            same = "" if m["same"] else "  DIFFERENT RESULT"
            print(
                f"{op:13} {layer:11} wall {m['seconds']:7.2f} ({m['seconds'] / floor['seconds']:.2f}x)  "
                f"cpu {m['cpu_seconds']:7.2f} ({m['cpu_seconds'] / floor['cpu_seconds']:.2f}x)  rows={m['rows']}{same}"
            )


# --- footprint: import time and installed size --------------------------------------------------------------


def _closure(requirement: str, seen: set[str]) -> set[str]:
    """The distribution names ``requirement`` installs (with its extras), as installed here."""
    match = re.match(r"([A-Za-z0-9_.\-]+)(?:\[([^\]]+)\])?", requirement)
    assert match is not None
    name, extras = match.group(1).lower().replace("_", "-"), {e.strip() for e in (match.group(2) or "").split(",")}
    if name in seen:
        return seen
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return seen
    seen.add(name)
    for line in dist.requires or []:
        spec, _, marker = line.partition(";")
        wanted = not marker or any(f'extra == "{e}"' in marker for e in extras if e)
        if not marker or wanted:
            if "extra ==" in marker and not wanted:
                continue
            if marker and "extra ==" not in marker:
                continue  # platform markers (Windows, old Pythons): left out, as on this machine
            _closure(spec.strip(), seen)
    return seen


def _size(names: set[str]) -> float:
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / 2**20


def _import_seconds(statement: str, repeat: int = 5) -> tuple[float, float]:
    """Best wall and CPU seconds of ``statement`` in a fresh interpreter (CPU: steadier on a shared machine)."""
    code = (
        "import time; w, c = time.perf_counter(), time.process_time(); "
        f"{statement}; print(time.perf_counter() - w, time.process_time() - c)"
    )
    runs = [
        tuple(
            map(
                float,
                subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(),
            )
        )
        for _ in range(repeat)
    ]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def footprint() -> None:
    """Installed size each library adds to a core-only install, and its import time (best of 5 fresh processes)."""
    _require("ibis", "sqlglot")
    core = _closure("privacy-plugins", set())
    rows = {
        "sqlalchemy + duckdb-engine (today, core)": _closure("duckdb-engine", set()) - {"duckdb"},
        "sqlglot": _closure("sqlglot", set()) - core,
        "ibis-framework[duckdb]": _closure("ibis-framework[duckdb]", set()) - core,
    }
    print(f"core-only install today: {len(core)} distributions, {_size(core):.1f} MiB")
    for label, names in rows.items():
        print(f"{label:42} {_size(names):7.1f} MiB  {sorted(names)}")
    statements = {
        "import sqlalchemy": "import sqlalchemy",
        "import duckdb_engine (+ sqlalchemy, duckdb)": "import duckdb_engine",
        "import privacy_plugins.engines.sql": "import privacy_plugins.engines.sql",
        "import sqlglot": "import sqlglot",
        "import ibis": "import ibis",
        "ibis + DuckDB backend (connect in memory)": "import ibis; ibis.duckdb.connect()",
        "duckdb_engine + connect in memory": "import sqlalchemy as sa; sa.create_engine('duckdb:///:memory:').connect()",
    }
    print(f"\n{'import (fresh interpreter, best of 5)':45}   wall      cpu")
    for label, statement in statements.items():
        wall, cpu = _import_seconds(statement)
        print(f"{label:45} {wall:6.3f} s  {cpu:6.3f} s")


# --- SQLGlot on today's hand-written statements --------------------------------------------------------------

#: Today's hand-written statements, as they read with names filled in (file: what).
STATEMENTS = {
    "engines/sql.py: columns without reflection": 'SELECT * FROM "adult" LIMIT 0',
    "engines/sql.py: a query's own names (DuckDB)": "DESCRIBE SELECT 1 AS a",
    "release/pushdown.py: stage (CTAS)": 'CREATE TABLE "t__staging_1" AS SELECT "a" FROM "adult"',
    "release/pushdown.py: swap drop": 'DROP TABLE IF EXISTS "t"',
    "release/pushdown.py: swap rename": 'ALTER TABLE "t__staging_1" RENAME TO "t"',
    "release/pushdown.py: staged Parquet (DuckDB)": "SELECT * FROM read_parquet('/w/candidate.parquet')",
    "release/destinations.py: verify count": 'SELECT COUNT(*) FROM "t__incoming_1"',
    "release/staging.py: registry create": 'CREATE TABLE "pp_working_tables" ("name" VARCHAR(255) PRIMARY KEY)',
    "release/staging.py: registry insert": 'INSERT INTO "pp_working_tables" ("name") VALUES (:name)',
    "release/staging.py: registry delete": 'DELETE FROM "pp_working_tables" WHERE "name" = :name',
    "release/staging.py: registry lock (PostgreSQL)": "SELECT pg_advisory_xact_lock(:key)",
    "release/locations.py: schema rights (PostgreSQL)": (
        "SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE'), "
        "current_setting('transaction_read_only')"
    ),
}
DIALECTS = ("duckdb", "sqlite", "postgres", "mysql", "snowflake", "bigquery", "databricks", "trino", "tsql")


def transpile() -> None:
    """Each statement read as PostgreSQL and written per dialect: where the text has to change, and how."""
    _require("sqlglot")
    import sqlglot

    def normal(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip().lower()

    changed: dict[str, int] = dict.fromkeys(DIALECTS, 0)
    for label, statement in STATEMENTS.items():
        print(f"\n{label}\n  {'written':10} {statement}")
        for dialect in DIALECTS:
            try:
                out = sqlglot.transpile(statement, read="postgres", write=dialect, unsupported_level="raise")[0]
            except sqlglot.errors.SqlglotError as error:
                out = f"!! {type(error).__name__}: {str(error).splitlines()[0][:80]}"
            if normal(out) != normal(statement):
                changed[dialect] += 1
                print(f"  {dialect:10} {out}")
    print(f"\nstatements whose text changes, of {len(STATEMENTS)}: {changed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    running = sub.add_parser("run")
    running.add_argument("--db", type=Path, required=True)
    running.add_argument("--repeat", type=int, default=2)
    running.add_argument("--ops", default=",".join(OPS))
    running.add_argument("--layers", default=",".join(LAYERS))
    single = sub.add_parser("one", help="one measurement (what run starts in a subprocess)")
    single.add_argument("--db", type=Path, required=True)
    single.add_argument("--layer", choices=LAYERS, required=True)
    single.add_argument("--op", choices=OPS, required=True)
    sub.add_parser("footprint")
    sub.add_parser("transpile")
    args = parser.parse_args()
    if args.command == "run":
        run(args.db, args.repeat, args.ops.split(","), args.layers.split(","))
    elif args.command == "one":
        print(json.dumps(one(args.db, args.layer, args.op)))
    elif args.command == "footprint":
        footprint()
    else:
        transpile()


if __name__ == "__main__":
    main()
