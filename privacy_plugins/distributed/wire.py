"""Framed, versioned DPP2GA messages over asyncio streams.

A frame is ``length (u32, big-endian) | magic "DPP2" | version (u8) | kind (u8)
| round (u32) | session (16 bytes) | payload``; ``length`` counts everything
after itself and may not exceed the receiver's maximum. Every read has a
timeout. The session id (from both parties' handshake nonces) and the (kind,
round) each side expects next reject garbage, frames of another session and
replayed rounds, each with an error saying which.
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

from privacy_plugins.core.distributed.cipher import ProtocolError

__all__ = [
    "DEFAULT_MAX_FRAME",
    "DEFAULT_TIMEOUT",
    "PROTOCOL_VERSION",
    "Channel",
    "Kind",
    "PeerError",
    "decode_classes",
    "decode_grouping",
    "decode_json",
    "encode_classes",
    "encode_grouping",
    "encode_json",
]

PROTOCOL_VERSION = 1
MAGIC = b"DPP2"
#: Largest frame accepted (the first partition of 1M ids under MODP-2048 is ~256 MB: raise it for that).
DEFAULT_MAX_FRAME = 64 * 1024 * 1024
#: Seconds to wait for any one frame (the peer may be encrypting n ids meanwhile).
DEFAULT_TIMEOUT = 300.0
_HEADER = struct.Struct(">4sBBI16s")
_LENGTH = struct.Struct(">I")
NO_SESSION = bytes(16)


class PeerError(ProtocolError):
    """The peer disconnected, stalled, sent garbage, replayed a message or aborted."""


class Kind(IntEnum):
    """Message kinds, in protocol order."""

    HELLO = 1
    SETUP = 2
    ANSWER = 3
    GROUPING = 4
    LABELS = 5
    ABORT = 6


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def decode_json(payload: bytes, what: str) -> dict[str, Any]:
    """A JSON object, or :class:`PeerError` naming the message."""
    try:
        value = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PeerError(f"the peer's {what} message is not valid JSON") from exc
    if not isinstance(value, dict):
        raise PeerError(f"the peer's {what} message is not a JSON object")
    return value


def encode_classes(classes: Sequence[Sequence[bytes]], element_size: int) -> bytes:
    """``n (u32) | element size (u32) | n sizes (u32) | elements``."""
    sizes = [len(c) for c in classes]
    head = struct.pack(f">II{len(sizes)}I", len(sizes), element_size, *sizes)
    return head + b"".join(element for cls in classes for element in cls)


def decode_classes(payload: bytes, element_size: int, what: str) -> list[list[bytes]]:
    """The inverse of :func:`encode_classes`, checking every length."""
    try:
        n, size = struct.unpack_from(">II", payload)
        sizes = struct.unpack_from(f">{n}I", payload, 8)
    except struct.error as exc:
        raise PeerError(f"the peer's {what} message is malformed") from exc
    start = 8 + 4 * n
    if size != element_size or len(payload) != start + size * sum(sizes):
        raise PeerError(f"the peer's {what} message is malformed (sizes do not add up)")
    out, at = [], start
    for count in sizes:
        out.append([payload[i : i + size] for i in range(at, at + count * size, size)])
        at += count * size
    return out


def encode_grouping(groups: Sequence[int]) -> bytes:
    """``n (u32) | n class numbers (u32)``."""
    return struct.pack(f">I{len(groups)}I", len(groups), *groups)


def decode_grouping(payload: bytes) -> list[int]:
    """The inverse of :func:`encode_grouping`."""
    try:
        (n,) = struct.unpack_from(">I", payload)
        if len(payload) != 4 + 4 * n:
            raise struct.error("length")
        return list(struct.unpack_from(f">{n}I", payload, 4))
    except struct.error as exc:
        raise PeerError("the peer's grouping message is malformed") from exc


class Channel:
    """One connection: framed sends, timed and checked receives, byte counts.

    ``tap(direction, frame)`` sees every frame sent (``"out"``) and received
    (``"in"``), e.g. for a wire audit.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_frame: int = DEFAULT_MAX_FRAME,
        tap: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.timeout, self.max_frame, self.tap = timeout, max_frame, tap
        self.session = NO_SESSION
        self.bytes_sent = 0
        self.bytes_received = 0

    async def send(self, kind: Kind, round_: int, payload: bytes) -> None:
        """Write one frame and wait (with the timeout) until it is handed to the socket."""
        body = _HEADER.pack(MAGIC, PROTOCOL_VERSION, int(kind), round_, self.session) + payload
        frame = _LENGTH.pack(len(body)) + body
        if self.tap is not None:
            self.tap("out", frame)
        self.writer.write(frame)
        self.bytes_sent += len(frame)
        try:
            await asyncio.wait_for(self.writer.drain(), self.timeout)
        except TimeoutError as exc:
            raise PeerError(f"the peer did not read our {kind.name} message within {self.timeout:g} s") from exc
        except ConnectionError as exc:
            raise PeerError(f"the peer closed the connection while we sent {kind.name} ({exc})") from exc

    async def _read(self, count: int, waiting_for: str) -> bytes:
        try:
            return await asyncio.wait_for(self.reader.readexactly(count), self.timeout)
        except TimeoutError as exc:
            raise PeerError(f"no message from the peer within {self.timeout:g} s (waiting for {waiting_for})") from exc
        except asyncio.IncompleteReadError as exc:
            raise PeerError(f"the peer closed the connection (waiting for {waiting_for})") from exc
        except ConnectionError as exc:
            raise PeerError(f"the connection to the peer broke (waiting for {waiting_for}: {exc})") from exc

    async def receive(self, kind: Kind, round_: int) -> bytes:
        """The payload of the next frame, which must be ``kind`` of ``round_`` in this session."""
        waiting_for = f"{kind.name} of round {round_}"
        (length,) = _LENGTH.unpack(await self._read(_LENGTH.size, waiting_for))
        if length > self.max_frame:
            raise PeerError(f"the peer sent a frame of {length} bytes, more than the maximum {self.max_frame}")
        if length < _HEADER.size:
            raise PeerError(f"the peer sent a truncated frame ({length} bytes)")
        body = await self._read(length, waiting_for)
        self.bytes_received += _LENGTH.size + length
        if self.tap is not None:
            self.tap("in", _LENGTH.pack(length) + body)
        magic, version, got_kind, got_round, session = _HEADER.unpack_from(body)
        payload = body[_HEADER.size :]
        if magic != MAGIC:
            raise PeerError("the peer sent something that is not a DPP2GA frame (garbage on the connection)")
        if version != PROTOCOL_VERSION:
            raise PeerError(f"the peer speaks DPP2GA protocol version {version}, we speak {PROTOCOL_VERSION}")
        if got_kind == Kind.ABORT:
            reason = payload.decode("utf-8", "replace")[:500]
            raise PeerError(f"the peer aborted the protocol: {reason}")
        if session != self.session:
            raise PeerError("the peer sent a frame of another session (a replayed or misrouted message)")
        if (got_kind, got_round) != (kind, round_):
            name = Kind(got_kind).name if got_kind in Kind._value2member_map_ else f"kind {got_kind}"
            replay = " (a replayed old round)" if (got_round, got_kind) < (round_, kind) else ""
            raise PeerError(f"expected {waiting_for}, the peer sent {name} of round {got_round}{replay}")
        return payload

    async def exchange(self, kind: Kind, round_: int, payload: bytes) -> bytes:
        """Send ours and receive theirs concurrently (neither side waits for the other to read first)."""
        sent = asyncio.ensure_future(self.send(kind, round_, payload))
        try:
            received = await self.receive(kind, round_)
        except BaseException:
            sent.cancel()
            raise
        await sent
        return received

    async def abort(self, reason: str) -> None:
        """Tell the peer we stop (best effort), then close."""
        try:
            body = _HEADER.pack(MAGIC, PROTOCOL_VERSION, int(Kind.ABORT), 0, self.session)
            frame = body + reason.encode("utf-8")[:500]
            self.writer.write(_LENGTH.pack(len(frame)) + frame)
            await asyncio.wait_for(self.writer.drain(), 2.0)
        except (OSError, TimeoutError, RuntimeError):
            pass
        await self.close()

    async def close(self) -> None:
        """Close the connection (best effort)."""
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 2.0)
        except (OSError, TimeoutError, RuntimeError):
            pass
