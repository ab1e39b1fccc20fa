"""Partitioned releases: one release per Dagster partition, all checked against one release history.

``build_release_assets(spec, partitions_def=…)`` partitions every asset of the graph. A
partition's release reads only its own rows and publishes to its own table:

* the source names the partition — ``source.path`` with ``{partition_key}`` (one extract
  per partition: ``extracts/{partition_key}.parquet``), or ``source.query`` with
  ``{partition_key}``, ``{partition_start}``, ``{partition_end}`` (time partitions), each
  replaced by a quoted SQL literal (``WHERE visit >= {partition_start} AND visit < {partition_end}``);
* the destination table is ``<table>_<partition key>`` (letters, digits and ``_``); two
  partition keys that would name the same table (``2026-01`` and ``2026_01``) are refused —
  when the graph is defined for static and time partitions, when the run starts for dynamic
  ones — since one partition's release would replace the other's.

Every partition shares the spec's release history (``pp_history_<name>`` beside the tables):
the composition check of a partition sees the releases of every partition published before
it, so a partition that would disclose a sensitive value together with them is blocked and
publishes nothing (``docs/release-history.md``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import dagster as dg

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec

__all__ = ["PARTITION_TAG", "check_partitionable", "partition_key_of", "partition_spec", "partition_table"]

PARTITION_TAG = "dagster/partition"
PLACEHOLDERS = ("{partition_key}", "{partition_start}", "{partition_end}")
_PATH_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def partition_table(table: str, key: str) -> str:
    """The destination table of partition ``key``: ``<table>_<key>`` in letters, digits and ``_``."""
    return f"{table}_{re.sub(r'[^A-Za-z0-9]+', '_', key).strip('_')}"


def _sharing_a_table(table: str, keys: Sequence[str], key: str | None = None) -> tuple[str, str] | None:
    """Two partition keys (one of them ``key`` when given) that name the same table, else ``None``."""
    seen: dict[str, str] = {}
    wanted = partition_table(table, key) if key is not None else None
    for other in keys:
        name = partition_table(table, other)
        if wanted is not None:
            if name == wanted and other != key:
                return other, key  # type: ignore[return-value]
            continue
        if name in seen:
            return seen[name], other
        seen[name] = other
    return None


def _same_table_message(spec: ReleaseSpec, pair: tuple[str, str]) -> str:
    return (
        f"release {spec.name!r}: partitions {pair[0]!r} and {pair[1]!r} would both publish to table "
        f"{partition_table(spec.destination.table, pair[1])!r} (a partition's table is the spec's table and its key "
        "in letters, digits and _); rename one of the partition keys"
    )


def check_partitionable(spec: ReleaseSpec, partitions_def: dg.PartitionsDefinition[Any]) -> None:
    """Refuse, when the graph is defined, a partitioned release whose source cannot name a partition.

    Static and time partitions are known now: two keys that would publish to one table are refused
    here too (dynamic partitions are checked when a run of one starts).
    """
    if not isinstance(partitions_def, dg.DynamicPartitionsDefinition):
        pair = _sharing_a_table(spec.destination.table, list(partitions_def.get_partition_keys()))
        if pair is not None:
            raise ConfigurationError(_same_table_message(spec, pair))
    if spec.history.enabled and spec.destination.parquet is not None:
        raise ConfigurationError(
            f"release {spec.name!r} is partitioned with a release history, but a Parquet destination keeps one "
            "history per table; publish to a DuckDB or SQL destination (one history for every partition's table)"
        )
    source = spec.source
    if source.path is not None and "{partition_key}" in str(source.path):
        return
    if source.query is not None and any(p in source.query for p in PLACEHOLDERS):
        windows = ("{partition_start}" in source.query) or ("{partition_end}" in source.query)
        if windows and not isinstance(partitions_def, dg.TimeWindowPartitionsDefinition):
            raise ConfigurationError(
                f"release {spec.name!r}: source.query uses {{partition_start}}/{{partition_end}}, which only time "
                "partitions have; use {partition_key}"
            )
        return
    raise ConfigurationError(
        f"release {spec.name!r} is partitioned, but its source does not name the partition: put {{partition_key}} in "
        "source.path, or {partition_key} / {partition_start} / {partition_end} in source.query"
    )


def partition_key_of(context: Any) -> str | None:
    """The partition of ``context``'s run (a step's context, or one holding ``run``); ``None``: unpartitioned."""
    run = getattr(context, "run", None)
    if run is None:
        step = getattr(context, "op_execution_context", None)
        run = getattr(step, "run", None)
    if run is None:
        return None
    key = (run.tags or {}).get(PARTITION_TAG)
    return str(key) if key is not None else None


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def partition_spec(
    spec: ReleaseSpec, partitions_def: dg.PartitionsDefinition[Any], key: str | None, instance: Any = None
) -> ReleaseSpec:
    """The release of one partition: its source rows and its destination table (the history stays the spec's).

    ``instance`` (the run's Dagster instance) lists a dynamic definition's keys: a key that
    would publish to another key's table fails the step before anything is read.
    """
    if key is None:
        raise dg.Failure(
            description=f"release {spec.name!r} is partitioned: materialize one partition (--partition KEY)",
            allow_retries=False,
        )
    dynamic = isinstance(partitions_def, dg.DynamicPartitionsDefinition)
    keys = partitions_def.get_partition_keys(dynamic_partitions_store=instance) if dynamic else None
    if not (key in keys if keys is not None else partitions_def.has_partition_key(key)):
        raise dg.Failure(
            description=f"release {spec.name!r}: {key!r} is not one of its partitions", allow_retries=False
        )
    pair = _sharing_a_table(spec.destination.table, keys, key) if keys is not None else None
    if pair is not None:
        raise dg.Failure(description=_same_table_message(spec, pair), allow_retries=False)
    source = spec.source
    if source.path is not None and "{partition_key}" in str(source.path):
        if not _PATH_KEY.fullmatch(key) or ".." in key:
            raise dg.Failure(description=f"partition {key!r} cannot name a file (letters, digits, . _ - only)")
        source = dataclasses.replace(source, path=type(source.path)(str(source.path).replace("{partition_key}", key)))
    elif source.query is not None:
        query = source.query.replace("{partition_key}", _literal(key))
        if isinstance(partitions_def, dg.TimeWindowPartitionsDefinition):
            window = partitions_def.time_window_for_partition_key(key)
            query = query.replace("{partition_start}", _literal(_timestamp(window.start)))
            query = query.replace("{partition_end}", _literal(_timestamp(window.end)))
        source = dataclasses.replace(source, query=query)
    destination = dataclasses.replace(spec.destination, table=partition_table(spec.destination.table, key))
    return dataclasses.replace(spec, source=source, destination=destination)
