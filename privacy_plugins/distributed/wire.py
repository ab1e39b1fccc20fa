"""Framed, versioned DPP2GA messages over asyncio streams.

A frame is ``length (u32, big-endian) | magic "DPP2" | version (u8) | kind (u8)
| round (u32) | session (16 bytes) | payload``; ``length`` counts everything
after itself and may not exceed the receiver's maximum. Every read has a
timeout. The session id (from both parties' handshake nonces) and the (kind,
round) each side expects next reject garbage, frames of another session and
replayed rounds, each with an error saying which.

Everything the peer sends is hostile input: every decoder checks sizes before
allocating and types before use, and any failure is a one-line
:class:`PeerError` saying the peer sent it (never a ``RecursionError``, a
``struct.error`` or a NumPy message). Text of the peer's that reaches one of
our messages (an ABORT reason, a bad field) goes through :func:`peer_text`:
quoted, control characters escaped, length-capped.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import struct
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from privacy_plugins.distributed.tls import tls_reason
from privacy_plugins.errors import PeerError

__all__ = [
    "DEFAULT_MAX_FRAME",
    "DEFAULT_TIMEOUT",
    "PROTOCOL_NAME",
    "PROTOCOL_VERSION",
    "Channel",
    "Kind",
    "PeerError",
    "address_text",
    "decode_classes",
    "decode_grouping",
    "decode_json",
    "encode_classes",
    "encode_grouping",
    "encode_json",
    "peer_text",
]

#: What a HELLO says it speaks (the wire protocol's name, which is also the algorithm's).
PROTOCOL_NAME = "dpp2ga"
PROTOCOL_VERSION = 1
MAGIC = b"DPP2"
#: Largest frame accepted (the first partition of 1M ids under MODP-2048 is ~256 MB: raise it for that).
DEFAULT_MAX_FRAME = 64 * 1024 * 1024
#: Seconds to wait for any one frame (the peer may be encrypting n ids meanwhile).
DEFAULT_TIMEOUT = 300.0
_HEADER = struct.Struct(">4sBBI16s")
_LENGTH = struct.Struct(">I")
NO_SESSION = bytes(16)
# A TLS record header (content type, then version 3.x) where a frame length is due: the peer speaks TLS.
_TLS_RECORDS = frozenset({0x14, 0x15, 0x16, 0x17})
_TLS_VERSIONS = frozenset({b"\x03\x00", b"\x03\x01", b"\x03\x02", b"\x03\x03", b"\x03\x04"})
#: Characters of the peer's own text (an ABORT reason, a field value) shown in one of our messages.
PEER_TEXT_LIMIT = 200


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


def peer_text(value: object, limit: int = PEER_TEXT_LIMIT) -> str:
    r"""The peer's words or value for one of our messages: quoted, control characters escaped, cut at ``limit``.

    Whatever the peer sends (ANSI escapes, newlines, a megabyte) prints as one
    inert line; containers show as their JSON type only, never their content.

    Example:
        >>> peer_text("bad \x1b[31mred\x1b[0m\nsecond line")
        "'bad \\x1b[31mred\\x1b[0m\\nsecond line'"
        >>> peer_text("x" * 300, limit=4)
        "'xxxx' (cut, 300 characters)"
        >>> peer_text([1, [2]]), peer_text(True), peer_text(None)
        ('a JSON array', 'true', 'null')
    """
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list | tuple):
        return "a JSON array"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        digits = str(value)  # JSON bounds the digits (ValueError beyond sys.get_int_max_str_digits)
        return digits if len(digits) <= limit else f"{digits[:limit]}… ({len(digits)} digits)"
    text = value if isinstance(value, str) else str(value)
    shown = repr(text[:limit])  # repr escapes every non-printable character (C0/C1 controls, bidi marks)
    return shown if len(text) <= limit else f"{shown} (cut, {len(text)} characters)"


def decode_json(payload: bytes, what: str) -> dict[str, Any]:
    """A JSON object, or :class:`PeerError` naming the message (never a ``RecursionError`` on deep nesting)."""
    try:
        value = json.loads(payload.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PeerError(f"the peer sent a malformed {what} message: not UTF-8 text") from exc
    except RecursionError as exc:
        raise PeerError(f"the peer sent a malformed {what} message: JSON nested too deeply") from exc
    except ValueError as exc:
        raise PeerError(f"the peer sent a malformed {what} message: not valid JSON") from exc
    if not isinstance(value, dict):
        raise PeerError(f"the peer sent a malformed {what} message: {peer_text(value)}, not a JSON object")
    return value


def encode_classes(classes: Sequence[Sequence[bytes]], element_size: int) -> bytes:
    """``n (u32) | element size (u32) | n sizes (u32) | elements``."""
    sizes = [len(c) for c in classes]
    head = struct.pack(f">II{len(sizes)}I", len(sizes), element_size, *sizes)
    return head + b"".join(element for cls in classes for element in cls)


def decode_classes(payload: bytes, element_size: int, what: str, *, records: int) -> list[list[bytes]]:
    """The inverse of :func:`encode_classes`, checking every length before allocating.

    ``records`` is the agreed record count: the classes must hold exactly that many elements.
    """
    if len(payload) < 8:
        raise PeerError(f"the peer sent a malformed {what} message: {len(payload)} bytes, shorter than its header")
    n, size = struct.unpack_from(">II", payload)
    if size != element_size:
        raise PeerError(f"the peer sent a malformed {what} message: elements of {size} bytes, not {element_size}")
    if n > records:
        raise PeerError(f"the peer sent a malformed {what} message: {n} classes for {records} records")
    if len(payload) < 8 + 4 * n:
        raise PeerError(f"the peer sent a malformed {what} message: cut short in its {n} class sizes")
    sizes = np.frombuffer(payload, dtype=">u4", count=n, offset=8).astype(np.int64)
    start = 8 + 4 * n
    if int(sizes.sum()) != records or len(payload) != start + size * records:
        raise PeerError(f"the peer sent a malformed {what} message: sizes do not add up to {records} records")
    out, at = [], start
    for count in sizes.tolist():
        out.append([payload[i : i + size] for i in range(at, at + count * size, size)])
        at += count * size
    return out


def encode_grouping(groups: Sequence[int]) -> bytes:
    """``n (u32) | n class numbers (u32)``."""
    return struct.pack(f">I{len(groups)}I", len(groups), *groups)


def decode_grouping(payload: bytes, classes: int) -> list[int]:
    """The inverse of :func:`encode_grouping`; ``classes`` is the number of classes the peer sent in SETUP."""
    if len(payload) != 4 + 4 * classes or struct.unpack_from(">I", payload)[0] != classes:
        raise PeerError(f"the peer sent a malformed GROUPING message: not {classes} class numbers")
    return np.frombuffer(payload, dtype=">u4", count=classes, offset=4).astype(np.int64).tolist()


class Channel:
    """One connection: framed sends, timed and checked receives, byte counts.

    ``tap(direction, frame)`` sees every frame sent (``"out"``) and received
    (``"in"``), e.g. for a wire audit. Every failure of the connection or of
    the peer's bytes is a :class:`PeerError` (never an ``OSError`` or an
    ``ssl.SSLError``): the caller has one exception to turn into one line.
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
        self.peer = address_text(writer.get_extra_info("peername"))
        self.tls = writer.get_extra_info("sslcontext") is not None

    def _broken(self, exc: OSError, doing: str) -> PeerError:
        if isinstance(exc, ssl.SSLError) and self.bytes_received == 0:
            # TLS 1.3: the listener checks our certificate after our side of the handshake completed,
            # so its refusal arrives as an alert on the first read.
            return PeerError(f"TLS handshake with {self.peer} failed: {tls_reason(exc)}")
        if isinstance(exc, ssl.SSLError):
            return PeerError(f"the TLS connection to the peer at {self.peer} broke ({doing}): {tls_reason(exc)}")
        return PeerError(f"the connection to the peer broke ({doing}: {exc.strerror or type(exc).__name__})")

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
        except OSError as exc:
            raise self._broken(exc, f"sending {kind.name}") from exc

    async def _read(self, count: int, waiting_for: str) -> bytes:
        try:
            return await asyncio.wait_for(self.reader.readexactly(count), self.timeout)
        except TimeoutError as exc:
            raise PeerError(f"no message from the peer within {self.timeout:g} s (waiting for {waiting_for})") from exc
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            if self.tls and self.bytes_received == 0:
                # A listener that completed the handshake always sends its HELLO: one that hangs up first
                # refused us during the handshake (TLS 1.3 checks the client's certificate after the client is done).
                raise PeerError(
                    f"TLS handshake with {self.peer} failed: the peer closed the connection before its first "
                    "message (does it accept this party's certificate?)"
                ) from exc
            if isinstance(exc, asyncio.IncompleteReadError):
                raise PeerError(f"the peer closed the connection (waiting for {waiting_for})") from exc
            raise self._broken(exc, f"waiting for {waiting_for}") from exc
        except OSError as exc:  # ssl.SSLError (a TLS alert, a bad record)
            raise self._broken(exc, f"waiting for {waiting_for}") from exc

    def _check_length(self, head: bytes) -> int:
        (length,) = _LENGTH.unpack(head)
        if not self.tls and self.bytes_received == 0 and head[0] in _TLS_RECORDS and head[1:3] in _TLS_VERSIONS:
            raise PeerError(
                f"TLS handshake with {self.peer} failed: the peer uses TLS and this party does not "
                "(give both parties the --tls-* options)"
            )
        if length > self.max_frame:
            raise PeerError(f"the peer sent a frame of {length} bytes, more than the maximum {self.max_frame}")
        if length < _HEADER.size:
            raise PeerError(f"the peer sent a truncated frame ({length} bytes)")
        return int(length)

    async def receive(self, kind: Kind, round_: int, *, max_length: int | None = None) -> bytes:
        """The payload of the next frame, which must be ``kind`` of ``round_`` in this session.

        ``max_length`` bounds this frame below the channel's maximum (e.g. a HELLO needs little).
        """
        waiting_for = f"{kind.name} of round {round_}"
        length = self._check_length(await self._read(_LENGTH.size, waiting_for))
        if max_length is not None and length > _HEADER.size + max_length:
            raise PeerError(
                f"the peer sent a {length}-byte frame where a {kind.name} of at most {max_length} bytes was due"
            )
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
            reason = payload[: 4 * PEER_TEXT_LIMIT].decode("utf-8", "replace")
            raise PeerError(f"the peer aborted the protocol; its reason (the peer's words): {peer_text(reason)}")
        if session != self.session:
            raise PeerError("the peer sent a frame of another session (a replayed or misrouted message)")
        if (got_kind, got_round) != (kind, round_):
            name = Kind(got_kind).name if got_kind in Kind._value2member_map_ else f"kind {got_kind}"
            replay = " (a replayed old round)" if (got_round, got_kind) < (round_, kind) else ""
            raise PeerError(f"expected {waiting_for}, the peer sent {name} of round {got_round}{replay}")
        return payload

    async def exchange(self, kind: Kind, round_: int, payload: bytes, *, max_length: int | None = None) -> bytes:
        """Send ours and receive theirs concurrently (neither side waits for the other to read first)."""
        sent = asyncio.ensure_future(self.send(kind, round_, payload))
        try:
            received = await self.receive(kind, round_, max_length=max_length)
        except BaseException:
            sent.cancel()
            sent.add_done_callback(_consume)  # its own failure is the same broken connection: not a second report
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


def _consume(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()


def address_text(address: object) -> str:
    """``host:port`` of a socket address (``[v6]:port``), or ``"the peer"`` when unknown."""
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = address[0], address[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return "the peer"
