"""Benchmark: direct-identifier detection on a generated 1M-row, 20-column table, and token throughput.

Detection goal (issue 27): every identifier column flagged, no look-alike flagged,
under 5 s on 1M rows in memory and pushed down in DuckDB (the database counts each column
and draws a random sample of its distinct values; only the sample is judged in Python:
``engines/identifier_sample.py``, as the release gate and the GX expectation do). Times are
best-of-three wall and CPU (the machine is shared: CPU time is what the goal is judged on
when the machine is loaded). Tokens: ``pseudonymize`` over 10M values versus
``hashlib.sha256`` over the same values' bytes in the same run (the plain hash a
user would otherwise write; it has no key, no salt and no encoding).

Run:  PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_identifiers.py [--rows 1000000] [--tokens 10000000]
Data: generated here (seeded); nothing is read or written.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np
import pandas as pd

from privacy_plugins.core.identifiers import detect_identifiers
from privacy_plugins.core.pseudonyms import PseudonymKey, new_release_salt, pseudonymize

POOL = 200_000
VIN_CHARS = np.frombuffer(b"ABCDEFGHJKLMNPRSTUVWXYZ0123456789", dtype=np.uint8)


def _text(matrix: np.ndarray) -> np.ndarray:
    """Rows of a uint8 character matrix as Python strings."""
    width = matrix.shape[1]
    return np.ascontiguousarray(matrix).view(f"S{width}").ravel().astype(f"U{width}").astype(object)


def _digit_matrix(rng: np.random.Generator, count: int, width: int) -> np.ndarray:
    return rng.integers(0, 10, size=(count, width), dtype=np.int64)


def _luhn_complete(rng: np.random.Generator, count: int) -> np.ndarray:
    digits = _digit_matrix(rng, count, 16)
    digits[:, 0] = 4
    reversed_body = digits[:, 14::-1]
    doubled = reversed_body[:, 0::2] * 2
    doubled -= 9 * (doubled > 9)
    digits[:, 15] = (10 - (doubled.sum(axis=1) + reversed_body[:, 1::2].sum(axis=1)) % 10) % 10
    return _text((digits + 48).astype(np.uint8))


def _ibans(rng: np.random.Generator, count: int) -> np.ndarray:
    bban = _digit_matrix(rng, count, 18)
    remainder = np.zeros(count, dtype=np.int64)
    for column in [*bban.T, *np.array([[1], [3], [1], [4], [0], [0]]).repeat(count, axis=1)]:  # + "DE00"
        remainder = (remainder * 10 + column) % 97
    check = 98 - remainder
    prefix = np.column_stack([np.full(count, ord("D")), np.full(count, ord("E")), check // 10 + 48, check % 10 + 48])
    return _text(np.column_stack([prefix, bban + 48]).astype(np.uint8))


def _vins(rng: np.random.Generator, count: int) -> np.ndarray:
    chars = VIN_CHARS[rng.integers(0, len(VIN_CHARS), size=(count, 17))]
    value = np.zeros(256, dtype=np.int64)
    value[48:58] = np.arange(10)
    for letters, start in (("ABCDEFGH", 1), ("JKLMN", 1), ("P", 7), ("R", 9), ("STUVWXYZ", 2)):
        for offset, letter in enumerate(letters):
            value[ord(letter)] = start + offset
    weights = np.array([8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2])
    remainder = (value[chars] * weights).sum(axis=1) % 11
    chars[:, 8] = np.where(remainder == 10, ord("X"), remainder + 48)
    return _text(chars)


def _formatted(template: str, *parts: np.ndarray) -> np.ndarray:
    return pd.Series(zip(*parts, strict=True)).map(lambda p: template.format(*p)).to_numpy(dtype=object)


def pools(rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = POOL
    first = np.array(["John", "Mary", "Aisha", "Wei", "Carlos", "Emma", "Priya", "Liam", "Olivia", "Noah"])
    last = np.array(["Smith", "Nguyen", "Garcia", "Khan", "Brown", "Patel", "Miller", "Lopez", "Kim", "Okafor"])
    area = rng.integers(1, 900, n)
    return {
        "full_name": _formatted("{} {}", rng.choice(first, n), rng.choice(last, n)),
        "email": _formatted("user{}@example.org", np.arange(n)),
        "phone": _formatted(
            "({}) {}-{:04d}", rng.integers(200, 999, n), rng.integers(200, 999, n), rng.integers(0, 9999, n)
        ),
        "ssn": _formatted(
            "{:03d}-{:02d}-{:04d}", np.where(area == 666, 667, area), rng.integers(1, 99, n), rng.integers(1, 9999, n)
        ),
        "client_ip": _formatted(
            "10.{}.{}.{}", rng.integers(0, 256, n), rng.integers(0, 256, n), rng.integers(0, 256, n)
        ),
        "homepage": _formatted("https://social.example/u/{}", np.arange(n)),
        "card": _luhn_complete(rng, n),
        "payout_iban": _ibans(rng, n),
        "vin": _vins(rng, n),
        "notes": _formatted(
            "Patient {} reported mild pain after the visit on day {}.", np.arange(n), rng.integers(1, 30, n)
        ),
        "order_number": _formatted("{:010d}", rng.integers(10**9, 10**10 - 1, n)),
        "product_code": _text((_digit_matrix(rng, n, 16) + 48).astype(np.uint8)),
        "sku": _formatted("PRD-{:05d}", rng.integers(0, 99999, n)),
    }


def generate(rows: int, seed: int = 27) -> tuple[pd.DataFrame, set[str]]:
    rng = np.random.default_rng(seed)
    pool = pools(rng)
    picks = {name: values[rng.integers(0, len(values), rows)] for name, values in pool.items()}
    frame = pd.DataFrame(
        {
            **{name: picks[name] for name in ("full_name", "email", "phone", "ssn", "client_ip", "homepage")},
            **{name: picks[name] for name in ("card", "payout_iban", "vin", "notes")},
            "date_of_birth": pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 30000, rows), unit="D"),
            "zip": rng.integers(1000, 99999, rows),
            "customer_id": rng.permutation(rows),
            # look-alikes: none of these may be flagged
            "order_number": picks["order_number"],
            "product_code": picks["product_code"],
            "sku": picks["sku"],
            "age": rng.integers(0, 100, rows),
            "item_count": rng.integers(0, 50, rows),
            "age_group": rng.choice(np.array(["[0-20)", "[20-40)", "[40-60)", "[60-80)", "[80-100)"]), rows),
            "visit_date": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1000, rows), unit="D"),
        }
    )
    identifiers = set(frame.columns[:13])
    return frame, identifiers


def _judged(flagged: dict[str, str], identifiers: set[str], label: str, wall: list[float], cpu: list[float]) -> bool:
    missed = sorted(identifiers - set(flagged))
    wrong = sorted(set(flagged) - identifiers)
    runs = ", ".join(f"{t:.2f}" for t in wall)
    print(
        f"detection {label}: best wall {min(wall):.2f} s of {runs}; best CPU {min(cpu):.2f} s; "
        f"missed identifiers: {missed or 'none'}; flagged look-alikes: {wrong or 'none'}"
    )
    return not missed and not wrong and min(cpu) < 5


def bench_detection_duckdb(frame: pd.DataFrame, identifiers: set[str]) -> bool:
    """The same table in a DuckDB file; counts and distinct samples drawn by DuckDB (through SQLAlchemy)."""
    import tempfile
    from pathlib import Path

    import duckdb
    import sqlalchemy as sa

    from privacy_plugins.engines.identifier_sample import sample_distinct_sql

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "people.duckdb"
        with duckdb.connect(str(path)) as connection:
            connection.register("frame", frame)
            connection.execute("CREATE TABLE people AS SELECT * FROM frame")
        engine = sa.create_engine(f"duckdb:///{path}")
        table = sa.table("people", *(sa.column(str(c)) for c in frame.columns))
        wall, cpu = [], []
        for _ in range(3):
            start, start_cpu = time.perf_counter(), time.process_time()
            with engine.connect() as connection:
                sample = sample_distinct_sql(connection, table, [str(c) for c in frame.columns], 5000)
            flagged = {}
            for name, values in sample.drawn.items():
                for f in detect_identifiers(values.to_frame(name), totals=sample.totals):
                    flagged[str(f.column)] = f.category
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        engine.dispose()
    rows_out = sum(len(v) for v in sample.drawn.values())
    print(f"  DuckDB sent back {rows_out:,} sampled distinct values of {len(frame):,} rows x {frame.shape[1]} columns")
    return _judged(flagged, identifiers, "pushed down in DuckDB", wall, cpu)


def bench_detection(rows: int) -> bool:
    start = time.perf_counter()
    frame, identifiers = generate(rows)
    print(f"generated {rows:,} rows x {frame.shape[1]} columns in {time.perf_counter() - start:.1f} s")
    times, cpu = [], []
    for _ in range(3):  # the machine is shared: report the best of three
        start, start_cpu = time.perf_counter(), time.process_time()
        findings = detect_identifiers(frame)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    flagged = {str(f.column): f.category for f in findings}
    for column, category in flagged.items():
        print(f"  {column:15s} -> {category}")
    in_memory = _judged(flagged, identifiers, "in memory", times, cpu)
    return bench_detection_duckdb(frame, identifiers) and in_memory


def bench_tokens(count: int) -> None:
    values = pd.Series(np.char.add("P", np.arange(count).astype("U9")).astype(object))  # all distinct: worst case
    key = PseudonymKey(b"benchmark key, never a real one!")
    start = time.perf_counter()
    blobs = [v.encode() for v in values]
    baseline = [hashlib.sha256(b).digest() for b in blobs]
    sha_time = time.perf_counter() - start
    del blobs, baseline
    start = time.perf_counter()
    tokens = pseudonymize(values, key, salt=new_release_salt())
    token_time = time.perf_counter() - start
    assert tokens.notna().all()
    print(
        f"tokens: {count:,} distinct values: pseudonymize {token_time:.2f} s ({count / token_time / 1e6:.2f} M/s),"
        f" hashlib.sha256 {sha_time:.2f} s; ratio {token_time / sha_time:.2f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tokens", type=int, default=10_000_000, help="0: skip the token timing")
    arguments = parser.parse_args()
    ok = bench_detection(arguments.rows)
    if arguments.tokens:
        bench_tokens(arguments.tokens)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
