"""Privacy models: parameters, verdicts on the worked examples, the registry."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    KAnonymity,
    PersonalizedLeakage,
    RecursiveCLDiversity,
    TCloseness,
    from_config,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError


@pytest.fixture
def table14() -> EquivalenceClasses:
    """Thesis Table 1.4: 2-anonymous, the HIV class is homogeneous."""
    frame = pd.DataFrame(
        {
            "age": ["[21-22]", "[21-22]", "[23-24]", "[23-24]"],
            "zip": ["1765*", "1765*", "1766*", "1766*"],
            "disease": ["Cancer", "Flu", "HIV", "HIV"],
        }
    )
    return EquivalenceClasses.from_frame(frame, ["age", "zip"])


def test_verdicts_on_table14(table14: EquivalenceClasses) -> None:
    assert KAnonymity(2).evaluate(table14).passed
    assert not KAnonymity(3).evaluate(table14).passed
    result = DistinctLDiversity("disease", 2).evaluate(table14)
    assert (result.passed, result.observed, result.violations.classes, result.violations.records) == (False, 1, 1, 2)
    assert FrequencyLDiversity("disease", 1).evaluate(table14).passed
    assert not EntropyLDiversity("disease", 1.5).evaluate(table14).passed
    recursive = RecursiveCLDiversity("disease", 3, 2).evaluate(table14)
    assert not recursive.passed and recursive.observed == math.inf
    assert not PersonalizedLeakage("disease", bound=0.5).evaluate(table14).passed
    assert PersonalizedLeakage("disease", bound=1.0).evaluate(table14).passed
    # Whole table {Cancer: 1/4, Flu: 1/4, HIV: 1/2}; the HIV class is ½(1/4 + 1/4 + 1/2) = 0.5 away.
    closeness = TCloseness("disease", 0.4).evaluate(table14)
    assert not closeness.passed and closeness.observed == pytest.approx(0.5)


def test_results_hold_no_raw_values(table14: EquivalenceClasses) -> None:
    text = str(DistinctLDiversity("disease", 2).evaluate(table14).to_dict())
    assert "HIV" not in text and "1766" not in text
    shown = str(DistinctLDiversity("disease", 2).evaluate(table14, include_values=True).to_dict())
    assert "1766*" in shown


def test_names_read_like_the_papers() -> None:
    assert str(KAnonymity(5)) == "5-anonymity"
    assert str(DistinctLDiversity("disease", 3)) == "distinct-3-diversity for 'disease'"
    assert str(RecursiveCLDiversity("disease", 2, 3)) == "recursive (2,3)-diversity for 'disease'"
    assert str(TCloseness("salary", 0.2, "ordered")) == "0.2-closeness (ordered distance) for 'salary'"


def test_monotonicity_declarations() -> None:
    assert KAnonymity(2).is_monotonic(with_suppression=True)
    assert DistinctLDiversity("s", 2).is_monotonic(with_suppression=True)
    for model in (EntropyLDiversity("s", 2), FrequencyLDiversity("s", 2), RecursiveCLDiversity("s", 2, 2),
                  TCloseness("s", 0.2)):  # fmt: skip
        assert model.is_monotonic(with_suppression=False)
        assert not model.is_monotonic(with_suppression=True)
    assert PersonalizedLeakage("s", bound=0.5).is_monotonic(with_suppression=False)
    assert not PersonalizedLeakage("s", bound_column="b").is_monotonic(with_suppression=False)


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: KAnonymity(0), "k must be an integer >= 1"),
        (lambda: KAnonymity("5"), "k must be an integer"),  # type: ignore[arg-type]
        (lambda: DistinctLDiversity("s", 0.5), "l must be >= 1"),
        (lambda: RecursiveCLDiversity("s", 0, 2), "c must be > 0"),
        (lambda: RecursiveCLDiversity("s", 2, 1.5), "l must be an integer"),  # type: ignore[arg-type]
        (lambda: TCloseness("s", 1.5), r"t must be in \[0, 1\]"),
        (lambda: TCloseness("s", 0.2, "hamming"), "distance must be"),  # type: ignore[arg-type]
        (lambda: PersonalizedLeakage("s"), "needs a bound, a bound_column, or both"),
        (lambda: PersonalizedLeakage("s", bound=0.0), r"bound must be in \(0, 1\]"),
    ],
)
def test_parameters_are_validated(factory, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ConfigurationError, TypeError), match=message):
        factory()


def test_registry() -> None:
    assert from_config("k_anonymity", k=5) == KAnonymity(5)
    assert from_config("recursive_cl_diversity", sensitive_attribute="d", c=2, l=3) == RecursiveCLDiversity("d", 2, 3)
    with pytest.raises(ConfigurationError, match="did you mean 'k_anonymity'"):
        from_config("k_anonimity", k=5)
    with pytest.raises(ConfigurationError, match="k_anonymity: unknown parameter 'kk'; did you mean 'k'"):
        from_config("k_anonymity", kk=5)


def test_an_empty_class_diversifies_nothing_under_every_l_variant() -> None:
    """A cluster left without records (clustering's checker) is a violating class, never NaN (0/0)."""
    import warnings

    import numpy as np

    frame = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": ["x", "y", "x", "y"]})
    classes = EquivalenceClasses.from_class_ids(frame, ("q",), np.array([0, 0, 2, 2]), 3)  # class 1 is empty
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for model in (DistinctLDiversity("s", 2), EntropyLDiversity("s", 2), FrequencyLDiversity("s", 2)):
            assert model.violating_classes(classes).tolist() == [False, True, False], model
            assert not np.isnan(model.per_class(classes)).any(), model
