"""Benchmark: Mondrian (strict, relaxed) beside the optimal full-domain anonymizer on Adult, and at 1M rows.

Prints, per k in {5, 10, 50}, NCP and seconds of the optimal full-domain search
(0% suppression) and of Mondrian strict and relaxed, age published as ranges; the
ratios Mondrian/full-domain are from the same run. Then Mondrian with age
generalized along its hierarchy, l-diversity and t-closeness, and Adult replicated
to ``--rows`` records (age jittered by ±2, clipped to the observed range).

Run:  .venv/bin/python benchmarks/bench_mondrian.py [--repeat 3] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import privacy_plugins as pp
from privacy_plugins.core.anonymize import AnonymizationResult, anonymize_full_domain
from privacy_plugins.core.anonymize.mondrian import anonymize_mondrian
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, PrivacyModel, TCloseness

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SA = "occupation"


def timed(function: Callable[[], AnonymizationResult], repeat: int) -> tuple[AnonymizationResult, float]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    assert result is not None and result.passed
    return result, statistics.median(times)


def mondrian(frame: pd.DataFrame, hierarchies: dict[str, Hierarchy], models: list[PrivacyModel], mode: str):  # type: ignore[no-untyped-def]
    return lambda: anonymize_mondrian(
        frame, quasi_identifiers=QIS, models=models, hierarchies=hierarchies, mode=mode,  # type: ignore[arg-type]
    )  # fmt: skip


def replicate(adult: pd.DataFrame, rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    big = adult.iloc[rng.integers(0, len(adult), rows)].reset_index(drop=True)
    low, high = int(adult["age"].min()), int(adult["age"].max())
    big["age"] = np.clip(big["age"].to_numpy() + rng.integers(-2, 3, rows), low, high)
    return big


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000, help="size of the replicated table (0: skip)")
    args = parser.parse_args()
    if not (ADULT / "adult.csv").exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    adult = pp.read_table(ADULT / "adult.csv")
    full = load_hierarchies(ADULT, columns=QIS)
    ranges = {q: h for q, h in full.items() if q != "age"}  # age published as ranges

    print(f"Adult {len(adult):,} rows, QIs {', '.join(QIS)}; median of {args.repeat} runs; age as ranges for Mondrian")
    print(f"{'k':>4} | {'full-domain NCP':>15} {'s':>6} | {'strict NCP':>10} {'s':>6} | {'relaxed NCP':>11} {'s':>6} | "
          f"{'strict/FD':>9} {'relaxed/FD':>10} {'relaxed/strict':>14}")  # fmt: skip
    relaxed_not_worse = []
    for k in (5, 10, 50):
        models: list[PrivacyModel] = [KAnonymity(k)]
        fd, fd_s = timed(
            lambda models=models: anonymize_full_domain(
                adult, quasi_identifiers=QIS, hierarchies=full, models=models, suppression_limit=0.0
            ),
            args.repeat,
        )
        st, st_s = timed(mondrian(adult, ranges, models, "strict"), args.repeat)
        rx, rx_s = timed(mondrian(adult, ranges, models, "relaxed"), args.repeat)
        relaxed_not_worse.append(rx.utility.ncp <= st.utility.ncp)
        print(
            f"{k:>4} | {fd.utility.ncp:15.4f} {fd_s:6.3f} | {st.utility.ncp:10.4f} {st_s:6.3f} | "
            f"{rx.utility.ncp:11.4f} {rx_s:6.3f} | {st.utility.ncp / fd.utility.ncp:9.3f} "
            f"{rx.utility.ncp / fd.utility.ncp:10.3f} {rx.utility.ncp / st.utility.ncp:14.3f}"
        )
    print(f"relaxed NCP <= strict NCP: {'yes' if all(relaxed_not_worse) else 'NO'} for k = 5, 10, 50")

    print("\nMondrian variants on Adult (median seconds; classes = published equivalence classes)")
    print(f"{'models':<22}{'age':<10}{'mode':<9}| {'NCP':>7} {'C_DM':>12} {'classes':>8} {'s':>7}")
    variants: list[tuple[str, list[PrivacyModel]]] = [
        ("k=10", [KAnonymity(10)]),
        ("distinct l=3", [DistinctLDiversity(SA, 3)]),
        ("k=5, equal t=0.2", [KAnonymity(5), TCloseness(SA, 0.2)]),
    ]
    for label, models in variants:
        for age, hierarchies in (("ranges", ranges), ("hierarchy", full)):
            for mode in ("strict", "relaxed"):
                result, seconds = timed(mondrian(adult, hierarchies, models, mode), args.repeat)
                assert result.details is not None
                print(
                    f"{label:<22}{age:<10}{mode:<9}| {result.utility.ncp:7.4f} {result.utility.discernibility:12,.0f} "
                    f"{result.details.n_classes:>8} {seconds:7.3f}"
                )

    if args.rows:
        big = replicate(adult, args.rows)
        print(f"\nAdult replicated to {len(big):,} rows (age jittered ±2, clipped), age as ranges, one run each")
        for label, models in (("k=10", [KAnonymity(10)]), ("distinct l=3", [DistinctLDiversity(SA, 3)])):
            for mode in ("strict", "relaxed"):
                result, seconds = timed(mondrian(big, ranges, models, mode), 1)
                assert result.details is not None
                print(
                    f"{label:<14}{mode:<9}| NCP {result.utility.ncp:.4f}  classes {result.details.n_classes:>7,}  "
                    f"rounds {result.details.rounds:>3}  {seconds:6.2f} s"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
