"""The test tree's own layout: pytest imports test files by basename (rootdir mode, no packages)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_unique_basename() -> None:
    """Two ``test_x.py`` in different folders stop the whole run at collection ("import file mismatch")."""
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert not [name for name, count in names.items() if count > 1]


#: Import names of the project's dependencies (core and extras, see pyproject.toml) and of what the
#: tests import. pytest's rootdir import mode puts test folders on ``sys.path``: a folder named like one
#: of these becomes a namespace package, so ``importorskip("airflow")`` imports the folder instead of
#: skipping where Airflow is not installed.
DEPENDENCY_IMPORT_NAMES = frozenset(
    {
        "airflow", "dagster", "dagster_webserver", "dagster_dg_cli", "great_expectations", "pyspark",
        "duckdb", "duckdb_engine", "sqlalchemy", "pandas", "numpy", "pyarrow", "matplotlib", "yaml", "rich",
        "psycopg", "cryptography", "moto", "boto3", "botocore", "s3fs", "hypothesis", "pytest",
        "privacy_plugins",
    }
)  # fmt: skip


def _installed_dependency_names() -> set[str]:
    """Top-level import names of every installed distribution (wider than the list, where more is installed)."""
    from importlib.metadata import packages_distributions

    return {name for name in packages_distributions() if name.isidentifier() and not name.startswith("_")}


def test_no_test_folder_is_named_like_an_importable_dependency() -> None:
    folders = {path.name for path in TESTS.rglob("*") if path.is_dir() and path.name != "__pycache__"}
    shadowing = sorted(folders & (DEPENDENCY_IMPORT_NAMES | _installed_dependency_names()))
    assert not shadowing, f"test folders shadow importable packages (rename them, e.g. <name>_adapter): {shadowing}"
