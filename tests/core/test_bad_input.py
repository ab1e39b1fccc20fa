"""Bad input gets a clear error naming the column or parameter, before anything is computed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.errors import (
    ConfigurationError,
    EmptyTableError,
    RoleConflictError,
    UnknownColumnError,
)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"age": [30, 30, 40, 40], "zip": ["01234", "01234", "09999", "09999"], "disease": ["a", "b", "a", "a"]}
    )


def test_unknown_quasi_identifier_is_named(frame: pd.DataFrame) -> None:
    with pytest.raises(UnknownColumnError, match=r"zipcode.*available columns.*'zip'"):
        pp.measure(frame, quasi_identifiers=["age", "zipcode"])


def test_unknown_sensitive_and_identifier_are_named(frame: pd.DataFrame) -> None:
    with pytest.raises(UnknownColumnError, match="sensitive_attributes.*diseas'"):
        pp.measure(frame, quasi_identifiers=["age"], sensitive_attributes=["diseas"])
    with pytest.raises(UnknownColumnError, match="identifiers.*name"):
        pp.measure(frame, quasi_identifiers=["age"], identifiers=["name"])


def test_unknown_column_error_is_a_value_error(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError):
        pp.measure(frame, quasi_identifiers=["nope"])


def test_column_in_two_roles(frame: pd.DataFrame) -> None:
    with pytest.raises(RoleConflictError, match="'zip' is given two roles: quasi_identifiers and sensitive"):
        pp.measure(frame, quasi_identifiers=["age", "zip"], sensitive_attributes=["zip"])


def test_duplicated_column_in_a_role(frame: pd.DataFrame) -> None:
    with pytest.raises(RoleConflictError, match="more than once"):
        pp.measure(frame, quasi_identifiers=["age", "age"])


def test_duplicated_column_names_in_table() -> None:
    table = pd.DataFrame([[1, 2], [3, 4]], columns=["age", "age"])
    with pytest.raises(RoleConflictError, match="duplicated column names.*age"):
        pp.measure(table, quasi_identifiers=["age"])


def test_no_quasi_identifier(frame: pd.DataFrame) -> None:
    with pytest.raises(RoleConflictError, match="at least one"):
        pp.measure(frame, quasi_identifiers=[])


def test_bare_string_is_a_type_error(frame: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match=r"did you mean \['age'\]"):
        pp.measure(frame, quasi_identifiers="age")  # type: ignore[arg-type]


def test_empty_table(frame: pd.DataFrame) -> None:
    with pytest.raises(EmptyTableError, match="empty"):
        pp.measure(frame.iloc[:0], quasi_identifiers=["age"])


def test_not_a_dataframe() -> None:
    with pytest.raises(TypeError, match="DataFrame"):
        pp.measure([[1, 2]], quasi_identifiers=["a"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, ConfigurationError, "k must be an integer >= 1, got 0"),
        ({"k": "5"}, TypeError, "k must be an integer"),
        ({"k": 2.0}, TypeError, "k must be an integer"),
        ({"k": True}, TypeError, "k must be an integer"),
        ({"k": 5}, ConfigurationError, r"k=5 is larger than the table \(4 rows\)"),
        ({"l": 0.5, "sensitive_attributes": ["disease"]}, ConfigurationError, "l must be >= 1"),
        ({"t": 1.5, "sensitive_attributes": ["disease"]}, ConfigurationError, r"t must be in \[0, 1\]"),
        ({"suppression_limit": -0.1}, ConfigurationError, r"suppression_limit must be in \[0, 1\]"),
        ({"bound": 0.0, "sensitive_attributes": ["disease"]}, ConfigurationError, r"bound must be in \(0, 1\]"),
        ({"bound": 1.2, "sensitive_attributes": ["disease"]}, ConfigurationError, r"bound must be in \(0, 1\]"),
        ({"bound": float("nan"), "sensitive_attributes": ["disease"]}, ConfigurationError, "bound must be finite"),
        ({"c": 2.0, "sensitive_attributes": ["disease"]}, ConfigurationError, "needs l"),
        ({"l": 2}, ConfigurationError, "need at least one sensitive attribute"),
        ({"risk_threshold": 2.0}, ConfigurationError, "risk_threshold"),
        ({"t_distance": "manhattan", "sensitive_attributes": ["disease"]}, ConfigurationError, "t_distance"),
    ],
)
def test_parameter_domains(frame: pd.DataFrame, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        pp.measure(frame, quasi_identifiers=["age", "zip"], **kwargs)


def test_bound_column_checks(frame: pd.DataFrame) -> None:
    qi = {"quasi_identifiers": ["age", "zip"], "sensitive_attributes": ["disease"]}
    with pytest.raises(UnknownColumnError, match="bound_column.*pleak"):
        pp.measure(frame, bound_column="pleak", **qi)
    with pytest.raises(ConfigurationError, match=r"1 bounds outside \(0, 1\]"):
        pp.measure(frame.assign(pleak=[0.5, 0.5, 1.5, 0.5]), bound_column="pleak", **qi)
    with pytest.raises(ConfigurationError, match=r"1 bounds outside \(0, 1\]"):
        pp.measure(frame.assign(pleak=[0.5, 0.0, 1.0, 0.5]), bound_column="pleak", **qi)
    with pytest.raises(ConfigurationError, match="1 missing bounds and no default"):
        pp.measure(frame.assign(pleak=[0.5, None, 1.0, 0.5]), bound_column="pleak", **qi)
    with values_shown(), pytest.raises(ConfigurationError, match="1 non-numeric bounds, e.g. \\['half'\\]"):
        pp.measure(frame.assign(pleak=[0.5, "half", 1.0, 0.5]), bound=0.5, bound_column="pleak", **qi)
    # bound is the default for records without one in bound_column
    pp.measure(frame.assign(pleak=[0.5, None, 1.0, 0.5]), bound=0.5, bound_column="pleak", **qi)
    with pytest.raises(ConfigurationError, match="also a quasi-identifier"):
        pp.measure(frame.assign(pleak=0.5), bound_column="age", **qi)


def test_unhashable_values_name_the_column() -> None:
    table = pd.DataFrame({"tags": [["a"], ["b"]], "x": [1, 2]})
    with pytest.raises(ConfigurationError, match="'tags'"):
        pp.measure(table, quasi_identifiers=["tags"])


def test_missing_values_in_a_qi_form_their_own_class() -> None:
    """NaN/None in a QI group together (SQL GROUP BY semantics); nothing is dropped."""
    table = pd.DataFrame(
        {
            "age": [30.0, np.nan, np.nan, 30.0, np.nan],
            "sex": ["F", None, np.nan, "F", pd.NA],
            "disease": ["a", "b", "c", None, "a"],
        }
    )
    report = pp.measure(table, quasi_identifiers=["age", "sex"], sensitive_attributes=["disease"])
    assert report.rows == 5
    assert report.classes == 2
    assert report.k == 2
    assert report.class_size_histogram == {2: 1, 3: 1}
    disease = report.for_attribute("disease")
    # The missing disease in the (30, F) class counts as a value of its own.
    assert disease.distinct_l == 2


def test_all_nan_qi_is_one_class() -> None:
    table = pd.DataFrame({"age": [np.nan] * 3, "disease": ["a", "b", "a"]})
    report = pp.measure(table, quasi_identifiers=["age"], sensitive_attributes=["disease"])
    assert (report.k, report.classes) == (3, 1)


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([1, 1, 2, 2]),
        pd.Series([1.5, 1.5, 2.5, 2.5]),
        pd.Series([True, True, False, False]),
        pd.Series(pd.to_datetime(["2020-01-01", "2020-01-01", "2021-01-01", "2021-01-01"])),
        pd.Series(["x", "x", "y", "y"], dtype="category"),
        pd.Series([1, 1, None, None], dtype="Int64"),
        pd.Series(["x", "x", None, None], dtype="string"),
        pd.Series([1, 1, "1", "1"], dtype=object),
    ],
    ids=["int", "float", "bool", "datetime", "category", "Int64", "string", "mixed-object"],
)
def test_non_string_column_types(column: pd.Series) -> None:
    table = pd.DataFrame({"q": column, "s": ["a", "b", "a", "b"]})
    report = pp.measure(table, quasi_identifiers=["q"], sensitive_attributes=["s"])
    assert (report.k, report.classes) == (2, 2)
    assert report.for_attribute("s").distinct_l == 2


def test_non_string_column_labels() -> None:
    table = pd.DataFrame({0: [1, 1, 2, 2], 1: ["a", "b", "a", "b"]})
    report = pp.measure(table, quasi_identifiers=[0], sensitive_attributes=[1])
    assert report.k == 2
    assert report.to_dict()["sensitive_attributes"]["1"]["distinct_l"] == 2
