"""Benchmark: clustering (k-member, two-phase A and B) beside Mondrian strict and optimal full-domain on Adult.

Prints, per k in {5, 10, 20}, NCP and wall/CPU seconds of greedy k-member, two-phase with
splitting A and B, Mondrian strict and the optimal full-domain search (0%
suppression), every QI along its Adult hierarchy (age too), so NCP is the
hierarchy-domain NCP, ARX's 1 − granularity. Anchor: ARX 3.9.2 local recoding
on the same QIs reaches NCP 0.0307 (k=5, 0.6 s), 0.0455 (k=10, 1.2 s), 0.0637 (k=20, 1.6 s)
(re-run with ``benchmarks/arx_local_recoding/LocalRec.java``: same NCPs, 0 rows suppressed).
``--rows N`` runs on the first N rows only (scaling).

Measured 2026-11-26 (issue 28), seed 0, one run each, on a shared 2-core machine (load 4–6),
NCP / CPU seconds:

    k   k-member        two-phase A     two-phase B     Mondrian strict  optimal FD   ARX
    5   0.0379 /  2.0   0.0265 /  9.9   0.0263 /  9.1   0.0767 / 0.1     0.6333      0.0307
   10   0.0660 /  1.2   0.0417 / 11.5   0.0417 / 11.2   0.1252 / 0.1     0.6333      0.0455
   20   0.1046 /  1.2   0.0618 / 16.3   0.0618 / 14.1   0.1742 / 0.1     0.6604      0.0637

(2026-11-23, before issue 28: k-member 0.0377 / 12.3, 0.0653 / 9.4, 0.1049 / 7.7; two-phase B
0.0262 / 21.9, 0.0418 / 26.3, 0.0616 / 25.8.) Two-phase's CPU is now mostly phase 1 (bottom-up
merging, ~7–9 s: the steps after the first pass each scan every cluster); the local search 1–4 s.
``bench_local_recoding.py`` times ARX in the same run.

Run:  .venv/bin/python benchmarks/bench_clustering.py [--rows 0] [--ks 5,10,20] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from _adult import QIS, load_adult

from privacy_plugins.core.anonymize import AnonymizationResult, anonymize, anonymize_full_domain
from privacy_plugins.core.models import KAnonymity

ARX = {5: (0.0307, 0.6), 10: (0.0455, 1.2), 20: (0.0637, 1.6)}


def timed(function: Callable[[], AnonymizationResult]) -> tuple[AnonymizationResult, float, float]:
    """The result, its wall seconds and its CPU seconds (this process; fairer on a shared machine)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = function()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    assert result.passed
    return result, seconds, cpu_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=0, help="use the first ROWS rows (0: all)")
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loaded = load_adult(args.rows)
    if loaded is None:
        return 0
    adult, hierarchies = loaded
    ks = [int(k) for k in args.ks.split(",")]
    runs: list[tuple[str, str, dict[str, str]]] = [
        ("k-member", "k-member", {}),
        ("two-phase A", "two-phase", {"split": "a"}),
        ("two-phase B", "two-phase", {"split": "b"}),
        ("mondrian strict", "mondrian", {"mode": "strict"}),
    ]
    print(f"Adult {len(adult):,} rows, QIs {', '.join(QIS)} (all along hierarchies); seed {args.seed}; one run each")
    print(
        f"{'k':>3} | "
        + " | ".join(f"{name:>15} NCP   wall    cpu" for name, _, _ in runs)
        + " | optimal FD NCP      s | ARX NCP    s"
    )
    for k in ks:
        cells = []
        ncps = {}
        for name, algorithm, options in runs:
            result, seconds, cpu = timed(
                lambda algorithm=algorithm, options=options, k=k: anonymize(
                    adult, algorithm=algorithm, quasi_identifiers=QIS, hierarchies=hierarchies,
                    models=[KAnonymity(k)], seed=args.seed, **options,
                )
            )  # fmt: skip
            ncps[name] = result.utility.ncp
            cells.append(f"{result.utility.ncp:19.4f} {seconds:6.2f} {cpu:6.2f}")
        fd, fd_s, _ = timed(
            lambda k=k: anonymize_full_domain(
                adult, quasi_identifiers=QIS, hierarchies=hierarchies, models=[KAnonymity(k)], suppression_limit=0.0
            )
        )
        arx = ARX.get(k)
        arx_cell = f"{arx[0]:7.4f} {arx[1]:4.1f}" if arx and not args.rows else "      -    -"
        print(f"{k:>3} | " + " | ".join(cells) + f" | {fd.utility.ncp:14.4f} {fd_s:6.2f} | {arx_cell}")
        best = min(ncps["two-phase A"], ncps["two-phase B"])
        print(f"      two-phase (best of A/B) below k-member: {'yes' if best < ncps['k-member'] else 'NO'}", end="")
        if arx and not args.rows:
            print(f"; best clustering at or below ARX: {'yes' if min(ncps.values()) <= arx[0] else 'NO'}", end="")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
