"""The Spark engine, through PySpark: GROUP BY on the cluster, broadcast mappings, anti-join suppression.

Python run in Spark's tasks (:meth:`SparkTable.blocks_applied`) fails on the driver as Spark's
``PythonException``, whose text is the task's whole traceback (and may quote a value). The tasks
therefore raise the product's own errors as one marked line (:func:`_task_failure`), and every
action that runs them (:func:`task_errors`) raises that error again on the driver — its class and
first line, never the traceback, and only the exception's type for an error that is not ours.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.engines.aggregates import COUNT_COLUMN, check_columns, classes_from_aggregates
from privacy_plugins.engines.base import ApplyMethod, EngineTable
from privacy_plugins.engines.spark_session import is_spark_path, spark_session
from privacy_plugins.errors import (
    ConfigurationError,
    InfeasibleAnonymizationError,
    PrivacyPluginsError,
    VerificationError,
)

__all__ = ["SparkTable", "classes_from_spark", "open_spark_table", "task_errors"]

#: The product's errors a task may raise, by the word that carries them to the driver (first match wins).
_TASK_ERRORS: tuple[tuple[str, type[PrivacyPluginsError]], ...] = (
    ("infeasible", InfeasibleAnonymizationError),  # the requirements cannot be met in a block: exit 1
    ("verification", VerificationError),
    ("input", ConfigurationError),  # bad input: exit 2
    ("error", PrivacyPluginsError),
)
#: Seconds between two looks at the blocks done while a job runs.
POLL_SECONDS = 0.5
_MARK = re.compile(r"\[privacy_plugins task error: (\w+) ([A-Za-z0-9_=-]*)\]")


def _task_failure(exc: BaseException) -> RuntimeError:
    """The one marked line a task raises for ``exc``: its kind and, for the product's own errors, its first line.

    The product's messages name settings and counts, never values (the project's rule); a foreign
    exception's message may quote a value, so only its type travels.
    """
    kind = next((word for word, cls in _TASK_ERRORS if isinstance(exc, cls)), "")
    if kind:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    else:
        kind, text = "error", f"a block task failed in Spark with {type(exc).__name__} (its message is not shown)"
    encoded = base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii")
    return RuntimeError(f"[privacy_plugins task error: {kind} {encoded}]")


@contextmanager
def task_errors() -> Iterator[None]:
    """Around a Spark action: a task's failure raised again as the product's own error, in one line.

    Spark reports a task's error as a ``PythonException`` (or inside a job's failure, by version and
    action): whatever the class, its text holds the task's marked line. A failure without our mark
    (an executor lost, a cast Spark refused) is left as it is.
    """
    try:
        yield
    except Exception as exc:
        found = _MARK.search(str(exc))
        if found is None:
            raise
        kind, text = found.group(1), base64.urlsafe_b64decode(found.group(2)).decode("utf-8")
        error = next((cls for word, cls in _TASK_ERRORS if word == kind), PrivacyPluginsError)
        raise error(text) from None


@contextmanager
def _reported(done: Callable[[], int], total: int, progress: ProgressCallback | None) -> Iterator[None]:
    """While the body (a Spark action) runs, ``progress(done(), total)`` as the count moves; all done at the end."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        last = 0
        while not stop.wait(POLL_SECONDS):
            now = min(done(), total)  # a retried task may count its blocks twice
            if now != last:
                last = now
                progress(now, total)

    thread = threading.Thread(target=poll, name="privacy_plugins-blocks-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    progress(total, total)


def open_spark_table(source: str, settings: Mapping[str, Any] | None = None) -> SparkTable:
    """A table name, or a Parquet/CSV path, read by a session built from ``spark.*`` settings.

    ``spark.master`` defaults to ``local[*]``; an existing session is reused (its
    static settings are Spark's to keep). A value with a ``/`` or a ``.parquet``/``.csv``
    suffix is a path (:func:`~privacy_plugins.engines.spark_session.is_spark_path`):
    CSV is read with a header and inferred types, anything else as Parquet.

    Raises:
        ConfigurationError: bad settings, PySpark or Java missing, an unreachable master,
            or the table/path cannot be read.
    """
    from privacy_plugins.errors import ConfigurationError

    session = spark_session(settings, setting="source.spark_settings")
    try:
        if source.lower().endswith(".csv"):
            frame = session.read.csv(source, header=True, inferSchema=True)
        elif is_spark_path(source):
            frame = session.read.parquet(source)
        else:
            frame = session.table(source)
    except Exception as exc:  # AnalysisException and friends: Spark's own classes
        raise ConfigurationError(f"source.spark: cannot read {source!r}: {str(exc).splitlines()[0]}") from exc
    return SparkTable(frame)


def _group_counts(frame: Any, columns: Sequence[str]) -> pd.DataFrame:
    from pyspark.sql import functions

    check_columns(columns, frame.columns)
    grouped = frame.groupBy(*[frame[column] for column in columns]).agg(
        functions.count(functions.lit(1)).alias(COUNT_COLUMN)
    )
    return grouped.toPandas()


def classes_from_spark(frame: Any, *, columns: Sequence[str], quasi_identifiers: Sequence[str]) -> EquivalenceClasses:
    """``groupBy(columns).count()`` on the cluster; only the aggregates are collected."""
    return classes_from_aggregates(_group_counts(frame, columns), quasi_identifiers)


@dataclass(frozen=True)
class SparkTable(EngineTable):
    """A Spark DataFrame as an :class:`~privacy_plugins.engines.base.EngineTable`."""

    frame: Any
    engine_name: str = "spark"

    def columns(self) -> list[str]:
        """Column names."""
        return [str(c) for c in self.frame.columns]

    def count(self) -> int:
        """``frame.count()``."""
        with task_errors():
            return int(self.frame.count())

    def group_counts(self, columns: Sequence[str]) -> pd.DataFrame:
        """One ``groupBy().count()`` on the cluster."""
        with task_errors():
            return _group_counts(self.frame, columns)

    def population_join(self, population: EngineTable, quasi_identifiers: Sequence[str], count_column: str) -> Any:
        """Class sizes joined with a Spark population table's counts, on the cluster (only sizes collected)."""
        from privacy_plugins.engines.population_join import population_join_spark

        if not isinstance(population, SparkTable):
            raise ConfigurationError("the population table must be a Spark table too (the join runs on the cluster)")
        return population_join_spark(self.frame, population.frame, quasi_identifiers, count_column)

    def population_counts(self, name: str, quasi_identifiers: Sequence[str], count_column: str) -> pd.DataFrame:
        """A table or view of the session, summed per QI combination on the cluster."""
        from privacy_plugins.engines.population_join import population_counts_spark

        return population_counts_spark(self.frame.sparkSession, name, quasi_identifiers, count_column)

    def _without(self, removed: pd.DataFrame) -> EngineTable:
        """A broadcast left-anti join with ``removed`` (null-safe equality: missing values match)."""
        from functools import reduce

        from pyspark.sql import functions

        renamed = {c: f"__pp_removed_{i}" for i, c in enumerate(removed.columns)}
        rows = removed.drop_duplicates().rename(columns=renamed)
        rows = rows.astype(object).where(rows.notna(), None)  # a missing value is NULL, not the text "NaN"
        schema = self.frame.select(*[self.frame[c].alias(renamed[c]) for c in removed.columns]).schema
        small = functions.broadcast(self.frame.sparkSession.createDataFrame(rows, schema=schema))
        condition = reduce(lambda a, b: a & b, [self.frame[c].eqNullSafe(small[renamed[c]]) for c in removed.columns])
        return SparkTable(self.frame.join(small, condition, "left_anti"))

    def _generalize(
        self, keep: Sequence[str], mappings: Mapping[str, pd.DataFrame], suppressed: pd.DataFrame, method: ApplyMethod
    ) -> EngineTable:
        """Map each QI (chained ``when`` or a broadcast join) and left-anti-join the suppressed classes."""
        from pyspark.sql import functions

        session = self.frame.sparkSession
        out = self.frame
        for index, (column, mapping) in enumerate(mappings.items()):
            if method == "case":
                expression: Any = None
                for value, label in zip(mapping["value"].tolist(), mapping["label"].tolist(), strict=True):
                    test = out[column] == functions.lit(value)
                    expression = functions.when(test, label) if expression is None else expression.when(test, label)
                out = out.withColumn(column, expression)
            else:
                value_col, label_col = f"__pp_value_{index}", f"__pp_label_{index}"
                small = session.createDataFrame(mapping.rename(columns={"value": value_col, "label": label_col}))
                out = out.join(functions.broadcast(small), out[column] == small[value_col], "inner")
                out = out.withColumn(column, functions.col(label_col)).drop(value_col, label_col)
        out = out.select(*keep)
        if len(suppressed):
            classes = session.createDataFrame(suppressed.astype(str))
            out = out.join(functions.broadcast(classes), on=list(suppressed.columns), how="left_anti").select(*keep)
        return SparkTable(out)

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
        """``keys`` broadcast and joined (null-safe), then ``groupBy(block).applyInPandas(function)`` on the cluster.

        The output is persisted (memory, then disk) and computed here by one action, so the re-check's
        ``GROUP BY`` and the destination read the blocks Spark kept instead of clustering every block
        again; :meth:`uncache` frees them. An accumulator counts the blocks done; Spark merges it as
        each task ends, and a thread hands it to ``progress`` while the job runs.
        """
        from functools import reduce

        from pyspark import StorageLevel
        from pyspark.sql import functions, types

        columns = [c for c in keys.columns if c != block_column]
        check_columns([*columns, *keep], self.columns())
        renamed = {c: f"__pp_key_{i}" for i, c in enumerate(columns)}
        fields = [types.StructField(renamed[c], self.frame.schema[c].dataType, True) for c in columns]
        schema = types.StructType([*fields, types.StructField(block_column, types.LongType(), False)])
        rows = keys[columns].astype(object).where(keys[columns].notna(), None).rename(columns=renamed)
        rows[block_column] = keys[block_column].astype("int64").tolist()
        small = functions.broadcast(self.frame.sparkSession.createDataFrame(rows, schema=schema))
        condition = reduce(lambda a, b: a & b, [self.frame[c].eqNullSafe(small[renamed[c]]) for c in columns])
        joined = self.frame.join(small, condition, "inner").select(*[self.frame[c] for c in keep], small[block_column])
        kinds = {c: types.StringType() if c in text else self.frame.schema[c].dataType for c in keep}
        out = types.StructType(
            [types.StructField(c, kind, True) for c, kind in kinds.items()]
            + [types.StructField(n, types.DoubleType(), True) for n in numbers]
        )

        finished = self.frame.sparkSession.sparkContext.accumulator(0)

        def task(block: pd.DataFrame) -> pd.DataFrame:  # a plain function: PySpark reads its arity
            try:
                done = function(block)
            except Exception as exc:  # the driver sees one marked line, not this traceback (task_errors)
                raise _task_failure(exc) from None
            finished.add(1)
            return done

        blocks = joined.groupBy(block_column).applyInPandas(task, schema=out).persist(StorageLevel.MEMORY_AND_DISK)
        with task_errors(), _reported(lambda: int(finished.value), int(keys[block_column].nunique()), progress):
            blocks.count()  # every block clustered once, into Spark's cache
        return SparkTable(blocks)

    def uncache(self) -> None:
        """Free the persisted blocks (:meth:`blocks_applied`)."""
        self.frame.unpersist()

    def batches(self, size: int) -> Iterator[pd.DataFrame]:
        """The rows through ``toLocalIterator`` (one partition at a time on the driver)."""
        names = self.columns()
        chunk: list[Any] = []
        with task_errors():
            for row in self.frame.toLocalIterator():
                chunk.append(tuple(row))
                if len(chunk) >= size:
                    yield pd.DataFrame.from_records(chunk, columns=names)
                    chunk = []
        if chunk:
            yield pd.DataFrame.from_records(chunk, columns=names)

    def to_pandas(self) -> pd.DataFrame:
        """All rows."""
        with task_errors():
            return self.frame.toPandas()
