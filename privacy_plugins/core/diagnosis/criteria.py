"""The requirements the border search prunes with: the core's own privacy models.

The diagnosis has no criterion classes of its own: a border is computed for any
:class:`~privacy_plugins.core.models.PrivacyModel` that is monotone under
generalization, and each model decides on a subset itself, from the subset's
equivalence classes (:meth:`PrivacyModel.holds`). Removing a quasi-identifier
only merges classes, and merging can only raise k, distinct l, frequency l and
entropy l, and only lower recursive c*, so the subsets that satisfy such a model
form a down-closed family (if Q satisfies, every Q' ⊆ Q does). That is what lets
the level-wise search skip every superset of a violating subset. The thesis
proves it for k, distinct, entropy and recursive (c,l); frequency l follows
because the largest share of one value in a union of classes is at most the
largest share in one of them.

References:
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data
    publishing. PhD thesis, Universiti Teknologi Malaysia, 2011, §3.1.2.
    Machanavajjhala A. et al. l-Diversity: Privacy Beyond k-Anonymity. TKDD 1(1), 2007.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal

from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    PrivacyModel,
    RecursiveCLDiversity,
)
from privacy_plugins.core.parameters import check_positive
from privacy_plugins.errors import ConfigurationError

__all__ = ["L_BORDER_VARIANTS", "LBorderVariant", "check_border_model", "l_diversity_model"]

LBorderVariant = Literal["distinct", "frequency", "entropy", "recursive"]
L_BORDER_VARIANTS: tuple[str, ...] = ("distinct", "frequency", "entropy", "recursive")
_L_MODELS = {"distinct": DistinctLDiversity, "frequency": FrequencyLDiversity, "entropy": EntropyLDiversity}


def l_diversity_model(variant: str, l: float, attribute: Hashable, *, c: float | None = None) -> PrivacyModel:
    """The l-diversity model of a diagnosis variant name.

    Args:
        variant: ``"distinct"``, ``"frequency"``, ``"entropy"`` or ``"recursive"``.
        l: the target l, real ≥ 1 (an integer for ``"recursive"``).
        attribute: the sensitive attribute whose values must be diverse.
        c: recursive (c,l) only: the subset satisfies iff c > c*, c > 0.

    Example:
        >>> str(l_diversity_model("recursive", 2, "disease", c=3))
        "recursive (3,2)-diversity for 'disease'"
        >>> str(l_diversity_model("entropy", 2, "disease"))
        "entropy-2-diversity for 'disease'"
    """
    if variant not in L_BORDER_VARIANTS:
        raise ConfigurationError(f"l_variant must be one of {list(L_BORDER_VARIANTS)}, got {variant!r}")
    value = check_positive(l, name="l", minimum=1.0, inclusive=True)
    if variant != "recursive":
        return _L_MODELS[variant](attribute, value)
    if c is None:
        raise ConfigurationError("recursive (c,l)-diversity needs c (a real number > 0)")
    if not value.is_integer():
        raise ConfigurationError(f"recursive (c,l)-diversity needs an integer l, got {l!r}")
    return RecursiveCLDiversity(attribute, check_positive(c, name="c"), int(value))


def check_border_model(model: object) -> PrivacyModel:
    """A model the border search can prune with: a :class:`PrivacyModel` monotone under generalization."""
    if not isinstance(model, PrivacyModel):
        raise TypeError(f"a border target must be a PrivacyModel, got {type(model).__name__} {model!r}")
    if not model.is_monotonic(with_suppression=False):
        raise ConfigurationError(f"{model} is not monotone over quasi-identifier subsets; it has no borders")
    return model
