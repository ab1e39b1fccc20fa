"""Run anonymeter's three evaluators on CSV files and print their counts, risks and CPU seconds as JSON.

Runs in anonymeter's own venv (never the project's): bench_attacks.py starts it as a
subprocess with ``/tmp/anonymeter-venv/bin/python``. Arguments: one JSON object on stdin
with the paths and settings. Numba compiles its kernels once per process: a warm-up run on
a few rows comes first, outside the timing.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator


def risks(ori, syn, control, qis, secret, first, second, n_attacks):
    out = {}
    columns = [*qis, secret]
    started = time.process_time()
    so = SinglingOutEvaluator(
        ori=ori[columns],
        syn=syn[columns],
        control=control[columns],
        n_attacks=n_attacks,
        max_attempts=200 * n_attacks,  # as ours: its default 10,000,000 runs for hours on a coarse release
    )
    so.evaluate(mode="multivariate")
    out["singling_out"] = so.results()
    link = LinkabilityEvaluator(
        ori=ori, syn=syn, control=control, n_attacks=n_attacks, aux_cols=(first, second), n_neighbors=1
    )
    link.evaluate(n_jobs=1)
    out["linkability"] = link.results()
    inf = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=qis, secret=secret, n_attacks=n_attacks)
    inf.evaluate(n_jobs=1)
    out["inference"] = inf.results()
    seconds = time.process_time() - started
    report = {}
    for key, result in out.items():
        risk = result.risk()
        report[key] = {
            "risk": risk.value,
            "ci": list(risk.ci),
            "attack_rate": result.attack_rate.value,
            "baseline_rate": result.baseline_rate.value,
            "control_rate": None if result.control_rate is None else result.control_rate.value,
        }
    return report, seconds


def main() -> int:
    settings = json.load(sys.stdin)
    warnings.simplefilter("ignore")
    read = {name: pd.read_csv(settings[name]) for name in ("original", "release", "control")}
    if settings.get("as_text"):
        read = {name: frame.astype(str) for name, frame in read.items()}
    qis, secret = settings["quasi_identifiers"], settings["secret"]
    first, second = settings["first"], settings["second"]
    small = {name: frame.iloc[:200] for name, frame in read.items()}
    risks(small["original"], small["release"], small["control"], qis, secret, first, second, 20)
    report, seconds = risks(
        read["original"], read["release"], read["control"], qis, secret, first, second, settings["n_attacks"]
    )
    print(json.dumps({"results": report, "cpu_seconds": seconds}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
