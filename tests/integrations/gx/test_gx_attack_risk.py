"""ExpectTableAttackRiskToBeBelow (issue 31): the release attacked with the original's records, on pandas."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.models import AttackRisk
from privacy_plugins.errors import ConfigurationError

QIS = ["age", "sex", "zip", "education"]
ROWS = 200


@pytest.fixture
def original(tmp_path: Path) -> tuple[pd.DataFrame, str]:
    frame = generate_census(ROWS, seed=3)[[*QIS, "disease"]]
    path = tmp_path / "original.parquet"
    frame.to_parquet(path, index=False)
    return frame, str(path)


def _expectation(path: str, **limits: Any) -> Any:
    from privacy_plugins.integrations.gx import ExpectTableAttackRiskToBeBelow

    return ExpectTableAttackRiskToBeBelow(
        quasi_identifiers=QIS, original=path, sensitive_attribute="disease", n_attacks=80, **limits
    )


def test_the_original_released_as_it_is_fails_with_its_three_risks(
    original: tuple[pd.DataFrame, str], pandas_batch: Callable[[pd.DataFrame], Any]
) -> None:
    frame, path = original
    result = pandas_batch(frame).validate(_expectation(path))
    assert not result.success and not result.exception_info.get("raised_exception")
    details = result.result["details"]
    assert set(details["attacks"]) >= {"singling_out", "linkability", "inference"}
    oracle = AttackRisk(sensitive_attribute="disease", n_attacks=80).attack(frame, frame, quasi_identifiers=QIS)
    for key, attack in oracle.results.items():  # the core's numbers, as the core computes them
        assert details["attacks"][key]["ci"] == pytest.approx([round(attack.ci[0], 6), round(attack.ci[1], 6)])
    assert details["failing"] and result.result["observed_value"] == pytest.approx(
        max(a.upper for a in oracle.results.values())
    )
    text = json.dumps(result.to_json_dict())
    values = {str(v) for c in frame.columns for v in frame[c].unique() if len(str(v)) >= 4}
    assert not [v for v in values if f'"{v}"' in text]  # rates and counts only


def test_a_release_that_suppresses_every_qi_passes(
    original: tuple[pd.DataFrame, str], pandas_batch: Callable[[pd.DataFrame], Any]
) -> None:
    frame, path = original
    release = frame.assign(**{qi: "*" for qi in QIS}).sample(frac=1.0, random_state=0).reset_index(drop=True)
    release["disease"] = release["disease"].sample(frac=1.0, random_state=1).to_numpy()
    result = pandas_batch(release).validate(_expectation(path, singling_out=0.3, linkability=0.3, inference=0.3))
    assert result.success, result.result


def test_bad_settings_are_refused_when_built(original: tuple[pd.DataFrame, str]) -> None:
    from privacy_plugins.integrations.gx import ExpectTableAttackRiskToBeBelow

    _, path = original
    with pytest.raises((ConfigurationError, ValueError), match="sensitive_attribute 'age' is a quasi-identifier"):
        ExpectTableAttackRiskToBeBelow(quasi_identifiers=QIS, original=path, sensitive_attribute="age")
    with pytest.raises((ConfigurationError, ValueError), match="singling_out"):
        ExpectTableAttackRiskToBeBelow(quasi_identifiers=QIS, original=path, singling_out=2)


def test_a_missing_original_is_an_error_not_a_pass(pandas_batch: Callable[[pd.DataFrame], Any], tmp_path: Path) -> None:
    frame = generate_census(50, seed=1)[[*QIS, "disease"]]
    result = pandas_batch(frame).validate(_expectation(str(tmp_path / "nope.parquet")))
    from privacy_plugins.integrations.gx import outcome

    verdict = outcome(result)
    assert verdict.status == "error" and "nope.parquet" in verdict.message
