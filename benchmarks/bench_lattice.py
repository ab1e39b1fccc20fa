"""Benchmark: optimal full-domain search on Adult next to ARX 3.9.2's optimum, plus an exhaustive scan.

Prints, per target, our NCP, node, suppressed rows, time and nodes checked beside the
ARX reference figures of issue 3 (ARX optimal search, Loss = NCP, 2 cores), and the
time of an exhaustive scan of the same lattice in the same run (ratio = optimal/exhaustive).

Run:  .venv/bin/python benchmarks/bench_lattice.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize_full_domain
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SA = "occupation"
# (label, models, suppression limit, ARX NCP, ARX node, ARX median time in s)
CASES: list[tuple[str, list[PrivacyModel], float, float, tuple[int, ...], float]] = [
    ("k=5", [KAnonymity(5)], 0.0, 0.6333, (4, 3, 1, 2, 0, 0, 2), 0.051),
    ("k=5", [KAnonymity(5)], 0.05, 0.1765, (3, 1, 0, 1, 0, 0, 1), 0.244),
    ("k=10", [KAnonymity(10)], 0.05, 0.2361, (3, 1, 1, 1, 0, 0, 1), 0.253),
    ("distinct l=2", [DistinctLDiversity(SA, 2)], 0.05, 0.1295, (3, 1, 0, 1, 0, 0, 0), 0.372),
    ("entropy l=2", [EntropyLDiversity(SA, 2)], 0.05, 0.1523, (3, 2, 0, 1, 0, 0, 0), 0.504),
    ("recursive (3,2)", [RecursiveCLDiversity(SA, 3, 2)], 0.05, 0.1392, (3, 1, 0, 1, 0, 0, 0), 0.438),
    ("equal t=0.2", [TCloseness(SA, 0.2)], 0.05, 0.8168, (4, 3, 1, 1, 1, 1, 2), 1.4),
]


def run(frame, hierarchies, models, limit, algorithm):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = anonymize_full_domain(
        frame, quasi_identifiers=QIS, hierarchies=hierarchies, models=models, suppression_limit=limit,
        algorithm=algorithm,
    )  # fmt: skip
    return result, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not (ADULT / "adult.csv").exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    frame = pp.read_table(ADULT / "adult.csv")
    hierarchies = load_hierarchies(ADULT, columns=QIS)
    print(f"{'target':<16}{'sup':>5} | {'NCP':>7} {'ARX':>7} | {'node':<22}{'same':>5} | {'suppr':>6} | "
          f"{'time':>7} {'ARX':>6} | {'checked':>8} | {'exhaustive':>10} {'ratio':>6}")  # fmt: skip
    for label, models, limit, arx_ncp, arx_node, arx_time in CASES:
        times = []
        for _ in range(args.repeat):
            result, seconds = run(frame, hierarchies, models, limit, "optimal")
            times.append(seconds)
        exhaustive, exhaustive_seconds = run(frame, hierarchies, models, limit, "exhaustive")
        assert round(exhaustive.utility.ncp, 12) == round(result.utility.ncp, 12), "optimal differs from exhaustive"
        node = tuple(result.details.levels.values())
        median = statistics.median(times)
        print(
            f"{label:<16}{limit:>5.0%} | {result.utility.ncp:7.4f} {arx_ncp:7.4f} | {node!s:<22}"
            f"{'yes' if node == arx_node else 'no':>5} | {result.suppressed:>6} | {median * 1e3:5.0f}ms "
            f"{arx_time * 1e3:4.0f}ms | {result.details.nodes_checked:>4}/{result.details.lattice_size} | "
            f"{exhaustive_seconds * 1e3:8.0f}ms {median / exhaustive_seconds:6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
