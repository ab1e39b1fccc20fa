"""Private, per-run working areas, and the lock that serializes publishing to one destination.

Every release run has a **run id** (a fresh one for the CLI and ``run_release``;
``<dag_id>__<run_id>`` for an Airflow DAG run; the root run id for Dagster) and
its own working folder, derived from the spec and that id so every step of the
run — even in another process — finds it::

    <root>/<spec name>-<source fingerprint>/<run id>/    (mode 0700)

``<root>`` is the spec's ``workdir:`` when it sets one (the folder is then kept
after the run), else ``$PRIVACY_PLUGINS_WORKDIR``, else
``<system temp dir>/privacy-plugins-<uid>`` (created 0700; refused when another
user owns it or it is a symlink). Working files never go into the report folder,
which people share. ``run_release`` and the CLI remove the run's folder when the
run ends unless asked to keep it (``workdir:`` in the spec or ``--keep-workdir``).

Publishing to a DuckDB file or a Parquet folder holds an exclusive, non-blocking
``flock`` on a lock file beside it (``<file>.lock``, ``<folder>/.<table>.lock``):
a second release publishing there at the same moment fails with a clear message
instead of interleaving. SQLAlchemy destinations rely on the database transaction.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from privacy_plugins.engines.spark_session import is_spark_path
from privacy_plugins.errors import ConfigurationError, PrivacyPluginsError
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

__all__ = [
    "WORKDIR_ENV",
    "DestinationBusy",
    "destination_lock",
    "new_run_id",
    "remove_run_dir",
    "run_dir",
    "safe_name",
]

WORKDIR_ENV = "PRIVACY_PLUGINS_WORKDIR"


class DestinationBusy(PrivacyPluginsError):
    """Another release is publishing to the same destination right now; nothing was published."""


def new_run_id() -> str:
    """A fresh run id: UTC time plus a random part (sortable, never reused)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:12]}"


def safe_name(text: str) -> str:
    """``text`` as one path component: letters, digits, ``.-_`` plus a hash, so distinct texts never collide."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", text)[:60].lstrip(".")
    return f"{cleaned}-{digest}"


def _work_root(spec: ReleaseSpec) -> tuple[Path, bool]:
    """The root of the working areas and whether it is the shared default (system temp dir)."""
    if spec.workdir is not None:
        return spec.workdir, False
    configured = os.environ.get(WORKDIR_ENV, "").strip()
    if configured:
        root = Path(configured).expanduser().resolve()
        if root.is_relative_to(spec.report.directory.resolve()):
            raise ConfigurationError(
                f"${WORKDIR_ENV} ({str(root)!r}) is inside the report folder {str(spec.report.directory)!r}, which "
                "people share; point it elsewhere"
            )
        return root, False
    return Path(tempfile.gettempdir()) / f"privacy-plugins-{os.getuid()}", True


def _private_dir(path: Path, *, create: bool, strict_mode: bool = True) -> None:
    """``path`` is (made) a real directory owned by this user, with mode 0700 when ``strict_mode``."""
    if create:
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ConfigurationError(f"cannot create the private working folder {str(path)!r}: {exc}") from exc
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise ConfigurationError(f"working folder {str(path)!r} does not exist") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ConfigurationError(f"working folder {str(path)!r} is not a plain directory (a symlink?); refusing it")
    if info.st_uid != os.getuid():
        raise ConfigurationError(f"working folder {str(path)!r} belongs to another user; refusing it")
    if strict_mode and info.st_mode & 0o077:
        raise ConfigurationError(
            f"working folder {str(path)!r} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); it must be 0700"
        )


def run_dir(spec: ReleaseSpec, run_id: str, *, create: bool = False) -> Path:
    """The private working folder of one run of ``spec`` (created 0700 with ``create``).

    Raises:
        ConfigurationError: the folder (or the shared default root) is not private, or it is
            missing and ``create`` is false (a later step of a run whose first step never ran).
    """
    if not run_id:
        raise ConfigurationError("a release step needs a run id")
    root, shared = _work_root(spec)
    if create:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    _private_dir(root, create=False, strict_mode=shared)
    release = root / f"{safe_name(spec.name)}-{spec.source_fingerprint[:12]}"
    folder = release / safe_name(run_id)
    _private_dir(release, create=create)
    _private_dir(folder, create=create)
    return folder


def remove_run_dir(spec: ReleaseSpec, run_id: str) -> None:
    """Delete the run's working folder (a no-op when it is gone); its parent too once empty."""
    try:
        root, _ = _work_root(spec)
    except ConfigurationError:
        return  # no valid root: nothing of this run was written there
    release = root / f"{safe_name(spec.name)}-{spec.source_fingerprint[:12]}"
    folder = release / safe_name(run_id)
    if folder.is_symlink():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
    try:
        release.rmdir()
    except OSError:
        pass  # other runs still use it, or it was never created


def _lock_path(destination: DestinationSpec) -> Path | None:
    if destination.duckdb is not None:
        return destination.duckdb.with_name(destination.duckdb.name + ".lock")
    if destination.parquet is not None:
        return destination.parquet / f".{destination.table}.lock"
    if destination.spark is not None and is_spark_path(destination.spark):  # a catalog table: no local lock
        folder = Path(destination.spark)
        return folder.parent / f".{folder.name}.lock"
    return None


@contextmanager
def destination_lock(destination: DestinationSpec) -> Iterator[None]:
    """Hold the destination's publish lock for the block, or raise :class:`DestinationBusy` at once."""
    path = _lock_path(destination)
    if path is None:
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ConfigurationError(f"cannot open the publish lock {str(path)!r}: {exc}") from exc
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DestinationBusy(
                f"another release is publishing to {destination.describe()} right now; nothing was published "
                "(run this release again once it has finished)"
            ) from None
        yield
    finally:
        os.close(handle)  # closing releases the lock
