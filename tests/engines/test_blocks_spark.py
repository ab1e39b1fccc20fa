"""The block path on Spark ``local[2]`` (issue 28): each block a task, the same published multiset as in memory.

One session, one small table, k-member (bucket goes the same way: ``test_blocks_in_engine.py``
runs both through the pandas engine, ``tests/release/test_release_engine_blocks.py`` both through
a DuckDB source's release). The release steps on a ``spark:`` source take the same route, and a
block failing in a task is the product's own one-line error. Skipped with the reason when PySpark
or a Java runtime is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True)

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize, clustering
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.engines import SparkTable
from privacy_plugins.engines import spark as spark_engine
from privacy_plugins.engines.aggregates import COUNT_COLUMN
from privacy_plugins.engines.blocks_in_engine import NCP_COLUMN, anonymize_blocks_in_engine
from privacy_plugins.errors import PrivacyPluginsError
from privacy_plugins.release import sources
from privacy_plugins.release.spec import ReleaseSpec
from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


@pytest.fixture(scope="module")
def spark2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A ``local[2]`` session: two executor threads, so blocks run as parallel tasks."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the tasks import the package from this interpreter
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("privacy_plugins-blocks")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_blocks_publish_the_in_memory_multiset(spark2: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clustering, "BLOCK", 80)
    rng = np.random.default_rng(4)
    n = 300
    frame = pd.DataFrame({"pid": np.arange(n), "age": rng.integers(17, 90, n),
                          "color": rng.choice(["red", "blue", "orange", "green"], n),
                          "s": rng.choice(list("abcde"), n), "note": rng.integers(0, 3, n)})  # fmt: skip
    spark_frame = spark2.createDataFrame(
        [tuple(r) for r in frame.itertuples(index=False)],
        schema="pid bigint, age bigint, color string, s string, note bigint",
    )
    for algorithm, models in {"k-member": [KAnonymity(3), DistinctLDiversity("s", 2)]}.items():
        settings: dict[str, Any] = {"quasi_identifiers": ["age", "color"], "models": models, "seed": 9,
                                    "hierarchies": {"color": COLOR}, "identifiers": ["pid"],
                                    "insensitive": ["note"]}  # fmt: skip
        memory = anonymize(frame, algorithm=algorithm, **settings)
        engine = anonymize_blocks_in_engine(SparkTable(spark_frame), algorithm=algorithm, **settings)
        published = engine.published.to_pandas()
        assert memory.details.to_dict()["n_blocks"] == engine.n_blocks > 2
        assert list(published.columns) == list(memory.table.columns) == ["age", "color", "s", "note"]
        assert sorted(map(tuple, published.astype(str).to_numpy().tolist())) == sorted(
            map(tuple, memory.table.astype(str).to_numpy().tolist())
        )
        assert engine.rows_in == engine.rows_out + engine.suppressed == n
        assert engine.ncp == pytest.approx(memory.utility.ncp)
        assert all(result.passed for result in engine.checked)
        report = measure(published, quasi_identifiers=["age", "color"], sensitive_attributes=["s"])
        assert report.k >= 2 and report.for_attribute("s").distinct_l >= 2


def test_spark_clusters_each_block_once_and_reports_them(spark2: Any) -> None:
    """The re-check's GROUP BY and every read after it use the blocks Spark kept: no block runs twice."""
    frame = spark2.createDataFrame([(g, v) for g in range(6) for v in range(5)], schema="g bigint, v bigint")
    runs = spark2.sparkContext.accumulator(0)

    def clustered(block: pd.DataFrame) -> pd.DataFrame:  # a closure: pickled by value into the tasks
        runs.add(1)
        return block[["g", "v"]].assign(x=1.0)

    keys = pd.DataFrame({"g": range(6), "b": [0, 0, 1, 1, 2, 2]})
    reported: list[tuple[int, int | None]] = []
    table = SparkTable(frame).blocks_applied(
        keys, "b", clustered, keep=["g", "v"], text=[], numbers=["x"], progress=lambda d, t: reported.append((d, t))
    )
    assert runs.value == 3 and reported[-1] == (3, 3)
    assert all(0 < done <= 3 and total == 3 for done, total in reported)
    assert int(table.group_counts(["g"])[COUNT_COLUMN].sum()) == 30
    assert len(table.to_pandas()) == 30
    assert (
        len(table.generalized(keep=["g", "v"], mappings={}, suppressed=pd.DataFrame(), method="case").to_pandas()) == 30
    )
    assert runs.value == 3  # read three times after the blocks ran: each block clustered once
    table.uncache()


REPO = Path(__file__).resolve().parents[2]


def census_spec(folder: Path, source: dict[str, Any], destination: dict[str, Any]) -> ReleaseSpec:
    """The demo census spec, k-member, 300 rows, every output under ``folder`` (no history: each release alone)."""
    data = yaml.safe_load((REPO / "specs" / "demo_census.yaml").read_text())
    data |= {"source": source, "destination": destination, "history": False, "workdir": str(folder / "work"),
             "report": {"directory": str(folder / "reports")}, "algorithm": {"name": "k-member"}}  # fmt: skip
    data["requirements"] = {"k": 4, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05}
    return ReleaseSpec.from_dict(data)


def released(spec: ReleaseSpec) -> tuple[Any, Any, Any]:
    """load, anonymize, check, publish (the diagnosis reads what load stored; its plots cost seconds)."""
    loaded = load_step(spec)
    candidate = anonymize_step(spec, loaded)
    check = check_step(spec, candidate)
    assert check.passed, check.summary()
    publish_step(spec, candidate, check)
    return loaded, candidate, check


def test_a_spark_source_release_runs_its_blocks_as_tasks(
    spark2: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release steps on a ``spark:`` source: the in-memory release's multiset, only GROUP BYs collected."""
    monkeypatch.setattr(clustering, "BLOCK", 100)
    rows = 300
    reference = {"duckdb": str(tmp_path / "memory.duckdb"), "table": "t"}
    _, memory, memory_check = released(
        census_spec(tmp_path / "memory", {"generate": "census", "rows": rows}, reference)
    )
    spark2.createDataFrame(pp.generate_census(rows, seed=0)).createOrReplaceTempView("census_blocks")
    spec = census_spec(tmp_path / "spark", {"spark": "census_blocks", "max_rows_in_memory": 10},
                       {"spark": str(tmp_path / "out" / "t")})  # fmt: skip
    collected: list[tuple[str, ...]] = []
    group_counts = spark_engine._group_counts

    def counted(frame: Any, columns: Sequence[str]) -> pd.DataFrame:
        result = group_counts(frame, columns)
        collected.append(tuple(result.columns))
        assert len(result) <= rows and COUNT_COLUMN in result.columns  # counts per combination, never a record
        return result

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("rows left Spark")

    monkeypatch.setattr(spark_engine, "_group_counts", counted)
    for name in ("batches", "to_pandas"):
        monkeypatch.setattr(SparkTable, name, refuse)
    monkeypatch.setattr(sources, "read_source", refuse)
    loaded = load_step(spec)
    assert loaded.kind == "blocks" and len(collected) == 1  # the one GROUP BY of the source
    candidate = anonymize_step(spec, loaded)
    assert len(collected) == 2 and NCP_COLUMN in collected[1]  # and the one re-measuring the blocks' output
    check = check_step(spec, candidate)  # measured where it is staged: publishing is the Spark destination's own
    assert check.passed, check.summary()
    assert candidate.rows_in == rows == candidate.rows_out + candidate.suppressed
    assert (candidate.suppressed, candidate.ncp) == (memory.suppressed, pytest.approx(memory.ncp))
    assert {c.name: (c.passed, c.observed) for c in check.checks} == {
        c.name: (c.passed, c.observed) for c in memory_check.checks
    }
    monkeypatch.undo()
    published = spark2.read.parquet(candidate.staging_table).toPandas()
    expected = duckdb.connect(str(tmp_path / "memory.duckdb"), read_only=True).execute("SELECT * FROM t").df()
    text = [f.astype(str).sort_values(list(f.columns)).reset_index(drop=True) for f in (published, expected)]
    assert list(published.columns) == list(expected.columns) and text[0].equals(text[1])


def test_a_failing_block_is_the_products_own_one_line_error(spark2: Any) -> None:
    """The task's traceback quotes a value; the driver's error is one line without it.

    Every class of the product's errors crosses the same way (``test_blocks_in_engine.py``).
    """
    raised = ValueError("could not convert 'Jane Doe 1961-04-02'\nline two")
    expected, message = PrivacyPluginsError, "a block task failed in Spark with ValueError (its message is not shown)"
    frame = spark2.createDataFrame(pd.DataFrame({"color": ["red", "blue", "red"], "n": [1, 2, 3]}))
    keys = pd.DataFrame({"color": ["red", "blue"], "block": [0, 1]})

    def fails(block: pd.DataFrame) -> pd.DataFrame:
        if int(block["block"].iloc[0]) == 1:
            raise raised
        return block[["color", "n"]]

    with pytest.raises(expected) as caught:  # the blocks run where they are applied (once, persisted)
        SparkTable(frame).blocks_applied(keys, "block", fails, keep=["color", "n"], text=["color"], numbers=[])
    assert type(caught.value) is expected and str(caught.value) == message  # one line: no traceback, no value
    assert "Jane" not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
