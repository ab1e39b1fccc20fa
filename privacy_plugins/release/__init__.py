"""The release flow: load → diagnose → anonymize → check → publish, driven by one ReleaseSpec.

This layer sits beside the core (it reads YAML, writes DuckDB/Parquet/SQL and
renders reports); the Airflow operators and Dagster assets are thin wrappers
around the same step functions, so every orchestrator produces the same release.
"""

from privacy_plugins.errors import DestinationBusy
from privacy_plugins.release.destinations import DestinationError, PublishError, publish_table, read_published
from privacy_plugins.release.flow import STEPS, ReleaseResult, run_release
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import (
    Candidate,
    CheckResult,
    DiagnosisSummary,
    ForeignArtifactError,
    LoadedTable,
    Publication,
    ReleaseBlocked,
    RequirementCheck,
    anonymize_step,
    check_step,
    diagnose_step,
    load_step,
    publish_step,
)
from privacy_plugins.release.workarea import new_run_id, remove_run_dir, remove_run_workdir, run_dir

__all__ = [
    "STEPS",
    "Candidate",
    "CheckResult",
    "DestinationBusy",
    "DestinationError",
    "DiagnosisSummary",
    "ForeignArtifactError",
    "LoadedTable",
    "Publication",
    "PublishError",
    "ReleaseBlocked",
    "ReleaseResult",
    "ReleaseSpec",
    "RequirementCheck",
    "anonymize_step",
    "check_step",
    "diagnose_step",
    "load_step",
    "new_run_id",
    "publish_step",
    "publish_table",
    "read_published",
    "remove_run_dir",
    "remove_run_workdir",
    "run_dir",
    "run_release",
]
