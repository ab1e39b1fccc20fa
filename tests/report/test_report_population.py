"""The diagnosis HTML with a population model: the three attackers' record-risk plots, self-contained, no values."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.metrics.population import PopulationModel
from privacy_plugins.report import render
from privacy_plugins.report.risk_plots import attacker_risk_svg

PLANTED = {"zip": "ZZ-PLANTED-99871", "job": "planted-astronaut-xq"}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"zip": rng.choice(["10001", "10002"], 200), "job": rng.choice(["nurse", "clerk"], 200)})
    return pd.concat([frame, pd.DataFrame([{"zip": PLANTED["zip"], "job": PLANTED["job"]}])], ignore_index=True)


def test_the_three_attackers_are_plotted_with_a_population_model(table: pd.DataFrame) -> None:
    plain = render(diagnose(table, quasi_identifiers=["zip", "job"], k=2))
    html = render(
        diagnose(table, quasi_identifiers=["zip", "job"], k=2, population=PopulationModel(sampling_fraction=0.1))
    )
    assert html.count("<svg") == plain.count("<svg") + 1
    assert "Risk beyond the sample" in html and "Risk beyond the sample" not in plain
    figure = re.search(r"<svg.*?</svg>", html[html.index("Risk beyond the sample") :], re.DOTALL)
    assert figure is not None
    for attacker in ("prosecutor", "journalist", "marketer"):
        assert f">{attacker}<" in figure.group(0)
    # self-contained and no value: references stay inside the document, no planted value or category
    assert re.findall(r'(?:src|href)="([^"#][^"]*)"', html) == []
    assert "http://" not in html.replace("http://www.w3.org/", "") and "https://" not in html
    for value in (*PLANTED.values(), "nurse", "clerk", "10001"):
        assert value not in html


def test_the_plot_draws_each_attackers_counts() -> None:
    """A bar per interval and attacker, its width the interval's share of the records (red above the threshold)."""
    labels = ["(0.1, 0.125]", "(0.333, 0.5]", "(0.5, 1]"]
    svg = attacker_risk_svg(
        {"prosecutor": dict(zip(labels, [0, 3, 1])), "journalist": dict(zip(labels, [4, 0, 0])),
         "marketer": dict(zip(labels, [0, 4, 0]))},
        threshold=0.2,
    )  # fmt: skip
    assert svg.startswith("<svg") and all(label in svg for label in labels)
    assert svg.count("#e76f51") >= 3 and "#2a9d8f" in svg  # red bars above 0.2, green below
