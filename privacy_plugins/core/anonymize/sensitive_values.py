"""Sensitive-attribute-based anonymity (Nagendra & Aparna): k-anonymize only the most sensitive records.

The records whose sensitive value is in the set A (``sensitive_values``) are
anonymized by a registered algorithm (``base_algorithm``, default ``optimal``) under
the request's models; the other records are published as they are; both parts are
joined back in the input order. The release is re-checked with every model scoped
to the classes that hold a record in A (:class:`~privacy_plugins.core.models.SensitiveValueScope`):
table-wide k-anonymity does not hold, by design.

**What it leaks.** Whether a record was generalized tells that its value is in A: an
adversary who finds someone in a generalized class learns P(value ∈ A) = 1 there,
and a raw record tells P(value ∈ A) = 0 (and its exact value). The details report,
per published record, P(value ∈ A | its class) (max and mean), and
``membership_revealed``: the records in classes made only of A-records. Every run
emits a :class:`~privacy_plugins.errors.PrivacyRiskWarning`.

**When to use it.** Only when membership in A is not itself sensitive (e.g. A = rare
diagnoses that need extra protection against linkage while common values are
harmless and widely known), when the records outside A are not sensitive at all, and
when utility for the non-sensitive majority matters more than hiding who is
sensitive. **Not** when "has a value in A" is the secret (HIV status: being
generalized reveals it), nor when the QIs of raw records can be linked to people.

*Choices:* A is given as comma-separated text (the registry's options are primitives,
so the CLI and the release spec share it); values are compared as text labels. The
base algorithm runs without suppression (``suppression_limit`` is not used), so its
rows map one-to-one back to the input rows. Quasi-identifiers are published as text in both parts.

References:
    Nagendra Kumar M. V., Aparna R. Sensitive attributes based privacy preserving in data
    mining using k-anonymity. IJCA 2013.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationDetails, AnonymizationRequest, AnonymizedTable, verify
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags, ModelSupport, get_anonymizer
from privacy_plugins.core.disclosure import examples
from privacy_plugins.core.hierarchies.hierarchy import as_labels
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility
from privacy_plugins.core.models import PrivacyModel, SensitiveValueScope
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, PrivacyRiskWarning

__all__ = ["SensitiveValuesAnonymizer", "SensitiveValuesDetails", "parse_sensitive_values"]


def parse_sensitive_values(text: str) -> tuple[str, ...]:
    """The set A from ``"HIV, Cancer"`` (order kept, duplicates and blanks dropped).

    Example:
        >>> parse_sensitive_values(" HIV,Cancer,,HIV ")
        ('HIV', 'Cancer')
    """
    return tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


@dataclass(frozen=True)
class SensitiveValuesDetails(AnonymizationDetails):
    """What sensitive-values anonymization did, and what it reveals.

    Attributes:
        sensitive_attribute: the attribute whose values select the records.
        sensitive_values: the set A.
        base_algorithm: the algorithm that anonymized the records in A.
        records_in_a: records anonymized.
        records_published_as_is: records outside A, published unchanged.
        membership_revealed: records in published classes made only of A-records
            (P(value ∈ A) = 1 for anyone found there).
        max_membership_probability: the largest P(value ∈ A | class) of a record in A.
        mean_membership_probability: the mean of that over the records in A.
        base: the base algorithm's own details.
        base_headline: the base algorithm's own summary line.
    """

    kind: ClassVar[str] = "sensitive-values"

    sensitive_attribute: Hashable
    sensitive_values: tuple[str, ...]
    base_algorithm: str
    records_in_a: int
    records_published_as_is: int
    membership_revealed: int
    max_membership_probability: float
    mean_membership_probability: float
    base: Mapping[str, Any]
    base_headline: str = ""

    def headline(self) -> str:
        """Records anonymized (with the base algorithm's own headline) and records published as is."""
        base = f" ({self.base_headline})" if self.base_headline else ""
        return (
            f"{self.records_in_a:,} records anonymized with {self.base_algorithm}{base}, "
            f"{self.records_published_as_is:,} published as is"
        )


def _sensitive_attribute(request: AnonymizationRequest) -> Hashable:
    attributes = list(request.roles.sensitive_attributes)
    if len(attributes) != 1:
        raise ConfigurationError(
            f"sensitive-values selects records by one sensitive attribute; got {attributes!r} "
            "(name exactly one in sensitive_attributes)"
        )
    return attributes[0]


@dataclass(frozen=True)
class SensitiveValuesAnonymizer:
    """Registered as ``"sensitive-values"``; options ``sensitive_values`` and ``base_algorithm``."""

    #: Nothing about the whole table: the records outside A are published unchanged, so a table-wide
    #: model (what a release checks) never holds by design; ``protected_models`` says what it promises.
    #: The records in A are anonymized without suppression.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(
        supported_models=ModelSupport(
            promises=frozenset(),
            why="it anonymizes only the records with the chosen sensitive values and publishes the others "
            "unchanged, so no requirement on the whole published table can hold",
        ),
        partial_scope=True,
        suppresses=False,
    )
    name: str = "sensitive-values"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption(
            "sensitive_values",
            str,
            "",
            help="comma-separated most-sensitive values A: only their records are anonymized",
        ),
        AnonymizerOption(
            "base_algorithm", str, "optimal", help="registered algorithm that anonymizes the records in A"
        ),
    )

    def _values(self, request: AnonymizationRequest, sensitive_values: str) -> tuple[Hashable, tuple[str, ...]]:
        attribute = _sensitive_attribute(request)
        values = parse_sensitive_values(sensitive_values)
        if not values:
            raise ConfigurationError(
                f"sensitive_values (the set A) is empty; name at least one value of {attribute!r}, comma-separated"
            )
        present = set(as_labels(request.table[attribute]).dropna())
        never = [value for value in values if value not in present]
        if never:
            raise ConfigurationError(
                f"{len(never)} of the {len(values)} sensitive_values never occur in {attribute!r}: {never!r}"
            )
        return attribute, values

    def protected_models(
        self, request: AnonymizationRequest, *, sensitive_values: str, base_algorithm: str
    ) -> tuple[PrivacyModel, ...]:
        """The request's models, each scoped to the classes holding a record in A."""
        attribute, values = self._values(request, sensitive_values)
        return tuple(SensitiveValueScope(model, attribute, values) for model in request.models)

    def run(self, request: AnonymizationRequest, *, sensitive_values: str, base_algorithm: str) -> AnonymizedTable:
        """Anonymize the records in A with ``base_algorithm``, publish the rest as is, join in input order."""
        attribute, values = self._values(request, sensitive_values)
        if base_algorithm == self.name:
            raise ConfigurationError(f"base_algorithm must be another registered algorithm, got {base_algorithm!r}")
        base = get_anonymizer(base_algorithm)
        frame = request.table.reset_index(drop=True)
        in_a = as_labels(frame[attribute]).isin(values).to_numpy()
        part = replace(request, table=frame.loc[in_a].reset_index(drop=True), max_suppressed=0, suppression_limit=0.0)
        defaults = {option.name: option.default for option in base.options}
        # The part in A must meet the models in full: the core re-checks it on its own first.
        inner = verify(part, base.run(part, **defaults), algorithm=base.name, seconds=0.0)
        warnings.warn(
            PrivacyRiskWarning(
                f"sensitive-values publishes {int((~in_a).sum())} records outside A unchanged; whether a record "
                f"was generalized reveals that its {attribute!r} is one of the sensitive_values{examples(values)}"
            ),
            stacklevel=2,
        )
        published = frame.drop(columns=list(request.roles.identifiers))
        for column in request.quasi_identifiers:
            values_out = np.array(as_labels(published[column]).to_numpy(dtype=object), dtype=object)
            values_out[in_a] = inner.table[column].astype(object).to_numpy()
            published[column] = pd.Series(values_out, index=published.index, dtype=object)
        classes = EquivalenceClasses.from_frame(published, list(request.quasi_identifiers))
        share = np.bincount(classes.class_of_row, weights=in_a.astype(float), minlength=classes.n_classes)
        membership = (share / classes.sizes)[classes.class_of_row]
        n = len(frame)
        ncp = inner.utility.ncp * int(in_a.sum()) / n
        return AnonymizedTable(
            table=published,
            released=np.ones(n, dtype=bool),
            suppressed=0,
            utility=UtilityMetrics(
                ncp=ncp,
                lm=ncp * len(request.quasi_identifiers),
                discernibility=discernibility(classes.sizes, 0, n),
                c_avg=average_class_size(classes.sizes, request.minimum_class_size),
            ),
            details=SensitiveValuesDetails(
                sensitive_attribute=attribute,
                sensitive_values=values,
                base_algorithm=base.name,
                records_in_a=int(in_a.sum()),
                records_published_as_is=int((~in_a).sum()),
                membership_revealed=int((in_a & (membership >= 1.0)).sum()),
                max_membership_probability=float(membership[in_a].max()),
                mean_membership_probability=float(membership[in_a].mean()),
                base=inner.details.to_dict(),
                base_headline=inner.details.headline(),
            ),
        )
