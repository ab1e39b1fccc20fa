"""``privacy-plugins diagnose``: the privacy diagnosis centre from the shell."""

from __future__ import annotations

import argparse
import json
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from privacy_plugins.cli._args import (
    Subcommands,
    add_l_arguments,
    add_requirements_file_argument,
    add_role_arguments,
    check_columns,
    listed_models,
    sensitive_hierarchies,
)
from privacy_plugins.cli._format import aligned, number, share
from privacy_plugins.cli.measure import add_population_arguments, population_model, population_rows
from privacy_plugins.core.diagnosis import (
    DEFAULT_DIS_FRACTION,
    DEFAULT_K,
    DEFAULT_MAX_EVALUATIONS,
    DEFAULT_MAX_EXHAUSTIVE,
    DEFAULT_MSU_MAX_SIZE,
    Borders,
    PrivacyDiagnosis,
    diagnose,
)
from privacy_plugins.core.io import read_table
from privacy_plugins.core.metrics.risk import DEFAULT_RISK_THRESHOLD

__all__ = ["add_diagnose_parser", "format_diagnosis"]

# Readable output lists at most this many subsets per border.
_SHOWN = 8


def add_diagnose_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins diagnose``."""
    parser = commands.add_parser(
        "diagnose", help="k, l and borders over every subset of the candidate quasi-identifiers; HTML report"
    )
    parser.add_argument("data", type=Path, help="CSV (delimiter auto-detected) or Parquet file")
    add_role_arguments(
        parser, quasi_identifiers_help="candidate quasi-identifiers, comma-separated", identifiers_help=None
    )
    parser.add_argument("--k", type=int, help=f"target k (default {DEFAULT_K}, or the rows of a smaller table)")
    add_l_arguments(
        parser, l_help="target l: borders of l-diversity of each sensitive attribute (needs --sensitive-attributes)"
    )
    add_requirements_file_argument(parser)
    parser.add_argument(
        "--hierarchies",
        type=Path,
        help="folder of ARX CSV hierarchies of the sensitive attributes (<column>.csv), for models that "
        "measure along one (t_closeness with t_distance: hierarchical)",
    )
    parser.add_argument(
        "--suppression-limit",
        type=float,
        help="fraction of records that may be suppressed: k after suppression per subset",
    )
    parser.add_argument("--risk-threshold", type=float, default=DEFAULT_RISK_THRESHOLD)
    add_population_arguments(parser)  # issue 30: population risk of all candidates beside the sample risk
    parser.add_argument(
        "--max-exhaustive",
        type=int,
        default=DEFAULT_MAX_EXHAUSTIVE,
        help=f"measure every subset up to this many candidates (default {DEFAULT_MAX_EXHAUSTIVE})",
    )
    parser.add_argument("--max-evaluations", type=int, default=DEFAULT_MAX_EVALUATIONS)
    parser.add_argument(
        "--msu-max-size",
        type=int,
        default=DEFAULT_MSU_MAX_SIZE,
        help="special uniques (SUDA2): minimal sample uniques of up to this many attributes "
        "(default: every size, within the subset budget; 0: no search)",
    )
    parser.add_argument(
        "--dis-fraction",
        type=float,
        default=DEFAULT_DIS_FRACTION,
        help=f"sampling fraction of the DIS-SUDA score (default {DEFAULT_DIS_FRACTION:g})",
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the diagnosis as JSON to this file")
    parser.add_argument("--html", type=Path, dest="html_path", help="write the HTML report to this file")
    parser.add_argument("--sep", help="CSV delimiter (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of a CSV (default: utf-8)")
    parser.add_argument(
        "--include-values", action="store_true", help="let error messages quote table values (exposes people)"
    )
    parser.add_argument("--format", choices=["json", "table"], default="table", help="what to print on stdout")
    parser.set_defaults(run=_run_diagnose)


def _subsets(members: Sequence[tuple[Hashable, ...]]) -> str:
    shown = ["{" + ", ".join(map(str, m)) + "}" for m in members[:_SHOWN]]
    more = f" … and {len(members) - _SHOWN} more" if len(members) > _SHOWN else ""
    return "; ".join(shown) + more if shown else "none"


def _border_lines(borders: Borders) -> list[str]:
    return [
        f"{borders.target}: {borders.subsets_evaluated:,} of {borders.subsets_total:,} subsets evaluated",
        f"  Bd+ maximal satisfying  {_subsets(borders.positive)}",
        f"  Bd- minimal violating   {_subsets(borders.negative)}",
    ]


def format_diagnosis(diagnosis: PrivacyDiagnosis, *, source: str) -> str:
    """A readable summary for people: attribute names and counts only."""
    full = diagnosis.all_quasi_identifiers
    d = len(diagnosis.quasi_identifiers)
    mode = f"exhaustive (all {diagnosis.subsets_total:,} subsets)" if diagnosis.exhaustive else "level-wise"
    if diagnosis.mode_reason is not None:
        mode += f" ({diagnosis.mode_reason})"
    facts = [
        ("rows", f"{diagnosis.rows:,}"),
        (f"candidates (d={d})", ", ".join(map(str, diagnosis.quasi_identifiers))),
        ("mode", f"{mode}; {diagnosis.subsets_measured:,} subsets measured"),
        ("k, all candidates", f"{full.k:,} ({full.sample_uniques:,} people singled out, "
         f"{share(full.share_at_risk)} of records at risk)"),
        (f"suppress for k={diagnosis.target_k}",
         f"{full.suppression_needed:,} rows ({share(full.suppression_fraction)})"),
    ]  # fmt: skip
    if full.k_after_suppression is not None and diagnosis.suppression_limit is not None:
        facts.append((f"k after suppressing ≤ {diagnosis.suppression_limit:g}", f"{full.k_after_suppression:,}"))
    if full.distinct_l is not None and full.frequency_l is not None and full.entropy_l is not None:
        worst = " (worst)" if len(diagnosis.sensitive_attributes) > 1 else ""
        facts.append(
            (
                f"l of {', '.join(map(str, diagnosis.sensitive_attributes))}{worst}",
                f"distinct {full.distinct_l}, frequency {number(full.frequency_l)}, entropy {number(full.entropy_l)}",
            )
        )
    lines = [f"privacy diagnosis of {source}", *aligned(facts)]
    for borders in (diagnosis.k_borders, *diagnosis.model_borders):
        lines += _border_lines(borders)
    lines.append(f"minimal sets singling out a person: {_subsets(diagnosis.singling_out.negative)}")
    ranking = [
        f"{score.quasi_identifier} ({score.minimal_sets}{', alone' if score.smallest_set == 1 else ''})"
        for score in diagnosis.quasi_identifier_ranking
        if score.minimal_sets
    ]
    lines.append(f"quasi-identifiers, most identifying first: {', '.join(ranking) or 'none'}")
    lines += _special_unique_lines(diagnosis)
    lines += direct_identifier_lines(diagnosis.direct_identifiers)
    return "\n".join(lines)


def direct_identifier_lines(findings: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per column flagged as a direct identifier: category and counts, never a value."""
    if not findings:
        return ["direct identifiers flagged: none"]
    lines = [f"direct identifiers flagged: {len(findings)} column(s)"]
    for f in findings:
        lines.append(
            f"  {f['column']}: {f['category']} ({share(f['matching_share'])} of {f['sampled_values']:,} sampled "
            f"values match; uniqueness {f['uniqueness']:.2f}, {f['distinct_values']:,} distinct of {f['rows']:,} "
            f"rows; evidence: {'+'.join(f['evidence'])})"
        )
    return lines


def _special_unique_lines(diagnosis: PrivacyDiagnosis) -> list[str]:
    """SUDA2 in a few lines: counts, the commonest MSUs, the contributions and whether a bound cut the search."""
    found = diagnosis.special_uniques
    if found is None:
        return []
    lines = [
        f"special uniques (SUDA2, MSUs of ≤ {found.max_size} attributes): {found.special_uniques:,} records with "
        f"{found.msus:,} MSUs; largest SUDA score {number(found.max_score)}; "
        f"DIS-SUDA > 0.7: {found.dis_histogram['> 0.7']:,} records"
    ]
    if found.msu_sets:
        lines.append(f"  commonest MSUs  {_subsets([names for names, _ in found.msu_sets])}")
        ranked = sorted(found.attribute_contributions.items(), key=lambda item: -item[1])
        lines.append("  contributions   " + ", ".join(f"{name} {value:.1f}%" for name, value in ranked if value))
    lines.append(f"  search          {'complete' if found.bound_hit is None else 'cut short: ' + found.bound_hit}")
    return lines


def _run_diagnose(args: argparse.Namespace) -> int:
    frame = read_table(args.data, sep=args.sep, encoding=args.encoding)
    check_columns(
        frame.columns,
        [("quasi_identifiers", args.quasi_identifiers), ("sensitive_attributes", args.sensitive_attributes)],
    )
    diagnosis = diagnose(
        frame,
        quasi_identifiers=args.quasi_identifiers,
        sensitive_attributes=args.sensitive_attributes,
        models=listed_models(args),
        k=args.k,
        l=args.l,
        l_variant=args.l_variant,
        c=args.c,
        suppression_limit=args.suppression_limit,
        risk_threshold=args.risk_threshold,
        max_exhaustive=args.max_exhaustive,
        max_evaluations=args.max_evaluations,
        hierarchies=sensitive_hierarchies(args),
        msu_max_size=args.msu_max_size,
        dis_fraction=args.dis_fraction,
        direct_identifiers=True,
        population=population_model(args),
    )
    out = diagnosis.to_dict()
    if diagnosis.population is not None:
        out["population_risk"] = diagnosis.population.candidates.to_dict()
    data = json.dumps(out, indent=2)
    html = None
    if args.html_path is not None:
        from privacy_plugins.report import render  # matplotlib: loaded only when HTML is asked for

        html = render(diagnosis)
    if args.json_path is not None:
        args.json_path.write_text(data + "\n", encoding="utf-8")
    if html is not None:
        args.html_path.write_text(html, encoding="utf-8")
    text = format_diagnosis(diagnosis, source=str(args.data))
    if "population_risk" in out:
        text += "\n" + "\n".join(["population risk, all candidates", *aligned(population_rows(out["population_risk"]))])
    print(data if args.format == "json" else text)
    return 0
