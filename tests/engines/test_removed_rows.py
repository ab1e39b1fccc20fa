"""``EngineTable.generalized(removed=…)``: records left out one by one by their raw values, the same on every engine.

The anonymize step leaves out the records a release history puts at risk (issue 26, (c)) where
the rows live; rows equal to a removed row on its columns go, missing values included.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from engine_checks import ENGINES, engine_table, multiset

from privacy_plugins.engines.base import EngineTable
from privacy_plugins.errors import UnknownColumnError

FRAME = pd.DataFrame(
    {
        "age": [21, 21, 35, 35, 35, 50],
        "zip": ["47906", "47906", "47611", "47611", "47906", "47611"],
        "disease": ["flu", "hiv", "flu", None, "flu", "cold"],
    }
)
MAPPING = pd.DataFrame({"value": [21, 35, 50], "label": ["[20-39]", "[20-39]", "[40-59]"]})


def _expected(removed_rows: list[int]) -> pd.DataFrame:
    kept = FRAME.drop(index=removed_rows).copy()
    kept["age"] = kept["age"].map(dict(zip(MAPPING["value"], MAPPING["label"], strict=True)))
    return multiset(kept.fillna("<missing>"))


def _generalized(table: EngineTable, removed: pd.DataFrame, method: str = "case") -> pd.DataFrame:
    out = table.generalized(
        keep=list(FRAME.columns), mappings={"age": MAPPING}, suppressed=pd.DataFrame(), removed=removed, method=method
    )  # type: ignore[arg-type]
    return multiset(out.to_pandas().fillna("<missing>"))


@pytest.mark.parametrize("kind", ENGINES)
def test_removed_rows_go_by_their_raw_values_missing_values_included(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    table = engine_table(kind, FRAME, tmp_path, request)
    by_qis = pd.DataFrame({"age": [21], "zip": ["47906"]})  # both records of that raw combination
    assert _generalized(table, by_qis).equals(_expected([0, 1]))
    with_missing = FRAME.iloc[[3, 5]]  # a missing sensitive value matches a missing value
    assert _generalized(table, with_missing, method="join").equals(_expected([3, 5]))
    assert _generalized(table, FRAME.iloc[:0]).equals(_expected([]))


def test_a_removed_column_the_table_lacks_is_named() -> None:
    from privacy_plugins.engines.pandas_engine import PandasTable

    with pytest.raises(UnknownColumnError, match="income"):
        _generalized(PandasTable(FRAME), pd.DataFrame({"income": [1]}))
