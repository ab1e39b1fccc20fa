"""``release.html``: what a release published and what it cost, for people — one self-contained page.

The diagnosis page describes the *raw* table; this one the outcome: the rows published and
suppressed, the transformation (levels, or partitions/clusters), the utility numbers, every
requirement re-measured on what was swapped in, the composition check against the release
history, the attack risks, the role of every column, and before/after plots (class sizes,
re-identification risk, per-QI generalization). Like the diagnosis, everything is inline
(CSS, SVG plots): the file fetches nothing. It is built from :class:`ReleaseFacts`, which hold
names and numbers only, so the page cannot show a value of the table. It lives beside the release
flow, not in :mod:`privacy_plugins.report`, because it draws its plots by hand: importing that
package (matplotlib) would cost every publish task about a second.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np

from privacy_plugins._version import __version__

__all__ = ["CheckLine", "ReleaseFacts", "render_release_html"]

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       padding: 0 1rem; color: #1d2a30; }
h2 { border-bottom: 2px solid #e3e8ea; padding-bottom: 0.2rem; margin-top: 2.2rem; }
.muted { color: #5b6b73; } .cards { display: flex; flex-wrap: wrap; gap: 0.8rem; margin: 1rem 0; }
.card { border: 1px solid #e3e8ea; border-radius: 8px; padding: 0.6rem 0.9rem; min-width: 9rem; }
.card b { display: block; font-size: 1.5rem; }
.bad b, span.bad { color: #c0392b; } .good b, span.good { color: #21867a; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #e3e8ea; padding: 0.25rem 0.7rem; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #f4f7f8; }
figure { margin: 0.8rem 0; } figure svg { max-width: 100%; height: auto; }
"""
# Drawn by hand, without matplotlib (importing it costs a publish task about a second); the diagnosis's colours.
_BEFORE, _AFTER, _ATTACK, _CONTROL = "#9aa5ab", "#2a9d8f", "#e76f51", "#264653"
# Re-identification risk 1/|E| bands, highest first (a record alone in its class has risk 1).
_RISK_BANDS = ((0.5, 1.0), (0.2, 0.5), (0.1, 0.2), (0.05, 0.1), (0.0, 0.05))


@dataclass(frozen=True)
class CheckLine:
    """One re-measured requirement: its name, verdict, measure and target (numbers, no values)."""

    requirement: str
    passed: bool
    observed: float | None
    target: float | None
    detail: str = ""


@dataclass(frozen=True)
class ReleaseFacts:
    """Everything ``release.html`` shows: names and numbers only.

    Attributes:
        class_sizes_before, class_sizes_after: class size → number of classes, over all the
            quasi-identifiers, of the loaded table and of the published one.
        distinct_before, distinct_after: per quasi-identifier, its distinct values (raw) and labels (published).
        levels, heights: the full-domain node (level per QI) and each hierarchy's top level, when there is one.
        transformation: counts describing a local recoding (partitions, classes, cuts per QI …).
        utility: the utility measures the release computed (NCP first).
        composition: releases in the history and records at risk (``None``: no history kept).
        attacks: per attack, its rates and interval (``AttackResult.to_dict()``), when a model attacked the release.
        roles: every column's role; ``published_columns``: the columns the destination holds.
    """

    name: str
    run_id: str
    destination: str
    algorithm: str
    headline: str
    rows_loaded: int
    rows_in: int
    rows_published: int
    suppressed: int
    classes_published: int
    checks: Sequence[CheckLine]
    roles: Mapping[str, str]
    published_columns: Sequence[str]
    class_sizes_before: Mapping[int, int]
    class_sizes_after: Mapping[int, int]
    distinct_before: Mapping[str, int]
    distinct_after: Mapping[str, int]
    levels: Mapping[str, int] = field(default_factory=dict)
    heights: Mapping[str, int] = field(default_factory=dict)
    transformation: Mapping[str, Any] = field(default_factory=dict)
    utility: Mapping[str, float] = field(default_factory=dict)
    composition: Mapping[str, Any] | None = None
    attacks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    attack_limits: Mapping[str, float] = field(default_factory=dict)


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        if math.isnan(value):
            return "—"
        return f"{value:,.0f}" if value.is_integer() and abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return escape(str(value))


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(label: str, value: object, *, bad: bool | None = None) -> str:
    tone = "" if bad is None else (" bad" if bad else " good")
    return f'<div class="card{tone}"><b>{_fmt(value)}</b>{escape(label)}</div>'


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption class='muted'>{escape(caption)}</figcaption></figure>"


def _verdict(passed: bool) -> str:
    return '<span class="good">passed</span>' if passed else '<span class="bad">failed</span>'


def _published(facts: ReleaseFacts) -> str:
    out_of_scope = facts.rows_loaded - facts.rows_in
    cards = [
        _card("rows loaded", facts.rows_loaded),
        _card("rows published", facts.rows_published, bad=False),
        _card("rows suppressed", facts.suppressed, bad=facts.suppressed > 0 or None),
        _card("rows out of scope", out_of_scope, bad=out_of_scope > 0 or None),
        _card("published classes", facts.classes_published),
    ]
    rows = [["algorithm", _fmt(facts.algorithm)], ["transformation", _fmt(facts.headline)]]
    rows += [["destination", _fmt(facts.destination)], ["run", _fmt(facts.run_id)]]
    levels = ""
    if facts.levels:
        level_rows = [[_fmt(qi), _fmt(level), _fmt(facts.heights.get(qi))] for qi, level in facts.levels.items()]
        levels = "<h3>Generalization levels</h3>" + _table(["quasi-identifier", "level", "top level"], level_rows)
    counts = ""
    if facts.transformation:
        counts = "<h3>Transformation</h3>" + _table(
            ["what", "count"], [[_fmt(key), _fmt(value)] for key, value in facts.transformation.items()]
        )
    return (
        f"<h2>What was published</h2><div class='cards'>{''.join(cards)}</div>{_table(['', ''], rows)}{levels}{counts}"
    )


def _cost(facts: ReleaseFacts) -> str:
    if not facts.utility:
        return ""
    cards = "".join(_card(name, value) for name, value in facts.utility.items())
    note = "<p class='muted'>NCP: normalized certainty penalty, 0 = nothing generalized, 1 = everything.</p>"
    return f"<h2>What it cost</h2><div class='cards'>{cards}</div>{note}"


def _checks(facts: ReleaseFacts) -> str:
    rows = [
        [_fmt(c.requirement), _verdict(c.passed), _fmt(c.observed), _fmt(c.target), _fmt(c.detail)]
        for c in facts.checks
    ]
    return "<h2>Requirements re-measured on what was published</h2>" + _table(
        ["requirement", "verdict", "measured", "target", "detail"], rows
    )


def _composition(facts: ReleaseFacts) -> str:
    if facts.composition is None:
        return "<h2>Composition with earlier releases</h2><p class='muted'>No release history is kept.</p>"
    c = facts.composition
    cards = [
        _card("releases in the history", c.get("releases")),
        _card("records at risk", c.get("records_at_risk"), bad=bool(c.get("records_at_risk"))),
    ]
    verdict = "passed" if c.get("passed") else "failed"
    return (
        f"<h2>Composition with earlier releases</h2><div class='cards'>{''.join(cards)}</div>"
        f"<p>The check {verdict}: {_fmt(c.get('detail', ''))}</p>"
    )


def _attacks(facts: ReleaseFacts) -> str:
    if not facts.attacks:
        return ""
    rows = []
    for name, result in facts.attacks.items():
        low, high = result.get("ci", (None, None))
        limit = facts.attack_limits.get(name)
        passed = limit is None or high is None or high <= limit
        rows.append(
            [
                _fmt(name.replace("_", " ")),
                _fmt(result.get("risk")),
                f"[{_fmt(low)}, {_fmt(high)}]",
                _fmt(limit),
                _verdict(passed),
                _fmt(result.get("attack_rate")),
                _fmt(result.get("baseline_rate")),
                _fmt(result.get("control_rate")),
                _fmt(result.get("n_attacks")),
            ]
        )
    headers = ["attack", "risk", "confidence interval", "limit", "verdict", "attack rate", "baseline", "control"]
    return (
        "<h2>Attacks on the release</h2>"
        + _table([*headers, "attacks"], rows)
        + _figure(_attack_svg(facts), "success rate of the attack against the random-guess baseline and the control")
    )


def _roles(facts: ReleaseFacts) -> str:
    published = set(facts.published_columns)
    rows = [[_fmt(column), _fmt(role), _fmt(column in published)] for column, role in facts.roles.items()]
    return "<h2>Every column's role</h2>" + _table(["column", "role", "published"], rows)


def _buckets(before: Mapping[int, int], after: Mapping[int, int]) -> tuple[list[str], list[int], list[int]]:
    largest = max([*before, *after, 1])
    edges = sorted({e for e in (1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500, 1000, 10**4, 10**5, 10**6) if e <= largest})
    buckets = [(low, high - 1) for low, high in zip(edges, [*edges[1:], largest + 1], strict=True)]
    labels = [str(low) if low == high else f"{low}–{high}" for low, high in buckets]

    def records(histogram: Mapping[int, int]) -> list[int]:
        return [sum(s * n for s, n in histogram.items() if low <= s <= high) for low, high in buckets]

    return labels, records(before), records(after)


def _bars_svg(
    name: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    x_title: str,
    y_title: str,
    log: bool = False,
    top: float | None = None,
) -> str:
    """Grouped bars as inline SVG, drawn by hand (a release should not pay matplotlib's seconds per plot).

    ``series``: (legend label, colour, one value per label). ``log``: a log₁₀ scale from 1.
    """
    width, height, left, bottom, right, head = 760.0, 300.0, 64.0, 78.0, 12.0, 30.0
    plot_w, plot_h = width - left - right, height - bottom - head
    highest = top if top is not None else max([v for _, _, values in series for v in values] + [1.0])

    def y(value: float) -> float:
        if log:
            share = math.log10(max(value, 1.0)) / max(math.log10(highest), 1.0)
        else:
            share = value / highest if highest else 0.0
        return head + plot_h * (1 - min(max(share, 0.0), 1.0))

    slot = plot_w / max(len(labels), 1)
    bar = slot * 0.8 / max(len(series), 1)
    parts = [
        f'<svg id="{name}" viewBox="0 0 {width:g} {height:g}" '
        f'width="{width:g}" height="{height:g}" font-family="sans-serif" font-size="11">',
        f'<line x1="{left}" y1="{head + plot_h}" x2="{width - right}" y2="{head + plot_h}" stroke="#555"/>',
        f'<line x1="{left}" y1="{head}" x2="{left}" y2="{head + plot_h}" stroke="#555"/>',
    ]
    ticks = [10.0**e for e in range(0, math.ceil(math.log10(highest)) + 1)] if log else list(np.linspace(0, highest, 5))
    for tick in ticks:
        parts.append(
            f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{_fmt(float(tick))}</text>'
            f'<line x1="{left}" y1="{y(tick):.1f}" x2="{width - right}" y2="{y(tick):.1f}" stroke="#e3e8ea"/>'
        )
    for i, label in enumerate(labels):
        x0 = left + i * slot + slot * 0.1
        for j, (legend, color, values) in enumerate(series):
            value = float(values[i])
            parts.append(
                f'<rect x="{x0 + j * bar:.1f}" y="{y(value):.1f}" width="{bar:.1f}" '
                f'height="{head + plot_h - y(value):.1f}" fill="{color}"><title>{escape(legend)}: '
                f"{_fmt(value)}</title></rect>"
            )
        cx, cy = x0 + slot * 0.4, head + plot_h + 12
        parts.append(
            f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" transform="rotate(-35 {cx:.1f} {cy:.1f})">'
            f"{escape(label)}</text>"
        )
    for j, (legend, color, _) in enumerate(series):
        lx = left + 10 + j * 190
        parts.append(
            f'<rect x="{lx}" y="8" width="12" height="12" fill="{color}"/>'
            f'<text x="{lx + 16}" y="18">{escape(legend)}</text>'
        )
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">{escape(x_title)}</text>')
    parts.append(
        f'<text x="14" y="{head + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {head + plot_h / 2:.1f})">{escape(y_title)}</text></svg>'
    )
    return "".join(parts)


def _before_after(before: Sequence[float], after: Sequence[float]) -> list[tuple[str, str, Sequence[float]]]:
    return [("before (loaded)", _BEFORE, before), ("after (published)", _AFTER, after)]


def _class_size_svg(facts: ReleaseFacts) -> str:
    labels, before, after = _buckets(facts.class_sizes_before, facts.class_sizes_after)
    return _bars_svg(
        "release-class-sizes",
        labels,
        _before_after(before, after),
        x_title="equivalence class size (all quasi-identifiers)",
        y_title="records",
    )


def _risk_svg(facts: ReleaseFacts) -> str:
    def by_band(histogram: Mapping[int, int]) -> list[int]:
        return [sum(s * n for s, n in histogram.items() if low < 1 / s <= high) for low, high in _RISK_BANDS]

    labels = [f"{low:g}–{high:g}" if low else f"≤{high:g}" for low, high in _RISK_BANDS]
    before, after = by_band(facts.class_sizes_before), by_band(facts.class_sizes_after)
    return _bars_svg(
        "release-risk",
        labels,
        _before_after(before, after),
        x_title="re-identification (prosecutor) risk 1/|E|",
        y_title="records",
    )


def _generalization_svg(facts: ReleaseFacts) -> str:
    qis = list(facts.distinct_before)
    before = [facts.distinct_before[q] for q in qis]
    after = [facts.distinct_after.get(q, 0) for q in qis]
    return _bars_svg(
        "release-generalization",
        qis,
        _before_after(before, after),
        x_title="quasi-identifier",
        y_title="distinct values (log)",
        log=True,
    )


def _attack_svg(facts: ReleaseFacts) -> str:
    names = list(facts.attacks)
    series = [
        (label, color, [float(facts.attacks[n].get(key) or 0.0) for n in names])
        for key, color, label in (
            ("attack_rate", _ATTACK, "attack"),
            ("baseline_rate", _BEFORE, "baseline (random guess)"),
            ("control_rate", _CONTROL, "control"),
        )
    ]
    labels = [n.replace("_", " ") for n in names]
    return _bars_svg("release-attacks", labels, series, x_title="attack", y_title="success rate", top=1.0)


def _plots(facts: ReleaseFacts) -> str:
    return (
        "<h2>Before and after</h2>"
        + _figure(_class_size_svg(facts), "records by the size of their class, loaded table and published table")
        + _figure(_risk_svg(facts), "records by re-identification risk 1/|E| (a record alone in its class: 1)")
        + _figure(_generalization_svg(facts), "per quasi-identifier: distinct raw values and published labels")
    )


def render_release_html(facts: ReleaseFacts) -> str:
    """The release as a self-contained HTML page (names and numbers only; no external URL)."""
    title = f"Release {escape(facts.name)}"
    body = "".join(
        [
            f"<h1>{title}</h1><p class='muted'>privacy-plugins {escape(__version__)} · run {escape(facts.run_id)}</p>",
            _published(facts),
            _cost(facts),
            _checks(facts),
            _composition(facts),
            _attacks(facts),
            _roles(facts),
            _plots(facts),
        ]
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head><body>{body}</body></html>\n"
    )
