"""A prototype of :class:`privacy_plugins.engines.sql.SqlTable` written with Ibis (benchmark only, not the package).

It implements the same :class:`~privacy_plugins.engines.base.EngineTable` operations
(columns, count, one GROUP BY, the generalized view by CASE or by mapping-table join
with suppressed classes anti-joined, batches, ``CREATE TABLE … AS``) as one Ibis
expression per operation, so that ``anonymize_in_engine`` and the every-engine
checks run on it unchanged. Ibis compiles each expression to the backend's dialect
through SQLGlot; no SQL text is written here.

Helper tables (value → label mappings, suppressed classes) are ``ibis.memtable``\\ s:
DuckDB registers the Arrow data in its own connection (nothing stored), SQLite and
PostgreSQL create a ``TEMPORARY`` table on the backend's one connection, which goes
with the session — the same property ``SqlTable`` gets from its pinned connection.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ibis
import pandas as pd

from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.engines.base import ApplyMethod, EngineTable

__all__ = ["IbisTable", "connect"]


def connect(url: str, **config: Any) -> Any:
    """An Ibis backend for a ``duckdb:///``, ``sqlite:///`` or ``postgresql+psycopg://`` SQLAlchemy-style URL."""
    if url.startswith("duckdb:///"):
        return ibis.duckdb.connect(url.removeprefix("duckdb:///"), **config)
    if url.startswith("sqlite:///"):
        return ibis.sqlite.connect(url.removeprefix("sqlite:///"))
    if url.startswith("postgresql"):
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(url)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        return ibis.postgres.connect(
            user=parts.username,
            host=query.get("host", parts.hostname),
            port=int(query.get("port", parts.port or 5432)),
            database=parts.path.lstrip("/"),
        )
    raise ValueError(f"no Ibis backend for {url!r} in this prototype")


@dataclass
class IbisTable(EngineTable):
    """A table of an Ibis backend as an ``EngineTable`` (the expression is lazy, as ``SqlTable``'s SELECT)."""

    backend: Any
    expr: Any

    @classmethod
    def from_table(cls, backend: Any, name: str) -> IbisTable:
        """A stored table."""
        return cls(backend, backend.table(name))

    @property
    def engine_name(self) -> str:
        """The backend's name (``duckdb``, ``sqlite``, ``postgres``)."""
        return str(self.backend.name)

    def columns(self) -> list[str]:
        """Column names."""
        return list(self.expr.columns)

    def count(self) -> int:
        """``SELECT COUNT(*)``."""
        return int(self.expr.count().to_pyarrow().as_py())

    def group_counts(self, columns: Sequence[str]) -> pd.DataFrame:
        """One GROUP BY; the aggregates come back through Arrow."""
        from privacy_plugins.engines.aggregates import check_columns

        check_columns(columns, self.columns())
        grouped = self.expr.group_by(list(columns)).aggregate(**{COUNT_COLUMN: self.expr.count()})
        return grouped.to_pyarrow().to_pandas()

    def _generalize(
        self, keep: Sequence[str], mappings: Mapping[str, pd.DataFrame], suppressed: pd.DataFrame, method: ApplyMethod
    ) -> EngineTable:
        """Each mapped QI replaced by its label (CASE or inner join), then suppressed classes anti-joined."""
        source = self.expr
        joined = source
        selected: dict[str, Any] = {}
        for index, column in enumerate(keep):
            if column not in mappings:
                selected[column] = source[column]
                continue
            mapping = mappings[column]
            if method == "case":
                pairs = zip(mapping["value"].tolist(), mapping["label"].tolist(), strict=True)
                selected[column] = source[column].cases(*pairs)
            else:
                value, label = f"__v{index}", f"__l{index}"
                helper = ibis.memtable(mapping.rename(columns={"value": value, "label": label}))
                joined = joined.join(helper, joined[column] == helper[value])
                selected[column] = joined[label]
        mapped = joined.select(**selected)
        if len(suppressed):
            classes = ibis.memtable(suppressed)
            mapped = mapped.anti_join(classes, [mapped[c] == classes[c] for c in suppressed.columns])
        return IbisTable(self.backend, mapped)

    def select_sql(self) -> str:
        """The SELECT in the backend's dialect (what ``create_table`` runs)."""
        return str(ibis.to_sql(self.expr, dialect=self.backend.name))

    def create_table(self, name: str) -> None:
        """``CREATE TABLE name AS`` this SELECT, replacing a table of that name."""
        self.backend.create_table(name, obj=self.expr, overwrite=True)

    def batches(self, size: int) -> Iterator[pd.DataFrame]:
        """The rows as Arrow record batches of at most ``size`` rows.

        Ibis 12's DuckDB ``to_pyarrow_batches`` calls ``fetch_record_batch``, which DuckDB 2.0 removed:
        there the compiled SELECT runs on the backend's own DuckDB connection (a private Ibis hook
        registers the memtables first).
        """
        if self.backend.name == "duckdb":
            self.backend._run_pre_execute_hooks(self.expr)
            reader = self.backend.con.sql(self.select_sql()).to_arrow_reader(size)
            for batch in reader:
                yield batch.to_pandas()
            return
        with self.expr.to_pyarrow_batches(chunk_size=size) as reader:
            for batch in reader:
                yield batch.to_pandas()

    def to_pandas(self) -> pd.DataFrame:
        """All rows."""
        return self.expr.to_pyarrow().to_pandas()
