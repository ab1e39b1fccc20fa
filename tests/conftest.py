"""Shared test configuration: hypothesis profiles (``dev`` default, ``ci`` in CI)."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# DuckDB's bindings (nanobind) and PySpark's py4j print leak reports and logging
# errors while the interpreter tears down, after pytest's summary line. They are
# harmless but bury the summary CI reads last, so once pytest is completely done
# the process exits with pytest's own status without the teardown. Set
# PRIVACY_PLUGINS_FULL_TEARDOWN=1 to see them.
_exit_status: int | None = None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if _exit_status is not None and not os.environ.get("PRIVACY_PLUGINS_FULL_TEARDOWN"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status)


# --doctest-modules would also import every conftest.py as a doctest module; with
# several conftest.py files in folders without __init__.py that clashes on the
# module name "conftest". Doctests live in the package, not here.
collect_ignore_glob = ["*/conftest.py", "conftest.py"]
