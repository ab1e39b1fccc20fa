"""The run's targets grouped by DuckDB where the load step stored them: the combinations, counts, dtypes of pandas."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.history import COUNT
from privacy_plugins.core.models import DistinctLDiversity, PersonalizedLeakage
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.release.composition_gate import run_targets
from privacy_plugins.release.staged_candidate import LOADED_FILE, SNAPSHOT_FILE


def _rows(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "age": pd.Series(rng.integers(20, 30, n), dtype="Int64").mask(rng.random(n) < 0.1),
            "zip": pd.Categorical(rng.choice(["47906", "47907", "it's"], n)),
            "height": np.where(rng.random(n) < 0.1, np.nan, rng.integers(150, 155, n) + 0.5),
            "smoker": rng.random(n) < 0.5,
            'say "hi"': pd.Series(rng.choice(["a", "b", None], n), dtype=object),
            "disease": rng.choice(["flu", "hiv", "cold"], n),
            "bound": rng.choice([0.5, 1.0], n),
            "income": rng.integers(0, 10**6, n),  # read by no model: not a target column
        }
    )


def _spec() -> Any:
    qis = ["age", "zip", "height", "smoker", 'say "hi"']
    models = [DistinctLDiversity("disease", 2), PersonalizedLeakage("disease", bound_column="bound")]
    return SimpleNamespace(quasi_identifiers=qis, sensitive_attributes=["disease"], models=lambda: models)


@pytest.mark.parametrize("stored", [LOADED_FILE, SNAPSHOT_FILE])
def test_the_targets_are_pandas_groupby_counts(tmp_path: Path, stored: str) -> None:
    rows = _rows()
    columns = ["age", "zip", "height", "smoker", 'say "hi"', "disease", "bound"]
    if stored == SNAPSHOT_FILE:  # the engine's weighted snapshot: distinct rows with their counts
        table = rows.groupby(columns, dropna=False, observed=True).size().rename(COUNT_COLUMN).reset_index()
        table[COUNT_COLUMN] = table[COUNT_COLUMN] * 3
        weights = table[COUNT_COLUMN].to_numpy(dtype=np.int64)
    else:
        table, weights = rows, np.ones(len(rows), dtype=np.int64)
    table.to_parquet(tmp_path / stored, index=False)
    read = pd.read_parquet(tmp_path / stored, columns=columns)
    expected = (
        read.assign(**{COUNT: weights})
        .groupby(columns, dropna=False, sort=False, observed=True)[COUNT]
        .sum()
        .reset_index()
    )
    found = run_targets(_spec(), tmp_path)
    assert list(found.columns) == [*columns, COUNT]
    assert found[COUNT].sum() == weights.sum() and len(found) == len(expected)
    for column in columns:
        assert found[column].dtype == read[column].dtype or isinstance(read[column].dtype, pd.CategoricalDtype)
    key = [*columns, COUNT]
    pd.testing.assert_frame_equal(
        found.astype(object).sort_values(key, key=lambda s: s.astype(str)).reset_index(drop=True),
        expected.astype(object).sort_values(key, key=lambda s: s.astype(str)).reset_index(drop=True),
    )
