"""A folder published in versions behind a symbolic link: readers see the old version or the new one, never a mix.

``<parent>/<name>`` is a symbolic link to a sibling version folder ``.<name>.<8 hex>``.
A new version is written and verified in its own folder, then a new link is renamed
over the old one — one ``os.replace``, atomic on POSIX — and the old version folder
is removed. A reader that resolves the link once reads one version; a reader still
reading the old version's files when it is removed gets a file-not-found error, never
rows of both. Used by the two-table Parquet release (:mod:`.linked`) and the Spark
Parquet destination (:mod:`.spark_destination`).

A killed writer leaves its version folder (and, killed in the instant of the swap,
the staged link ``.<name>.link.<8 hex>``). A writer that creates its version with
:func:`writing` holds an exclusive ``flock`` on the folder until it has swapped it
in or removed it; the kernel releases it when the process dies. :func:`remove_dead`
removes, before the next release to the same link, only what is provably a dead
writer's: a version folder named like ours, not the one the link names, holding
nothing but the files a version of that release holds, whose lock can be taken and
which is older than :data:`~.destination.files.STALE_TEMPORARY_SECONDS`; and a staged
link named like ours that points at a version name of that link and is as old.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from privacy_plugins.release.destination import files as atomic_files

__all__ = ["is_current", "new_version", "remove_dead", "swap_link", "writing"]


def new_version(link: Path) -> Path:
    """A fresh version folder's path beside ``link`` (not created)."""
    return link.parent / f".{link.name}.{secrets.token_hex(4)}"


def _version_pattern(link: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(link.name)}\.[0-9a-f]{{8}}")


def _staged_link_pattern(link: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(link.name)}\.link\.[0-9a-f]{{8}}")


def _hold(handle: int) -> None:
    """Take the exclusive lock, waiting while a cleaner looks at the folder (a moment); no-op without ``flock``."""
    if sys.platform == "win32":
        return  # stale versions are then recognized by age only
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
    except OSError:
        pass  # no locking on this filesystem: as on Windows


@contextmanager
def writing(version: Path) -> Iterator[Path]:
    """Create ``version`` and hold its lock for the block; remove the folder if the block fails."""
    version.mkdir()
    handle = os.open(version, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _hold(handle)
        yield version
    except BaseException:
        if not is_current(version.parent / version.name[1:-9], version):  # (a stop after the swap: it is published)
            shutil.rmtree(version, ignore_errors=True)
        raise
    finally:
        os.close(handle)  # releases the lock


def swap_link(link: Path, version: Path) -> None:
    """Point ``link`` at ``version`` (a sibling) with one atomic rename, then remove the version it named before."""
    previous = link.resolve() if link.is_symlink() else None
    staged = link.parent / f".{link.name}.link.{secrets.token_hex(4)}"
    os.symlink(version.name, staged, target_is_directory=True)
    try:
        os.replace(staged, link)  # the one atomic step: the link now names the new version
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    if previous is not None and previous != version.resolve():
        shutil.rmtree(previous, ignore_errors=True)


def is_current(link: Path, version: Path) -> bool:
    """Whether ``link`` names ``version`` now: swapped in, so never to be removed (even by a failing writer)."""
    return version.exists() and _current(link) == version.resolve()


def _current(link: Path) -> Path | None:
    return link.resolve() if link.is_symlink() else None


def _old(path: Path, *, locked: bool) -> bool:
    age = time.time() - path.lstat().st_mtime
    limit = atomic_files.STALE_TEMPORARY_SECONDS if locked else atomic_files.STALE_TEMPORARY_UNLOCKED_SECONDS
    return age > limit


def _remove_dead_version(link: Path, folder: Path, files: Collection[str]) -> bool:
    """Remove one version folder if it is a dead writer's (see the module docstring); whether it was."""
    if folder.is_symlink() or not folder.is_dir() or _current(link) == folder.resolve():
        return False
    if any(not entry.is_file(follow_symlinks=False) or entry.name not in files for entry in os.scandir(folder)):
        return False  # not what a version of this release holds: not ours to remove
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            locked = atomic_files.lock(handle)
            if not locked:
                return False  # a live writer holds it
        except OSError:
            locked = False
        # the lock is ours now: a writer that swapped this version in has done so; look at the link again
        if _current(link) == folder.resolve() or not _old(folder, locked=locked):
            return False
        shutil.rmtree(folder)
        return True
    finally:
        os.close(handle)


def remove_dead(link: Path, files: Collection[str]) -> list[Path]:
    """Remove the version folders and staged links that killed writers left beside ``link``; the paths removed.

    ``files``: the names of the files a version of this release holds (a folder holding
    anything else is not removed).
    """
    try:
        entries = list(link.parent.iterdir())
    except OSError:
        return []
    removed = []
    versions, staged_links = _version_pattern(link), _staged_link_pattern(link)
    for entry in entries:
        try:
            if versions.fullmatch(entry.name) and _remove_dead_version(link, entry, files):
                removed.append(entry)
            elif (
                staged_links.fullmatch(entry.name)
                and entry.is_symlink()
                and versions.fullmatch(os.readlink(entry))
                and _old(entry, locked=True)
            ):
                entry.unlink()
                removed.append(entry)
        except OSError:
            continue  # gone already, or not ours to read
    return removed
