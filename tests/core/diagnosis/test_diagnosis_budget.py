"""The diagnosis budget: level-wise when all subsets would cost too much, and it says why; progress calls."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.diagnosis import DEFAULT_MAX_COST, diagnose
from privacy_plugins.errors import ConfigurationError

QIS = ["a", "b", "c", "d", "e"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({name: rng.integers(0, 3 + i, 300) for i, name in enumerate(QIS)})
    frame["s"] = rng.integers(0, 4, 300)
    return frame


def _borders(diagnosis: object) -> tuple[object, ...]:
    return tuple(
        (b.positive, b.negative)
        for b in (diagnosis.k_borders, diagnosis.singling_out, *diagnosis.model_borders)  # type: ignore[attr-defined]
    )


def test_rows_times_subsets_over_max_cost_goes_levelwise_and_says_why(table: pd.DataFrame) -> None:
    full = diagnose(table, quasi_identifiers=QIS, sensitive_attributes=["s"], k=3, l=2)
    assert full.exhaustive and full.mode_reason is None and full.to_dict()["mode_reason"] is None
    cheap = diagnose(table, quasi_identifiers=QIS, sensitive_attributes=["s"], k=3, l=2, max_cost=300 * 2**5 - 1)
    assert not cheap.exhaustive
    assert cheap.mode_reason is not None and "max_cost" in cheap.mode_reason and "32 subsets" in cheap.mode_reason
    data = json.loads(json.dumps(cheap.to_dict()))
    assert data["mode"] == "levelwise" and data["mode_reason"] == cheap.mode_reason
    assert data["k_by_subset"] is None
    assert _borders(cheap) == _borders(full)  # the borders do not depend on the mode
    assert cheap.subsets_measured < full.subsets_measured
    from privacy_plugins.report import render  # the HTML report lives outside the core

    assert "max_cost" in render(cheap)


def test_tiny_time_budget_stops_the_walk_and_goes_levelwise(table: pd.DataFrame) -> None:
    full = diagnose(table, quasi_identifiers=QIS, k=3)
    hurried = diagnose(table, quasi_identifiers=QIS, k=3, time_budget=0)
    assert not hurried.exhaustive
    assert hurried.mode_reason is not None
    assert "time_budget of 0 s ran out after 2 of 32 subsets" in hurried.mode_reason
    assert hurried.to_dict()["mode_reason"] == hurried.mode_reason
    assert _borders(hurried) == _borders(full)


def test_too_many_candidates_is_a_reason_too(table: pd.DataFrame) -> None:
    diagnosis = diagnose(table, quasi_identifiers=QIS, k=3, max_exhaustive=4)
    assert not diagnosis.exhaustive
    assert diagnosis.mode_reason == "5 candidate quasi-identifiers exceed max_exhaustive=4 (2^5 subsets)"


def test_default_cost_limit_keeps_a_million_rows_with_12_qis_levelwise() -> None:
    from privacy_plugins.core.diagnosis import DiagnosisBudget

    budget = DiagnosisBudget(max_exhaustive=12)
    assert budget.exhaustive_refusal(rows=1_000_000, d=12) is not None
    assert budget.exhaustive_refusal(rows=DEFAULT_MAX_COST // 4096, d=12) is None


def test_progress_is_reported_per_subset(table: pd.DataFrame) -> None:
    calls: list[tuple[int, int | None]] = []
    diagnose(table, quasi_identifiers=QIS, k=3, progress=lambda done, total: calls.append((done, total)))
    exhaustive = [c for c in calls if c[1] is not None]
    assert exhaustive[-1] == (32, 32)  # every subset, the empty one included
    assert [done for done, _ in exhaustive] == list(range(2, 33))
    calls.clear()
    levelwise = diagnose(
        table, quasi_identifiers=QIS, k=3, max_exhaustive=0, progress=lambda done, total: calls.append((done, total))
    )
    assert calls and all(total is None for _, total in calls)
    assert calls[-1][0] == levelwise.subsets_measured


@pytest.mark.parametrize(("name", "value"), [("time_budget", -1.0), ("max_cost", 0)])
def test_bad_budget_is_a_configuration_error(table: pd.DataFrame, name: str, value: float) -> None:
    with pytest.raises(ConfigurationError, match=name):
        diagnose(table, quasi_identifiers=QIS, **{name: value})  # type: ignore[arg-type]
