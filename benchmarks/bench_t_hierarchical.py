"""Benchmark: hierarchical-distance t-closeness on Adult's occupation hierarchy, equal to ARX 3.9.2.

The ARX worker of ``../shared/arx`` runs only equal-distance t, so this builds a small Java
program against the same ARX bundle (``arx_hierarchical_t/HierTCheck.java``) that runs ARX's own
``HierarchicalDistanceTCloseness`` on one full-domain node at a time (every QI's minimum and
maximum generalization pinned to the node's level, no suppression): ARX answers whether the
node is t-close.

For each node — the 2^7 nodes whose every level is its hierarchy's height or one below (the part
of the lattice where classes are large and the EMDs differ from node to node), the bottom, and
``--nodes`` random ones (seeded) — our max EMD v is
computed, and ARX is asked at t = v + ε (must be t-close) and t = v − ε (must not be): that pins
ARX's value to within ε of ours (ε = 1e-9). The equal-distance t of the same node is printed
beside it (the hierarchy matters). Times: ours per node (group + EMD), ARX per query
(a whole ``anonymize`` of one node, data loading included), in the same run.

Run:  javac once (see the .java file), then
      .venv/bin/python benchmarks/bench_t_hierarchical.py [--nodes 20] [--seed 7]
Exit status 1 when a node disagrees, 0 when all agree (or ARX/java/Adult is absent: skipped, said why).
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _adult import ADULT, QIS, SHARED, load_adult

from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import TCloseness
from privacy_plugins.core.partition import EquivalenceClasses

SA = "occupation"
EPSILON = 1e-9
JAVA_SOURCE = Path(__file__).resolve().parent / "arx_hierarchical_t" / "HierTCheck.java"


def start_arx() -> subprocess.Popen[str] | None:
    """Compile HierTCheck against the ARX bundle and start it; ``None`` (said why) when it cannot run."""
    arx = SHARED / "arx"
    if not (arx / "arx-harness.jar").exists() or shutil.which("javac") is None or shutil.which("java") is None:
        print(f"skipped ARX: no ARX bundle at {arx} or no java/javac on PATH")
        return None
    classpath = ":".join([str(arx / "arx-harness.jar"), *sorted(str(p) for p in (arx / "lib").glob("*.jar"))])
    build = Path(tempfile.mkdtemp(prefix="arxht-"))
    subprocess.run(["javac", "-cp", classpath, "-d", str(build), str(JAVA_SOURCE)], check=True)
    return subprocess.Popen(
        ["java", "-Xmx3g", "-cp", f"{build}:{classpath}", "HierTCheck", str(ADULT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def ask(arx: subprocess.Popen[str], levels: tuple[int, ...], t: float) -> tuple[bool, float]:
    """ARX's verdict on one node at threshold t, and the wall seconds of the query."""
    assert arx.stdin is not None and arx.stdout is not None
    start = time.perf_counter()
    arx.stdin.write(f"{','.join(map(str, levels))} {t!r}\n")
    arx.stdin.flush()
    answer = arx.stdout.readline().strip()
    return answer == "1", time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10, help="random lattice nodes besides the ones near the top")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    loaded = load_adult()
    if loaded is None:
        return 0
    adult, hierarchies = loaded
    occupation = load_hierarchies(ADULT, columns=[SA])[SA]
    heights = [hierarchies[q].height for q in QIS]
    rng = np.random.default_rng(args.seed)
    nodes = {tuple([0] * len(QIS)), *itertools.product(*[(max(h - 1, 0), h) for h in heights])}
    wanted = len(nodes) + args.nodes
    while len(nodes) < wanted:
        nodes.add(tuple(int(rng.integers(0, h + 1)) for h in heights))
    hierarchical = TCloseness(SA, 1.0, "hierarchical", sensitive_hierarchy=occupation)
    equal = TCloseness(SA, 1.0, "equal")
    arx = start_arx()
    if arx is not None:
        ask(arx, tuple(heights), 1.0)  # warm-up (JIT, class loading)
    print(f"Adult {len(adult):,} rows; occupation hierarchy height {occupation.height}; ε = {EPSILON:g}")
    print(f"{'levels':<16} {'t (hier.)':>12} {'t (equal)':>10} {'ours ms':>8} {'ARX ms':>8}  ARX agrees")
    disagreements = 0
    values = []
    for levels in sorted(nodes):
        start = time.perf_counter()
        generalized = pd.DataFrame(
            {
                q: hierarchies[q].codes[level][hierarchies[q].leaf_codes(adult[q])]
                for q, level in zip(QIS, levels, strict=True)
            }
        )
        generalized[SA] = adult[SA].to_numpy()
        classes = EquivalenceClasses.from_frame(generalized, QIS)
        value = hierarchical.observed(classes)
        values.append(value)
        ours_ms = (time.perf_counter() - start) * 1000
        equal_value = equal.observed(classes)
        verdict, arx_ms = "skipped", float("nan")
        if arx is not None:
            above, seconds_above = ask(arx, levels, min(value + EPSILON, 1.0))
            below, seconds_below = (False, 0.0) if value < EPSILON else ask(arx, levels, value - EPSILON)
            agrees = above and not below
            disagreements += not agrees
            verdict = "yes" if agrees else f"NO (t-close at v+ε: {above}, at v−ε: {below})"
            arx_ms = 1000 * max(seconds_above, seconds_below)
        level_text = ",".join(map(str, levels))
        print(f"{level_text:<16} {value:>12.9f} {equal_value:>10.6f} {ours_ms:>8.1f} {arx_ms:>8.1f}  {verdict}")
    if arx is not None:
        assert arx.stdin is not None
        arx.stdin.close()
        arx.wait(timeout=60)
        distinct = len({round(v, 9) for v in values})
        print(f"{len(nodes)} nodes ({distinct} distinct t), {disagreements} disagreements with ARX")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
