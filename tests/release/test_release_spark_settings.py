"""A Spark destination's spec: bad settings are exit-2 errors before any work, without starting Spark.

No Spark session is needed here: what cannot work (a bad key or value type, a master
Spark does not know, PySpark or Java missing, an existing folder that is not a release,
a remote path, two-table releases) is refused when the spec is built or before the load
step reads a row. The releases themselves are in ``test_release_spark_destination.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.cli import main
from privacy_plugins.engines.spark_session import check_spark_settings
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec
from privacy_plugins.release.workarea import _lock_path


def spec_dict(tmp_path: Path, destination: dict[str, Any], **changes: Any) -> dict[str, Any]:
    algorithm = changes.pop("algorithm", None)
    data = demo_spec_dict(tmp_path, **changes)
    data["destination"] = destination
    if algorithm is not None:
        data["algorithm"] = algorithm  # replaced, not merged
    return data


@pytest.mark.parametrize(
    ("destination", "changes", "message"),
    [
        ({"spark": "t", "spark_settings": {"executor.memory": "1g"}}, {}, r"'executor.memory' is not a spark\.\* key"),
        ({"spark": "t", "spark_settings": {"spark.jars": ["a.jar"]}}, {}, r"\['spark.jars'\] must be a string"),
        ({"spark": "t", "spark_settings": {"spark.master": None}}, {}, "must be a string, number or boolean"),
        ({"spark": "t", "spark_settings": {"spark.master": "localhost"}}, {}, "must be local, local"),
        ({"spark": "t", "spark_settings": "spark.master=local"}, {}, "must map spark.* keys to values, got str"),
        ({"duckdb": "x.duckdb", "table": "t", "spark_settings": {"spark.master": "local"}}, {}, "needs a spark:"),
        ({"spark": "s3a://bucket/out/census"}, {}, "not a local path"),
        ({"spark": "out/census.csv"}, {}, "published as Parquet"),
        ({"spark": "drop table"}, {}, "neither a table name"),
        ({"spark": "t", "duckdb": "x.duckdb"}, {}, r"got \['duckdb', 'spark'\]"),
        ({"duckdb": "x.duckdb"}, {}, "^destination needs 'table'$"),
        ({"spark": "t"}, {"algorithm": {"name": "anatomy"}}, "publishes two linked tables"),
        (
            {"spark": "t", "spark_settings": {"spark.master": "local[2]"}},
            {"source": {"spark": "census", "spark_settings": {"spark.master": "local[1]"}}},
            "one SparkSession reads and writes",
        ),
    ],
)
def test_bad_spark_destinations_fail_when_the_spec_is_built(
    tmp_path: Path, destination: dict[str, Any], changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ReleaseSpec.from_dict(spec_dict(tmp_path, destination, **changes), base_dir=tmp_path)


def test_settings_name_the_key_never_the_value() -> None:
    secret = "s3cr3t-value"
    with pytest.raises(ConfigurationError) as caught:
        check_spark_settings({"spark.hadoop.fs.s3a.secret.key": [secret]}, setting="source.spark_settings")
    assert "spark.hadoop.fs.s3a.secret.key" in str(caught.value) and secret not in str(caught.value)
    assert check_spark_settings({"spark.master": "local[*]", "spark.sql.ansi.enabled": True}, setting="s") == {
        "spark.master": "local[*]",
        "spark.sql.ansi.enabled": True,
    }


def test_a_folder_is_resolved_beside_the_spec_but_its_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "out" / ".census.0a1b2c3d").mkdir(parents=True)
    (tmp_path / "out" / "census").symlink_to(".census.0a1b2c3d", target_is_directory=True)
    spec = ReleaseSpec.from_dict(spec_dict(tmp_path, {"spark": "out/census/"}), base_dir=tmp_path)
    assert spec.destination.spark == str(tmp_path.resolve() / "out" / "census")  # the link, not its version
    assert spec.destination.table == "census" and spec.destination.describe() == f"spark:{spec.destination.spark}"
    assert _lock_path(spec.destination) == tmp_path.resolve() / "out" / ".census.lock"
    assert DestinationSpec(spark="lake.db.census_release").table == "census_release"
    assert _lock_path(DestinationSpec(spark="lake.db.census_release")) is None  # a catalog: no local lock
    assert DestinationSpec(spark="/data/out.parquet", table="named").table == "named"


def run_cli(tmp_path: Path, data: dict[str, Any]) -> int:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return main(["release", str(path), "--quiet"])


def nothing_written(tmp_path: Path) -> bool:
    return not (tmp_path / "reports").exists() and not (tmp_path / "work").exists() and not (tmp_path / "out").exists()


def test_a_spark_destination_without_pyspark_is_exit_2_before_work(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if PySpark were not installed
    data = spec_dict(tmp_path, {"spark": str(tmp_path / "out" / "census")})
    with pytest.raises(ConfigurationError, match=r"a spark: destination needs PySpark: pip install"):
        run_release(ReleaseSpec.from_dict(data))
    assert run_cli(tmp_path, data) == 2
    assert "needs PySpark" in capsys.readouterr().err
    assert nothing_written(tmp_path)


def test_a_spark_destination_without_java_is_exit_2_before_work(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("pyspark")
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    data = spec_dict(tmp_path, {"spark": "census_release"})
    with pytest.raises(ConfigurationError, match="needs a Java runtime"):
        run_release(ReleaseSpec.from_dict(data))
    assert nothing_written(tmp_path)


def test_an_existing_folder_that_is_not_a_release_is_exit_2_before_work(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if os.environ.get("JAVA_HOME") is None and not __import__("shutil").which("java"):
        pytest.skip("the check needs a Java runtime first")
    (tmp_path / "out" / "census").mkdir(parents=True)
    (tmp_path / "out" / "census" / "data.parquet").write_bytes(b"PAR1")
    data = spec_dict(tmp_path, {"spark": str(tmp_path / "out" / "census")})
    with pytest.raises(ConfigurationError, match="exists and is not a Spark release"):
        run_release(ReleaseSpec.from_dict(data))
    assert run_cli(tmp_path, data) == 2
    assert not (tmp_path / "reports").exists()
    assert sorted(p.name for p in (tmp_path / "out" / "census").iterdir()) == ["data.parquet"]
