"""Benchmark: the full ``measure`` and k alone versus one pandas group-by, in the same run.

Baseline: ``df.groupby(qis).size().min()`` — the cheapest way a pandas user gets k.
Goal (issue 2): the whole measure set costs at most 3x the baseline, k alone at most 1x.

Run:  .venv/bin/python benchmarks/bench_measure.py [--repeat 5] [--rows 1000000]
Data: ../shared/data/adult/adult.csv (skipped with a message when absent).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

import privacy_plugins as pp

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SENSITIVE = "occupation"


def best_of(function: Callable[[], object], repeat: int) -> float:
    """Minimum wall time over ``repeat`` runs (after one warm-up run)."""
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def bench(frame: pd.DataFrame, label: str, repeat: int) -> dict[str, float]:
    baseline = best_of(lambda: frame.groupby(QIS).size().min(), repeat)
    k_alone = best_of(lambda: pp.k_anonymity(frame, quasi_identifiers=QIS), repeat)
    full = best_of(
        lambda: pp.measure(
            frame,
            quasi_identifiers=QIS,
            sensitive_attributes=[SENSITIVE],
            k=5,
            l=2,
            c=3,
            t=0.2,
            suppression_limit=0.01,
            bound=0.5,
        ),
        repeat,
    )
    assert pp.k_anonymity(frame, quasi_identifiers=QIS) == frame.groupby(QIS).size().min()
    print(
        f"{label:<26} rows={len(frame):>9,}  baseline groupby.size().min() {baseline * 1e3:8.1f} ms | "
        f"k alone {k_alone * 1e3:8.1f} ms ({k_alone / baseline:4.2f}x) | "
        f"full measure {full * 1e3:8.1f} ms ({full / baseline:4.2f}x)"
    )
    return {"baseline": baseline, "k": k_alone, "full": full}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1_000_000, help="size of the replicated table")
    args = parser.parse_args()
    if not ADULT.exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    adult = pp.read_table(ADULT)
    print(f"pandas {pd.__version__}; QIs {QIS}; sensitive {SENSITIVE}")
    bench(adult, "adult", args.repeat)
    copies = -(-args.rows // len(adult))
    big = pd.concat([adult] * copies, ignore_index=True).iloc[: args.rows].reset_index(drop=True)
    bench(big, f"adult x{copies} (replicated)", max(2, args.repeat // 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
