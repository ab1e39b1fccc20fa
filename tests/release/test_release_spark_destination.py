"""A Spark destination (a local Parquet folder behind a link, or a catalog table).

Spark → Spark releases give the in-memory (and DuckDB) release: same node, suppressed
count, published multiset and re-measured checks, with no row leaving Spark. A crash
between staging and swap, a staged row count that differs and a failed table rename
leave the previous release readable and intact. One ``local[1]`` session (the
``spark`` fixture) serves every test: the release reuses it through ``getOrCreate``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True)

from release_fixtures import demo_spec_dict, rerun_crashing_before_the_swap

import privacy_plugins as pp
from privacy_plugins.cli import main
from privacy_plugins.engines.spark import SparkTable
from privacy_plugins.errors import PublishError
from privacy_plugins.release import destinations, sources, spark_destination
from privacy_plugins.release.destination import base as destination_base
from privacy_plugins.release.destination import working_file
from privacy_plugins.release.flow import run_release
from privacy_plugins.release.linked import read_release
from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]

ROWS = 2_000
SETTINGS = {"spark.master": "local[1]", "spark.sql.shuffle.partitions": "2"}
ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult"
ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]


def multiset(frame: pd.DataFrame) -> pd.DataFrame:
    text = frame.astype(str)
    return text.sort_values(list(text.columns)).reset_index(drop=True)


def checks(result: Any) -> dict[str, tuple[bool, object]]:
    return {c.name: (c.passed, c.observed) for c in result.check.checks}


@pytest.fixture(scope="module")
def census_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("census") / "census.parquet"
    pp.generate_census(ROWS, seed=0).to_parquet(path, index=False)
    return path


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, pd.DataFrame]:
    """The in-memory release of the same 2,000 census rows, and what it published."""
    folder = tmp_path_factory.mktemp("memory")
    data = demo_spec_dict(folder, rows=ROWS, history=False)  # the reference checks each release alone
    result = run_release(ReleaseSpec.from_dict(data))
    assert result.passed, result.failure
    return result, read_release(ReleaseSpec.from_dict(data))  # type: ignore[return-value]


@pytest.fixture(scope="module")
def census_table(spark: Any, census_parquet: Path) -> str:
    spark.read.parquet(str(census_parquet)).write.mode("overwrite").saveAsTable("census")
    return "census"


def spark_spec(folder: Path, source: dict[str, Any], destination: dict[str, Any], **changes: Any) -> ReleaseSpec:
    data = demo_spec_dict(folder, rows=ROWS, source=source, **changes)
    data["destination"] = destination
    return ReleaseSpec.from_dict(data)


def target(kind: str, tmp_path: Path, name: str) -> dict[str, Any]:
    return {"spark": str(tmp_path / "out" / name)} if kind == "folder" else {"spark": name}


def rows_stay_in_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("rows left Spark")

    monkeypatch.setattr(sources, "read_source", refuse)
    monkeypatch.setattr(SparkTable, "batches", refuse)
    monkeypatch.setattr(SparkTable, "to_pandas", refuse)
    monkeypatch.setattr(working_file, "stream_to_parquet", refuse)


def leftovers(spark: Any, tmp_path: Path) -> list[str]:
    """Staging folders/tables and previous tables still around (a version folder behind the link is not one)."""
    out = tmp_path / "out"
    names = [p.name for p in out.iterdir()] if out.is_dir() else []
    names += [t.name for t in spark.catalog.listTables()]
    links = {os.readlink(out / n) for n in names if (out / n).is_symlink()}
    return sorted(
        n
        for n in names
        if "__incoming_" in n or "__previous_" in n or (n.startswith(".") and ".lock" not in n and n not in links)
    )


@pytest.mark.parametrize("kind", ["folder", "table"])
def test_spark_to_spark_release_equals_the_in_memory_release(
    kind: str, spark: Any, memory, census_parquet: Path, census_table: str, tmp_path: Path, monkeypatch
) -> None:
    reference, reference_rows = memory
    source = {"spark": str(census_parquet) if kind == "folder" else census_table, "spark_settings": SETTINGS}
    spec = spark_spec(tmp_path, source, target(kind, tmp_path, f"census_{kind}"))
    rows_stay_in_spark(monkeypatch)
    result = run_release(spec)
    monkeypatch.undo()
    assert result.passed, result.failure
    assert result.candidate.levels == reference.candidate.levels
    assert result.candidate.suppressed == reference.candidate.suppressed
    assert result.candidate.ncp == pytest.approx(reference.candidate.ncp, rel=1e-12)
    assert result.loaded.rows == ROWS == result.candidate.rows_out + result.candidate.suppressed
    assert result.candidate.path.startswith("spark:") and "__incoming_" in result.candidate.path
    composition = {"composition": (True, 0.0)} if kind == "folder" else {}  # a folder keeps a release history
    assert checks(result) == checks(reference) | composition
    published = read_release(spec)
    assert published is not None and "person_id" not in published.columns
    assert multiset(published).equals(multiset(reference_rows))
    assert leftovers(spark, tmp_path) == []
    if kind == "folder":
        link = tmp_path / "out" / "census_folder"
        assert link.is_symlink() and os.readlink(link).startswith(".census_folder.")


@pytest.mark.skipif(not (ADULT / "adult_subset.csv").is_file(), reason=f"Adult data not found at {ADULT}")
def test_adult_sample_spark_to_spark_equals_pandas_and_duckdb(spark: Any, tmp_path: Path, monkeypatch) -> None:
    frame = pp.read_table(ADULT / "adult_subset.csv")
    parquet = tmp_path / "adult.parquet"
    frame.to_parquet(parquet, index=False)
    data = demo_spec_dict(tmp_path / "pandas", source={"path": str(ADULT / "adult_subset.csv")})
    data |= {
        "name": "adult",
        "identifiers": [],
        "quasi_identifiers": ADULT_QIS,
        "sensitive_attributes": ["occupation"],
        "insensitive": ["salary-class"],
        "hierarchies": str(ADULT),
        "requirements": {"k": 5, "l": 2, "l_variant": "distinct", "suppression_limit": 0.05},
        "history": False,  # as on Spark, which keeps no release history (yet): the same checks everywhere
    }
    results = {"pandas": run_release(ReleaseSpec.from_dict(data))}
    published = {"pandas": read_release(ReleaseSpec.from_dict(data))}
    duck = demo_spec_dict(tmp_path / "duckdb") | {
        k: v for k, v in data.items() if k not in ("destination", "report", "workdir")
    }
    duck["source"] = {"path": str(parquet), "out_of_core_bytes": 0}  # through DuckDB, out of core
    results["duckdb"] = run_release(ReleaseSpec.from_dict(duck))
    published["duckdb"] = read_release(ReleaseSpec.from_dict(duck))
    on_spark = {**duck, "source": {"spark": str(parquet), "spark_settings": SETTINGS}}
    on_spark["destination"] = {"spark": str(tmp_path / "out" / "adult_release")}
    rows_stay_in_spark(monkeypatch)
    results["spark"] = run_release(ReleaseSpec.from_dict(on_spark))
    monkeypatch.undo()
    published["spark"] = read_release(ReleaseSpec.from_dict(on_spark))
    assert results["duckdb"].loaded.source.startswith("duckdb:") and results["spark"].loaded.source.startswith("spark:")
    for engine in ("duckdb", "spark"):
        result, expected = results[engine], results["pandas"]
        assert result.passed, (engine, result.failure)
        assert result.candidate.levels == expected.candidate.levels, engine
        assert result.candidate.suppressed == expected.candidate.suppressed, engine
        assert result.candidate.suppressed > 0  # the comparison covers the suppression
        assert checks(result) == checks(expected), engine
        assert multiset(published[engine]).equals(multiset(published["pandas"])), engine


@pytest.mark.parametrize("kind", ["folder", "table"])
def test_a_crash_between_staging_and_swap_keeps_the_previous_release(
    kind: str, spark: Any, memory, census_parquet: Path, tmp_path: Path, monkeypatch
) -> None:
    _, previous = memory
    where = target(kind, tmp_path, f"crash_{kind}")
    destinations.publish_table(previous, DestinationSpec(**where))  # the in-memory flow's Spark publish
    source = {"spark": str(census_parquet), "spark_settings": SETTINGS}
    # (published above without a release history; the history's own crash test is further down)
    spec = spark_spec(tmp_path, source, where, requirements={"k": 6}, history=False)

    def crash() -> None:
        raise RuntimeError("killed between staging and swap")

    monkeypatch.setattr(destination_base, "before_swap", crash)
    with pytest.raises(RuntimeError, match="killed"):
        run_release(spec)
    monkeypatch.undo()
    assert multiset(read_release(spec)).equals(multiset(previous))
    assert leftovers(spark, tmp_path) == []  # the staged rows were removed


def test_a_staged_row_count_that_differs_refuses_to_publish(
    spark: Any, memory, census_parquet: Path, tmp_path: Path, monkeypatch
) -> None:
    _, previous = memory
    where = target("folder", tmp_path, "short")
    destinations.publish_table(previous, DestinationSpec(**where))
    write = spark_destination._write_stage

    def lose_a_row(frame: Any, staging: str, *, folder: bool) -> None:
        write(frame.limit(frame.count() - 1), staging, folder=folder)

    monkeypatch.setattr(spark_destination, "_write_stage", lose_a_row)
    source = {"spark": str(census_parquet), "spark_settings": SETTINGS}
    spec = spark_spec(tmp_path, source, where, history=False)  # (published above without a release history)
    result = run_release(spec)
    assert not result.passed and "checks failed" in str(result.failure)
    assert [c.name for c in result.check.checks if not c.passed] == ["row_accounting"]
    monkeypatch.undo()
    assert multiset(read_release(spec)).equals(multiset(previous))
    # The swap counts again on its own: a stage whose count differs is never swapped in.
    staged = spark_destination.stage(spark.createDataFrame(previous.head(10)), DestinationSpec(**where))
    with pytest.raises(PublishError, match="wrote 10 rows .* but the release has 11; nothing was published"):
        staged.publish(11)
    staged.discard()
    assert multiset(read_release(spec)).equals(multiset(previous))
    assert leftovers(spark, tmp_path) == []


def test_a_failed_table_rename_puts_the_previous_table_back(spark: Any, memory, monkeypatch) -> None:
    _, previous = memory
    destination = DestinationSpec(spark="renamed")
    destinations.publish_table(previous.head(50), destination)
    staged = spark_destination.stage(spark.createDataFrame(previous.head(20)), destination)
    # Counted, then the staged table vanishes: the first rename (previous aside) works, the second fails.
    monkeypatch.setattr(destination_base, "before_swap", lambda: spark.sql(f"DROP TABLE {staged.staging}"))
    with pytest.raises(PublishError, match="the destination was left as it was"):
        staged.publish(20)
    monkeypatch.undo()
    assert len(read_release_of(destination)) == 50
    assert not [t.name for t in spark.catalog.listTables() if "__previous_" in t.name]


def read_release_of(destination: DestinationSpec) -> pd.DataFrame:
    frame = destinations.read_published(destination)
    assert frame is not None
    return frame


def test_other_sources_publish_to_spark(spark: Any, memory, tmp_path: Path) -> None:
    """A DuckDB or generated source's snapshot release goes through its staged Parquet file; rows through Arrow."""
    import duckdb

    _, reference_rows = memory
    db = tmp_path / "source.duckdb"
    with duckdb.connect(str(db)) as connection:
        connection.register("frame", pp.generate_census(ROWS, seed=0))
        connection.execute("CREATE TABLE census AS SELECT * FROM frame")
    pushed = spark_spec(tmp_path / "a", {"duckdb": str(db), "table": "census"}, target("folder", tmp_path, "from_db"))
    result = run_release(pushed)
    assert result.passed, result.failure
    assert result.loaded.kind == "snapshot" and result.loaded.source.startswith("duckdb:")
    assert multiset(read_release(pushed)).equals(multiset(reference_rows))
    generated = spark_spec(tmp_path / "b", {"generate": "census", "rows": ROWS}, {"spark": "from_memory"})
    result = run_release(generated)
    assert result.passed, result.failure
    assert result.loaded.kind == "snapshot" and result.loaded.source == "pandas:generated"
    assert multiset(read_release(generated)).equals(multiset(reference_rows))
    # A release that needs the rows (marked suppressed rows) goes through Arrow; the same rows as to DuckDB.
    marked = {"algorithm": {"suppressed_rows": "mark"}}
    source = {"generate": "census", "rows": ROWS}
    in_memory = spark_spec(tmp_path / "c", source, {"spark": "from_rows"}, **marked)
    result = run_release(in_memory)
    assert result.passed, result.failure
    assert result.loaded.kind == "rows"
    duck = spark_spec(tmp_path / "d", source, {"duckdb": str(tmp_path / "d.duckdb"), "table": "t"}, **marked)
    assert run_release(duck).passed
    assert multiset(read_release(in_memory)).equals(multiset(read_release(duck)))
    assert leftovers(spark, tmp_path) == []


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the block ends


def test_cli_release_to_spark_exit_codes(
    spark: Any, census_parquet: Path, tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def spec_file(name: str, source: dict[str, Any], destination: dict[str, Any]) -> Path:
        data = demo_spec_dict(tmp_path / name, rows=ROWS, source=source)
        data["destination"] = destination
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    source = {"spark": str(census_parquet), "spark_settings": SETTINGS}
    good = spec_file("good", source, {"spark": "out/cli_release"})  # relative to the spec file
    assert main(["release", str(good), "--quiet"]) == 0
    assert (tmp_path / "out" / "cli_release").is_symlink()
    assert main(["published", str(good), "--format", "json"]) == 0
    assert '"holds": true' in capsys.readouterr().out
    unreachable = {"spark.master": f"spark://127.0.0.1:{closed_port()}"}
    for name, bad_source in [
        ("master", {"spark": str(census_parquet), "spark_settings": unreachable}),
        ("generated", {"generate": "census", "rows": ROWS}),
    ]:
        destination = {"spark": "out/bad", "spark_settings": unreachable} if name == "generated" else {"spark": "x"}
        assert main(["release", str(spec_file(name, bad_source, destination)), "--quiet"]) == 2
        assert "cannot reach 'spark://127.0.0.1:" in capsys.readouterr().err
        assert not (tmp_path / name).exists() and not (tmp_path / "out" / "bad").exists()
    write = spark_destination._write_stage
    monkeypatch.setattr(
        spark_destination, "_write_stage", lambda frame, staging, folder: write(frame.limit(5), staging, folder=folder)
    )
    short = spec_file("short", source, {"spark": "out/cli_release"})
    assert main(["release", str(short), "--quiet"]) == 1  # not published: the staged rows do not add up
    monkeypatch.undo()
    assert main(["published", str(good), "--format", "json"]) == 0  # the first release is still there


class _SignalledAfterSettingAside:
    """The session, but SIGTERM arrives while the previous table is renamed aside (docker stop mid-swap)."""

    def __init__(self, session: Any, name: str) -> None:
        self.session, self.name = session, name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.session, attribute)

    def sql(self, text: str) -> Any:
        result = self.session.sql(text)
        if f"`{self.name}` RENAME TO" in text and "__previous_" in text:
            os.kill(os.getpid(), signal.SIGTERM)
        return result


def test_a_stop_signal_between_the_table_renames_puts_the_previous_table_back(spark: Any, memory) -> None:
    from privacy_plugins.cli._signals import Stopped, stopped_by_signals

    _, previous = memory
    destination = DestinationSpec(spark="stopped")
    destinations.publish_table(previous.head(50), destination)
    staged = spark_destination.stage(spark.createDataFrame(previous.head(20)), destination)
    staged.session = _SignalledAfterSettingAside(spark, "stopped")
    try:
        with pytest.raises(Stopped), stopped_by_signals():
            staged.publish(20)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    staged.session = spark
    staged.discard()
    assert len(read_release_of(destination)) == 50  # never a release without its table
    assert not [t.name for t in spark.catalog.listTables() if "__previous_" in t.name]


def test_a_spark_folder_keeps_its_release_history_old_with_old_after_a_crash_between_the_swaps(
    spark: Any, tmp_path: Path, monkeypatch
) -> None:
    """The history is swapped right before the folder's link; a crash between the two drops its new entry."""
    from privacy_plugins.release.composition_gate import read_history
    from privacy_plugins.release.destination import open_destination

    source = tmp_path / "people.csv"
    people = pp.generate_census(600, seed=1)
    people.to_csv(source, index=False)
    spec = spark_spec(tmp_path, {"path": str(source)}, target("folder", tmp_path, "kept"))
    assert spec.history.enabled
    assert run_release(spec).passed
    before = read_release(spec)
    rerun_crashing_before_the_swap(lambda: run_release(spec), source, people, monkeypatch)
    assert (tmp_path / "out" / "kept.companions").is_symlink()  # the new history was swapped in …
    assert multiset(read_release(spec)).equals(multiset(before))  # … beside the old release
    history = read_history(spec, open_destination(spec.destination))
    assert [r.sequence for r in history.releases] == [1]  # so its last entry is dropped: old + old
    assert run_release(spec).passed
    assert [r.sequence for r in read_history(spec, open_destination(spec.destination)).releases] == [1, 2]
    assert leftovers(spark, tmp_path) == []
