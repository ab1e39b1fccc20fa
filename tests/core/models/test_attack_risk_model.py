"""Issue 31: the AttackRisk model — judged on tables, never pruned with, failing on the upper bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.models import AttackRisk, KAnonymity, from_config
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.choice([f"z{i}" for i in range(60)], n),
            "sex": rng.choice(["f", "m"], n),
            "disease": rng.choice(["flu", "cold", "hiv", "ulcer"], n),
        }
    )


def test_registered_declared_not_monotone_and_silent_on_classes() -> None:
    model = from_config("attack_risk", singling_out=0.1, sensitive_attribute="disease")
    assert isinstance(model, AttackRisk) and model.judged_on_tables
    assert not model.is_monotonic(with_suppression=False) and not model.is_monotonic(with_suppression=True)
    assert model.monotone_relaxation(with_suppression=False) is None
    assert not KAnonymity(2).judged_on_tables
    assert KAnonymity(2).evaluate_tables(people(5, 0), people(5, 0), quasi_identifiers=["age"]) is None
    classes = EquivalenceClasses.from_frame(people(30, 0), ["age", "zip"])
    assert not model.violating_classes(classes).any()
    assert model.columns == ("disease",)
    with pytest.raises(ConfigurationError, match="singling_out"):
        from_config("attack_risk", singling_out=1.5)
    with pytest.raises(ConfigurationError, match="confidence"):
        AttackRisk(confidence=1.0)


def test_a_copy_fails_and_a_coarse_release_passes_on_the_upper_bound() -> None:
    original, control = people(300, 1), people(300, 2)
    model = AttackRisk(sensitive_attribute="disease", n_attacks=150)
    qis = ["age", "zip", "sex"]
    copy = model.evaluate_tables(original, original, quasi_identifiers=qis, control=control)
    assert not copy.passed and copy.observed > 0.5
    coarse = original.assign(age="*", zip="*")
    verdict = model.evaluate_tables(original, coarse, quasi_identifiers=qis, control=control)
    report = model.attack(original, coarse, quasi_identifiers=qis, control=control)
    limits = model.limits()
    worst = max(report.results, key=lambda key: report.results[key].upper - limits[key])
    assert (verdict.observed, verdict.threshold) == (report.results[worst].upper, limits[worst])
    loose = AttackRisk(singling_out=1, linkability=1, inference=1, sensitive_attribute="disease", n_attacks=150)
    assert loose.evaluate_tables(original, coarse, quasi_identifiers=qis, control=control).passed
    assert verdict.passed == all(r.upper <= model.limits()[k] for k, r in report.results.items())
