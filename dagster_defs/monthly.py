"""The monthly demo release: one release per month of the demo census, every month checked against the earlier ones.

``census_extract`` writes each month's extract of the demo census (``release_output/extracts/<month>.parquet``:
about 80% of the same 5,000 people every month, as monthly extracts of a register are). The release of
``specs/demo_census_monthly.yaml`` is partitioned by month like it: ``raw`` reads only that month's extract
(``{partition_key}`` in ``source.path``), ``published`` writes ``census_monthly_<month>`` in
``release_output/monthly.duckdb``, and the composition check measures each month's candidate against the
release history ``census_monthly`` — every month published before it — so a month that would disclose a
disease or an income together with them is blocked and publishes nothing. The monitoring check re-measures
every published month on each daily tick (an ``AutomationCondition``: the automation sensor runs it).

    dg launch --assets 'census_extract,key:"demo_census_monthly/*"' --partition 2026-01-01
    dg launch --assets 'census_extract,key:"demo_census_monthly/*"' --partition 2026-02-01
"""

from pathlib import Path

import dagster as dg

from privacy_plugins import generate_census
from privacy_plugins.integrations.dagster import build_release_assets
from privacy_plugins.release import ReleaseSpec

REPO = Path(__file__).resolve().parent.parent
MONTHLY = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census_monthly.yaml")
MONTHS = dg.MonthlyPartitionsDefinition(start_date="2026-01-01", end_date="2026-07-01")
PEOPLE, SHARE = 5_000, 0.8


@dg.asset(partitions_def=MONTHS, group_name="demo_census_monthly", kinds={"python", "parquet"})
def census_extract(context: dg.AssetExecutionContext) -> dg.MaterializeResult[None]:
    """The month's extract: a seeded ~80% of the same people (the source of the month's release; raw, private)."""
    month = MONTHS.get_partition_keys().index(context.partition_key)
    people = generate_census(PEOPLE, seed=0)
    extract = people.sample(frac=SHARE, random_state=month).sort_index()
    folder = Path(str(MONTHLY.source.path)).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    extract.to_parquet(folder / f"{context.partition_key}.parquet", index=False)
    return dg.MaterializeResult(metadata={"rows": len(extract)})


monthly = build_release_assets(MONTHLY, partitions_def=MONTHS, source_deps=[census_extract])
defs = dg.Definitions.merge(
    monthly.definitions(),
    monthly.monitoring(),  # still_meets_requirements on every published month, on each daily tick
    dg.Definitions(assets=[census_extract]),
)
