"""The monotone targets the border search prunes with: k-anonymity and four l-diversities.

Each target is a small frozen value that answers one question about a measured
subset: does it satisfy the target? All five are *monotone* over quasi-identifier
subsets — removing a quasi-identifier only merges classes, and merging can only
raise k, distinct l, frequency l and entropy l, and only lower recursive c* — so
the subsets that satisfy a target form a down-closed family (if Q satisfies,
every Q' ⊆ Q does). That is what lets the level-wise search skip every superset
of a violating subset. The thesis proves it for k, distinct, entropy and
recursive (c,l); frequency l follows because the largest share of one value in a
union of classes is at most the largest share in one of them.

References:
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data
    publishing. PhD thesis, Universiti Teknologi Malaysia, 2011, §3.1.2.
    Machanavajjhala A. et al. l-Diversity: Privacy Beyond k-Anonymity. TKDD 1(1), 2007.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal, Protocol

from privacy_plugins.core.diagnosis.findings import SubsetFinding
from privacy_plugins.core.parameters import TOLERANCE, check_integer, check_positive
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "L_BORDER_VARIANTS",
    "BorderTarget",
    "KAnonymityTarget",
    "LBorderVariant",
    "LDiversityTarget",
]

LBorderVariant = Literal["distinct", "frequency", "entropy", "recursive"]
L_BORDER_VARIANTS: tuple[str, ...] = ("distinct", "frequency", "entropy", "recursive")


class BorderTarget(Protocol):
    """A monotone requirement on a quasi-identifier subset."""

    @property
    def model(self) -> str:
        """The model's name, e.g. ``"k-anonymity"``."""
        ...

    @property
    def threshold(self) -> float:
        """The target k or l."""
        ...

    def satisfied_by(self, subset: SubsetFinding) -> bool:
        """True when the subset meets the requirement."""
        ...


@dataclass(frozen=True)
class KAnonymityTarget:
    """K-anonymity: every class over the subset has at least ``k`` records.

    Args:
        k: integer ≥ 1.

    Example:
        >>> str(KAnonymityTarget(5))
        '5-anonymity'
    """

    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_integer(self.k, name="k"))

    @property
    def model(self) -> str:
        """``"k-anonymity"``."""
        return "k-anonymity"

    @property
    def threshold(self) -> float:
        """The target k."""
        return float(self.k)

    def satisfied_by(self, subset: SubsetFinding) -> bool:
        """k(Q) ≥ target k."""
        return subset.k >= self.k

    def __str__(self) -> str:
        return f"{self.k}-anonymity"


@dataclass(frozen=True)
class LDiversityTarget:
    """An l-diversity variant on one sensitive attribute.

    Args:
        variant: ``"distinct"``, ``"frequency"``, ``"entropy"`` or ``"recursive"``.
        l: the target l, real ≥ 1 (an integer for ``"recursive"``).
        attribute: the sensitive attribute whose values must be diverse.
        c: recursive (c,l) only: the subset satisfies iff c > c*, c > 0.

    Frequency and entropy l are real-valued and compared with the 1e-9
    tolerance of :data:`privacy_plugins.core.parameters.TOLERANCE`.

    Example:
        >>> str(LDiversityTarget("recursive", 2, "disease", c=3))
        "recursive (3,2)-diversity for 'disease'"
    """

    variant: str
    l: float
    attribute: Hashable
    c: float | None = None

    def __post_init__(self) -> None:
        if self.variant not in L_BORDER_VARIANTS:
            raise ConfigurationError(f"l_variant must be one of {list(L_BORDER_VARIANTS)}, got {self.variant!r}")
        object.__setattr__(self, "l", check_positive(self.l, name="l", minimum=1.0, inclusive=True))
        if self.variant == "recursive":
            if self.c is None:
                raise ConfigurationError("recursive (c,l)-diversity needs c (a real number > 0)")
            if not self.l.is_integer():
                raise ConfigurationError(f"recursive (c,l)-diversity needs an integer l, got {self.l!r}")
            object.__setattr__(self, "c", check_positive(self.c, name="c"))

    @property
    def model(self) -> str:
        """``"<variant> l-diversity"``."""
        return f"{self.variant} l-diversity"

    @property
    def threshold(self) -> float:
        """The target l."""
        return self.l

    def satisfied_by(self, subset: SubsetFinding) -> bool:
        """Compare the subset's l (or c*) with the target."""
        if self.variant == "recursive":
            if subset.recursive_c is None or self.c is None:
                raise ConfigurationError("recursive c* was not measured: pass an integer l and a sensitive attribute")
            return self.c > subset.recursive_c
        observed = {"distinct": subset.distinct_l, "frequency": subset.frequency_l, "entropy": subset.entropy_l}
        value = observed[self.variant]
        if value is None:
            raise ConfigurationError("l-diversity needs a sensitive attribute")
        return value >= self.l - TOLERANCE

    def __str__(self) -> str:
        l_text = f"{self.l:g}"
        if self.variant == "recursive":
            return f"recursive ({self.c:g},{l_text})-diversity for {self.attribute!r}"
        return f"{self.variant}-{l_text}-diversity for {self.attribute!r}"
