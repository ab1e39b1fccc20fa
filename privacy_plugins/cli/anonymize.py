"""``privacy-plugins anonymize``: any registered anonymizer from the shell.

``--algorithm`` lists the registry's names, and every algorithm option is a flag
generated from the registry's option schemas (:class:`AnonymizerOption`); a flag
the chosen algorithm has no option for is an error (exit 2).

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
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.cli._args import (
    Subcommands,
    add_bound_arguments,
    add_l_arguments,
    add_requirements_file_argument,
    add_role_arguments,
    add_t_arguments,
    check_columns,
    columns_arg,
    models_from_args,
)
from privacy_plugins.cli._format import aligned, number
from privacy_plugins.core.anonymize import (
    DEFAULT_ALGORITHM,
    AnonymizationDetails,
    AnonymizationResult,
    AnonymizerOption,
    anonymize,
    anonymizer_names,
    get_anonymizer,
)
from privacy_plugins.core.hierarchies import Hierarchy, hierarchy_files, load_hierarchies
from privacy_plugins.core.io import read_table
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError
from privacy_plugins.release.destinations import atomic_file
from privacy_plugins.release.progress import ProgressLines

__all__ = [
    "OUTPUT_EXTENSIONS",
    "add_anonymize_parser",
    "algorithm_options",
    "check_output_path",
    "models_from_args",
    "write_table",
]

EXIT_INFEASIBLE = 1
_PARQUET = {".parquet", ".pq"}
#: Output formats by file extension (case-insensitive); anything else is an error before any work.
OUTPUT_EXTENSIONS = (".csv", *sorted(_PARQUET))


def _option_flags() -> dict[str, list[tuple[str, AnonymizerOption]]]:
    """Every registered algorithm option by its CLI flag: ``{"--metric": [("optimal", option), ...]}``."""
    flags: dict[str, list[tuple[str, AnonymizerOption]]] = {}
    for name in anonymizer_names():
        for option in get_anonymizer(name).options:
            flags.setdefault(option.cli_flag, []).append((name, option))
    return flags


def _add_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per algorithm option, generated from the registry's option schemas."""
    group = parser.add_argument_group("algorithm options (each applies to the algorithms named in its help)")
    for flag, owners in _option_flags().items():
        option = owners[0][1]
        choices = sorted({choice for _, o in owners for choice in o.choices}, key=str) or None
        algorithms = ", ".join(name for name, _ in owners)
        if len({o.default for _, o in owners}) > 1:
            default = "; ".join(f"{name}: {o.default}" for name, o in owners)
        else:
            default = str(option.default)
        group.add_argument(
            flag,
            dest=f"option_{flag[2:].replace('-', '_')}",
            type=option.type,
            choices=choices,
            default=None,
            help=f"{option.help} ({algorithms}; default {default})",
        )


def add_anonymize_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins anonymize``."""
    parser = commands.add_parser(
        "anonymize", help="anonymize a table with a registered algorithm until the models hold"
    )
    parser.add_argument("data", type=Path, help="CSV (delimiter auto-detected) or Parquet file")
    add_role_arguments(
        parser,
        quasi_identifiers_help="quasi-identifiers, comma-separated",
        identifiers_help="direct identifiers (dropped)",
    )
    parser.add_argument(
        "--insensitive", type=columns_arg, default=[], help="columns published unchanged, comma-separated"
    )
    parser.add_argument(
        "--unlisted-columns",
        choices=["refuse", "drop"],
        default="refuse",
        help="a column with no role: refuse (default, exit 2 naming it) or drop it from the output",
    )
    parser.add_argument(
        "--hierarchies",
        type=Path,
        help="folder of ARX CSV hierarchies (full-domain algorithms need one per quasi-identifier; "
        "mondrian publishes numeric quasi-identifiers without one as ranges)",
    )
    parser.add_argument("--hierarchy-sep", default=";", help="delimiter of the hierarchy files (default ';')")
    parser.add_argument("--algorithm", choices=anonymizer_names(), default=DEFAULT_ALGORITHM)
    parser.add_argument("--k", type=int, help="k-anonymity")
    add_l_arguments(parser, l_help="l-diversity of every sensitive attribute")
    add_t_arguments(parser, t_help="t-closeness of every sensitive attribute")
    add_bound_arguments(parser)
    add_requirements_file_argument(parser)
    parser.add_argument(
        "--suppression-limit", type=float, default=0.0, help="fraction of records that may be suppressed (default 0)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of randomized algorithms (default 0)")
    _add_option_flags(parser)
    parser.add_argument("--out", required=True, type=Path, help="output table (.csv, .parquet or .pq)")
    parser.add_argument("--report", type=Path, help="write the JSON report here as well")
    parser.add_argument("--sep", help="CSV delimiter of DATA (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of a CSV (default: utf-8)")
    parser.add_argument(
        "--include-values", action="store_true", help="let error messages quote table values (exposes people)"
    )
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(run=_run_anonymize)


def algorithm_options(args: argparse.Namespace) -> dict[str, Any]:
    """The algorithm options given on the command line, by option name.

    Raises:
        ConfigurationError: a flag given that the chosen algorithm has no option for.
    """
    own = {option.cli_flag: option for option in get_anonymizer(args.algorithm).options}
    given: dict[str, Any] = {}
    for flag in _option_flags():
        value = getattr(args, f"option_{flag[2:].replace('-', '_')}")
        if value is None:
            continue
        if flag not in own:
            accepted = ", ".join(sorted(own)) or "none"
            raise ConfigurationError(
                f"{flag} is not an option of algorithm {args.algorithm!r}; its options: {accepted}"
            )
        given[own[flag].name] = value
    return given


def _roles(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    return [
        ("quasi_identifiers", args.quasi_identifiers),
        ("sensitive_attributes", args.sensitive_attributes),
        ("identifiers", args.identifiers),
        ("insensitive", args.insensitive),
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
    """Progress on stderr: a one-line bar on a terminal, else a line now and then (``--quiet``: nothing).

    The bar and the lines name the phase the algorithm announces (``"two-phase: merging clusters"``);
    redirected, a line with that name and the percentage comes at most every
    ``$PRIVACY_PLUGINS_PROGRESS_INTERVAL`` seconds (10 by default).
    """

    def __init__(self, *, enabled: bool, terminal: bool) -> None:
        self.bar = enabled and terminal
        self.what = "working"
        self.last = -1
        self.lines = ProgressLines(self._line, self.what) if enabled and not terminal else None

    @staticmethod
    def _line(text: str) -> None:
        print(f"privacy-plugins: {text}", file=sys.stderr, flush=True)

    def phase(self, name: str) -> None:
        """The algorithm's phase starts: name it from now on."""
        self.close()
        self.what = name
        self.last = -1
        if self.lines is not None:
            self.lines.phase(name)

    def __call__(self, done: int, total: int) -> None:
        if self.lines is not None:
            self.lines(done, total)
        percent = 100 * done // max(total, 1)
        if self.bar and total >= 200 and percent != self.last:
            self.last = percent
            filled = percent // 4
            print(f"\r{self.what} [{'#' * filled}{'.' * (25 - filled)}] {percent}%", end="", file=sys.stderr)

    def close(self) -> None:
        if self.bar and self.last >= 0:
            print(file=sys.stderr)


def _summary(report: dict[str, Any], out: Path, details: AnonymizationDetails) -> str:
    precision = report.get("precision")
    rows = [
        ("rows in / published / suppressed",
         f"{number(report['rows_in'])} / {number(report['rows_out'])} / {number(report['suppressed'])}"),
        ("NCP / discernibility" + (" / precision" if precision is not None else ""),
         f"{report['ncp']:.4f} / {number(report['discernibility'])}"
         + (f" / {precision:.3f}" if precision is not None else "")),
    ]  # fmt: skip
    rows += details.summary_rows(report["seconds"])  # the algorithm's own facts, in its own terms
    rows += [
        ("re-checked" if i == 0 else "", f"{model['model']}: observed {number(model['observed'])}")
        for i, model in enumerate(report["models"])
    ]
    headline = details.headline()
    heading = f"anonymized with {report['algorithm']}" + (f": {headline}" if headline else "")
    return "\n".join([heading, *aligned(rows), f"written to {out}"])


def _hierarchies(args: argparse.Namespace) -> dict[Hashable, Hierarchy]:
    """The hierarchies of the QIs and sensitive attributes that have a file in ``--hierarchies`` (none without it).

    Whether a quasi-identifier without one is an error is the algorithm's call:
    full-domain recoding needs one per quasi-identifier, Mondrian publishes a
    numeric one as ranges. A sensitive attribute's hierarchy lets ``personalized``
    generalize its values (and the re-check measure them with DCorrelate).
    """
    if args.hierarchies is None:
        return {}
    wanted = list(dict.fromkeys([*args.quasi_identifiers, *(args.sensitive_attributes or [])]))
    files = hierarchy_files(args.hierarchies, columns=wanted)
    present = [column for column in wanted if column in files]
    return load_hierarchies(args.hierarchies, columns=present, sep=args.hierarchy_sep)


def linked_path(out: Path) -> Path:
    """Where the CLI writes a linked sensitive table (Anatomy's ST): ``people.parquet`` → ``people.st.parquet``."""
    return out.with_name(f"{out.stem}.st{out.suffix}")


def _run_anonymize(args: argparse.Namespace) -> int:
    check_output_path(args.out)
    options = algorithm_options(args)
    frame = read_table(args.data, sep=args.sep, encoding=args.encoding)
    check_columns(frame.columns, _roles(args))  # before hierarchies: a typo is a typo, not a missing file
    models = models_from_args(args)
    hierarchies = _hierarchies(args)
    progress = _Progress(enabled=not args.quiet, terminal=sys.stderr.isatty())
    try:
        result: AnonymizationResult = anonymize(
            frame,
            algorithm=args.algorithm,
            quasi_identifiers=args.quasi_identifiers,
            hierarchies=hierarchies,
            models=models,
            identifiers=args.identifiers,
            sensitive_attributes=args.sensitive_attributes,
            insensitive=args.insensitive,
            unlisted_columns=args.unlisted_columns,
            suppression_limit=args.suppression_limit,
            seed=args.seed,
            progress=progress,
            **options,
        )
    except InfeasibleAnonymizationError as exc:
        progress.close()
        print(f"privacy-plugins: infeasible: {exc}", file=sys.stderr)
        return EXIT_INFEASIBLE
    progress.close()
    write_table(result.table, args.out)
    report = result.to_dict() | {"out": str(args.out)}
    if result.linked is not None:  # Anatomy: the sensitive table beside the QIT
        linked_out = linked_path(args.out)
        write_table(result.linked.table, linked_out)
        report["linked_out"] = str(linked_out)
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.format == "json" else _summary(report, args.out, result.details))
    return 0
