"""The issue-30 models as GX expectations: on pandas and pushed down to SQL (GROUP BY where the table lives)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

import sqlalchemy as sa

from privacy_plugins.integrations.gx import ephemeral_context, load_suite, outcomes, validate_dataframe

FRAME = pd.DataFrame({"zip": ["1"] * 6 + ["2"] * 3 + ["3", "4"], "sex": ["f"] * 11})
MODELS = [
    ("average_reidentification_risk", {"max": 0.3}),
    ("population_uniqueness", {"max": 0.05, "population": 0.1, "estimator": "zayatz"}),
    ("k_map", {"k": 20, "population": 0.25}),
]


def test_population_models_judge_pandas_and_sql_alike(tmp_path: Path) -> None:
    suite = load_suite(
        {
            "name": "population",
            "expectations": [
                {
                    "type": "expect_table_to_satisfy_privacy_model",
                    "kwargs": {"quasi_identifiers": ["zip", "sex"], "privacy_model": name, "parameters": parameters},
                }
                for name, parameters in MODELS
            ],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        verdicts = [(v.status, v.observed) for v in outcomes(validate_dataframe(FRAME, suite))]
    # J/n = 4/11; Zayatz with f = 0.1 from the histogram {1: 2, 3: 1, 6: 1}; k' = 4 (Poisson, λ = 5): smallest 1 / 0.25
    assert verdicts[0] == ("failed", pytest.approx(4 / 11))
    assert verdicts[1][0] == "passed" and 0 < verdicts[1][1] < 0.05
    assert verdicts[2] == ("failed", pytest.approx(4.0))
    url = f"sqlite:///{tmp_path / 'people.sqlite'}"
    engine = sa.create_engine(url)
    FRAME.to_sql("people", engine, index=False)
    engine.dispose()
    source = ephemeral_context().data_sources.add_sqlite("sqlite", connection_string=url)
    batch = source.add_table_asset("people", table_name="people").add_batch_definition_whole_table("all").get_batch()
    assert [(v.status, v.observed) for v in outcomes(batch.validate(suite))] == verdicts
