"""Benchmark: the step-wise release (each step in its own process, as Airflow tasks) inside DuckDB.

The Adult table of ``bench_engines.py make`` (``adult_big`` in a DuckDB file) is
released into the same file: load → diagnose → anonymize → check → publish, each
step a fresh subprocess that reads the previous step's JSON artifact (as an
Airflow task reads XCom), then the same release as one ``run_release`` process.
Problem as in ``bench_engines.py``: QIs age, education, marital-status,
native-country, race, sex, workclass; sensitive occupation; k=5, distinct l=2,
5% suppression; optimal search.

Run:
    .venv/bin/python benchmarks/bench_engines.py make --rows 10000000 --db /tmp/adult10m.duckdb
    .venv/bin/python benchmarks/bench_stepwise.py --db /tmp/adult10m.duckdb
Prints one JSON line per step (seconds, peak RSS in MB of that process) and one for
``run_release``, plus whether both published the same node and row count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]

_STEP = """
import json, sys
from pathlib import Path
from privacy_plugins.release import ReleaseSpec, steps
spec = ReleaseSpec.from_yaml(sys.argv[1])
work, name, run = Path(sys.argv[2]), sys.argv[3], "bench"
def art(kind, file):
    return kind.from_dict(json.loads((work / file).read_text()))
if name == "load":
    out = steps.load_step(spec, run_id=run)
elif name == "diagnose":
    out = steps.diagnose_step(spec, art(steps.LoadedTable, "load.json"), run_id=run)
elif name == "anonymize":
    out = steps.anonymize_step(spec, art(steps.LoadedTable, "load.json"), run_id=run)
elif name == "check":
    out = steps.check_step(spec, art(steps.Candidate, "anonymize.json"), run_id=run)
elif name == "publish":
    candidate, check = art(steps.Candidate, "anonymize.json"), art(steps.CheckResult, "check.json")
    out = steps.publish_step(spec, candidate, check, run_id=run)
else:
    from privacy_plugins.release import run_release
    out = run_release(spec)
(work / f"{name}.json").write_text(json.dumps(out.to_dict()))
"""


def _spec(db: Path, work: Path, table: str) -> Path:
    data = {
        "name": "adult_stepwise",
        "source": {"duckdb": str(db), "table": "adult_big"},
        "quasi_identifiers": QIS,
        "sensitive_attributes": ["occupation"],
        "hierarchies": str(ADULT),
        "requirements": {"k": 5, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05},
        "algorithm": {"name": "optimal", "metric": "ncp"},
        "destination": {"duckdb": str(db), "table": table},
        "report": {"directory": str(work / f"reports_{table}")},
        "workdir": str(work / "runs"),
    }
    path = work / f"{table}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _run(spec: Path, work: Path, name: str) -> dict[str, object]:
    """One step in a fresh process: wall seconds and that process's peak RSS."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", _STEP, str(spec), str(work), name])
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"step {name} failed (status {status})")
    return {"step": name, "seconds": round(time.monotonic() - started, 2), "peak_rss_mb": usage.ru_maxrss // 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a DuckDB file made by bench_engines.py make")
    db = parser.parse_args().db.resolve()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        stepwise = _spec(db, work, "adult_stepwise")
        for name in ("load", "diagnose", "anonymize", "check", "publish"):
            print(json.dumps(_run(stepwise, work, name)), flush=True)
        print(json.dumps(_run(_spec(db, work, "adult_whole"), work, "run_release")), flush=True)
        steps = json.loads((work / "anonymize.json").read_text())
        whole = json.loads((work / "run_release.json").read_text())["candidate"]
        same = steps["levels"] == whole["levels"] and steps["rows_out"] == whole["rows_out"]
        rows = json.loads((work / "load.json").read_text())["rows"]
        print(json.dumps({"rows": rows, "levels": steps["levels"], "published": steps["rows_out"], "same": same}))


if __name__ == "__main__":
    main()
