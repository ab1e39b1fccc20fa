"""Benchmark: the GX expectations on pandas versus the core call, and on DuckDB (GROUP BY pushed down) versus pandas.

For each expectation on Adult replicated to --rows records (default 1M):

* core:   EquivalenceClasses.from_frame + model.evaluate — what the expectation runs, without GX;
* pandas: batch.validate(expectation) on GX's pandas engine (overhead = pandas / core);
* duckdb: batch.validate(expectation) on a DuckDB table through SQLAlchemy (duckdb_engine), where
          the metric runs SELECT ..., COUNT(*) GROUP BY ... and only the aggregates come back.

Then GX's pandas batch load alone: every batch.validate() loads the batch again, and on pandas that
hashes the whole frame (GX's batch id), which is most of GX's overhead. Last, the whole suite at
once: GX computes each metric once per validation, so the five expectations on (QIs, occupation)
share one GROUP BY, and the batch is loaded once.

Run:  .venv/bin/python benchmarks/bench_gx.py [--rows 1000000] [--repeat 3]
Data: ../shared/data/adult/adult.csv (skipped with a message when absent). Needs the gx extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from bench_measure import best_of  # same timing rule as the other benchmarks (run from this folder)

import privacy_plugins as pp
from privacy_plugins.core.partition import EquivalenceClasses

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SENSITIVE = "occupation"


def expectations(gx_module) -> list:
    kwargs = {"quasi_identifiers": QIS, "sensitive_attribute": SENSITIVE}
    return [
        gx_module.ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=5, suppression_limit=0.01),
        gx_module.ExpectTableToBeLDiverse(**kwargs, l=2),
        gx_module.ExpectTableToBeLDiverse(**kwargs, l=2, l_variant="entropy"),
        gx_module.ExpectTableToBeLDiverse(**kwargs, l=2, l_variant="recursive", c=3),
        gx_module.ExpectTableToBeTClose(**kwargs, t=0.2),
        gx_module.ExpectTableToSatisfyPersonalizedLeakageBound(**kwargs, bound=0.5),
    ]


def label(expectation) -> str:
    variant = getattr(expectation, "variant", "")
    return expectation.expectation_type.removeprefix("expect_table_to_") + (f"[{variant}]" if variant else "")


def core_call(frame: pd.DataFrame, expectation) -> Callable[[], object]:
    model = expectation.build_model(expectation.__dict__)
    columns = QIS + ([SENSITIVE] if getattr(expectation, "sensitive", None) else [])
    return lambda: model.evaluate(EquivalenceClasses.from_frame(frame[columns], QIS))


def duckdb_batch(context, frame: pd.DataFrame, directory: str):
    import duckdb

    path = os.path.join(directory, "adult.duckdb")
    with duckdb.connect(path) as connection:
        connection.register("source_frame", frame)
        connection.execute("CREATE TABLE adult AS SELECT * FROM source_frame")
    source = context.data_sources.add_sql("duckdb", connection_string=f"duckdb:///{path}")
    return source.add_table_asset("adult", table_name="adult").add_batch_definition_whole_table("all").get_batch()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="size of the replicated table")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not ADULT.exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    import great_expectations as gx

    from privacy_plugins.integrations import gx as privacy_gx

    adult = pp.read_table(ADULT)
    copies = -(-args.rows // len(adult))
    frame = pd.concat([adult] * copies, ignore_index=True).iloc[: args.rows].reset_index(drop=True)
    context = privacy_gx.ephemeral_context()
    pandas_source = context.data_sources.add_pandas("pandas").add_dataframe_asset("adult")
    pandas_definition = pandas_source.add_batch_definition_whole_dataframe("all")
    pandas_batch = pandas_definition.get_batch(batch_parameters={"dataframe": frame})
    print(f"GX {gx.__version__}, pandas {pd.__version__}; {len(frame):,} rows (Adult x{copies}); QIs {QIS}")
    header = f"{'expectation':<46}{'core':>9}{'GX pandas':>11}{'overhead':>10}{'GX duckdb':>11}{'duckdb/pandas':>15}"
    print(header)
    with tempfile.TemporaryDirectory() as directory, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sql_batch = duckdb_batch(context, frame, directory)
        for expectation in expectations(privacy_gx):
            core = best_of(core_call(frame, expectation), args.repeat)
            on_pandas = best_of(lambda e=expectation: pandas_batch.validate(e), args.repeat)
            on_duckdb = best_of(lambda e=expectation: sql_batch.validate(e), args.repeat)
            a, b = pandas_batch.validate(expectation), sql_batch.validate(expectation)
            assert (
                a.result["observed_value"] == b.result["observed_value"]
                or abs(a.result["observed_value"] - b.result["observed_value"]) < 1e-9
            ), (a.result, b.result)
            print(
                f"{label(expectation):<46}{core * 1e3:7.0f}ms{on_pandas * 1e3:9.0f}ms{on_pandas / core:9.2f}x"
                f"{on_duckdb * 1e3:9.0f}ms{on_duckdb / on_pandas:14.2f}x"
            )
        load = best_of(lambda: pandas_definition.get_batch(batch_parameters={"dataframe": frame}), args.repeat)
        print(f"{'GX pandas batch load alone (paid per validate)':<46}{'':>9}{load * 1e3:9.0f}ms")
        suite = gx.ExpectationSuite(name="adult", expectations=expectations(privacy_gx))
        on_pandas = best_of(lambda: pandas_batch.validate(suite), args.repeat)
        on_duckdb = best_of(lambda: sql_batch.validate(suite), args.repeat)
        print(f"{'whole suite (6 expectations)':<46}{'':>9}{on_pandas * 1e3:9.0f}ms{'':>10}"
              f"{on_duckdb * 1e3:9.0f}ms{on_duckdb / on_pandas:14.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
