"""Benchmark: repeated Anatomy (QIT + ST) releases of a growing Adult that pass the history check (issue 26).

Adult is shuffled (``--seed``) and released 4 times on growing batches (``--sizes``, default
24,000 / 26,000 / 28,000 / 30,162 rows, the recipe of ``bench_history.py``): the seven Adult
QIs, ``occupation`` sensitive, k = 5 and distinct 2-diversity (Anatomy's own l). Two runs:

* ``history``: each release anonymized with the release history's model as the release path
  adds it (:func:`~privacy_plugins.core.history_release.history_models`); Anatomy merges groups
  until every QI tuple's covering groups keep min(l, |H(t)|) of H(t) (``details.merged``);
* ``independent``: each release anonymized alone (what lead40 published, or rather refused).

Each release's records at risk are the gate's: :func:`~privacy_plugins.core.history_check.composition_check`
on the pair's signature (:func:`~privacy_plugins.core.history.linked_signature`) against the
earlier releases of the same run (an independent release is appended whether it passed or not, as
the history-free alternative would have published it). Utility: Anatomy's reconstruction error
(Xiao & Tao; the mean squared error of the published sensitive distributions, lower is better)
and the groups. CPU seconds are ``time.process_time()``, both runs in the same process.

Run:  .venv/bin/python benchmarks/bench_history_anatomy.py [--sizes ...] [--seed 0] [--check]

``--check`` exits 1 when a history-aware release leaves a record at risk.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from _adult import QIS, load_adult

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, linked_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_release import history_models
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, PrivacyModel

SENSITIVE = "occupation"


def run(tables: list[pd.DataFrame], models: list[PrivacyModel], aware: bool, seed: int) -> list[dict[str, float]]:
    """One row per release: rows, records at risk, groups, merges, reconstruction error, CPU seconds."""
    history = ReleaseHistory("bench", tuple(QIS), (SENSITIVE,))
    rows = []
    for table in tables:
        started = time.process_time()
        extra = history_models(models, history) if aware and len(history) else []
        result = anonymize(table, algorithm="anatomy", quasi_identifiers=QIS, models=[*models, *extra], seed=seed)
        assert result.linked is not None
        seconds = time.process_time() - started
        signature = linked_signature(result.table, result.linked.table, "group_id", QIS, [SENSITIVE])
        check = composition_check(table, signature, history, models)
        history = history.appended(PublishedRelease("r", "t", "f", {}, signature, published_rows=len(result.table)))
        details = result.details
        rows.append(
            {
                "rows": len(table),
                "at_risk": check.records_at_risk,
                "groups": getattr(details, "n_groups", 0),
                "merged": getattr(details, "merged", 0),
                "error": getattr(details, "reconstruction_error", 0.0),
                "seconds": seconds,
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="24000,26000,28000,30162")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    loaded = load_adult()
    if loaded is None:
        return 0
    adult, _ = loaded
    adult = adult[[*QIS, SENSITIVE]].sample(frac=1.0, random_state=args.seed).reset_index(drop=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    tables = [adult.iloc[:size] for size in sizes]
    models: list[PrivacyModel] = [KAnonymity(5), DistinctLDiversity(SENSITIVE, 2)]
    print(f"Adult shuffled (seed {args.seed}); Anatomy releases of {', '.join(f'{s:,}' for s in sizes)} rows; "
          f"k=5, distinct 2-diversity of {SENSITIVE}")  # fmt: skip
    print(f"{'run':>11} | {'rows':>6} | {'at risk':>7} | {'groups':>6} | {'merged':>6} | {'recon. error':>12} | "
          f"{'CPU s':>6}")  # fmt: skip
    missed = []
    for name, aware in (("history", True), ("independent", False)):
        for row in run(tables, models, aware, args.seed):
            print(f"{name:>11} | {row['rows']:>6,} | {row['at_risk']:>7,} | {row['groups']:>6,} | "
                  f"{row['merged']:>6,} | {row['error']:>12.4f} | {row['seconds']:>6.2f}")  # fmt: skip
            if aware and row["at_risk"]:
                missed.append(f"{row['rows']:,} rows: {row['at_risk']} records at risk")
    if args.check and missed:
        print("missed: " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
