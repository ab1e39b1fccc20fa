"""Benchmark: two-party DPP2GA on Adult, two processes over loopback TCP.

Party A (initiator) holds age, education, sex; party B (responder)
marital-status, race, native-country, workclass; every record id is a row
number. Per group and k it prints the rounds, the bytes on the wire (both
directions), the end-to-end wall time (both processes started, Adult read,
local k-anonymity, protocol, join re-measured) and each party's share of its
protocol time spent in the cipher's exponentiations (``encrypt``: MODP
``x^K mod p`` or X25519 scalar multiplication; hashing to the group excluded).

Groups: ``x25519`` (OpenSSL's X25519 through ``cryptography``), ``modp2048``
(RFC 3526 group, OpenSSL's ``BN_mod_exp`` through ``cryptography``'s
finite-field DH), ``modp2048-pow`` (the same group with CPython's ``pow``,
~13x slower: use ``--rows`` with it). Goal (issue 16): Adult k=10 under 30 s.

Run:  .venv/bin/python benchmarks/bench_dpp2ga.py [--ks 5,10] [--groups x25519,modp2048] [--rows 0]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
REPO = Path(__file__).resolve().parents[1]
QIS = {"initiator": ["age", "education", "sex"], "responder": ["marital-status", "race", "native-country", "workclass"]}


class TimedCipher:
    """Wraps a cipher and adds up the seconds spent in ``encrypt``."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds, self.operations = inner, 0.0, 0
        self.group, self.element_size = inner.group, inner.element_size

    def hash_to_group(self, record_ids: Sequence[object], salt: bytes) -> list[bytes]:
        return list(self.inner.hash_to_group(record_ids, salt))

    def encrypt(self, elements: Sequence[bytes]) -> list[bytes]:
        started = time.perf_counter()
        out = list(self.inner.encrypt(elements))
        self.seconds += time.perf_counter() - started
        self.operations += len(elements)
        return out


def worker(role: str, address: str, k: int, group: str, rows: int) -> None:
    """One party in this process; prints its measurements as JSON."""
    import privacy_plugins as pp
    from privacy_plugins.core.distributed import ModpCipher
    from privacy_plugins.core.hierarchies import load_hierarchies
    from privacy_plugins.core.measure import measure
    from privacy_plugins.distributed import make_cipher, run_party

    qis = QIS[role]
    frame = pp.read_table(ADULT / "adult.csv")
    if rows:
        frame = frame.iloc[:rows]
    frame = frame.assign(id=range(len(frame)))[["id", *qis]]
    cipher = TimedCipher(ModpCipher() if group == "modp2048-pow" else make_cipher(group))
    result = run_party(
        frame, role=role,  id_column="id", quasi_identifiers=qis, hierarchies=load_hierarchies(ADULT, columns=qis),
        k=k, group=group.removesuffix("-pow"), cipher=cipher,  # type: ignore[arg-type]
        **({"listen": address} if role == "initiator" else {"connect": address}),
    )  # fmt: skip
    k_join = measure(result.table, quasi_identifiers=list(result.table.columns)).k
    print(json.dumps({
        "rounds": result.rounds, "sent": result.bytes_sent, "received": result.bytes_received,
        "protocol_seconds": result.seconds, "encrypt_seconds": cipher.seconds, "operations": cipher.operations,
        "k": k_join, "levels": dict(result.levels),
    }))  # fmt: skip


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_pair(k: int, group: str, rows: int) -> dict[str, Any]:
    """Both parties as two processes; their reports and the wall time."""
    address = f"127.0.0.1:{_port()}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    processes = {
        role: subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                role,
                "--address",
                address,
                "--ks",
                str(k),
                "--groups",
                group,
                "--rows",
                str(rows),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role in ("initiator", "responder")
    }
    reports = {}
    for role, process in processes.items():
        out, err = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise SystemExit(f"{role} failed: {err.strip().splitlines()[-1] if err.strip() else process.returncode}")
        reports[role] = json.loads(out.strip().splitlines()[-1])
    return {"wall": time.perf_counter() - started, **reports}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", default="5,10")
    parser.add_argument("--groups", default="x25519,modp2048")
    parser.add_argument("--rows", type=int, default=0, help="use the first ROWS rows (0: all 30,162)")
    parser.add_argument("--worker", choices=sorted(QIS), help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (ADULT / "adult.csv").exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return 0
    if args.worker:
        worker(args.worker, args.address, int(args.ks), args.groups, args.rows)
        return 0
    print(f"Adult{f' (first {args.rows:,} rows)' if args.rows else ''}: A = {', '.join(QIS['initiator'])} | "
          f"B = {', '.join(QIS['responder'])}; two processes over loopback; one run each")  # fmt: skip
    header = f"{'group':<14}{'k':>4}{'rounds':>8}{'bytes':>14}{'wall s':>9}{'proto s A/B':>14}{'exp share A/B':>16}"
    print(header)
    print("-" * len(header))
    for group in args.groups.split(","):
        for k in [int(k) for k in args.ks.split(",")]:
            r = run_pair(k, group, args.rows)
            a, b = r["initiator"], r["responder"]
            assert a["k"] >= k and a["rounds"] == b["rounds"]
            shares = [p["encrypt_seconds"] / p["protocol_seconds"] for p in (a, b)]
            share = f"{shares[0]:.0%} / {shares[1]:.0%}"
            print(f"{group:<14}{k:>4}{a['rounds']:>8}{a['sent'] + b['sent']:>14,}{r['wall']:>9.1f}"
                  f"{a['protocol_seconds']:>7.1f}/{b['protocol_seconds']:<6.1f}{share:>16}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
