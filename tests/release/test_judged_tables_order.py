"""Issue 31: the gate's attack verdict does not depend on the order a GROUP BY returned the candidate's classes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.history import COUNT
from privacy_plugins.core.models import AttackRisk
from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates
from privacy_plugins.release import composition_gate
from privacy_plugins.release.judged_tables import judged_tables
from privacy_plugins.release.staging import StagedMeasure

QIS = ["age", "zip"]  # roles: age, zip quasi-identifiers; disease sensitive


def _verdict(targets: pd.DataFrame, aggregates: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(composition_gate, "run_targets", lambda spec, folder: targets.copy())
    measured = StagedMeasure(["age", "zip", "disease"], 0, classes_from_aggregates(aggregates.copy(), QIS), "x")
    original, original_counts, release, release_counts = judged_tables(SimpleNamespace(), Path("."), measured)()  # type: ignore[arg-type]
    result = AttackRisk(sensitive_attribute="disease", n_attacks=40, seed=1).evaluate_tables(
        original, release, quasi_identifiers=QIS, original_counts=original_counts, release_counts=release_counts
    )
    assert result is not None
    return result.to_dict()


def test_the_verdict_is_the_same_whatever_order_the_classes_came_in(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    people = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 300),
            "zip": rng.choice(["a", "b", "c"], 300),
            "disease": rng.choice(["x", "y"], 300),
        }
    )
    targets = people.groupby(["age", "zip", "disease"], sort=True).size().reset_index(name=COUNT)
    aggregates = targets.rename(columns={COUNT: COUNT_COLUMN})  # the candidate: the rows as they are (k = 1)
    verdicts = [_verdict(targets, aggregates.sample(frac=1.0, random_state=seed), monkeypatch) for seed in range(3)]
    assert verdicts[0]["measures"]["singling_out"]["successes"] > 0  # the draws matter: rows single out
    assert verdicts[1:] == verdicts[:1] * 2
