"""Anonymization algorithms behind one entry point, :func:`anonymize`, and a name → algorithm registry.

Every algorithm returns an :class:`AnonymizationResult` re-checked by the core
(:func:`~privacy_plugins.core.anonymize.base.verify`). Adding one is one file
and one :func:`register_anonymizer` line below; what it can do it declares in its
``tags`` (:class:`AnonymizerTags`), which every caller reads instead of its name.
"""

from privacy_plugins.core.anonymize.anatomy import AnatomyAnonymizer, AnatomyDetails
from privacy_plugins.core.anonymize.base import (
    AnonymizationDetails,
    AnonymizationRequest,
    AnonymizationResult,
    AnonymizedTable,
    LatticeDetails,
    LinkedTable,
    VerificationError,
    linked_classes,
    verify,
)
from privacy_plugins.core.anonymize.bucket_clustering import BucketClusteringAnonymizer, BucketDetails
from privacy_plugins.core.anonymize.clustering import (
    ClusterDetails,
    KMemberAnonymizer,
    TwoPhaseAnonymizer,
    anonymize_clustering,
)
from privacy_plugins.core.anonymize.dpp2ga import Dpp2gaAnonymizer, Dpp2gaDetails
from privacy_plugins.core.anonymize.full_domain import FullDomainAnonymizer, anonymize_full_domain
from privacy_plugins.core.anonymize.generalization_lattice import LOSS_METRICS
from privacy_plugins.core.anonymize.mondrian import MondrianAnonymizer, PartitionDetails, anonymize_mondrian
from privacy_plugins.core.anonymize.optimistic import OptimisticClusteringAnonymizer
from privacy_plugins.core.anonymize.personalized import PersonalizedAnonymizer, PersonalizedDetails
from privacy_plugins.core.anonymize.registry import (
    DEFAULT_ALGORITHM,
    Anonymizer,
    AnonymizerOption,
    AnonymizerTags,
    ModelSupport,
    anonymize,
    anonymizer_names,
    get_anonymizer,
    register_anonymizer,
    snapshot_anonymizer,
    tags_of,
)
from privacy_plugins.core.anonymize.sensitive_values import SensitiveValuesAnonymizer, SensitiveValuesDetails

__all__ = [
    "DEFAULT_ALGORITHM",
    "LOSS_METRICS",
    "AnatomyAnonymizer",
    "AnatomyDetails",
    "AnonymizationDetails",
    "AnonymizationRequest",
    "AnonymizationResult",
    "AnonymizedTable",
    "Anonymizer",
    "AnonymizerOption",
    "AnonymizerTags",
    "BucketClusteringAnonymizer",
    "BucketDetails",
    "ClusterDetails",
    "Dpp2gaAnonymizer",
    "Dpp2gaDetails",
    "FullDomainAnonymizer",
    "KMemberAnonymizer",
    "LatticeDetails",
    "LinkedTable",
    "ModelSupport",
    "MondrianAnonymizer",
    "OptimisticClusteringAnonymizer",
    "PartitionDetails",
    "PersonalizedAnonymizer",
    "PersonalizedDetails",
    "SensitiveValuesAnonymizer",
    "SensitiveValuesDetails",
    "TwoPhaseAnonymizer",
    "VerificationError",
    "anonymize",
    "anonymize_clustering",
    "anonymize_full_domain",
    "anonymize_mondrian",
    "anonymizer_names",
    "get_anonymizer",
    "linked_classes",
    "register_anonymizer",
    "snapshot_anonymizer",
    "tags_of",
    "verify",
]

register_anonymizer("optimal", lambda: FullDomainAnonymizer("optimal"))
register_anonymizer("samarati", lambda: FullDomainAnonymizer("samarati"))
register_anonymizer("exhaustive", lambda: FullDomainAnonymizer("exhaustive"))
register_anonymizer("mondrian", MondrianAnonymizer)
register_anonymizer("k-member", KMemberAnonymizer)
register_anonymizer("two-phase", TwoPhaseAnonymizer)
register_anonymizer("personalized", PersonalizedAnonymizer)
register_anonymizer("sensitive-values", SensitiveValuesAnonymizer)
register_anonymizer("dpp2ga", Dpp2gaAnonymizer)
register_anonymizer("bucket", BucketClusteringAnonymizer)
register_anonymizer("optimistic", OptimisticClusteringAnonymizer)
register_anonymizer("anatomy", AnatomyAnonymizer)
