"""The Spark destination: a catalog table or a local Parquet folder, written by Spark, verified, then swapped in.

``destination: {spark: TABLE-OR-FOLDER, spark_settings: {...}}`` — a value with a ``/``
(or a ``.parquet`` suffix) is a folder, anything else a table name
(``[catalog.][database.]table``). Every publication stages the rows, counts them again
(a different count publishes nothing) and only then swaps them in; the release flow
also re-measures every model on the staged rows by ``GROUP BY`` in between.

Where the rows come from:

* a Spark source with a full-domain algorithm (:mod:`.pushdown`): the generalized
  DataFrame is written by the source's own session — no row leaves Spark, and one
  ``SparkSession`` serves both (``destination.spark_settings`` must then be left out
  or equal the source's);
* any other pushdown source: Spark reads the Parquet working file the published rows
  were streamed to, so the executors must see the run's working folder — true for
  ``local[*]`` (the default) and for a ``workdir`` on a filesystem the cluster mounts;
* the in-memory flow (Mondrian, ``suppressed_rows: mark`` …): the checked frame goes
  to Spark as an Arrow table.

What atomicity each target gives:

* **Folder** ``<dir>/<name>`` (a local or mounted filesystem; ``s3a://`` and other
  URIs are refused — publish to a table there): ``<name>`` is a symbolic link to a
  version folder ``.<name>.<8 hex>`` (:mod:`.versions`). Spark writes to the sibling
  ``<name>.__incoming_<8 hex>``; the rows are counted and measured there; the folder
  is renamed to a version folder and the link replaced by one ``os.replace``. A
  reader that resolves the link sees the old release or the new one, never a mix; a
  failure or crash at any point before that ``os.replace`` leaves the previous
  release exactly as it was. The previous version folder is removed right after the
  swap, so a query still reading it fails (file not found) rather than mixing rows.
  A killed process can leave an ``__incoming_`` or version folder behind (never the
  link's target): delete it by hand.
* **Table** (the session catalog; Spark has no transactional rename there): staged
  with ``saveAsTable`` as ``<name>__incoming_<8 hex>``, counted and measured, then
  swapped with two renames — ``<name>`` → ``<name>__previous_<8 hex>``, the incoming
  table → ``<name>`` — and the previous table dropped. Between the two renames (one
  catalog call each; for a managed table each also renames its folder) the name does
  not resolve: a reader gets "table or view not found", never a partial or mixed
  table. If the second rename fails, the previous table is renamed back. A crash
  between them leaves both tables — the previous release and the complete, verified
  new one — and no ``<name>``: rename one of them by hand. A killed run's staging
  table stays until dropped by hand (without transactional DDL a live run's staging
  table cannot be told from an orphan). There is no publish lock for a table (a folder
  has one beside it): two runs publishing to one table at once may interleave renames.
  Spark's default catalog is in memory: another process sees the table only with a
  persistent catalog (``spark.sql.catalogImplementation: hive`` or another metastore).

The release history (``docs/release-history.md``) is kept beside a **folder** only:
``<dir>/<name>.companions`` (:mod:`.destination.companion_link`), swapped right before the
folder's link, and each version folder carries a marker file ``_privacy_plugins_release``
naming the rows the history's last entry was written for (Spark and Arrow skip files whose
name starts with ``_``). A table target has no transactional swap to write it with, so a
release history there is refused.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.spark import SparkTable, task_errors
from privacy_plugins.engines.spark_session import check_master, is_spark_path, require_spark, spark_session
from privacy_plugins.errors import ConfigurationError, DestinationError, PublishError
from privacy_plugins.release import locations
from privacy_plugins.release.destination import base
from privacy_plugins.release.spec import DestinationSpec
from privacy_plugins.release.versions import is_current, new_version, swap_link

__all__ = ["SparkStage", "check_target", "publish_frame", "publish_parquet", "read", "stage"]

INCOMING = "__incoming_"
PREVIOUS = "__previous_"


def _target(destination: DestinationSpec) -> str:
    if destination.spark is None:
        raise ConfigurationError(f"{destination.describe()} is not a Spark destination")
    return str(destination.spark)


def _is_folder(destination: DestinationSpec) -> bool:
    return is_spark_path(_target(destination))


def _quoted(name: str) -> str:
    """A ``[catalog.][database.]table`` name for Spark SQL (the spec allows only letters, digits and ``_``)."""
    return ".".join(f"`{part}`" for part in name.split("."))


def _sibling(name: str, marker: str) -> str:
    """``db.t`` → ``db.t<marker><8 hex>``: a table in the same database."""
    return f"{name}{marker}{secrets.token_hex(4)}"


def check_target(destination: DestinationSpec) -> None:
    """Fail before any work if publishing here cannot work.

    PySpark and Java present, ``spark_settings`` valid and a cluster master reachable;
    a folder's parent writable and the folder either absent or a release's link.

    Raises:
        ConfigurationError: naming the setting.
    """
    require_spark("a spark: destination")
    check_master(destination.spark_settings, setting="destination.spark_settings")
    if not _is_folder(destination):
        return
    link = Path(_target(destination))
    locations.check_writable_folder("destination.spark", link.parent)
    if link.exists() and not link.is_symlink():
        raise ConfigurationError(
            f"destination.spark: {link} exists and is not a Spark release (a symbolic link to a version folder); "
            "move it away or choose another folder"
        )


def _session(destination: DestinationSpec) -> Any:
    return spark_session(destination.spark_settings, setting="destination.spark_settings")


def _write_stage(frame: Any, staging: str, *, folder: bool) -> None:
    """Spark writes ``frame`` to the staging folder or table (fails if it exists)."""
    writer = frame.write.mode("errorifexists")
    with task_errors():  # a block task failing in this write: the product's one-line error
        if folder:
            writer.parquet(staging)
        else:
            writer.saveAsTable(staging)


@dataclass
class SparkStage:
    """Rows Spark has written to a staging folder or table, not published yet."""

    destination: DestinationSpec
    session: Any
    staging: str
    done: bool = field(default=False, init=False)

    @property
    def where(self) -> str:
        """The staging location, e.g. ``spark:/data/out/census.__incoming_1a2b3c4d``."""
        return f"spark:{self.staging}"

    def table(self) -> SparkTable:
        """The staged rows as Spark reads them back (to count and measure)."""
        if _is_folder(self.destination):
            return SparkTable(self.session.read.parquet(self.staging))
        return SparkTable(self.session.table(self.staging))

    def publish(self, rows: int, prepare: Callable[[Path], None] | None = None) -> None:
        """Count the staged rows again; if there are ``rows``, swap them in (atomicity: see the module doc).

        ``prepare``: called with a folder's staging folder after the count and right before the
        swap (the release history marks the folder and swaps its companions there).

        Raises:
            PublishError: another count, or the swap failed; the previous release is left as it was.
        """
        with base.publishing(self.destination):
            base.verify(rows, self.table().count(), self.where)
            if prepare is not None:
                if not _is_folder(self.destination):
                    raise PublishError(f"{self.destination.describe()}: a Spark table keeps no release history")
                prepare(Path(self.staging))
            base.before_swap()
            if _is_folder(self.destination):
                self._swap_folder()
            else:
                self._swap_table()

    def _swap_folder(self) -> None:
        link = Path(_target(self.destination))
        version = new_version(link)
        os.rename(self.staging, version)  # not visible to readers: nothing links it yet
        self.done = True
        try:
            swap_link(link, version)
        except BaseException:
            if not is_current(link, version):  # a stop signal after the swap: it is published, keep it
                shutil.rmtree(version, ignore_errors=True)
            raise

    def _swap_table(self) -> None:
        name = _target(self.destination)
        previous = _sibling(name, PREVIOUS) if self.session.catalog.tableExists(name) else None
        try:
            if previous is not None:
                self.session.sql(f"ALTER TABLE {_quoted(name)} RENAME TO {_quoted(previous)}")
            self.session.sql(f"ALTER TABLE {_quoted(self.staging)} RENAME TO {_quoted(name)}")
        except BaseException:
            # Put the previous table back if it was set aside and nothing took its name (a stop signal
            # can come between the two renames, or right after either).
            catalog = self.session.catalog
            if previous is not None and catalog.tableExists(previous) and not catalog.tableExists(name):
                self.session.sql(f"ALTER TABLE {_quoted(previous)} RENAME TO {_quoted(name)}")
            raise
        self.done = True
        if previous is not None:
            self.session.sql(f"DROP TABLE IF EXISTS {_quoted(previous)}")

    def discard(self) -> None:
        """Remove the staged rows unless they were published (a no-op then)."""
        if self.done:
            return
        self.done = True
        if _is_folder(self.destination):
            shutil.rmtree(self.staging, ignore_errors=True)
        else:
            self.session.sql(f"DROP TABLE IF EXISTS {_quoted(self.staging)}")


def stage(published: EngineTable | Any, destination: DestinationSpec) -> SparkStage:
    """Write a :class:`SparkTable` or a Spark DataFrame to the destination's staging location, in its session.

    Raises:
        PublishError: Spark could not write there (nothing is left behind).
    """
    frame: Any = published.frame if isinstance(published, SparkTable) else published
    folder = _is_folder(destination)
    staging = _sibling(_target(destination) + ("." if folder else ""), INCOMING)  # <folder>.__incoming_…
    staged = SparkStage(destination, frame.sparkSession, staging)
    try:
        with base.publishing(destination, what="the staged rows"):
            _write_stage(frame, staged.staging, folder=folder)
    except BaseException:
        staged.discard()
        raise
    return staged


def _publish_all(
    frame: Any, destination: DestinationSpec, rows: int, prepare: Callable[[Path], None] | None = None
) -> None:
    staged = stage(frame, destination)
    try:
        staged.publish(rows, prepare)
    finally:
        staged.discard()


def publish_frame(frame: pd.DataFrame, destination: DestinationSpec) -> None:
    """Publish a pandas frame (the in-memory flow): to Spark as an Arrow table, staged, counted, swapped."""
    import pyarrow as pa

    session = _session(destination)
    _publish_all(session.createDataFrame(pa.Table.from_pandas(frame, preserve_index=False)), destination, len(frame))


def publish_parquet(
    path: Path, destination: DestinationSpec, rows: int, prepare: Callable[[Path], None] | None = None
) -> None:
    """Publish a Parquet working file of ``rows`` rows (a pushdown from another engine), read by Spark."""
    with base.publishing(destination):
        frame = _session(destination).read.parquet(str(path))
    _publish_all(frame, destination, rows, prepare)


RELEASE_MARKER = "_privacy_plugins_release"


def published_marker(destination: DestinationSpec) -> str:
    """The marker of the folder's current version ("" when nothing is published or it has none)."""
    link = Path(_target(destination))
    if not link.is_symlink():
        return ""
    marker = link.resolve() / RELEASE_MARKER
    return marker.read_text(encoding="utf-8").strip() if marker.is_file() else ""


def companion_link(destination: DestinationSpec) -> Path | None:
    """Where a folder's companions (its release history) live; ``None`` for a table."""
    if not _is_folder(destination):
        return None
    target = Path(_target(destination))
    return target.parent / f"{target.name}.companions"


def read(destination: DestinationSpec) -> pd.DataFrame | None:
    """The published release (``None`` when there is none yet), read once from one version.

    A folder is read through its link with Arrow (no Spark session needed); a table by Spark.

    Raises:
        DestinationError: the folder exists but is not a Spark release's link.
    """
    target = _target(destination)
    if _is_folder(destination):
        link = Path(target)
        if not link.exists():
            return None
        if not link.is_symlink():
            raise DestinationError(
                f"destination.spark: {link} is not a Spark release (a symbolic link to a version folder)"
            )
        return pd.read_parquet(link.resolve())  # resolved once: every file from the same version
    session = _session(destination)
    if not session.catalog.tableExists(target):
        return None
    frame: pd.DataFrame = session.table(_quoted(target)).toPandas()
    return frame
