"""What every destination shares: the staged record, the protocol, the swap hook, the count check, errors.

See the package docstring for the design.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

import pandas as pd

from privacy_plugins.errors import DestinationError, PublishError
from privacy_plugins.release.spec import DestinationSpec

if TYPE_CHECKING:
    from privacy_plugins.engines.base import EngineTable
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = [
    "LINKED_PARTS",
    "TABLE",
    "Accept",
    "Companions",
    "Destination",
    "SqlLocation",
    "StageRun",
    "Staged",
    "StagedKind",
    "before_swap",
    "io_errors",
    "one_line",
    "publishing",
    "reading",
    "verify",
]

TABLE = "table"
"""The part name of a one-table release (Anatomy's two parts are ``qit`` and ``st``)."""

LINKED_PARTS = ("qit", "st")
"""The parts of a two-table release (Anatomy's quasi-identifier table and sensitive table)."""

_T = TypeVar("_T")

StagedKind = Literal["table", "file", "spark"]


@dataclass(frozen=True)
class Staged:
    """Where a release's rows wait between the anonymize step and the swap (it travels in the ``Candidate``).

    ``kind``: ``"table"`` — staging tables in the destination database, bound to the run
    (``release/staging.py``); ``"file"`` — the run's Parquet working files, ``digests`` their
    SHA-256 per part; ``"spark"`` — a Spark staging folder or table (``release/spark_destination.py``).
    ``parts``: part name → the staging table, file path or Spark location (``{"table": …}``, or a
    two-table release's ``{"qit": …, "st": …}``, always staged as working files); ``rows``: part → rows.
    """

    kind: StagedKind
    parts: dict[str, str]
    rows: dict[str, int] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The main part's location (the table, or a two-table release's QIT)."""
        return self.parts[TABLE] if TABLE in self.parts else self.parts[LINKED_PARTS[0]]

    @property
    def linked(self) -> bool:
        """Whether this is a two-table release's pair."""
        return set(self.parts) == set(LINKED_PARTS)


@dataclass(frozen=True)
class StageRun:
    """The run a stage belongs to: its spec (names, QIs, models), its id and its private working folder."""

    spec: ReleaseSpec
    run_id: str
    folder: Path


@dataclass(frozen=True)
class SqlLocation:
    """Where SQL reaches staged rows: a SQLAlchemy URL and a table in it, or a query (never logged: passwords).

    GX suites validate a staged candidate there (GX's SQL datasource), not on a pandas copy.
    """

    url: str
    table: str | None = None
    query: str | None = None


Companions = Mapping[str, pd.DataFrame]
"""Tables written in the same swap as the release, by name (the release history: ``release/history_store.py``)."""

Accept = Callable[["StagedMeasure"], "Companions | None"]
"""Called with the staged rows measured inside the swap (before anything is replaced); raises to refuse them.

Returns the companion tables to write atomically with the release (``None``: none).
"""


class Destination(Protocol):
    """A place a release is published to, one class per kind (``open_destination`` builds it)."""

    spec: DestinationSpec

    def stage(self, parts: Mapping[str, EngineTable], run: StageRun) -> Staged:
        """Write the rows where they wait for the swap, by the fastest path the engines allow.

        ``parts``: ``{"table": t}``, or a two-table release's ``{"qit": …, "st": …}`` (working files).
        """
        ...

    def accept_staged(self, staged: Staged, run: StageRun) -> None:
        """Refuse (``ForeignArtifactError``) a record that is not this run's stage for this destination."""
        ...

    def measure(self, staged: Staged, run: StageRun) -> StagedMeasure:
        """Columns, rows, classes and digest of the staged rows: one ``GROUP BY`` where they are."""
        ...

    def swap(self, staged: Staged, run: StageRun, accept: Accept) -> StagedMeasure:
        """Re-measure (inside the swap transaction where the engine allows), ``accept``, verify, swap atomically."""
        ...

    def discard(self, staged: Staged, run: StageRun) -> None:
        """Remove the staged rows (best effort; a no-op for rows already swapped in)."""
        ...

    def read_staged(self, staged: Staged, run: StageRun, refuse: Callable[[int], None]) -> pd.DataFrame:
        """The staged rows as a DataFrame after ``refuse(rows)`` (which raises when there are too many)."""
        ...

    def sql_location(self, staged: Staged, run: StageRun) -> SqlLocation | None:
        """Where SQL reaches the staged rows as the checks see them (``None``: only through a DataFrame)."""
        ...

    def replace(self, frames: Mapping[str, pd.DataFrame]) -> dict[str, int]:
        """Stage in-memory frames (one or two parts) and swap them in together; the rows per part."""
        ...

    def read(self, parts: Sequence[str] = (TABLE,)) -> dict[str, pd.DataFrame] | None:
        """The published part(s) (``{"table": …}`` or ``{"qit": …, "st": …}``); ``None`` when none."""
        ...

    def measure_published(self, spec: ReleaseSpec, staging_table: str) -> StagedMeasure | None:
        """The published table measured where it is (``None``: none, or ``staging_table`` not swapped in yet)."""
        ...

    def published_columns(self) -> list[str] | None:
        """The published table's column names, read from its schema (``None``: nothing is published)."""
        ...

    def read_companions(self, names: Sequence[str]) -> dict[str, pd.DataFrame]:
        """The companion tables of ``names`` that exist (written by earlier swaps), by name.

        Raises:
            DestinationBusy: another process is writing the destination right now (a locked DuckDB file).
        """
        ...

    def write_companions(self, companions: Companions) -> None:
        """Replace the companion tables alone, atomically (adopting a release published before histories)."""
        ...

    def published_sha256(self) -> str | None:
        """The published file's SHA-256 where companions are swapped apart from it ("" when none); else ``None``."""
        ...


def before_swap() -> None:
    """Called by every destination after the staged rows were verified and before the swap (tests crash here)."""


def verify(expected: int, written: int, where: str) -> None:
    """Refuse a stage whose row count is not the release's."""
    if written != expected:
        raise PublishError(f"wrote {written} rows to {where} but the release has {expected}; nothing was published")


def io_errors() -> tuple[type[BaseException], ...]:
    """The errors a destination's I/O raises: OS, DuckDB, SQLAlchemy and Arrow errors (and Spark's, when installed)."""
    import duckdb
    import pyarrow
    import sqlalchemy.exc

    errors: tuple[type[BaseException], ...] = (
        OSError,
        duckdb.Error,
        sqlalchemy.exc.SQLAlchemyError,
        pyarrow.ArrowException,
    )
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError:
        return errors
    return (*errors, PySparkException, Py4JError)


def one_line(exc: BaseException) -> str:
    """An error's message on one line of at most 300 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


@contextmanager
def publishing(destination: DestinationSpec, *, what: str = "") -> Iterator[None]:
    """An I/O error in the block becomes one :class:`PublishError` naming ``what`` and the destination."""
    try:
        yield
    except PublishError:
        raise
    except io_errors() as exc:
        subject = f" {what}" if what else ""
        raise PublishError(
            f"could not publish{subject} to {destination.describe()}: {one_line(exc)}; "
            "the destination was left as it was"
        ) from exc


def reading(destination: DestinationSpec, read: Callable[[], _T]) -> _T:
    """``read()``; an I/O error becomes one :class:`DestinationError`."""
    try:
        return read()
    except DestinationError:
        raise
    except io_errors() as exc:
        raise DestinationError(f"cannot read {destination.describe()}: {one_line(exc)}") from exc
