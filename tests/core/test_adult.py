"""The library equals the naive reference (``naive.py``) on the real Adult data (30,162 rows).

The data sit beside the repository at ``../shared/data/adult/adult.csv`` (``;``-separated,
CRLF); the tests skip when it is absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from naive import frame_columns, naive_measure

import privacy_plugins as pp

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult" / "adult.csv"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
COARSE_QIS = ["sex", "race", "workclass"]
SENSITIVE = "occupation"
PARAMS: dict[str, Any] = {"k": 5, "l": 2, "c": 3, "t": 0.2, "suppression_limit": 0.01, "bound": 0.5}

Getter = Callable[[Any], Any]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    if not ADULT.is_file():
        pytest.skip(f"Adult data not found at {ADULT} (expected ../shared/data/adult/adult.csv beside the repo)")
    frame = pp.read_table(ADULT)
    assert len(frame) == 30162
    assert set(QIS) | {SENSITIVE} <= set(frame.columns), list(frame.columns)
    return frame


def _run(frame: pd.DataFrame, qis: list[str], sensitive: str) -> tuple[pp.MeasureReport, dict[str, Any]]:
    report = pp.measure(frame, quasi_identifiers=qis, sensitive_attributes=[sensitive], **PARAMS)
    distance = report.for_attribute(sensitive).t_distance
    expected = naive_measure(
        frame_columns(frame, [*qis, sensitive]),
        qis,
        [sensitive],
        t_distance={sensitive: distance},
        **PARAMS,
    )
    return report, expected


@pytest.fixture(scope="module")
def occupation(adult: pd.DataFrame) -> tuple[pp.MeasureReport, dict[str, Any]]:
    """All seven QIs, occupation sensitive (categorical: equal distance)."""
    return _run(adult, QIS, SENSITIVE)


@pytest.fixture(scope="module")
def occupation_coarse(adult: pd.DataFrame) -> tuple[pp.MeasureReport, dict[str, Any]]:
    """Three QIs: k after δ-suppression is no longer 1."""
    return _run(adult, COARSE_QIS, SENSITIVE)


@pytest.fixture(scope="module")
def occupation_sex_race(adult: pd.DataFrame) -> tuple[pp.MeasureReport, dict[str, Any]]:
    """Two QIs: ten large classes, so k, every l, c* and t are far from their trivial values."""
    return _run(adult, ["sex", "race"], SENSITIVE)


@pytest.fixture(scope="module")
def age_sensitive(adult: pd.DataFrame) -> tuple[pp.MeasureReport, dict[str, Any]]:
    """Numeric sensitive attribute: age under sex, race, workclass (ordered distance)."""
    return _run(adult, COARSE_QIS, "age")


def _sa(name: str) -> tuple[Getter, Getter]:
    def library(report: pp.MeasureReport) -> Any:
        return getattr(report.sensitive_attributes[0], name)

    def naive(expected: dict[str, Any]) -> Any:
        return next(iter(expected["sensitive"].values()))[name]

    return library, naive


def _violations(get_lib: Getter, get_naive: Getter) -> tuple[Getter, Getter]:
    return (
        lambda r: (get_lib(r).classes, get_lib(r).records, dict(get_lib(r).size_histogram)),
        lambda e: (get_naive(e)["classes"], get_naive(e)["records"], get_naive(e)["size_histogram"]),
    )


def _sa_field(e: dict[str, Any]) -> dict[str, Any]:
    return next(iter(e["sensitive"].values()))


MEASURES: dict[str, tuple[Getter, Getter]] = {
    "rows": (lambda r: r.rows, lambda e: e["rows"]),
    "k": (lambda r: r.k, lambda e: e["k"]),
    "classes": (lambda r: r.classes, lambda e: e["classes"]),
    "sample_uniques": (lambda r: r.sample_uniques, lambda e: e["sample_uniques"]),
    "class_size_histogram": (lambda r: dict(r.class_size_histogram), lambda e: e["class_size_histogram"]),
    "suppression_needed.rows": (lambda r: r.suppression_needed.rows, lambda e: e["suppression_needed"]["rows"]),
    "suppression_needed.fraction": (
        lambda r: r.suppression_needed.fraction,
        lambda e: e["suppression_needed"]["fraction"],
    ),
    "k_violations": _violations(lambda r: r.k_violations, lambda e: e["k_violations"]),
    "k_after_suppression.k": (lambda r: r.k_after_suppression.k, lambda e: e["k_after_suppression"]["k"]),
    "k_after_suppression.suppressed_rows": (
        lambda r: r.k_after_suppression.suppressed_rows,
        lambda e: e["k_after_suppression"]["suppressed_rows"],
    ),
    "k_after_suppression.budget_rows": (
        lambda r: r.k_after_suppression.budget_rows,
        lambda e: e["k_after_suppression"]["budget_rows"],
    ),
    "risk.max_risk": (lambda r: r.risk.max_risk, lambda e: e["risk"]["max_risk"]),
    "risk.mean_risk": (lambda r: r.risk.mean_risk, lambda e: e["risk"]["mean_risk"]),
    "risk.records_at_risk": (lambda r: r.risk.records_at_risk, lambda e: e["risk"]["records_at_risk"]),
    "risk.share_at_risk": (lambda r: r.risk.share_at_risk, lambda e: e["risk"]["share_at_risk"]),
    "distinct_l": _sa("distinct_l"),
    "frequency_l": _sa("frequency_l"),
    "entropy_l": _sa("entropy_l"),
    "recursive_c(l=2)": _sa("recursive_c"),
    "t_closeness": _sa("t_closeness"),
    "t_distance": _sa("t_distance"),
    **{
        f"l_violations[{variant}]": _violations(
            lambda r, v=variant: r.sensitive_attributes[0].l_violations[v],
            lambda e, v=variant: _sa_field(e)["l_violations"][v],
        )
        for variant in ("distinct", "frequency", "entropy", "recursive")
    },
    "t_violations": _violations(
        lambda r: r.sensitive_attributes[0].t_violations, lambda e: _sa_field(e)["t_violations"]
    ),
    "leakage.max_leakage": (
        lambda r: r.sensitive_attributes[0].leakage.max_leakage,
        lambda e: _sa_field(e)["leakage"]["max_leakage"],
    ),
    "leakage.mean_leakage": (
        lambda r: r.sensitive_attributes[0].leakage.mean_leakage,
        lambda e: _sa_field(e)["leakage"]["mean_leakage"],
    ),
    "leakage.violations": (
        lambda r: r.sensitive_attributes[0].leakage.violations,
        lambda e: _sa_field(e)["leakage"]["violations"],
    ),
    "leakage.infeasible": (
        lambda r: r.sensitive_attributes[0].leakage.infeasible,
        lambda e: _sa_field(e)["leakage"]["infeasible"],
    ),
}


def _assert_equal(name: str, actual: Any, expected: Any) -> None:
    if isinstance(expected, float):
        assert isinstance(actual, float), f"{name}: {actual!r} is not a float"
        if math.isinf(expected):
            assert actual == expected, f"{name}: library {actual!r} != naive {expected!r}"
        else:
            assert math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12), (
                f"{name}: library {actual!r} != naive {expected!r}"
            )
    else:
        assert actual == expected, f"{name}: library {actual!r} != naive {expected!r}"


@pytest.mark.parametrize("measure", list(MEASURES))
@pytest.mark.parametrize("case", ["occupation", "occupation_coarse", "occupation_sex_race", "age_sensitive"])
def test_adult_matches_naive(case: str, measure: str, request: pytest.FixtureRequest) -> None:
    report, expected = request.getfixturevalue(case)
    get_library, get_naive = MEASURES[measure]
    _assert_equal(measure, get_library(report), get_naive(expected))


def test_adult_distances_are_the_expected_ones(
    occupation: tuple[pp.MeasureReport, dict[str, Any]], age_sensitive: tuple[pp.MeasureReport, dict[str, Any]]
) -> None:
    """occupation is text (equal distance); age is read as numbers (ordered distance)."""
    assert occupation[0].for_attribute(SENSITIVE).t_distance == "equal"
    assert age_sensitive[0].for_attribute("age").t_distance == "ordered"


def test_adult_frame_level_functions(adult: pd.DataFrame, occupation: tuple[pp.MeasureReport, dict[str, Any]]) -> None:
    _, expected = occupation
    want = expected["sensitive"][SENSITIVE]
    assert pp.k_anonymity(adult, quasi_identifiers=QIS) == expected["k"]
    assert pp.l_diversity(adult, quasi_identifiers=QIS, sensitive_attribute=SENSITIVE) == want["distinct_l"]
    for variant in ("frequency", "entropy"):
        got = pp.l_diversity(adult, quasi_identifiers=QIS, sensitive_attribute=SENSITIVE, l_variant=variant)
        assert math.isclose(got, want[f"{variant}_l"], rel_tol=1e-9, abs_tol=1e-12)
    got_t = pp.t_closeness(adult, quasi_identifiers=QIS, sensitive_attribute=SENSITIVE)
    assert math.isclose(got_t, want["t_closeness"], rel_tol=1e-9, abs_tol=1e-12)
