"""Problems shared by the engine tests: the demo census and an Adult sample."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_checks import ADULT, ADULT_QIS, REPO

import privacy_plugins as pp
from privacy_plugins.core.hierarchies import read_hierarchy
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.release.spec import ReleaseSpec


@pytest.fixture(scope="module")
def census() -> tuple[pd.DataFrame, dict[str, object]]:
    spec = ReleaseSpec.from_yaml(REPO / "specs" / "demo_census.yaml")
    frame = pp.generate_census(3000, seed=3)
    problem = {
        "quasi_identifiers": list(spec.quasi_identifiers),
        "hierarchies": spec.build_hierarchies(frame),
        "models": spec.models(),
        "identifiers": ["person_id"],
        "sensitive_attributes": list(spec.sensitive_attributes),
        "suppression_limit": 0.05,
    }
    return frame, problem


@pytest.fixture(scope="module")
def adult_sample() -> tuple[pd.DataFrame, dict[str, object]]:
    if not (ADULT / "adult_subset.csv").is_file():
        pytest.skip(f"Adult data not found at {ADULT}")
    frame = pp.read_table(ADULT / "adult_subset.csv")
    hierarchies = {q: read_hierarchy(ADULT / f"adult_hierarchy_{q}.csv", attribute=q) for q in ADULT_QIS}
    problem = {
        "quasi_identifiers": ADULT_QIS,
        "hierarchies": hierarchies,
        "models": [KAnonymity(5), DistinctLDiversity("occupation", 2)],
        "sensitive_attributes": ["occupation"],
        "suppression_limit": 0.05,
    }
    return frame, problem
