"""The demo releases as one Dagster code location (wiring only; see README.md here).

* ``demo_census`` — ``specs/demo_census.yaml``: every blocking check passes and
  ``published`` replaces ``release_output/release.duckdb#census_release``.
  With the ``gx`` extra installed, two GX suites run as extra checks:
  ``expectations/demo_release.json`` (critical, passes) and
  ``expectations/demo_release_monitoring.json`` (warning/info, fails as WARN
  without blocking).
* ``census_policy_gate`` — the same spec under a stricter policy in the code
  (``policy={"min_k": 10}``): the candidate is built for k = 5, the blocking
  ``k_anonymity`` check fails with ERROR, ``published`` does not run.
* ``demo_impossible`` — ``specs/demo_impossible.yaml`` (9-diversity over 8
  diseases): ``anonymized_candidate`` fails (infeasible), so neither its checks
  nor ``published`` run.

The three share the destination table; only ``demo_census`` ever writes it.
Loading this module reads the YAML specs and nothing else.
"""

import importlib.util
from pathlib import Path

import dagster as dg

from privacy_plugins.integrations.dagster import PrivacyReleaseResource, build_release_assets
from privacy_plugins.release import ReleaseSpec

REPO = Path(__file__).resolve().parent.parent
CENSUS = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census.yaml")
SUITES = [REPO / "expectations" / "demo_release.json", REPO / "expectations" / "demo_release_monitoring.json"]

census = build_release_assets(
    CENSUS, expectation_suite=SUITES if importlib.util.find_spec("great_expectations") else None
)
policy_gate = build_release_assets(CENSUS, key_prefix="census_policy_gate", policy={"min_k": 10})
impossible = build_release_assets(REPO / "specs" / "demo_impossible.yaml")

defs = dg.Definitions.merge(
    census.definitions(),
    policy_gate.definitions(PrivacyReleaseResource(report_directory=str(REPO / "release_output" / "policy_gate"))),
    impossible.definitions(),
    # One process: ~3x faster for `dagster asset materialize`, and one writer of the DuckDB file.
    dg.Definitions(executor=dg.in_process_executor),
)
