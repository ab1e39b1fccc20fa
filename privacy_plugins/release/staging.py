"""Staging tables: where a staged candidate lives between steps in a database, and how staged rows are measured.

A release's destination (``release/destination``) stages its
anonymized rows in one of two places, recorded in the ``Candidate``:

- **a staging table** ``<table>__staging_<created>_<run tag>`` in the destination
  database when the source is that database, or a DuckDB source publishes to
  another DuckDB file (``CREATE TABLE … AS SELECT`` by the anonymize step; the
  file ``ATTACH``-ed in the source's connection, ``release/destination/duckdb.py``).
  ``<created>`` is the creation time (Unix seconds, 8 hex digits); ``<run tag>``
  is 8 hex digits of SHA-256 over the spec name,
  source fingerprint and run id. A step accepts a staging table only when its
  name carries this run's tag, so a candidate naming another run's (or any
  other) table is refused.
- **the run's Parquet working file** ``candidate.parquet`` otherwise (``COPY … TO`` by DuckDB, or streamed in
  batches, or written whole from memory), with its SHA-256 in the ``Candidate``.

Leftover staging tables. A staging table is committed by the anonymize step and
lives until the publish step, possibly in another process hours later: a visible
staging table may belong to a live run. So the rule is the one
``remove_stale_temporaries`` uses for files it cannot lock: by age. The anonymize
step (before its ``CREATE TABLE``) and the publish step (inside the swap
transaction) drop

- staging tables of the same destination table older than
  :data:`STALE_STAGING_SECONDS` (their run is taken for dead; a run whose publish
  comes later than that fails with a clear "re-run from anonymize" error), and
- this run's own earlier staging tables (a retried anonymize task);

but only tables this product created: every staging table is recorded in the
registry table :data:`REGISTRY` (``pp_working_tables``, one column
``privacy_plugins_working_table``: the names, no values) in the transaction that
creates it, and its row is deleted with it. A table named like a staging table
that is not in the registry — the user's own, or a leftover of a version before
the registry — is never dropped. The registry is an ordinary table, so it works
the same on DuckDB, SQLite, PostgreSQL and any SQLAlchemy database; it exists
only while it has rows (dropped when its last row is deleted). A table of that
name with other columns is someone else's: the load step refuses the release.
The check step drops this run's staging table when a check that may not fail
fails (the candidate can never be published), the publish step when the
re-measure refuses it, and ``run_release`` when its run ends unpublished.

The publishers' ``__incoming_`` tables are never committed under that name on
databases with transactional DDL, so there is nothing of theirs to clean up here.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.full_domain_in_engine import model_columns
from privacy_plugins.engines.sql import group_counts_sql
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.destination.working_file import file_sha256
from privacy_plugins.release.spec import ReleaseSpec

__all__ = [
    "REGISTRY",
    "STALE_STAGING_SECONDS",
    "StagedMeasure",
    "belongs_to_run",
    "check_registry",
    "clean_staging",
    "drop_table",
    "file_sha256",
    "forget",
    "leftovers",
    "measure_pair",
    "measure_staged",
    "measure_table",
    "register",
    "registered",
    "run_tag",
    "staging_name",
]

STALE_STAGING_SECONDS = 24 * 3600.0
"""A staging table older than this is taken for the leftover of a dead run and dropped."""

REGISTRY = "pp_working_tables"
"""The table that records the staging tables this product created (their names only)."""

_REGISTRY_COLUMN = "privacy_plugins_working_table"
_REGISTRY_LOCK = 0x70705F776F726B  # PostgreSQL advisory lock key of the registry ("pp_work")


def run_tag(spec: ReleaseSpec, run_id: str) -> str:
    """8 hex digits naming this run of this spec (part of its staging table's name)."""
    text = f"{spec.name}\0{spec.source_fingerprint}\0{run_id}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _pattern(table: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(table)}__staging_([0-9a-f]{{8}})_([0-9a-f]{{8}})")


def staging_name(spec: ReleaseSpec, run_id: str, *, now: float | None = None) -> str:
    """A new staging table name for this run: ``<table>__staging_<created>_<run tag>``."""
    created = int(time.time() if now is None else now)
    return f"{spec.destination.table}__staging_{created:08x}_{run_tag(spec, run_id)}"


def belongs_to_run(spec: ReleaseSpec, run_id: str, name: str) -> bool:
    """Whether ``name`` is a staging table of this run for the spec's destination table."""
    match = _pattern(spec.destination.table).fullmatch(name)
    return match is not None and match.group(2) == run_tag(spec, run_id)


def leftovers(names: Sequence[str], table: str, *, tag: str, now: float | None = None) -> list[str]:
    """Staging tables of ``table`` among ``names`` to drop: this run's (``tag``) and any stale one."""
    now = time.time() if now is None else now
    found = []
    for name in names:
        match = _pattern(table).fullmatch(name)
        if match is not None and (match.group(2) == tag or now - int(match.group(1), 16) > STALE_STAGING_SECONDS):
            found.append(name)
    return sorted(found)


def _quote(connection: Any, name: str) -> str:
    return str(connection.dialect.identifier_preparer.quote(name))


def _serialized(connection: Any) -> None:
    """PostgreSQL: a transaction-level advisory lock, so that sessions create, read and drop the registry in turn.

    (Without it, a session could drop the registry as empty while another's first row is not committed
    yet.) SQLite and DuckDB serialize writers themselves: a conflicting transaction fails instead.
    """
    import sqlalchemy as sa

    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _REGISTRY_LOCK})


def check_registry(connection: Any) -> bool:
    """Whether the registry exists; a table of that name that is not the registry is refused.

    Raises:
        ConfigurationError: ``pp_working_tables`` exists with other columns than the registry's one
            ``privacy_plugins_working_table`` (someone else's table: never read, written or dropped).
    """
    import sqlalchemy as sa

    _serialized(connection)
    if not sa.inspect(connection).has_table(REGISTRY):
        return False
    columns = [
        str(c) for c in connection.execute(sa.text(f"SELECT * FROM {_quote(connection, REGISTRY)} LIMIT 0")).keys()
    ]
    if columns != [_REGISTRY_COLUMN]:
        raise ConfigurationError(
            f"the source database has a table {REGISTRY!r} that is not this product's registry of working tables "
            f"(its columns are not [{_REGISTRY_COLUMN!r}]); rename it to release inside this database"
        )
    return True


def registered(connection: Any) -> set[str]:
    """The names of the staging tables this product created and has not dropped yet (in ``connection``'s view)."""
    import sqlalchemy as sa

    _serialized(connection)
    if not check_registry(connection):
        return set()
    query = f"SELECT {_quote(connection, _REGISTRY_COLUMN)} FROM {_quote(connection, REGISTRY)}"
    return {str(row[0]) for row in connection.execute(sa.text(query))}


def register(connection: Any, name: str, *, catalog: str | None = None) -> None:
    """Record ``name`` as a table this product created; call it in the transaction that creates the table.

    ``catalog``: a DuckDB file ``ATTACH``-ed under that name (its registry was checked by
    :func:`clean_staging` on the file itself just before).
    """
    import sqlalchemy as sa

    _serialized(connection)
    registry, column = _quote(connection, REGISTRY), _quote(connection, _REGISTRY_COLUMN)
    if catalog is not None:
        registry = f"{_quote(connection, catalog)}.main.{registry}"
        connection.execute(sa.text(f"CREATE TABLE IF NOT EXISTS {registry} ({column} VARCHAR(255) PRIMARY KEY)"))
    elif not check_registry(connection):
        connection.execute(sa.text(f"CREATE TABLE {registry} ({column} VARCHAR(255) PRIMARY KEY)"))
    connection.execute(sa.text(f"INSERT INTO {registry} ({column}) VALUES (:name)"), {"name": name})


def forget(connection: Any, names: Sequence[str]) -> None:
    """Delete the registry rows of ``names`` (tables dropped or renamed into the destination); an empty registry too."""
    import sqlalchemy as sa

    _serialized(connection)
    if not names or not check_registry(connection):
        return
    registry, column = _quote(connection, REGISTRY), _quote(connection, _REGISTRY_COLUMN)
    connection.execute(sa.text(f"DELETE FROM {registry} WHERE {column} = :name"), [{"name": n} for n in names])
    if connection.execute(sa.text(f"SELECT COUNT(*) FROM {registry}")).scalar_one() == 0:
        connection.execute(sa.text(f"DROP TABLE {registry}"))


def clean_staging(connection: Any, spec: ReleaseSpec, run_id: str, *, keep: str | None = None) -> list[str]:
    """Drop our leftover staging tables (see the module docstring) in ``connection``'s transaction; the names dropped.

    Registry rows of tables that are gone (dropped by hand) are deleted too.
    """
    import sqlalchemy as sa

    names = sa.inspect(connection).get_table_names()
    ours = registered(connection)
    table = spec.destination.table
    dropped = [n for n in leftovers(names, table, tag=run_tag(spec, run_id)) if n != keep and n in ours]
    for name in dropped:
        connection.execute(sa.text(f"DROP TABLE IF EXISTS {_quote(connection, name)}"))
    gone = [n for n in ours - set(names) if _pattern(table).fullmatch(n)]
    forget(connection, [*dropped, *gone])
    return dropped


def drop_table(engine: Any, name: str) -> bool:
    """Drop the staging table ``name`` in its own transaction if this product created it; whether it did."""
    import sqlalchemy as sa

    with engine.begin() as connection:
        if name not in registered(connection):
            return False
        connection.execute(sa.text(f"DROP TABLE IF EXISTS {_quote(connection, name)}"))
        forget(connection, [name])
    return True


def _aggregates_digest(columns: list[str], rows: int, aggregates: pd.DataFrame) -> str:
    """SHA-256 of the staged table's columns, row count and class counts (order-independent)."""
    text = aggregates.astype(str)
    text = text.sort_values(list(text.columns)).reset_index(drop=True)
    digest = hashlib.sha256(repr((columns, rows)).encode("utf-8"))
    digest.update(text.to_csv(index=False).encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class StagedMeasure:
    """The staged rows as the checks see them: columns, row count, classes, and a digest of all three.

    ``parts``: each staged part's columns as written (``{"table": columns}``, or a two-table
    release's ``{"qit": …, "st": …}``, whose ``columns`` are those of its joined groups).
    ``signature``: a two-table release's class signature for the history (its groups are not its
    classes for an adversary who reads the QIT's exact values: :func:`~privacy_plugins.core.history.linked_signature`);
    ``None`` for one table, whose signature is its measured classes.
    """

    columns: list[str]
    rows: int
    classes: EquivalenceClasses
    digest: str
    parts: dict[str, list[str]] = field(default_factory=dict)
    signature: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def written(self) -> dict[str, list[str]]:
        """The columns per part (one table: ``{"table": columns}``)."""
        return self.parts or {"table": self.columns}


def measure_staged(spec: ReleaseSpec, connection: Any, selectable: Any) -> StagedMeasure:
    """One ``COUNT(*)`` and one ``GROUP BY`` (QIs, models' columns, sensitive attributes) in ``connection``."""
    import sqlalchemy as sa

    from privacy_plugins.engines.sql import subquery_of

    subquery = subquery_of(selectable)
    columns = [str(c.name) for c in subquery.c]
    rows = int(connection.execute(sa.select(sa.func.count()).select_from(subquery)).scalar_one())
    aggregates = group_counts_sql(connection, subquery, _grouped(spec))
    return _measured(spec, columns, rows, aggregates)


def _grouped(spec: ReleaseSpec) -> list[str]:
    """The QIs, the models' columns and every sensitive attribute (the metadata reports the l and t of each)."""
    qis = list(spec.quasi_identifiers)
    models = spec.models()
    cut = {str(m.research_subset_column) for m in models if m.research_subset_column is not None}  # not published
    grouped = [*qis, *model_columns(models, qis), *map(str, spec.sensitive_attributes)]
    return [column for column in dict.fromkeys(grouped) if column not in cut]


def measure_table(spec: ReleaseSpec, table: EngineTable) -> StagedMeasure:
    """:func:`measure_staged` on an engine table (a Spark staging folder or table)."""
    aggregates = table.group_counts(_grouped(spec))
    return _measured(spec, table.columns(), table.count(), aggregates)


def _measured(spec: ReleaseSpec, columns: list[str], rows: int, aggregates: pd.DataFrame) -> StagedMeasure:
    digest = _aggregates_digest(columns, rows, aggregates)
    classes = classes_from_aggregates(aggregates, list(spec.quasi_identifiers))  # pops COUNT_COLUMN
    assert COUNT_COLUMN not in aggregates.columns
    return StagedMeasure(columns, rows, classes, digest)


def measure_pair(spec: ReleaseSpec, qit: pd.DataFrame, st: pd.DataFrame, digest: str) -> StagedMeasure:
    """A two-table release measured by its groups, as an attacker links the pair (``digest``: of its bytes).

    Raises:
        VerificationError: a QIT row does not join exactly one ST group.
    """
    from privacy_plugins.core.anonymize import linked_classes
    from privacy_plugins.core.anonymize.anatomy import GROUP_COLUMN
    from privacy_plugins.core.history import linked_signature
    from privacy_plugins.release.linked import joined_view

    classes = linked_classes(qit, st, GROUP_COLUMN, spec.quasi_identifiers, spec.sensitive_attributes)
    columns = [str(c) for c in joined_view(st.iloc[:0], GROUP_COLUMN, spec.quasi_identifiers).columns]
    parts = {"qit": [str(c) for c in qit.columns], "st": [str(c) for c in st.columns]}
    signature = linked_signature(qit, st, GROUP_COLUMN, spec.quasi_identifiers, spec.sensitive_attributes)
    return StagedMeasure(columns, len(qit), classes, digest, parts, signature)
