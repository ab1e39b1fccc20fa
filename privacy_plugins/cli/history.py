"""``privacy-plugins history SPEC.yaml``: a release history, and the intersection attack on it.

Lists the releases the destination keeps in the spec's history (number, run, time, rows,
transformation) and runs the intersection attack of ``docs/composition.md`` on them, the
spec's source as the targets: per release alone, per pair and over all, per sensitive
attribute with an l requirement — counts only, never a value. ``--adopt`` starts a history
with the release published now (one published before histories were kept).

Exit 0 when no record is left with fewer values than its l over all kept releases, 1 when
one is, 2 for bad input (a missing or changed history included).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from privacy_plugins.cli._args import Subcommands
from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.composition_gate import adopt_published, read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.sources import read_source
from privacy_plugins.release.workarea import destination_lock

__all__ = ["add_history_parser"]


def add_history_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins history``."""
    parser = commands.add_parser("history", help="list a release history and run the intersection attack on it")
    parser.add_argument("spec", type=Path, help="release spec (YAML)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.add_argument(
        "--adopt", action="store_true", help="start the history with the release published now (no history yet)"
    )
    parser.add_argument("--no-attack", action="store_true", help="list the releases only (do not read the source)")
    parser.set_defaults(run=_run_history)


def _run_history(args: argparse.Namespace) -> int:
    spec = ReleaseSpec.from_yaml(args.spec)
    if not spec.history.enabled:
        raise ValueError(f"release {spec.name!r} keeps no history (history: off, or its destination keeps none)")
    destination = open_destination(spec.destination)
    if args.adopt:
        with destination_lock(spec.destination):
            history = adopt_published(spec, destination)
    else:
        history = read_history(spec, destination)
    report: dict[str, Any] = {
        "history": spec.history.history_name(spec.name),
        "destination": spec.destination.describe(),
        "releases": [
            {
                "release": r.sequence,
                "run_id": r.run_id,
                "published_at": r.published_at,
                "rows": r.rows,
                "transformation": dict(r.transformation),
            }
            for r in history.releases
        ],
    }
    attacks = [] if args.no_attack or not history.releases else _attacks(spec, history)
    report["attacks"] = attacks
    exposed = any(a["overall"]["below_l"] for a in attacks)
    report["holds"] = not exposed
    if args.format == "json":
        print(json.dumps(report, indent=2))
        return 1 if exposed else 0
    print(f"release history {report['history']!r} at {report['destination']}: {len(history)} release(s)")
    for r in report["releases"]:
        print(f"  #{r['release']}  {r['published_at']}  run {r['run_id']}  {r['rows']:,} rows  {r['transformation']}")
    for attack in attacks:
        overall = attack["overall"]
        print(
            f"  {'FAIL' if overall['below_l'] else 'ok  '} intersection attack on {attack['sensitive_attribute']}: "
            f"{overall['below_l']} of {attack['records']} records below l={attack['l']}, "
            f"{overall['disclosed']} disclosed (over all {len(history)} releases)"
        )
    return 1 if exposed else 0


def _attacks(spec: ReleaseSpec, history: Any) -> list[dict[str, Any]]:
    """The intersection attack per sensitive attribute with an l requirement, the source as targets."""
    source = validate_frame(read_source(spec.source)).drop(columns=list(spec.identifiers))
    hierarchies = spec.build_hierarchies(source)
    attacks = []
    for model in spec.models():
        if model.sensitive_attribute is None or model.report_key != "l":
            continue
        report = intersection_attack(
            source,
            history.signatures(),
            quasi_identifiers=list(spec.quasi_identifiers),
            sensitive_attribute=model.sensitive_attribute,
            hierarchies=hierarchies,
            l=max(1, int(model.threshold)),
        )
        attacks.append({"sensitive_attribute": str(model.sensitive_attribute)} | report.to_dict())
    return attacks
