"""One self-contained HTML file for a :class:`PrivacyDiagnosis`.

Everything is inline — CSS, and the plots as SVG — so the file opens in any
browser offline and fetches nothing. It shows attribute names and numbers only:
the diagnosis never holds a value of the table, so the report cannot leak one.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from html import escape

from privacy_plugins._version import __version__
from privacy_plugins.core.diagnosis import Borders, PrivacyDiagnosis, SubsetFinding
from privacy_plugins.report import plots
from privacy_plugins.report.risk_plots import population_section

__all__ = ["render_diagnosis_html"]

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       padding: 0 1rem; color: #1d2a30; }
h1 { margin-bottom: 0.2rem; } h2 { border-bottom: 2px solid #e3e8ea; padding-bottom: 0.2rem; margin-top: 2.2rem; }
.muted { color: #5b6b73; } .cards { display: flex; flex-wrap: wrap; gap: 0.8rem; margin: 1rem 0; }
.card { border: 1px solid #e3e8ea; border-radius: 8px; padding: 0.6rem 0.9rem; min-width: 9rem; }
.card b { display: block; font-size: 1.5rem; } .bad b { color: #c0392b; } .good b { color: #21867a; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #e3e8ea; padding: 0.25rem 0.7rem; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #f4f7f8; }
figure { margin: 0.8rem 0; } figure svg { max-width: 100%; height: auto; }
"""


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:,.0f}" if value.is_integer() and abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))


def _share(fraction: float) -> str:
    """A share in percent (plain text): never 0.0% when non-zero (``<0.1%``), nor 100.0% when partial."""
    if 0 < fraction < 0.001:
        return "<0.1%"
    if 0.999 < fraction < 1:
        return ">99.9%"
    return f"{fraction:.1%}"


def _names(attributes: Iterable[Hashable]) -> str:
    names = [escape(str(a)) for a in attributes]
    return ", ".join(names) if names else "∅ (whole table)"


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>" if headers else ""
    return f"<table>{thead}<tbody>{body}</tbody></table>"


def _card(label: str, value: object, *, bad: bool | None = None) -> str:
    tone = "" if bad is None else (" bad" if bad else " good")
    return f'<div class="card{tone}"><b>{_fmt(value)}</b>{escape(label)}</div>'


def _figure(svg: str | None, caption: str) -> str:
    return "" if svg is None else f"<figure>{svg}<figcaption class='muted'>{escape(caption)}</figcaption></figure>"


def _risk_label(diagnosis: PrivacyDiagnosis) -> str:
    """What "at risk" means: the prosecutor risk 1/|E| of a record in a class of size |E| above the threshold."""
    return f"records at risk (prosecutor risk 1/|E| > {diagnosis.risk_threshold:g})"


def _finding_row(finding: SubsetFinding, with_l: bool, attribute: Hashable | None = None) -> list[object]:
    row: list[object] = [
        _names(finding.attributes),
        _fmt(finding.size),
        _fmt(finding.classes),
        _fmt(finding.k),
        _fmt(finding.sample_uniques),
        f"{_fmt(finding.suppression_needed)} ({escape(_share(finding.suppression_fraction))})",
        _fmt(finding.k_after_suppression),
        escape(_share(finding.share_at_risk)),
    ]
    if with_l:
        row += [_fmt(value) for value in finding.diversity(attribute).values()]
    return row


def _finding_table(
    diagnosis: PrivacyDiagnosis, findings: Iterable[SubsetFinding], attribute: Hashable | None = None
) -> str:
    """Findings as a table; the l columns are ``attribute``'s own (else the worst over the sensitive attributes)."""
    with_l = bool(diagnosis.sensitive_attributes)
    headers = ["attributes", "size", "classes", "k", "sample uniques", f"suppress for k={diagnosis.target_k}"]
    headers += ["k after suppression", _risk_label(diagnosis)]
    if with_l:
        several = len(diagnosis.sensitive_attributes) > 1
        of = f" of {attribute}" if attribute is not None else (" (worst attribute)" if several else "")
        headers += [f"distinct l{of}", f"frequency l{of}", f"entropy l{of}", f"recursive c*{of}"]
    return _table(headers, (_finding_row(f, with_l, attribute) for f in findings))


def _summary(diagnosis: PrivacyDiagnosis) -> str:
    full = diagnosis.all_quasi_identifiers
    mode = "every subset measured" if diagnosis.exhaustive else "level-wise up to the borders"
    if diagnosis.mode_reason is not None:
        mode += f" ({diagnosis.mode_reason})"
    facts = [
        ("rows", _fmt(diagnosis.rows)),
        ("candidate quasi-identifiers", _names(diagnosis.quasi_identifiers)),
        ("sensitive attributes", _names(diagnosis.sensitive_attributes) if diagnosis.sensitive_attributes else "none"),
        ("targets", escape(", ".join(b.target for b in (diagnosis.k_borders, *diagnosis.model_borders)))),
        ("mode", escape(mode)),
        (
            "subsets evaluated for the k border",
            f"{_fmt(diagnosis.subsets_evaluated)} of {_fmt(diagnosis.subsets_total)}",
        ),
    ]
    cards = [
        _card("k over all candidates", full.k, bad=full.k < diagnosis.target_k),
        _card("people singled out (sample uniques)", full.sample_uniques, bad=full.sample_uniques > 0),
        _card(_risk_label(diagnosis), _share(full.share_at_risk)),
        _card(f"rows to suppress for k={diagnosis.target_k}", _share(full.suppression_fraction)),
    ]
    if diagnosis.suppression_limit is not None:
        cards.append(_card(f"k after suppressing ≤ {diagnosis.suppression_limit:.1%}", full.k_after_suppression))
    if full.distinct_l is not None:
        label = "distinct l over all candidates" + (
            " (worst attribute)" if len(diagnosis.sensitive_attributes) > 1 else ""
        )
        cards.append(_card(label, full.distinct_l))
    return _table([], facts) + f'<div class="cards">{"".join(cards)}</div>'


def _border_section(diagnosis: PrivacyDiagnosis, borders: Borders, *, lattice: bool) -> str:
    parts = [f"<h2>Borders of {escape(borders.target)}</h2>"]
    if borders.sensitive_attribute is not None:
        parts.append(f"<p class='muted'>sensitive attribute: {escape(str(borders.sensitive_attribute))}</p>")
    parts.append(
        f"<p class='muted'>{_fmt(len(borders.positive))} maximal subsets satisfy it (Bd+), "
        f"{_fmt(len(borders.negative))} minimal subsets violate it (Bd−); found by evaluating "
        f"{_fmt(borders.subsets_evaluated)} of the {_fmt(borders.subsets_total)} subsets.</p>"
    )
    if lattice:
        svg = plots.lattice_svg(diagnosis.quasi_identifiers, borders)
        parts.append(
            _figure(
                svg,
                "Each dot is a subset; the border subsets are ringed and named (Bd+ solid rings, Bd− dashed); "
                "any subset below a Bd+ one is safe to publish.",
            )
        )
    target = escape(borders.target)
    if borders.model == "k-anonymity":
        positive = f"Bd+: the largest subsets that can be published as they are ({target})"
    else:  # l-diversity, t-closeness … say nothing about k: these subsets satisfy it, not safe on that alone
        positive = f"Bd+: the largest subsets whose classes all satisfy {target}"
    parts.append(f"<h3>{positive}</h3>")
    attribute = borders.sensitive_attribute
    parts.append(_finding_table(diagnosis, (diagnosis.for_subset(s) for s in borders.positive), attribute))
    parts.append(f"<h3>Bd−: the smallest subsets that already violate {target}</h3>")
    parts.append(_finding_table(diagnosis, (diagnosis.for_subset(s) for s in borders.negative), attribute))
    return "".join(parts)


def _quasi_identifier_section(diagnosis: PrivacyDiagnosis) -> str:
    minimal = diagnosis.singling_out.negative
    parts = ["<h2>Which columns are the quasi-identifiers here</h2>"]
    if minimal == ((),):
        return parts[0] + "<p>The table has a single row: it singles its person out with no attribute at all.</p>"
    if not minimal:
        return parts[0] + "<p>No combination of the candidates singles anybody out (every class has 2 or more).</p>"
    parts.append(
        f"<p>{_fmt(len(minimal))} minimal attribute sets single out at least one person "
        "(the negative border of 2-anonymity).</p>"
    )
    parts.append(_figure(plots.qi_ranking_svg(diagnosis.quasi_identifier_ranking), "Attributes ranked."))
    rows = [
        [_names(s.attributes), _fmt(s.size), _fmt(s.sample_uniques), escape(_share(s.share_at_risk))]
        for s in (diagnosis.for_subset(m) for m in minimal)
    ]
    parts.append(_table(["minimal singling-out set", "size", "people singled out", _risk_label(diagnosis)], rows))
    return "".join(parts)


def _special_uniques_section(diagnosis: PrivacyDiagnosis) -> str:
    """SUDA2: how many records have minimal sample uniques, through which attribute sets, and the bound."""
    found = diagnosis.special_uniques
    if found is None:
        return ""
    parts = ["<h2>Special uniques (SUDA2)</h2>"]
    if found.bound_hit is not None:
        parts.append(f"<p><b>Search cut short</b>: {escape(found.bound_hit)}; the scores below are lower bounds.</p>")
    parts.append(
        "<div class='cards'>"
        + _card("records unique on all candidates", found.records_unique, bad=found.records_unique > 0)
        + _card("special uniques (records with an MSU)", found.special_uniques, bad=found.special_uniques > 0)
        + _card(f"MSUs of ≤ {found.max_size} attributes", found.msus)
        + _card("largest SUDA score", found.max_score)
        + "</div>"
    )
    if found.msu_sets:
        rows = [["{" + _names(names) + "}", _fmt(len(names)), _fmt(count)] for names, count in found.msu_sets]
        parts.append(_table(["minimal sample unique (attribute set)", "size", "records"], rows))
        contributions = sorted(found.attribute_contributions.items(), key=lambda item: -item[1])
        shares = ", ".join(f"{escape(str(a))} {v:.1f}%" for a, v in contributions if v)
        parts.append(f"<p>Share of the SUDA score each attribute takes part in: {shares}.</p>")
    dis = [[escape(label), _fmt(count)] for label, count in found.dis_histogram.items()]
    parts.append(_table([f"DIS-SUDA score (sampling fraction {found.dis_fraction:g})", "records"], dis))
    return "".join(parts)


def _direct_identifier_section(diagnosis: PrivacyDiagnosis) -> str:
    """The columns flagged as direct identifiers: category, share of matching values, uniqueness; counts only."""
    found = diagnosis.direct_identifiers
    if not found:
        return "<h2>Direct identifiers</h2><p>No column looks like a direct identifier.</p>"
    rows = [
        [
            escape(str(f["column"])),
            escape(str(f["category"])),
            escape(_share(f["matching_share"])),
            escape(f"{f['uniqueness']:.2f}"),
            _fmt(f["distinct_values"]),
            _fmt(f["rows"]),
            _fmt(f["sampled_values"]),
            escape("+".join(f["evidence"])),
        ]
        for f in found
    ]
    headers = ["column", "category", "matching values", "uniqueness", "distinct", "rows", "sampled", "evidence"]
    return (
        "<h2>Direct identifiers</h2>"
        f"<p>{_fmt(len(found))} column(s) look like direct identifiers: drop or pseudonymize them before a release."
        "</p>" + _table(headers, rows)
    )


def render_diagnosis_html(diagnosis: PrivacyDiagnosis) -> str:
    """The whole report as one HTML document (a string)."""
    d = len(diagnosis.quasi_identifiers)
    sections = [
        "<h1>Privacy diagnosis</h1>",
        f"<p class='muted'>privacy-plugins {escape(__version__)} · attribute names and counts only; "
        "no value of the table appears in this report.</p>",
        _summary(diagnosis),
        _direct_identifier_section(diagnosis),
        _quasi_identifier_section(diagnosis),
        _special_uniques_section(diagnosis),
        population_section(diagnosis),  # issue 30: only with a population model
        _border_section(diagnosis, diagnosis.k_borders, lattice=True),
        *(_border_section(diagnosis, b, lattice=False) for b in diagnosis.model_borders),
        "<h2>k and l by subset size</h2>",
        _figure(plots.subset_measures_svg(diagnosis), "Dots: subsets (jittered); bars: median per size."),
        "<h2>Class sizes and suppression</h2>",
        _figure(
            plots.class_size_svg(diagnosis.class_size_histogram, target_k=diagnosis.target_k),
            "Over all candidate quasi-identifiers.",
        ),
        _figure(
            plots.suppression_svg(diagnosis.class_size_histogram, rows=diagnosis.rows, target_k=diagnosis.target_k),
            "Suppressing whole classes smaller than k, over all candidate quasi-identifiers.",
        ),
        "<h2>Search effort</h2>",
        _figure(
            plots.search_effort_svg((diagnosis.k_borders, *diagnosis.model_borders), d),
            "Monotonicity pruning: the level-wise search never evaluates a superset of a violating subset.",
        ),
    ]
    if diagnosis.exhaustive:
        sections.append(
            f"<h2>Every subset</h2><details><summary>{_fmt(len(diagnosis.subsets))} subsets</summary>"
            f"{_finding_table(diagnosis, diagnosis.subsets)}</details>"
        )
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Privacy diagnosis</title><style>{_CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )
