"""The block path on Spark ``local[2]`` (issue 28): each block a task, the same published multiset as in memory.

One session, one small table, k-member (bucket goes the same way: ``test_blocks_in_engine.py``
runs both through the pandas engine). Skipped with the reason when PySpark
or a Java runtime is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True)

from privacy_plugins.core.anonymize import anonymize, clustering
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.engines import SparkTable
from privacy_plugins.engines.blocks_in_engine import anonymize_blocks_in_engine

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
