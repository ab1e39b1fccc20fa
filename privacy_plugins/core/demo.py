"""A seeded synthetic census table for the demo and the tests.

Census-like columns with realistic skew: a few large zip codes and a long tail of
small ones, a right-skewed age pyramid, education that shapes occupation and
income, and rare diseases — so that small equivalence classes and sample uniques
exist, as they do in real data. The same seed always gives the same table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privacy_plugins.core.parameters import check_integer

__all__ = ["CENSUS_IDENTIFIERS", "CENSUS_QUASI_IDENTIFIERS", "CENSUS_SENSITIVE", "generate_census"]

CENSUS_IDENTIFIERS = ("person_id",)
CENSUS_QUASI_IDENTIFIERS = ("age", "sex", "zip", "education", "marital_status")
CENSUS_SENSITIVE = ("disease", "income")

_EDUCATION = ("Preschool", "HS-grad", "Some-college", "Bachelors", "Masters", "Doctorate")
_EDUCATION_P = (0.03, 0.34, 0.27, 0.22, 0.11, 0.03)
_MARITAL = ("Never-married", "Married", "Divorced", "Separated", "Widowed")
_OCCUPATIONS = (
    "Handlers-cleaners", "Farming-fishing", "Machine-op", "Craft-repair", "Sales",
    "Adm-clerical", "Tech-support", "Prof-specialty", "Exec-managerial",
)  # fmt: skip
_DISEASES = ("none", "flu", "hypertension", "diabetes", "asthma", "bronchitis", "cancer", "HIV")
_DISEASE_P = (0.40, 0.17, 0.14, 0.10, 0.08, 0.06, 0.04, 0.01)


def _zip_codes(rng: np.random.Generator, n_rows: int) -> np.ndarray:
    """Zipf-distributed five-digit zip codes, some with a leading zero."""
    pool = np.unique(rng.integers(1000, 99999, size=400))
    weights = 1.0 / np.arange(1, pool.shape[0] + 1) ** 1.1
    picks = rng.choice(pool, size=n_rows, p=weights / weights.sum())
    return np.char.zfill(picks.astype(str), 5)


def generate_census(n_rows: int = 5_000, *, seed: int = 0) -> pd.DataFrame:
    """Generate the demo census table.

    Args:
        n_rows: number of people (integer ≥ 1).
        seed: random seed; equal seeds give equal tables.

    Returns:
        Columns ``person_id`` (identifier), ``age``, ``sex``, ``zip``, ``education``,
        ``marital_status`` (quasi-identifiers), ``occupation`` (insensitive),
        ``income`` and ``disease`` (sensitive).

    Example:
        >>> df = generate_census(100, seed=1)
        >>> df.shape, bool(df["zip"].str.len().eq(5).all())
        ((100, 9), True)
    """
    n_rows = check_integer(n_rows, name="n_rows")
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(17 + rng.gamma(shape=2.2, scale=11.0, size=n_rows)), 17, 95).astype(np.int64)
    sex = rng.choice(np.array(["Female", "Male"]), size=n_rows, p=[0.49, 0.51])
    education_idx = rng.choice(len(_EDUCATION), size=n_rows, p=_EDUCATION_P)
    married_p = np.clip((age - 17) / 40.0, 0.05, 0.7)
    marital_idx = np.where(
        rng.random(n_rows) < married_p, 1, rng.choice([0, 2, 3, 4], size=n_rows, p=[0.7, 0.18, 0.05, 0.07])
    )
    marital_idx = np.where((age < 22) & (marital_idx == 4), 0, marital_idx)
    occupation_idx = np.clip(
        np.round(education_idx * 1.5 + rng.normal(0.0, 1.6, size=n_rows)), 0, len(_OCCUPATIONS) - 1
    ).astype(np.int64)
    income = np.round(
        np.exp(rng.normal(9.6 + 0.22 * education_idx + 0.008 * np.minimum(age, 60), 0.45, size=n_rows)), -2
    ).astype(np.int64)
    disease_p = np.tile(np.asarray(_DISEASE_P), (n_rows, 1))
    disease_p[:, 2] *= 1 + (age > 50) * 1.5  # hypertension grows with age
    disease_p /= disease_p.sum(axis=1, keepdims=True)
    disease_idx = (rng.random((n_rows, 1)) < disease_p.cumsum(axis=1)).argmax(axis=1)
    return pd.DataFrame(
        {
            "person_id": [f"P{i:06d}" for i in range(1, n_rows + 1)],
            "age": age,
            "sex": sex,
            "zip": _zip_codes(rng, n_rows),
            "education": np.asarray(_EDUCATION)[education_idx],
            "marital_status": np.asarray(_MARITAL)[marital_idx],
            "occupation": np.asarray(_OCCUPATIONS)[occupation_idx],
            "income": income,
            "disease": np.asarray(_DISEASES)[disease_idx],
        }
    )
