"""Files replaced atomically, and the temporary files killed writers left beside them.

A writer holds an exclusive ``flock`` on its temporary file ``.<name>.<8 chars>.tmp``
until it is renamed or removed; the kernel releases it when the process dies. A
temporary file is removed only if that lock can be taken (its writer is gone) and it is
older than :data:`STALE_TEMPORARY_SECONDS` (which covers the instant between creating
the file and locking it). Where ``flock`` is unavailable (Windows, some network
filesystems) only files older than :data:`STALE_TEMPORARY_UNLOCKED_SECONDS` are removed.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "STALE_TEMPORARY_SECONDS",
    "STALE_TEMPORARY_UNLOCKED_SECONDS",
    "atomic_file",
    "lock",
    "remove_stale_temporaries",
]

STALE_TEMPORARY_SECONDS = 5.0
"""An unlocked temporary file younger than this may be one a live writer has not locked yet."""

STALE_TEMPORARY_UNLOCKED_SECONDS = 24 * 3600.0
"""Without ``flock``, a temporary file is taken for a live writer's until it is this old."""


def lock(handle: int) -> bool:
    """Take an exclusive non-blocking ``flock`` on an open file; ``False`` when another holder has it.

    Raises:
        OSError: locking is not supported here (Windows, some network filesystems).
    """
    if sys.platform == "win32":
        raise OSError("flock is not available on Windows")
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files that killed :func:`atomic_file` writers left beside ``target``.

    Only files named like ours (``.<name>.<8 chars>.tmp``) whose writer is gone:
    nobody holds their lock and they are older than :data:`STALE_TEMPORARY_SECONDS`
    (without locking: older than :data:`STALE_TEMPORARY_UNLOCKED_SECONDS`).
    Returns the files removed.
    """
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")
    try:
        candidates = [p for p in target.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return []
    removed = []
    now = time.time()
    for candidate in candidates:
        try:
            handle = os.open(candidate, os.O_RDWR)  # NFS emulates flock with write locks
        except OSError:
            continue  # gone already, or not ours to read
        try:
            age = now - os.fstat(handle).st_mtime
            try:
                stale = lock(handle) and age > STALE_TEMPORARY_SECONDS
            except OSError:
                stale = age > STALE_TEMPORARY_UNLOCKED_SECONDS
            if stale:
                candidate.unlink(missing_ok=True)
                removed.append(candidate)
        finally:
            os.close(handle)  # releases our lock
    return removed


@contextmanager
def atomic_file(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` only if the block succeeds.

    Readers see the old file or the new one, never a partial one (rename is atomic
    on POSIX within a folder); on any error the temporary file is removed. The
    temporary file is ``flock``-ed until then, so :func:`remove_stale_temporaries`
    can tell a live writer's file from a killed one's. It gets the mode of any new
    file (``0o666`` minus the umask, 0644 with the usual umask 022), like the
    reports, not ``mkstemp``'s private 0600.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:  # O_EXCL: a fresh file, never an existing one; the kernel applies the umask to 0o666
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        locked = lock(handle)
    except OSError:
        locked = False  # no locking here: stale files are then recognized by age only
    if not locked:
        os.close(handle)  # (Windows cannot rename a file that is still open)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        if locked:
            os.close(handle)  # releases the lock
