"""Open the one connection of a DPP2GA run: connect or accept, then the TLS handshake, each bounded in time.

The TLS handshake runs on the plain connection we hold (not inside the
listening server), so its failure reaches us: both sides stop at once with
"TLS handshake with HOST:PORT failed: reason" instead of a listener waiting
for a peer that already gave up. A listener expecting TLS first peeks at the
client's first byte: a client speaking plaintext gets a TLS alert (which its
channel recognizes) rather than a silent close.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import time
from collections.abc import Callable
from typing import cast

from privacy_plugins.distributed.tls import tls_reason
from privacy_plugins.distributed.wire import address_text
from privacy_plugins.errors import PeerError

__all__ = ["accept_peer", "connect_to_peer"]

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_TLS_HANDSHAKE_RECORD = 0x16
# A fatal "protocol_version" alert (TLS 1.2 record): what a TLS server answers to a client that is not speaking TLS.
_ALERT_NOT_TLS = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46])


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _reading(writer: asyncio.StreamWriter, on: bool) -> None:
    """Resume or pause reading the socket (a stream's transport is a full :class:`asyncio.Transport`)."""
    transport = cast(asyncio.Transport, writer.transport)
    if on:
        transport.resume_reading()
    else:
        transport.pause_reading()


async def _first_byte(writer: asyncio.StreamWriter, timeout: float) -> bytes | None:
    """The peer's first byte, left unread on the socket (``b""``: it closed; ``None``: cannot peek here)."""
    loop = asyncio.get_running_loop()
    transport_socket = writer.get_extra_info("socket")
    if transport_socket is None:
        return None
    probe = socket.socket(fileno=os.dup(transport_socket.fileno()))
    try:
        probe.setblocking(False)
        readable: asyncio.Future[None] = loop.create_future()
        try:
            loop.add_reader(probe.fileno(), _settle, readable)
        except NotImplementedError:  # pragma: no cover - Windows' proactor loop: the handshake will tell
            return None
        try:
            await asyncio.wait_for(readable, timeout)
        except TimeoutError as exc:
            raise PeerError(f"the peer at {address_text(writer.get_extra_info('peername'))} connected and "
                            f"sent nothing within {timeout:g} s") from exc  # fmt: skip
        finally:
            loop.remove_reader(probe.fileno())
        try:
            return probe.recv(1, socket.MSG_PEEK)
        except OSError:
            return b""
    finally:
        probe.close()


async def _secure(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, tls: ssl.SSLContext | None,
                  host: str | None, timeout: float) -> Streams:  # fmt: skip
    """Run the TLS handshake on a fresh connection (reading paused); its failure is one :class:`PeerError`."""
    if tls is None:
        _reading(writer, True)
        return reader, writer
    peer = address_text(writer.get_extra_info("peername"))
    try:
        if host is None:  # the listening side: is the client speaking TLS at all?
            first = await _first_byte(writer, timeout)
            if first is not None and first != bytes([_TLS_HANDSHAKE_RECORD]):
                if first:
                    writer.write(_ALERT_NOT_TLS)  # the client's channel reads it as "the peer uses TLS"
                reason = "the peer does not speak TLS" if first else "the peer closed the connection before starting it"
                raise PeerError(f"TLS handshake with {peer} failed: {reason} (this party requires TLS)")
        await writer.start_tls(tls, server_hostname=host, ssl_handshake_timeout=timeout)
    except PeerError:
        writer.transport.close()  # sends what is buffered (the alert), then closes
        raise
    except (OSError, EOFError) as exc:  # ssl.SSLError, a reset or a handshake timeout (ConnectionAbortedError)
        writer.transport.abort()
        raise PeerError(f"TLS handshake with {peer} failed: {tls_reason(exc)}") from exc
    except BaseException:
        writer.transport.abort()
        raise
    return reader, writer


async def connect_to_peer(host: str, port: int, *, timeout: float, tls: ssl.SSLContext | None) -> Streams:
    """Connect to the listening peer (retrying while it is not up yet, until ``timeout``), then TLS."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            break
        except (ConnectionRefusedError, TimeoutError) as exc:
            if time.monotonic() >= deadline:
                raise PeerError(f"could not connect to the peer at {host}:{port} within {timeout:g} s") from exc
            await asyncio.sleep(0.2)
    if tls is not None:
        _reading(writer, False)
    return await _secure(reader, writer, tls=tls, host=host, timeout=timeout)


async def accept_peer(
    host: str, port: int, *, timeout: float, tls: ssl.SSLContext | None, ready: Callable[[int], None] | None = None
) -> Streams:
    """The first connection to ``host:port`` (TLS handshake done): the peer. Later ones are closed."""
    accepted: asyncio.Future[Streams] = asyncio.get_running_loop().create_future()

    def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if accepted.done():
            writer.close()  # one peer per run
        else:
            # Called from connection_made: no byte is read before the TLS handshake takes over the socket.
            _reading(writer, False)
            accepted.set_result((reader, writer))

    server = await asyncio.start_server(handle, host, port)
    try:
        if ready is not None:
            ready(server.sockets[0].getsockname()[1])
        try:
            reader, writer = await asyncio.wait_for(asyncio.shield(accepted), timeout)
        except TimeoutError as exc:
            raise PeerError(f"no peer connected to {host}:{port} within {timeout:g} s") from exc
    finally:
        server.close()
    return await _secure(reader, writer, tls=tls, host=None, timeout=timeout)
