"""Suites: the demo suites in expectations/, loading safely, a Checkpoint run, errors versus failures."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

import great_expectations as gx

from privacy_plugins import engines
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx import (
    ExpectTableToBeKAnonymous,
    load_suite,
    outcomes,
    validate_dataframe,
)

DEMO_TYPES = ["expect_table_to_be_k_anonymous", "expect_table_to_be_l_diverse"]


def test_demo_suites_load_with_every_expectation(expectations_dir) -> None:
    blocking = load_suite(expectations_dir / "demo_release.json")
    assert [e.expectation_type for e in blocking.expectations] == DEMO_TYPES
    assert [e.severity.value for e in blocking.expectations] == ["critical", "critical"]
    assert blocking.expectations[0].k == 5 and blocking.expectations[1].l == 2
    monitoring = load_suite(expectations_dir / "demo_release_monitoring.json")
    assert [e.severity.value for e in monitoring.expectations] == ["warning", "info"]
    for path in expectations_dir.glob("*.json"):  # every suite in the folder loads whole
        declared = json.loads(path.read_text())["expectations"]
        assert len(load_suite(path).expectations) == len(declared) > 0


def test_checkpoint_run_with_the_demo_suite(context, demo_release_table, expectations_dir) -> None:
    definition = context.data_sources.add_pandas("pandas").add_dataframe_asset("release")
    batch_definition = definition.add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add(load_suite(expectations_dir / "demo_release.json"))
    validation = context.validation_definitions.add(
        gx.ValidationDefinition(name="demo_release", data=batch_definition, suite=suite)
    )
    checkpoint = context.checkpoints.add(gx.Checkpoint(name="release_gate", validation_definitions=[validation]))

    passed = checkpoint.run(batch_parameters={"dataframe": demo_release_table})
    assert passed.success
    assert [(o.status, o.observed) for o in outcomes(passed)] == [("passed", 5), ("passed", 3)]

    intruders = demo_release_table.iloc[:3].assign(zip="90***", disease="flu")  # a class of 3, all flu
    unsafe = pd.concat([demo_release_table, intruders], ignore_index=True)
    failed = checkpoint.run(batch_parameters={"dataframe": unsafe})
    verdicts = outcomes(failed)
    assert not failed.success
    assert [(o.status, o.level, o.blocks_release) for o in verdicts] == [("failed", "error", True)] * 2
    assert verdicts[0].details["violations"] == {
        "target": "5-anonymity", "classes": 1, "records": 3, "size_histogram": {"3": 1}, "examples": None,
    }  # fmt: skip


def test_monitoring_failures_do_not_block(demo_release_table, expectations_dir) -> None:
    monitoring = load_suite(expectations_dir / "demo_release_monitoring.json")
    skewed = demo_release_table.assign(disease=["hiv"] * 5 + ["flu"] * 15)  # the first class is all hiv
    verdicts = outcomes(validate_dataframe(skewed, monitoring))
    assert [(o.status, o.level, o.blocks_release) for o in verdicts] == [
        ("failed", "warn", False), ("failed", "info", False),
    ]  # fmt: skip


def test_dropped_expectations_are_an_error_not_an_empty_suite() -> None:
    data = {
        "name": "privacy",
        "expectations": [
            {"type": "expect_table_to_be_k_anonymous", "kwargs": {"quasi_identifiers": ["zip"], "k": 5}},
            {"type": "expect_table_to_be_private_in_some_unimported_way", "kwargs": {}},
        ],
    }
    assert len(gx.ExpectationSuite(**data).expectations) == 1  # what GX does: drops it and only logs
    with pytest.raises(ConfigurationError, match="declares 2 expectations but GX loaded 1") as error:
        load_suite(data)
    assert "expect_table_to_be_private_in_some_unimported_way" in str(error.value)


def test_bad_parameters_in_a_suite_file_raise() -> None:
    data = {"name": "privacy", "expectations": [{"type": "expect_table_to_be_k_anonymous", "kwargs": {"k": 0}}]}
    with pytest.raises(ValueError, match="quasi_identifiers"):
        load_suite(data)
    data["expectations"][0]["kwargs"]["quasi_identifiers"] = ["zip"]
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        load_suite(data)


def test_without_the_import_gx_loads_the_suite_empty_and_it_passes(expectations_dir) -> None:
    script = textwrap.dedent(
        f"""
        import json, logging, pandas as pd, great_expectations as gx
        logging.disable(logging.CRITICAL)
        data = json.load(open({str(expectations_dir / "demo_release.json")!r}))
        suite = gx.ExpectationSuite(**data)
        context = gx.get_context(mode="ephemeral")
        batch = (context.data_sources.add_pandas("p").add_dataframe_asset("t")
                 .add_batch_definition_whole_dataframe("w").get_batch(
                     batch_parameters={{"dataframe": pd.DataFrame({{"zip": ["1"]}})}}))
        print(len(suite.expectations), batch.validate(suite).success)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert run.stdout.split()[-2:] == ["0", "True"], run.stderr[-2000:]


def test_a_crashing_metric_is_an_error_not_a_privacy_failure(pandas_batch, monkeypatch) -> None:
    def crash(*args, **kwargs):
        raise RuntimeError("the warehouse went away")

    monkeypatch.setattr(engines, "classes_from_pandas", crash)
    expectation = ExpectTableToBeKAnonymous(quasi_identifiers=["zip"], k=5, severity="info", catch_exceptions=False)
    result = pandas_batch(pd.DataFrame({"zip": ["1"] * 5})).validate(expectation)
    assert result.success is False and result.result.get("observed_value") is None
    (verdict,) = outcomes(result)
    assert verdict.status == "error" and verdict.blocks_release  # even at severity info
    assert "the warehouse went away" in verdict.message
