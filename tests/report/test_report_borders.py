"""Per-attribute borders show that attribute's own l; the lattice names its border subsets; "at risk" is explained.

Issue 24, item 20.
"""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.diagnosis import PrivacyDiagnosis, diagnose
from privacy_plugins.report import render
from privacy_plugins.report.plots import lattice_svg

QIS = ["age", "sex", "zip", "job", "shift"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """``disease`` is the same for everyone of an age (distinct l = 1 on ``age``); ``income`` varies within ages."""
    rng = np.random.default_rng(11)
    n = 600
    age = rng.integers(20, 26, n)
    return pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["10001", "10002", "10003"], n),
            "job": rng.choice(["nurse", "clerk", "driver"], n),
            "shift": rng.choice(["day", "night"], n),
            "disease": np.array(["flu", "cold", "asthma", "flu", "cold", "asthma"])[age - 20],
            "income": rng.choice(["low", "mid", "high"], n),
        }
    )


@pytest.fixture(scope="module")
def diagnosis(frame: pd.DataFrame) -> PrivacyDiagnosis:
    return diagnose(frame, quasi_identifiers=QIS, sensitive_attributes=["disease", "income"], k=2, l=2)


def _section(html: str, attribute: str, border: str) -> str:
    """The table under a per-attribute border's heading (``Bd+`` or ``Bd−``)."""
    start = html.index(f"sensitive attribute: {attribute}</p>")
    heading = html.index(f"<h3>{border}:", start)
    return html[heading : html.index("</table>", heading)]


def _rows(table: str) -> dict[str, list[str]]:
    headers = re.findall(r"<th>(.*?)</th>", table)
    rows = {}
    for body in re.findall(r"<tr>(<td>.*?)</tr>", table):
        cells = re.findall(r"<td>(.*?)</td>", body)
        rows[cells[0]] = dict(zip(headers, cells, strict=True))
    return rows


def _distinct_l(frame: pd.DataFrame, subset: tuple[str, ...], attribute: str) -> int:
    """Independent of the diagnosis: the fewest distinct values of ``attribute`` in a class over ``subset``."""
    return int(frame.groupby(list(subset))[attribute].nunique().min())


def test_a_per_attribute_border_shows_that_attributes_own_l(frame: pd.DataFrame, diagnosis: PrivacyDiagnosis) -> None:
    html = render(diagnosis)
    (income,) = [b for b in diagnosis.model_borders if b.sensitive_attribute == "income"]
    assert any("age" in s for s in income.positive)  # subsets where disease (the worst attribute) has l = 1
    rows = _rows(_section(html, "income", "Bd+"))
    assert len(rows) == len(income.positive)
    for subset in income.positive:
        own = _distinct_l(frame, subset, "income")
        assert own >= 2  # it satisfies income's 2-diversity: the row must not say otherwise
        cells = rows[", ".join(subset)]
        (column,) = [h for h in cells if h.startswith("distinct l")]
        assert cells[column] == f"{own:,}", (subset, cells)
    age = next(s for s in income.positive if "age" in s)
    assert _distinct_l(frame, age, "disease") == 1 == diagnosis.for_subset(age).distinct_l  # the worst one


def test_per_attribute_values_are_in_the_json_only_with_several_attributes(diagnosis: PrivacyDiagnosis) -> None:
    data = diagnosis.for_subset(("age",)).to_dict()
    assert set(data["per_attribute"]) == {"disease", "income"}
    assert data["distinct_l"] == min(v["distinct_l"] for v in data["per_attribute"].values())


def test_the_lattice_names_every_border_subset(diagnosis: PrivacyDiagnosis) -> None:
    borders = diagnosis.k_borders
    svg = lattice_svg(diagnosis.quasi_identifiers, borders)
    assert svg is not None and len(QIS) > 4  # above 4 attributes only the border subsets are named
    texts = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg)) | set(re.findall(r"<!-- (.*?) -->", svg))
    for subset in (*borders.positive, *borders.negative):
        assert "+".join(subset) in texts, subset
    named = {t for t in texts if "+" in t and not t.startswith("Bd")}
    border_names = {"+".join(s) for s in (*borders.positive, *borders.negative)}
    every = {"+".join(c) for size in range(2, len(QIS) + 1) for c in combinations(QIS, size)}
    assert named & every <= border_names  # no other subset is named
    assert f"Bd+ ({len(borders.positive)})" in texts and f"Bd− ({len(borders.negative)})" in texts


def test_records_at_risk_says_it_is_the_prosecutor_risk(diagnosis: PrivacyDiagnosis) -> None:
    html = render(diagnosis)
    threshold = f"{diagnosis.risk_threshold:g}"
    assert f"records at risk (prosecutor risk 1/|E| &gt; {threshold})" in html
    assert "records at risk (&gt;" not in html
