"""``privacy-plugins measure`` and ``privacy-plugins demo``."""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from privacy_plugins.cli._args import (
    Subcommands,
    add_bound_arguments,
    add_requirements_file_argument,
    add_role_arguments,
    add_t_arguments,
    check_columns,
    listed_models,
    sensitive_hierarchies,
)
from privacy_plugins.cli._format import aligned, number, share
from privacy_plugins.core.demo import CENSUS_IDENTIFIERS, CENSUS_QUASI_IDENTIFIERS, generate_census
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.io import read_table
from privacy_plugins.core.measure import MeasureReport, measure
from privacy_plugins.core.metrics.population import PopulationModel
from privacy_plugins.errors import PrivacyRiskWarning

__all__ = [
    "INCLUDE_VALUES_WARNING",
    "add_demo_parser",
    "add_measure_parser",
    "add_population_arguments",
    "format_table",
    "population_model",
    "population_rows",
]

#: The one line printed on stderr when ``--include-values`` is given.
INCLUDE_VALUES_WARNING = (
    "privacy-plugins: warning: --include-values prints the quasi-identifier values of violating classes"
)


def add_measure_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins measure``."""
    parser = commands.add_parser("measure", help="measure k, l, t, leakage and risk of a table")
    parser.add_argument("data", type=Path, help="CSV (delimiter auto-detected) or Parquet file")
    add_role_arguments(
        parser,
        quasi_identifiers_help="quasi-identifiers, comma-separated",
        identifiers_help="direct identifiers (checked, never used)",
    )
    parser.add_argument("--k", type=int, help="target k: report suppression needed and classes below k")
    parser.add_argument("--l", type=float, help="target l: classes below l per variant, and recursive c*")
    parser.add_argument("--c", type=float, help="with --l: classes violating recursive (c,l)-diversity")
    add_t_arguments(parser, t_help="target t: classes farther than t")
    parser.add_argument(
        "--suppression-limit", type=float, help="fraction of records that may be suppressed: report k after suppression"
    )
    add_bound_arguments(parser)
    add_requirements_file_argument(parser)
    parser.add_argument(
        "--hierarchies",
        type=Path,
        help="folder of ARX CSV hierarchies of the sensitive attributes (<column>.csv): a generalized "
        "sensitive value then counts as each leaf below it in the leakage (DCorrelate)",
    )
    parser.add_argument("--risk-threshold", type=float, default=0.2, help="record risk counted as 'at risk'")
    add_population_arguments(parser)
    parser.add_argument(
        "--include-values",
        action="store_true",
        help="also print QI values of a few violating classes (exposes the records at risk)",
    )
    parser.add_argument("--sep", help="CSV delimiter (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of a CSV (default: utf-8)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.set_defaults(run=_run_measure)


def add_population_arguments(parser: argparse.ArgumentParser) -> None:
    """``--population-fraction`` / ``--population-size`` / ``--population-table`` (one of them): population risk."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--population-fraction", type=float, help="the table is this fraction of the population, in (0, 1]: "
        "adds journalist/marketer risk and population uniqueness (docs/population-risk.md)",
    )  # fmt: skip
    group.add_argument("--population-size", type=int, help="the population's size (at least the table's rows)")
    group.add_argument(
        "--population-table", type=Path, help="CSV/Parquet of population counts: the QI columns and a 'count' column",
    )  # fmt: skip
    group.add_argument(
        "--population-weights", metavar="COLUMN", help="a column of sampling weights (people each record stands for)"
    )


def population_model(args: argparse.Namespace) -> PopulationModel | None:
    """The population model the flags give, if any (the table is read here)."""
    if args.population_fraction is not None:
        return PopulationModel(sampling_fraction=args.population_fraction)
    if args.population_size is not None:
        return PopulationModel(population_size=args.population_size)
    if args.population_table is not None:
        return PopulationModel(population_table=read_table(args.population_table))
    if args.population_weights is not None:
        return PopulationModel(weight_column=args.population_weights)
    return None


def population_rows(data: Mapping[str, Any]) -> list[tuple[str, str] | str]:
    """The population-risk block of the table output (counts and shares, never values)."""

    def estimate(name: str) -> str:
        value = data[name]
        return share(value) if value is not None else f"not available ({data['unavailable'].get(name, '')})"

    return [
        ("population size", f"{_fmt(data['population_size'])} (sampling fraction {data['sampling_fraction']:.4g})"),
        ("sample uniques", share(data["sample_uniques"])),
        ("prosecutor highest / average", f"{_fmt(data['prosecutor'])} / {_fmt(data['average'])}"),
        ("journalist highest / average", f"{_fmt(data['journalist'])} / {_fmt(data['journalist_average'])}"),
        ("marketer", _fmt(data["marketer"])),
        ("individual risk highest / average",
         f"{_fmt(data['individual_risk'])} / {_fmt(data['individual_risk_average'])} (Benedetti–Franconi)"),
        ("records at risk (prosecutor / journalist)",
         f"{share(data['prosecutor_at_risk'])} / {share(data['journalist_at_risk'])} above {data['threshold']:g}"),
        *((f"population uniques ({name})", estimate(name)) for name in ("pitman", "zayatz", "snb")),
        ("population uniques (Dankar)", f"{estimate('dankar')} via {data['dankar_model']}"),
    ]  # fmt: skip


def add_demo_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins demo`` (generate the census table, then measure it)."""
    parser = commands.add_parser("demo", help="generate the synthetic census table and measure it")
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("demo_output"), help="folder for census.csv")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.set_defaults(run=_run_demo)


def _fmt(value: Any) -> str:
    if value is None:
        return "∞ (no c works)"
    if isinstance(value, float | int):
        return number(value)
    return str(value)


def _example_lines(violations: Mapping[str, Any] | None) -> list[str]:
    """The QI values of the violating classes kept with ``--include-values`` (none otherwise)."""
    examples: Sequence[Mapping[str, Any]] = (violations or {}).get("examples") or ()
    lines = ["    e.g. " + ", ".join(f"{name}={value}" for name, value in example.items()) for example in examples]
    if examples and violations is not None and violations["classes"] > len(examples):
        lines.append(f"    … and {_fmt(violations['classes'] - len(examples))} more classes")
    return lines


def _violating(violations: Mapping[str, Any], attribute: str) -> list[tuple[str, str] | str]:
    target = violations["target"].removesuffix(f" on {attribute}")  # the block's heading names the attribute
    counts = f"{_fmt(violations['classes'])} classes, {_fmt(violations['records'])} records"
    return [(f"violating {target}", counts), *_example_lines(violations)]


def format_table(report: MeasureReport, *, source: str) -> str:
    """A readable summary for people (no raw values unless they were opted in)."""
    data = report.to_dict()
    risk = data["risk"]
    rows: list[tuple[str, str] | str] = [
        ("rows", _fmt(data["rows"])),
        ("quasi-identifiers", ", ".join(data["quasi_identifiers"])),
        ("equivalence classes", _fmt(data["classes"])),
        ("k", _fmt(data["k"])),
        ("sample uniques", _fmt(data["sample_uniques"])),
        ("max / mean risk", f"{_fmt(risk['max_risk'])} / {_fmt(risk['mean_risk'])}"),
        ("records at risk",
         f"{_fmt(risk['records_at_risk'])} ({share(risk['share_at_risk'])} above {risk['threshold']:g})"),
    ]  # fmt: skip
    if "suppression_needed" in data:
        rows.append(
            (
                f"suppression for k={data['target_k']}",
                f"{_fmt(data['suppression_needed'])} rows ({share(data['suppression_needed_fraction'])}) "
                f"in {_fmt(data['k_violations']['classes'])} classes",
            )
        )
        rows += _example_lines(data["k_violations"])
    if "k_after_suppression" in data:
        after = data["k_after_suppression"]
        rows.append(
            (
                f"k after suppressing ≤ {after['suppression_limit']:g}",
                f"{_fmt(after['k'])} (suppressing {_fmt(after['suppressed_rows'])} "
                f"of {_fmt(after['budget_rows'])} allowed rows)",
            )
        )
    lines = [f"privacy measures for {source}", *aligned(rows)]
    for name, sensitive in data.get("sensitive_attributes", {}).items():
        rows = [
            ("distinct l", _fmt(sensitive["distinct_l"])),
            ("frequency l", _fmt(sensitive["frequency_l"])),
            ("entropy l", _fmt(sensitive["entropy_l"])),
            ("t-closeness", f"{_fmt(sensitive['t_closeness'])} ({sensitive['t_distance']} distance)"),
        ]
        if sensitive["recursive_l"] is not None:
            rows.append((f"recursive c* (l={_fmt(sensitive['recursive_l'])})", _fmt(sensitive["recursive_c"])))
        for violations in (sensitive["l_violations"] or {}).values():
            rows += _violating(violations, name)
        if sensitive["t_violations"] is not None:
            rows += _violating(sensitive["t_violations"], name)
        if sensitive["leakage"] is not None:
            leak = sensitive["leakage"]
            rows.append(
                (
                    "max leakage",
                    f"{_fmt(leak['max_leakage'])}; {_fmt(leak['violations'])} records over their bound, "
                    f"{_fmt(leak['infeasible'])} infeasible (bound < 1/class size)",
                )
            )
            rows += _example_lines(leak["classes"])
        lines += [f"sensitive attribute {name!r}", *aligned(rows)]
    if report.results:
        verdicts: list[tuple[str, str] | str] = []
        for check, result in report.results.items():
            counts = f"{_fmt(result.violations.classes)} classes, {_fmt(result.violations.records)} records"
            verdict = "holds" if result.passed else f"fails ({counts} in violation)"
            verdicts.append((check, f"{verdict}; {result.model}, observed {_fmt(result.observed)}"))
        lines += ["requirements", *aligned(verdicts)]
    if "population_risk" in data:
        lines += ["population risk", *aligned(population_rows(data["population_risk"]))]
    return "\n".join(lines)


def _emit(report: MeasureReport, *, output_format: str, source: str) -> None:
    if output_format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_table(report, source=source))


#: Published labels that generalize a value: masked (``"*"``, ``"123**"``), an interval
#: (``"[20-30)"``, ``"(1, 5]"``) or a set (``"{flu, cold}"``). Named groups (``"respiratory
#: infection"``) cannot be told from leaves without the hierarchy.
_GENERALIZED = re.compile(r"\*|^\s*[\[(].*[-,].*[\])]\s*$|^\s*\{.*\}\s*$")


def generalized_value_hint(frame: Any, columns: Sequence[str], hierarchies: Mapping[Hashable, Hierarchy]) -> list[str]:
    """One note per sensitive column without a hierarchy whose values look generalized (counts, never values).

    Without the hierarchy each generalized value counts as a value of its own, so a correct
    personalized release shows thousands of leakage violations.
    """
    notes = []
    for column in columns:
        if column in hierarchies:
            continue
        values = frame[column].dropna().astype(str)
        distinct = values.drop_duplicates()
        looks = distinct[distinct.str.contains(_GENERALIZED)]
        if looks.empty:
            continue
        records = int(values.isin(set(looks)).sum())
        notes.append(
            f"privacy-plugins: note: sensitive column {column!r} has {looks.shape[0]:,} distinct values "
            f"({records:,} records) that look generalized (masked, ranges or sets); without its hierarchy "
            f"each counts as a value of its own and its leakage is measured wrong: pass --hierarchies "
            f"with a folder holding {column}.csv"
        )
    return notes


def _run_measure(args: argparse.Namespace) -> int:
    frame = read_table(args.data, sep=args.sep, encoding=args.encoding)
    check_columns(
        frame.columns,
        [
            ("quasi_identifiers", args.quasi_identifiers),
            ("sensitive_attributes", args.sensitive_attributes),
            ("identifiers", args.identifiers),
            ("bound_column", [args.bound_column] if args.bound_column else []),
        ],
    )
    hierarchies = sensitive_hierarchies(args)
    models = listed_models(args)
    with warnings.catch_warnings():
        # The core warns through ``warnings`` (a file:line, for programmers); the
        # command says it once, in its own words, below.
        warnings.simplefilter("ignore", PrivacyRiskWarning)
        report = measure(
            frame,
            quasi_identifiers=args.quasi_identifiers,
            sensitive_attributes=args.sensitive_attributes,
            identifiers=args.identifiers,
            k=args.k,
            l=args.l,
            c=args.c,
            t=args.t,
            t_distance=args.t_distance,
            suppression_limit=args.suppression_limit,
            bound=args.bound,
            bound_column=args.bound_column,
            risk_threshold=args.risk_threshold,
            include_values=args.include_values,
            hierarchies=hierarchies,
            models=models,
            population=population_model(args),
        )
    if args.include_values:
        print(INCLUDE_VALUES_WARNING, file=sys.stderr)
    if args.bound is not None or args.bound_column is not None:  # the personalized leakage is measured
        for note in generalized_value_hint(frame, args.sensitive_attributes or [], hierarchies):
            print(note, file=sys.stderr)
    _emit(report, output_format=args.format, source=str(args.data))
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    frame = generate_census(args.rows, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "census.csv"
    frame.to_csv(path, index=False)
    report = measure(
        frame,
        quasi_identifiers=list(CENSUS_QUASI_IDENTIFIERS),
        sensitive_attributes=["disease"],
        identifiers=list(CENSUS_IDENTIFIERS),
        k=args.k,
        l=2,
        suppression_limit=0.05,
        bound=0.5,
    )
    _emit(report, output_format=args.format, source=str(path))
    if args.format == "table":
        print(f"\ndemo table written to {path} ({len(frame):,} rows)")
    return 0
