"""The HTML report: one self-contained, well-formed file that never shows a value of the table."""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.diagnosis import PrivacyDiagnosis, diagnose
from privacy_plugins.core.models import DistinctLDiversity
from privacy_plugins.report import render, render_diagnosis_html, write_diagnosis_html
from privacy_plugins.report.plots import size_buckets

VOID = {"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "source", "wbr", "track", "embed", "param"}
PLANTED = {"zip": "ZZ-PLANTED-99871", "job": "planted-astronaut-xq", "disease": "planted-rare-disease-qq"}


class Document(HTMLParser):
    """Collects tags, attributes and text, and checks that elements nest properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: Counter[str] = Counter()
        self.attributes: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes += [(tag, name, value) for name, value in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes += [(tag, name, value) for name, value in attrs]

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Document:
    document = Document()
    document.feed(html)
    document.close()
    assert document.errors == []
    assert document.stack == []
    return document


@pytest.fixture(scope="module")
def planted_table() -> pd.DataFrame:
    """A random table plus one person who is unique on every attribute."""
    rng = np.random.default_rng(7)
    n = 400
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 30, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["10001", "10002", "10003"], n),
            "job": rng.choice(["nurse", "clerk", "driver"], n),
            "disease": rng.choice(["flu", "cold", "asthma"], n),
        }
    )
    planted = {"age": 117, "sex": "X", "zip": PLANTED["zip"], "job": PLANTED["job"], "disease": PLANTED["disease"]}
    return pd.concat([frame, pd.DataFrame([planted])], ignore_index=True)


@pytest.fixture(scope="module")
def diagnosis(planted_table: pd.DataFrame) -> PrivacyDiagnosis:
    return diagnose(
        planted_table,
        quasi_identifiers=["age", "sex", "zip", "job"],
        sensitive_attributes=["disease"],
        k=3,
        l=2,
        l_variant="recursive",
        c=2,
        models=[DistinctLDiversity("disease", 2)],
        suppression_limit=0.05,
    )


@pytest.fixture(scope="module")
def html(diagnosis: PrivacyDiagnosis) -> str:
    return render(diagnosis)


def test_report_is_well_formed_and_has_the_plots(html: str, diagnosis: PrivacyDiagnosis) -> None:
    document = parse(html)
    assert html.startswith("<!DOCTYPE html>")
    assert document.tags["svg"] == 6  # QI ranking, lattice, k/l by size, class sizes, suppression, search effort
    assert document.tags["table"] >= 2 + 2 * (1 + len(diagnosis.model_borders))
    text = " ".join(document.text)
    for phrase in ("Privacy diagnosis", "Borders of 3-anonymity", "Bd+", "Bd−", "suppression", "quasi-identifiers"):
        assert phrase in text
    assert "recursive (2,2)-diversity for 'disease'" in text


def test_report_is_self_contained(html: str) -> None:
    document = parse(html)
    assert document.tags["script"] == 0
    assert document.tags["link"] == 0 and document.tags["img"] == 0 and document.tags["iframe"] == 0
    for tag, name, value in document.attributes:
        if name in ("src", "href", "xlink:href"):
            assert value is not None and value.startswith("#"), (tag, name, value)
    assert "@import" not in html and "url(http" not in html


def test_svg_ids_are_unique_and_references_resolve(html: str) -> None:
    ids = Counter(value for _, name, value in parse(html).attributes if name == "id")
    assert ids and max(ids.values()) == 1
    references = re.findall(r'(?:href="#|url\(#)([^")]+)', html)
    assert references and all(reference in ids for reference in references)


def test_no_value_of_the_planted_unique_person_anywhere(
    html: str, diagnosis: PrivacyDiagnosis, planted_table: pd.DataFrame, tmp_path: Path
) -> None:
    assert diagnosis.for_subset(["zip"]).sample_uniques == 1  # the planted person is singled out by zip alone
    as_json = json.dumps(diagnosis.to_dict())
    for value in PLANTED.values():
        assert value not in html
        assert value not in as_json
    # None of the table's categorical values leaks either (only attribute names and numbers appear).
    text = " ".join(parse(html).text)
    for value in ("nurse", "clerk", "driver", "asthma", "10001"):
        assert value not in text
    path = write_diagnosis_html(diagnosis, tmp_path / "report.html")
    assert path.read_text(encoding="utf-8") == html == render_diagnosis_html(diagnosis)


def test_levelwise_report_renders(planted_table: pd.DataFrame) -> None:
    diagnosis = diagnose(planted_table, quasi_identifiers=["age", "sex", "zip", "job"], k=3, max_exhaustive=0)
    document = parse(render(diagnosis))
    assert not diagnosis.exhaustive
    assert document.tags["details"] == 0  # no "every subset" table without an exhaustive run
    assert document.tags["svg"] == 6


def test_single_row_table_renders() -> None:
    diagnosis = diagnose(pd.DataFrame({"a": ["x"], "b": [1]}), quasi_identifiers=["a", "b"])
    assert diagnosis.singling_out.negative == ((),)
    assert "single row" in render(diagnosis)


def test_size_buckets_cover_every_size_once() -> None:
    for largest in (1, 3, 7, 10, 57, 1000, 12345):
        for k in (1, 2, 5, 8, 40):
            buckets = size_buckets(largest, k)
            covered = [size for low, high in buckets for size in range(low, high + 1)]
            assert covered == list(range(1, largest + 1))
            assert k > largest or any(low == k for low, _ in buckets)


def test_report_doctests_pass() -> None:
    import doctest

    import privacy_plugins.report
    import privacy_plugins.report.plots

    for module in (privacy_plugins.report, privacy_plugins.report.plots):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


def test_small_shares_are_not_shown_as_zero() -> None:
    frame = pd.DataFrame({"q": ["a"] * 4_999 + ["b"], "s": ["x", "y"] * 2_500})
    html = render(diagnose(frame, quasi_identifiers=["q"], sensitive_attributes=["s"], k=2))
    rows_of_q = re.findall(r"<tr><td>q</td>.*?</tr>", html)
    assert rows_of_q and not any("0.0%" in row for row in rows_of_q)  # 1 of 5,000 is not 0.0%
    assert all("&lt;0.1%" in row for row in rows_of_q)
    assert "<td>1 (&lt;0.1%)</td>" in html  # one row of 5,000 to suppress for k=2
    assert "<b>&lt;0.1%</b>records at risk" in html


def test_l_diversity_borders_have_their_own_headings(html: str, diagnosis: PrivacyDiagnosis) -> None:
    headings = re.findall(r"<h3>(.*?)</h3>", html)
    published = [h for h in headings if "published as they are" in h]
    assert published == [f"Bd+: the largest subsets that can be published as they are ({diagnosis.k_borders.target})"]
    for borders in diagnosis.model_borders:
        target = borders.target.replace("'", "&#x27;")
        assert f"Bd+: the largest subsets whose classes all satisfy {target}" in headings
        assert f"Bd−: the smallest subsets that already violate {target}" in headings
