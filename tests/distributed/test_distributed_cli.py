"""``privacy-plugins distributed-party``: two parties from the command line, TLS, exit 2 and nothing written."""

from __future__ import annotations

import datetime
import importlib.util
import ipaddress
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.cli import main
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure

Slides = tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]
#: The x25519 group (the default) needs the ``distributed`` extra; without it these tests skip.
needs_cryptography = pytest.mark.skipif(
    importlib.util.find_spec("cryptography") is None, reason="needs the 'distributed' extra (cryptography)"
)


REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def parts(slide_files: Path, tmp_path: Path) -> dict[str, list[str]]:
    """The slides' two parts as CSV files and a hierarchy folder; the common arguments of each party."""
    folder = slide_files
    common = ["distributed-party", "--id-column", "ID", "--hierarchies", str(folder), "--k", "3", "--timeout", "20"]
    return {
        "initiator": [*common, "--role", "initiator", "--data", str(tmp_path / "p1.csv"),
                      "--quasi-identifiers", "AREA,POSITION", "--out", str(tmp_path / "out_a.csv")],
        "responder": [*common, "--role", "responder", "--data", str(tmp_path / "p2.csv"),
                      "--quasi-identifiers", "SALARY", "--out", str(tmp_path / "out_b.csv")],
    }  # fmt: skip


def _both(first: list[str], second: list[str]) -> tuple[int, int]:
    """Run two CLI parties in two threads (each its own event loop)."""
    codes: dict[str, int] = {}

    def run(name: str, argv: list[str]) -> None:
        codes[name] = main(argv)

    threads = [threading.Thread(target=run, args=("a", first)), threading.Thread(target=run, args=("b", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return codes["a"], codes["b"]


def _check_join(tmp_path: Path) -> None:
    a, b = pd.read_csv(tmp_path / "out_a.csv", dtype=str), pd.read_csv(tmp_path / "out_b.csv", dtype=str)
    assert a.equals(b) and list(a.columns) == ["AREA", "POSITION", "SALARY"] and len(a) == 12
    assert measure(a, quasi_identifiers=list(a.columns)).k >= 3
    assert "ID" not in a.columns


@needs_cryptography
def test_two_cli_parties(parts: dict[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    address = f"127.0.0.1:{_free_port()}"
    codes = _both([*parts["initiator"], "--listen", address], [*parts["responder"], "--connect", address])
    assert codes == (0, 0), capsys.readouterr().err
    _check_join(tmp_path)
    out = capsys.readouterr().out
    assert "rounds" in out and "Data Mining" not in out  # the summary holds no raw value


def test_two_processes(parts: dict[str, list[str]], tmp_path: Path) -> None:
    """The responder in its own process (the console entry point), the initiator here."""
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    peer = subprocess.Popen(
        [sys.executable, "-m", "privacy_plugins.cli", *parts["responder"], "--listen", address, "--group", "modp2048"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert main([*parts["initiator"], "--connect", address, "--group", "modp2048"]) == 0
        _, err = peer.communicate(timeout=60)
    finally:
        peer.kill()
    assert peer.returncode == 0, err
    _check_join(tmp_path)


def _certificate(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1 signed by it (used by both parties)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dpp2ga test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    leaf = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    pem = serialization.Encoding.PEM
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(leaf.public_bytes(pem))
    paths[2].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


@needs_cryptography
def test_mutual_tls(parts: dict[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ca, cert, key = _certificate(tmp_path)
    tls = ["--tls-cert", str(cert), "--tls-key", str(key), "--tls-ca", str(ca)]
    address = f"127.0.0.1:{_free_port()}"
    codes = _both([*parts["initiator"], "--listen", address, *tls], [*parts["responder"], "--connect", address, *tls])
    assert codes == (0, 0), capsys.readouterr().err
    _check_join(tmp_path)


@needs_cryptography
def test_tls_rejects_an_untrusted_listener(
    parts: dict[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cert, key = _certificate(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca, _, _ = _certificate(tmp_path / "other")
    address = f"127.0.0.1:{_free_port()}"
    server = [*parts["initiator"], "--listen", address, "--tls-cert", str(cert), "--tls-key", str(key),
              "--timeout", "3"]  # fmt: skip
    client = [*parts["responder"], "--connect", address, "--tls-ca", str(other_ca)]
    assert _both(server, client) == (2, 2)
    err = capsys.readouterr().err
    assert "certificate verify failed" in err and "no peer connected" not in err
    assert err.count("TLS handshake with 127.0.0.1:") == 2 and err.count("\n") == 2
    assert not (tmp_path / "out_a.csv").exists() and not (tmp_path / "out_b.csv").exists()


def _fake_peer(behaviour: Callable[[socket.socket], None]) -> Iterator[str]:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            behaviour(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"127.0.0.1:{port}"
    thread.join(10)
    server.close()


def _close_after_hello(connection: socket.socket) -> None:
    connection.recv(4096)
    connection.close()


def _garbage(connection: socket.socket) -> None:
    connection.recv(4096)
    connection.sendall(b"\x00\x00\x00\x28" + b"HTTP/1.1 400 Bad Request\r\n" + bytes(14))


def _stall(connection: socket.socket) -> None:
    connection.recv(4096)
    threading.Event().wait(3)


@needs_cryptography
@pytest.mark.parametrize(
    "behaviour, message",
    [(_close_after_hello, "closed the connection"), (_garbage, "not a DPP2GA frame"), (_stall, "no message")],
)
def test_peer_failure_exits_2_and_writes_nothing(
    parts: dict[str, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    behaviour: Callable[[socket.socket], None],
    message: str,
) -> None:
    for address in _fake_peer(behaviour):
        code = main([*parts["initiator"], "--connect", address, "--timeout", "1"])
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not any(p.name.startswith(".out_a") or p.name == "out_a.csv" for p in tmp_path.iterdir())


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--listen", "127.0.0.1"], "HOST:PORT"),
        (["--listen", "127.0.0.1:0", "--tls-ca", "ca.pem"], "give --tls-cert and --tls-key"),
        (["--connect", "127.0.0.1:9", "--tls-cert", "c.pem"], "go together"),
        (["--connect", "127.0.0.1:9", "--k", "13"], "cannot be 13-anonymous"),
    ],
)
def test_bad_input_exits_2_before_any_connection(
    parts: dict[str, list[str]], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main([*parts["initiator"], *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("spelling", ["--qi", "--quasi"])
def test_only_the_vocabulary_flag(
    parts: dict[str, list[str]], capsys: pytest.CaptureFixture[str], spelling: str
) -> None:
    argv = [a if a != "--quasi-identifiers" else spelling for a in parts["initiator"]]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--listen", "127.0.0.1:0"])
    assert exit_.value.code == 2 and "required: --quasi-identifiers" in capsys.readouterr().err
