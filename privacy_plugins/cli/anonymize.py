"""``privacy-plugins anonymize``: full-domain generalization from the shell.

Nothing is written unless the anonymized table passed the re-check; the output
file appears atomically (written to a temporary file, then renamed).

File modes, one rule for every command: what is written to be shared — the
published table (``--out``, a release's Parquet destination) and the reports
(``--report``, diagnosis JSON/HTML) — gets the mode of any new file, ``0o666``
minus the umask (0644 with the usual umask 022). Nothing is made more private
than the umask says: keep the raw input and a release's ``workdir`` in a private
folder (``chmod 700``) or run with ``umask 077``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.cli._args import Subcommands, check_columns, columns_arg
from privacy_plugins.cli._format import aligned, number
from privacy_plugins.core.anonymize import LOSS_METRICS, AnonymizationResult, anonymize, anonymizer_names
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.tables import read_table
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release.destinations import atomic_file
from privacy_plugins.release.spec import Requirements

__all__ = ["OUTPUT_EXTENSIONS", "add_anonymize_parser", "check_output_path", "models_from_args", "write_table"]

EXIT_INFEASIBLE = 1
_PARQUET = {".parquet", ".pq"}
#: Output formats by file extension (case-insensitive); anything else is an error before any work.
OUTPUT_EXTENSIONS = (".csv", *sorted(_PARQUET))


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
    parser.add_argument("--out", required=True, type=Path, help="output table (.csv, .parquet or .pq)")
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


def _roles(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    return [
        ("quasi_identifiers", args.qi),
        ("sensitive_attributes", args.sensitive),
        ("identifiers", args.identifiers),
        ("bound_column", [args.bound_column] if args.bound_column else []),
    ]


def check_output_path(path: Path) -> None:
    """Reject an output file whose extension names no format we write (``.xlsx``, ``.json``, none)."""
    if path.suffix.lower() not in OUTPUT_EXTENSIONS:
        suffix = repr(path.suffix) if path.suffix else "no extension"
        raise ConfigurationError(
            f"--out {str(path)!r}: unsupported output extension ({suffix}); use one of {', '.join(OUTPUT_EXTENSIONS)}"
        )


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Write CSV or Parquet (by suffix) atomically: a temporary file in the same folder, then a rename."""
    check_output_path(path)
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
    rows = [
        ("rows in / published / suppressed",
         f"{number(report['rows_in'])} / {number(report['rows_out'])} / {number(report['suppressed'])}"),
        ("NCP / discernibility / precision",
         f"{report['ncp']:.4f} / {number(report['discernibility'])} / {report['precision']:.3f}"),
    ]  # fmt: skip
    if "nodes_checked" in details:
        rows.append(
            ("nodes checked",
             f"{number(details['nodes_checked'])} of {number(details['lattice_size'])} in {report['seconds']:.2f} s")
        )  # fmt: skip
    rows += [
        ("re-checked" if i == 0 else "", f"{model['model']}: observed {number(model['observed'])}")
        for i, model in enumerate(report["models"])
    ]
    heading = f"anonymized with {report['algorithm']}" + (f" search: {levels}" if levels else "")
    return "\n".join([heading, *aligned(rows), f"written to {out}"])


def _run_anonymize(args: argparse.Namespace) -> int:
    check_output_path(args.out)
    frame = read_table(args.data, sep=args.sep)
    check_columns(frame.columns, _roles(args))  # before hierarchies: a typo is a typo, not a missing file
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
