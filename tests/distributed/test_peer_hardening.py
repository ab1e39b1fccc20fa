"""A hostile peer against the real CLI over real sockets: every malformed message is exit 2, one line, nothing written.

The hostile peer is an honest party (the real runner on the slides' second
part) whose channel replaces one message with the attacker's bytes, so the
attack lands exactly where the protocol is: before the handshake (HELLO),
in the middle (SETUP, ANSWER, GROUPING) or at the end (LABELS).
"""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import ipaddress
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privacy_plugins.cli import main
from privacy_plugins.core.distributed import LocalParty
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.distributed import make_cipher
from privacy_plugins.distributed.runner import run_party_async
from privacy_plugins.distributed.wire import MAGIC, PROTOCOL_VERSION, Channel, Kind
from privacy_plugins.errors import ProtocolError

# The parties use the default x25519 group and the TLS cases make certificates: both need cryptography.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cryptography") is None, reason="needs the 'distributed' extra (cryptography)"
)

Slides = tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]
REPO = Path(__file__).resolve().parents[2]
DEEP = b"[" * 200_000
HONEST_HELLO = {"protocol": "dpp2ga", "version": 1, "role": "responder", "k": 3, "records": 12,
                "group": "x25519:rfc7748", "columns": ["SALARY"], "steps": 2, "nonce": "ab" * 16}  # fmt: skip


class TamperingChannel(Channel):
    """A channel that sends ``payload`` instead of its own message of ``kind``."""

    def __init__(self, *args: object, kind: Kind, payload: bytes, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.kind, self.payload = kind, payload

    async def send(self, kind: Kind, round_: int, payload: bytes) -> None:
        await super().send(kind, round_, self.payload if kind == self.kind else payload)


def _hostile_peer(p2: pd.DataFrame, hierarchies: dict[str, Hierarchy], port: int, kind: Kind, payload: bytes) -> None:
    """The responder (SALARY) connecting to 127.0.0.1:port, one message replaced."""
    party = LocalParty.start(p2, id_column="ID", quasi_identifiers=["SALARY"], hierarchies=hierarchies, k=3)

    async def run() -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    return
                await asyncio.sleep(0.05)
        channel = TamperingChannel(reader, writer, timeout=10, kind=kind, payload=payload)
        try:
            await run_party_async(channel, party, make_cipher("x25519"), role="responder")
        except Exception:  # the CLI party hangs up on us: that is the point
            pass

    asyncio.run(run())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def parts(slide_files: Path, tmp_path: Path) -> list[str]:
    """The initiator's command line (the slides' first part); the hierarchies and the responder's part too."""
    folder = slide_files
    return ["distributed-party", "--id-column", "ID", "--hierarchies", str(folder), "--k", "3", "--timeout", "10",
            "--role", "initiator", "--data", str(tmp_path / "p1.csv"), "--quasi-identifiers", "AREA,POSITION",
            "--out", str(tmp_path / "out.csv")]  # fmt: skip


def _responder(initiator: list[str]) -> list[str]:
    """The responder's command line next to the initiator's."""
    tmp_path = Path(initiator[initiator.index("--data") + 1]).parent
    swap = {"initiator": "responder", str(tmp_path / "p1.csv"): str(tmp_path / "p2.csv"),
            "AREA,POSITION": "SALARY", str(tmp_path / "out.csv"): str(tmp_path / "out_b.csv")}  # fmt: skip
    return [swap.get(a, a) for a in initiator]


def _nothing_written(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.startswith(("out", ".out"))]


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("privacy-plugins: error: ")
    return err


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    "kind, payload, message",
    [
        (Kind.HELLO, DEEP, "the peer sent a malformed HELLO message: JSON nested too deeply"),
        (Kind.HELLO, b'{"k": ' + DEEP, "the peer sent a malformed HELLO message: JSON nested too deeply"),
        (Kind.HELLO, b"\xff\xfe{}", "the peer sent a malformed HELLO message: not UTF-8"),
        (Kind.HELLO, b"[1, 2]", "the peer sent a malformed HELLO message: a JSON array, not a JSON object"),
        (Kind.HELLO, b'"hello"', "the peer sent a malformed HELLO message: 'hello', not a JSON object"),
        (Kind.HELLO, b"{", "the peer sent a malformed HELLO message: not valid JSON"),
        (Kind.HELLO, _json({k: v for k, v in HONEST_HELLO.items() if k != "k"}), "field 'k' is missing"),
        (Kind.HELLO, _json({**HONEST_HELLO, "k": "3"}), "field 'k' is '3', not an integer"),
        (Kind.HELLO, _json({**HONEST_HELLO, "records": True}), "field 'records' is true, not an integer"),
        (Kind.HELLO, _json({**HONEST_HELLO, "version": 1.0}), "field 'version' is 1.0, not an integer"),
        (Kind.HELLO, _json({**HONEST_HELLO, "columns": "SALARY"}), "field 'columns' is 'SALARY', not an array"),
        (
            Kind.HELLO,
            _json({**HONEST_HELLO, "columns": [["SALARY"]]}),
            "field 'columns' holds a JSON array where a string is due",
        ),
        (Kind.HELLO, _json({**HONEST_HELLO, "columns": ["S", "S"]}), "field 'columns' must list"),
        (Kind.HELLO, _json({**HONEST_HELLO, "columns": ["\ud800"]}), "not valid Unicode"),
        (Kind.HELLO, _json({**HONEST_HELLO, "columns": ["SAL\x1b[8mARY"]}), "holds the name 'SAL\\x1b[8mARY'"),
        (Kind.HELLO, _json({**HONEST_HELLO, "columns": [""]}), "field 'columns' holds the name ''"),
        (Kind.HELLO, _json({**HONEST_HELLO, "role": "both"}), "field 'role' is 'both'"),
        (Kind.HELLO, _json({**HONEST_HELLO, "steps": -1}), "field 'steps' is -1, not a count"),
        (Kind.HELLO, _json({**HONEST_HELLO, "nonce": 5}), "field 'nonce' is 5, not a string"),
        (Kind.HELLO, _json({**HONEST_HELLO, "group": "\x1b[2J" + "x" * 100_000}), "the peer's '\\x1b[2Jxxx"),
        (Kind.HELLO, b" " * (1 << 21), "where a HELLO of at most 1048576 bytes was due"),
        (Kind.SETUP, struct.pack(">II", 0xFFFFFFFF, 32), "malformed SETUP message: 4294967295 classes"),
        (Kind.SETUP, struct.pack(">II", 1, 7), "malformed SETUP message: elements of 7 bytes, not 32"),
        (Kind.SETUP, b"\x00\x00", "malformed SETUP message: 2 bytes"),
        (Kind.SETUP, struct.pack(">II", 3, 32) + bytes(5), "malformed SETUP message: cut short in its 3 class sizes"),
        (Kind.ANSWER, struct.pack(">III", 1, 16, 12) + bytes(16 * 11), "malformed ANSWER message: sizes"),
        (Kind.GROUPING, struct.pack(">I", 0xFFFFFFFF), "malformed GROUPING message"),
        (Kind.LABELS, b'{"labels": ' + DEEP, "the peer sent a malformed LABELS message: JSON nested too deeply"),
        (Kind.LABELS, b'[{"labels": []}]', "malformed LABELS message: a JSON array, not a JSON object"),
        (
            Kind.LABELS,
            _json({"labels": [[["x"]]]}),
            "malformed LABELS message: field 'labels' holds a JSON array where",
        ),
        (
            Kind.LABELS,
            _json({"labels": [[1]]}),
            "malformed LABELS message: field 'labels' holds 1 where a string is due",
        ),
        (Kind.LABELS, _json({"labels": [["a", "b"]]}), "malformed LABELS message: a row of 2 values"),
        (Kind.LABELS, _json({"labels": [["\udfff"]]}), "malformed LABELS message: field 'labels' holds text"),
        (Kind.LABELS, _json({"labels": {"0": ["x"]}}), "malformed LABELS message: field 'labels' is a JSON object"),
        (Kind.LABELS, _json({"rows": []}), "malformed LABELS message: field 'labels' is null"),
    ],
    ids=lambda value: value.name if isinstance(value, Kind) else value[-40:] if isinstance(value, str) else "",
)
def test_malformed_message_from_the_peer(
    slides: Slides, parts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    kind: Kind, payload: bytes, message: str,
) -> None:  # fmt: skip
    """The CLI listens; any client that connects and sends nonsense gets exit 2 and one line naming the peer."""
    _, p2, hierarchies = slides
    port = _free_port()
    peer = threading.Thread(target=_hostile_peer, args=(p2, hierarchies, port, kind, payload), daemon=True)
    peer.start()
    try:
        code = main([*parts, "--listen", f"127.0.0.1:{port}"])
    finally:
        peer.join(20)
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and message in err and len(err) < 600, err
    _nothing_written(tmp_path)


@pytest.mark.parametrize("kind", [Kind.HELLO, Kind.LABELS], ids=lambda kind: kind.name)
def test_deep_nesting_in_a_process(slides: Slides, parts: list[str], tmp_path: Path, kind: Kind) -> None:
    """The console entry point in its own process: exit 2 and one line (the old code died with a RecursionError)."""
    _, p2, hierarchies = slides
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    party = subprocess.Popen(
        [sys.executable, "-m", "privacy_plugins.cli", *parts, "--listen", f"127.0.0.1:{port}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        payload = DEEP if kind == Kind.HELLO else b'{"labels":' + DEEP
        _hostile_peer(p2, hierarchies, port, kind, payload)
        out, err = party.communicate(timeout=60)
    finally:
        party.kill()
    assert party.returncode == 2 and out == "", (party.returncode, err)
    assert f"the peer sent a malformed {kind.name} message: JSON nested too deeply" in _one_line(err)
    _nothing_written(tmp_path)


def _serve_once(reply: bytes) -> Iterator[str]:
    """A listener on 127.0.0.1 that reads the party's HELLO, sends ``reply`` and closes."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(20)

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            connection.settimeout(10)
            connection.recv(4096)
            connection.sendall(reply)
            time.sleep(0.5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    thread.join(20)
    server.close()


def _frame(kind: Kind, payload: bytes) -> bytes:
    body = struct.pack(">4sBBI16s", MAGIC, PROTOCOL_VERSION, int(kind), 0, bytes(16)) + payload
    return struct.pack(">I", len(body)) + body


def test_the_peers_abort_reason_is_escaped_and_marked(
    parts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = "\x1b[31mYOUR DISK IS FULL\x1b[0m\r\nprivacy-plugins: all fine \u202e" + "A" * 5000
    for address in _serve_once(_frame(Kind.ABORT, reason.encode())):
        assert main([*parts, "--connect", address]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err
    assert "its reason (the peer's words): '\\x1b[31mYOUR DISK IS FULL\\x1b[0m\\r\\nprivacy-plugins" in err
    assert "\\u202e" in err and len(err) < 400 and "(cut, " in err
    _nothing_written(tmp_path)


def test_a_non_hex_nonce_names_the_field(parts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 4 against a listening fake peer (the CLI connects): no bare ``fromhex()`` message."""
    for address in _serve_once(_frame(Kind.HELLO, _json({**HONEST_HELLO, "nonce": "zz" * 16}))):
        assert main([*parts, "--connect", address]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "the peer sent a malformed HELLO message: field 'nonce' is 'zzzz" in err
    assert "not 32 hexadecimal digits" in err and "fromhex" not in err
    _nothing_written(tmp_path)


@pytest.mark.parametrize("nonce", ["0" * 31 + " ", " 0" * 16, "٠" * 32, "0x" + "0" * 30])
def test_only_hex_digits_are_a_nonce(
    parts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], nonce: str
) -> None:
    for address in _serve_once(_frame(Kind.HELLO, _json({**HONEST_HELLO, "nonce": nonce}))):
        assert main([*parts, "--connect", address]) == 2
    assert "field 'nonce'" in _one_line(capsys.readouterr().err)


def _authority(folder: Path, name: str) -> dict[str, Path]:
    """A throwaway CA and a certificate for 127.0.0.1 signed by it, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} test CA")])

    def builder(subject: x509.Name, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(public)
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )  # fmt: skip

    ca = builder(ca_name, ca_key.public_key()).add_extension(
        x509.BasicConstraints(ca=True, path_length=None), critical=True
    )
    leaf = builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]), key.public_key()).add_extension(
        x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
    )
    pem = serialization.Encoding.PEM
    paths = {part: folder / f"{name}-{part}.pem" for part in ("ca", "cert", "key")}
    paths["ca"].write_bytes(ca.sign(ca_key, hashes.SHA256()).public_bytes(pem))
    paths["cert"].write_bytes(leaf.sign(ca_key, hashes.SHA256()).public_bytes(pem))
    paths["key"].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


def _tls(authority: dict[str, Path], *, trust: dict[str, Path] | None = None) -> list[str]:
    """This party's certificate from ``authority``; trusting ``trust``'s CA (default: the same)."""
    ca = (trust or authority)["ca"]
    return ["--tls-cert", str(authority["cert"]), "--tls-key", str(authority["key"]), "--tls-ca", str(ca)]


CERTIFICATE_REFUSED = "certificate verify failed: unable to get local issuer certificate"
HUNG_UP = "the peer closed the connection"
NOT_TLS = "the peer uses TLS and this party does not"


@pytest.mark.parametrize(
    "case, listener_says, client_says",
    [
        pytest.param(
            "client from another CA", CERTIFICATE_REFUSED, HUNG_UP + " before its first message", id="client-CA"
        ),
        pytest.param("server from another CA", HUNG_UP + " during the handshake", CERTIFICATE_REFUSED, id="server-CA"),
        pytest.param(
            "plaintext client", "the peer does not speak TLS (this party requires TLS)", NOT_TLS, id="plain-client"
        ),
        # The client's handshake reads the listener's plain HELLO, or finds the connection closed first.
        pytest.param(
            "plaintext listener",
            NOT_TLS,
            "the peer does not speak TLS (wrong version number)|" + HUNG_UP + " during",
            id="plain-listener",
        ),
    ],
)
def test_tls_failures_are_reported_at_once_on_both_sides(
    parts: list[str], tmp_path: Path, case: str, listener_says: str, client_says: str
) -> None:
    """Both real processes stop within seconds (not --timeout 30) with one line naming the TLS handshake."""
    ours, other = _authority(tmp_path, "ours"), _authority(tmp_path, "other")
    listener_tls, client_tls = {
        "client from another CA": (_tls(ours), _tls(other, trust=ours)),
        "server from another CA": (_tls(other, trust=ours), _tls(ours)),
        "plaintext client": (_tls(ours), []),
        "plaintext listener": ([], _tls(ours)),
    }[case]
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    timeout = ["--timeout", "30"]
    commands = [
        [*parts, "--listen", f"127.0.0.1:{port}", *listener_tls, *timeout],
        [*_responder(parts), "--connect", f"127.0.0.1:{port}", *client_tls, *timeout],
    ]
    started = time.monotonic()
    processes = [
        subprocess.Popen([sys.executable, "-m", "privacy_plugins.cli", *argv], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for argv in commands
    ]  # fmt: skip
    try:
        results = [process.communicate(timeout=60) for process in processes]
    finally:
        for process in processes:
            process.kill()
    seconds = time.monotonic() - started
    for process, (out, err), says in zip(processes, results, [listener_says, client_says], strict=True):
        assert process.returncode == 2 and out == "", (process.returncode, err)
        line = _one_line(err)
        assert line.startswith("privacy-plugins: error: TLS handshake with 127.0.0.1:"), line
        assert any(alternative in line for alternative in says.split("|")), line
        assert "BEGIN" not in line and "PRIVATE" not in line
    assert seconds < 20, seconds  # the old listener waited the whole --timeout for a peer
    _nothing_written(tmp_path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def _json_mutation(path: list[int], value: object) -> Callable[[bytes], bytes]:
    """Replace the node at ``path`` (indices taken modulo each container's size) of a JSON message by ``value``."""

    def mutate(original: bytes) -> bytes:
        document = json.loads(original)
        parent: Any = None
        key: Any = None
        node = document
        for step in path:
            if isinstance(node, dict) and node:
                key = sorted(node)[step % len(node)]
            elif isinstance(node, list) and node:
                key = step % len(node)
            else:
                break
            parent, node = node, node[key]
        if parent is None:
            return _json(value)
        parent[key] = value
        return _json(document)

    return mutate


def _binary_mutation(operation: str, fraction: float, data: bytes) -> Callable[[bytes], bytes]:
    """Cut, overwrite or insert ``data`` at a relative position of a binary message."""

    def mutate(original: bytes) -> bytes:
        at = int(fraction * len(original))
        if operation == "cut":
            return original[:at]
        if operation == "overwrite":
            return original[:at] + data + original[at + len(data) :]
        return original[:at] + data + original[at:]

    return mutate


JSON_MUTATIONS = st.builds(_json_mutation, st.lists(st.integers(0, 50), max_size=4), JSON)
BINARY_MUTATIONS = st.builds(
    _binary_mutation,
    st.sampled_from(["cut", "overwrite", "insert"]),
    st.floats(0, 1),
    st.binary(min_size=1, max_size=8) | st.integers(0, 2**32 - 1).map(lambda n: struct.pack(">I", n)),
)
MUTATIONS = st.one_of(
    st.tuples(st.sampled_from([Kind.HELLO, Kind.LABELS]), JSON_MUTATIONS),
    st.tuples(st.sampled_from([Kind.SETUP, Kind.ANSWER, Kind.GROUPING]), BINARY_MUTATIONS),
)


class MutatingChannel(Channel):
    """A channel that passes its own message of ``kind`` through ``mutate`` before sending it."""

    def __init__(self, *args: object, kind: Kind, mutate: Callable[[bytes], bytes], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.kind, self.mutate = kind, mutate

    async def send(self, kind: Kind, round_: int, payload: bytes) -> None:
        await super().send(kind, round_, self.mutate(payload) if kind == self.kind else payload)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutation=MUTATIONS)
def test_any_mutated_message_from_the_peer_is_a_protocol_error(
    slides: Slides, mutation: tuple[Kind, Callable[[bytes], bytes]]
) -> None:
    """An honest peer's message with any node or bytes changed: the run ends well or with a one-line ProtocolError."""
    p1, p2, hierarchies = slides
    kind, mutate = mutation

    async def scenario() -> None:
        ours = LocalParty.start(
            p1, id_column="ID", quasi_identifiers=["AREA", "POSITION"], hierarchies=hierarchies, k=3
        )
        theirs = LocalParty.start(p2, id_column="ID", quasi_identifiers=["SALARY"], hierarchies=hierarchies, k=3)
        accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Future()
        server = await asyncio.start_server(lambda r, w: accepted.set_result((r, w)), "127.0.0.1", 0)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        peer_reader, peer_writer = await accepted
        server.close()
        hostile = MutatingChannel(peer_reader, peer_writer, timeout=5, kind=kind, mutate=mutate)
        victim, _ = await asyncio.gather(
            run_party_async(Channel(reader, writer, timeout=5), ours, make_cipher("x25519"), role="initiator"),
            run_party_async(hostile, theirs, make_cipher("x25519"), role="responder"),
            return_exceptions=True,
        )
        if isinstance(victim, BaseException):
            assert isinstance(victim, ProtocolError), repr(victim)
            text = str(victim)
            assert "\n" not in text and "\r" not in text and len(text) < 600, text
            assert "no message from the peer within" not in text  # nothing made either side hang
        else:  # a change the protocol cannot detect (another label, another valid grouping): text only
            assert all(isinstance(value, str) for value in victim.table.to_numpy().ravel())

    asyncio.run(scenario())
