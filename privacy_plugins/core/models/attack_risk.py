"""Attack risk: singling-out, linkability and inference risk of the candidate stay under their limits.

The risks are measured by attacking the candidate table with the original's records as
targets (:func:`privacy_plugins.core.attacks.run_attacks`, Anonymeter's methodology); the
model fails when the upper end of a risk's confidence interval exceeds its limit. It is
judged on tables, not on classes (:attr:`~PrivacyModel.judged_on_tables`): the release
calls :meth:`AttackRisk.evaluate_tables` on the candidate after anonymization.

Not monotone (declared, so the lattice never prunes with it): coarser generalization does
not lower every attack's success (a suppressed outlier can make a control record the
nearest, and the risk is a difference of two rates). On classes it flags nothing.

References:
    Giomi M. et al. A unified framework for quantifying privacy risk in synthetic data.
    PETS 2023 (Anonymeter).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from privacy_plugins.core.attacks import AttackReport, run_attacks
from privacy_plugins.core.models.base import MeasuredResult, ModelResult, PrivacyModel
from privacy_plugins.core.parameters import check_fraction
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import ClassViolations
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    import pandas as pd

    from privacy_plugins.core.hierarchies.hierarchy import Hierarchy

__all__ = ["AttackRisk"]


@dataclass(frozen=True)
class AttackRisk(PrivacyModel):
    """Upper confidence bound of each attack's risk ≤ its limit (fractions in [0, 1]).

    ``sensitive_attribute``: the secret the inference attack guesses (without it the
    inference attack is not run). ``n_attacks`` and ``seed`` fix the attacks (the same seed
    gives the same verdict). Without a held-out control the control is a per-column
    permutation of the original, which over-estimates the risk (docs/attacks.md).

    Example:
        >>> import pandas as pd
        >>> people = pd.DataFrame({"age": range(40), "zip": [f"z{i}" for i in range(40)], "d": ["a", "b"] * 20})
        >>> AttackRisk(sensitive_attribute="d", n_attacks=20).evaluate_tables(
        ...     people, people, quasi_identifiers=["age", "zip"]
        ... ).passed
        False
    """

    singling_out: float = 0.05
    linkability: float = 0.05
    inference: float = 0.1
    confidence: float = 0.95
    sensitive_attribute: Hashable | None = None
    n_attacks: int = 500
    seed: int = 0

    monotonic_with_generalization: ClassVar[bool] = False
    judged_on_tables: ClassVar[bool] = True
    config_name: ClassVar[str] = "attack_risk"
    family: ClassVar[str] = "attack risk"
    report_key: ClassVar[str] = "attack_risk"
    higher_is_better: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for name in ("singling_out", "linkability", "inference"):
            check_fraction(getattr(self, name), name=name)
        if not 0 < self.confidence < 1:
            raise ConfigurationError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if isinstance(self.n_attacks, bool) or not isinstance(self.n_attacks, int) or self.n_attacks < 1:
            raise ConfigurationError(f"n_attacks must be an integer >= 1, got {self.n_attacks!r}")

    def __str__(self) -> str:
        return (
            f"attack risk <= singling out {self.singling_out:g}, linkability {self.linkability:g}, "
            f"inference {self.inference:g} (upper bounds at {self.confidence:g})"
        )

    @property
    def threshold(self) -> float:
        """The smallest limit (each attack's own limit is in :meth:`limits`)."""
        return float(min(self.limits().values()))

    def limits(self) -> dict[str, float]:
        """Each attack's limit by report key (inference only with a sensitive attribute)."""
        limits = {"singling_out": self.singling_out, "linkability": self.linkability}
        if self.sensitive_attribute is not None:
            limits["inference"] = self.inference
        return limits

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """None: the model is judged on tables (:meth:`evaluate_tables`)."""
        return np.zeros(classes.n_classes, dtype=bool)

    def observed(self, classes: EquivalenceClasses) -> float:
        """Not measurable on classes: ``NaN`` (the release reads :meth:`evaluate_tables`)."""
        return math.nan

    def attack(
        self,
        original: pd.DataFrame,
        release: pd.DataFrame,
        *,
        quasi_identifiers: Sequence[Hashable],
        control: pd.DataFrame | None = None,
        hierarchies: Mapping[Hashable, Hierarchy] | None = None,
        original_counts: np.ndarray | None = None,
        release_counts: np.ndarray | None = None,
    ) -> AttackReport:
        """The attacks this model runs, in full (for reports): with fewer records than ``n_attacks``, every record.

        ``original_counts`` / ``release_counts``: the tables are distinct rows standing for that many
        records each (an engine's ``GROUP BY``), attacked as the records they stand for.
        """
        attacks = [key.replace("_", "-") for key in self.limits()]
        if len(quasi_identifiers) < 2:  # one QI cannot be split between two attackers
            attacks.remove("linkability")
        records = len(original) if original_counts is None else int(np.sum(original_counts))
        smallest = min(records, len(control) if control is not None else records)
        return run_attacks(
            original,
            release,
            control,
            quasi_identifiers=quasi_identifiers,
            secret=self.sensitive_attribute,
            attacks=attacks,
            n_attacks=max(1, min(self.n_attacks, smallest)),
            seed=self.seed,
            confidence=self.confidence,
            hierarchies=hierarchies,
            original_counts=original_counts,
            release_counts=release_counts,
        )

    def evaluate_tables(
        self,
        original: pd.DataFrame,
        release: pd.DataFrame,
        *,
        quasi_identifiers: Sequence[Hashable],
        control: pd.DataFrame | None = None,
        hierarchies: Mapping[Hashable, Hierarchy] | None = None,
        original_counts: np.ndarray | None = None,
        release_counts: np.ndarray | None = None,
    ) -> ModelResult:
        """Attack ``release`` (:meth:`attack`); observed: the upper bound of the attack furthest over its limit.

        Its ``measures``: each attack's report (risk, interval, attack/baseline/control rates, counts).
        """
        limits = self.limits()
        report = self.attack(
            original,
            release,
            quasi_identifiers=quasi_identifiers,
            control=control,
            hierarchies=hierarchies,
            original_counts=original_counts,
            release_counts=release_counts,
        )
        over = {key: result.upper - limits[key] for key, result in report.results.items()}
        worst = max(over, key=lambda key: over[key])
        failing = [key for key, gap in over.items() if gap > 0]
        return MeasuredResult(
            model=str(self),
            passed=not failing,
            observed=report.results[worst].upper,
            threshold=limits[worst],
            violations=ClassViolations(target=", ".join(failing) or "none", classes=0, records=0, size_histogram={}),
            measures={key: result.to_dict() for key, result in report.results.items()},
        )

    def describe_gap(self, observed: float) -> str:
        """The worst attack's upper bound against its limit."""
        return f"an attack's risk upper bound is {observed:.4g}, above its limit"
