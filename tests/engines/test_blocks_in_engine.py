"""The block path through an engine's tasks (issue 28; the pandas engine here, Spark in ``test_blocks_spark.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from privacy_plugins.core.anonymize import anonymize, bucket_clustering, clustering
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, FrequencyLDiversity, KAnonymity, TCloseness
from privacy_plugins.engines import PandasTable, SqlTable
from privacy_plugins.engines import spark as spark_engine
from privacy_plugins.engines.blocks_in_engine import anonymize_blocks_in_engine
from privacy_plugins.errors import (
    ConfigurationError,
    HierarchyError,
    InfeasibleAnonymizationError,
    PrivacyPluginsError,
)

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)
PROBLEMS = {
    "k-member": [KAnonymity(3), DistinctLDiversity("s", 2)],
    "bucket": [FrequencyLDiversity("s", 2), KAnonymity(2)],
}


def problem(algorithm: str, seed: int = 9) -> dict[str, Any]:
    return {"quasi_identifiers": ["age", "color"], "models": PROBLEMS[algorithm], "hierarchies": {"color": COLOR},
            "identifiers": ["pid"], "insensitive": ["note"], "seed": seed}  # fmt: skip


@pytest.fixture
def frame(monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    monkeypatch.setattr(clustering, "BLOCK", 70)
    monkeypatch.setattr(bucket_clustering, "BLOCK", 70)
    rng = np.random.default_rng(6)
    n = 320
    return pd.DataFrame({"pid": np.arange(n), "age": rng.integers(17, 90, n),
                         "color": rng.choice(["red", "blue", "orange", "green"], n),
                         "s": rng.choice(list("abcde"), n), "note": rng.integers(0, 3, n)})  # fmt: skip


def engine_table(kind: str, frame: pd.DataFrame, folder: Path) -> Any:
    """The rows in the pandas engine, or in SQLite (a database runs the blocks one at a time in this process)."""
    if kind == "pandas":
        return PandasTable(frame)
    url = f"sqlite:///{folder / 'rows.sqlite'}"
    frame.to_sql("rows", sa.create_engine(url), index=False)
    return SqlTable.from_table(sa.create_engine(url), "rows")


@pytest.mark.parametrize(
    ("algorithm", "engine_kind"), [*((a, "pandas") for a in sorted(PROBLEMS)), ("k-member", "sqlite")]
)
def test_the_engines_blocks_publish_the_in_memory_multiset(
    frame: pd.DataFrame, algorithm: str, engine_kind: str, tmp_path: Path
) -> None:
    memory = anonymize(frame, algorithm=algorithm, **problem(algorithm))
    table = engine_table(engine_kind, frame.sample(frac=1.0, random_state=2), tmp_path)
    engine = anonymize_blocks_in_engine(table, algorithm=algorithm, **problem(algorithm))
    published = engine.published.to_pandas()
    assert memory.details.to_dict()["n_blocks"] == engine.n_blocks > 2
    assert list(published.columns) == list(memory.table.columns)
    rows = sorted(map(tuple, published.astype(str).to_numpy().tolist()))
    assert rows == sorted(map(tuple, memory.table.astype(str).to_numpy().tolist()))
    assert engine.rows_in == engine.rows_out + engine.suppressed == len(frame)
    assert engine.ncp == pytest.approx(memory.utility.ncp) and all(result.passed for result in engine.checked)
    report = measure(published, quasi_identifiers=["age", "color"], sensitive_attributes=["s"])
    diversity = report.for_attribute("s").frequency_l if algorithm == "bucket" else report.for_attribute("s").distinct_l
    assert report.k >= max(m.minimum_class_size for m in PROBLEMS[algorithm]) and diversity >= 2 - 1e-9


@pytest.mark.parametrize("engine_kind", ["pandas", "sqlite"])
def test_the_engines_report_each_block_and_the_phases(frame: pd.DataFrame, engine_kind: str, tmp_path: Path) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.calls: list[object] = []

        def __call__(self, done: int, total: int | None) -> None:
            self.calls.append((done, total))

        def phase(self, name: str) -> None:
            self.calls.append(name)

    recorder = Recorder()
    table = engine_table(engine_kind, frame, tmp_path)
    engine = anonymize_blocks_in_engine(table, algorithm="k-member", progress=recorder, **problem("k-member"))
    n = engine.n_blocks
    assert n > 2
    assert recorder.calls == [
        f"k-member: {n} blocks anonymized as {table.engine_name} tasks",
        *((done, n) for done in range(1, n + 1)),
        "k-member: the whole output re-measured",
    ]


def test_what_cannot_run_per_block_is_refused_by_name(frame: pd.DataFrame) -> None:
    settings = {**problem("k-member"), "models": [KAnonymity(3), TCloseness("s", 0.5)]}
    with pytest.raises(ConfigurationError, match="whole table"):
        anonymize_blocks_in_engine(PandasTable(frame), algorithm="k-member", **settings)
    with pytest.raises(ConfigurationError, match="'mondrian' does not anonymize block by block"):
        anonymize_blocks_in_engine(PandasTable(frame), algorithm="mondrian", **problem("k-member"))


class PythonException(Exception):
    """Stands for PySpark's: its text is the task's whole traceback, with the marked line somewhere inside."""


@pytest.mark.parametrize(
    ("raised", "expected", "message"),
    [
        (HierarchyError("value of 'color' is not a leaf"), ConfigurationError, "value of 'color' is not a leaf"),
        (InfeasibleAnonymizationError("a block of 2 records"), InfeasibleAnonymizationError, "a block of 2 records"),
        (KeyError("Jane Doe"), PrivacyPluginsError, "a block task failed in Spark with KeyError (its message is not "
                                                    "shown)"),
    ],
)  # fmt: skip
def test_a_spark_task_error_crosses_to_the_driver_as_one_line(
    raised: Exception, expected: type[Exception], message: str
) -> None:
    marked = spark_engine._task_failure(raised)
    assert "Jane" not in str(marked)  # a foreign error's message never leaves the task
    trace = f'Traceback (most recent call last):\n  File "worker.py", line 9\n{raised!r}\nRuntimeError: {marked}\n'
    with pytest.raises(expected) as caught, spark_engine.task_errors():
        raise PythonException(trace)
    assert type(caught.value) is expected and str(caught.value) == message
    with pytest.raises(PythonException), spark_engine.task_errors():  # a Spark failure of its own: left as it is
        raise PythonException("executor lost")
    with pytest.raises(expected), spark_engine.task_errors():  # the mark inside a job's failure of another class
        raise RuntimeError(f"Job aborted due to stage failure: {trace}")
