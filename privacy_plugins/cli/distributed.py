"""``privacy-plugins distributed-party``: one party of two-party DPP2GA (Jiang & Clifton) over TCP.

Each of two sites runs this on its vertical part of one table (the same record
ids, disjoint quasi-identifiers). One listens, the other connects; one is the
initiator (its columns come first in the join), the other the responder. Both
end with the same globally k-anonymous join (no id column), written to
``--out`` atomically (a temporary file renamed) and only when the protocol
ended well: on bad input, a peer that disconnects, stalls, sends garbage or
any malformed message, replays a round, aborts (its reason is shown escaped),
disagrees on the parameters or fails the TLS handshake, the command exits 2
with one line on stderr and writes nothing.

TLS (``--tls-cert/--tls-key/--tls-ca``) is optional: see
:mod:`privacy_plugins.distributed.tls` for who needs what and what an
eavesdropper learns without it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from privacy_plugins.cli._args import Subcommands, check_columns, columns_arg
from privacy_plugins.cli._format import aligned, number
from privacy_plugins.cli.anonymize import check_output_path, write_table
from privacy_plugins.core.hierarchies import load_hierarchies
from privacy_plugins.core.io import read_table
from privacy_plugins.errors import ConfigurationError

__all__ = ["add_distributed_parser"]


def add_distributed_parser(commands: Subcommands[argparse.ArgumentParser]) -> None:
    """Register ``privacy-plugins distributed-party``."""
    parser = commands.add_parser(
        "distributed-party",
        help="run one party of two-party DPP2GA: a k-anonymous join of two sites' vertical parts over TCP",
        allow_abbrev=False,  # the flags exactly as documented (--quasi-identifiers, never --qi or --quasi)
    )
    parser.add_argument("--role", required=True, choices=["initiator", "responder"],
                        help="the initiator's columns come first in the published join")  # fmt: skip
    parser.add_argument("--data", required=True, type=Path, help="this party's part (CSV or Parquet)")
    parser.add_argument("--id-column", required=True, help="the record id column (the same ids at both parties)")
    parser.add_argument("--quasi-identifiers", required=True, type=columns_arg,
                        help="this party's quasi-identifiers, comma-separated (disjoint from the peer's)")  # fmt: skip
    parser.add_argument("--hierarchies", required=True, type=Path, help="folder of ARX CSV hierarchies")
    parser.add_argument("--hierarchy-sep", default=";", help="delimiter of the hierarchy files (default ';')")
    parser.add_argument("--k", required=True, type=int, help="k of the join's k-anonymity (the same at both)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--listen", metavar="HOST:PORT", help="wait for the peer on this address")
    where.add_argument("--connect", metavar="HOST:PORT", help="connect to the peer at this address")
    parser.add_argument("--group", choices=["x25519", "modp2048"], default="x25519",
                        help="commutative cipher: x25519 (fast) or the RFC 3526 2048-bit MODP group "
                             "(the same at both; default x25519)")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds to wait for the peer to connect and for each message (default 300)")  # fmt: skip
    parser.add_argument("--tls-cert", type=Path, help="this party's TLS certificate (PEM); the listener needs one")
    parser.add_argument("--tls-key", type=Path, help="the private key of --tls-cert (PEM)")
    parser.add_argument("--tls-ca", type=Path,
                        help="CA certificate (PEM) that signed the peer's certificate; the connecting party "
                             "needs it, the listener then requires the peer's certificate")  # fmt: skip
    parser.add_argument("--out", required=True, type=Path, help="the published join (.csv, .parquet or .pq)")
    parser.add_argument("--sep", help="CSV delimiter of --data (default: detected)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of a CSV (default: utf-8)")
    parser.add_argument("--format", choices=["json", "table"], default="table")
    parser.set_defaults(run=_run_party)


def _summary(report: dict[str, Any]) -> str:
    levels = ", ".join(f"{name}={level}" for name, level in report["levels"].items())
    rows = [
        ("rounds", str(report["rounds"])),
        ("records published", number(report["rows_out"])),
        ("this party's levels", levels),
        ("bytes sent / received", f"{number(report['bytes_sent'])} / {number(report['bytes_received'])}"),
        ("seconds (of which crypto)", f"{report['seconds']:.2f} ({report['crypto_seconds']:.2f})"),
        ("re-checked k of the join", number(report["k"])),
    ]
    return "\n".join([f"DPP2GA {report['role']}: joined with the peer", *aligned(rows), f"written to {report['out']}"])


def _run_party(args: argparse.Namespace) -> int:
    from privacy_plugins.core.measure import measure
    from privacy_plugins.distributed import run_party
    from privacy_plugins.distributed.runner import parse_address
    from privacy_plugins.distributed.tls import tls_context

    check_output_path(args.out)
    parse_address(args.listen or args.connect)
    if args.timeout <= 0:
        raise ConfigurationError(f"--timeout must be positive, got {args.timeout:g}")
    tls = tls_context(listening=args.listen is not None, cert=args.tls_cert, key=args.tls_key, ca=args.tls_ca)
    frame = read_table(args.data, sep=args.sep, encoding=args.encoding)
    check_columns(frame.columns, [("id_column", [args.id_column]), ("quasi_identifiers", args.quasi_identifiers)])
    hierarchies: dict[Hashable, Any] = dict(
        load_hierarchies(args.hierarchies, columns=args.quasi_identifiers, sep=args.hierarchy_sep)
    )
    result = run_party(
        frame,
        role=args.role,
        id_column=args.id_column,
        quasi_identifiers=args.quasi_identifiers,
        hierarchies=hierarchies,
        k=args.k,
        listen=args.listen,
        connect=args.connect,
        group=args.group,
        timeout=args.timeout,
        tls=tls,
    )
    k = measure(result.table, quasi_identifiers=list(result.table.columns)).k
    if k < args.k:  # pragma: no cover - the protocol's condition is the same test
        raise ConfigurationError(f"the join re-measures to k = {k} < {args.k}; nothing written")
    write_table(result.table, args.out)
    report = {
        "role": args.role,
        "rounds": result.rounds,
        "rows_out": len(result.table),
        "levels": dict(result.levels),
        "bytes_sent": result.bytes_sent,
        "bytes_received": result.bytes_received,
        "seconds": round(result.seconds, 3),
        "crypto_seconds": round(result.crypto_seconds, 3),
        "k": k,
        "tls": tls is not None,
        "out": str(args.out),
    }
    print(json.dumps(report, indent=2) if args.format == "json" else _summary(report))
    return 0
