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
run ends unless asked to keep it (``workdir:`` in the spec or ``--keep-workdir``);
a step-wise run removes it when it stops before publishing (no feasible
generalization, a failed check) and orchestrators call :func:`remove_run_workdir`
when a run ends (local folder and shared working storage alike).

Every run folder holds a marker file (:data:`RUN_MARKER`, the run id) that makes
it recognisable. When a run's folder is created, run folders under the same
root (never a spec's own ``workdir:``) whose files are all older than
``$PRIVACY_PLUGINS_WORKDIR_MAX_AGE_HOURS`` (default 24; ``off`` disables) are
removed: the leftovers of killed runs. A process working in a run folder holds a
shared ``flock`` on its marker, so a live run's folder is never swept, however old
its files; nor is a folder kept at the user's request (``--keep-workdir``: marked
with :data:`KEPT_MARKER`). Only folders with a valid marker — or,
from earlier versions, a run folder's name and nothing but working files — are
ever removed.

Publishing to a DuckDB file or a Parquet folder holds an exclusive, non-blocking
``flock`` on a lock file beside it (``<file>.lock``, ``<folder>/.<table>.lock``):
a second release publishing there at the same moment fails with a clear message
instead of interleaving. SQLAlchemy destinations rely on the database transaction.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
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
from typing import Protocol

from privacy_plugins.engines.spark_session import is_spark_path
from privacy_plugins.errors import ConfigurationError, DestinationBusy
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

__all__ = [
    "KEPT_MARKER",
    "MAX_AGE_ENV",
    "RUN_MARKER",
    "WORKDIR_ENV",
    "DestinationBusy",
    "SharedWorkdir",
    "destination_lock",
    "keep_run_dir",
    "new_run_id",
    "remove_run_dir",
    "remove_run_workdir",
    "run_dir",
    "safe_name",
    "stale_age_seconds",
    "sweep_stale_runs",
]

WORKDIR_ENV = "PRIVACY_PLUGINS_WORKDIR"
MAX_AGE_ENV = "PRIVACY_PLUGINS_WORKDIR_MAX_AGE_HOURS"
DEFAULT_MAX_AGE_HOURS = 24.0
RUN_MARKER = ".privacy-plugins-run"
"""The file in every run folder that names its run (its content is the run id)."""
KEPT_MARKER = ".privacy-plugins-kept"
"""The file in a run folder the user asked to keep (``--keep-workdir``): the sweep leaves it alone."""

_RUN_FOLDER = re.compile(r"(?!\.)[A-Za-z0-9._-]{0,60}-[0-9a-f]{10}")  # safe_name(run id)
_RELEASE_FOLDER = re.compile(r"(?!\.)[A-Za-z0-9._-]{0,60}-[0-9a-f]{10}-[0-9a-f]{12}")
_WORKING_FILE = re.compile(r"[A-Za-z0-9_]+\.(parquet|json)|\.[A-Za-z0-9_]+\.(parquet|json)\.[0-9a-f]{8}\.tmp")


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
        stale_age_seconds()  # a bad setting fails before anything is created
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    _private_dir(root, create=False, strict_mode=shared)
    release = root / _release_name(spec)
    folder = release / safe_name(run_id)
    if not create and not os.path.lexists(folder):
        raise ConfigurationError(
            f"the working folder of run {run_id!r} does not exist ({str(folder)!r}): the run already ended "
            "(published, refused or cleaned up) or its first step never ran on this machine; re-run the release "
            "from the load step"
        )
    _private_dir(release, create=create)
    new = create and not folder.exists()
    _private_dir(folder, create=create)
    if create:
        _write_marker(folder / RUN_MARKER, run_id)
    if spec.workdir is None:  # (a spec's own workdir: is never swept)
        _hold(folder)
    if new and spec.workdir is None:  # a run starts here: remove what killed runs left behind
        sweep_stale_runs(root, keep=folder)
    return folder


def _write_marker(marker: Path, run_id: str) -> None:
    """Name the run in its folder (once; never through a planted symlink)."""
    try:
        handle = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(run_id)


_HELD: dict[Path, int] = {}  # run folder -> open marker holding a shared flock (while this process works there)


def _hold(folder: Path) -> None:
    """Hold a shared ``flock`` on the run's marker until the process ends or removes the folder.

    A live run can leave its files untouched for longer than the sweep's age (one long
    anonymize step): the sweep skips any folder whose marker someone holds.
    """
    if folder in _HELD:
        return
    try:
        handle = os.open(folder / RUN_MARKER, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return  # an earlier version's folder (no marker): age alone decides
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)  # a sweep holds it right now (it re-checks the age) or no locking here
        return
    _HELD[folder] = handle


def _let_go(folder: Path) -> None:
    handle = _HELD.pop(folder, None)
    if handle is not None:
        os.close(handle)


@contextmanager
def _claimed(folder: Path) -> Iterator[bool]:
    """Whether no live process holds the run folder's marker (see :func:`_hold`); kept so for the block."""
    try:
        handle = os.open(folder / RUN_MARKER, os.O_RDWR | os.O_NOFOLLOW)  # NFS: an exclusive lock needs write access
    except OSError:
        yield True  # an earlier version's folder (no marker): age alone decides
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        except OSError:
            pass  # no locking here: age alone decides
        yield True
    finally:
        os.close(handle)


def _release_name(spec: ReleaseSpec) -> str:
    return f"{safe_name(spec.name)}-{spec.source_fingerprint[:12]}"


def remove_run_dir(spec: ReleaseSpec, run_id: str) -> None:
    """Delete the run's working folder (a no-op when it is gone); its parent too once empty."""
    try:
        root, _ = _work_root(spec)
    except ConfigurationError:
        return  # no valid root: nothing of this run was written there
    release = root / _release_name(spec)
    folder = release / safe_name(run_id)
    _let_go(folder)
    if folder.is_symlink():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
    try:
        release.rmdir()
    except OSError:
        pass  # other runs still use it, or it was never created


def keep_run_dir(spec: ReleaseSpec, run_id: str) -> None:
    """Mark the run's folder as kept at the user's request: the age-based sweep never removes it."""
    try:
        root, _ = _work_root(spec)
    except ConfigurationError:
        return
    folder = root / _release_name(spec) / safe_name(run_id)
    if not _plain_dir(folder):
        return
    try:
        os.close(os.open(folder / KEPT_MARKER, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass  # (a planted symlink, or the folder just went away)


class SharedWorkdir(Protocol):
    """Shared working storage that mirrors run folders (e.g. Airflow's ``WorkingStorage`` on S3)."""

    def remove(self, spec: ReleaseSpec, run_id: str) -> None:
        """Delete the run's shared copy (a no-op when it is gone)."""


def remove_run_workdir(
    spec: ReleaseSpec, run_id: str, *, shared: SharedWorkdir | None = None, keep: bool = False
) -> bool:
    """Remove every working file of one run: its local folder and, with ``shared``, its shared copy.

    For whatever ends a run — published, refused, failed, cancelled — so that no raw row
    stays behind. ``keep`` (the user asked to keep the files) keeps both; the spec's
    ``workdir:`` keeps the local folder (the user's own) but not the shared copy. Safe to
    call twice and for a run that never started. Returns whether the local folder was removed.
    """
    if keep:
        if spec.workdir is None:
            keep_run_dir(spec, run_id)
        return False
    removed = False
    if spec.workdir is None:
        remove_run_dir(spec, run_id)
        removed = True
    if shared is not None:
        shared.remove(spec, run_id)
    return removed


def stale_age_seconds() -> float:
    """How old a run folder's newest file must be for it to be swept (``$PRIVACY_PLUGINS_WORKDIR_MAX_AGE_HOURS``).

    Raises:
        ConfigurationError: the variable is not a positive number of hours nor ``off``.
    """
    text = os.environ.get(MAX_AGE_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_AGE_HOURS * 3600
    if text.lower() == "off":
        return math.inf
    try:
        hours = float(text)
    except ValueError:
        hours = math.nan
    if not (hours > 0 and math.isfinite(hours)):
        raise ConfigurationError(f"${MAX_AGE_ENV} must be a positive number of hours or 'off', got {text!r}")
    return hours * 3600


def _plain_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` is recognisably a run folder of this product (never anything else)."""
    if not _RUN_FOLDER.fullmatch(folder.name) or not _plain_dir(folder):
        return False
    marker = folder / RUN_MARKER
    try:
        if not marker.is_symlink() and marker.is_file():
            return safe_name(marker.read_text(encoding="utf-8")) == folder.name
        entries = list(folder.iterdir())
    except (OSError, UnicodeDecodeError):
        return False
    # a run folder of an earlier version: no marker, nothing but working files
    return all(_WORKING_FILE.fullmatch(e.name) and not e.is_symlink() and e.is_file() for e in entries)


def _newest(folder: Path) -> float:
    """The newest modification time of the folder and its files."""
    times = [folder.lstat().st_mtime]
    for entry in folder.iterdir():
        with contextlib.suppress(OSError):
            times.append(entry.lstat().st_mtime)
    return max(times)


def sweep_stale_runs(root: Path, *, keep: Path | None = None, now: float | None = None) -> list[Path]:
    """Remove the run folders under ``root`` whose newest file is older than :func:`stale_age_seconds`.

    Only this product's run folders (``<root>/<release>/<run>/`` with a valid marker, or an
    earlier version's holding only working files) owned by this user; ``keep`` is never
    removed. An empty release folder unchanged for as long goes too. Returns the run folders removed.
    """
    age = stale_age_seconds()
    if math.isinf(age) or not _plain_dir(root):
        return []
    now = time.time() if now is None else now
    removed = []
    for release in sorted(root.iterdir()):
        if not _RELEASE_FOLDER.fullmatch(release.name) or not _plain_dir(release):
            continue
        for folder in sorted(release.iterdir()):
            try:
                if folder == keep or os.path.lexists(folder / KEPT_MARKER) or not _is_run_folder(folder):
                    continue
                if now - _newest(folder) <= age:
                    continue
                with _claimed(folder) as free:
                    if not free:
                        continue  # a live run works there
                    shutil.rmtree(folder)
            except OSError:
                continue  # another process removed or holds it: leave it
            removed.append(folder)
        with contextlib.suppress(OSError):
            if now - release.lstat().st_mtime > age:  # not one a starting run has just created
                release.rmdir()  # only when empty
    return removed


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
