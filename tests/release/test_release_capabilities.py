"""Every registered anonymizer × every model kind: what an algorithm declares it can promise is what it delivers.

An anonymizer's tags (``supported_models``, a registry.ModelSupport) say which model kinds it can
promise on the whole published table. The release spec reads it on load: a declared
pair must run through the release steps and pass every re-measured check; an
undeclared pair must be refused when the spec is loaded (exit 2 naming ``algorithm``
and the model), before any data is read. The lists come from the registries, so a
new algorithm or model is covered without touching this file.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.cli import main
from privacy_plugins.core.anonymize import anonymizer_names, get_anonymizer, tags_of
from privacy_plugins.core.anonymize.registry import ALL_MODEL_KINDS
from privacy_plugins.core.models import MODEL_REGISTRY
from privacy_plugins.errors import ConfigurationError, PrivacyRiskWarning
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.spec import Requirements
from privacy_plugins.release.steps import anonymize_step, check_step, load_step

#: One requirement per model kind, each one the raw table below does not meet.
REQUIREMENTS: dict[str, dict[str, Any]] = {
    "k_anonymity": {"k": 3},
    "distinct_l_diversity": {"l": 2, "l_variant": "distinct"},
    "frequency_l_diversity": {"l": 2, "l_variant": "frequency"},
    "entropy_l_diversity": {"l": 2, "l_variant": "entropy"},
    "recursive_cl_diversity": {"l": 2, "l_variant": "recursive", "c": 3},
    "t_closeness": {"t": 0.4},
    "personalized_leakage": {"bound": 0.6},
    # issue 30 (docs/population-risk.md)
    "average_reidentification_risk": {"models": [{"average_reidentification_risk": {"max": 0.34}}]},
    "population_uniqueness": {
        "models": [{"population_uniqueness": {"max": 0.01, "population": 0.5, "estimator": "zayatz"}}]
    },
    "k_map": {"models": [{"k_map": {"k": 12, "population": 0.5}}]},
    "delta_presence": {"models": [{"delta_presence": {"dmin": 0.0, "dmax": 0.5, "subset_column": "study"}}]},
}
#: Kinds judged on whole tables after anonymization (attack risk): no algorithm promises or refuses them.
TABLE_KINDS = frozenset(name for name, model in MODEL_REGISTRY.items() if model.judged_on_tables)
PAIRS = [(name, kind) for name in anonymizer_names() for kind in sorted(ALL_MODEL_KINDS - TABLE_KINDS)]


def test_every_model_kind_has_a_requirement() -> None:
    assert set(REQUIREMENTS) == ALL_MODEL_KINDS - TABLE_KINDS


@pytest.mark.parametrize("algorithm", anonymizer_names())
def test_a_kind_judged_on_tables_is_never_refused_on_load(tmp_path: Path, algorithm: str) -> None:
    assert TABLE_KINDS  # attack_risk
    data = _spec_data(tmp_path, algorithm, "k_anonymity")
    if "k_anonymity" not in tags_of(get_anonymizer(algorithm)).supported_models.promises:
        return  # (refused for k, as the pairs below check)
    data["requirements"]["models"] = [{kind: {}} for kind in sorted(TABLE_KINDS)]
    loaded = ReleaseSpec.from_dict(data)  # the table-judged kinds add no refusal
    assert {model.config_name for model in loaded.models()} >= TABLE_KINDS


def _table(path: Path) -> Path:
    """240 people, every one unique on (age, sex, zip); four diseases, evenly spread; a third in a study."""
    rng = np.random.default_rng(5)
    rows = 240
    frame = pd.DataFrame(
        {
            "person_id": [f"p{i}" for i in range(rows)],
            "age": rng.permutation(np.arange(rows) % 60 + 20),
            "sex": rng.choice(["Female", "Male"], rows),
            "zip": [f"{47900 + i % 40:05d}" for i in range(rows)],
            "disease": rng.permutation(np.array(["flu", "cold", "asthma", "ulcer"] * (rows // 4))),
            "study": [i % 3 == 0 for i in range(rows)],  # a research subset, for delta_presence
        }
    )
    frame.to_csv(path, index=False)
    return path


def _spec_data(tmp_path: Path, algorithm: str, kind: str) -> dict[str, Any]:
    requirements = dict(REQUIREMENTS[kind])
    supported = tags_of(get_anonymizer(algorithm)).supported_models
    needs = supported.needs_one_of
    if kind in supported.promises and needs and kind not in needs:  # bucketizing: k with the l it needs
        requirements |= REQUIREMENTS[sorted(needs)[0]]
    return {
        "name": f"capabilities_{algorithm}_{kind}".replace("-", "_"),
        "source": {"path": str(_table(tmp_path / "people.csv"))},
        "identifiers": ["person_id"],
        "quasi_identifiers": ["age", "sex", "zip"],
        "sensitive_attributes": ["disease"],
        "insensitive": [] if kind == "delta_presence" else ["study"],  # every column has a role (a model's, or this)
        "hierarchies": {
            "age": {"interval": {"widths": [5, 10, 20, 40]}},
            "sex": {"taxonomy": {"*": ["Female", "Male"]}},
            "zip": {"masking": {}},
        },
        "requirements": {**requirements, "suppression_limit": 0.05},
        "algorithm": {"name": algorithm},
        "destination": {"duckdb": str(tmp_path / "release.duckdb"), "table": "people"},
        "report": {"directory": str(tmp_path / "reports")},
        "workdir": str(tmp_path / "work"),
    }


@pytest.mark.parametrize(("algorithm", "kind"), PAIRS)
def test_a_declared_promise_is_kept_and_an_undeclared_one_refused_on_load(
    tmp_path: Path, algorithm: str, kind: str
) -> None:
    data = _spec_data(tmp_path, algorithm, kind)
    models = Requirements.from_value(data["requirements"]).models(("disease",))
    # undeclared: the kind is not promised, or (issue 30) it publishes a research subset the algorithm cannot cut
    if tags_of(get_anonymizer(algorithm)).supported_models.refusal(models) is not None:
        with pytest.raises(ConfigurationError, match=rf"^algorithm.name {algorithm!r} cannot promise {kind} "):
            ReleaseSpec.from_dict(data)
        return
    spec = ReleaseSpec.from_dict(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyRiskWarning)
        loaded = load_step(spec, run_id="run1")
        candidate = anonymize_step(spec, loaded, run_id="run1")
        check = check_step(spec, candidate, run_id="run1")
    failed = [c.requirement for c in check.checks if not c.passed]
    assert check.passed, f"{algorithm} declares {kind} but fails {failed}"
    assert any(c.name.startswith(kind) for c in check.checks)  # the model itself was re-measured


def test_every_algorithm_promises_something_or_says_why() -> None:
    for name in anonymizer_names():
        supported = tags_of(get_anonymizer(name)).supported_models
        assert supported.promises <= set(MODEL_REGISTRY)  # registered kinds (a release-bound one, the history's, too)
        assert supported.promises == ALL_MODEL_KINDS or supported.why, name


def test_the_cli_refuses_a_sensitive_values_release_before_reading_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    data = _spec_data(tmp_path, "sensitive-values", "k_anonymity")
    data["algorithm"] = {"name": "sensitive-values", "sensitive_values": "flu"}
    data["source"] = {"path": str(tmp_path / "never-read.csv")}  # loading the spec must not need it
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "algorithm.name 'sensitive-values' cannot promise k_anonymity (3-anonymity)" in err
    assert not (tmp_path / "reports").exists() and not (tmp_path / "release.duckdb").exists()
