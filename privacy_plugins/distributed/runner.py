"""Run one DPP2GA party over TCP, or both in one process over a loopback socket.

Without TLS an eavesdropper on the connection sees what the parties see (the
protocol's inputs are already protected against the peer, not against the
public): the handshake (k, record count, group, the quasi-identifier *names*),
the singly encrypted ids (unlinkable to ids without a key), both first
partitions as sets of token digests, each round's grouping, and the final
generalized values per class — enough to rebuild the published join, never a
raw value or a record id. Pass an :class:`ssl.SSLContext` (CLI:
``--tls-cert/--tls-key/--tls-ca``) to hide even that.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import ssl
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from privacy_plugins.core.distributed import TOKEN_DIGEST_SIZE, CommutativeCipher, Dpp2gaSession, LocalParty
from privacy_plugins.core.distributed.cipher import ModpCipher
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.distributed.connect import accept_peer, connect_to_peer
from privacy_plugins.distributed.wire import (
    DEFAULT_MAX_FRAME,
    DEFAULT_TIMEOUT,
    PROTOCOL_NAME,
    PROTOCOL_VERSION,
    Channel,
    Kind,
    PeerError,
    decode_classes,
    decode_grouping,
    decode_json,
    encode_classes,
    encode_grouping,
    encode_json,
    peer_text,
)
from privacy_plugins.errors import ConfigurationError, ProtocolError

__all__ = ["GROUPS", "PartyResult", "make_cipher", "parse_address", "run_party", "run_party_async", "run_two_parties"]

Role = Literal["initiator", "responder"]
GROUPS = ("x25519", "modp2048")


def make_cipher(group: str) -> CommutativeCipher:
    """A fresh key in ``group``: ``"x25519"`` (fast, needs ``cryptography``) or ``"modp2048"``.

    MODP exponentiations run in OpenSSL when ``cryptography`` offers it (~13x faster),
    else in CPython's ``pow``; both give the same values and interoperate.
    """
    if group == "modp2048":
        from privacy_plugins.distributed.modp_openssl import OpenSSLModpCipher, openssl_available

        return OpenSSLModpCipher() if openssl_available() else ModpCipher()
    if group == "x25519":
        from privacy_plugins.distributed.x25519 import X25519Cipher

        return X25519Cipher()
    raise ConfigurationError(f"group must be one of {list(GROUPS)}, got {group!r}")


def parse_address(text: str) -> tuple[str, int]:
    """``"HOST:PORT"`` → ``(host, port)``."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigurationError(f"address must be HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class PartyResult:
    """What one party ends with.

    Attributes:
        table: the published join (no ids; initiator's columns first; the same at both parties).
        levels: this party's final hierarchy level per quasi-identifier.
        rounds: rounds of the protocol (1: the local nodes already gave a k-anonymous join).
        bytes_sent: bytes this party put on the wire.
        bytes_received: bytes it read.
        seconds: wall time of the protocol (connection included).
        crypto_seconds: time spent hashing and encrypting ids.
    """

    table: pd.DataFrame
    levels: Mapping[Hashable, int]
    rounds: int
    bytes_sent: int
    bytes_received: int
    seconds: float
    crypto_seconds: float


#: Bytes a HELLO may take (a few fields and the quasi-identifier names).
HELLO_MAX = 1 << 20
_NONCE = re.compile(r"[0-9a-fA-F]{32}", re.ASCII)
# Fields of a HELLO and their JSON type (bool is not an integer here).
_HELLO_FIELDS: dict[str, type] = {
    "protocol": str, "version": int, "role": str, "k": int, "records": int, "group": str, "columns": list,
    "steps": int, "nonce": str,
}  # fmt: skip
_JSON_TYPE = {str: "a string", int: "an integer", list: "an array"}


def _malformed(what: str, problem: str) -> PeerError:
    return PeerError(f"the peer sent a malformed {what} message: {problem}")


def _text_list(values: object, what: str, field: str) -> list[str]:
    """A JSON array of UTF-8-encodable strings (no lone surrogates), or :class:`PeerError` naming the field."""
    if not isinstance(values, list):
        raise _malformed(what, f"field {field!r} is {peer_text(values)}, not a list of strings")
    wrong = next((v for v in values if not isinstance(v, str)), "")
    if not isinstance(wrong, str):
        raise _malformed(what, f"field {field!r} holds {peer_text(wrong)} where a string is due")
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _malformed(what, f"field {field!r} holds text that is not valid Unicode") from exc
    return values


def _check_hello(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    for key, kind in _HELLO_FIELDS.items():
        if key not in theirs:
            raise _malformed("HELLO", f"field {key!r} is missing")
        value = theirs[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _malformed("HELLO", f"field {key!r} is {peer_text(value)}, not {_JSON_TYPE[kind]}")
    if theirs["protocol"] != PROTOCOL_NAME:
        raise PeerError(f"the peer does not speak DPP2GA (its HELLO says protocol {peer_text(theirs['protocol'])})")
    for key in ("version", "k", "records", "group"):
        if theirs[key] != ours[key]:
            raise PeerError(f"the parties disagree on {key}: ours {ours[key]!r}, the peer's {peer_text(theirs[key])}")
    if theirs["role"] not in ("initiator", "responder"):
        raise _malformed("HELLO", f"field 'role' is {peer_text(theirs['role'])}, not 'initiator' or 'responder'")
    if theirs["role"] == ours["role"]:
        raise PeerError(f"both parties are the {ours['role']}; one must be the initiator, the other the responder")
    columns = _text_list(theirs["columns"], "HELLO", "columns")
    if not columns or len(set(columns)) != len(columns):
        raise _malformed("HELLO", "field 'columns' must list the peer's quasi-identifiers, each once")
    unprintable = next((c for c in columns if not c or not c.isprintable()), None)
    if unprintable is not None:  # the names become our output's header: no escapes, line breaks or empty names
        raise _malformed("HELLO", f"field 'columns' holds the name {peer_text(unprintable)}")
    overlap = set(columns) & set(ours["columns"])
    if overlap:
        raise PeerError(f"both parties hold quasi-identifier(s) {sorted(overlap)!r}; the parts must be disjoint")
    if not _NONCE.fullmatch(theirs["nonce"]):
        raise _malformed("HELLO", f"field 'nonce' is {peer_text(theirs['nonce'])}, not 32 hexadecimal digits")
    if theirs["steps"] < 0:
        raise _malformed("HELLO", f"field 'steps' is {peer_text(theirs['steps'])}, not a count")


def _labels(message: dict[str, Any], width: int) -> list[list[str]]:
    """The peer's generalized values per class: rows of ``width`` strings."""
    rows = message.get("labels")
    if not isinstance(rows, list):
        raise _malformed("LABELS", f"field 'labels' is {peer_text(rows)}, not a list of rows")
    for row in rows:
        _text_list(row, "LABELS", "labels")
        if len(row) != width:
            raise _malformed("LABELS", f"a row of {len(row)} values for {width} quasi-identifiers")
    return rows


async def run_party_async(channel: Channel, party: LocalParty, cipher: CommutativeCipher, *, role: Role) -> PartyResult:
    """The protocol for one party on an open channel (closes it at the end; aborts it on failure)."""
    started = time.perf_counter()
    crypto = 0.0
    try:
        nonce = secrets.token_bytes(16)
        hello = {
            "protocol": PROTOCOL_NAME,
            "version": PROTOCOL_VERSION,
            "role": role,
            "k": party.k,
            "records": party.n_records,
            "group": cipher.group,
            "columns": [str(c) for c in party.quasi_identifiers],
            "steps": sum(h - level for h, level in zip(party.snapshot.heights, party.node, strict=True)),
            "nonce": nonce.hex(),
        }
        theirs = decode_json(await channel.exchange(Kind.HELLO, 0, encode_json(hello), max_length=HELLO_MAX), "HELLO")
        _check_hello(hello, theirs)
        their_nonce = bytes.fromhex(theirs["nonce"])
        nonces = nonce + their_nonce if role == "initiator" else their_nonce + nonce
        channel.session = hashlib.sha256(b"dpp2ga-session" + nonces).digest()[:16]
        max_rounds = max(hello["steps"], theirs["steps"]) + 1

        session = Dpp2gaSession(party, cipher)
        tick = time.perf_counter()
        encrypted = await asyncio.to_thread(session.encrypted_classes, channel.session)
        crypto += time.perf_counter() - tick
        payload = await channel.exchange(Kind.SETUP, 1, encode_classes(encrypted, cipher.element_size))
        tick = time.perf_counter()
        their_classes = decode_classes(payload, cipher.element_size, "SETUP", records=party.n_records)
        answer = await asyncio.to_thread(session.answer, their_classes)
        crypto += time.perf_counter() - tick
        payload = await channel.exchange(Kind.ANSWER, 1, encode_classes(answer, TOKEN_DIGEST_SIZE))
        session.accept_answer(decode_classes(payload, TOKEN_DIGEST_SIZE, "ANSWER", records=party.n_records))
        while True:
            mine = session.grouping()
            their_grouping = decode_grouping(
                await channel.exchange(Kind.GROUPING, session.rounds, encode_grouping(mine)), len(their_classes)
            )
            if session.satisfied(mine, their_grouping):
                break
            session.step(max_rounds)
        labels = {"labels": session.class_labels()}
        their_labels = decode_json(await channel.exchange(Kind.LABELS, session.rounds, encode_json(labels)), "LABELS")
        values = _labels(their_labels, len(theirs["columns"]))
        table = session.join(
            values, their_columns=theirs["columns"], ours_first=role == "initiator", their_grouping=their_grouping
        )
    except (ProtocolError, ConfigurationError) as exc:
        if not isinstance(exc, PeerError):
            await channel.abort(str(exc))
        else:
            await channel.close()
        raise
    except BaseException:
        await channel.close()
        raise
    await channel.close()
    return PartyResult(
        table=table,
        levels=party.levels,
        rounds=session.rounds,
        bytes_sent=channel.bytes_sent,
        bytes_received=channel.bytes_received,
        seconds=time.perf_counter() - started,
        crypto_seconds=crypto,
    )


def _start(
    frame: pd.DataFrame,
    *,
    id_column: Hashable,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    k: int,
) -> LocalParty:
    return LocalParty.start(
        frame, id_column=id_column, quasi_identifiers=quasi_identifiers, hierarchies=hierarchies, k=k
    )


def run_party(
    frame: pd.DataFrame,
    *,
    role: Role,
    id_column: Hashable,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    k: int,
    listen: str | None = None,
    connect: str | None = None,
    group: str = "x25519",
    timeout: float = DEFAULT_TIMEOUT,
    max_frame: int = DEFAULT_MAX_FRAME,
    tls: ssl.SSLContext | None = None,
    tap: Callable[[str, bytes], None] | None = None,
    cipher: CommutativeCipher | None = None,
) -> PartyResult:
    """Run one party: listen on or connect to ``HOST:PORT`` and return the published join.

    ``cipher`` replaces a fresh key of ``group`` (e.g. an instrumented one in a benchmark).

    Raises:
        ConfigurationError: bad input (before any connection).
        PeerError: the peer disconnected, stalled, sent garbage, replayed a round or aborted.
        ProtocolError: the parties disagree (parameters, record ids).
    """
    if role not in ("initiator", "responder"):
        raise ConfigurationError(f"role must be 'initiator' or 'responder', got {role!r}")
    if (listen is None) == (connect is None):
        raise ConfigurationError("give exactly one of listen='HOST:PORT' or connect='HOST:PORT'")
    party = _start(frame, id_column=id_column, quasi_identifiers=quasi_identifiers, hierarchies=hierarchies, k=k)
    key = cipher if cipher is not None else make_cipher(group)

    async def main() -> PartyResult:
        if listen is not None:
            reader, writer = await accept_peer(*parse_address(listen), timeout=timeout, tls=tls)
        else:
            reader, writer = await connect_to_peer(*parse_address(str(connect)), timeout=timeout, tls=tls)
        channel = Channel(reader, writer, timeout=timeout, max_frame=max_frame, tap=tap)
        return await run_party_async(channel, party, key, role=role)

    return asyncio.run(main())


def run_two_parties(
    frame_a: pd.DataFrame,
    frame_b: pd.DataFrame,
    *,
    id_column: Hashable,
    quasi_identifiers_a: Sequence[Hashable],
    quasi_identifiers_b: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    k: int,
    group: str = "x25519",
    timeout: float = DEFAULT_TIMEOUT,
    tap: Callable[[str, bytes], None] | None = None,
) -> tuple[PartyResult, PartyResult]:
    """Both parties in one process: two asyncio tasks over a loopback socket (A is the initiator).

    Example:
        >>> df = pd.DataFrame({"id": range(4), "a": ["1", "1", "2", "2"], "b": ["x", "y", "x", "y"]})
        >>> h = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(df[c]))]) for c in "ab"}
        >>> a, b = run_two_parties(df[["id", "a"]], df[["id", "b"]], id_column="id", quasi_identifiers_a=["a"],
        ...                        quasi_identifiers_b=["b"], hierarchies=h, k=2, group="modp2048")
        >>> a.rounds, a.table.equals(b.table), a.table.drop_duplicates().to_numpy().tolist()
        (2, True, [['*', '*']])
    """
    party_a = _start(frame_a, id_column=id_column, quasi_identifiers=quasi_identifiers_a, hierarchies=hierarchies, k=k)
    party_b = _start(frame_b, id_column=id_column, quasi_identifiers=quasi_identifiers_b, hierarchies=hierarchies, k=k)

    async def main() -> tuple[PartyResult, PartyResult]:
        port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        accept = asyncio.ensure_future(accept_peer("127.0.0.1", 0, timeout=timeout, tls=None, ready=port.set_result))
        reader_b, writer_b = await connect_to_peer("127.0.0.1", await port, timeout=timeout, tls=None)
        reader_a, writer_a = await accept
        chan_a = Channel(reader_a, writer_a, timeout=timeout, tap=tap)
        chan_b = Channel(reader_b, writer_b, timeout=timeout, tap=tap)
        results = await asyncio.gather(
            run_party_async(chan_a, party_a, make_cipher(group), role="initiator"),
            run_party_async(chan_b, party_b, make_cipher(group), role="responder"),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results[0], results[1]  # type: ignore[return-value]

    return asyncio.run(main())
