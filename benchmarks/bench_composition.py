"""Benchmark: the intersection attack on the same spec released on Adult as it grows (issue 26's "today").

The spec: the seven Adult QIs along their hierarchies, k = 5 and distinct 2-diversity of
``occupation``, 2% suppression. Adult is shuffled (``--seed``) and released on growing
prefixes (``--sizes``, default 24,000 / 26,000 / 28,000 / 30,162 rows), each release
anonymized independently, re-checked by the core and passing. The adversary knows the QI
values of every person of the full table and intersects the occupation sets of the classes
that cover them (:func:`privacy_plugins.core.composition.intersection_attack`). Printed per
algorithm: people disclosed by any one release alone (max), by the worst pair, by all
releases together (and of those, to their own occupation), people left with fewer than 2
occupations over all releases, and seconds.

Measured 2026-11-26 on main dff4513 + this module, shared 2-core machine (seconds are wall):

    4 shuffled releases (seed 0): 24,000 / 26,000 / 28,000 / 30,162 rows
    algorithm   alone  worst pair  all (share)    correct  < 2 values  smallest  empty
    optimal         0   2 (0, 2)     2 (0.01%)          2           2         1      0
    mondrian        0   1 (1, 3)     1 (0.00%)          0           1         1      0
    two-phase       0  96 (0, 3)   233 (0.77%)        196         237         0      4
    bucket          0  36 (0, 2)   147 (0.49%)        118         150         0      3

    2 releases in file order (--sizes 27000,30162 --seed -1), the issue's first column
    optimal 0, mondrian 1 (1 correct), two-phase 68 (61 correct), bucket 27 (25 correct);
    the issue measured 0 / 1 / 57 / 20. The attack takes 0.4–2.2 s per set of releases.

Run:  .venv/bin/python benchmarks/bench_composition.py [--sizes 24000,26000,28000,30162]
      [--algorithms optimal,mondrian,two-phase,bucket] [--seed 0]   (--seed -1: rows in file order)
"""

from __future__ import annotations

import argparse
import time

from _adult import QIS, load_adult

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity

SENSITIVE = "occupation"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="24000,26000,28000,30162")
    parser.add_argument("--algorithms", default="optimal,mondrian,two-phase,bucket")
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (-1: file order)")
    args = parser.parse_args()
    loaded = load_adult()
    if loaded is None:
        return 0
    adult, hierarchies = loaded
    if args.seed >= 0:
        adult = adult.sample(frac=1.0, random_state=args.seed).reset_index(drop=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    models = [KAnonymity(5), DistinctLDiversity(SENSITIVE, 2)]
    order = f"shuffled (seed {args.seed})" if args.seed >= 0 else "in file order"
    print(
        f"Adult {len(adult):,} rows {order}, "
        f"releases of {', '.join(f'{s:,}' for s in sizes)} rows; "
        f"k=5, distinct 2-diversity of {SENSITIVE}, 2% suppression; QIs {', '.join(QIS)}"
    )
    print(
        f"{'algorithm':>10} | {'alone (max)':>11} | {'worst pair':>10} | {'all':>12} | {'correct':>7} | "
        f"{'< 2 values':>10} | {'smallest':>8} | {'empty':>5} | {'anonymize s':>11} | {'attack s':>8}"
    )
    for algorithm in args.algorithms.split(","):
        started = time.perf_counter()
        releases = []
        for size in sizes:
            result = anonymize(
                adult.iloc[:size],
                algorithm=algorithm,
                quasi_identifiers=QIS,
                hierarchies=hierarchies,
                models=models,
                suppression_limit=0.02,
                sensitive_attributes=[SENSITIVE],
                seed=max(args.seed, 0),
            )
            assert result.passed, f"{algorithm} release of {size} rows did not pass its own check"
            releases.append(result.table)
        anonymized = time.perf_counter() - started
        started = time.perf_counter()
        report = intersection_attack(
            adult.iloc[: max(sizes)],
            releases,
            quasi_identifiers=QIS,
            sensitive_attribute=SENSITIVE,
            hierarchies=hierarchies,
            l=2,
        )
        attacked = time.perf_counter() - started
        alone = max(count.disclosed for count in report.per_release)
        pair = max(report.pairs, key=lambda count: count.disclosed, default=report.overall)
        share = report.overall.disclosed / report.records
        print(
            f"{algorithm:>10} | {alone:>11,} | {pair.disclosed:>6,} {pair.releases!s:>3} | "
            f"{report.overall.disclosed:>5,} {share:>6.2%} | {report.overall.disclosed_correctly:>7,} | "
            f"{report.overall.below_l:>10,} | "
            f"{report.overall.smallest!s:>8} | {report.overall.empty:>5,} | {anonymized:>11.1f} | {attacked:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
