"""Population-uniqueness estimators on small synthetic frequency tables with known answers.

Every reference here is written from the papers' formulas with plain Python
(math.comb, explicit sums), independently of the package's vectorized code.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.metrics import uniqueness as u
from privacy_plugins.core.metrics._special import digamma, trigamma, trigamma_truncated


def histogram(sizes: list[int], population: int) -> u.ClassSizeHistogram:
    return u.ClassSizeHistogram.from_sizes(np.array(sizes), population_size=population)


def zayatz_reference(sizes: list[int], population: int) -> float:
    """Zayatz (1991): c1 · [(c1/u)P(1|1) / Σ_i (c_i/u)P(1|i)] / f with hypergeometric P(1|i)."""
    n, classes = sum(sizes), len(sizes)

    def p_one(i: int) -> Fraction:
        return Fraction(i * math.comb(population - i, n - 1), math.comb(population, n))

    c1 = sizes.count(1)
    if c1 == 0:
        return 0.0
    conditional = Fraction(c1, classes) * p_one(1) / sum(Fraction(1, classes) * p_one(i) for i in sizes)
    return float(c1 * conditional / Fraction(n, population)) / population


@settings(max_examples=40)
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=12), factor=st.integers(1, 5))
def test_zayatz_equals_the_hypergeometric_formula(sizes, factor) -> None:
    population = sum(sizes) * factor + factor - 1
    got = u.zayatz(histogram(sizes, population)).fraction
    assert got == pytest.approx(zayatz_reference(sizes, population), rel=1e-12, abs=1e-15)


def test_a_full_sample_makes_zayatz_the_sample_uniques() -> None:
    # f = 1: a class of size i > 1 cannot yield one record, so every sample unique is a population unique
    assert u.zayatz(histogram([1, 1, 2, 3], 7)).fraction == pytest.approx(2 / 7)


def test_no_sample_unique_means_every_estimate_is_zero() -> None:
    estimates = u.estimate_all(histogram([2, 3, 3], 80))
    assert {name: e.fraction for name, e in estimates.items()} == dict.fromkeys(u.ESTIMATORS, 0.0)


def pitman_equations(sizes: list[int], theta: float, alpha: float) -> tuple[float, float]:
    """∂L/∂θ and ∂L/∂α of the Pitman sampling formula (Hoshino 2001), term by term."""
    n, classes = sum(sizes), len(sizes)
    d_theta = sum(1 / (theta + i * alpha) for i in range(1, classes)) - sum(1 / (theta + i) for i in range(1, n))
    d_alpha = sum(i / (theta + i * alpha) for i in range(1, classes)) - sum(
        1 / (k - alpha) for j in sizes for k in range(1, j)
    )
    return d_theta, d_alpha


def test_pitman_solves_the_likelihood_equations_and_applies_hoshinos_formula(monkeypatch) -> None:
    sizes = [1] * 40 + [2] * 12 + [3] * 6 + [5] * 3 + [9, 14, 30]
    roots: list[tuple[float, float]] = []
    real = u.pitman_uniques.__globals__["solve_2d"]

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        root = real(*args, **kwargs)
        if root is not None:
            roots.append(root)
        return root

    monkeypatch.setitem(u.pitman_uniques.__globals__, "solve_2d", spy)
    estimate = u.pitman(histogram(sizes, 10 * sum(sizes)))
    theta, alpha = roots[-1]
    assert all(abs(x) <= 1e-6 for x in pitman_equations(sizes, theta, alpha))
    population = 10 * sum(sizes)
    expected = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * population**alpha / population
    assert estimate.fraction == pytest.approx(expected, rel=1e-12)
    assert 0 < estimate.fraction < 1


def snb_expected(alpha: float, beta: float, population_classes: float, f: float, size: int) -> float:
    """E[number of sample classes of ``size``] when population classes are 1 + NB(α, β), sampled at rate f.

    Summed over population class sizes k (not the closed form the estimator uses).
    """
    total = 0.0
    for g in range(0, 4000):  # population class size k = g + 1
        log_nb = (
            math.lgamma(g + alpha)
            - math.lgamma(alpha)
            - math.lgamma(g + 1)
            + alpha * math.log(beta)
            + g * math.log1p(-beta)
        )
        k = g + 1
        if k >= size:
            term = math.exp(log_nb) * math.comb(k, size) * f**size * (1 - f) ** (k - size)
            total += term
            if g > 50 and term < 1e-18 * total:  # the tail no longer counts
                break
    return population_classes * total


@pytest.mark.parametrize(("alpha", "beta", "f"), [(1.5, 0.3, 0.4), (0.6, 0.2, 0.5), (2.0, 0.6, 0.25)])
def test_snb_moment_equations_are_chen_and_keller_mcnultys(alpha, beta, f) -> None:
    """The c_1 and c_2 the estimator solves for equal the model's expectations summed term by term.

    (ARX's c_2 equation multiplies by (1 − d)^(α+2) instead of dividing, which this would catch.)
    """
    equations = u._snb_equations(1000.0, f, 0.0, 0.0)
    e1, e2, *_ = equations(alpha, beta)  # type: ignore[operator]
    assert e1 == pytest.approx(snb_expected(alpha, beta, 1000.0, f, 1), rel=1e-9)
    assert e2 == pytest.approx(snb_expected(alpha, beta, 1000.0, f, 2), rel=1e-9)


def test_snb_recovers_its_own_model_from_expected_counts() -> None:
    """A histogram with exactly the SNB-expected c_1, c_2 (K = the estimator's own K̂) gives back K̂·β^α."""
    sizes = [1] * 300 + [2] * 120 + [3] * 50 + [4] * 20 + [6] * 10
    h = histogram(sizes, 3 * sum(sizes))
    estimate = u.snb(h)
    assert estimate.fraction is not None
    k = u._population_classes(h)
    # the root reproduces the observed c_1 and c_2 through the term-by-term expectations
    # (search the (α, β) that the estimate implies: β^α = fraction·N/K, checked through c_1, c_2 below)
    target = estimate.fraction * h.population_size / k
    found = [
        (a, b)
        for a in np.linspace(0.05, 5, 400)
        for b in [target ** (1 / a)]
        if 0 < b < 1 and abs(snb_expected(a, b, k, h.fraction, 1) - 300) < 0.5
    ]
    assert found, "no (alpha, beta) on the estimate's curve reproduces c_1"
    assert any(abs(snb_expected(a, b, k, h.fraction, 2) - 120) < 2 for a, b in found)


def test_dankar_takes_pitman_below_ten_percent_and_the_smaller_of_zayatz_and_snb_above() -> None:
    sizes = [1] * 300 + [2] * 120 + [3] * 50 + [4] * 20 + [6] * 10
    low, high = histogram(sizes, 20 * sum(sizes)), histogram(sizes, 3 * sum(sizes))
    e_low, e_high = u.estimate_all(low), u.estimate_all(high)
    assert e_low["dankar"].fraction == e_low["pitman"].fraction and e_low["dankar"].model == "pitman"
    smaller = min(e_high["zayatz"].fraction, e_high["snb"].fraction)  # type: ignore[type-var]
    assert e_high["dankar"].fraction == smaller
    assert e_high["dankar"].model in ("zayatz", "snb")


def test_unavailable_estimates_say_why() -> None:
    # one unique among huge classes: SNB's moment equations have no admissible root
    estimate = u.snb(histogram([1, 500, 700, 900], 4200))
    assert estimate.fraction is None and estimate.reason and estimate.reason.startswith("SNB")


@settings(max_examples=30)
@given(a=st.floats(-0.9, 0.95), j=st.integers(2, 40))
def test_special_functions_equal_their_series(a, j) -> None:
    exact = sum(1 / (k - a) for k in range(1, j))
    assert float(digamma(j - a)[0] - digamma(1 - a)[0]) == pytest.approx(exact, rel=1e-12, abs=1e-12)
    squares = sum(1 / (k - a) ** 2 for k in range(1, j))
    assert float(trigamma(1 - a)[0] - trigamma(j - a)[0]) == pytest.approx(squares, rel=1e-10, abs=1e-12)


def test_the_jacobian_trigamma_is_arxs_truncation() -> None:
    # ARX's trigamma drops the asymptotic tail on [8, 12): 0 there, a partial sum below 8
    assert float(trigamma_truncated(9.5)[0]) == 0.0
    assert float(trigamma_truncated(7.5)[0]) == pytest.approx(1 / 7.5**2)
    assert float(trigamma_truncated(20.0)[0]) == pytest.approx(float(trigamma(20.0)[0]), rel=1e-14)
