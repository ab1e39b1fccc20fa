"""``privacy-plugins published SPEC.yaml``: what is published now, re-measured against the spec.

A two-table release (Anatomy's QIT + ST) is read as a pair and measured by its groups.

Useful after any orchestrator ran a release (Airflow, Dagster, the CLI): it reads
the destination, re-measures every requirement with the core and prints where
the reports are — never raw values. Exit 0 when every requirement holds, 1 when
one does not or nothing is published.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from privacy_plugins.cli._args import Subcommands
from privacy_plugins.cli._format import number
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import VerificationError
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.linked import read_release

__all__ = ["add_published_parser"]


def add_published_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins published``."""
    parser = commands.add_parser("published", help="re-measure the table a release spec has published")
    parser.add_argument("spec", type=Path, help="release spec (YAML)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.set_defaults(run=_run_published)


def _run_published(args: argparse.Namespace) -> int:
    spec = ReleaseSpec.from_yaml(args.spec)
    try:
        table = read_release(spec)
    except VerificationError as exc:  # a two-table release whose parts no longer join, or an identifier column
        print(json.dumps({"destination": spec.destination.describe(), "holds": False, "error": str(exc)})
              if args.format == "json" else f"FAIL {exc}")  # fmt: skip
        return 1
    report: dict[str, object] = {"destination": spec.destination.describe(), "published": table is not None}
    results = []
    if table is not None:
        classes = EquivalenceClasses.from_frame(table, list(spec.quasi_identifiers))
        models = spec.models()
        results = [model.evaluate(classes) for model in models if not model.judged_on_tables]
        # A model judged on the original and the release (the attacks) cannot be judged from the release alone.
        report["not_judged"] = [str(model) for model in models if model.judged_on_tables]
        leaked = [c for c in spec.identifiers if c in table.columns]
        report |= {"rows": len(table), "classes": classes.n_classes, "identifier_columns": leaked}
        report["requirements"] = [r.to_dict() for r in results]
    report["reports"] = {"diagnosis_html": str(spec.report.diagnosis_html), "directory": str(spec.report.directory)}
    holds = table is not None and all(r.passed for r in results) and not report.get("identifier_columns")
    report["holds"] = holds
    if args.format == "json":
        print(json.dumps(report, indent=2))
        return 0 if holds else 1
    if table is None:
        print(f"nothing published at {report['destination']}")
        return 1
    print(f"published at {report['destination']}: {len(table):,} rows, {classes.n_classes:,} classes")
    for result in results:
        print(f"  {'ok  ' if result.passed else 'FAIL'} {result.model}: observed {number(result.observed)}")
    for model in [str(m) for m in spec.models() if m.judged_on_tables]:
        print(f"  --   {model}: not judged here (it needs the original records; the release gate judged it)")
    print(f"  diagnosis report {spec.report.diagnosis_html}")
    return 0 if holds else 1
