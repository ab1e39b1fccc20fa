"""The SQL engine, through SQLAlchemy (DuckDB via ``duckdb_engine``, SQLite, PostgreSQL, …).

Every operation is one statement run in the database; only aggregates (one row
per distinct combination) and, when asked, the published rows in batches come
back. Helper tables (value → label mappings, suppressed classes) are small but
hold raw values (the QIs' distinct values, the QIs of suppressed classes), so they
are ``TEMPORARY`` tables of one connection that the table pins for them: the
database drops them when that connection ends — by :meth:`SqlTable.close`, or
when the process is killed and its session dies — and no other session sees them.
Every later query of the table and its generalized views runs on that connection
(:meth:`SqlTable.transaction`), as must a ``CREATE TABLE … AS`` of its SELECT.

The queries run and are fetched inside one connection: GX's own
``execute_query`` closes the connection before the rows are read, and with
``duckdb_engine`` that loses the result, so :func:`classes_from_sql` takes a
connection factory instead.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from privacy_plugins.core.disclosure import showing_values
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.engines.aggregates import COUNT_COLUMN, check_columns, classes_from_aggregates
from privacy_plugins.engines.base import ApplyMethod, EngineTable
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = [
    "SqlTable",
    "classes_from_sql",
    "database_message",
    "frame_from_rows",
    "group_counts_sql",
    "lightweight_table",
    "subquery_of",
]

_FLAG = "__privacy_plugins_suppressed__"


def database_message(exc: BaseException) -> str:
    r"""The first line of the database's own message for a SQLAlchemy error (no SQL, no traceback).

    Quoted text (a value the database quotes: in single quotes, or in double quotes after a colon) is
    replaced by ``…`` unless values were asked for (:func:`~privacy_plugins.core.disclosure.values_shown`).

    Example:
        >>> database_message(ValueError("Catalog Error: Table with name nope does not exist!\nDid you mean"))
        'Catalog Error: Table with name nope does not exist!'
        >>> database_message(ValueError("Conversion Error: Could not convert string 'Male' to INT32"))
        "Conversion Error: Could not convert string '…' to INT32"
        >>> database_message(ValueError('invalid input syntax for type integer: "Male"'))
        'invalid input syntax for type integer: "…"'
        >>> database_message(ValueError('relation "nosuch" does not exist'))
        'relation "nosuch" does not exist'
    """
    original = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    first = lines[0] if lines else type(original).__name__
    # A conversion error quotes the cell it failed on ("Could not convert string 'Male'"): a table value;
    # PostgreSQL quotes it in double quotes after a colon ('invalid input syntax for type integer: "Male"').
    if showing_values():
        return first
    return re.sub(r'(:\s*)"(?:[^"]|"")*"', '\\1"…"', re.sub(r"'(?:[^']|'')*'", "'…'", first))


def frame_from_rows(rows: Sequence[Any], columns: Sequence[str], *, coerce_float: bool = False) -> pd.DataFrame:
    """A frame of fetched SQLAlchemy rows, handed to pandas as plain tuples.

    pandas 3.1 asks every non-tuple row for a ``dtype`` attribute and, when they all have one,
    builds the columns with it: a SQLAlchemy ``Row`` answers with its column named ``dtype``, so a
    column of that name holding one value broke the frame ("invalid literal for int()" for
    ``'int64'``), and the per-row lookup made ``from_records`` ~3.5x slower than on tuples.
    """
    return pd.DataFrame.from_records([tuple(row) for row in rows], columns=list(columns), coerce_float=coerce_float)


def subquery_of(selectable: Any) -> Any:
    """A SELECT as a subquery (a table or subquery as it is), to select from."""
    import sqlalchemy as sa

    if isinstance(selectable, (sa.Select, sa.TextualSelect)):
        return selectable.subquery()
    return selectable


def lightweight_table(connection: sa.Connection, name: str) -> Any:
    """A stored table by name, its columns read by ``LIMIT 0`` (reflection fails on ``duckdb_engine``)."""
    import sqlalchemy as sa

    quoted = connection.dialect.identifier_preparer.quote(name)
    names = [str(n) for n in connection.execute(sa.text(f"SELECT * FROM {quoted} LIMIT 0")).keys()]
    return sa.table(name, *[sa.column(n) for n in names])


def _result_names(connection: sa.Connection, query: str) -> list[str]:
    """The column names of ``query`` itself, as its cursor reports them (no row is fetched)."""
    import sqlalchemy as sa

    if connection.dialect.name == "duckdb":
        return [str(row[0]) for row in connection.execute(sa.text(f"DESCRIBE {query}")).fetchall()]
    result = connection.execution_options(stream_results=True).execute(sa.text(query))
    try:
        return [str(name) for name in result.keys()]
    finally:
        result.close()


def group_counts_sql(connection: sa.Connection, selectable: Any, columns: Sequence[str]) -> pd.DataFrame:
    """``SELECT columns, COUNT(*) … GROUP BY columns``; only the aggregates come back."""
    import sqlalchemy as sa

    selectable = subquery_of(selectable)
    available = list(connection.execute(sa.select(sa.text("*")).select_from(selectable).limit(0)).keys())
    check_columns(columns, available)
    keys: list[Any] = [sa.column(column) for column in columns]
    query = sa.select(*keys, sa.func.count().label(COUNT_COLUMN)).select_from(selectable).group_by(*keys)
    rows = connection.execute(query).fetchall()
    return frame_from_rows(rows, [*columns, COUNT_COLUMN])


def classes_from_sql(
    connect: Callable[[], AbstractContextManager[sa.Connection]],
    selectable: Any,
    *,
    columns: Sequence[str],
    quasi_identifiers: Sequence[str],
) -> EquivalenceClasses:
    """The classes of ``selectable`` from one GROUP BY run inside ``connect()``."""
    with connect() as connection:
        aggregates = group_counts_sql(connection, selectable, columns)
    return classes_from_aggregates(aggregates, quasi_identifiers)


@dataclass
class _Session:
    """The connection a table's temporary helper tables live in (``None`` until the first one) and their names."""

    connection: sa.Connection | None = None
    helpers: list[str] = field(default_factory=list)
    busy: bool = False  # inside a transaction of the pinned connection (a nested one joins it)


def _create_temporary(connection: sa.Connection, name: str, frame: pd.DataFrame) -> None:
    """``CREATE TEMPORARY TABLE`` with the column types ``to_sql`` would choose, then insert the frame's rows."""
    import sqlalchemy as sa
    from pandas.io.sql import SQLDatabase, SQLTable

    typed = SQLTable(name, SQLDatabase(connection), frame=frame, index=False)
    columns = [sa.Column(column.name, column.type) for column in typed.table.columns]
    table = sa.Table(name, sa.MetaData(), *columns, prefixes=["TEMPORARY"])
    table.create(connection)
    keys, data = typed.insert_data()  # NaN/NaT as None, numpy scalars as Python values
    rows = [dict(zip(keys, row, strict=True)) for row in zip(*data, strict=True)]
    if rows:
        connection.execute(table.insert(), rows)


def _insert(connection: sa.Connection, table: Any, frame: pd.DataFrame) -> None:
    """The frame's rows appended to ``table`` (DuckDB scans the frame; elsewhere one parameterized INSERT)."""
    import sqlalchemy as sa
    from pandas.io.sql import SQLDatabase, SQLTable

    if not len(frame):
        return
    if connection.dialect.name == "duckdb":
        raw: Any = connection.connection.dbapi_connection  # duckdb_engine forwards register to DuckDB
        view = f"pp_frame_{uuid.uuid4().hex[:8]}"
        raw.register(view, frame)
        try:
            names = ", ".join(connection.dialect.identifier_preparer.quote(str(c)) for c in frame.columns)
            connection.execute(sa.text(f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {view}"))
        finally:
            raw.unregister(view)
        return
    keys, data = SQLTable("frame", SQLDatabase(connection), frame=frame, index=False).insert_data()
    connection.execute(table.insert(), [dict(zip(keys, row, strict=True)) for row in zip(*data, strict=True)])


@dataclass
class SqlTable(EngineTable):
    """A table, view or query result in a SQL database, as an :class:`~privacy_plugins.engines.base.EngineTable`.

    Build it with :meth:`from_table` or :meth:`from_query`.
    """

    engine: sa.Engine
    selectable: Any
    session: _Session = field(default_factory=_Session)

    @classmethod
    def from_table(cls, engine: sa.Engine, table: str) -> SqlTable:
        """A stored table; a clear error when it does not exist."""
        import sqlalchemy as sa

        with engine.connect() as connection:
            if not sa.inspect(connection).has_table(table):
                raise ConfigurationError(f"source table {table!r} not found at {engine.url!r}")
            return cls(engine, lightweight_table(connection, table))

    @classmethod
    def from_query(cls, engine: sa.Engine, query: str) -> SqlTable:
        """A SELECT's result (its column names are read with ``LIMIT 0``).

        A repeated result name (``SELECT ssn, …, ssn``) is an error: databases rename it in a
        subquery (DuckDB ``ssn_1``, SQLite ``ssn:1``), which would publish an identifier under
        another name, so the query's own names are read first (DuckDB ``DESCRIBE``; elsewhere a
        streamed cursor closed before any row is fetched).
        """
        import sqlalchemy as sa

        from privacy_plugins.core.io import check_unique_columns

        try:
            with engine.connect() as connection:
                probe = sa.select(sa.text("*")).select_from(sa.text(f"({query}) AS probe")).limit(0)
                names = [str(n) for n in connection.execute(probe).keys()]  # first: one statement, nothing read
                check_unique_columns(_result_names(connection, query), where="the result of source.query")
        except sa.exc.DBAPIError as exc:
            raise ConfigurationError(f"source.query: the database refused it: {database_message(exc)}") from None
        check_unique_columns(names, where="the result of source.query")
        return cls(engine, sa.text(query).columns(*[sa.column(n) for n in names]).subquery("source_query"))

    @property
    def engine_name(self) -> str:
        """The SQLAlchemy dialect name (``duckdb``, ``sqlite``, ``postgresql`` …)."""
        return str(self.engine.dialect.name)

    def columns(self) -> list[str]:
        """Column names."""
        return [str(c.name) for c in subquery_of(self.selectable).c]

    def count(self) -> int:
        """``SELECT COUNT(*)``."""
        import sqlalchemy as sa

        with self.transaction() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(self.selectable)).scalar_one())

    def group_counts(self, columns: Sequence[str]) -> pd.DataFrame:
        """One GROUP BY in the database."""
        with self.transaction() as connection:
            return group_counts_sql(connection, self.selectable, columns)

    def population_join(self, population: EngineTable, quasi_identifiers: Sequence[str], count_column: str) -> Any:
        """Class sizes joined with a population table of the same database, in one statement (only sizes return)."""
        from privacy_plugins.engines.population_join import population_join_sql

        if not isinstance(population, SqlTable) or population.engine.url != self.engine.url:
            raise ConfigurationError("the population table must be in the same database (the join runs there)")
        with self.transaction() as connection:
            return population_join_sql(
                connection, self.selectable, population.selectable, quasi_identifiers, count_column
            )

    def population_counts(self, name: str, quasi_identifiers: Sequence[str], count_column: str) -> pd.DataFrame:
        """A population table of the same database, summed per QI combination there (one GROUP BY)."""
        from privacy_plugins.engines.population_join import population_counts_sql

        with self.transaction() as connection:
            return population_counts_sql(connection, name, quasi_identifiers, count_column)

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        """A connection in a transaction, committed when the block succeeds: the pinned one once helpers exist."""
        pinned = self.session.connection
        if pinned is None:
            with self.engine.begin() as connection:
                yield connection
            return
        if self.session.busy:
            yield pinned
            return
        if pinned.in_transaction():
            pinned.commit()
        self.session.busy = True
        try:
            yield pinned
        except BaseException:
            pinned.rollback()
            raise
        else:
            pinned.commit()
        finally:
            self.session.busy = False

    def _helper(self, frame: pd.DataFrame) -> Any:
        """Store a small frame as a temporary helper table of the pinned connection (see the module docstring)."""
        if self.session.connection is None:
            connection = self.engine.connect()
            connection.detach()  # closing it ends the session (and its temporary tables), not a pool checkin
            self.session.connection = connection
        name = f"pp_helper_{uuid.uuid4().hex[:12]}"
        with self.transaction() as connection:
            _create_temporary(connection, name, frame)
            table = lightweight_table(connection, name)
        self.session.helpers.append(name)
        return table

    def _without(self, removed: pd.DataFrame) -> EngineTable:
        """An anti-join with ``removed`` stored as a helper table (``IS NOT DISTINCT FROM``: missing values match)."""
        import sqlalchemy as sa

        source = subquery_of(self.selectable)
        flags = self._helper(removed.drop_duplicates().assign(**{_FLAG: 1})).alias("removed_rows")
        condition = sa.and_(*[source.c[c].is_not_distinct_from(flags.c[c]) for c in removed.columns])
        kept = (
            sa.select(*source.c)
            .select_from(source.outerjoin(flags, condition))
            .where(flags.c[_FLAG].is_(None))
            .subquery("kept")
        )
        return SqlTable(self.engine, kept, self.session)

    def _generalize(
        self, keep: Sequence[str], mappings: Mapping[str, pd.DataFrame], suppressed: pd.DataFrame, method: ApplyMethod
    ) -> EngineTable:
        """A SELECT that maps each QI (CASE or a join with its mapping table) and anti-joins suppressed classes."""
        import sqlalchemy as sa

        source = subquery_of(self.selectable)
        joined: Any = source
        selected: list[Any] = []
        for column in keep:
            if column not in mappings:
                selected.append(source.c[column].label(column))
                continue
            mapping = mappings[column]
            if method == "case":
                whens = dict(zip(mapping["value"].tolist(), mapping["label"].tolist(), strict=True))
                selected.append(sa.case(whens, value=source.c[column]).label(column))
            else:
                helper = self._helper(mapping).alias(f"map_{len(selected)}")
                joined = joined.join(helper, helper.c.value == source.c[column])
                selected.append(helper.c.label.label(column))
        mapped = sa.select(*selected).select_from(joined).subquery("generalized")
        if len(suppressed):
            flags = self._helper(suppressed.assign(**{_FLAG: 1})).alias("suppressed_classes")
            condition = sa.and_(*[mapped.c[c] == flags.c[c] for c in suppressed.columns])
            mapped = (
                sa.select(*[mapped.c[c] for c in keep])
                .select_from(mapped.outerjoin(flags, condition))
                .where(flags.c[_FLAG].is_(None))
                .subquery("published")
            )
        return SqlTable(self.engine, mapped, self.session)

    def blocks_applied(
        self,
        keys: pd.DataFrame,
        block_column: str,
        function: Callable[[pd.DataFrame], pd.DataFrame],
        *,
        keep: Sequence[str],
        text: Sequence[str],
        numbers: Sequence[str],
        progress: ProgressCallback | None = None,
    ) -> EngineTable:
        """Each block read in turn, ``function`` run on it here, its rows stored in a temporary table.

        A database runs no Python per group, so this process is the task: ``keys`` is a temporary
        helper table joined to the records (``IS NOT DISTINCT FROM``: missing values match), one
        SELECT per block reads that block's records, and only one block (at most the anonymizer's
        ``block_limit`` records) is in memory at a time. The output goes to a temporary table of the
        pinned connection (dropped with its session, like every helper): the published table is that
        table, already computed, not a view of the source.
        """
        import sqlalchemy as sa

        columns = [c for c in keys.columns if c != block_column]
        check_columns([*columns, *keep], self.columns())
        renamed = {c: f"__pp_key_{i}" for i, c in enumerate(columns)}
        helper = self._helper(keys[[*columns, block_column]].rename(columns=renamed)).alias("block_keys")
        source = subquery_of(self.selectable)
        condition = sa.and_(*[source.c[c].is_not_distinct_from(helper.c[renamed[c]]) for c in columns])
        block = helper.c[block_column]
        joined = source.join(helper, condition)
        typed = [sa.cast(source.c[c], sa.String).label(c) if c in text else source.c[c].label(c) for c in keep]
        empty = sa.select(*typed, *[sa.cast(sa.null(), sa.Double).label(n) for n in numbers]).where(sa.false())
        name = f"pp_helper_{uuid.uuid4().hex[:12]}"
        with self.transaction() as connection:
            quoted = connection.dialect.identifier_preparer.quote(name)
            create = empty.select_from(source).compile(connection, compile_kwargs={"literal_binds": True})
            connection.execute(sa.text(f"CREATE TEMPORARY TABLE {quoted} AS {create}"))
            self.session.helpers.append(name)
            output = lightweight_table(connection, name)
            ids = [int(b) for (b,) in connection.execute(sa.select(block).distinct().order_by(block)).fetchall()]
            for finished, b in enumerate(ids, start=1):
                rows = connection.execute(sa.select(*[source.c[c] for c in keep], block).select_from(joined)
                                          .where(block == b)).fetchall()  # fmt: skip
                done = function(frame_from_rows(rows, [*keep, block_column], coerce_float=True))
                _insert(connection, output, done[[*keep, *numbers]])
                if progress is not None:
                    progress(finished, len(ids))
        return SqlTable(self.engine, output, self.session)

    def select_sql(self) -> str:
        """The table's SELECT as plain SQL of this dialect (values inlined), for ``CREATE TABLE … AS``."""
        import sqlalchemy as sa

        statement = sa.select(*subquery_of(self.selectable).c)
        return str(statement.compile(self.engine, compile_kwargs={"literal_binds": True}))

    def batches(self, size: int) -> Iterator[pd.DataFrame]:
        """The rows, streamed ``size`` at a time (server-side cursor where the driver has one)."""
        import sqlalchemy as sa

        names = self.columns()
        with self.transaction() as connection:
            result = connection.execute(  # per statement: the pinned connection keeps its own options
                sa.select(*subquery_of(self.selectable).c),
                execution_options={"stream_results": True, "yield_per": size},
            )
            for rows in result.partitions(size):
                yield frame_from_rows(rows, names, coerce_float=True)

    def to_pandas(self) -> pd.DataFrame:
        """All rows."""
        frames = list(self.batches(100_000))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=self.columns())

    def close(self) -> None:
        """End the pinned connection: the database drops the temporary helper tables with its session."""
        pinned, self.session.connection = self.session.connection, None
        self.session.helpers.clear()
        if pinned is not None:
            pinned.close()
