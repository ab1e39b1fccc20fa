"""Two parties over a loopback socket: the slides, a wire audit, peer failures."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import struct

import pandas as pd
import pytest

from privacy_plugins.core.distributed import LocalParty
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.distributed import PeerError, make_cipher, run_two_parties
from privacy_plugins.distributed.runner import run_party_async
from privacy_plugins.distributed.wire import Channel, Kind

Slides = tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]


#: The x25519 group (the default) needs the ``distributed`` extra; without it these tests skip.
needs_cryptography = pytest.mark.skipif(
    importlib.util.find_spec("cryptography") is None, reason="needs the 'distributed' extra (cryptography)"
)


@pytest.mark.parametrize("group", [pytest.param("x25519", marks=needs_cryptography), "modp2048"])
def test_the_slides_over_tcp_and_the_wire_audit(slides: Slides, group: str) -> None:
    p1, p2, hierarchies = slides
    frames: list[bytes] = []
    a, b = run_two_parties(
        p1, p2, id_column="ID", quasi_identifiers_a=["AREA", "POSITION"], quasi_identifiers_b=["SALARY"],
        hierarchies=hierarchies, k=3, group=group, tap=lambda _direction, frame: frames.append(frame),
    )  # fmt: skip
    assert a.rounds == b.rounds == 2 and a.table.equals(b.table)
    assert dict(a.levels) == {"AREA": 1, "POSITION": 1} and dict(b.levels) == {"SALARY": 2}
    assert measure(a.table, quasi_identifiers=["AREA", "POSITION", "SALARY"]).k >= 3
    assert a.bytes_sent == b.bytes_received and sum(map(len, frames)) == 2 * (a.bytes_sent + b.bytes_sent)
    # No raw value of either party in any frame but the final LABELS (the published, generalized values).
    labels = [f for f in frames if f[9] == Kind.LABELS]
    others = b"".join(f for f in frames if f[9] != Kind.LABELS)
    raw = pd.concat([p1, p2[["SALARY"]]], axis=1)
    for column in ["AREA", "POSITION", "SALARY"]:
        for value in raw[column].astype(str).unique():
            assert value.encode() not in others, (column, value)
    published = set(a.table.astype(str).to_numpy().ravel())
    for frame in labels:
        values = json.loads(frame[30:])["labels"]
        assert {v for row in values for v in row} <= published
    # Record ids: never as text in a text frame; binary frames hold only group elements, digests, class numbers.
    for frame in [f for f in frames if f[9] in (Kind.HELLO, Kind.LABELS)]:
        text = frame[30:].decode()
        for record_id in raw["ID"].astype(str):
            assert f'"{record_id}"' not in text and f"[{record_id}," not in text and f",{record_id}]" not in text


async def _pair(p1: pd.DataFrame, hierarchies: dict[str, Hierarchy], *, timeout: float = 5.0):  # type: ignore[no-untyped-def]
    party = LocalParty.start(p1, id_column="ID", quasi_identifiers=["AREA", "POSITION"], hierarchies=hierarchies, k=3)
    server_side: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Future()
    server = await asyncio.start_server(lambda r, w: server_side.set_result((r, w)), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    peer_reader, peer_writer = await server_side
    server.close()
    task = asyncio.ensure_future(
        run_party_async(Channel(reader, writer, timeout=timeout, max_frame=1 << 16), party, make_cipher("x25519"),
                        role="initiator")
    )  # fmt: skip
    return task, Channel(peer_reader, peer_writer, timeout=timeout), party


def _honest_hello(party: LocalParty) -> dict[str, object]:
    return {"protocol": "dpp2ga", "version": 1, "role": "responder", "k": 3, "records": 12,
            "group": "x25519:rfc7748", "columns": ["SALARY"], "steps": 2, "nonce": "00" * 16}  # fmt: skip


@needs_cryptography
@pytest.mark.parametrize(
    "attack, message",
    [
        ("close", "closed the connection"),
        ("garbage", "not a DPP2GA frame"),
        ("oversized", "more than the maximum"),
        ("stall", "no message from the peer within"),
        ("replay", "replayed"),
        ("wrong_k", "disagree on k"),
        ("malformed", "malformed"),
    ],
)
def test_peer_failures_are_clear_errors(slides: Slides, attack: str, message: str) -> None:
    p1, _, hierarchies = slides

    async def scenario() -> None:
        from privacy_plugins.distributed.wire import decode_json, encode_json

        task, peer, party = await _pair(p1, hierarchies, timeout=1.0)
        theirs = decode_json(await peer.receive(Kind.HELLO, 0), "hello")
        hello = _honest_hello(party)
        if attack == "close":
            await peer.close()
        elif attack == "garbage":
            peer.writer.write(struct.pack(">I", 40) + b"GET / HTTP/1.1\r\n" + bytes(24))
        elif attack == "oversized":
            peer.writer.write(struct.pack(">I", 1 << 30))
        elif attack == "stall":
            pass
        elif attack == "wrong_k":
            await peer.send(Kind.HELLO, 0, encode_json({**hello, "k": 2}))
        else:
            await peer.send(Kind.HELLO, 0, encode_json(hello))
            peer.session = hashlib.sha256(b"dpp2ga-session" + bytes.fromhex(theirs["nonce"]) + bytes(16)).digest()[:16]
            await peer.receive(Kind.SETUP, 1)
            if attack == "replay":
                await peer.send(Kind.HELLO, 0, encode_json(hello))  # an old round again
            else:
                await peer.send(Kind.SETUP, 1, b"\x00\x00\x00\x07")  # a SETUP cut short
        with pytest.raises(PeerError, match=message):
            await task
        await peer.close()

    asyncio.run(scenario())
