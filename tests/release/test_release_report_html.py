"""``release.html`` (issue 29 item 12): what a release published and what it cost, self-contained, no value."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.core.demo import generate_census
from privacy_plugins.release import (
    ReleaseSpec,
    anonymize_step,
    check_step,
    load_step,
    publish_step,
    read_published,
)
from privacy_plugins.release.release_report import release_html_path

ROWS = 300
ATTACKS = {"n_attacks": 60, "sensitive_attribute": "disease", "singling_out": 1, "linkability": 1, "inference": 1}


def _spec(tmp_path: Path, requirements: object) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=ROWS)
    data["requirements"] = requirements
    return ReleaseSpec.from_dict(data)


def _publish(spec: ReleaseSpec, run: str) -> None:
    """The release steps without the diagnosis (its matplotlib plots cost seconds and are not tested here)."""
    candidate = anonymize_step(spec, load_step(spec, run_id=run), run_id=run)
    check = check_step(spec, candidate, run_id=run)
    assert check.passed, check.summary()
    publish_step(spec, candidate, check, run_id=run)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReleaseSpec, str]:
    """The demo census released twice (a history of two) with k = 5 and an attack-risk requirement."""
    spec = _spec(tmp_path_factory.mktemp("release_html"), [{"k_anonymity": {"k": 5}}, {"attack_risk": ATTACKS}])
    for run in ("first", "second"):
        _publish(spec, run)
    return spec, release_html_path(spec).read_text(encoding="utf-8")


def test_release_html_sits_beside_the_diagnosis_and_says_what_was_published(
    released: tuple[ReleaseSpec, str],
) -> None:
    spec, html = released
    assert release_html_path(spec).parent == spec.report.diagnosis_html.parent
    published = read_published(spec.destination)
    assert published is not None
    for section in (
        "What was published",
        "What it cost",
        "Requirements re-measured on what was published",
        "Composition with earlier releases",
        "Attacks on the release",
        "Every column's role",
        "Before and after",
    ):
        assert section in html
    assert f"<b>{len(published):,}</b>rows published" in html
    assert "<b>2</b>releases in the history" in html and "<b>0</b>records at risk" in html
    assert re.search(r"<b>0\.\d+</b>NCP", html)
    for attack in ("singling out", "linkability", "inference"):
        assert re.search(rf"<td>{attack}</td><td>[\d.]+</td><td>\[[\d.]+, [\d.]+\]</td><td>1</td>", html), attack
    for column, role in (("person_id", "identifier"), ("age", "quasi_identifier"), ("disease", "sensitive")):
        assert f"<td>{column}</td><td>{role}</td>" in html
    assert "Generalization levels" in html
    for qi in spec.quasi_identifiers:  # the full-domain node: each QI's level and its hierarchy's top level
        assert re.search(rf"<td>{qi}</td><td>\d+</td><td>\d+</td>", html), qi
    assert html.count("<svg") == 4  # class sizes, risk, per-QI generalization, attack rates


def test_release_html_has_no_value_and_fetches_nothing(released: tuple[ReleaseSpec, str]) -> None:
    spec, html = released
    assert not re.search(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}|@import|<script|<link|<img", html)
    raw = generate_census(ROWS, seed=0)
    published = read_published(spec.destination)
    assert published is not None
    values = {str(v) for frame in (raw, published) for c in frame.columns for v in frame[c].dropna().unique()}
    distinctive = {v for v in values if len(v) >= 4 and not v.replace(".", "").isdigit() and set(v) != {"*"}}
    assert len(distinctive) > 20
    text = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)  # plot text: axis labels and numbers
    shown = set(re.findall(r">([^<>]+)<", text)) | set(re.findall(r">([^<>]+)<", html))
    assert not {v for v in distinctive for s in shown if v in s}


def test_a_local_recoding_shows_its_partitions(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path, rows=ROWS, history=False)
    data["algorithm"] = {"name": "mondrian"}
    spec = ReleaseSpec.from_dict(data)
    _publish(spec, "only")
    html = release_html_path(spec).read_text(encoding="utf-8")
    assert re.search(r"<td>n partitions</td><td>\d+</td>", html)
    assert "No release history is kept" in html and "Attacks on the release" not in html


def test_release_html_renders_in_headless_chromium(released: tuple[ReleaseSpec, str], tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no headless Chromium on this machine (Debian package: chromium)")
    spec, _ = released
    page = release_html_path(spec).resolve().as_uri()
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = tmp_path / "release.png"
    subprocess.run(
        [browser, *flags, "--window-size=1200,2400", f"--screenshot={shot}", page],
        check=True,
        capture_output=True,
        timeout=120,
    )
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    assert f"Release {spec.name}" in dom and dom.count("<svg") == 4  # Chromium read our page, not an error page
    from PIL import Image

    with Image.open(shot) as image:
        gray = image.convert("L")
        histogram = gray.histogram()
    assert gray.size == (1200, 2400)
    drawn = 1 - sum(histogram[245:]) / sum(histogram)
    assert drawn > 0.02  # text, cards and plots cover the page (an error page or a blank one: < 0.2%)
