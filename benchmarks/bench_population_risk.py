"""Benchmark: population risk (issue 30) on Adult against ARX 3.9.2, in one run.

For every non-empty subset of Adult's 7 QIs (127) and sampling fractions 0.01,
0.1 and 0.5, ARX's worker answers ``prisk`` (``../shared/arx``) and ours is
:func:`privacy_plugins.core.metrics.population_subsets.population_risk_by_subset`. Asserted to
1e-6 (absolute, every value is a fraction): sample uniques, highest, average,
marketer, Pitman, Zayatz, SNB and Dankar (``None`` where ARX has no estimate);
``prosecutor`` equals ARX's estimated prosecutor risk. ``journalist`` is printed
next to ARX's, not compared: ARX's "estimated journalist risk" on a table
without a population is 1/(smallest sample class), ours is 1/(smallest
population class) under the population model (docs/population-risk.md).

Timing: all 127 subsets at one fraction, ours (``population_risk_by_subset``:
encoding and grouping included) against ARX (127 ``prisk`` round trips, each
grouping the loaded rows), interleaved, best of --repeat, wall time.

``--duckdb-rows N`` (e.g. 10000000): Adult replicated to N rows inside DuckDB (age
jittered, as ``bench_engines.py make``); every subset's class sizes come from one
``GROUP BY`` in the database (only the sizes reach Python, never a row) and
``population_risk_from_sizes`` turns them into the same measures; time printed.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/bench_population_risk.py [--repeat 3] [--duckdb-rows 10000000]
Data: ../shared/data and ../shared/arx (skipped with a message when absent).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import pandas as pd

from privacy_plugins.core.metrics.population import PopulationModel
from privacy_plugins.core.metrics.population_subsets import population_risk_by_subset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _adult import ADULT, QIS, load_adult  # a sibling script, not a package
from bench_lattice import load_arx

FRACTIONS = (0.01, 0.1, 0.5)
COMPARED = ("sample_uniques", "prosecutor", "highest", "average", "marketer", "pitman", "zayatz", "snb", "dankar")
TOLERANCE = 1e-6
SHOWN = 12


def subsets() -> list[list[str]]:
    return [list(c) for size in range(1, len(QIS) + 1) for c in itertools.combinations(QIS, size)]


def ours(adult: pd.DataFrame, fraction: float) -> dict[tuple[str, ...], dict[str, object]]:
    """Every subset's population risk in one call (each column encoded once)."""
    risks = population_risk_by_subset(
        adult, quasi_identifiers=QIS, population=PopulationModel(sampling_fraction=fraction)
    )
    return {subset: risk.to_dict() for subset, risk in risks.items()}  # type: ignore[misc]


def differs(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(float(a) - float(b)) > TOLERANCE  # type: ignore[arg-type]


def snb_explained(mine: dict[str, object], theirs: dict[str, object], bad: list[str]) -> bool:
    """ARX has no SNB estimate where ours has one, and Dankar differs only through it.

    ARX's SNB solves a c_2 equation with (1 − d)^(α+2) where Chen & Keller-McNulty's
    has (1 − d)^−(α+2) (docs/population-risk.md; tests/core/metrics/test_uniqueness.py
    checks ours against the exact expectation), so its solver finds no root and its
    Dankar rule falls back to Zayatz; ours takes min(Zayatz, SNB).
    """
    if not set(bad) <= {"snb", "dankar"} or theirs["snb"] is not None or mine["snb"] is None:
        return False
    zayatz, snb = float(mine["zayatz"]), float(mine["snb"])  # type: ignore[arg-type]
    return not differs(theirs["dankar"], zayatz) and not differs(mine["dankar"], min(zayatz, snb))


def status(bad: list[str]) -> str:
    if not bad:
        return "yes"
    return ("explained " if bad[0].startswith("(SNB") else "NO: ") + ",".join(bad)


def compare(adult: pd.DataFrame, arx: object) -> int:
    failures = explained = 0
    rows = []
    mine_all = {fraction: ours(adult, fraction) for fraction in FRACTIONS}
    for qis in subsets():
        for fraction in FRACTIONS:
            mine = mine_all[fraction][tuple(qis)]
            theirs = arx.prisk(qis, fraction)  # type: ignore[attr-defined]
            bad = [key for key in COMPARED if differs(mine[key], theirs[key])]
            if bad and snb_explained(mine, theirs, bad):
                explained += 1
                bad = [f"(SNB: ARX null, ours {float(mine['snb']):.3e}; ARX dankar = our zayatz)"]  # type: ignore[arg-type]
            else:
                failures += bool(bad)
            rows.append((qis, fraction, mine, theirs, bad))
    print(f"{'QIs':<44} {'f':>5} {'uniques':>9} {'average':>9} {'pitman':>11} {'zayatz':>11} {'snb':>9} "
          f"{'dankar':>11} {'journ. ours/ARX':>17}  equal")  # fmt: skip
    step = max(1, len(rows) // SHOWN)
    for qis, fraction, mine, theirs, bad in rows[::step] + [r for r in rows if r[4]]:

        def show(x: object) -> str:
            return "null" if x is None else f"{float(x):.3e}"  # type: ignore[arg-type]

        print(f"{','.join(q[:4] for q in qis):<44} {fraction:>5} {show(mine['sample_uniques']):>9} "
              f"{show(mine['average']):>9} {show(mine['pitman']):>11} {show(mine['zayatz']):>11} "
              f"{show(mine['snb']):>9} "
              f"{show(mine['dankar']):>11} {show(mine['journalist'])}/{show(theirs['journalist'])}  "
              f"{status(bad)}")  # fmt: skip
    available = {key: sum(r[3][key] is not None for r in rows) for key in ("pitman", "zayatz", "snb", "dankar")}
    print(f"{len(rows)} comparisons (127 subsets x {len(FRACTIONS)} fractions): {failures} with a difference > "
          f"{TOLERANCE:g}, {explained} where only ARX's SNB is missing (explained above); "
          f"ARX estimates available: {available}")  # fmt: skip
    return failures


def timing(adult: pd.DataFrame, arx: object, repeat: int, fraction: float = 0.1) -> float:
    every = subsets()
    best_ours = best_arx = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for qis in every:
            arx.prisk(qis, fraction)  # type: ignore[attr-defined]
        best_arx = min(best_arx, time.perf_counter() - start)
        start = time.perf_counter()
        ours(adult, fraction)
        best_ours = min(best_ours, time.perf_counter() - start)
    ratio = best_ours / best_arx
    print(f"all 127 subsets at f={fraction}: ours {best_ours:.3f} s, ARX {best_arx:.3f} s, ours/ARX = {ratio:.2f}")
    return ratio


def duckdb_subsets(rows: int, fraction: float = 0.1) -> None:
    """Population risk of all 127 subsets of ``rows`` Adult-like rows, each grouped inside DuckDB."""
    import tempfile

    from bench_engines import make  # a sibling script, not a package

    from privacy_plugins.core.metrics.population import population_risk_from_sizes

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "adult_big.duckdb"
        started = time.perf_counter()
        make(rows, db)
        print(f"DuckDB: Adult x{-(-rows // 30162)} = {rows:,} rows built in {time.perf_counter() - started:.1f} s")
        import duckdb

        connection = duckdb.connect(str(db), read_only=True)
        started = time.perf_counter()
        full = None
        for qis in subsets():
            columns = ", ".join(f'"{q}"' for q in qis)
            sizes = connection.execute(f"SELECT count(*) FROM adult_big GROUP BY {columns}").fetchnumpy()[
                "count_star()"
            ]
            risk = population_risk_from_sizes(sizes, population_size=round(rows / fraction))
            full = risk if len(qis) == len(QIS) else full
        seconds = time.perf_counter() - started
        connection.close()
    assert full is not None
    print(f"DuckDB GROUP BY, 127 subsets at f={fraction}: {seconds:.1f} s; all 7 QIs: sample uniques "
          f"{full.sample_uniques:.4f}, Pitman {full.pitman}, Zayatz {full.zayatz}, Dankar {full.dankar}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duckdb-rows", type=int, default=0, help="also group N Adult-like rows inside DuckDB")
    args = parser.parse_args()
    if args.duckdb_rows:
        duckdb_subsets(args.duckdb_rows)
    loaded = load_adult()
    client = load_arx()
    if loaded is None or client is None:
        return 0
    adult = loaded[0]
    with client.ArxWorker(xmx="2g") as arx:
        arx.load(str(ADULT / "adult.csv"), str(ADULT), QIS, "occupation")
        for _ in range(2):  # JIT warm-up
            for qis in subsets()[:20]:
                arx.prisk(qis, 0.1)
        failures = compare(adult, arx)
        ratio = timing(adult, arx, args.repeat)
    assert failures == 0, f"{failures} subset/fraction pairs differ from ARX by more than {TOLERANCE:g}"
    assert ratio < 1.0, f"ours/ARX = {ratio:.2f}: slower than ARX on the 127 subsets"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
