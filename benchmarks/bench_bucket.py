"""Benchmark: thesis Figures 4.20/4.21 on Adult: bucket clustering vs optimistic clustering vs Anatomy, l = 2 … 8.

QIs age, education, marital-status, native-country, race, sex, workclass (all along their
Adult hierarchies); sensitive occupation (14 values, the largest 4,038 of 30,162 = 1/7.5,
so frequency l ≤ 7 is feasible without suppression). Per l: NCP and seconds of ``bucket``,
``optimistic`` (or why it stopped), ``anatomy`` (NCP 0: exact QIs; its reconstruction
error, Xiao & Tao's measure, is printed beside it) and Mondrian strict with a
frequency-l stop for reference; with ``--arx``, ARX 3.9.2's full-domain *distinct*
l-diversity (the only l model its harness offers: a weaker model, with recoding
of whole columns, so a loose reference only). Every result is re-measured by the core.
``--plot PATH`` writes the two figures as one PNG (default ``benchmarks/output/bucket_l.png``,
ignored by git).

Issue 28 (bucket, Adult, seed 0, l = 2…7; NCP / CPU seconds of one ``anonymize`` call, 2-core machine under load):
before 0.0240 / 0.0624 / 0.1229 / 0.2001 / 0.2864 / 0.3778 at ~7–19 s wall each (O(n²) numpy loop);
after (numba kernel, one block at Adult size, ties by seeded key) 0.0225 / 0.0576 / 0.1170 / 0.1923 / 0.2766 / 0.3668
at ~3–4 s CPU each (see the report; pure numpy ~ the old time). ``--check`` asserts NCP ≤ the "before" pins.
With the kernel over units (distinct QI tuples; same clusters, same NCP): 0.67–0.76 s CPU each for l = 2…7
(2026-11-26 ~21:50 UTC, loaded machine; the first call of a process adds ~1.5 s of numba import and cache load).

Run:  .venv/bin/python benchmarks/bench_bucket.py [--ls 2,3,4,5,6,7,8] [--suppression 0.05] [--arx] \\
          [--plot benchmarks/output/bucket_l.png] [--rows 0] [--seed 0] [--check] [--methods bucket]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from _adult import ADULT, QIS, SHARED, load_adult

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.models import FrequencyLDiversity
from privacy_plugins.errors import InfeasibleAnonymizationError

SENSITIVE = "occupation"
#: Bucket's NCP on Adult (seed 0, no suppression) before issue 28's kernel: it must not get worse (``--check``).
BUCKET_PINS = {2: 0.0240, 3: 0.0624, 4: 0.1229, 5: 0.2001, 6: 0.2864, 7: 0.3778}
METHODS = ("bucket", "optimistic", "anatomy", "mondrian")


def run_one(adult: Any, hierarchies: Any, algorithm: str, l: int, suppression: float, seed: int) -> dict[str, Any]:
    """NCP, seconds, suppressed records (or the reason it stopped) of one algorithm at one l."""
    started, cpu = time.perf_counter(), time.process_time()
    try:
        result = anonymize(
            adult, algorithm=algorithm, quasi_identifiers=QIS, hierarchies=hierarchies,
            models=[FrequencyLDiversity(SENSITIVE, l)], suppression_limit=suppression, seed=seed,
            unlisted_columns="drop",
        )  # fmt: skip
    except InfeasibleAnonymizationError as exc:
        reason = "no termination" if "does not terminate" in str(exc) else "infeasible"
        return {"ncp": None, "seconds": time.perf_counter() - started, "note": reason}
    assert result.passed and result.rows_in == result.rows_out + result.suppressed
    details = result.details.to_dict()
    note = f"RE {details['reconstruction_error']:.3f}" if algorithm == "anatomy" else ""
    return {"ncp": result.utility.ncp, "seconds": time.perf_counter() - started, "note": note,
            "suppressed": result.suppressed, "cpu": time.process_time() - cpu}  # fmt: skip


def arx_rows(ls: list[int], suppression: float) -> dict[int, dict[str, Any]]:
    """ARX 3.9.2 full-domain distinct l-diversity, after a JIT warm-up."""
    sys.path.insert(0, str(SHARED / "arx"))
    from arxclient import ArxWorker  # type: ignore[import-not-found]

    out: dict[int, dict[str, Any]] = {}
    with ArxWorker() as arx:
        arx.load(str(ADULT / "adult.csv"), str(ADULT), QIS, SENSITIVE)
        for _ in range(2):
            arx.run("dl", 2, suppression)
        for l in ls:
            answer = arx.run("dl", l, suppression)
            out[l] = {"ncp": answer["ncp"], "seconds": answer["wall_ms"] / 1e3, "note": "distinct-l, full-domain"}
    return out


def plot(path: Path, ls: list[int], table: dict[str, dict[int, dict[str, Any]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (loss, runtime) = plt.subplots(1, 2, figsize=(11, 4))
    for name, rows in table.items():
        xs = [l for l in ls if rows.get(l, {}).get("ncp") is not None]
        loss.plot(xs, [rows[l]["ncp"] for l in xs], marker="o", label=name)
        runtime.plot(xs, [rows[l]["seconds"] for l in xs], marker="o", label=name)
    loss.set(xlabel="l (frequency)", ylabel="NCP", title="Information loss (cf. thesis Fig. 4.20)")
    runtime.set(xlabel="l (frequency)", ylabel="seconds", title="Runtime (cf. thesis Fig. 4.21)")
    loss.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ls", default="2,3,4,5,6,7,8")
    parser.add_argument("--suppression", type=float, default=0.0)
    parser.add_argument("--rows", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--arx", action="store_true")
    parser.add_argument("--check", action="store_true", help="assert bucket's NCP at or below the pins (issue 28)")
    parser.add_argument("--plot", type=Path, default=Path(__file__).resolve().parent / "output" / "bucket_l.png")
    args = parser.parse_args()
    loaded = load_adult(args.rows)
    if loaded is None:
        return 0
    adult, hierarchies = loaded
    ls = [int(l) for l in args.ls.split(",")]
    methods = args.methods.split(",")
    print(f"Adult {len(adult):,} rows, sensitive {SENSITIVE}, suppression_limit {args.suppression}, seed {args.seed}")
    table: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in methods}
    print(f"{'l':>2} | " + " | ".join(f"{name:>10} NCP       s note" for name in methods))
    for l in ls:
        for name in methods:
            table[name][l] = run_one(adult, hierarchies, name, l, args.suppression, args.seed)
        cells = []
        for name in methods:
            row = table[name][l]
            ncp = "-" if row["ncp"] is None else f"{row['ncp']:.4f}"
            cpu = f" (CPU {row['cpu']:.2f})" if "cpu" in row else ""
            cells.append(f"{ncp:>14} {row['seconds']:7.1f}{cpu} {row['note']}")
        print(f"{l:>2} | " + " | ".join(cells), flush=True)
    if args.check and "bucket" in methods:
        for l in ls:
            ncp = table["bucket"][l]["ncp"]
            assert l not in BUCKET_PINS or ncp <= BUCKET_PINS[l] + 1e-4, (
                f"bucket l={l}: NCP {ncp} above {BUCKET_PINS[l]}"
            )
        print("check: bucket NCP at or below the pins", BUCKET_PINS)
    if args.arx:
        table["ARX (distinct l)"] = arx_rows(ls, args.suppression)
        for l in ls:
            row = table["ARX (distinct l)"][l]
            print(f"ARX l={l}: NCP {row['ncp']:.4f}, {row['seconds']:.2f} s ({row['note']})")
    plot(args.plot, ls, table)
    print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
