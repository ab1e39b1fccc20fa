"""The release operators called directly: ``execute(context)`` with a mocked task instance."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pandas as pd
import pytest

pytest.importorskip("airflow")

from airflow.sdk import DAG, Asset
from airflow.sdk.exceptions import AirflowFailException, DownstreamTasksSkipped
from airflow.sdk.execution_time.context import OutletEventAccessors

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow import (
    AnonymizeOperator,
    LoadOperator,
    PrivacyCheckFailed,
    PrivacyCheckOperator,
    PrivacyDiagnosisOperator,
    PublishOperator,
)
from privacy_plugins.integrations.airflow.operators._base import load_spec
from privacy_plugins.release import ReleaseSpec, read_published
from privacy_plugins.release.sources import read_source

REPO = Path(__file__).resolve().parents[3]


def run(operator: Any, **context: Any) -> dict[str, Any]:
    payload = operator.execute(context={"ti": Mock(), **context})
    json.dumps(payload)  # XCom needs plain JSON
    return payload  # type: ignore[no-any-return]


@pytest.fixture(scope="module", autouse=True)
def work_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Runs that never publish keep their private working folder: keep them out of the system temp dir."""
    root = tmp_path_factory.mktemp("work_root")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRIVACY_PLUGINS_WORKDIR", str(root))
        yield root


@pytest.fixture(scope="module")
def census(module_specs: dict[str, Path]) -> dict[str, Any]:
    """One load + anonymize of the demo census, shared by the tests of this module."""
    spec_path = str(module_specs["demo_census"])
    loaded = run(LoadOperator(task_id="load", spec_path=spec_path))
    candidate = run(AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded))
    return {"spec_path": spec_path, "loaded": loaded, "candidate": candidate}


def fresh_candidate(census: dict[str, Any]) -> dict[str, Any]:
    """A candidate of a run of its own: publishing ends a run and removes its working files."""
    loaded = run(LoadOperator(task_id="load", spec_path=census["spec_path"]))
    return run(AnonymizeOperator(task_id="anonymize", spec_path=census["spec_path"], loaded=loaded))


def leaves(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {str(k) for k in value} | {s for v in value.values() for s in leaves(v)}
    if isinstance(value, list):
        return {s for v in value for s in leaves(v)}
    return {str(value)}


def test_init_only_stores_parameters() -> None:
    missing = "/nowhere/spec.yaml"  # nothing is read at DAG-parse time
    check = PrivacyCheckOperator(task_id="check", spec_path=missing, candidate={}, expectation_suite="x.json")
    assert set(check.template_fields) == {
        *("spec_path", "overrides", "working_storage", "working_storage_conn_id", "report_storage"),
        *("report_storage_conn_id", "candidate", "expectation_suite", "gx_context_root"),
    }
    assert set(PublishOperator(task_id="p", spec_path=missing, candidate={}, check={}).template_fields) >= {"check"}
    assert "loaded" in PrivacyDiagnosisOperator(task_id="d", spec_path=missing, loaded={}).template_fields
    assert "loaded" in AnonymizeOperator(task_id="a", spec_path=missing, loaded={}).template_fields
    with pytest.raises(ConfigurationError, match=r"on_failure must be one of \['fail', 'skip_downstream'\]"):
        PrivacyCheckOperator(task_id="c", spec_path=missing, candidate={}, on_failure="warn")
    with pytest.raises(TypeError):
        LoadOperator("load", missing)  # type: ignore[misc]  # keyword-only


def test_full_release_passes_summaries_without_raw_values(census: dict[str, Any], tmp_path: Path) -> None:
    # A run of its own: publishing ends the run and removes its working files, which other tests still use.
    spec_path = census["spec_path"]
    # the reports are also kept on a report storage (an ObjectStoragePath; file:// here, s3:// in the S3 test)
    common = {"spec_path": spec_path, "report_storage": f"file://{tmp_path / 'kept'}"}
    dag_run = {"run_id": "manual__ops", "dag": SimpleNamespace(dag_id="ops")}
    loaded = run(LoadOperator(task_id="load", **common), **dag_run)
    raw = read_source(ReleaseSpec.from_yaml(spec_path).source)  # the source's rows (the load step stores a snapshot)
    candidate = run(AnonymizeOperator(task_id="anonymize", loaded=loaded, **common), **dag_run)
    diagnosis = run(PrivacyDiagnosisOperator(task_id="diagnose", loaded=loaded, **common), **dag_run)
    check = run(PrivacyCheckOperator(task_id="check", candidate=candidate, **common), **dag_run)
    publication = run(PublishOperator(task_id="publish", candidate=candidate, check=check, **common), **dag_run)
    assert not Path(loaded["path"]).exists()  # the publish task removed the run's working files
    (kept,) = (tmp_path / "kept").glob("*/ops__manual__ops*")
    assert sorted(p.name for p in kept.iterdir()) == [
        "diagnosis.html",
        "diagnosis.json",
        "release.html",
        "release.json",
    ]
    assert (kept / "diagnosis.html").read_bytes() == Path(diagnosis["html_path"]).read_bytes()
    assert (kept / "release.html").read_bytes() == (Path(diagnosis["html_path"]).parent / "release.html").read_bytes()
    assert json.loads((kept / "release.json").read_text(encoding="utf-8")) == publication
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700

    assert Path(diagnosis["html_path"]).is_file() and diagnosis["k"] >= 1
    assert check["passed"] and {c["requirement"] for c in check["checks"]} >= {"5-anonymity"}
    published = read_published(ReleaseSpec.from_yaml(spec_path).destination)
    assert published is not None and len(published) == publication["rows"] == candidate["rows_out"]
    raw_values = {str(v) for column in ("zip", "disease", "occupation") for v in raw[column].unique()}
    assert not raw_values & leaves([loaded, diagnosis, candidate, check, publication])


def test_failed_requirement_fails_the_check_task(census: dict[str, Any]) -> None:
    strict = {"requirements": {"k": "50"}}  # templated values arrive as strings
    operator = PrivacyCheckOperator(
        task_id="check", spec_path=census["spec_path"], candidate=fresh_candidate(census), overrides=strict
    )  # a failed check ends its run (its working files removed): a run of its own
    with pytest.raises(PrivacyCheckFailed, match=r"(?s)blocked: 1 of \d+ privacy checks failed.*50-anonymity") as info:
        run(operator)
    assert isinstance(info.value, AirflowFailException)  # no retries: the same table fails again
    assert info.value.check is not None and info.value.check["passed"] is False


def test_failed_requirement_can_skip_downstream_instead(census: dict[str, Any]) -> None:
    with DAG(dag_id="unit_skip", schedule=None):
        check = PrivacyCheckOperator(
            task_id="check",
            spec_path=census["spec_path"],
            candidate=fresh_candidate(census),  # a failed check ends its run: a run of its own
            overrides={"requirements": {"k": 50}},
            on_failure="skip_downstream",
        )
        check >> PublishOperator(task_id="publish", spec_path=census["spec_path"], candidate={}, check={})
    ti = Mock(map_index=-1)
    with pytest.raises(DownstreamTasksSkipped) as info:
        check.execute(context={"ti": ti})
    assert info.value.tasks == ["publish"]
    pushed = {c.kwargs["key"]: c.kwargs["value"] for c in ti.xcom_push.call_args_list}
    assert pushed["return_value"]["passed"] is False


def test_impossible_requirements_fail_the_anonymize_task(module_specs: dict[str, Path]) -> None:
    spec_path = str(module_specs["demo_impossible"])
    loaded = run(LoadOperator(task_id="load", spec_path=spec_path))
    with pytest.raises(AirflowFailException, match=r"requirements cannot be met: distinct-9-diversity"):
        run(AnonymizeOperator(task_id="anonymize", spec_path=spec_path, loaded=loaded))


def test_publish_refuses_a_failed_check_and_keeps_the_old_table(census: dict[str, Any], tmp_path: Path) -> None:
    target = {"destination": {"duckdb": str(tmp_path / "gate.duckdb"), "table": "kept"}}
    common = {"spec_path": census["spec_path"], "candidate": fresh_candidate(census), "overrides": target}
    passed = run(PrivacyCheckOperator(task_id="check", **common))
    run(PublishOperator(task_id="publish", check=passed, **common))
    before = read_published(load_spec(census["spec_path"], target).destination)
    failed = {**passed, "passed": False, "checks": [{**passed["checks"][0], "passed": False}]}
    with pytest.raises(PrivacyCheckFailed, match="not published"):
        run(PublishOperator(task_id="publish", check=failed, **common))
    after = read_published(load_spec(census["spec_path"], target).destination)
    assert before is not None and after is not None
    pd.testing.assert_frame_equal(before, after)


def test_publish_retargets_by_override_and_annotates_its_asset(census: dict[str, Any], tmp_path: Path) -> None:
    target = {"destination": {"duckdb": None, "parquet": str(tmp_path / "out"), "table": "census_v2"}}
    common = {"spec_path": census["spec_path"], "candidate": fresh_candidate(census), "overrides": target}
    check = run(PrivacyCheckOperator(task_id="check", **common))
    asset = Asset(name="census_v2", uri="x-privacy-plugins://test/census_v2")
    events = OutletEventAccessors()
    publication = run(PublishOperator(task_id="publish", check=check, outlets=[asset], **common), outlet_events=events)
    assert (tmp_path / "out" / "census_v2.parquet").is_file()
    assert events[asset].extra == publication and publication["table"] == "census_v2"


def test_bad_spec_or_input_fails_without_retry(census: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(AirflowFailException, match="release spec not found"):
        run(LoadOperator(task_id="load", spec_path=str(tmp_path / "missing.yaml")))
    with pytest.raises(AirflowFailException, match="did you mean 'k'"):
        run(LoadOperator(task_id="load", spec_path=census["spec_path"], overrides={"requirements": {"kk": 5}}))
    with pytest.raises(AirflowFailException, match=r"loaded must be the upstream task's XCom dict"):
        run(AnonymizeOperator(task_id="anonymize", spec_path=census["spec_path"], loaded="{{ ti.xcom_pull() }}"))


def test_templated_overrides_become_numbers(census: dict[str, Any]) -> None:
    overrides = {"requirements": {"k": "7", "suppression_limit": "0.1"}, "destination": {"table": "t_2"}}
    spec = load_spec(census["spec_path"], overrides)
    assert (spec.requirements.k, spec.requirements.suppression_limit, spec.destination.table) == (7, 0.1, "t_2")
    assert spec.requirements.l == 2  # untouched keys keep the spec's value


def test_a_dag_rendering_native_objects_keeps_typed_params_typed(census: dict[str, Any]) -> None:
    """``render_template_as_native_obj=True``: typed ``Param``s arrive typed, a numeric-looking string stays one."""
    from airflow.sdk import Param

    overrides = {"name": "{{ params.name }}", "requirements": {"k": "{{ params.k }}"}}
    params = {"k": Param(7, type="integer"), "name": Param("2024", type="string")}
    specs = {}
    for native in (True, False):
        with DAG(f"native_{native}", schedule=None, render_template_as_native_obj=native, params=params):
            load = LoadOperator(task_id="load", spec_path=census["spec_path"], overrides=overrides)
        load.render_template_fields({"params": {"k": 7, "name": "2024"}})  # Airflow's (native) Jinja environment
        specs[native] = load.release_spec()
    assert (specs[True].requirements.k, specs[True].name) == (7, "2024")
    assert specs[False].requirements.k == 7  # rendered as "7", a number again by the coercion


def test_gx_suite_is_validated_on_the_candidate(census: dict[str, Any]) -> None:
    pytest.importorskip("great_expectations")
    suite = REPO / "expectations" / "demo_release.json"
    common = {"spec_path": census["spec_path"], "candidate": census["candidate"]}
    check = run(PrivacyCheckOperator(task_id="check", expectation_suite=str(suite), **common))
    gx_checks = [c for c in check["checks"] if c["requirement"].startswith("GX demo_release:")]
    assert check["passed"] and len(gx_checks) == 2 and all(c["passed"] for c in gx_checks)

    strict = json.loads(suite.read_text(encoding="utf-8"))
    strict["expectations"][0]["kwargs"]["k"] = 50
    (Path(census["spec_path"]).parent / "strict_suite.json").write_text(json.dumps(strict), encoding="utf-8")
    with pytest.raises(PrivacyCheckFailed, match=r"GX demo_release: expect_table_to_be_k_anonymous: 50-anonymity"):
        run(PrivacyCheckOperator(task_id="check", expectation_suite="strict_suite.json", **common))  # spec-relative


def test_check_log_labels_failed_gx_expectations_by_severity(census: dict[str, Any], tmp_path: Path) -> None:
    """A failed warning/info expectation is logged WARN/INFO (not PASS) and does not fail the task."""
    pytest.importorskip("great_expectations")
    import structlog.testing

    suite = json.loads((REPO / "expectations" / "demo_release.json").read_text(encoding="utf-8"))
    monitoring = json.loads((REPO / "expectations" / "demo_release_monitoring.json").read_text(encoding="utf-8"))
    entropy_l, t_close = monitoring["expectations"]
    entropy_l["kwargs"]["l"], entropy_l["severity"] = 50, "warning"  # fails: far too diverse
    t_close["kwargs"]["t"], t_close["severity"] = 0.0001, "info"  # fails: far too close
    suite["expectations"] = [suite["expectations"][0], entropy_l, t_close]  # k = 5, critical: passes
    (tmp_path / "suite.json").write_text(json.dumps(suite), encoding="utf-8")

    with structlog.testing.capture_logs() as logs:
        check = run(
            PrivacyCheckOperator(
                task_id="check",
                spec_path=census["spec_path"],
                candidate=census["candidate"],
                expectation_suite=str(tmp_path / "suite.json"),
            )
        )
    lines = [str(entry["event"]) for entry in logs]
    gx_lines = {line.split(":")[1].strip(): line for line in lines if " GX demo_release: " in line}
    assert gx_lines["expect_table_to_be_k_anonymous"].startswith("PASS ")
    assert gx_lines["expect_table_to_be_l_diverse"].startswith("WARN ")
    assert gx_lines["expect_table_to_be_t_close"].startswith("INFO ")
    assert "failed" in gx_lines["expect_table_to_be_t_close"]
    assert not [line for line in lines if line.startswith("PASS ") and ": failed" in line]
    assert check["passed"]  # only a critical failure fails the task


_CHECK_WITH_LOG_CAPTURE = """
import json, logging, sys
from unittest.mock import Mock

import structlog.testing

from privacy_plugins.integrations.airflow import PrivacyCheckOperator

assert "great_expectations" not in sys.modules  # GX (and its import-time log lines) come with the suite
records = []
handler = logging.Handler()
handler.emit = lambda record: records.append(f"{record.name}: {record.getMessage()}")
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.INFO)
spec_path, candidate, suite = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
operator = PrivacyCheckOperator(task_id="check", spec_path=spec_path, candidate=candidate, expectation_suite=suite)
with structlog.testing.capture_logs() as logs:
    operator.execute(context={"ti": Mock()})
print(json.dumps({"stdlib": records, "task": [str(entry["event"]) for entry in logs]}))
"""


def test_check_log_is_not_flooded_by_gx_registration_messages(census: dict[str, Any]) -> None:
    """GX logs ~220 'Skipping registering function' INFO lines when imported; the check task's log has none."""
    pytest.importorskip("great_expectations")
    import subprocess
    import sys

    suite = str(REPO / "expectations" / "demo_release.json")
    argv = [sys.executable, "-c", _CHECK_WITH_LOG_CAPTURE, census["spec_path"], json.dumps(census["candidate"]), suite]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)  # a fresh GX import
    assert result.returncode == 0, result.stderr[-3000:]
    logs = json.loads(result.stdout.strip().splitlines()[-1])
    assert not [line for line in logs["stdlib"] if "Skipping registering function" in line]
    assert any(line.startswith("PASS GX demo_release: expect_table_to_be_k_anonymous") for line in logs["task"])
    assert any(line.startswith("PASS 5-anonymity") for line in logs["task"])


def test_a_source_column_without_a_role_fails_the_load_task_naming_it(census: dict[str, Any]) -> None:
    with pytest.raises(AirflowFailException, match=r"\['occupation'\] have no role"):
        run(LoadOperator(task_id="load", spec_path=census["spec_path"], overrides={"insensitive": None}))


def test_a_pseudonym_key_from_an_airflow_connection_never_reaches_xcom(
    census: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "an-airflow-pseudonym-key-0123456789abcdef"
    monkeypatch.setenv("AIRFLOW_CONN_PSEUDONYM_KEY", json.dumps({"conn_type": "generic", "password": key}))
    overrides = {"identifiers": None, "pseudonymize": {"columns": ["person_id"], "key": {"conn_id": "pseudonym_key"}}}
    loaded = run(LoadOperator(task_id="load", spec_path=census["spec_path"], overrides=overrides))
    assert loaded["column_roles"]["person_id"] == "pseudonym" and key not in json.dumps(loaded)
    tokens = pd.read_parquet(loaded["path"])["person_id"]
    assert tokens.str.len().eq(26).all() and tokens.is_unique
    monkeypatch.setenv("AIRFLOW_CONN_PSEUDONYM_KEY", json.dumps({"conn_type": "generic", "password": "short"}))
    with pytest.raises(AirflowFailException, match="too short: 5 bytes") as caught:
        run(LoadOperator(task_id="load", spec_path=census["spec_path"], overrides=overrides))
    assert key not in str(caught.value)


def test_check_xcom_carries_each_attacks_rates_and_interval(census: dict[str, Any], tmp_path: Path) -> None:
    """Issue 31: an attack_risk requirement's check pushes each attack's risk, interval and rates, no value."""
    import yaml

    data = yaml.safe_load(Path(census["spec_path"]).read_text(encoding="utf-8"))
    attacks = {"n_attacks": 40, "sensitive_attribute": "disease", "singling_out": 1, "linkability": 1, "inference": 1}
    data["requirements"]["models"] = [{"attack_risk": attacks}]  # roles unchanged: the demo names every column's
    spec_path = tmp_path / "attacked.yaml"
    spec_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    loaded = run(LoadOperator(task_id="load", spec_path=str(spec_path)))
    candidate = run(AnonymizeOperator(task_id="anonymize", spec_path=str(spec_path), loaded=loaded))
    check = run(PrivacyCheckOperator(task_id="check", spec_path=str(spec_path), candidate=candidate))
    (attack,) = [c for c in check["checks"] if c["name"].startswith("attack_risk")]
    assert set(attack["measures"]) == {"singling_out", "linkability", "inference"}
    for measure in attack["measures"].values():
        assert measure["n_attacks"] == 40 and 0 <= measure["ci"][0] <= measure["risk"] <= measure["ci"][1] <= 1
        assert {"attack_rate", "baseline_rate", "control_rate"} <= set(measure)
    assert all(c["measures"] == {} for c in check["checks"] if c is not attack)
    raw = read_source(ReleaseSpec.from_yaml(str(spec_path)).source)
    raw_values = {str(v) for column in ("zip", "disease", "occupation") for v in raw[column].unique()}
    assert not raw_values & leaves(check)
