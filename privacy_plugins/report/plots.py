"""The diagnosis plots, drawn with matplotlib and returned as inline SVG text.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot, no
global backend switch), and saved with text kept as text and deterministic ids,
so a report is reproducible and its labels are searchable. Only attribute names
and numbers are drawn.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import combinations

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from privacy_plugins.core.diagnosis import Borders, PrivacyDiagnosis, QuasiIdentifierScore, SubsetFinding

__all__ = [
    "class_size_svg",
    "figure_svg",
    "lattice_svg",
    "qi_ranking_svg",
    "search_effort_svg",
    "subset_measures_svg",
    "suppression_svg",
]

SATISFIES = "#2a9d8f"
VIOLATES = "#e76f51"
NEUTRAL = "#264653"
TARGET = "#6d597a"
# A full Hasse diagram is drawn up to this many attributes (2^10 dots), with edges up to _EDGES_UP_TO.
_LATTICE_UP_TO = 10
_EDGES_UP_TO = 6
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_ID_REFERENCE = re.compile(r'((?:\sid="|href="#|url\(#))([^"#)]+)')


def figure_svg(figure: Figure, *, name: str) -> str:
    """The figure as an ``<svg>`` element ready to inline in HTML (no XML prolog, no metadata).

    Every ``id`` (and each reference to it) is prefixed with ``name`` so that
    several figures can share one HTML document without clashing ids.
    """
    buffer = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": name}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = _METADATA.sub("", text[text.index("<svg") :])
    return _ID_REFERENCE.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", text)


def _figure(
    width: float = 7.5,
    height: float = 3.2,
    *,
    left: float = 0.8,
    right: float = 0.15,
    bottom: float = 0.55,
    top: float = 0.35,
    gap: float = 0.9,
) -> Figure:
    """A figure whose axes sit inside fixed margins, given in inches.

    The texts around the axes are known when the figure is made (axis labels, short numeric
    ticks, attribute names), so the margins are set from them instead of by a layout engine:
    matplotlib's constrained layout measured every text on every draw and took about half of
    a report's rendering time (a release writes one report per run). ``gap`` is the space
    between side-by-side panels (room for the right panel's tick labels and axis label).
    """
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=min(bottom / height, 0.45),
        top=max(1 - top / height, 0.55),
        wspace=gap / ((width - left - right - gap) / 2),
    )
    return figure


def _text_width(text: str, size: float) -> float:
    """A generous estimate, in inches, of the width of ``text`` at ``size`` points (0.6 em per character)."""
    return 0.6 * size * len(text) / 72


def size_buckets(largest: int, target_k: int) -> list[tuple[int, int]]:
    """Class-size ranges ``[low, high]`` for the histogram: 1, 2, 3, 4, 5–9, 10–19, 20–49, … split at k.

    Example:
        >>> size_buckets(120, 5)
        [(1, 1), (2, 2), (3, 3), (4, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, 120)]
    """
    edges = {1, 2, 3, 4, 5, target_k}
    step = 10
    while step <= largest:
        edges.update({step, 2 * step, 5 * step})
        step *= 10
    starts = sorted(e for e in edges if e <= largest)
    return [(low, high - 1) for low, high in zip(starts, [*starts[1:], largest + 1], strict=True)]


def class_size_svg(histogram: Mapping[int, int], *, target_k: int) -> str:
    """Equivalence classes and their records by class size (all candidates); sizes below k in red."""
    buckets = size_buckets(max(histogram), target_k)
    labels = [str(low) if low == high else f"{low}–{high}" for low, high in buckets]
    classes = [sum(n for size, n in histogram.items() if low <= size <= high) for low, high in buckets]
    records = [sum(size * n for size, n in histogram.items() if low <= size <= high) for low, high in buckets]
    colors = [VIOLATES if high < target_k else SATISFIES for _, high in buckets]
    rotated = 0.71 * max(_text_width(label, 8) for label in labels)  # 45°: the label's height
    figure = _figure(height=3.2 + rotated, bottom=0.45 + rotated, top=0.65)
    for axes, counts, label in zip(figure.subplots(1, 2), (classes, records), ("classes", "records"), strict=True):
        axes.bar(labels, counts, color=colors)
        axes.set_xlabel("equivalence class size")
        axes.set_ylabel(f"number of {label}")
        axes.set_title(f"{label} by class size")
        axes.tick_params(axis="x", labelrotation=45, labelsize=8)
    figure.suptitle(f"all candidate quasi-identifiers; red: classes smaller than k = {target_k}", fontsize=9)
    return figure_svg(figure, name="class-sizes")


def suppression_svg(histogram: Mapping[int, int], *, rows: int, target_k: int) -> str:
    """Share of the rows to suppress (classes smaller than k) as k grows, all candidates."""
    largest_k = min(rows, max(50, 2 * target_k))
    ks = np.arange(1, largest_k + 1)
    sizes = np.array(sorted(histogram), dtype=np.int64)
    records = np.array([histogram[int(s)] for s in sizes], dtype=np.int64) * sizes
    below = np.concatenate(([0], np.cumsum(records)))[np.searchsorted(sizes, ks, side="left")]
    figure = _figure(height=3.0)
    axes = figure.subplots()
    axes.step(ks, below / rows, where="post", color=NEUTRAL)
    marked = below[target_k - 1] / rows
    axes.plot([target_k], [marked], "o", color=TARGET, label=f"k = {target_k}: {marked:.1%} of the rows")
    axes.set_xlabel("target k")
    axes.set_ylabel("share of rows suppressed")
    axes.set_ylim(0, 1.02)
    axes.set_title("suppression needed versus k (all candidate quasi-identifiers)")
    axes.legend(frameon=False, loc="lower right")
    return figure_svg(figure, name="suppression")


def _strip(axes: Axes, subsets: Sequence[SubsetFinding], value: Callable[[SubsetFinding], float], d: int) -> None:
    rng = np.random.default_rng(0)
    x = np.array([s.size for s in subsets], dtype=float)
    y = np.array([value(s) for s in subsets], dtype=float)
    axes.scatter(x + rng.uniform(-0.18, 0.18, x.shape[0]), y, s=12, alpha=0.6, color=NEUTRAL, linewidths=0)
    for size in np.unique(x):
        axes.plot([size - 0.3, size + 0.3], [np.median(y[x == size])] * 2, color=TARGET, linewidth=2)
    axes.set_xticks(range(1, d + 1))
    axes.set_xlabel("number of quasi-identifiers in the subset")


def subset_measures_svg(diagnosis: PrivacyDiagnosis) -> str:
    """K (and l) of each measured subset by subset size, with the targets marked."""
    subsets = diagnosis.subsets
    d = len(diagnosis.quasi_identifiers)
    with_l = bool(diagnosis.sensitive_attributes)
    figure = _figure(height=3.4)
    panels = figure.subplots(1, 2 if with_l else 1, squeeze=False)[0]
    _strip(panels[0], subsets, lambda s: s.k, d)
    panels[0].set_yscale("log")
    panels[0].axhline(diagnosis.target_k, color=TARGET, linestyle="--", label=f"target k = {diagnosis.target_k}")
    panels[0].set_ylabel("k (smallest class)")
    panels[0].set_title("k by subset size" + ("" if diagnosis.exhaustive else " (subsets visited)"))
    panels[0].legend(frameon=False)
    if with_l:
        _strip(panels[1], subsets, lambda s: float(s.distinct_l or 0), d)
        panels[1].set_ylabel(f"distinct l of {', '.join(map(str, diagnosis.sensitive_attributes))}")
        panels[1].set_title("distinct l by subset size")
        if diagnosis.target_l is not None:
            panels[1].axhline(
                diagnosis.target_l, color=TARGET, linestyle="--", label=f"target l = {diagnosis.target_l:g}"
            )
            panels[1].legend(frameon=False)
    return figure_svg(figure, name="by-size")


def lattice_svg(attributes: Sequence[Hashable], borders: Borders) -> str | None:
    """The subset lattice (Hasse diagram) coloured by the target; ``None`` above 10 attributes.

    The border subsets are ringed — Bd+ with a solid ring, Bd− with a dashed one — and named;
    up to 4 attributes every subset is named.
    """
    d = len(attributes)
    if d > _LATTICE_UP_TO:
        return None
    index = {a: i for i, a in enumerate(attributes)}
    positive = [frozenset(index[a] for a in member) for member in borders.positive]
    negative = {frozenset(index[a] for a in member) for member in borders.negative}
    position: dict[frozenset[int], tuple[float, float]] = {}
    for size in range(d + 1):
        level = [frozenset(c) for c in combinations(range(d), size)]
        for rank, subset in enumerate(level):
            position[subset] = ((rank + 1) / (len(level) + 1), float(size))
    figure = _figure(height=min(6.0, 1.2 + 0.55 * d), left=0.6, bottom=0.2)
    axes = figure.subplots()
    if d <= _EDGES_UP_TO:
        for subset, (x, y) in position.items():
            for i in subset:
                px, py = position[subset - {i}]
                axes.plot([px, x], [py, y], color="#cccccc", linewidth=0.6, zorder=1)
    satisfied = {s: any(s <= p for p in positive) for s in position}
    xs, ys = zip(*position.values(), strict=True)
    colors = [SATISFIES if satisfied[s] else VIOLATES for s in position]
    dot = max(6.0, 160.0 / 2 ** (d / 2))
    axes.scatter(xs, ys, s=dot, c=colors, zorder=2, linewidths=0)
    on_border = set(positive)
    for members, style, name in ((on_border, "solid", "Bd+"), (negative, "dashed", "Bd−")):
        ringed = [s for s in position if s in members]
        axes.scatter(
            [position[s][0] for s in ringed], [position[s][1] for s in ringed],
            s=dot * 3, facecolors="none", edgecolors=NEUTRAL, linewidths=1.2, linestyles=style, zorder=3,
            label=f"{name} ({len(ringed)})",
        )  # fmt: skip
    named = position if d <= 4 else {s: p for s, p in position.items() if s in on_border or s in negative}
    for rank, (subset, (x, y)) in enumerate(sorted(named.items(), key=lambda item: item[1])):
        label = "+".join(str(attributes[i]) for i in sorted(subset)) or "∅ (whole table)"
        lift = 7 if d <= 4 or rank % 2 == 0 else -11  # alternate above/below so neighbours do not overprint
        axes.annotate(
            label, (x, y), textcoords="offset points", xytext=(0, lift), ha="center", fontsize=7 if d <= 4 else 5
        )
    axes.legend(frameon=False, fontsize=7, loc="upper right")
    axes.set_yticks(range(d + 1))
    axes.set_ylim(-0.5, d + 0.6)
    axes.set_ylabel("subset size")
    axes.set_xticks([])
    axes.set_xlim(0, 1)
    axes.set_title(f"{borders.target}: satisfied (green) / violated (red); borders ringed and named")
    return figure_svg(figure, name="lattice")


def search_effort_svg(borders: Sequence[Borders], d: int) -> str:
    """Subsets the level-wise search evaluated per level against the C(d, i) subsets of that level."""
    figure = _figure(height=3.0)
    axes = figure.subplots()
    levels = np.arange(d + 1)
    axes.bar(levels, [math.comb(d, i) for i in levels], color="#dddddd", label="all subsets (C(d, i))")
    for offset, border in zip(np.linspace(-0.25, 0.25, len(borders)), borders, strict=True):
        counts = np.array(border.evaluated_per_level, dtype=float)
        counts[counts == 0] = np.nan  # nothing evaluated: no point on a log scale
        axes.plot(levels + offset, counts, "o-", markersize=4, label=border.target)
    axes.set_yscale("log")
    axes.set_xlabel("subset size (lattice level)")
    axes.set_ylabel("subsets")
    axes.set_title("subsets evaluated by the level-wise search, per level")
    axes.legend(frameon=False, fontsize=7)
    return figure_svg(figure, name="effort")


def qi_ranking_svg(ranking: Sequence[QuasiIdentifierScore]) -> str:
    """Attributes by the number of minimal singling-out sets they belong to."""
    names = [str(score.quasi_identifier) for score in ranking][::-1]
    left = 0.3 + max((_text_width(name, 10) for name in names), default=0.0)
    figure = _figure(height=0.9 + 0.3 * len(ranking), left=min(left, 3.5))
    axes = figure.subplots()
    counts = [score.minimal_sets for score in ranking][::-1]
    colors = [VIOLATES if score.smallest_set == 1 else NEUTRAL for score in ranking][::-1]
    axes.barh(names, counts, color=colors)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("minimal attribute sets that single out a person and contain the attribute")
    axes.set_title("which columns are the quasi-identifiers (red: singles people out alone)")
    return figure_svg(figure, name="ranking")
