"""``privacy-plugins attack``: singling-out, linkability and inference risk of a release (issue 31)."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Hashable
from pathlib import Path

from privacy_plugins.cli._args import Subcommands, columns_arg
from privacy_plugins.core.attacks import ATTACKS, DEFAULT_ATTACKS, AttackReport, run_attacks
from privacy_plugins.core.hierarchies import Hierarchy, hierarchy_files, read_hierarchy
from privacy_plugins.core.io import read_table
from privacy_plugins.errors import ConfigurationError

__all__ = ["add_attack_parser"]

#: The core's keyword → the flag that sets it, so an error names what the user typed.
_FLAGS = {
    "n_attacks": "--n-attacks",
    "secret": "--secret",
    "quasi_identifiers": "--quasi-identifiers",
    "attacks": "--attacks",
    "confidence": "--confidence",
    "linkability_split": "--linkability-split",
}


def add_attack_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins attack``."""
    parser = commands.add_parser(
        "attack",
        help="singling-out, linkability and inference risk of a release against the original (Anonymeter)",
    )
    parser.add_argument(
        "release", type=Path, help="the release (CSV or Parquet): raw, generalized or suppressed values"
    )
    parser.add_argument("--original", type=Path, required=True, help="the records the release was made from")
    parser.add_argument(
        "--control",
        type=Path,
        help="records of the same population the release does not hold (held out); without it, a per-column "
        "permutation of the original (over-estimates the risk)",
    )
    parser.add_argument("--quasi-identifiers", required=True, type=columns_arg, help="what the attacker knows")
    parser.add_argument("--secret", help="the column the inference attack guesses (not a quasi-identifier)")
    parser.add_argument(
        "--attacks",
        type=columns_arg,
        default=list(DEFAULT_ATTACKS),
        help=f"comma-separated, among {', '.join(ATTACKS)} (default: {','.join(DEFAULT_ATTACKS)})",
    )
    parser.add_argument("--n-attacks", type=int, default=500, help="attacks per kind (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    parser.add_argument("--confidence", type=float, default=0.95, help="of the risk's interval (default 0.95)")
    parser.add_argument(
        "--linkability-split",
        help="the two attackers' columns, e.g. 'age,zip:sex,race' (default: the QIs' two halves)",
    )
    parser.add_argument(
        "--hierarchies",
        type=Path,
        help="folder of ARX CSV hierarchies (<column>.csv): a generalized label then stands for its leaves",
    )
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument("--sep", help="CSV delimiter (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of a CSV (default: utf-8)")
    parser.set_defaults(run=_run)


def _split(text: str | None) -> tuple[list[str], list[str]] | None:
    if text is None:
        return None
    first, colon, second = text.partition(":")
    if not colon:
        raise ConfigurationError(f"--linkability-split must be two column lists separated by ':', got {text!r}")
    return columns_arg(first), columns_arg(second)


def _hierarchies(folder: Path | None, columns: list[str]) -> dict[Hashable, Hierarchy]:
    if folder is None:
        return {}
    files = hierarchy_files(folder, columns=columns)
    return {column: read_hierarchy(files[column], attribute=column) for column in columns if column in files}


def _run(args: argparse.Namespace) -> int:
    read = {"sep": args.sep, "encoding": args.encoding}
    release = read_table(args.release, **read)
    original = read_table(args.original, **read)
    control = read_table(args.control, **read) if args.control is not None else None
    columns = [*args.quasi_identifiers, *([args.secret] if args.secret else [])]
    try:
        report = run_attacks(
            original,
            release,
            control,
            quasi_identifiers=args.quasi_identifiers,
            secret=args.secret,
            attacks=args.attacks,
            n_attacks=args.n_attacks,
            seed=args.seed,
            confidence=args.confidence,
            hierarchies=_hierarchies(args.hierarchies, columns),
            linkability_split=_split(args.linkability_split),
        )
    except ConfigurationError as exc:
        message = str(exc)
        key = re.match(r"(\w+)", message)
        if key and key.group(1) in _FLAGS:
            message = _FLAGS[key.group(1)] + message[len(key.group(1)) :]
        raise ConfigurationError(message) from None
    print(json.dumps(report.to_dict(), indent=2) if args.format == "json" else _table(report))
    return 0


def _table(report: AttackReport) -> str:
    lines = [
        f"{'attack':<24} {'risk':>6} {'interval':>15} {'attack':>7} {'baseline':>8} {'control':>7}",
    ]
    for key, result in report.results.items():
        lo, hi = result.ci
        control = "" if result.control_rate is None else f"{result.control_rate:.3f}"
        lines.append(
            f"{key:<24} {result.risk:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>15} "
            f"{result.attack_rate:>7.3f} {result.baseline_rate:>8.3f} {control:>7}"
            + (f"  ({result.note})" if result.note else "")
        )
    lines.append(
        f"{report.n_attacks} attacks each, seed {report.seed}, control: {report.control}; "
        "risk = (attack - control) / (1 - control), interval at the confidence asked"
    )
    return "\n".join(lines)
