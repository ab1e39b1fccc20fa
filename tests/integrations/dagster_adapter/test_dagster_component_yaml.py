"""``dg check yaml`` names the line and column of a typo inside a ``PrivacyRelease`` section (issue 24 item 21).

The component's sections (source, requirements, destination, algorithm, report,
hierarchies, policy) are typed models, so a misspelt key fails the YAML check before
any definitions load — and points at the key, not at its section.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

dg = pytest.importorskip("dagster")

from privacy_plugins.integrations.dagster import PrivacyRelease  # noqa: E402
from privacy_plugins.integrations.dagster.component import TEMPLATE  # noqa: E402

HAS_DG = importlib.util.find_spec("dagster_dg_cli") is not None

# Each line with a typo is marked by its comment; the test finds the line numbers itself.
TYPOS = """\
type: privacy_plugins.integrations.dagster.PrivacyRelease

attributes:
  name: census
  source:
    generate: census
    rowz: 400  # TYPO rowz
  quasi_identifiers: [age, sex, zip]
  sensitive_attributes: [disease]
  hierarchies:
    age: {interval: {widths: [5, 10, 20, 40]}}
    sex: {taxonomy: {"*": [Female, Male]}}
    zip: {maskin: {}}  # TYPO maskin
  requirements:
    k: 5
    suppresion_limit: 0.05  # TYPO suppresion_limit
  algorithm:
    name: optimal
    metrik: lm  # TYPO metrik
  destination: {duckdb: out/census.duckdb, table: census}
  policy:
    mink_k: 5  # TYPO mink_k
"""


def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(PrivacyRelease.get_model_cls().model_json_schema())


def _errors(attributes: dict[str, Any]) -> list[tuple[list[Any], str]]:
    return sorted((list(e.absolute_path), e.message) for e in _validator().iter_errors(attributes))


def test_the_schema_points_into_the_section() -> None:
    """What ``dg check yaml`` evaluates: each typo is its own error at its own path."""
    attributes = yaml.safe_load(TYPOS)["attributes"]
    paths = [(path, message.split("(")[-1]) for path, message in _errors(attributes)]
    assert paths == [
        (["algorithm"], "'metrik' was unexpected)"),
        (["hierarchies", "zip"], "'maskin' was unexpected)"),
        (["policy"], "'mink_k' was unexpected)"),
        (["requirements"], "'suppresion_limit' was unexpected)"),
        (["source"], "'rowz' was unexpected)"),
    ]
    assert _errors({**TEMPLATE}) == []  # the scaffolded spec is valid
    assert _errors({**TEMPLATE, "requirements": "{{ env.REQUIREMENTS }}"}) == []  # templates still allowed
    (wrong_type,) = _errors({**TEMPLATE, "requirements": {"k": "five"}})
    assert wrong_type[0] == ["requirements", "k"]
    (unknown_algorithm,) = _errors({**TEMPLATE, "algorithm": {"name": "optimall"}})
    assert unknown_algorithm[0] == ["algorithm", "name"] and "'optimall' is not one of" in unknown_algorithm[1]


def test_the_sections_have_exactly_the_release_specs_keys() -> None:
    """One list of keys: the release layer's; the component's models must not drift from it."""
    from privacy_plugins.core.anonymize.registry import anonymizer_names, get_anonymizer
    from privacy_plugins.integrations.dagster import component_model as models
    from privacy_plugins.release.history_spec import HistorySpec
    from privacy_plugins.release.spec import DestinationSpec, ReleaseSpec, ReportSpec, Requirements, SourceSpec

    for model, keys in (
        (models.SourceModel, SourceSpec.KEYS),
        (models.RequirementsModel, Requirements.KEYS),
        (models.DestinationModel, DestinationSpec.KEYS),
        (models.ReportModel, ReportSpec.KEYS),
        (models.HistoryModel, HistorySpec.KEYS),
    ):
        assert sorted(model.model_fields) == sorted(keys), model.__name__
    options = {option.name for name in anonymizer_names() for option in get_anonymizer(name).options}
    assert set(models.AlgorithmModel.model_fields) == {"name", "seed"} | options
    assert set(ReleaseSpec.KEYS) <= set(PrivacyRelease.model_fields)


@pytest.mark.skipif(not HAS_DG, reason="dg (dagster-dg-cli) is not installed")
def test_dg_check_yaml_names_the_line_and_column_of_each_typo(tmp_path: Path) -> None:
    package = tmp_path / "relproj"
    (package / "defs" / "census").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "defs" / "__init__.py").write_text("", encoding="utf-8")
    (package / "defs" / "census" / "defs.yaml").write_text(TYPOS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "relproj"\nversion = "0.1"\n\n[tool.dg]\ndirectory_type = "project"\n\n'
        '[tool.dg.project]\nroot_module = "relproj"\nregistry_modules = ["privacy_plugins.integrations.dagster"]\n',
        encoding="utf-8",
    )
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    command = [sys.executable, "-c", "from dagster_dg_cli.cli import main; main()", "check", "yaml"]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "validated successfully" not in output
    assert "Traceback" not in output
    lines = output.splitlines()
    for number, text in enumerate(TYPOS.splitlines(), start=1):
        if "# TYPO" not in text:
            continue
        key = text.rsplit("# TYPO ", 1)[1]
        assert f"defs.yaml:{number} - " in output and f"'{key}' was unexpected" in output, key
        # the error's snippet marks the key itself: a caret under its first letter
        shown = [
            i
            for i, line in enumerate(lines[:-1])
            if line.startswith(f"{number:>4} |") and line.endswith(text) and "^" in lines[i + 1]
        ]
        assert shown, key
        assert lines[shown[0] + 1].index("^") == lines[shown[0]].index(key), key
