"""Property tests: the library equals the naive reference (``naive.py``) on random small tables.

Tables have 1–40 rows, 1–4 quasi-identifiers and 1–2 sensitive attributes drawn
from tiny alphabets so that classes repeat, in every column flavour the library
must handle: int64, float64 with NaN (and ±0.0), pandas ``str`` with NaN, object
columns mixing strings, ints, None, NaN and pd.NA, nullable Int64, category and bool.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, note
from hypothesis import strategies as st
from naive import frame_columns, naive_measure

import privacy_plugins as pp
from privacy_plugins.errors import PrivacyRiskWarning

REL_TOL = 1e-9
ABS_TOL = 1e-12

# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------

# kind -> (alphabet, pandas dtype or None for inference, sortable for the ordered distance)
_KINDS: dict[str, tuple[list[Any], str | None, bool]] = {
    "int": ([0, 1, 2, 3], "int64", True),
    "float_nan": ([0.5, 1.0, 2.25, -1.0, float("nan")], "float64", True),
    "signed_zero": ([0.0, -0.0, 1.5, float("nan")], "float64", True),
    "str": (["a", "b", "c", "d"], None, True),
    "str_missing": (["a", "b", "c", None], None, True),
    "object_mixed": (["a", "b", 1, 2, None, float("nan"), pd.NA], "object", False),
    "object_str_missing": (["a", "bb", "c", None, pd.NA, float("nan")], "object", True),
    "nullable_int": ([0, 1, 5, pd.NA], "Int64", True),
    "category": (["x", "y", "z", None], "category", True),
    "bool": ([True, False], "bool", True),
    "int_wide": (list(range(12)), "int64", True),
    "float_wide": ([x / 4 for x in range(-8, 8)] + [float("nan")], "float64", True),
}
_NUMERIC_SA_KINDS = ["int", "float_nan", "signed_zero", "nullable_int", "int_wide", "float_wide"]


@st.composite
def column_values(draw: st.DrawFn, n: int, kinds: list[str] | None = None) -> tuple[str, pd.Series]:
    kind = draw(st.sampled_from(kinds or sorted(_KINDS)))
    alphabet, dtype, _ = _KINDS[kind]
    # A random sub-alphabet of 1..len values keeps classes small or large at random.
    chosen = draw(st.lists(st.integers(0, len(alphabet) - 1), min_size=1, max_size=len(alphabet), unique=True))
    values = draw(st.lists(st.sampled_from([alphabet[i] for i in chosen]), min_size=n, max_size=n))
    if kind == "bool":
        return kind, pd.Series(values, dtype="bool")
    if dtype is None:
        return kind, pd.Series(values)
    return kind, pd.Series(values, dtype=dtype)


@st.composite
def tables(draw: st.DrawFn, *, numeric_sa: bool = False, max_qis: int = 4) -> dict[str, Any]:
    n = draw(st.integers(1, 40))
    n_qi = draw(st.integers(1, max_qis))
    n_sa = draw(st.integers(1, 2))
    data: dict[str, pd.Series] = {}
    kinds: dict[str, str] = {}
    for i in range(n_qi):
        kinds[f"q{i}"], data[f"q{i}"] = draw(column_values(n))
    sa_kinds = _NUMERIC_SA_KINDS if numeric_sa else None
    for j in range(n_sa):
        kinds[f"s{j}"], data[f"s{j}"] = draw(column_values(n, sa_kinds))
    frame = pd.DataFrame(data)
    qis = [f"q{i}" for i in range(n_qi)]
    sas = [f"s{j}" for j in range(n_sa)]
    return {"frame": frame, "qis": qis, "sas": sas, "kinds": kinds}


def _fractions_of(n: int) -> st.SearchStrategy[float]:
    """i/n and similar: values that land on (or a rounding error away from) an integer row count."""
    return st.integers(0, n).map(lambda i: i / n)


@st.composite
def targets(draw: st.DrawFn, table: dict[str, Any]) -> dict[str, Any]:
    n = len(table["frame"])
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["k"] = draw(st.integers(1, n))
    if draw(st.booleans()):
        out["l"] = draw(
            st.one_of(
                st.integers(1, 4),
                st.sampled_from([1.0, 2.0, 1.5, 2.5, 3.0000000001]),
                st.floats(1.0, 4.5),
            )
        )
        if draw(st.booleans()):
            out["c"] = draw(st.one_of(st.floats(0.5, 4.0), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0, 4.0])))
    if draw(st.booleans()):
        out["t"] = draw(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.25, 0.5, 1.0])))
    if draw(st.booleans()):
        out["suppression_limit"] = draw(st.one_of(st.floats(0.0, 1.0), _fractions_of(n)))
    bound_kind = draw(st.sampled_from(["none", "scalar", "column"]))
    bound_values = st.one_of(
        st.floats(0.0, 1.0, exclude_min=True),
        st.sampled_from([1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1]),
    )
    if bound_kind == "scalar":
        out["bound"] = draw(bound_values)
    elif bound_kind == "column":
        out["bounds"] = draw(st.lists(bound_values, min_size=n, max_size=n))
    out["risk_threshold"] = draw(
        st.one_of(st.just(0.2), st.floats(0.0, 1.0), st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 1.0]))
    )
    sortable = all(_KINDS[table["kinds"][s]][2] for s in table["sas"])
    out["t_distance"] = draw(st.sampled_from(["auto", "equal", "ordered"] if sortable else ["auto", "equal"]))
    return out


@st.composite
def scenarios(draw: st.DrawFn, *, numeric_sa: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    table = draw(tables(numeric_sa=numeric_sa))
    return table, draw(targets(table))


# ---------------------------------------------------------------------------
# running both sides
# ---------------------------------------------------------------------------


def resolve_distance(series: pd.Series, requested: str) -> str:
    """The spec's "auto": ordered for a numeric (not bool) dtype, else equal."""
    if requested != "auto":
        return requested
    dtype = series.dtype
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return "ordered" if numeric else "equal"


def run_both(table: dict[str, Any], target: dict[str, Any]) -> tuple[pp.MeasureReport, dict[str, Any]]:
    frame: pd.DataFrame = table["frame"].copy()
    kwargs = {key: target[key] for key in ("k", "l", "c", "t", "suppression_limit", "bound") if key in target}
    bound_column = None
    if "bounds" in target:
        frame["bound"] = target["bounds"]
        bound_column = "bound"
    note(f"frame=\n{frame!r}\ndtypes={dict(frame.dtypes)}\ntargets={target!r}")
    report = pp.measure(
        frame,
        quasi_identifiers=table["qis"],
        sensitive_attributes=table["sas"],
        t_distance=target["t_distance"],
        bound_column=bound_column,
        risk_threshold=target["risk_threshold"],
        **kwargs,
    )
    expected = naive_measure(
        frame_columns(table["frame"]),
        table["qis"],
        table["sas"],
        t_distance={s: resolve_distance(table["frame"][s], target["t_distance"]) for s in table["sas"]},
        bounds=target.get("bounds"),
        risk_threshold=target["risk_threshold"],
        **kwargs,
    )
    return report, expected


# ---------------------------------------------------------------------------
# comparison helpers
# ---------------------------------------------------------------------------


def same_float(actual: float, expected: float) -> bool:
    if math.isinf(expected) or math.isinf(actual):
        return actual == expected
    return math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def check_float(label: str, actual: Any, expected: float) -> None:
    assert isinstance(actual, float), f"{label}: expected a float, got {type(actual).__name__} {actual!r}"
    assert same_float(actual, expected), f"{label}: library {actual!r} != naive {expected!r}"


def check_int(label: str, actual: Any, expected: int) -> None:
    assert isinstance(actual, int) and not isinstance(actual, bool), f"{label}: not an int: {actual!r}"
    assert actual == expected, f"{label}: library {actual!r} != naive {expected!r}"


def check_violations(label: str, actual: pp.ClassViolations | None, expected: dict[str, Any] | None) -> None:
    if expected is None:
        assert actual is None, f"{label}: library reports violations, naive none"
        return
    assert actual is not None, f"{label}: missing"
    check_int(f"{label}.classes", actual.classes, expected["classes"])
    check_int(f"{label}.records", actual.records, expected["records"])
    assert dict(actual.size_histogram) == expected["size_histogram"], (
        f"{label}.size_histogram: library {dict(actual.size_histogram)!r} != naive {expected['size_histogram']!r}"
    )
    assert actual.passed == (expected["classes"] == 0)


def check_anonymity(report: pp.MeasureReport, expected: dict[str, Any]) -> None:
    for field in ("rows", "classes", "k", "sample_uniques"):
        check_int(field, getattr(report, field), expected[field])
    assert dict(report.class_size_histogram) == expected["class_size_histogram"]
    for field in ("max_risk", "mean_risk", "share_at_risk"):
        check_float(f"risk.{field}", getattr(report.risk, field), expected["risk"][field])
    check_int("risk.records_at_risk", report.risk.records_at_risk, expected["risk"]["records_at_risk"])
    if expected["suppression_needed"] is None:
        assert report.suppression_needed is None and report.k_violations is None
    else:
        check_int("suppression_needed.rows", report.suppression_needed.rows, expected["suppression_needed"]["rows"])
        check_float(
            "suppression_needed.fraction",
            report.suppression_needed.fraction,
            expected["suppression_needed"]["fraction"],
        )
        check_violations("k_violations", report.k_violations, expected["k_violations"])


def check_k_after_suppression(report: pp.MeasureReport, expected: dict[str, Any]) -> None:
    want = expected["k_after_suppression"]
    if want is None:
        assert report.k_after_suppression is None
        return
    got = report.k_after_suppression
    for field in ("budget_rows", "k", "suppressed_rows"):
        check_int(f"k_after_suppression.{field}", getattr(got, field), want[field])


def check_sensitive(report: pp.MeasureReport, expected: dict[str, Any]) -> None:
    assert [s.sensitive_attribute for s in report.sensitive_attributes] == list(expected["sensitive"])
    for attribute, want in expected["sensitive"].items():
        got = report.for_attribute(attribute)
        label = f"[{attribute}]"
        check_int(f"{label}.distinct_l", got.distinct_l, want["distinct_l"])
        for field in ("frequency_l", "entropy_l", "t_closeness"):
            check_float(f"{label}.{field}", getattr(got, field), want[field])
        assert got.t_distance == want["t_distance"], f"{label}.t_distance: {got.t_distance} != {want['t_distance']}"
        assert got.recursive_l == want["recursive_l"], f"{label}.recursive_l"
        if want["recursive_c"] is None:
            assert got.recursive_c is None, f"{label}.recursive_c should be unset"
        else:
            check_float(f"{label}.recursive_c", got.recursive_c, want["recursive_c"])
        if want["l_violations"] is None:
            assert got.l_violations is None
        else:
            assert set(got.l_violations) == set(want["l_violations"]), f"{label}.l_violations keys"
            for variant, violations in want["l_violations"].items():
                check_violations(f"{label}.l_violations[{variant}]", got.l_violations[variant], violations)
        check_violations(f"{label}.t_violations", got.t_violations, want["t_violations"])
        if want["leakage"] is None:
            assert got.leakage is None
        else:
            leak = got.leakage
            assert leak is not None, f"{label}.leakage missing"
            check_float(f"{label}.max_leakage", leak.max_leakage, want["leakage"]["max_leakage"])
            check_float(f"{label}.mean_leakage", leak.mean_leakage, want["leakage"]["mean_leakage"])
            check_int(f"{label}.leakage.violations", leak.violations, want["leakage"]["violations"])
            check_int(f"{label}.leakage.infeasible", leak.infeasible, want["leakage"]["infeasible"])
            check_violations(f"{label}.leakage.classes", leak.classes, want["leakage"]["classes"])


def check_contract_keys(report: pp.MeasureReport, expected: dict[str, Any]) -> None:
    """The top-level JSON keys (worst over the sensitive attributes) match the naive values."""
    out = report.to_dict()
    assert out["rows"] == expected["rows"] and out["k"] == expected["k"]
    assert out["classes"] == expected["classes"] and out["sample_uniques"] == expected["sample_uniques"]
    if expected["suppression_needed"] is not None:
        assert out["suppression_needed"] == expected["suppression_needed"]["rows"]
    sens = list(expected["sensitive"].values())
    assert out["distinct_l"] == min(s["distinct_l"] for s in sens)
    assert same_float(out["frequency_l"], min(s["frequency_l"] for s in sens))
    assert same_float(out["entropy_l"], min(s["entropy_l"] for s in sens))
    assert same_float(out["t_closeness"], max(s["t_closeness"] for s in sens))
    if sens[0]["recursive_c"] is not None:
        worst = max(s["recursive_c"] for s in sens)
        assert (out["recursive_c"] is None) if math.isinf(worst) else same_float(out["recursive_c"], worst)
    if sens[0]["leakage"] is not None:
        assert same_float(out["max_leakage"], max(s["leakage"]["max_leakage"] for s in sens))
        assert out["leakage_violations"] == max(s["leakage"]["violations"] for s in sens)


# ---------------------------------------------------------------------------
# the library equals the naive reference
# ---------------------------------------------------------------------------


@given(scenarios())
def test_anonymity_and_risk_match_naive(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    report, expected = run_both(*scenario)
    check_anonymity(report, expected)


# Pinned disagreement (see the report): δ = 0.29 on 100 rows. In floats 0.29 * 100 =
# 28.999999999999996, so the definition's ⌊δ·n⌋ is 28 rows and the 29 singletons
# cannot all go (k stays 1); the library computes ⌊δ·n + 1e-9⌋ = 29 and reports k = 71.
@example(
    (
        {
            "frame": pd.DataFrame({"q0": list(range(29)) + [29] * 71, "s0": ["a"] * 100}),
            "qis": ["q0"],
            "sas": ["s0"],
            "kinds": {"q0": "int", "s0": "str"},
        },
        {"suppression_limit": 0.29, "risk_threshold": 0.2, "t_distance": "auto"},
    )
)
@given(scenarios())
def test_k_after_suppression_matches_naive(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    report, expected = run_both(*scenario)
    check_k_after_suppression(report, expected)


@given(scenarios())
def test_sensitive_measures_match_naive(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    report, expected = run_both(*scenario)
    check_sensitive(report, expected)
    check_contract_keys(report, expected)


@given(scenarios(numeric_sa=True))
def test_numeric_sensitive_ordered_distance_matches_naive(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    table, target = scenario
    report, expected = run_both(table, {**target, "t_distance": "auto"})
    for attribute in table["sas"]:
        assert report.for_attribute(attribute).t_distance == "ordered"
    check_sensitive(report, expected)


@given(tables())
def test_frame_level_functions_match_naive(table: dict[str, Any]) -> None:
    frame, qis = table["frame"], table["qis"]
    attribute = table["sas"][0]
    sortable = _KINDS[table["kinds"][attribute]][2]
    expected = naive_measure(frame_columns(frame), qis, [attribute])
    check_int("k_anonymity", pp.k_anonymity(frame, quasi_identifiers=qis), expected["k"])
    want = expected["sensitive"][attribute]
    check_int(
        "l_diversity(distinct)",
        pp.l_diversity(frame, quasi_identifiers=qis, sensitive_attribute=attribute, l_variant="distinct"),
        want["distinct_l"],
    )
    for variant in ("frequency", "entropy"):
        check_float(
            f"l_diversity({variant})",
            pp.l_diversity(frame, quasi_identifiers=qis, sensitive_attribute=attribute, l_variant=variant),
            want[f"{variant}_l"],
        )
    distances = ["auto", "equal", "ordered"] if sortable else ["auto", "equal"]
    for distance in distances:
        resolved = resolve_distance(frame[attribute], distance)
        want_t = naive_measure(frame_columns(frame), qis, [attribute], t_distance={attribute: resolved})
        check_float(
            f"t_closeness({distance})",
            pp.t_closeness(frame, quasi_identifiers=qis, sensitive_attribute=attribute, t_distance=distance),
            want_t["sensitive"][attribute]["t_closeness"],
        )


# ---------------------------------------------------------------------------
# larger tables: the hashing code paths of the grouping
# ---------------------------------------------------------------------------
# Small tables always take the dense bincount paths. These take the others:
# many classes × many sensitive values (> 4n + 1024 (class, value) keys) and
# many wide QIs (mixed-radix key space ≥ 2**62, compacted mid-way).


@st.composite
def wide_scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    rnd = draw(st.randoms(use_true_random=False))
    many_qis = draw(st.booleans())
    if many_qis:
        n = draw(st.integers(20, 60))
        qi_alphabets = [draw(st.sampled_from([2, n, n])) for _ in range(draw(st.integers(13, 16)))]
    else:
        n = draw(st.integers(100, 300))
        qi_alphabets = [draw(st.sampled_from([3, 50, 1000])) for _ in range(draw(st.integers(1, 3)))]
    data: dict[str, Any] = {}
    for i, size in enumerate(qi_alphabets):
        data[f"q{i}"] = [rnd.randrange(size) for _ in range(n)]
    sa_size = draw(st.sampled_from([2, 10, 40]))
    missing = draw(st.booleans())

    def sa_value() -> Any:
        return None if missing and rnd.random() < 0.1 else rnd.randrange(sa_size)

    data["s0"] = pd.Series([sa_value() for _ in range(n)], dtype="float64")  # numeric: ordered
    data["s1"] = pd.Series([None if (v := sa_value()) is None else f"v{v}" for _ in range(n)])  # text: equal
    table = {
        "frame": pd.DataFrame(data),
        "qis": [f"q{i}" for i in range(len(qi_alphabets))],
        "sas": ["s0", "s1"],
        "kinds": {},
    }
    target = {
        "k": draw(st.integers(1, n)),
        "l": draw(st.sampled_from([1, 2, 3, 2.5])),
        "c": draw(st.floats(0.5, 4.0)),
        "t": draw(st.floats(0.0, 1.0)),
        "suppression_limit": draw(st.floats(0.0, 1.0)),
        "bound": draw(st.floats(0.0, 1.0, exclude_min=True)),
        "risk_threshold": 0.2,
        "t_distance": "auto",
    }
    return table, target


@given(wide_scenarios())
def test_wide_tables_match_naive(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    report, expected = run_both(*scenario)
    check_anonymity(report, expected)
    check_sensitive(report, expected)


# ---------------------------------------------------------------------------
# theorems: monotonicity and the order of the l variants
# ---------------------------------------------------------------------------


def _leq(a: float, b: float) -> bool:
    """a ≤ b up to floating-point noise."""
    return a <= b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


@given(tables(), st.data())
def test_dropping_a_quasi_identifier_never_makes_things_worse(table: dict[str, Any], data: st.DataObject) -> None:
    frame, qis, sas = table["frame"], table["qis"], table["sas"]
    if len(qis) < 2:
        qis = [*qis, "extra"]
        frame = frame.assign(extra=data.draw(st.lists(st.integers(0, 2), min_size=len(frame), max_size=len(frame))))
    dropped = data.draw(st.sampled_from(qis))
    fewer = [q for q in qis if q != dropped]
    full = pp.measure(frame, quasi_identifiers=qis, sensitive_attributes=sas, l=2)
    coarse = pp.measure(frame, quasi_identifiers=fewer, sensitive_attributes=sas, l=2)
    assert coarse.k >= full.k
    assert coarse.classes <= full.classes
    assert coarse.sample_uniques <= full.sample_uniques  # a singleton of the coarse grouping is one of the fine
    assert coarse.risk.max_risk <= full.risk.max_risk
    for attribute in sas:
        fine, wide = full.for_attribute(attribute), coarse.for_attribute(attribute)
        assert wide.distinct_l >= fine.distinct_l
        assert _leq(fine.entropy_l, wide.entropy_l), (fine.entropy_l, wide.entropy_l)
        assert _leq(fine.frequency_l, wide.frequency_l), (fine.frequency_l, wide.frequency_l)
        assert _leq(wide.t_closeness, fine.t_closeness), (wide.t_closeness, fine.t_closeness)
        assert _leq(wide.recursive_c, fine.recursive_c), (wide.recursive_c, fine.recursive_c)


@given(scenarios())
def test_l_variants_are_ordered(scenario: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """frequency l ≤ entropy l ≤ distinct l ≤ k, and the identities with c* (l=1) and max leakage."""
    table, _ = scenario
    report = pp.measure(
        table["frame"], quasi_identifiers=table["qis"], sensitive_attributes=table["sas"], l=1, bound=1.0
    )
    for attribute in table["sas"]:
        s = report.for_attribute(attribute)
        assert s.distinct_l <= report.k
        assert _leq(s.frequency_l, s.distinct_l), (s.frequency_l, s.distinct_l)
        assert _leq(s.entropy_l, s.distinct_l), (s.entropy_l, s.distinct_l)
        assert _leq(s.frequency_l, s.entropy_l), (s.frequency_l, s.entropy_l)
        assert s.frequency_l >= 1.0 and s.entropy_l >= 1.0 and s.distinct_l >= 1
        assert 0.0 <= s.t_closeness <= 1.0
        # recursive c* for l=1 is max r1/|E| = 1/frequency_l = max leakage.
        assert same_float(s.recursive_c, 1.0 / s.frequency_l)
        assert same_float(s.leakage.max_leakage, 1.0 / s.frequency_l)
        assert s.leakage.violations == 0 and s.leakage.infeasible == 0


@given(scenarios())
def test_recursive_c_is_infinite_exactly_when_distinct_l_is_below_l(
    scenario: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    table, _ = scenario
    for l in (1, 2, 3, 4):
        report = pp.measure(table["frame"], quasi_identifiers=table["qis"], sensitive_attributes=table["sas"], l=l)
        for attribute in table["sas"]:
            s = report.for_attribute(attribute)
            assert math.isinf(s.recursive_c) == (s.distinct_l < l)
            assert (s.l_violations["distinct"].classes == 0) == (s.distinct_l >= l)


# ---------------------------------------------------------------------------
# serialisation and row order
# ---------------------------------------------------------------------------


def _measure_kwargs(table: dict[str, Any], target: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    frame = table["frame"].copy()
    kwargs: dict[str, Any] = {
        key: target[key] for key in ("k", "l", "c", "t", "suppression_limit", "bound") if key in target
    }
    if "bounds" in target:
        frame["bound"] = target["bounds"]
        kwargs["bound_column"] = "bound"
    kwargs.update(
        quasi_identifiers=table["qis"],
        sensitive_attributes=table["sas"],
        t_distance=target["t_distance"],
        risk_threshold=target["risk_threshold"],
    )
    return frame, kwargs


@given(scenarios(), st.booleans())
def test_to_dict_is_strict_json(scenario: tuple[dict[str, Any], dict[str, Any]], include_values: bool) -> None:
    frame, kwargs = _measure_kwargs(*scenario)
    if include_values:
        with pytest.warns(PrivacyRiskWarning):
            report = pp.measure(frame, include_values=True, **kwargs)
    else:
        report = pp.measure(frame, **kwargs)
    text = json.dumps(report.to_dict(), allow_nan=False)
    assert json.loads(text)["rows"] == len(frame)
    for s in report.sensitive_attributes:
        json.dumps(s.to_dict(), allow_nan=False)


def assert_same_json(a: Any, b: Any, path: str = "$") -> None:
    """Equal JSON trees, floats compared with the tolerance of the definitions."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), f"{path}: {a!r} vs {b!r}"
        assert same_float(float(a), float(b)), f"{path}: {a!r} vs {b!r}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            assert_same_json(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_json(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


@given(scenarios(), st.randoms(use_true_random=False))
def test_row_order_does_not_change_the_report(scenario: tuple[dict[str, Any], dict[str, Any]], rnd: Any) -> None:
    frame, kwargs = _measure_kwargs(*scenario)
    order = list(range(len(frame)))
    rnd.shuffle(order)
    shuffled = frame.iloc[order]
    before = pp.measure(frame, **kwargs).to_dict()
    after = pp.measure(shuffled, **kwargs).to_dict()
    assert_same_json(before, after)
    after_reindexed = pp.measure(shuffled.reset_index(drop=True), **kwargs).to_dict()
    assert_same_json(before, after_reindexed)


def test_strategy_exercises_missing_values_in_both_roles() -> None:
    """Guard the guard: the naive sentinel really merges None, NaN and pd.NA."""
    frame = pd.DataFrame(
        {
            "q": pd.Series([None, float("nan"), pd.NA, "a"], dtype=object),
            "s": pd.Series([np.nan, None, "x", "x"], dtype=object),
        }
    )
    expected = naive_measure(frame_columns(frame), ["q"], ["s"])
    assert expected["classes"] == 2 and expected["k"] == 1
    assert expected["sensitive"]["s"]["distinct_l"] == 1
    report = pp.measure(frame, quasi_identifiers=["q"], sensitive_attributes=["s"])
    check_anonymity(report, expected)
    check_sensitive(report, expected)
