"""``privacy-plugins anonymize``: full-domain generalization from the shell.

Nothing is written unless the anonymized table passed the re-check; the output
file appears atomically (written to a temporary file, then renamed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.cli._args import Subcommands, columns_arg
from privacy_plugins.core.anonymize import LOSS_METRICS, AnonymizationResult, anonymize, anonymizer_names
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.tables import read_table
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release.destinations import atomic_file
from privacy_plugins.release.spec import Requirements

__all__ = ["add_anonymize_parser", "models_from_args", "write_table"]

EXIT_INFEASIBLE = 1
_PARQUET = {".parquet", ".pq"}


def add_anonymize_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins anonymize``."""
    parser = commands.add_parser("anonymize", help="generalize a table over hierarchies until the models hold")
    parser.add_argument("data", type=Path, help="CSV (delimiter auto-detected) or Parquet file")
    parser.add_argument("--qi", required=True, type=columns_arg, help="quasi-identifiers, comma-separated")
    parser.add_argument("--sensitive", type=columns_arg, default=[], help="sensitive attributes, comma-separated")
    parser.add_argument("--identifiers", type=columns_arg, default=[], help="direct identifiers (dropped)")
    parser.add_argument("--hierarchies", required=True, type=Path, help="folder of ARX CSV hierarchies")
    parser.add_argument("--hierarchy-sep", default=";", help="delimiter of the hierarchy files (default ';')")
    parser.add_argument("--algorithm", choices=anonymizer_names(), default="optimal")
    parser.add_argument("--k", type=int, help="k-anonymity")
    parser.add_argument("--l", type=float, help="l-diversity of every sensitive attribute")
    parser.add_argument("--l-variant", choices=["distinct", "frequency", "entropy", "recursive"], default="distinct")
    parser.add_argument("--c", type=float, help="c of recursive (c,l)-diversity")
    parser.add_argument("--t", type=float, help="t-closeness of every sensitive attribute")
    parser.add_argument("--t-distance", choices=["auto", "equal", "ordered"], default="auto")
    bound = parser.add_mutually_exclusive_group()
    bound.add_argument("--bound", type=float, help="one personalized leakage bound in (0,1] for every record")
    bound.add_argument("--bound-column", help="column holding each record's leakage bound")
    parser.add_argument("--suppression", type=float, default=0.0, help="fraction of records that may be suppressed")
    parser.add_argument("--metric", choices=LOSS_METRICS, default="ncp", help="loss to minimise (default ncp)")
    parser.add_argument("--mark-suppressed", action="store_true", help="keep suppressed rows with '*' instead")
    parser.add_argument("--out", required=True, type=Path, help="output table (.csv or .parquet)")
    parser.add_argument("--report", type=Path, help="write the JSON report here as well")
    parser.add_argument("--sep", help="CSV delimiter of DATA (default: detected)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(run=_run_anonymize)


def models_from_args(args: argparse.Namespace, frame: pd.DataFrame) -> list[PrivacyModel]:
    """The privacy models the flags ask for (each l/t/bound applies to every sensitive attribute).

    The flags map one to one onto a release spec's ``requirements``, so both build
    their models through :class:`~privacy_plugins.release.spec.Requirements`.
    """
    if (args.l is not None or args.t is not None or args.bound is not None or args.bound_column) and not args.sensitive:
        raise ConfigurationError("--l, --t, --bound and --bound-column need --sensitive")
    if args.l is not None and args.l_variant == "recursive" and args.c is None:
        raise ConfigurationError("--l-variant recursive needs --c")
    if all(getattr(args, flag) is None for flag in ("k", "l", "t", "bound", "bound_column")):
        raise ConfigurationError("give at least one requirement: --k, --l, --t, --bound or --bound-column")
    requirements = Requirements(
        k=args.k,
        l=args.l,
        l_variant=args.l_variant,
        c=args.c,
        t=args.t,
        t_distance=args.t_distance,
        bound=args.bound,
        bound_column=args.bound_column,
    )
    return requirements.models(tuple(args.sensitive), frame)


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Write CSV or Parquet (by suffix) atomically: a temporary file in the same folder, then a rename."""
    with atomic_file(path) as temporary:
        if path.suffix.lower() in _PARQUET:
            frame.to_parquet(temporary, index=False)
        else:
            frame.to_csv(temporary, index=False)


class _Progress:
    """A one-line progress bar on stderr for people (silent when not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = -1

    def __call__(self, checked: int, total: int) -> None:
        percent = 100 * checked // max(total, 1)
        if self.enabled and total >= 200 and percent != self.last:
            self.last = percent
            filled = percent // 4
            print(f"\rchecking nodes [{'#' * filled}{'.' * (25 - filled)}] {checked}/{total}", end="", file=sys.stderr)

    def close(self) -> None:
        if self.enabled and self.last >= 0:
            print(file=sys.stderr)


def _summary(report: dict[str, Any], out: Path) -> str:
    details = report["details"]
    levels = ", ".join(f"{name}={level}" for name, level in details.get("levels", {}).items())
    lines = [
        f"anonymized with {report['algorithm']} search: {levels}",
        f"  rows in / published / suppressed   {report['rows_in']:,} / {report['rows_out']:,} / "
        f"{report['suppressed']:,}",
        f"  NCP {report['ncp']:.4f}   discernibility {report['discernibility']:,.0f}   "
        f"precision {report['precision']:.3f}",
    ]
    if "nodes_checked" in details:
        lines.append(
            f"  nodes checked {details['nodes_checked']:,} of {details['lattice_size']:,} in {report['seconds']:.2f} s"
        )
    lines += [f"  re-checked: {model['model']}: observed {model['observed']}" for model in report["models"]]
    lines.append(f"written to {out}")
    return "\n".join(lines)


def _run_anonymize(args: argparse.Namespace) -> int:
    frame = read_table(args.data, sep=args.sep)
    models = models_from_args(args, frame)
    hierarchies = load_hierarchies(args.hierarchies, columns=args.qi, sep=args.hierarchy_sep)
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    try:
        result: AnonymizationResult = anonymize(
            frame,
            algorithm=args.algorithm,
            quasi_identifiers=args.qi,
            hierarchies=hierarchies,
            models=models,
            identifiers=args.identifiers,
            sensitive_attributes=args.sensitive,
            suppression_limit=args.suppression,
            metric=args.metric,
            suppressed_rows="mark" if args.mark_suppressed else "remove",
            progress=progress,
        )
    except InfeasibleAnonymizationError as exc:
        progress.close()
        print(f"privacy-plugins: infeasible: {exc}", file=sys.stderr)
        return EXIT_INFEASIBLE
    progress.close()
    write_table(result.table, args.out)
    report = result.to_dict() | {"out": str(args.out)}
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.format == "json" else _summary(report, args.out))
    return 0
