"""Anonymization algorithms; each returns an :class:`AnonymizationResult` re-checked by the core."""

from privacy_plugins.core.anonymize.base import AnonymizationResult, VerificationError
from privacy_plugins.core.anonymize.full_domain import FULL_DOMAIN_ALGORITHMS, anonymize_full_domain
from privacy_plugins.core.anonymize.lattice import LOSS_METRICS

__all__ = [
    "FULL_DOMAIN_ALGORITHMS",
    "LOSS_METRICS",
    "AnonymizationResult",
    "VerificationError",
    "anonymize_full_domain",
]
