"""Benchmark (issue 28): CPU, NCP, growth exponent and peak memory of local recoding from 30k to ~1M rows.

Per algorithm and size, one ``anonymize`` call in a fresh child process on Adult ×COPIES
(``bench_lattice.replicate``: age jitter as the other Adult benchmarks): two-phase (k = 10),
bucket (frequency l = 3 on occupation), k-member (k = 10) and personalized (k = 4, pleak 0.25
on occupation, as ``bench_personalized --speed``). The child first warms up the algorithm on
2,000 rows (numba loads its compiled kernels), then reads Adult and replicates it, then runs once.
Printed: process CPU seconds of the run, NCP, the RSS before reading and after reading (``VmRSS``, after
``gc.collect()``) and the peak RSS over the whole child (``ru_maxrss``, warm-up included, so never below
the warm-up's peak); "peak/read" is the peak over the RSS after reading the table (the goal: ≤ 2);
"table" is the frame's own ``memory_usage(deep=True)``; "data ×" is (peak − before) / table, what the
run and the table take over the table's own memory (RSS deltas of a few MB are noise). The
growth exponent is the log-log slope of CPU between consecutive sizes and from the first to the
last. A run over ``--timeout`` wall seconds is killed and reported as such.

Measured 2026-11-26 19:43–19:58 UTC on the shared 2-core machine while a CI run used both cores (1-minute
load average 5–8 during every run; CPU seconds are process time, wall about 2–3× that), commit 5fbc3c6
for two-phase, bucket and k-member, fa35b3e for personalized (04f091d: same path and output);
numba 0.68.1 installed (compiled kernels):

    algorithm            rows     CPU s   NCP      peak MB  peak/read  (peak − before)/table  exponent
    two-phase k=10       30,162    6.03   0.0418     281      1.09       5.8
                        120,648   20.42   0.0177     341      1.32       5.5                 0.88
                        301,620   43.94   0.0060     444      1.71       4.9                 0.84
                        995,346   96.33   0.0013     768      2.91       4.1                 0.66  (30k→1M: 0.79)
    bucket l=3           30,162    3.42   0.0576     265      1.04       2.0
                        120,648   13.74   0.0553     301      1.18       2.9                 1.00
                        301,620   24.08   0.0572     370      1.43       2.9                 0.61
                        995,346   83.07   0.0597     640      2.43       3.1                 1.04  (30k→1M: 0.91)
    personalized         30,162    0.28   0.1593     292      1.12       9.4
    (k=4, pleak 0.25)   120,648    0.66   0.0851     391      1.50       9.0                 0.61
                        301,620    1.62   0.0511     586      2.24       8.8                 0.98
                        995,346    6.82   0.00000    1277     4.78       8.2                 1.20  (30k→1M: 0.91)
    k-member k=10        30,162    0.29   0.0654     294      1.03       1.9
                        995,346    4.97   0.0076     613      2.32       2.9                       (30k→1M: 0.81)

"read" was 256–267 MB at every size (interpreter, pandas, numba and the kernels ≈ 256 MB; the table
itself 4 / 15 / 38 / 124 MB by ``memory_usage(deep=True)``), so peak/read flatters small tables; at
~1M rows the goal (≤ 2×) is missed by all four (2.3–4.8×). ARX 3.9.2's local recoding (k = 10,
100 iterations, ``local 10 100`` after one warm-up run on Adult) on the same 995,346 rows: 2.12 s
process CPU (9.2 s wall), NCP 0.0062 — two-phase's CPU is 45× ARX's there (goal ≤ 60 s: missed at
96 s), its NCP 0.0013 below ARX's. Personalized before / after issue 28's reuse of its own codes
(5fbc3c6 / 04f091d, back to back, load 4–5, five runs in one process, min and median CPU s): 301,620
rows 1.60, 1.64 / 1.33, 1.38 (the optimal search 0.06: 27× → 22×; one cold run each as ``bench_personalized
--speed`` does: 16–21×); 995,346 rows 5.36, 5.82 / 5.13, 5.80 (optimal 0.17–0.18: ~30×). Peak RSS at
995,346 rows: 1,182 MB before, 1,277–1,293 MB after (numpy's traced peak at 301,620 rows: 207.6 →
215.8 MB; the rest of the RSS rise is not attributed). After ``pers28`` (Categorical QIs over the per-group
codes, no per-row label strings until the re-check hands users their labels; load ~3.3, 21:33 UTC):
personalized 30,162 / 301,620 / 995,346 rows: 0.10 / 0.65 / 2.74 s CPU, peak 274 / 465 / 910 MB, peak/read
1.07 / 1.79 / **3.45** (was 4.78), (peak − before)/table 5.2 / 5.6 / 5.3 (was 8.2), exponent 0.94.

After issue 28's block path (blocks independent, run in a forked process pool whose CPU is counted here)
and bucket's kernel over units (2026-11-26 ~22:00 UTC, load average ~5.6): bucket l=3 30,162 rows 0.67 s
CPU, NCP 0.0576; 995,346 rows 8.34 s, NCP 0.0598 (exponent 0.72); k-member k=10 995,346 rows 6.43 s,
NCP 0.0077 (exponent 0.88 from 0.30 s at 30k).

Issue 28, third pass (branch twophase28, 2026-11-26 22:21 UTC, load 2.3–2.9; two-phase's phase-1 kernel
without all-pairs re-pricing, refine prices kept per unit between rounds, compiled dissolution walk, one
copy of the QI codes):

    algorithm            rows     CPU s   NCP      peak MB  peak/read  (peak − before)/table  exponent
    two-phase k=10       30,162    2.92   0.0416     273      1.06       4.3
                        120,648    5.80   0.0177     308      1.19       3.4                 0.49
                        301,620    8.68   0.0060     363      1.39       2.8                 0.44
                        995,346   21.84   0.0013     577      2.12       2.6                 0.77  (30k→1M: 0.57)

At 1M rows: CPU 96 → 22 s (goal ≤ 60 s: met), exponent 0.57 (goal ≤ 1.1: met), peak/read 2.91 → 2.12
(goal ≤ 2: missed by ~6 %). ``tracemalloc`` at 1M rows: the clustering's own peak is ~+140 MB over what
stays alive (refine), publishing the output table ~+230 MB (``mondrian.publish_groups``: one object
column per QI, the per-QI costs, the published classes), so publishing now sets the peak.

Issue 28, memory pass (branch mem28, 2026-11-27 00:30–01:31 UTC, load average 10–20: wall seconds are
not comparable, peaks are). Local recoding publishes each QI as a Categorical over per-group label codes
(1 byte a row; ``verify`` groups by the codes and hands users the same object labels), sums each QI's
per-record costs as it makes them, the block path gathers each block's rows when it is sent and merges
the blocks' codes instead of spelling labels per row, and personalized keeps one copy of its sorted
codes, frees its loop state before publishing and groups rows into classes per group. The published
tables are unchanged (a hash of a canonical sort, the NCP, discernibility and details equal main's on
Adult ×2 for every algorithm, with and without suppression). At 995,346 rows, main c430be5 → mem28, each
run with warm numba caches ("read" 262–271 MB):

    algorithm            peak MB      peak/read     note
    two-phase k=10       575 → 484    2.12 → 1.78   (30k / 120k / 300k rows after: 1.06 / 1.19 / 1.36)
    personalized         904 → 481    3.43 → 1.84
    k-member k=10        684 → 492    2.61 → 1.87
    bucket l=3           717 → 498    2.73 → 1.89
    mondrian k=10        426 → 353    3.07 → 2.48   (no numba loaded: "read" is 139 MB, not ~260; its peak is
                                                     now set by the partitioner, ``partition_split.partition_rows``)

Issue 28, Mondrian's memory (branch mondmem28, 2026-11-27 04:02 UTC, load average 3.6–4.4; main f364ed8
and the branch back to back, twice, ``--algorithms mondrian --copies 1,10,33``, "read" 162–167 MB, no numba
loaded). The partitioner held every QI's codes twice in int64 (the dimensions', and a stacked copy) plus
some eight per-round int64 arrays over the open rows (tracemalloc at 995,346 rows: 184 MB traced at its
peak, inside a round's check). Now Mondrian keeps one copy of the codes in the narrowest type (1 byte a
row for Adult's QIs), the partitioner gathers each round's sort keys dimension by dimension (no stacked
copy), in int32 positions, partition ids and keys (int64 only when partitions × codes would not fit), cuts
with a 1-byte side mask and frees each round's arrays as soon as they are used (traced peak 184 → 76 MB,
now ``verify``'s). Same published tables (a hash of a canonical sort, NCP, discernibility, partitions,
rounds and cuts equal main's on Adult, ×4 and ×33, strict and relaxed, k and l-diversity; a hypothesis
test pins the partitioner to a list-based one):

    mondrian k=10     rows      CPU s (main → branch)   peak MB      peak/read     (peak − before)/table
                     301,620    0.47–0.58 → 0.51–0.55    226 → 194    1.39 → 1.20   1.76 → 0.90
                     995,346    2.15–2.40 → 1.75–1.82    381 → 264    2.27 → 1.58   1.78 → 0.84

(The 2.48 above was measured with "read" 139 MB; on the same machine today main gives 2.27–2.28.)

Run:  PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/bench_scale.py \\
          [--algorithms two-phase,bucket,personalized,k-member,mondrian] [--copies 1,4,10,33] [--timeout 600]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import resource
import subprocess
import sys
import time
from typing import Any

#: The models of each algorithm (as in bench_local_recoding, bench_bucket and bench_personalized).
RUNS = {"two-phase": "k10", "k-member": "k10", "bucket": "l3", "personalized": "k4+pleak0.25", "mondrian": "k10"}
SENSITIVE = "occupation"


def peak_mb() -> float:
    """The process's peak resident set so far, MB (Linux reports ru_maxrss in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """The process's resident set now, MB (``/proc/self/status``, Linux)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(algorithm: str, copies: int) -> dict[str, Any]:
    """One measured run (in this process): warm-up, read, run; the numbers as a dict."""
    from _adult import QIS, load_adult
    from bench_lattice import replicate

    from privacy_plugins.core.anonymize import anonymize
    from privacy_plugins.core.hierarchies import load_hierarchies
    from privacy_plugins.core.models import FrequencyLDiversity, KAnonymity, PersonalizedLeakage

    def run(frame: Any, hierarchies: Any) -> Any:
        models: list[Any] = {
            "two-phase": [KAnonymity(10)],
            "k-member": [KAnonymity(10)],
            "mondrian": [KAnonymity(10)],
            "bucket": [FrequencyLDiversity(SENSITIVE, 3)],
            "personalized": [KAnonymity(4), PersonalizedLeakage(SENSITIVE, bound=0.25)],
        }[algorithm]
        extra: dict[str, Any] = {"sensitive_attributes": [SENSITIVE]} if algorithm == "personalized" else {"seed": 0}
        return anonymize(frame, algorithm=algorithm, quasi_identifiers=QIS, hierarchies=hierarchies,
                         models=models, unlisted_columns="drop", **extra)  # fmt: skip

    from _adult import ADULT

    hierarchies = load_hierarchies(ADULT, columns=[*QIS, SENSITIVE])
    sample = load_adult(2000)
    assert sample is not None
    run(sample[0][[*QIS, SENSITIVE]], hierarchies)
    del sample
    gc.collect()
    before = rss_mb()
    loaded = load_adult()
    assert loaded is not None
    frame = replicate(loaded[0][[*QIS, SENSITIVE]], copies)
    del loaded
    gc.collect()
    read, table_mb = rss_mb(), frame.memory_usage(deep=True).sum() / 2**20
    cpu, wall, children = time.process_time(), time.perf_counter(), _children_cpu()
    result = run(frame, hierarchies)
    # The block path's process pool (blocks in spawned children, reaped when the pool closes) counts too.
    cpu_s, wall_s = time.process_time() - cpu + _children_cpu() - children, time.perf_counter() - wall
    assert result.passed and result.rows_in == result.rows_out + result.suppressed
    return {"rows": len(frame), "cpu": cpu_s, "wall": wall_s, "ncp": result.utility.ncp,
            "before_mb": before, "read_mb": read, "peak_mb": peak_mb(), "table_mb": table_mb}  # fmt: skip


def measure(algorithm: str, copies: int, timeout: float) -> dict[str, Any] | None:
    """Run ``child`` in a fresh process (clean peak RSS); ``None`` on timeout."""
    try:
        done = subprocess.run([sys.executable, __file__, "--child", algorithm, str(copies)],
                              capture_output=True, text=True, timeout=timeout, check=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--algorithms", default="two-phase,bucket,personalized")
    parser.add_argument("--copies", default="1,4,10,33")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall seconds per run")
    parser.add_argument("--child", nargs=2, metavar=("ALGORITHM", "COPIES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return 0
    print(f"{'algorithm':<13} {'rows':>9} {'CPU s':>8} {'wall s':>8} {'NCP':>7} {'before':>7} {'read':>7} "
          f"{'peak MB':>8} {'table':>6} {'peak/read':>9} {'data ×':>7} {'exp':>5}  load")  # fmt: skip
    for algorithm in args.algorithms.split(","):
        rows: list[dict[str, Any]] = []
        for copies in (int(c) for c in args.copies.split(",")):
            row = measure(algorithm, copies, args.timeout)
            load = "{:.2f} {:.2f} {:.2f}".format(*__import__("os").getloadavg())
            if row is None:
                print(f"{algorithm:<13} ×{copies:<8} killed after {args.timeout:.0f} s wall  load {load}", flush=True)
                break
            exp = ""
            if rows:
                exp = f"{math.log(row['cpu'] / rows[-1]['cpu']) / math.log(row['rows'] / rows[-1]['rows']):.2f}"
            rows.append(row)
            data = (row["peak_mb"] - row["before_mb"]) / row["table_mb"]
            cells = [f"{algorithm:<13} {row['rows']:>9,} {row['cpu']:8.2f} {row['wall']:8.2f} {row['ncp']:7.5f}"]
            cells.append(f"{row['before_mb']:7.0f} {row['read_mb']:7.0f} {row['peak_mb']:8.0f} {row['table_mb']:6.0f}")
            cells.append(f"{row['peak_mb'] / row['read_mb']:9.2f} {data:7.2f} {exp:>5}  {load}")
            print(" ".join(cells), flush=True)
        if len(rows) > 1:
            first, last = rows[0], rows[-1]
            slope = math.log(last["cpu"] / first["cpu"]) / math.log(last["rows"] / first["rows"])
            print(f"{algorithm}: growth exponent {first['rows']:,} → {last['rows']:,} rows: {slope:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
