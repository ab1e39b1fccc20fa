"""Airflow 3 provider: the privacy release as Airflow tasks.

One operator per release step — ``LoadOperator``, ``PrivacyDiagnosisOperator``,
``AnonymizeOperator``, ``PrivacyCheckOperator``, ``PublishOperator`` — each a thin
wrapper over ``privacy_plugins.release``. They pass the steps' small JSON
artifacts (paths, counts, check verdicts; never DataFrames or raw values)
through XCom, and do all their work in ``execute()``. ``release_tasks`` wires
all five from one ``ReleaseSpec`` YAML. Needs the ``airflow`` extra
(``pip install 'privacy-plugins[airflow]'``); the provider registers itself
through the ``apache_airflow_provider`` entry point (``get_provider_info``).

Names are imported lazily, so the providers manager can read
``get_provider_info`` without importing the operators.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from privacy_plugins.integrations._compat import import_optional_dependency

if TYPE_CHECKING:
    from privacy_plugins.integrations.airflow.exceptions import PrivacyCheckError, PrivacyCheckFailed
    from privacy_plugins.integrations.airflow.monitor import PublishedDrift, check_published
    from privacy_plugins.integrations.airflow.operators import (
        AnonymizeOperator,
        LoadOperator,
        PrivacyCheckOperator,
        PrivacyDiagnosisOperator,
        PublishOperator,
        ReleaseCleanupOperator,
    )
    from privacy_plugins.integrations.airflow.release import ReleaseTasks, release_tasks

__all__ = [
    "AnonymizeOperator",
    "LoadOperator",
    "PrivacyCheckError",
    "PrivacyCheckFailed",
    "PrivacyCheckOperator",
    "PrivacyDiagnosisOperator",
    "PublishOperator",
    "PublishedDrift",
    "ReleaseCleanupOperator",
    "ReleaseTasks",
    "check_published",
    "release_tasks",
]

_MODULES = {
    "PrivacyCheckError": "exceptions",
    "PrivacyCheckFailed": "exceptions",
    "ReleaseTasks": "release",
    "release_tasks": "release",
    "PublishedDrift": "monitor",
    "check_published": "monitor",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import_optional_dependency("airflow.sdk", extra="airflow")
    module = importlib.import_module(f"{__name__}.{_MODULES.get(name, 'operators')}")
    return getattr(module, name)
