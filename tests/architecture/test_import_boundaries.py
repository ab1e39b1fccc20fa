"""The core never imports a framework: it must import with GX, Airflow and Dagster blocked."""

from __future__ import annotations

import subprocess
import sys

BLOCKER = """
import importlib.abc, sys
BLOCKED = ("great_expectations", "airflow", "dagster", "matplotlib", "yaml", "duckdb", "sqlalchemy", "rich",
           "privacy_plugins.integrations", "privacy_plugins.report", "privacy_plugins.release")
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(BLOCKED):
            raise ImportError(f"core imported forbidden module {name}")
        return None
sys.meta_path.insert(0, Block())
import privacy_plugins, privacy_plugins.core
import pkgutil, importlib
for info in pkgutil.walk_packages(privacy_plugins.core.__path__, "privacy_plugins.core."):
    importlib.import_module(info.name)
leaked = sorted(m for m in sys.modules if m.startswith(BLOCKED))
assert not leaked, leaked
print("ok")
"""


def test_core_imports_without_frameworks() -> None:
    result = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
