"""``privacy-plugins release SPEC.yaml``: the whole release, publishing only when every check passes.

Exit codes: 0 published; 1 not published because a requirement could not be met
(the diagnosis report and release.json are still written); 2 bad spec or input
(nothing is written), or another release publishing to the same destination.

Working files live in a private per-run folder outside the report folder and
are removed when the command ends, unless ``--keep-workdir`` (or ``workdir:`` in
the spec) keeps them; the summary then says where they are. Stopped by SIGTERM,
SIGHUP or SIGINT, it removes them (and any staging table) first, then ends by
that signal (exit status 128 + its number in a shell).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from privacy_plugins.cli._args import Subcommands
from privacy_plugins.cli._signals import Stopped, check_stopped, die_of, stopped_by_signals
from privacy_plugins.release import STEPS, ReleaseResult, ReleaseSpec, new_run_id, remove_run_workdir, run_release
from privacy_plugins.release.progress import ProgressLines, progress_text

__all__ = ["add_release_parser", "format_release"]

EXIT_NOT_PUBLISHED = 1


def add_release_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins release``."""
    parser = commands.add_parser("release", help="diagnose, anonymize, check and publish a table from a spec")
    parser.add_argument("spec", type=Path, help="release spec (YAML)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on stderr (a bar on a terminal, else a line every $PRIVACY_PLUGINS_PROGRESS_INTERVAL s, 10)",
    )
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
        headline = f": {c.headline}" if c.headline else ""
        lines.append(f"  anonymized       {c.algorithm}{headline}; NCP {c.ncp:.3f}")
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
    if result.published is not None:
        from privacy_plugins.release.release_report import release_html_path

        lines.append(f"  release report   {release_html_path(spec)}")
    return "\n".join(lines)


class _StepDisplay:
    """The release's progress: a rich bar on a terminal, else a line on stderr now and then.

    Without a terminal (redirected, CI) each step start is one line, and inside a long step a
    line with the phase and its percentage at most every ``$PRIVACY_PLUGINS_PROGRESS_INTERVAL``
    seconds (10 by default); ``--quiet`` silences both.
    """

    def __init__(self, progress: Progress, *, bar: bool, lines: bool) -> None:
        self.progress = progress
        self.bar, self.lines = bar, lines
        self.task = progress.add_task("release", total=len(STEPS))
        self.inner = progress.add_task("", total=None, visible=False)
        self.what = ""
        self.throttle = ProgressLines(_stderr_line)

    def on_step(self, name: str) -> None:
        """A step starts (not after a stop signal whose exception was lost: never publish after a stop)."""
        check_stopped()
        position = f"{STEPS.index(name) + 1}/{len(STEPS)}"
        self.what = {"diagnose": "subsets measured", "anonymize": "nodes checked"}.get(name, name)
        self.progress.update(self.task, description=f"{name} ({position})")
        self.progress.advance(self.task, 0 if name == STEPS[0] else 1)
        self.progress.update(self.inner, visible=False)
        if self.lines:
            _stderr_line(f"release step {position}: {name}")
            self.throttle = ProgressLines(_stderr_line, self.what, prefix=f"{name}: ")

    def phase(self, name: str) -> None:
        """The algorithm names the phase that starts (``"two-phase: refining …"``)."""
        self.what = name
        self.throttle.phase(name)

    def __call__(self, step: str, done: int, total: int | None) -> None:
        """Progress inside a step."""
        if self.bar:
            description = f"  {progress_text(self.what, done, total)}"
            self.progress.update(self.inner, description=description, completed=done, total=total, visible=True)
        if self.lines:
            self.throttle(done, total)


def _stderr_line(text: str) -> None:
    print(f"privacy-plugins: {text}", file=sys.stderr, flush=True)


def _run_release(args: argparse.Namespace) -> int:
    if args.include_values:
        print("privacy-plugins: warning: --include-values lets error messages quote table values", file=sys.stderr)
    spec = ReleaseSpec.from_yaml(args.spec)
    run = new_run_id()
    try:
        with stopped_by_signals():
            return _release(args, spec, run)
    except Stopped as stop:
        removed = remove_run_workdir(spec, run, keep=args.keep_workdir)  # again: the signal may have cut it short
        what = "its working files were removed" if removed else "its working files were kept, as asked"
        print(f"privacy-plugins: release {spec.name!r} stopped by {stop}; {what}", file=sys.stderr)
        die_of(stop.signum)
        raise


def _release(args: argparse.Namespace, spec: ReleaseSpec, run: str) -> int:
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
        display = _StepDisplay(progress, bar=show, lines=not args.quiet and not console.is_terminal)
        result = run_release(
            spec, on_step=display.on_step, on_progress=display, run_id=run, keep_workdir=args.keep_workdir
        )
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
