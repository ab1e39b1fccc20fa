"""The domain rule inside the full-domain search and Mondrian (issue 26, ``history: {protect: domain}``).

The oracle is the point-by-point one of ``test_history_domain`` (every point of the ages × zips
domain, H(p) recomputed naively from the published tables).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.history import class_signature
from privacy_plugins.core.history_boxes import BoxRule
from privacy_plugins.core.history_release import history_models
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import InfeasibleAnonymizationError
from tests.core.test_history_domain import AGES, DISEASES, QIS, ZIPS, _hierarchies, _history, _release, oracle

MODELS = [KAnonymity(2), DistinctLDiversity("disease", 2)]


def test_the_domain_rule_is_not_monotone_under_generalization() -> None:
    """Release 1 held ages 20-24 (flu, hiv) and 25-29 (cold, cancer); everyone aged 25-29 was deleted since.
    The class [20-25) of the people left passes; the coarser [20-30), with the same records and values,
    also covers 25-29, which it narrows to nothing: the lattice cannot prune with the rule."""
    first = pd.DataFrame(
        {"age": ["[20-25)"] * 2 + ["[25-30)"] * 2, "zip": ["4790*"] * 4, "disease": ["flu", "hiv", "cold", "cancer"]}
    )
    rule = BoxRule([class_signature(first, QIS, ["disease"])], QIS, "disease", 2, _hierarchies())
    held = rule.held(np.array(["flu", "hiv"], dtype=object), np.zeros(2, dtype=np.int64), 1)
    finer = pd.DataFrame({"age": ["[20-25)"], "zip": ["4790*"]})
    coarser = pd.DataFrame({"age": ["[20-30)"], "zip": ["4790*"]})
    assert not rule.breaks(finer, held)[0]
    assert rule.breaks(coarser, held)[0]


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[pd.DataFrame], pd.DataFrame, float]:
    history = [_release(draw) for _ in range(draw(st.integers(1, 2)))]
    n = draw(st.integers(6, 24))
    table = pd.DataFrame(
        {
            "age": draw(st.lists(st.sampled_from(AGES), min_size=n, max_size=n)),
            "zip": draw(st.lists(st.sampled_from(ZIPS), min_size=n, max_size=n)),
            "disease": draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n)),
        }
    )
    return history, table, draw(st.sampled_from([0.0, 0.25]))


def _models(history: list[pd.DataFrame]) -> list[Any]:
    return [*MODELS, *history_models(MODELS, _history(*history), _hierarchies(), domain=True)]


def _release_with(algorithm: str, history: list[pd.DataFrame], table: pd.DataFrame, limit: float) -> Any:
    try:
        result = anonymize(
            table, algorithm=algorithm, quasi_identifiers=QIS, models=_models(history), suppression_limit=limit,
            hierarchies=_hierarchies(), sensitive_attributes=["disease"],
        )  # fmt: skip
    except InfeasibleAnonymizationError:
        return None
    return result


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_the_full_domain_search_keeps_every_point_and_stays_optimal(
    case: tuple[list[pd.DataFrame], pd.DataFrame, float],
) -> None:
    """The chosen node (its breaking classes suppressed) narrows no point of any published box, and the pruned
    search finds the node the exhaustive one does (the rule is checked, never pruned with)."""
    history, table, limit = case
    optimal = _release_with("optimal", history, table, limit)
    exhaustive = _release_with("exhaustive", history, table, limit)
    assert (optimal is None) == (exhaustive is None)
    if optimal is None:
        return
    assert optimal.details.levels == exhaustive.details.levels
    assert not any(oracle(history, optimal.table, 2))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_mondrian_refuses_cuts_that_narrow_a_point(case: tuple[list[pd.DataFrame], pd.DataFrame, float]) -> None:
    """Every partition Mondrian publishes came from an allowed cut (or is the whole table): no published class
    narrows a point of its box unless the table was never cut."""
    history, table, _ = case
    result = _release_with("mondrian", history, table, 0.0)
    if result is None or result.details.n_partitions == 1:
        return
    assert not any(oracle(history, result.table, 2))
