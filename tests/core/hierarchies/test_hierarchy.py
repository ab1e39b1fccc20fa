"""Hierarchy: validation in from_rows, leaf lookup, generalization, counts and rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.errors import HierarchyError

AGE_ROWS = [
    ["38", "[35-40)", "[30-40)", "*"],
    ["39", "[35-40)", "[30-40)", "*"],
    ["41", "[40-45)", "[40-50)", "*"],
    ["52", "[50-55)", "[50-60)", "*"],
]


@pytest.fixture
def age() -> Hierarchy:
    return Hierarchy.from_rows("age", AGE_ROWS)


# --- from_rows validation -------------------------------------------------------


def test_no_rows_is_an_error_naming_the_attribute() -> None:
    with pytest.raises(HierarchyError, match=r"'age' has no rows"):
        Hierarchy.from_rows("age", [])


def test_ragged_rows_are_an_error_listing_the_lengths() -> None:
    with pytest.raises(HierarchyError, match=r"'zip' has rows of different lengths \[2, 3\]"):
        Hierarchy.from_rows("zip", [["47907", "4790*", "*"], ["47906", "*"]])


def test_empty_row_is_an_error() -> None:
    with pytest.raises(HierarchyError, match="different lengths"):
        Hierarchy.from_rows("zip", [[]])


def test_duplicate_leaf_is_an_error_naming_it_only_when_values_are_shown() -> None:
    rows = [["male", "*"], ["female", "*"], ["male", "*"]]
    with pytest.raises(HierarchyError, match=r"'sex' lists 1 leaf value\(s\) more than once \(values hidden") as hidden:
        Hierarchy.from_rows("sex", rows)
    assert "male" not in str(hidden.value)
    with values_shown(), pytest.raises(HierarchyError, match=r"more than once, e\.g\. \['male'\]"):
        Hierarchy.from_rows("sex", rows)


def test_value_with_two_parents_names_the_value_and_both_parents() -> None:
    rows = [["1", "A", "X", "*"], ["2", "A", "Y", "*"]]
    with pytest.raises(HierarchyError) as info:
        Hierarchy.from_rows("code", rows)
    message = str(info.value)
    assert "not a tree" in message
    assert "'A' at level 1" in message
    assert "'X'" in message
    assert "'Y'" in message


def test_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Hierarchy.from_rows("age", [])


def test_cells_are_text_kept_exactly() -> None:
    """Cells are not stripped: data such as UCI Adult's ' State-gov' must match its leaf exactly."""
    h = Hierarchy.from_rows("age", [[39, " [35-40) ", "*"], [40.5, "[40-45)", "*"]])
    assert h.leaves.tolist() == ["39", "40.5"]
    assert h.labels[1].tolist() == [" [35-40) ", "[40-45)"]
    assert Hierarchy.from_rows("w", [[" x ", "*"]]).leaf_codes([" x "]).tolist() == [0]


def test_single_root_is_required() -> None:
    with pytest.raises(HierarchyError, match=r"2 values at its top level \['x', 'y'\]; it needs a single root"):
        Hierarchy.from_rows("a", [["1", "x"], ["2", "y"]])


def test_shape_and_properties(age: Hierarchy) -> None:
    assert age.height == 3
    assert age.n_leaves == 4
    assert age.codes.shape == (4, 4)
    assert age.leaves.tolist() == ["38", "39", "41", "52"]
    assert age.labels[2].tolist() == ["[30-40)", "[40-50)", "[50-60)"]
    assert age.labels[3].tolist() == ["*"]


def test_height_zero_hierarchy() -> None:
    h = Hierarchy.from_rows("id", [["a"]])
    assert h.height == 0
    assert h.generalize(["a"], 0).tolist() == ["a"]
    with pytest.raises(HierarchyError, match="single root"):
        Hierarchy.from_rows("id", [["a"], ["b"]])


# --- leaf_codes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [39, 52, 38],
        pd.Series([39, 52, 38], dtype="int64"),
        pd.Series([39.0, 52.0, 38.0]),
        pd.Series([39, 52, 38], dtype="Int64"),
        ["39", "52", "38"],
        pd.Series(["39", "52", "38"], dtype="string"),
        np.array([39, 52, 38]),
    ],
    ids=["int-list", "int64", "float64", "Int64", "str-list", "string", "ndarray"],
)
def test_leaf_codes_accept_ints_floats_and_strings(age: Hierarchy, values: object) -> None:
    assert age.leaf_codes(values).tolist() == [1, 3, 0]


def test_float_data_with_fractions_match_their_text() -> None:
    h = Hierarchy.from_rows("score", [["1.5", "*"], ["2", "*"]])
    assert h.leaf_codes(pd.Series([2.0, 1.5])).tolist() == [1, 0]


def test_leaf_codes_of_no_values_is_empty(age: Hierarchy) -> None:
    assert age.leaf_codes([]).tolist() == []


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_missing_value_is_an_error(age: Hierarchy, missing: object) -> None:
    with pytest.raises(HierarchyError, match=r"column 'age' has 1 missing values"):
        age.leaf_codes(pd.Series([39, missing, 41], dtype=object))


def test_float_column_with_nan_is_a_missing_value_error(age: Hierarchy) -> None:
    with pytest.raises(HierarchyError, match="missing values"):
        age.leaf_codes(pd.Series([39.0, np.nan]))


def test_values_not_in_hierarchy_are_counted_and_listed_only_when_asked(age: Hierarchy) -> None:
    with pytest.raises(HierarchyError) as info:
        age.leaf_codes([39, 17, 99, 17, 38])
    message = str(info.value)
    assert "column 'age' has 2 value(s) that are not leaves" in message
    assert "17" not in message and "99" not in message and "values hidden" in message
    with values_shown(), pytest.raises(HierarchyError) as info:
        age.leaf_codes([39, 17, 99, 17, 38])
    message = str(info.value)
    assert "'17'" in message
    assert "'99'" in message


def test_float_not_integral_is_not_an_integer_leaf(age: Hierarchy) -> None:
    with values_shown(), pytest.raises(HierarchyError, match=r"'39\.5'"):
        age.leaf_codes([39.5])
    with pytest.raises(HierarchyError, match=r"1 value\(s\)") as hidden:  # by default: a count, not the value
        age.leaf_codes([39.5])
    assert "39" not in str(hidden.value)


def test_as_labels_writes_canonical_text() -> None:
    assert as_labels(pd.Series([39, 40])).tolist() == ["39", "40"]
    assert as_labels(pd.Series([39.0, 2.5])).tolist() == ["39", "2.5"]
    assert as_labels(pd.Series([True, False])).tolist() == ["True", "False"]
    labels = as_labels(pd.Series([1, None], dtype="Int64"))
    assert labels[0] == "1"
    assert pd.isna(labels[1])


# --- generalize, counts, rows ----------------------------------------------------------


def test_generalize_every_level(age: Hierarchy) -> None:
    data = pd.Series([39, 52, 41, 39])
    assert age.generalize(data, 0).tolist() == ["39", "52", "41", "39"]
    assert age.generalize(data, 1).tolist() == ["[35-40)", "[50-55)", "[40-45)", "[35-40)"]
    assert age.generalize(data, 2).tolist() == ["[30-40)", "[50-60)", "[40-50)", "[30-40)"]
    assert age.generalize(data, 3).tolist() == ["*"] * 4


def test_generalize_accepts_numpy_levels(age: Hierarchy) -> None:
    assert age.generalize([38], np.int64(2)).tolist() == ["[30-40)"]


def test_generalize_checks_values(age: Hierarchy) -> None:
    with pytest.raises(HierarchyError, match="not leaves"):
        age.generalize([17], 1)


def test_leaf_counts(age: Hierarchy) -> None:
    assert [counts.tolist() for counts in age.leaf_counts] == [[1, 1, 1, 1], [2, 1, 1], [2, 1, 1], [4]]


@pytest.mark.parametrize("level", [-1, 4, 1.0, "1", True, None])
def test_check_level_rejects(age: Hierarchy, level: object) -> None:
    with pytest.raises(HierarchyError, match=r"level for 'age' must be an integer in 0\.\.3"):
        age.check_level(level)


def test_check_level_returns_int(age: Hierarchy) -> None:
    assert age.check_level(np.int32(3)) == 3
    assert type(age.check_level(np.int32(3))) is int


def test_to_rows_round_trip(age: Hierarchy) -> None:
    assert age.to_rows() == AGE_ROWS
    again = Hierarchy.from_rows("age", age.to_rows())
    assert all(np.array_equal(a, b) for a, b in zip(again.labels, age.labels))
    assert np.array_equal(again.codes, age.codes)


def test_to_rows_are_plain_lists_of_str(age: Hierarchy) -> None:
    rows = age.to_rows()
    assert all(type(row) is list for row in rows)
    assert all(type(cell) is str for row in rows for cell in row)
