"""Up-front checks that a destination or report folder can be written — without creating anything.

A release that cannot write its result should say so when the spec is read,
not after loading, diagnosing and anonymizing. These checks only look: they
find the nearest existing ancestor of a path that does not exist yet and check
it is a writable folder on a real filesystem; an existing DuckDB, SQLite or
Parquet file must really be one (magic bytes); a SQLAlchemy URL's dialect and
driver must be importable. Every problem is a :class:`ConfigurationError`
whose message starts with the setting, e.g.
``destination.duckdb: /x/file.txt/out.duckdb: a parent is a file (/x/file.txt)``.

A server database (a URL that is not a SQLite or DuckDB file) is probed by
:func:`probe_database`: connected to, its schema found, and (PostgreSQL) the
user's right to create tables there checked — reading only, nothing created.

What they cannot see (a full disk, a lock held by another process, a server
that goes down later) still fails at publish, as a one-line ``PublishError``.
"""

from __future__ import annotations

import os
from pathlib import Path

from privacy_plugins.errors import ConfigurationError

__all__ = [
    "DUCKDB_MAGIC",
    "PARQUET_MAGIC",
    "SQLITE_MAGIC",
    "check_database_url",
    "check_writable_file",
    "check_writable_folder",
    "has_magic",
    "probe_database",
    "sqlite_file",
]

#: Seconds a server destination may take to answer the probe (PostgreSQL ``connect_timeout``).
CONNECT_TIMEOUT = 10

DUCKDB_MAGIC = (8, b"DUCK")
PARQUET_MAGIC = (0, b"PAR1")
SQLITE_MAGIC = (0, b"SQLite format 3\x00")

# Filesystems where files cannot be created even by root (os.access says yes there).
_PSEUDO_FILESYSTEMS = frozenset(
    {
        "proc",
        "sysfs",
        "devpts",
        "cgroup",
        "cgroup2",
        "securityfs",
        "debugfs",
        "tracefs",
        "configfs",
        "pstore",
        "bpf",
        "efivarfs",
        "binfmt_misc",
        "fusectl",
        "mqueue",
        "autofs",
        "nsfs",
    }
)


def has_magic(path: Path, magic: tuple[int, bytes]) -> bool:
    """True when ``path`` starts with the format's magic bytes at the format's offset."""
    offset, expected = magic
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(len(expected)) == expected
    except OSError:
        return False


def _filesystem_type(path: Path) -> str | None:
    """The type of the filesystem holding ``path`` (Linux: from /proc/self/mounts; else ``None``)."""
    try:
        lines = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    best: tuple[int, str] | None = None
    text = str(path)
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = text == mount or text.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) >= best[0]):
            best = (len(mount), fields[2])
    return best[1] if best else None


def _folder_problem(folder: Path) -> str | None:
    """Why files cannot be created in the existing folder ``folder`` (``None`` when they can)."""
    if not folder.is_dir():
        return f"{folder} is not a folder"
    fstype = _filesystem_type(folder)
    if fstype in _PSEUDO_FILESYSTEMS:
        return f"{folder} is on a {fstype} filesystem, where files cannot be created"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    return None


def _nearest_existing(path: Path) -> Path:
    """``path`` itself or its nearest ancestor that exists (as anything: file, folder, link)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(path.anchor or "/")


def _creatable(setting: str, path: Path) -> None:
    """``path`` does not exist: its nearest existing ancestor must be a writable folder."""
    ancestor = _nearest_existing(path.parent)
    if not ancestor.is_dir():
        raise ConfigurationError(f"{setting}: {path}: a parent is a file ({ancestor})")
    problem = _folder_problem(ancestor)
    if problem is not None:
        raise ConfigurationError(f"{setting}: {path}: {problem}")


def check_writable_file(setting: str, path: Path, *, magic: tuple[int, bytes] | None, kind: str) -> None:
    """``path`` can be created, or exists as a ``kind`` file (checked by ``magic``) that can be replaced.

    Args:
        setting: the spec setting named in the message (``destination.duckdb``).
        path: the file.
        magic: the format's (offset, bytes); an existing file without them is refused.
        kind: the format's name, for the message (``a DuckDB database``).

    Raises:
        ConfigurationError: naming ``setting`` and the path.
    """
    if not os.path.lexists(path):
        _creatable(setting, path)
        return
    if path.is_dir():
        raise ConfigurationError(f"{setting}: {path} is a folder, not {kind}")
    if not path.is_file():
        raise ConfigurationError(f"{setting}: {path} is not a regular file")
    if magic is not None and not has_magic(path, magic):
        raise ConfigurationError(f"{setting}: {path} exists but is not {kind}; refusing to overwrite it")
    if not os.access(path, os.R_OK | os.W_OK):
        raise ConfigurationError(f"{setting}: {path} is not writable")
    problem = _folder_problem(path.parent)  # journals, WAL and temporary files go beside it
    if problem is not None:
        raise ConfigurationError(f"{setting}: {path}: {problem}")


def check_writable_folder(setting: str, folder: Path) -> None:
    """``folder`` can be created, or is an existing folder in which files can be created."""
    if not os.path.lexists(folder):
        _creatable(setting, folder)
        return
    if not folder.is_dir():
        raise ConfigurationError(f"{setting}: {folder} is a file, not a folder")
    problem = _folder_problem(folder)
    if problem is not None:
        raise ConfigurationError(f"{setting}: {problem}")


def sqlite_file(url: str) -> Path | None:
    """The database file of a ``sqlite`` URL (``None`` for another dialect, memory or a ``file:`` URI)."""
    from sqlalchemy.engine.url import make_url

    parsed = make_url(url)
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:") or parsed.query.get("uri"):
        return None
    return Path(database).expanduser().absolute()


def check_database_url(setting: str, url: str, *, write: bool = True) -> None:
    """The URL parses, its dialect and driver import, and a SQLite file is (or can be) a SQLite database.

    Nothing is connected to: a server that is down is only found at publish.
    With ``write=False`` an existing SQLite file only has to be a SQLite database.
    """
    import sqlalchemy.exc
    from sqlalchemy.engine.url import make_url

    try:
        parsed = make_url(url)
    except sqlalchemy.exc.ArgumentError:
        raise ConfigurationError(f"{setting}: not a SQLAlchemy URL (dialect+driver://...)") from None
    try:
        dialect = parsed.get_dialect()
    except sqlalchemy.exc.NoSuchModuleError:
        raise ConfigurationError(
            f"{setting}: unknown database dialect {parsed.drivername!r} (is its SQLAlchemy plugin installed?)"
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise ConfigurationError(
            f"{setting}: the driver for {parsed.drivername!r} is not installed ({exc.name or exc})"
        ) from None
    path = sqlite_file(url)
    if path is None:
        return
    empty = os.path.isfile(path) and os.path.getsize(path) == 0  # SQLite accepts an empty file as a new database
    magic = None if empty else SQLITE_MAGIC
    if not write:
        if os.path.lexists(path) and (not path.is_file() or (magic is not None and not has_magic(path, magic))):
            raise ConfigurationError(f"{setting}: {path} exists but is not a SQLite database")
        return
    if not os.path.lexists(path) and not path.parent.is_dir():
        ancestor = _nearest_existing(path.parent)
        if ancestor.is_dir():
            raise ConfigurationError(f"{setting}: {path}: the folder {path.parent} does not exist")
        raise ConfigurationError(f"{setting}: {path}: a parent is a file ({ancestor})")
    check_writable_file(setting, path, magic=magic, kind="a SQLite database")


def probe_database(setting: str, url: str, *, where: str | None = None) -> None:
    """Connect to a server destination now: it answers, has a schema to create the table in, and lets us.

    A SQLite or DuckDB file is left to :func:`check_database_url`. On PostgreSQL the
    current schema must exist (the first of ``search_path`` that does) and the user must
    hold ``CREATE`` on it in a read-write session; elsewhere connecting and finding the
    default schema is all that is checked. Nothing is created.

    Args:
        setting: the spec setting named in messages (``destination.url``).
        url: the SQLAlchemy URL (with its password: passed only to the driver).
        where: how messages name the database (default: the URL, password masked), e.g. a ``conn_id``.

    Raises:
        ConfigurationError: ``destination.url: cannot connect to postgresql://u:***@host:1/db: ...``
            — the password never appears.
    """
    import sqlalchemy as sa
    from sqlalchemy.engine.url import make_url

    from privacy_plugins.engines.sql import database_message
    from privacy_plugins.release.connections import mask_password

    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend in ("sqlite", "duckdb"):
        return
    secret = parsed.password

    def shown(text: str) -> str:
        text = mask_password(text)
        return text.replace(str(secret), "***") if secret else text

    # Without the query string: a driver option there may hold a secret (password=, sslpassword=).
    where = where or shown(parsed.set(query={}).render_as_string(hide_password=True))
    timeout = (
        {"connect_timeout": CONNECT_TIMEOUT}
        if backend == "postgresql" and "connect_timeout" not in parsed.query
        else {}
    )
    try:
        engine = sa.create_engine(parsed, connect_args=timeout, poolclass=sa.pool.NullPool)
    except (sa.exc.ArgumentError, ImportError, TypeError) as exc:
        raise ConfigurationError(f"{setting}: cannot open {where}: {shown(str(exc).splitlines()[0])}") from None
    try:
        with engine.connect() as connection:
            problem = _schema_problem(connection, backend)
    except sa.exc.DBAPIError as exc:
        raise ConfigurationError(f"{setting}: cannot connect to {where}: {shown(database_message(exc))}") from None
    finally:
        engine.dispose()
    if problem is not None:
        raise ConfigurationError(f"{setting}: {where}: {problem}")


def _schema_problem(connection: object, backend: str) -> str | None:
    """Why the table cannot be created in the session's schema (``None`` when it can)."""
    import sqlalchemy as sa

    assert isinstance(connection, sa.Connection)
    if backend != "postgresql":
        return None  # connected; the rights are found at publish (no read-only way to ask them here)
    schema, allowed, read_only = connection.execute(
        sa.text(
            "SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE'), "
            "current_setting('transaction_read_only')"
        )
    ).one()
    if schema is None:
        return "no schema to create the table in (no schema of the search_path exists)"
    if read_only == "on":
        return "the session is read-only (a standby, or default_transaction_read_only)"
    if not allowed:
        return f"the user {connection.engine.url.username or ''!r} may not create tables in schema {schema!r}"
    return None
