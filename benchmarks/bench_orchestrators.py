"""Benchmark: the overhead of Airflow and Dagster over the plain release on the demo spec (start-up excluded).

Runs the demo release (``specs/demo_census.yaml``, core checks only, no GX suite)
three ways, each in this process, in throw-away folders: ``run_release`` (what
``privacy-plugins release`` runs), Airflow's ``dag.test()`` of ``privacy_release``
and Dagster's in-process ``materialize`` of the ``demo_census`` graph. Each is run
once to warm up (imports, Airflow's metadata DB, Dagster's instance), then
``--repeat`` times; the best time is printed with the overhead over the plain release. Each
run starts without the destination, so each is a first release (no release history to check).

Run:  .venv/bin/python benchmarks/bench_orchestrators.py [--rows 5000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
HOME = Path(tempfile.mkdtemp(prefix="bench-orchestrators-"))
os.environ.update(
    AIRFLOW_HOME=str(HOME / "airflow"),
    AIRFLOW__CORE__DAGS_FOLDER=str(REPO / "dags"),
    AIRFLOW__CORE__LOAD_EXAMPLES="False",
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{HOME / 'airflow.db'}",
    DAGSTER_HOME=str(HOME / "dagster"),
    PRIVACY_PLUGINS_WORKDIR=str(HOME / "work"),
)
(HOME / "dagster").mkdir()
(HOME / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")


def spec_file(rows: int) -> Path:
    """The demo spec with ``rows`` rows, writing under the benchmark's folder."""
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text(encoding="utf-8"))
    data["source"]["rows"] = rows
    data["destination"] = {"duckdb": str(HOME / "release.duckdb"), "table": "census_release"}
    data["report"] = {"directory": str(HOME / "reports")}
    path = HOME / "demo_census.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def plain(path: Path) -> Callable[[], None]:
    from privacy_plugins.release import ReleaseSpec, run_release

    def go() -> None:
        assert run_release(ReleaseSpec.from_yaml(path)).published is not None

    return go


def airflow(path: Path) -> Callable[[], None]:
    from airflow.dag_processing.dagbag import DagBag
    from airflow.utils import db

    db.initdb()
    dag = DagBag(dag_folder=str(REPO / "dags" / "privacy_release.py")).get_dag("privacy_release")

    def go() -> None:
        run = dag.test(run_conf={"spec": str(path), "expectation_suite": ""})
        assert str(run.state) == "success"

    return go


def dagster(path: Path) -> Callable[[], None]:
    import dagster as dg

    from privacy_plugins.integrations.dagster import build_release_assets

    release = build_release_assets(path)

    def go() -> None:
        result = dg.materialize([*release.assets, *release.asset_checks], resources=release.resources())
        assert result.success

    return go


def first_release() -> None:
    """Remove the destination (its table and release history): every timed run is a first release.

    The demo spec keeps a release history in the destination, so without this each run is checked
    against all earlier runs' releases and whatever is timed later (Dagster, after plain and Airflow)
    does more work: the overhead would grow with the run's position, not with the orchestrator.
    """
    for path in HOME.glob("release.duckdb*"):
        path.unlink()


def best(run: Callable[[], None], repeat: int) -> float:
    first_release()
    run()  # warm-up: imports, metadata DB, instance
    times = []
    for _ in range(repeat):
        first_release()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        path = spec_file(args.rows)
        base = best(plain(path), args.repeat)
        print(f"rows {args.rows}: plain release {base:.2f} s (each run a first release)")
        for name, build in (("airflow dag.test", airflow), ("dagster materialize", dagster)):
            seconds = best(build(path), args.repeat)
            print(f"  {name:20s} {seconds:.2f} s  overhead {seconds - base:+.2f} s ({seconds / base - 1:+.0%})")
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
