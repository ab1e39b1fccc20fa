"""Great Expectations 1.x expectations for k-anonymity, l-diversity, t-closeness and personalized leakage.

Importing this package registers the metrics (first) and then the expectations
with GX: one per model family, and ``ExpectTableToSatisfyPrivacyModel`` for any
registered model (a custom one too). Import it in every process that builds,
loads or runs a suite. The metrics work with GX's pandas, SQLAlchemy and Spark execution engines.
SQL and Spark group the table where it lives and send back only aggregates.

Example:
    >>> from privacy_plugins.integrations.gx import ExpectTableToBeKAnonymous
    >>> ExpectTableToBeKAnonymous(quasi_identifiers=["age", "zip", "sex"], k=5).k
    5
"""

import logging

from privacy_plugins.integrations._compat import import_optional_dependency

# Importing GX logs ~220 INFO lines "Skipping registering function … because it is a closure / does not
# have a class" from its public-API docs registry; they flood every Airflow task log that imports GX.
# Quiet that one logger unless the application configured its level already.
_GX_DOCS_REGISTRY_LOGGER = logging.getLogger("great_expectations._docs_decorators")
if _GX_DOCS_REGISTRY_LOGGER.level == logging.NOTSET:
    _GX_DOCS_REGISTRY_LOGGER.setLevel(logging.WARNING)

import_optional_dependency("great_expectations", extra="gx")

from privacy_plugins.integrations.gx import identifier_metric, metrics, row_metrics  # noqa: E402  (metrics before expectations)
from privacy_plugins.integrations.gx.expectations import (  # noqa: E402
    ExpectTableAttackRiskToBeBelow,
    ExpectTableToBeKAnonymous,
    ExpectTableToBeLDiverse,
    ExpectTableToBeTClose,
    ExpectTableToComposeWithHistory,
    ExpectTableToHaveNoDirectIdentifiers,
    ExpectTableToSatisfyPersonalizedLeakageBound,
    ExpectTableToSatisfyPrivacyModel,
)
from privacy_plugins.integrations.gx.outcomes import CheckOutcome, FailureLevel, outcome, outcomes  # noqa: E402
from privacy_plugins.integrations.gx.suites import (  # noqa: E402
    ephemeral_context,
    load_suite,
    validate_candidate,
    validate_dataframe,
    validate_sql,
)

__all__ = [
    "CheckOutcome",
    "ExpectTableAttackRiskToBeBelow",
    "ExpectTableToBeKAnonymous",
    "ExpectTableToBeLDiverse",
    "ExpectTableToBeTClose",
    "ExpectTableToComposeWithHistory",
    "ExpectTableToHaveNoDirectIdentifiers",
    "ExpectTableToSatisfyPersonalizedLeakageBound",
    "ExpectTableToSatisfyPrivacyModel",
    "FailureLevel",
    "ephemeral_context",
    "identifier_metric",
    "load_suite",
    "metrics",
    "outcome",
    "outcomes",
    "row_metrics",
    "validate_candidate",
    "validate_dataframe",
    "validate_sql",
]
