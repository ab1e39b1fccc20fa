"""A throwaway PostgreSQL cluster for the tests: initdb in a temp folder, a unix socket, no TCP.

One cluster per test session (``postgres_server`` in tests/conftest.py); each test
gets a fresh database in it. Everything is skipped with the reason when the server
binaries or psycopg are missing, or the cluster cannot start here: a missing
PostgreSQL is an environment gap, never a test failure.

initdb and postgres refuse to run as root, so as root the cluster runs as the
``nobody`` user through ``runuser`` (its folder is made traversable and owned by
nobody); the client connects over the socket with trust authentication.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Unavailable(Exception):
    """PostgreSQL cannot be used on this machine; the message is the skip reason."""


def find_bindir() -> Path:
    """The folder with initdb, pg_ctl and postgres: $PRIVACY_PLUGINS_PG_BINDIR, PATH, or Debian's layout."""
    candidates = [os.environ.get("PRIVACY_PLUGINS_PG_BINDIR", "")]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).resolve().parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in filter(None, candidates):
        if all((Path(folder) / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    raise Unavailable("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or /usr/lib/postgresql")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user(folder: Path) -> list[str]:
    """The command prefix that runs the server binaries as a non-root user (nothing if not root)."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        user = None
    if runuser is None or user is None:
        raise Unavailable("running as root and initdb refuses root; no runuser or no 'nobody' user to run it as")
    os.chown(folder, user.pw_uid, user.pw_gid)
    return [runuser, "-u", "nobody", "--"]


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield the SQLAlchemy URL of its ``postgres`` database; stop and remove it."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise Unavailable("psycopg is not installed (pip install 'psycopg[binary]', in the test extra)") from None
    bindir = find_bindir()
    top = Path(tempfile.mkdtemp(prefix="pp-pg-"))  # short: the socket path must stay under 107 bytes
    top.chmod(0o755)
    run = top / "run"
    run.mkdir()
    started = False
    try:
        prefix = _as_server_user(run)
        data, port = run / "data", _free_port()
        init = subprocess.run(
            [*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync",
             "-E", "UTF8", "--locale=C"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if init.returncode != 0:
            raise Unavailable(f"initdb failed here: {(init.stderr or init.stdout).strip()[-300:]}")
        options = f"-p {port} -k {run} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
        start = subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(run / "server.log"), "-w",
             "-t", "30", "start"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if start.returncode != 0:
            log = (run / "server.log").read_text(errors="replace") if (run / "server.log").exists() else ""
            raise Unavailable(f"the PostgreSQL server did not start here: {(log or start.stderr).strip()[-300:]}")
        started = True
        yield f"postgresql+psycopg://postgres@/postgres?host={run}&port={port}"
    finally:
        if started:
            subprocess.run(
                [*_as_server_user(run), str(bindir / "pg_ctl"), "-D", str(run / "data"), "-m", "immediate", "-w",
                 "stop"],
                capture_output=True, check=False,
            )  # fmt: skip
        shutil.rmtree(top, ignore_errors=True)
