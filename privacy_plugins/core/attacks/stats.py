"""From counts of successful attacks to a risk with its confidence interval (Anonymeter's estimators).

Each attack is a Bernoulli trial. A success rate is estimated with the Wilson score
interval (Wilson 1927): with ``z`` the two-sided probit of the confidence level,
``rate = (s + z²/2) / (n + z²)`` and ``error = z / (n + z²) · sqrt(s (n - s) / n + z²/4)``.
The risk is the attack's success on the released records in excess of its success on
the control records (people the release does not hold), normalised by what is left to
gain: ``(main - control) / (1 - control)``; its error propagates both rates' errors.
Both are then clipped to [0, 1]. Without a control the risk is the main rate itself.

References:
    Giomi M., Boenisch F., Wehmeyer C., Tasnádi B. A unified framework for quantifying
    privacy risk in synthetic data. PETS 2023 (Anonymeter), section 3 and appendix.
    Wilson E. B. Probable inference, the law of succession, and statistical inference.
    JASA 22:209-212, 1927.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

__all__ = ["AttackResult", "Rate", "residual", "wilson"]


@dataclass(frozen=True)
class Rate:
    """A success rate's point estimate and its symmetric error at the chosen confidence."""

    value: float
    error: float


def wilson(trials: int, successes: float, confidence: float) -> Rate:
    """The Wilson score estimate of ``successes / trials`` (successes may be an expected, fractional count).

    Example:
        >>> r = wilson(100, 50, 0.95)
        >>> round(r.value, 3), round(r.error, 3)
        (0.5, 0.096)
    """
    z = NormalDist().inv_cdf(0.5 * (1.0 + confidence))
    z2 = z * z
    denominator = trials + z2
    variance = successes * (trials - successes) / trials
    return Rate((successes + 0.5 * z2) / denominator, z / denominator * math.sqrt(max(variance, 0.0) + 0.25 * z2))


def residual(main: Rate, control: Rate) -> Rate:
    """The main rate's excess over the control rate, normalised by ``1 - control`` (error propagated).

    A control rate of 1 leaves nothing to measure: the risk is then 0 with an error of 1
    (the interval spans [0, 1]).
    """
    room = 1.0 - control.value
    if room <= 0:
        return Rate(0.0, 1.0)
    value = (main.value - control.value) / room
    d_main = 1.0 / room
    d_control = (main.value - 1.0) / room**2
    return Rate(value, math.hypot(main.error * d_main, control.error * d_control))


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


@dataclass(frozen=True)
class AttackResult:
    """One attack's outcome: counts and rates only, never a value of the tables.

    Attributes:
        attack: ``"singling_out"``, ``"singling_out_univariate"``, ``"linkability"`` or ``"inference"``.
        n_attacks: attacks attempted (targets, or predicates asked for).
        successes: successful attacks on the released records (an expected count where the
            attacker picks at random among equally near rows).
        baseline_successes: successes of the random-guess attacker.
        control_successes: successes on the control records (``None`` without a control).
        confidence: the confidence level of the interval.
        attack_rate, baseline_rate, control_rate: the Wilson point estimates of the rates.
        risk: the estimated risk in [0, 1]; ``ci``: its interval.
        note: what limits the estimate (e.g. fewer singling-out predicates than asked), or ``""``.
    """

    attack: str
    n_attacks: int
    successes: float
    baseline_successes: float
    control_successes: float | None
    confidence: float
    attack_rate: float
    baseline_rate: float
    control_rate: float | None
    risk: float
    ci: tuple[float, float]
    note: str = ""

    @classmethod
    def from_counts(
        cls,
        attack: str,
        *,
        n_attacks: int,
        successes: float,
        baseline: float,
        control: float | None,
        confidence: float,
        note: str = "",
    ) -> AttackResult:
        """Rates, risk and interval from the three counts (Anonymeter's ``EvaluationResults``)."""
        main = wilson(n_attacks, successes, confidence)
        base = wilson(n_attacks, baseline, confidence)
        ctrl = None if control is None else wilson(n_attacks, control, confidence)
        risk = main if ctrl is None else residual(main, ctrl)
        return cls(
            attack=attack,
            n_attacks=n_attacks,
            successes=float(successes),
            baseline_successes=float(baseline),
            control_successes=None if control is None else float(control),
            confidence=confidence,
            attack_rate=main.value,
            baseline_rate=base.value,
            control_rate=None if ctrl is None else ctrl.value,
            risk=_clip(risk.value),
            ci=(_clip(risk.value - risk.error), _clip(risk.value + risk.error)),
            note=note,
        )

    @property
    def upper(self) -> float:
        """The upper end of the risk's interval (what a gate compares with its limit)."""
        return self.ci[1]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: rates rounded to 6 digits, counts, no values."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 6)

        return {
            "risk": r(self.risk),
            "ci": [r(self.ci[0]), r(self.ci[1])],
            "attack_rate": r(self.attack_rate),
            "baseline_rate": r(self.baseline_rate),
            "control_rate": r(self.control_rate),
            "n_attacks": self.n_attacks,
            "successes": r(self.successes),
            "baseline_successes": r(self.baseline_successes),
            "control_successes": r(self.control_successes),
            "confidence": self.confidence,
            "note": self.note,
        }
