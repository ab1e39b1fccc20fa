"""The release as a Dagster Component: YAML attributes are the spec; ``dg scaffold``/``check``/``launch`` work."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

dg = pytest.importorskip("dagster")

from privacy_plugins.core import k_anonymity  # noqa: E402
from privacy_plugins.errors import ConfigurationError  # noqa: E402
from privacy_plugins.integrations.dagster import PrivacyRelease  # noqa: E402
from privacy_plugins.release import ReleaseSpec, read_published  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
HAS_DG = importlib.util.find_spec("dagster_dg_cli") is not None


def _component(attributes: dict[str, Any]) -> Any:
    return PrivacyRelease.resolve_from_yaml(yaml.safe_dump(attributes))


def test_yaml_attributes_are_the_release_spec_and_the_graph_publishes(
    census_spec: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    from dagster.components.testing.utils import component_defs

    attributes = census_spec()
    component = _component({**attributes, "key_prefix": "from_yaml", "policy": {"min_k": 3}})
    defs = component_defs(component=component)
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert keys == {f"from_yaml/{name}" for name in ("raw", "privacy_diagnosis", "anonymized_candidate", "published")}
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.execute_in_process(raise_on_error=False).success
    spec = ReleaseSpec.from_dict(attributes)
    published = read_published(spec.destination)
    assert published is not None and "person_id" not in published.columns
    assert k_anonymity(published, quasi_identifiers=list(spec.quasi_identifiers)) >= 3


def test_bad_attributes_fail_naming_the_key(census_spec: Callable[..., dict[str, Any]]) -> None:
    from dagster.components.testing.utils import component_defs

    with pytest.raises(Exception, match="quasi_identifier"):
        _component({**census_spec(), "quasi_identifier": ["age"]})  # a typo is an unknown attribute
    broken = _component({**census_spec(), "requirements": {"k": 0}})
    with pytest.raises(ConfigurationError, match=r"requirements\.k"):
        component_defs(component=broken)


@pytest.mark.skipif(not HAS_DG, reason="dg (dagster-dg-cli) is not installed")
def test_dg_scaffold_check_and_launch_a_release(tmp_path: Path) -> None:
    """In a copy of the repository's project: scaffold a release, validate the definitions, launch it."""
    for name in ("pyproject.toml", "dagster_defs", "specs", "expectations"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "release_output"))
        else:
            shutil.copy(source, tmp_path / name)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
    }
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")

    def dg_cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", "from dagster_dg_cli.cli import main; main()", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    scaffolded = dg_cli("scaffold", "defs", "privacy_plugins.integrations.dagster.PrivacyRelease", "census_yaml")
    assert scaffolded.returncode == 0, scaffolded.stderr[-2000:]
    defs_yaml = tmp_path / "dagster_defs" / "defs" / "census_yaml" / "defs.yaml"
    document = yaml.safe_load(defs_yaml.read_text(encoding="utf-8"))
    assert document["type"] == "privacy_plugins.integrations.dagster.PrivacyRelease"
    document["attributes"]["source"]["rows"] = 800  # seconds instead of a minute
    document["attributes"]["owners"] = ["team:privacy"]
    document["attributes"]["tags"] = {"domain": "census"}
    defs_yaml.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    # `dg list defs` loads every definition as `dg check defs` does (one CLI start-up less) and shows the catalog
    listed = dg_cli("list", "defs", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    catalog = {
        a["asset_key"]: a for a in json.loads(listed.stdout)["assets"] if a["asset_key"].startswith("census_yaml/")
    }
    assert {key: sorted(a["kinds"]) for key, a in catalog.items()} == {
        "census_yaml/raw": ["python"],
        "census_yaml/privacy_diagnosis": ["html", "python"],
        "census_yaml/anonymized_candidate": ["parquet", "python"],
        "census_yaml/published": ["duckdb", "python"],
    }
    owners_and_tags = [(a["owners"], a["tags"]) for a in catalog.values()]
    assert all(o == [{"team": "privacy"}] and {"key": "domain", "value": "census"} in t for o, t in owners_and_tags)
    launched = dg_cli("launch", "--assets", 'key:"census_yaml/*"')
    assert launched.returncode == 0, launched.stderr[-2000:]
    attributes = {k: v for k, v in document["attributes"].items() if k not in ("owners", "tags")}
    spec = ReleaseSpec.from_dict(attributes, base_dir=defs_yaml.parent)
    published = read_published(spec.destination)
    assert published is not None and k_anonymity(published, quasi_identifiers=list(spec.quasi_identifiers)) >= 5
