"""ReleaseSpec: YAML and Python forms, validated up front with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from release_fixtures import REPO, demo_spec_dict

from privacy_plugins.errors import ConfigurationError, HierarchyError, RoleConflictError
from privacy_plugins.release import ReleaseSpec


def test_demo_spec_loads_with_paths_relative_to_the_file() -> None:
    spec = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census.yaml")
    assert spec.quasi_identifiers == ("age", "sex", "zip", "education", "marital_status")
    assert spec.destination.kind == "duckdb"
    assert spec.destination.duckdb == (REPO / "release_output" / "release.duckdb").resolve()
    assert [str(m) for m in spec.models()][:2] == ["5-anonymity", "distinct-2-diversity for 'disease'"]


def test_yaml_round_trip_equals_python_construction(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert ReleaseSpec.from_yaml(path) == ReleaseSpec.from_dict(data, base_dir=tmp_path)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"quasi_identifer": ["age"]}, ConfigurationError, "did you mean 'quasi_identifiers'"),
        ({"requirements": {"kk": 5}}, ConfigurationError, "unknown key 'kk' in requirements; did you mean 'k'"),
        ({"requirements": {"k": 0}}, ConfigurationError, "requirements.k must be an integer >= 1"),
        ({"requirements": {"k": "five"}}, ConfigurationError, "requirements.k must be an integer"),
        ({"requirements": {"suppression_limit": 1.0}}, ConfigurationError, r"suppression_limit must be in \[0, 1\)"),
        ({"requirements": {"l_variant": "recursive"}}, ConfigurationError, "needs requirements.c"),
        ({"requirements": {"t": 2}}, ConfigurationError, r"requirements.t must be in \[0, 1\]"),
        ({"requirements": {"bound": 0}}, ConfigurationError, r"requirements.bound must be in \(0, 1\]"),
        ({"algorithm": {"name": "flash"}}, ConfigurationError, "algorithm.name must be one of"),
        ({"algorithm": {"metric": "gain"}}, ConfigurationError, "algorithm.metric: metric must be one of"),
        ({"algorithm": {"name": "mondrian", "metric": "lm"}}, ConfigurationError, "unknown key 'metric' in algorithm"),
        ({"algorithm": {"seed": -1}}, ConfigurationError, "algorithm.seed"),
        ({"destination": {"parquet": "out"}}, ConfigurationError, "exactly one of duckdb, parquet or url"),
        ({"destination": {"table": "drop table x"}}, ConfigurationError, "destination.table must be"),
        ({"source": {"path": "x.csv", "generate": "census"}}, ConfigurationError, "exactly one of path, url"),
        ({"sensitive_attributes": ["age"]}, RoleConflictError, "'age' is given two roles"),
        ({"hierarchies": {"age": {"interval": {"widths": [10]}}}}, HierarchyError, r"no hierarchy for .*'sex'"),
        (
            {"hierarchies": {"age": {"bogus": {}}, "sex": {}, "zip": {}, "education": {}, "marital_status": {}}},
            HierarchyError,
            "must be one of",
        ),
    ],
)
def test_bad_specs_fail_before_reading_data(tmp_path: Path, change: dict, error: type, message: str) -> None:
    data = demo_spec_dict(tmp_path, **change)
    with pytest.raises(error, match=message):
        ReleaseSpec.from_dict(data, base_dir=tmp_path)


def test_missing_required_key(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path)
    del data["destination"]
    with pytest.raises(ConfigurationError, match="needs 'destination'"):
        ReleaseSpec.from_dict(data)


def test_a_missing_key_inside_a_section_is_named_with_its_section(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path)
    del data["destination"]["table"]
    with pytest.raises(ConfigurationError, match="^destination needs 'table'$"):
        ReleaseSpec.from_dict(data)


def test_missing_spec_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ReleaseSpec.from_yaml(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("name: [unclosed")
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        ReleaseSpec.from_yaml(tmp_path / "bad.yaml")


def test_destination_description_masks_a_password(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path)
    data["destination"] = {"url": "postgresql://alice:s3cret@db.example/x", "table": "t"}
    assert ReleaseSpec.from_dict(data).destination.describe() == "url:postgresql://alice:***@db.example/x#t"


def test_overrides_are_a_merge_patch(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(demo_spec_dict(tmp_path)))
    spec = ReleaseSpec.from_yaml(path, overrides={"requirements": {"k": 10, "l": None}, "name": "other"})
    assert spec.name == "other"
    assert (spec.requirements.k, spec.requirements.l) == (10, None)
    assert spec.requirements.suppression_limit == 0.05  # untouched keys stay
    with pytest.raises(ConfigurationError, match="unknown key 'kk' in requirements"):
        ReleaseSpec.from_yaml(path, overrides={"requirements": {"kk": 1}})


def test_bad_yaml_names_file_line_column_and_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: demo\nquasi_identifiers: [age, sex\nsensitive: [disease]\n")
    with pytest.raises(ConfigurationError) as caught:
        ReleaseSpec.from_yaml(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert "line 3, column 10: expected ',' or ']', but got ':'" in message
    assert "(while parsing a flow sequence started at line 2, column 20)" in message


def test_algorithm_options_follow_the_registered_schema() -> None:
    from privacy_plugins.release.spec import AlgorithmSpec

    spec = AlgorithmSpec.from_mapping({"name": "mondrian", "mode": "relaxed", "seed": 7})
    assert (spec.name, dict(spec.options), spec.seed, spec.option("mode")) == (
        "mondrian",
        {"mode": "relaxed"},
        7,
        "relaxed",
    )
    assert not spec.needs_hierarchies and AlgorithmSpec().needs_hierarchies
    assert AlgorithmSpec().option("metric") == "ncp" and AlgorithmSpec().option("mode") is None
    with pytest.raises(ConfigurationError, match="algorithm.mode: mode must be one of"):
        AlgorithmSpec.from_mapping({"name": "mondrian", "mode": "loose"})
    with pytest.raises(ConfigurationError, match="did you mean 'mondrian'"):
        AlgorithmSpec.from_mapping({"name": "mondrain"})


def test_specs_without_a_report_section_do_not_share_report_files(tmp_path: Path) -> None:
    """Two specs in one folder with no ``report:`` must not overwrite each other's diagnosis or summary."""
    base = {
        "source": {"path": "people.csv"},
        "quasi_identifiers": ["age"],
        "requirements": {"k": 2},
        "algorithm": {"name": "mondrian"},
        "destination": {"parquet": "out", "table": "people"},
    }
    first = ReleaseSpec.from_dict({"name": "first", **base}, base_dir=tmp_path)
    second = ReleaseSpec.from_dict({"name": "second", **base}, base_dir=tmp_path)
    odd = ReleaseSpec.from_dict({"name": "../odd name", **base}, base_dir=tmp_path)
    assert first.report.directory == tmp_path / "release_output" / "first"
    assert second.report.diagnosis_json != first.report.diagnosis_json
    assert odd.report.directory.parent == tmp_path / "release_output"
    assert "odd_name-" in odd.report.directory.name and ".." not in odd.report.directory.name
