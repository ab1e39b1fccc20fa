"""The release operators, one per release step (Airflow 3 ``airflow.sdk`` authoring API)."""

from privacy_plugins.integrations._compat import import_optional_dependency

import_optional_dependency("airflow.sdk", extra="airflow")

from privacy_plugins.integrations.airflow.operators.anonymize import AnonymizeOperator  # noqa: E402
from privacy_plugins.integrations.airflow.operators.cleanup import ReleaseCleanupOperator  # noqa: E402
from privacy_plugins.integrations.airflow.operators.diagnosis import PrivacyDiagnosisOperator  # noqa: E402
from privacy_plugins.integrations.airflow.operators.load import LoadOperator  # noqa: E402
from privacy_plugins.integrations.airflow.operators.privacy_check import PrivacyCheckOperator  # noqa: E402
from privacy_plugins.integrations.airflow.operators.publish import PublishOperator  # noqa: E402

__all__ = [
    "AnonymizeOperator",
    "LoadOperator",
    "PrivacyCheckOperator",
    "PrivacyDiagnosisOperator",
    "PublishOperator",
    "ReleaseCleanupOperator",
]
