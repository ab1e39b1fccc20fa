"""TLS for the DPP2GA connection (``--tls-cert/--tls-key/--tls-ca``), with the stdlib :mod:`ssl`.

The listening party is the TLS server: it needs a certificate and its key; with
a CA it also requires the connecting party's certificate signed by that CA
(mutual TLS: each party knows whom it talks to). The connecting party verifies
the server's certificate against the CA (its host name or IP must be in the
certificate) and presents its own certificate when given one. TLS 1.2 at least.

Without TLS an eavesdropper sees the frames: the handshake (k, record count,
group, the quasi-identifier *names*), singly encrypted ids, both first
partitions as sets of token digests, every round's grouping and the final
generalized values per class (enough to rebuild the published join), never a
raw value or a record id; and an active attacker in the middle can pose as the
peer. With TLS it sees sizes and timing only.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from privacy_plugins.errors import ConfigurationError

__all__ = ["tls_context", "tls_reason"]


def _readable(path: Path, flag: str) -> str:
    if not path.is_file():
        raise ConfigurationError(f"{flag} {str(path)!r}: no such file")
    return str(path)


def tls_context(
    *, listening: bool, cert: Path | None = None, key: Path | None = None, ca: Path | None = None
) -> ssl.SSLContext | None:
    """The context for one party, or ``None`` when no TLS flag is given.

    Raises:
        ConfigurationError: a listening party without certificate and key, a certificate
            without its key (or the reverse), a file that does not exist or does not load.
    """
    if cert is None and key is None and ca is None:
        return None
    if (cert is None) != (key is None):
        raise ConfigurationError("--tls-cert and --tls-key go together (the certificate and its private key)")
    if listening and cert is None:
        raise ConfigurationError("the listening party is the TLS server: give --tls-cert and --tls-key")
    if not listening and ca is None:
        raise ConfigurationError("the connecting party verifies the listener's certificate: give --tls-ca")
    purpose = ssl.Purpose.CLIENT_AUTH if listening else ssl.Purpose.SERVER_AUTH
    try:
        context = ssl.create_default_context(purpose, cafile=_readable(ca, "--tls-ca") if ca else None)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if cert is not None and key is not None:
            context.load_cert_chain(_readable(cert, "--tls-cert"), _readable(key, "--tls-key"))
    except ssl.SSLError as exc:
        raise ConfigurationError(f"the TLS certificate, key or CA does not load: {exc.reason or exc}") from exc
    if listening and ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED  # mutual TLS: the connecting party must prove who it is
    return context


def tls_reason(exc: BaseException) -> str:
    """Why a TLS handshake or record failed, in a few words (OpenSSL's reason, no traceback).

    Example:
        >>> tls_reason(ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)"))
        'wrong version number'
    """
    verify = getattr(exc, "verify_message", None)
    if verify:
        return f"certificate verify failed: {verify}"
    reason = getattr(exc, "reason", None)
    if reason == "WRONG_VERSION_NUMBER":  # plain bytes where a TLS record was due
        return "the peer does not speak TLS (wrong version number)"
    if isinstance(exc, ssl.SSLError) and reason:
        return str(reason).replace("_", " ").lower()
    if isinstance(exc, ssl.SSLError) and len(exc.args) > 1:
        text = str(exc.args[1])
        return text.split("] ", 1)[-1].split(" (_ssl.c", 1)[0]
    if isinstance(exc, ConnectionAbortedError) and str(exc):
        return str(exc)  # asyncio's handshake timeout
    if isinstance(exc, ConnectionError | EOFError):
        return (
            "the peer closed the connection during the handshake (does it use TLS and trust this party's certificate?)"
        )
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
