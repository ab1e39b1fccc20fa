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

* ``demo_census_monthly`` (``monthly.py``) — a release per month of the demo census's monthly
  extracts (``census_extract``), each month checked against the release history of every
  month published before it; its monitoring check runs on an ``AutomationCondition``.
``census_release_summary`` is a downstream asset: it loads ``demo_census/published``
through the release's reader as a DuckDB relation (counts only, no values).
Loading this module reads the YAML specs and nothing else.
"""

import importlib.util
from pathlib import Path

import dagster as dg
import duckdb

from dagster_defs import monthly
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


@dg.asset(ins={"published": census.published_in()}, group_name="downstream")
def census_release_summary(published: duckdb.DuckDBPyRelation) -> dg.MaterializeResult[None]:
    """What a consumer of the release sees: row and class counts of the published table."""
    qis = ", ".join(f'"{column}"' for column in CENSUS.quasi_identifiers)
    ((rows, classes),) = published.aggregate(f"count(*), count(DISTINCT ({qis}))").fetchall()
    return dg.MaterializeResult(metadata={"rows": int(rows), "classes": int(classes)})


defs = dg.Definitions.merge(
    census.definitions(),
    census.monitoring(),  # each daily tick (AutomationCondition): published re-measured by still_meets_requirements
    dg.Definitions(assets=[census_release_summary]),
    policy_gate.definitions(PrivacyReleaseResource(report_directory=str(REPO / "release_output" / "policy_gate"))),
    impossible.definitions(),
    monthly.defs,  # demo_census_monthly: one release per month, the release history spanning the months
    # One process: ~3x faster for `dagster asset materialize`, and one writer of the DuckDB file.
    dg.Definitions(executor=dg.in_process_executor),
)
if (Path(__file__).parent / "defs").is_dir():  # releases scaffolded with `dg scaffold defs …PrivacyRelease NAME`
    defs = dg.Definitions.merge(defs, dg.load_from_defs_folder(path_within_project=Path(__file__).parent))
