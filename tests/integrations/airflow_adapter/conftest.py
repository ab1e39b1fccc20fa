"""Airflow test setup: a throw-away AIRFLOW_HOME and SQLite metadata DB, set before Airflow is imported.

No scheduler, webserver or network: DAGs run in-process with ``dag.test()``.
The DB is initialized once per session. The session's DAGs folder holds
symlinks to the repo's ``dags/*.py`` plus ``dags/airflow_gate_dags.py`` from
this folder (``dag.test()`` only runs DAGs it finds in the DAGs folder).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent

_HOME = Path(tempfile.mkdtemp(prefix="privacy-plugins-airflow-"))
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)
_DAGS = _HOME / "dags"
_DAGS.mkdir()
for dag_file in [*sorted((REPO / "dags").glob("*.py")), *sorted((HERE / "dags").glob("*.py"))]:
    (_DAGS / dag_file.name).symlink_to(dag_file)

os.environ["AIRFLOW_HOME"] = str(_HOME)
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(_DAGS)
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_HOME / 'airflow.db'}"
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

# pytest --doctest-modules would import the test DAG file (and fail without Airflow): DagBag loads it instead.
collect_ignore = ["dags"]

ROWS = 1_500  # the demo specs' 5 000 rows make the diagnosis slow; 1 500 still meet k = 5, l = 2


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """Create the Airflow metadata tables once (~7 s)."""
    pytest.importorskip("airflow")
    from airflow.utils import db

    db.initdb()


@pytest.fixture(scope="session")
def dagbag(airflow_db: None) -> Any:
    """The session's DAGs folder, parsed once."""
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(_DAGS))


def write_specs(directory: Path, *, rows: int = ROWS) -> dict[str, Path]:
    """Copies of the demo specs in ``directory/specs`` (smaller table); outputs land in ``directory/release_output``."""
    (directory / "specs").mkdir(parents=True, exist_ok=True)
    specs = {}
    for name in ("demo_census", "demo_impossible"):
        data = yaml.safe_load((REPO / "specs" / f"{name}.yaml").read_text(encoding="utf-8"))
        data["source"]["rows"] = rows
        specs[name] = directory / "specs" / f"{name}.yaml"
        specs[name].write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return specs


@pytest.fixture
def specs(tmp_path: Path) -> dict[str, Path]:
    return write_specs(tmp_path)


@pytest.fixture(scope="module")
def module_specs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    yield write_specs(tmp_path_factory.mktemp("release"))
