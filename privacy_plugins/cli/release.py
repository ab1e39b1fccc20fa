"""``privacy-plugins release SPEC.yaml``: the whole release, publishing only when every check passes.

Exit codes: 0 published; 1 not published because a requirement could not be met
(the diagnosis report and release.json are still written); 2 bad spec or input
(nothing is written), or another release publishing to the same destination.

Working files live in a private per-run folder outside the report folder and
are removed when the command ends, unless ``--keep-workdir`` (or ``workdir:`` in
the spec) keeps them; the summary then says where they are.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from privacy_plugins.cli._args import Subcommands
from privacy_plugins.release import STEPS, ReleaseResult, ReleaseSpec, run_release

__all__ = ["add_release_parser", "format_release"]

EXIT_NOT_PUBLISHED = 1


def add_release_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins release``."""
    parser = commands.add_parser("release", help="diagnose, anonymize, check and publish a table from a spec")
    parser.add_argument("spec", type=Path, help="release spec (YAML)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--include-values",
        action="store_true",
        help="let error messages quote table values (e.g. the values missing from a hierarchy); exposes people",
    )
    parser.add_argument(
        "--keep-workdir",
        action="store_true",
        help="keep this run's private working files (raw table without identifiers, candidate); path printed",
    )
    parser.set_defaults(run=_run_release)


def format_release(result: ReleaseResult, spec: ReleaseSpec) -> str:
    """A readable summary: where things are, the accounting and every check."""
    lines = [f"release {result.name!r}: {'PUBLISHED' if result.passed else 'NOT PUBLISHED'}"]
    diagnosis = result.diagnosis
    lines.append(
        f"  raw table        {result.loaded.rows:,} rows; k = {diagnosis.k}, {diagnosis.sample_uniques:,} people "
        f"singled out, {diagnosis.share_at_risk:.1%} of records at risk"
    )
    if result.candidate is not None:
        c = result.candidate
        levels = ", ".join(f"{name}={level}" for name, level in c.levels.items())
        lines.append(f"  anonymized       {c.algorithm} search: {levels}; NCP {c.ncp:.3f}")
        lines.append(
            f"  rows             {c.rows_in:,} in = {c.rows_out:,} published + {c.suppressed:,} suppressed; "
            f"identifiers dropped: {', '.join(c.dropped_identifiers) or 'none'}"
        )
    for check in result.check.checks if result.check is not None else []:
        lines.append(f"  {'ok  ' if check.passed else 'FAIL'} {check.requirement}: {check.detail}")
    if result.failure is not None:
        lines.append(f"  why not published: {result.failure}")
        lines.append(f"  destination unchanged: {spec.destination.describe()}")
    if result.published is not None:
        lines.append(f"  published        {result.published.rows:,} rows to {result.published.destination}")
    if result.workdir is not None:
        lines.append(f"  working files    {result.workdir} (kept; private, remove when done)")
    lines.append(f"  diagnosis report {diagnosis.html_path}")
    lines.append(f"  release summary  {spec.report.release_json}")
    return "\n".join(lines)


def _run_release(args: argparse.Namespace) -> int:
    if args.include_values:
        print("privacy-plugins: warning: --include-values lets error messages quote table values", file=sys.stderr)
    spec = ReleaseSpec.from_yaml(args.spec)
    console = Console(stderr=True)
    show = not args.quiet and console.is_terminal
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not show,
        transient=True,
    ) as progress:
        task = progress.add_task("release", total=len(STEPS))
        inner = progress.add_task("", total=None, visible=False)
        units = {"diagnose": "subsets", "anonymize": "lattice nodes"}

        def on_step(name: str) -> None:
            progress.update(task, description=f"{name} ({STEPS.index(name) + 1}/{len(STEPS)})")
            progress.advance(task, 0 if name == STEPS[0] else 1)
            progress.update(inner, visible=False)

        def on_progress(step: str, done: int, total: int | None) -> None:
            of = "" if total is None else f"/{total:,}"
            description = f"  {units.get(step, step)} {done:,}{of}"
            progress.update(inner, description=description, completed=done, total=total, visible=True)

        result = run_release(spec, on_step=on_step, on_progress=on_progress, keep_workdir=args.keep_workdir)
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(format_release(result, spec))
    if not result.passed:
        print(
            f"privacy-plugins: release {result.name!r} not published: {result.failure}".splitlines()[0], file=sys.stderr
        )
        return EXIT_NOT_PUBLISHED
    return 0
