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

from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.errors import ConfigurationError

__all__ = ["check_border_model"]


def check_border_model(model: object) -> PrivacyModel:
    """A model the border search can prune with: a :class:`PrivacyModel` monotone under generalization."""
    if not isinstance(model, PrivacyModel):
        raise TypeError(f"a border target must be a PrivacyModel, got {type(model).__name__} {model!r}")
    if not model.is_monotonic(with_suppression=False):
        raise ConfigurationError(f"{model} is not monotone over quasi-identifier subsets; it has no borders")
    return model
