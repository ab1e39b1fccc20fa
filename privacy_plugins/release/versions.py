"""A folder published in versions behind a symbolic link: readers see the old version or the new one, never a mix.

``<parent>/<name>`` is a symbolic link to a sibling version folder ``.<name>.<8 hex>``.
A new version is written and verified in its own folder, then a new link is renamed
over the old one — one ``os.replace``, atomic on POSIX — and the old version folder
is removed. A reader that resolves the link once reads one version; a reader still
reading the old version's files when it is removed gets a file-not-found error, never
rows of both. Used by the two-table Parquet release (:mod:`.linked`) and the Spark
Parquet destination (:mod:`.spark_destination`).
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

__all__ = ["new_version", "swap_link"]


def new_version(link: Path) -> Path:
    """A fresh version folder's path beside ``link`` (not created)."""
    return link.parent / f".{link.name}.{secrets.token_hex(4)}"


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
