"""Hierarchy builders: labels on small examples, errors that name the value, and tree properties."""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import (
    Hierarchy,
    as_labels,
    date_hierarchy,
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from privacy_plugins.errors import HierarchyError


def assert_well_formed(h: Hierarchy, values: object) -> None:
    """Every value is a leaf, levels nest, one top, and generalizing never adds distinct values."""
    data = pd.Series(list(values))
    assert h.generalize(data, 0).tolist() == as_labels(data).tolist()
    assert set(h.leaves) == set(as_labels(data))
    for level in range(h.height):
        pairs = set(zip(h.codes[level].tolist(), h.codes[level + 1].tolist()))
        assert len(pairs) == len(h.labels[level]), f"level {level} is not a tree"
    assert h.labels[h.height].tolist() == [h.labels[h.height][0]]
    distinct = [len(set(h.generalize(data, level))) for level in range(h.height + 1)]
    assert distinct == sorted(distinct, reverse=True)
    assert distinct[-1] == 1
    assert Hierarchy.from_rows(h.attribute, h.to_rows()).to_rows() == h.to_rows()


def intervals(h: Hierarchy, values: list[int], level: int) -> list[tuple[int, Fraction, Fraction]]:
    """``(value, low, high)`` for each value and its ``[low-high)`` label at ``level``."""
    triples = []
    for value, label in zip(values, h.generalize(values, level)):
        match = re.fullmatch(r"\[(-?[0-9.e+-]+?)-(-?[0-9.e+-]+)\)", label)
        assert match, label
        triples.append((value, Fraction(match.group(1)), Fraction(match.group(2))))
    return triples


# --- interval_hierarchy ------------------------------------------------------------------


def test_widths_align_bins_at_multiples() -> None:
    h = interval_hierarchy("age", [23, 37, 41, 23], widths=(5, 10, 20))
    assert h.to_rows() == [
        ["23", "[20-25)", "[20-30)", "[20-40)", "*"],
        ["37", "[35-40)", "[30-40)", "[20-40)", "*"],
        ["41", "[40-45)", "[40-50)", "[40-60)", "*"],
    ]


def test_widths_with_floats_and_negatives_use_canonical_text() -> None:
    h = interval_hierarchy("t", [0.3, -3, 1.0, 2], widths=(0.1, 0.5))
    assert h.leaves.tolist() == ["-3", "0.3", "1", "2"]
    assert h.generalize([0.3, -3, 1], 1).tolist() == ["[0.3-0.4)", "[-3--2.9)", "[1-1.1)"]
    assert h.generalize([0.3], 2).tolist() == ["[0-0.5)"]


def test_int_and_equal_float_are_one_leaf() -> None:
    h = interval_hierarchy("age", [39, 39.0, 40.5], widths=(10,))
    assert h.leaves.tolist() == ["39", "40.5"]
    assert h.leaf_codes(pd.Series([39.0, 39])).tolist() == [0, 0]


def test_series_and_numpy_values() -> None:
    h = interval_hierarchy("age", pd.Series([30, 41], index=[7, 9]), widths=(10,))
    assert h.leaves.tolist() == ["30", "41"]
    assert interval_hierarchy("age", np.array([30, 41]), widths=(10,)).height == 2


def test_custom_top() -> None:
    assert interval_hierarchy("age", [1], widths=(10,), top="any").labels[-1].tolist() == ["any"]


def test_cuts() -> None:
    h = interval_hierarchy("age", [17, 18, 64, 65, 119], cuts=[[0, 18, 30, 50, 65, 120], [0, 30, 65, 120]])
    assert h.generalize([17, 18, 64, 65, 119], 1).tolist() == ["[0-18)", "[18-30)", "[50-65)", "[65-120)", "[65-120)"]
    assert h.generalize([17, 18, 64, 65], 2).tolist() == ["[0-30)", "[0-30)", "[30-65)", "[65-120)"]
    assert h.height == 3


def test_coarser_cuts_may_extend_beyond_the_finer_range() -> None:
    h = interval_hierarchy("age", [20], cuts=[[18, 30, 65], [0, 65, 120]])
    assert h.to_rows() == [["20", "[18-30)", "[0-65)", "*"]]


@pytest.mark.parametrize(
    ("values", "named"),
    [([1, "7"], "'7'"), ([1, True], "True"), ([np.inf], "inf"), ([1, -np.inf], "-inf"), ([1, [2]], "[2]")],
)
def test_non_numbers_are_named(values: list[object], named: str) -> None:
    with (
        values_shown(),
        pytest.raises(HierarchyError, match=rf"'age' needs finite numbers .*e.g. \[{re.escape(named)}"),
    ):
        interval_hierarchy("age", values, widths=(5,))
    with pytest.raises(HierarchyError, match=r"'age' needs finite numbers .*got 1 other value\(s\) \(values hidden"):
        interval_hierarchy("age", values, widths=(5,))


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ([1, float("nan")], "nan"),
        ([1, None], "nan"),
        (pd.Series([1, None], dtype=object), "None"),
        (pd.Series([1, None], dtype="Int64"), "<NA>"),
    ],
)
def test_missing_values_are_named(values: object, named: str) -> None:
    with pytest.raises(HierarchyError, match=rf"'age' include a missing value \({re.escape(named)}\)"):
        interval_hierarchy("age", values, widths=(5,))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of widths= or cuts="),
        ({"widths": (5,), "cuts": [[0, 10]]}, "exactly one of widths= or cuts="),
        ({"widths": ()}, "non-empty sequence"),
        ({"widths": 5}, "non-empty sequence"),
        ({"widths": (0,)}, "must be > 0"),
        ({"widths": (-5,)}, "must be > 0"),
        ({"widths": (5, 12)}, "got 12 after 5"),
        ({"widths": (5, 5)}, "got 5 after 5"),
        ({"widths": (5, "10")}, "widths for 'age' must be finite numbers, got '10'"),
        ({"cuts": []}, "non-empty list"),
        ({"cuts": [[0]]}, "at least two strictly increasing"),
        ({"cuts": [[0, 30, 18, 100]]}, "at least two strictly increasing"),
        ({"cuts": [[0, 18, 18, 100]]}, "at least two strictly increasing"),
        ({"cuts": [[0, float("inf")]]}, "must be finite numbers"),
        ({"cuts": [[0, 18, 65, 100], [0, 30, 100]]}, r"level 2 .* do not nest .*\['30'\] are not cuts of level 1"),
        ({"cuts": [[0, 18, 65, 100], [10, 65, 100]]}, "do not nest in level 1: a coarser level must cover"),
        ({"cuts": [[0, 18, 65, 100], [0, 65, 90]]}, "do not nest in level 1"),
        ({"cuts": [[0, 18, 65, 100], [0, 18, 65, 100]]}, "not coarser than level 1"),
        ({"cuts": [[0, 18, 65, 100], [0, 65, 100], [0, 50, 100]]}, r"level 3 .*\['50'\]"),
    ],
)
def test_bad_widths_and_cuts(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(HierarchyError, match=message):
        interval_hierarchy("age", [20], **kwargs)


@pytest.mark.parametrize("value", [-1, 100, 150])
def test_value_outside_cuts_is_named(value: int) -> None:
    with pytest.raises(HierarchyError, match=rf"value {value} of 'age' is outside the cut points of level 1"):
        interval_hierarchy("age", [20, value], cuts=[[0, 18, 65, 100]])


def test_no_values_is_an_error() -> None:
    with pytest.raises(HierarchyError, match="from no values"):
        interval_hierarchy("age", [], widths=(5,))


# --- masking_hierarchy ------------------------------------------------------------------


def test_masking_redacts_right_to_left() -> None:
    h = masking_hierarchy("zip", ["47907", "47906", "47610", "47907"])
    assert h.height == 5
    assert h.to_rows()[0] == ["47610", "4761*", "476**", "47***", "4****", "*****"]
    assert h.generalize(["47907", "47906", "47610"], 1).tolist() == ["4790*", "4790*", "4761*"]
    assert h.generalize(["47907", "47610"], 2).tolist() == ["479**", "476**"]


def test_masking_ints_of_one_width() -> None:
    h = masking_hierarchy("zip", pd.Series([47907, 47906]))
    assert h.leaf_codes(pd.Series([47906])).tolist() == [0]


def test_masking_levels_and_mask_char() -> None:
    assert masking_hierarchy("zip", ["47907"], levels=2).to_rows() == [["47907", "4790*", "479**", "*****"]]
    assert masking_hierarchy("zip", ["47907"], levels=5).height == 5
    assert masking_hierarchy("code", ["ab"], mask_char="x").to_rows() == [["ab", "ax", "xx"]]


def test_masking_different_lengths_is_an_error() -> None:
    with values_shown(), pytest.raises(HierarchyError, match=r"same length, got lengths \[4, 5\].*'2139'.*'47907'"):
        masking_hierarchy("zip", [2139, 47907])
    with pytest.raises(HierarchyError, match=r"same length, got lengths \[4, 5\] \(values hidden"):
        masking_hierarchy("zip", [2139, 47907])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"levels": 0}, r"integer in 1\.\.5"),
        ({"levels": 6}, r"integer in 1\.\.5"),
        ({"levels": 2.0}, r"integer in 1\.\.5"),
        ({"levels": True}, r"integer in 1\.\.5"),
        ({"mask_char": "**"}, "single character"),
        ({"mask_char": ""}, "single character"),
    ],
)
def test_masking_bad_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(HierarchyError, match=message):
        masking_hierarchy("zip", ["47907"], **kwargs)


@pytest.mark.parametrize("values", [["47907", None], pd.Series(["47907", np.nan])])
def test_masking_missing_value_is_an_error(values: object) -> None:
    with pytest.raises(HierarchyError, match="'zip' include a missing value"):
        masking_hierarchy("zip", values)


def test_masking_empty_code_and_plain_string() -> None:
    with pytest.raises(HierarchyError, match="empty codes"):
        masking_hierarchy("zip", [""])
    with pytest.raises(HierarchyError, match="must be a list or column of values"):
        masking_hierarchy("zip", "47907")


# --- date_hierarchy ------------------------------------------------------------------


def test_dates_default_levels() -> None:
    h = date_hierarchy("born", ["2021-11-02", "2020-03-15", "1999-12-31"])
    assert h.to_rows() == [
        ["1999-12-31", "1999-12", "1999", "1990s", "*"],
        ["2020-03-15", "2020-03", "2020", "2020s", "*"],
        ["2021-11-02", "2021-11", "2021", "2020s", "*"],
    ]


def test_all_date_levels_and_value_types() -> None:
    values = [dt.date(2020, 1, 5), dt.datetime(2020, 4, 1, 12, 30), pd.Timestamp("2019-12-31"), "2020-02-29"]
    h = date_hierarchy("d", values, levels=("day", "month", "quarter", "year", "decade"), top="any")
    rows = {row[0]: row[1:] for row in h.to_rows()}
    assert rows["2020-01-05"] == ["2020-01-05", "2020-01", "2020-Q1", "2020", "2020s", "any"]
    assert rows["2020-04-01 12:30:00"] == ["2020-04-01", "2020-04", "2020-Q2", "2020", "2020s", "any"]
    assert rows["2019-12-31 00:00:00"] == ["2019-12-31", "2019-12", "2019-Q4", "2019", "2010s", "any"]
    assert rows["2020-02-29"][2] == "2020-Q1"


def test_dates_from_a_datetime_column_generalize_that_column() -> None:
    column = pd.Series(pd.to_datetime(["2020-01-05", "2020-07-09", "2020-01-05"]))
    h = date_hierarchy("d", column, levels=("quarter", "year"))
    assert h.generalize(column, 1).tolist() == ["2020-Q1", "2020-Q3", "2020-Q1"]
    assert date_hierarchy("d", np.array(["2020-01-05"], dtype="datetime64[D]"), levels=("year",)).height == 2


@pytest.mark.parametrize("value", ["2020-13-01", "2020-01", "yesterday", 20200105, 3.5])
def test_unparseable_date_is_named_only_when_values_are_shown(value: object) -> None:
    with pytest.raises(HierarchyError, match=r"'d' cannot read a value as a date \(values hidden") as hidden:
        date_hierarchy("d", ["2020-01-01", value])
    assert repr(value) not in str(hidden.value)
    with values_shown(), pytest.raises(HierarchyError, match=rf"as a date, e\.g\. \[{re.escape(repr(value))}\]"):
        date_hierarchy("d", ["2020-01-01", value])


def test_missing_date_is_an_error() -> None:
    with pytest.raises(HierarchyError, match="missing value"):
        date_hierarchy("d", pd.Series(pd.to_datetime(["2020-01-05", None])))


@pytest.mark.parametrize("levels", [(), ("year", "month"), ("month", "month"), ("week",), "year", ("Year",)])
def test_bad_date_levels(levels: object) -> None:
    with pytest.raises(HierarchyError, match=r"levels for 'd' must be .*'day', 'month', 'quarter', 'year', 'decade'"):
        date_hierarchy("d", ["2020-01-01"], levels=levels)


# --- taxonomy_hierarchy / grouping_hierarchy -------------------------------------------


TREE = {"*": {"Europe": ["France", "Germany"], "Asia": {"East": ["Japan"], "South": ["India"]}}}


def test_taxonomy_pads_shallow_leaves_with_their_own_value() -> None:
    h = taxonomy_hierarchy("country", TREE)
    assert h.height == 3
    assert h.to_rows() == [
        ["France", "France", "Europe", "*"],
        ["Germany", "Germany", "Europe", "*"],
        ["Japan", "East", "Asia", "*"],
        ["India", "South", "Asia", "*"],
    ]
    assert h.generalize(["Japan", "France"], 2).tolist() == ["Asia", "Europe"]


def test_taxonomy_leaf_forms() -> None:
    tree = {"A": {"a1": None, "a2": [], "a3": {}}, "B": ["b1", {"B2": ["b2"]}], "c": None}
    h = taxonomy_hierarchy("x", tree)
    assert h.to_rows() == [
        ["a1", "a1", "A", "*"],
        ["a2", "a2", "A", "*"],
        ["a3", "a3", "A", "*"],
        ["b1", "b1", "B", "*"],
        ["b2", "B2", "B", "*"],
        ["c", "c", "c", "*"],
    ]


def test_taxonomy_top() -> None:
    assert taxonomy_hierarchy("x", {"Europe": ["France"]}, top="world").to_rows() == [["France", "Europe", "world"]]
    assert taxonomy_hierarchy("x", {"only": None}, top="*").to_rows() == [["only", "*"]]
    with pytest.raises(HierarchyError, match="single key 'only' is taken as the top"):
        taxonomy_hierarchy("x", {"only": None})


def test_taxonomy_numeric_leaves_use_canonical_text() -> None:
    h = taxonomy_hierarchy("age", {"young": [17, 18.0], "old": [70]})
    assert h.leaves.tolist() == ["17", "18", "70"]
    assert h.generalize(pd.Series([18, 70]), 1).tolist() == ["young", "old"]


def test_taxonomy_duplicate_leaf_names_both_places() -> None:
    tree = {"*": {"Europe": ["France"], "Other": {"Far": ["France"]}}}
    with pytest.raises(HierarchyError, match=r"lists leaf 'France' twice: under \['\* > Europe', '\* > Other > Far'\]"):
        taxonomy_hierarchy("country", tree)


def test_taxonomy_node_with_two_parents() -> None:
    tree = {"Europe": {"West": ["France"]}, "Asia": {"West": ["Turkey"]}}
    with pytest.raises(HierarchyError, match=r"not a tree: 'West' at level 1 has 2 parents"):
        taxonomy_hierarchy("country", tree)


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        ({}, "non-empty mapping"),
        (["France"], "non-empty mapping"),
        ({"Europe": "France"}, "children of 'Europe' must be a mapping, a list of leaves or None, got 'France'"),
        ({"Europe": 3}, "children of 'Europe'"),
        ({"Europe": [None]}, "missing label"),
    ],
)
def test_taxonomy_bad_trees(tree: object, message: str) -> None:
    with pytest.raises(HierarchyError, match=message):
        taxonomy_hierarchy("country", tree, top="*")


def test_grouping() -> None:
    h = grouping_hierarchy(
        "city", {"Lyon": ["France", "Europe"], "Kyoto": ["Japan", "Asia"], "Nice": ["France", "Europe"]}
    )
    assert h.to_rows()[1] == ["Kyoto", "Japan", "Asia", "*"]
    assert h.generalize(["Nice", "Lyon"], 1).tolist() == ["France", "France"]


def test_grouping_top_is_added_once() -> None:
    assert grouping_hierarchy("s", {"m": ["*"], "f": ["*"]}).to_rows() == [["m", "*"], ["f", "*"]]
    assert grouping_hierarchy("s", {"m": [], "f": []}).to_rows() == [["m", "*"], ["f", "*"]]
    assert grouping_hierarchy("s", {"m": ["x"], "f": ["x"]}, top=None).to_rows() == [["m", "x"], ["f", "x"]]
    assert grouping_hierarchy("s", {1: ["low"], 2.0: ["low"]}, top="any").to_rows() == [
        ["1", "low", "any"],
        ["2", "low", "any"],
    ]


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({}, "non-empty mapping"),
        ({"Lyon": ["France", "Europe"], "Kyoto": ["Japan"]}, "same number of parents .*1 for 'Kyoto', 2 for 'Lyon'"),
        ({"Lyon": "France"}, r"parents of 'Lyon' must be a list such as \['Europe'\], got 'France'"),
        ({1: ["low"], "1": ["high"]}, r"lists 1 leaf value\(s\) more than once, e\.g\. \['1'\]"),
        ({"a": ["x", "A"], "b": ["x", "B"]}, "not a tree: 'x'"),
        ({"1": ["low"], 1.5: ["low"], "1.5": ["low"]}, r"more than once, e\.g\. \['1\.5'\]"),
    ],
)
def test_grouping_errors(mapping: dict[object, list[object]], message: str) -> None:
    with values_shown(), pytest.raises(HierarchyError, match=message):
        grouping_hierarchy("city", mapping)


# --- properties ----------------------------------------------------------------------------

integers = st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=40)


@st.composite
def nested_widths(draw: st.DrawFn) -> tuple[int, ...]:
    widths = [draw(st.integers(min_value=1, max_value=25))]
    for factor in draw(st.lists(st.integers(min_value=2, max_value=5), max_size=3)):
        widths.append(widths[-1] * factor)
    return tuple(widths)


@given(values=integers, widths=nested_widths())
def test_interval_widths_form_a_tree(values: list[int], widths: tuple[int, ...]) -> None:
    h = interval_hierarchy("x", values, widths=widths)
    assert h.height == len(widths) + 1
    assert_well_formed(h, values)
    for level, width in enumerate(widths, start=1):
        for value, low, high in intervals(h, values, level):
            assert low <= value < high
            assert (high - low, low % width) == (width, 0)


@st.composite
def values_and_cuts(draw: st.DrawFn) -> tuple[list[int], list[list[int]]]:
    finest = sorted(draw(st.sets(st.integers(min_value=-500, max_value=500), min_size=3, max_size=12)))
    levels = [finest]
    while len(levels[-1]) > 2 and draw(st.booleans()):
        inner = levels[-1][1:-1]
        kept = draw(st.lists(st.sampled_from(inner), unique=True, max_size=len(inner) - 1))
        levels.append([finest[0], *sorted(kept), finest[-1]])
    values = draw(st.lists(st.integers(min_value=finest[0], max_value=finest[-1] - 1), min_size=1, max_size=40))
    return values, levels


@given(case=values_and_cuts())
def test_interval_cuts_form_a_tree(case: tuple[list[int], list[list[int]]]) -> None:
    values, cuts = case
    h = interval_hierarchy("x", values, cuts=cuts)
    assert h.height == len(cuts) + 1
    assert_well_formed(h, values)
    for level, level_cuts in enumerate(cuts, start=1):
        for value, low, high in intervals(h, values, level):
            assert low <= value < high
            assert {int(low), int(high)} <= set(level_cuts)


@given(
    codes=st.integers(min_value=1, max_value=6).flatmap(
        lambda width: st.lists(st.text("0123456789ab", min_size=width, max_size=width), min_size=1, max_size=30)
    ),
    data=st.data(),
)
def test_masking_forms_a_tree(codes: list[str], data: st.DataObject) -> None:
    width = len(codes[0])
    levels = data.draw(st.none() | st.integers(min_value=1, max_value=width))
    h = masking_hierarchy("code", codes, levels=levels)
    assert_well_formed(h, codes)
    assert h.labels[h.height].tolist() == ["*" * width]
    for level in range(1, (width if levels is None else levels) + 1):
        for code, label in zip(codes, h.generalize(codes, level)):
            assert label == code[: width - level] + "*" * level


@given(
    days=st.lists(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 12, 31)), min_size=1, max_size=30),
    levels=st.lists(st.sampled_from(["day", "month", "quarter", "year", "decade"]), min_size=1, unique=True),
)
def test_dates_form_a_tree(days: list[dt.date], levels: list[str]) -> None:
    levels = sorted(levels, key=["day", "month", "quarter", "year", "decade"].index)
    h = date_hierarchy("d", days, levels=levels)
    assert_well_formed(h, days)


@given(values=integers, widths=nested_widths())
def test_generalizing_never_increases_distinct_values(values: list[int], widths: tuple[int, ...]) -> None:
    h = interval_hierarchy("x", values, widths=widths)
    counts = [len(set(h.generalize(values, level))) for level in range(h.height + 1)]
    assert all(a >= b for a, b in pairwise(counts))
    assert counts[0] == len(set(values))
