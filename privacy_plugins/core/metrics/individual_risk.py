"""Individual re-identification risk with sampling weights (Benedetti & Franconi; sdcMicro, μ-Argus).

A record in a sample class of f_k records whose population size is F_k (the sum
of the class's sampling weights, or any other population estimate) has, with
p_k = f_k / F_k and the population size given the sample drawn as a negative
binomial,

* f_k = 1: r = p/(1−p) · ln(1/p)
* f_k = 2: r = p/(1−p) − (p/(1−p))² · ln(1/p)
* f_k ≥ 3: r ≈ p / (f_k − (1 − p))            (the approximation sdcMicro uses by default)
* f_k = F_k (the whole population class is in the sample): r = 1/f_k.

Vectorized over classes.

References:
    Benedetti R., Franconi L. Statistical and technological solutions for controlled data
    dissemination. New Techniques and Technologies for Statistics, 1998.
    Franconi L., Polettini S. Individual risk estimation in μ-Argus: a review. PSD 2004, LNCS 3050.
    Templ M., Kowarik A., Meindl B. Statistical disclosure control for micro-data using the R
    package sdcMicro. Journal of Statistical Software 67(4), 2015.
"""

from __future__ import annotations

import numpy as np

__all__ = ["individual_risk"]


def individual_risk(sample_sizes: np.ndarray, population_sizes: np.ndarray) -> np.ndarray:
    """The Benedetti–Franconi risk of a record of each class (f_k sample records, F_k ≥ f_k people).

    Example:
        >>> [round(float(r), 4) for r in individual_risk(np.array([1, 2, 3, 4]), np.array([10.0, 10.0, 10.0, 4.0]))]
        [0.2558, 0.1494, 0.1304, 0.25]
    """
    f = np.asarray(sample_sizes, dtype=np.float64)
    big_f = np.maximum(np.asarray(population_sizes, dtype=np.float64), f)
    p = f / big_f
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = p / (1.0 - p)
        log_inverse = -np.log(p)
        risk = np.where(
            f == 1,
            odds * log_inverse,
            np.where(f == 2, odds - odds * odds * log_inverse, p / (f - (1.0 - p))),
        )
    return np.where(p >= 1.0, 1.0 / f, risk)
