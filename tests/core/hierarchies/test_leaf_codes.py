"""Leaf codes are computed on distinct values only; they must equal labelling every value first."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.hierarchies.hierarchy import as_labels
from privacy_plugins.errors import HierarchyError

LEAVES = ["1", "2", "3", "10", "True", "False", "x", "y"]
HIERARCHY = Hierarchy.from_rows("q", [[leaf, "*"] for leaf in LEAVES])


def labelled_first(series: pd.Series) -> np.ndarray:
    """The reference: label every value, then look it up."""
    return np.asarray(HIERARCHY._leaf_index.get_indexer(pd.Index(as_labels(series).to_numpy(dtype=object))))


@given(
    st.lists(st.sampled_from([1, 2, 3, 10]), min_size=1, max_size=30), st.sampled_from(["int64", "Int64", "float64"])
)
def test_numeric_columns_match_labelling_first(values: list[int], dtype: str) -> None:
    series = pd.Series(values, dtype=dtype)
    assert HIERARCHY.leaf_codes(series).tolist() == labelled_first(series).tolist()


@given(
    st.lists(st.sampled_from(["1", "x", "y", "True"]), min_size=1, max_size=30),
    st.sampled_from(
        [
            "str",
            "object",
            "category",
            "string[pyarrow]",
            "string[python]",
            pd.ArrowDtype(pa.string()),
            pd.ArrowDtype(pa.large_string()),
        ]
    ),
)
def test_text_columns_match_labelling_first(values: list[str], dtype: object) -> None:
    series = pd.Series(values, dtype=dtype)
    assert HIERARCHY.leaf_codes(series).tolist() == labelled_first(series).tolist()


def test_object_columns_keep_true_and_one_apart() -> None:
    series = pd.Series([True, 1, False, "x"], dtype=object)
    assert HIERARCHY.leaf_codes(series).tolist() == [4, 0, 5, 6] == labelled_first(series).tolist()


@pytest.fixture
def show_values() -> Iterator[None]:
    """The caller opted in (--include-values): messages may name the values."""
    with values_shown():
        yield


def test_values_outside_the_hierarchy_are_named(show_values: None) -> None:
    with pytest.raises(HierarchyError, match="'7'"):
        HIERARCHY.leaf_codes(pd.Series([1, 7, 7]))
    with pytest.raises(HierarchyError, match="missing"):
        HIERARCHY.leaf_codes(pd.Series(["x", None], dtype="str"))
    for dtype in ["str", pd.ArrowDtype(pa.string())]:  # Arrow text takes a faster path: the same errors
        with pytest.raises(HierarchyError, match="'z'"):
            HIERARCHY.leaf_codes(pd.Series(["x", "z", "1"], dtype=dtype))
        with pytest.raises(HierarchyError, match="missing"):
            HIERARCHY.leaf_codes(pd.Series(["x", None], dtype=dtype))


@given(
    st.lists(st.integers(-3, 12), min_size=1, max_size=30),
    st.sampled_from(["int64", "int32", "int8", "uint16"]),
)
def test_integer_columns_take_the_table_path_and_match_labelling_first(values: list[int], dtype: str) -> None:
    """Integer leaves are looked up through a table: only canonical spellings match, the rest fail alike."""
    hierarchy = Hierarchy.from_rows("q", [[leaf, "*"] for leaf in ["-2", "0", "1", "07", "10", " 3", "x"]])
    series = pd.Series(values).astype(dtype) if min(values) >= 0 or dtype[0] != "u" else pd.Series([0], dtype=dtype)
    labels = pd.Index(as_labels(series).to_numpy(dtype=object))
    reference = np.asarray(hierarchy._leaf_index.get_indexer(labels))
    if (reference < 0).any():
        with pytest.raises(HierarchyError, match="not leaves"):
            hierarchy.leaf_codes(series)
    else:
        assert hierarchy._integer_leaf_codes(series) is not None
        assert hierarchy.leaf_codes(series).tolist() == reference.tolist()
