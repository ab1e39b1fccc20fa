"""The seeded synthetic census table: deterministic, census-shaped and skewed."""

from __future__ import annotations

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.core.demo import CENSUS_IDENTIFIERS, CENSUS_QUASI_IDENTIFIERS, CENSUS_SENSITIVE


def test_same_seed_same_table() -> None:
    pd.testing.assert_frame_equal(pp.generate_census(500, seed=7), pp.generate_census(500, seed=7))
    assert not pp.generate_census(500, seed=7).equals(pp.generate_census(500, seed=8))


def test_columns_and_roles() -> None:
    frame = pp.generate_census(1_000)
    for column in (*CENSUS_IDENTIFIERS, *CENSUS_QUASI_IDENTIFIERS, *CENSUS_SENSITIVE, "occupation"):
        assert column in frame.columns
    assert frame["person_id"].is_unique
    assert frame["zip"].str.fullmatch(r"\d{5}").all()
    assert frame.notna().all().all()


def test_skew_leaves_small_classes_and_rare_values() -> None:
    frame = pp.generate_census(5_000, seed=0)
    report = pp.measure(frame, quasi_identifiers=["age", "sex", "zip"], sensitive_attributes=["disease"])
    assert report.sample_uniques > 0  # small classes exist, as in real data
    assert report.classes < report.rows
    shares = frame["disease"].value_counts(normalize=True)
    assert shares.max() > 0.3 and shares.min() < 0.03


def test_rows_must_be_positive() -> None:
    with pytest.raises(pp.errors.ConfigurationError):
        pp.generate_census(0)
