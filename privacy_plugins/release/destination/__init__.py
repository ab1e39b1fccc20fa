"""Destinations: where a release is published, one class per kind, each with one atomic swap.

Design (issue 25, items 2 and 4). A :class:`~.base.Destination` is built from the spec's
``destination:`` by :func:`open_destination` — :class:`~.duckdb.DuckDBDestination`,
:class:`~.sql.SqlDestination` (URL or Airflow ``conn_id``), :class:`~.parquet.ParquetDestination`,
:class:`~.spark.SparkDestination` — and offers

- ``stage(parts, run) -> Staged``: the rows (``{"table": t}``, an ``EngineTable`` of any
  engine) written where they wait for the swap, by the fastest path the engines allow;
- ``measure(staged, run)``: columns, rows, classes and digest by one ``GROUP BY`` where the
  staged rows are;
- ``swap(staged, run, accept)``: re-measured inside the swap transaction where the engine
  has one (``accept`` refuses rows that differ from what was checked), counts verified, the
  swap hook :func:`~.base.before_swap`, the atomic replace;
- ``discard(staged, run)``, ``read_staged``, ``read()``, ``measure_published`` (receipts);
- ``replace(frames)``: the in-memory flow's one-shot stage + swap of one table or Anatomy's
  pair (``{"qit": …, "st": …}``), both parts in the same transaction / version link.

Where staged rows live, per source → destination (``Staged.kind``):

=================================  ===============================================================
source → destination               staged rows
=================================  ===============================================================
SQL → the same database            ``CREATE TABLE <table>__staging_<created>_<run tag> AS SELECT``
DuckDB → another DuckDB file       ``ATTACH`` the file in the source's connection, same statement
DuckDB → Parquet folder            ``COPY (SELECT …) TO`` the run's ``candidate.parquet``
Spark → Spark                      the source's session writes ``<target>[.]__incoming_<8 hex>``
anything else                      the run's ``candidate.parquet``, streamed in batches
=================================  ===============================================================

Staging tables are bound to the run and registered (``release/staging.py``); the working
file lives in the run's private folder and is checked against its SHA-256. Rows cross into
Python only when no engine reaches the other: a non-DuckDB source to a file, or a working
file to another SQL database. The ``Staged`` record travels in the ``Candidate``
(``staging_table``, or ``path`` + ``sha256``) between processes.
"""

from __future__ import annotations

from privacy_plugins.release.destination.base import TABLE, Accept, Destination, Staged, StageRun
from privacy_plugins.release.spec import DestinationSpec

__all__ = ["TABLE", "Accept", "Destination", "StageRun", "Staged", "open_destination"]


def open_destination(spec: DestinationSpec) -> Destination:
    """The destination the spec names."""
    if spec.duckdb is not None:
        from privacy_plugins.release.destination.duckdb import DuckDBDestination

        return DuckDBDestination(spec)
    if spec.parquet is not None:
        from privacy_plugins.release.destination.parquet import ParquetDestination

        return ParquetDestination(spec)
    if spec.spark is not None:
        from privacy_plugins.release.destination.spark import SparkDestination

        return SparkDestination(spec)
    from privacy_plugins.release.destination.sql import SqlDestination

    return SqlDestination(spec)
