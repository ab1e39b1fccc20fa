"""Points of the QI domain (issue 26): the overlay check against a point-by-point oracle written here."""

from __future__ import annotations

import itertools
from collections.abc import Hashable

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import class_signature
from privacy_plugins.core.history_domain import domain_breaks

QIS = ["age", "zip"]
AGES = list(range(20, 32))
ZIPS = ["47906", "47907", "47610", "47611"]
DISEASES = ["flu", "hiv", "cold", "cancer"]
AGE_LABELS = ["20", "23", "27", "[20-25)", "[25-30)", "[20-30)", "[21-24]", "[23-28]", "[26-31]", "*"]
ZIP_LABELS = ["47906", "47610", "4790*", "4761*", "476**", "47***", "*****", "*"]


HIERARCHIES: dict[Hashable, Hierarchy] = {
    "age": interval_hierarchy("age", range(20, 40), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}
_ROWS: dict[int, list[list[str]]] = {}


def _hierarchies() -> dict[Hashable, Hierarchy]:
    return HIERARCHIES


def _covers(label: str, value: object, hierarchy: Hierarchy) -> bool:
    """Naive coverage of one leaf: equal, ``*``, an ancestor in the hierarchy, or a numeric range holding it."""
    if label in ("*", str(value)):
        return True
    if any(row[0] == str(value) and label in row for row in _ROWS.setdefault(id(hierarchy), hierarchy.to_rows())):
        return True
    if not isinstance(value, int) or "-" not in label:
        return False
    low, high = (float(part) for part in label.strip("[]()").split("-"))
    return low <= value < high if label.endswith(")") else low <= value <= high


def oracle(history: list[pd.DataFrame], candidate: pd.DataFrame, l: int) -> list[bool]:
    """Per candidate row: its class leaves some point of its box fewer than min(l, |H(p)|) values.

    Every point of the domain (ages × zips) is visited; H(p) intersects, per release, the values of
    the classes covering p (the all-``*`` class adds its values only where another class covers p; a
    release covering p with no other class tells nothing).
    """
    hierarchies = _hierarchies()

    def box(row: pd.Series, point: tuple[int, str]) -> bool:
        return all(_covers(str(row[q]), v, hierarchies[q]) for q, v in zip(QIS, point, strict=True))

    def star(row: pd.Series) -> bool:
        return all(str(row[q]) == "*" for q in QIS)

    everything = set(DISEASES)
    left = {}
    for point in itertools.product(AGES, ZIPS):
        held = set(everything)
        for release in history:
            rows = [row for _, row in release.iterrows() if not star(row) and box(row, point)]
            if rows:
                stars = {row["disease"] for _, row in release.iterrows() if star(row)}
                held &= {row["disease"] for row in rows} | stars
        left[point] = held
    broken = []
    for _, row in candidate.iterrows():
        if star(row):
            broken.append(False)
            continue
        mates = candidate[(candidate["age"] == row["age"]) & (candidate["zip"] == row["zip"])]
        values = set(mates["disease"])
        broken.append(
            any(
                len(left[p] & values) < min(l, len(left[p]))
                for p in itertools.product(AGES, ZIPS)
                if box(row, p)
            )
        )
    return broken


def _release(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 6))
    rows = []
    for _ in range(n):
        age, zip_ = draw(st.sampled_from(AGE_LABELS)), draw(st.sampled_from(ZIP_LABELS))
        if draw(st.integers(0, 5)) == 0:
            age, zip_ = "*", "*"
        for disease in draw(st.sets(st.sampled_from(DISEASES), min_size=1, max_size=3)):
            rows.append({"age": age, "zip": zip_, "disease": disease})
    return pd.DataFrame(rows)


@st.composite
def _sequences(draw: st.DrawFn) -> tuple[list[pd.DataFrame], pd.DataFrame, int]:
    history = [_release(draw) for _ in range(draw(st.integers(1, 3)))]
    return history, _release(draw), draw(st.integers(1, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sequences())
def test_the_domain_check_matches_a_point_by_point_oracle(sequence: tuple[list[pd.DataFrame], pd.DataFrame, int]) -> None:
    history, candidate, l = sequence
    signatures = [class_signature(release, QIS, ["disease"]) for release in history]
    found = domain_breaks(signatures, candidate, QIS, {"disease": l}, _hierarchies())
    assert found.tolist() == oracle(history, candidate, l)
