"""Risk beyond the sample in the diagnosis report: each attacker's record-risk distribution (issue 30).

Drawn only when the diagnosis was given a population model. Inline SVG (see
:func:`~privacy_plugins.report.plots.figure_svg`): nothing is loaded from elsewhere, and
only interval labels, record counts and attacker names are drawn — never a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from privacy_plugins.core.diagnosis import PrivacyDiagnosis
from privacy_plugins.report.plots import NEUTRAL, SATISFIES, VIOLATES, _figure, _text_width, figure_svg

__all__ = ["attacker_risk_svg", "population_section"]

_MEANING = {
    "prosecutor": "knows the target is in the table: 1/(sample class size)",
    "journalist": "does not know it; matches against the population: 1/(population class size)",
    "marketer": "re-identifies in bulk: the expected share of records matched correctly",
}


def attacker_risk_svg(distributions: Mapping[str, Mapping[str, int]], *, threshold: float) -> str:
    """Records per record-risk interval, one panel per attacker; intervals above ``threshold`` in red."""
    attackers = list(distributions)
    labels = list(distributions[attackers[0]])
    used = [i for i, label in enumerate(labels) if any(distributions[a][label] for a in attackers)]
    shown = labels[min(used) :] if used else labels[-1:]
    rows = max(1, sum(distributions[attackers[0]].values()))
    figure = _figure(
        width=7.5,
        height=1.3 + 0.22 * len(shown),
        left=0.3 + max(_text_width(label, 7) for label in shown),
        top=0.6,
        gap=0.2,  # the panels share the y axis: no tick labels between them
    )
    for axes, attacker in zip(figure.subplots(1, len(attackers), sharey=True), attackers, strict=True):
        shares = [distributions[attacker][label] / rows for label in shown]
        colors = [VIOLATES if _low_end(label) >= threshold else SATISFIES for label in shown]
        axes.barh(shown, shares, color=colors, edgecolor=NEUTRAL, linewidth=0.3)
        axes.set_title(attacker, fontsize=10)
        axes.set_xlim(0, 1)
        axes.set_xlabel("share of records")
        axes.tick_params(axis="y", labelsize=7)
    figure.suptitle(f"record risk by attacker (all candidates); red: risk above {threshold:g}", fontsize=9)
    return figure_svg(figure, name="attacker-risk")


def _low_end(label: str) -> float:
    """The lower end of an interval label ``(a, b]`` or ``[0, b]``."""
    return float(label.strip("([").split(",")[0])


def population_section(diagnosis: PrivacyDiagnosis) -> str:
    """The HTML section (empty without a population model): the three distributions and their meaning."""
    found = diagnosis.population
    if found is None:
        return ""
    risk = found.candidates
    svg = attacker_risk_svg(found.risk_distributions, threshold=risk.threshold)
    items = "".join(f"<li><b>{escape(a)}</b> {escape(m)}</li>" for a, m in _MEANING.items())
    how = "population counts (exact)" if risk.exact_population else f"sampling fraction {risk.sampling_fraction:.4g}"
    return (
        "<h2>Risk beyond the sample</h2>"
        f"<p>Population of {risk.population_size:,} people ({escape(how)}); highest risk: prosecutor "
        f"{risk.prosecutor:.4g}, journalist {risk.journalist:.4g}; average: prosecutor {risk.average:.4g}, "
        f"journalist {risk.journalist_average:.4g}, marketer {risk.marketer:.4g}.</p><ul>{items}</ul>"
        f"<figure>{svg}<figcaption class='muted'>Records by their re-identification risk for each attacker."
        "</figcaption></figure>"
    )
