"""Benchmark: the large-lattice case of issue 18 — MACH2019, 9 QIs (38,880 nodes), k=5, 1% suppression.

Ours (optimal full-domain search) and ARX 3.9.2 (``../shared/arx``) run interleaved on
the same table, ``--repeat`` times after one warm-up each; medians of CPU time (ours:
the process over one ``anonymize_full_domain`` call, encoding, search, publishing and
re-check included; ARX: its calling thread inside ``anonymize``), their ratio, both
optima and the nodes checked. ARX is skipped with a message when it or ``java`` is missing.

Run:  .venv/bin/python benchmarks/bench_mach2019.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench_lattice import load_arx

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize_full_domain
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import KAnonymity

MACH = Path(__file__).resolve().parents[2] / "shared" / "data" / "mach2019_int"
# The first nine attributes of the data set's README (5·4·2·3·3·4·3·3·3 = 38,880 lattice nodes).
QIS = ["age", "familysize", "gender", "married", "race", "religion", "Q1A", "Q2A", "Q3A"]
SENSITIVE = "Q10A"  # ARX's worker needs one; k-anonymity does not read it


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    csv = MACH / "mach2019_int.csv"
    if not csv.exists():
        print(f"skipped: MACH2019 not found at {MACH} (see ../shared/data/README.md)")
        return 0
    frame = pp.read_table(csv)
    hierarchies = load_hierarchies(MACH, columns=QIS)
    arxclient = load_arx()
    arx = None
    linked: Path | None = None
    if arxclient is not None:
        linked = Path(tempfile.mkdtemp(prefix="mach2019_arx_"))  # the worker reads adult_hierarchy_<qi>.csv
        for column in [*QIS, SENSITIVE]:
            (linked / f"adult_hierarchy_{column}.csv").symlink_to(MACH / f"mach2019_int_hierarchy_{column}.csv")
        arx = arxclient.ArxWorker()
        arx.load(str(csv), str(linked), QIS, SENSITIVE)
    ours_cpu: list[float] = []
    arx_cpu: list[float] = []
    answer = None
    try:
        for round_ in range(args.repeat + 1):  # round 0 warms both up
            if arx is not None:
                answer = arx.run("k", 5, 0.01)
                arx_cpu.append(answer["cpu_ms"] / 1e3)
            started = time.process_time()
            result = anonymize_full_domain(
                frame, quasi_identifiers=QIS, hierarchies=hierarchies, models=[KAnonymity(5)], suppression_limit=0.01
            )
            ours_cpu.append(time.process_time() - started)
            if round_ == 0:
                ours_cpu.clear()
                arx_cpu.clear()
    finally:
        if arx is not None:
            arx.close()
        if linked is not None:
            shutil.rmtree(linked, ignore_errors=True)
    node = [result.details.levels[q] for q in QIS]
    ours_s = statistics.median(ours_cpu)
    print(f"MACH2019 {len(frame):,} rows, 9 QIs, k=5, 1%: lattice {result.details.lattice_size:,} nodes")
    checked = result.details.nodes_checked
    print(f"ours: {ours_s:.2f} s CPU, NCP {result.utility.ncp:.4f}, node {node}, checked {checked}")
    if answer is not None:
        arx_s = statistics.median(arx_cpu)
        print(
            f"ARX:  {arx_s:.2f} s CPU, NCP {answer['ncp']:.4f}, node {list(answer['levels'])}, "
            f"checked {answer['checked']}; ours/ARX {ours_s / arx_s:.2f}, same node: {node == list(answer['levels'])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
