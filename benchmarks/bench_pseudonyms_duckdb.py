"""Benchmark: keyed pseudonyms computed inside DuckDB vs DuckDB's own ``sha256()`` over the same column.

Goal (issue 27): tokens for 10M values within 2x the time of ``sha256()`` over the same
column, in CPU time (the process's, DuckDB's threads included: the machine is shared, so
wall time is printed too but not judged). The token function is the Arrow UDF of
``engines/duckdb_pseudonyms.py`` (with numba: one compiled HMAC-SHA256 call per DuckDB
batch; ``--no-numba`` measures the hashlib path); both queries reduce to ``max()`` so
DuckDB cannot skip the work, and both run on the same table in the same process.

Run:  PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_pseudonyms_duckdb.py [--values 10000000] [--threads 2]
Data: generated here (distinct text ids); nothing is read or written.
"""

from __future__ import annotations

import argparse
import time

import duckdb

from privacy_plugins.core import pseudonym_kernel
from privacy_plugins.core.pseudonyms import PseudonymKey, new_release_salt, token
from privacy_plugins.engines.duckdb_pseudonyms import register_pseudonym_function


def _best(connection: duckdb.DuckDBPyConnection, query: str, repeat: int) -> tuple[float, float]:
    """Best CPU time and best wall time of ``repeat`` runs."""
    cpu, wall = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        connection.sql(query).fetchall()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return min(cpu), min(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=10_000_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-numba", action="store_true", help="measure the hashlib path (no compiled kernel)")
    args = parser.parse_args()
    if args.no_numba:
        pseudonym_kernel.AVAILABLE = False
    connection = duckdb.connect()
    connection.sql(f"SET threads = {args.threads}")
    key = PseudonymKey(b"benchmark key, not a secret: 32+ bytes long")
    salt = new_release_salt()
    register_pseudonym_function(connection, "pp_token", key, scope="release", salt=salt)
    connection.sql(f"CREATE TABLE ids AS SELECT 'patient-' || i::VARCHAR AS id FROM range({args.values}) r(i)")
    first = connection.execute("SELECT pp_token(id) FROM ids LIMIT 1").fetchall()[0]
    assert first is not None and first[0] == token("patient-0", key, scope="release", salt=salt)
    sha, sha_wall = _best(connection, "SELECT max(sha256(id)) FROM ids", args.repeat)
    tokens, tokens_wall = _best(connection, "SELECT max(pp_token(id)) FROM ids", args.repeat)
    path = "hashlib" if args.no_numba or not pseudonym_kernel.AVAILABLE else "numba kernel"
    print(f"{args.values:,} distinct values, {args.threads} DuckDB threads, best of {args.repeat}; token path: {path}")
    print(f"  duckdb sha256()       CPU {sha:8.2f} s   wall {sha_wall:8.2f} s")
    print(f"  pp_token (HMAC UDF)   CPU {tokens:8.2f} s   wall {tokens_wall:8.2f} s")
    print(f"  ratio (CPU) {tokens / sha:.2f}x (goal <= 2x); ratio (wall) {tokens_wall / sha_wall:.2f}x")


if __name__ == "__main__":
    main()
