"""Adult (../shared/data): every one of the 255 subsets and the borders, checked against pandas group-bys."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
from naive_lattice import brute_force_borders

from privacy_plugins.core.diagnosis import diagnose, find_borders
from privacy_plugins.core.io import read_table
from privacy_plugins.core.models import KAnonymity

ADULT = Path(__file__).resolve().parents[4] / "shared" / "data" / "adult" / "adult.csv"
SENSITIVE = "occupation"
Measured = dict[frozenset[str], tuple[int, int, int]]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    if not ADULT.exists():
        pytest.skip(f"Adult data not found at {ADULT} (../shared/data is not part of the repository)")
    return read_table(ADULT)


@pytest.fixture(scope="module")
def groupby_k(adult: pd.DataFrame) -> Measured:
    """(k, rows in classes < 5, distinct l) of every non-empty subset, by one pandas group-by each."""
    qis = [c for c in adult.columns if c != SENSITIVE]
    out = {}
    for size in range(1, len(qis) + 1):
        for subset in combinations(qis, size):
            grouped = adult.groupby(list(subset), dropna=False)[SENSITIVE]
            sizes = grouped.size()
            out[frozenset(subset)] = (int(sizes.min()), int(sizes[sizes < 5].sum()), int(grouped.nunique().min()))
    return out


def test_all_255_subsets_match_pandas(adult: pd.DataFrame, groupby_k: Measured) -> None:
    qis = [c for c in adult.columns if c != SENSITIVE]
    diagnosis = diagnose(adult, quasi_identifiers=qis, sensitive_attributes=[SENSITIVE], k=5, l=2)
    assert diagnosis.exhaustive and len(diagnosis.subsets) == 255
    for finding in diagnosis.subsets:
        assert (finding.k, finding.suppression_needed, finding.distinct_l) == groupby_k[frozenset(finding.attributes)]
    expected = {**groupby_k, frozenset(): (len(adult), 0, adult[SENSITIVE].nunique())}
    for borders, index, threshold in ((diagnosis.k_borders, 0, 5), (diagnosis.model_borders[0], 2, 2)):
        positive, negative, evaluated = brute_force_borders(
            qis, lambda s, index=index, threshold=threshold: expected[s][index] >= threshold
        )
        assert {frozenset(m) for m in borders.positive} == positive
        assert {frozenset(m) for m in borders.negative} == negative
        assert borders.subsets_evaluated == len(evaluated) < 256


@pytest.mark.parametrize("k", [2, 10, 50])
def test_k_borders_sweep(adult: pd.DataFrame, groupby_k: Measured, k: int) -> None:
    qis = [c for c in adult.columns if c != SENSITIVE]
    borders = find_borders(adult, quasi_identifiers=qis, target=KAnonymity(k))
    expected = {**groupby_k, frozenset(): (len(adult), 0, 0)}
    positive, negative, evaluated = brute_force_borders(qis, lambda s: expected[s][0] >= k)
    assert {frozenset(m) for m in borders.positive} == positive
    assert {frozenset(m) for m in borders.negative} == negative
    assert borders.subsets_evaluated == len(evaluated)
