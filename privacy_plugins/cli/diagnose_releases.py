"""``privacy-plugins diagnose-releases A B … --source RAW``: the intersection attack on any published tables.

The tables may come from this product or not (CSV or Parquet, oldest first). Every record
of ``--source`` is a target whose raw quasi-identifier values the adversary knows; she
intersects the sensitive values of the classes that cover them in each table
(``docs/composition.md``). Printed per table, per pair and over all: records disclosed
(one value left) and below ``--l`` — counts only.

A two-table release (Anatomy's QIT and ST) is given as ``QIT+ST`` (two files joined by ``+``):
it is attacked through its signature (a group covers a target when it holds a row with exactly
her QI values: :func:`~privacy_plugins.core.history.linked_signature`; ``--group-column`` links them).

Exit 0 when no record is below l over all tables, 1 when one is, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.cli._args import Subcommands, columns_arg
from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.history import linked_signature
from privacy_plugins.core.io import read_table

__all__ = ["add_diagnose_releases_parser"]


def add_diagnose_releases_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins diagnose-releases``."""
    parser = commands.add_parser(
        "diagnose-releases", help="run the intersection attack on published tables (any tool's)"
    )
    parser.add_argument(
        "releases", type=Path, nargs="+", help="published tables, CSV or Parquet, oldest first (a pair: QIT+ST)"
    )
    parser.add_argument("--group-column", default="group_id", help="the column linking a pair's QIT and ST")
    parser.add_argument("--source", type=Path, required=True, help="the raw table: every record is a target")
    parser.add_argument("--quasi-identifiers", type=columns_arg, required=True, help="comma-separated QI columns")
    parser.add_argument(
        "--sensitive-attributes", type=columns_arg, required=True, help="comma-separated sensitive columns"
    )
    parser.add_argument("--hierarchies", type=Path, help="folder of ARX hierarchy CSVs the releases generalize along")
    parser.add_argument("--l", type=int, default=2, help="count records left with fewer values (default 2)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    if len(args.releases) < 1:
        raise ValueError("diagnose-releases needs at least one published table")
    source = read_table(args.source)
    releases = [_release(path, args) for path in args.releases]
    hierarchies = (
        load_hierarchies(args.hierarchies, columns=args.quasi_identifiers) if args.hierarchies is not None else {}
    )
    attacks: list[dict[str, Any]] = []
    for attribute in args.sensitive_attributes:
        report = intersection_attack(
            source,
            releases,
            quasi_identifiers=args.quasi_identifiers,
            sensitive_attribute=attribute,
            hierarchies=hierarchies,
            l=args.l,
        )
        attacks.append({"sensitive_attribute": attribute} | report.to_dict())
    exposed = any(a["overall"]["below_l"] for a in attacks)
    if args.format == "json":
        print(json.dumps({"releases": [str(p) for p in args.releases], "attacks": attacks, "holds": not exposed}))
        return 1 if exposed else 0
    names = [p.name for p in args.releases]
    for attack in attacks:
        print(f"{attack['sensitive_attribute']}: {attack['records']:,} records, l = {attack['l']}")
        for count in attack["per_release"]:
            print(f"  {names[count['releases'][0]]}: {count['disclosed']:,} disclosed, {count['below_l']:,} below l")
        for count in attack["pairs"]:
            i, j = count["releases"]
            print(f"  {names[i]} + {names[j]}: {count['disclosed']:,} disclosed, {count['below_l']:,} below l")
        o = attack["overall"]
        print(f"  {'FAIL' if o['below_l'] else 'ok  '} all {len(names)}: {o['disclosed']:,} disclosed, "
              f"{o['below_l']:,} below l, smallest intersection {o['smallest']}")  # fmt: skip
    return 1 if exposed else 0


def _release(path: Path, args: argparse.Namespace) -> pd.DataFrame:
    """A published table, or a two-table release (``QIT+ST``) as its signature."""
    if path.exists() or "+" not in str(path):
        return read_table(path)
    qit_path, st_path = str(path).split("+", 1)
    qit, st = read_table(Path(qit_path)), read_table(Path(st_path))
    sensitive = [c for c in args.sensitive_attributes if c in st.columns]
    return linked_signature(qit, st, args.group_column, args.quasi_identifiers, sensitive)
