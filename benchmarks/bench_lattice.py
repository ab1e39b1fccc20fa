"""Benchmark: optimal full-domain search on Adult, timed side by side with ARX 3.9.2 in the same run.

For every target (model, suppression limit) and scale (Adult ×1, ×10, ×33 — built here
at run time, never stored), ARX (``../shared/arx``, a Java worker) and ours run
interleaved on the same data, ``--repeat`` times after one warm-up each; the table
shows median CPU times (ARX: its calling thread inside ``anonymize``; ours: the
process over one ``anonymize_full_domain`` call, encoding, search, publishing and
re-check included), their ratio, both optima and the nodes checked. Without
``../shared/arx`` or ``java`` ARX is skipped with a message. ``--exhaustive`` also
checks, at scale 1, that an exhaustive scan finds the same optimum. ``--memory``
measures, per scale and target, the peak resident memory of a fresh process that
reads the table's CSV and then anonymizes it, against one that only reads it
(goal: at most 1.5x at 1M rows).

Replication follows ARX's benchmark: copy c ≥ 1 of row i gets
age' = clamp(age + ((i·31 + c·17) mod 7) − 3, 17, 90).

Run:  .venv/bin/python benchmarks/bench_lattice.py [--repeat 5] [--scales 1 10 33] [--cases k5 t]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize_full_domain
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, PrivacyModel, TCloseness

SHARED = Path(__file__).resolve().parents[2] / "shared"
ADULT = SHARED / "data" / "adult"
ARX_DIR = SHARED / "arx"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SA = "occupation"
# name -> (label, ARX model, parameter, suppression limit)
CASES: dict[str, tuple[str, str, float, float]] = {
    "k5": ("k=5", "k", 5, 0.05),
    "l3": ("distinct l=3", "dl", 3, 0.05),
    "k5-0": ("k=5", "k", 5, 0.0),
    "k20": ("k=20", "k", 20, 0.05),
    "t": ("equal t=0.2", "t", 0.2, 0.05),
}


def models_for(kind: str, param: float) -> list[PrivacyModel]:
    """Our models for an ARX model name."""
    if kind == "k":
        return [KAnonymity(int(param))]
    if kind == "dl":
        return [DistinctLDiversity(SA, int(param))]
    return [TCloseness(SA, param, t_distance="equal")]


def replicate(frame: pd.DataFrame, copies: int) -> pd.DataFrame:
    """Adult ×copies with ARX's age jitter (copy 0 is the original)."""
    if copies == 1:
        return frame
    index = np.arange(len(frame))
    parts = [frame]
    for c in range(1, copies):
        part = frame.copy()
        part["age"] = np.clip(frame["age"].to_numpy() + (index * 31 + c * 17) % 7 - 3, 17, 90)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def load_arx() -> ModuleType | None:
    """The ARX client module, or ``None`` (with a message) when ARX or Java is missing."""
    client = ARX_DIR / "arxclient.py"
    if not client.exists() or (shutil.which("java") is None and not os.environ.get("JAVA_HOME")):
        print(f"ARX skipped: {client} or java not found")
        return None
    spec = importlib.util.spec_from_file_location("arxclient", client)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.available():
        print("ARX skipped: java not available")
        return None
    return module


def ours(frame: pd.DataFrame, hierarchies: Any, models: list[PrivacyModel], limit: float, algorithm: str) -> Any:
    """One call; returns (result, CPU seconds)."""
    started = time.process_time()
    result = anonymize_full_domain(
        frame, quasi_identifiers=QIS, hierarchies=hierarchies, models=models, suppression_limit=limit,
        algorithm=algorithm,
    )  # fmt: skip
    return result, time.process_time() - started


def probe_memory(csv: Path, name: str | None) -> None:
    """In a fresh process: read ``csv`` (and anonymize it for the target ``name``); print the peak RSS in bytes."""
    if str(csv) == "-":  # the baseline: the interpreter with everything imported, no table
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        return
    frame = pp.read_table(csv)
    if name is not None:
        _, kind, param, limit = CASES[name]
        hierarchies = load_hierarchies(ADULT, columns=QIS)
        ours(frame, hierarchies, models_for(kind, param), limit, "optimal")
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)  # Linux reports KiB


def peak_rss(csv: Path | str, name: str | None) -> int:
    """Peak RSS (bytes) of :func:`probe_memory` run in a child process."""
    command = [sys.executable, __file__, "--probe-memory", str(csv), *([] if name is None else ["--probe-case", name])]
    answer = subprocess.run(command, check=True, capture_output=True, text=True)
    return int(answer.stdout.split()[-1])


def report_memory(csv: Path, rows: int, names: list[str]) -> None:
    """Peak RSS of reading the table vs reading and anonymizing it, one fresh process each.

    The ratio above the imports leaves out the interpreter and libraries (~130 MiB),
    which dominate at 30k rows.
    """
    base = peak_rss("-", None)
    read = peak_rss(csv, None)
    for name in names:
        label, _, _, limit = CASES[name]
        total = peak_rss(csv, name)
        print(
            f"{rows:>9,} {label:<13}{limit:>4.0%} | peak RSS: imports {base / 2**20:.0f} MiB, read {read / 2**20:.0f} "
            f"MiB, read + anonymize {total / 2**20:.0f} MiB; ratio {total / read:.2f}, above the imports "
            f"{(total - base) / max(read - base, 1):.2f}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 33])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--exhaustive", action="store_true", help="at scale 1, compare with an exhaustive scan")
    parser.add_argument("--memory", action="store_true", help="peak RSS of anonymizing vs reading, per scale")
    parser.add_argument("--probe-memory", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--probe-case", choices=sorted(CASES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_memory is not None:
        probe_memory(args.probe_memory, args.probe_case)
        return 0
    if not (ADULT / "adult.csv").exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    base = pp.read_table(ADULT / "adult.csv")
    hierarchies = load_hierarchies(ADULT, columns=QIS)
    arxclient = load_arx()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (CPU times; medians of {args.repeat})")
    print(f"{'rows':>9} {'target':<13}{'sup':>4} | {'ours ms':>8} {'ARX ms':>7} {'ratio':>6} | {'NCP':>7} {'ARX':>7} | "
          f"{'node':<22}{'same':>5} | {'checked':>9} {'ARX':>4}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            frame = replicate(base, scale)
            arx = None
            csv = Path(tmp) / f"adult_x{scale}.csv"
            if arxclient is not None or args.memory:
                frame.to_csv(csv, sep=";", index=False)
            if args.memory:
                report_memory(csv, len(frame), args.cases)
            if arxclient is not None:
                arx = arxclient.ArxWorker()
                arx.load(str(csv), str(ADULT), QIS, SA)
            try:
                for name in args.cases:
                    label, kind, param, limit = CASES[name]
                    models = models_for(kind, param)
                    ours_cpu, arx_cpu = [], []
                    arx_answer: dict[str, Any] | None = None
                    for repeat in range(args.repeat + 1):  # the first round warms both up
                        if arx is not None:
                            arx_answer = arx.run(kind, param, limit)
                            arx_cpu.append(arx_answer["cpu_ms"] / 1e3)
                        result, seconds = ours(frame, hierarchies, models, limit, "optimal")
                        ours_cpu.append(seconds)
                        if repeat == 0:
                            ours_cpu.clear()
                            arx_cpu.clear()
                    node = tuple(result.details.levels.values())
                    if args.exhaustive and scale == 1:
                        exhaustive, _ = ours(frame, hierarchies, models, limit, "exhaustive")
                        assert tuple(exhaustive.details.levels.values()) == node, "optimal differs from exhaustive"
                    ours_ms = statistics.median(ours_cpu) * 1e3
                    if arx_answer is not None:
                        arx_ms = statistics.median(arx_cpu) * 1e3
                        arx_cols = (f"{arx_ms:7.0f} {ours_ms / arx_ms:6.2f}", f"{arx_answer['ncp']:7.4f}",
                                    "yes" if list(node) == list(arx_answer["levels"]) else "no",
                                    f"{arx_answer['checked']:>4}")  # fmt: skip
                    else:
                        arx_cols = (f"{'-':>7} {'-':>6}", f"{'-':>7}", "-", f"{'-':>4}")
                    print(
                        f"{len(frame):>9,} {label:<13}{limit:>4.0%} | {ours_ms:8.0f} {arx_cols[0]} | "
                        f"{result.utility.ncp:7.4f} {arx_cols[1]} | {node!s:<22}{arx_cols[2]:>5} | "
                        f"{result.details.nodes_checked:>4}/{result.details.lattice_size} {arx_cols[3]}",
                        flush=True,
                    )
            finally:
                if arx is not None:
                    arx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
