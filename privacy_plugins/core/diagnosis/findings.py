"""What the diagnosis says about one subset, one border and one attribute.

Frozen, JSON-serializable records holding attribute names and numbers only:
never a value of the table, so they can go into logs, XCom and HTML reports.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from privacy_plugins.core.results import to_jsonable

__all__ = ["Borders", "QuasiIdentifierScore", "SubsetFinding"]


@dataclass(frozen=True, slots=True)
class SubsetFinding:
    """The privacy measures of the table restricted to one subset of the candidate QIs.

    Attributes:
        attributes: the subset, in the order the candidates were given. The empty
            subset is the whole table as one class (k = number of rows).
        classes: number of equivalence classes over the subset.
        k: the smallest class size.
        sample_uniques: records alone in their class (classes of size 1).
        records_at_risk: records whose prosecutor risk 1/|E| is above the threshold.
        share_at_risk: ``records_at_risk`` as a fraction of the rows.
        suppression_needed: rows in classes smaller than the target k (suppressing
            them makes the subset k-anonymous).
        suppression_fraction: ``suppression_needed`` as a fraction of the rows.
        k_after_suppression: the largest k reachable by suppressing at most
            ⌊suppression_limit·n⌋ rows, smallest classes first (``None`` when no
            suppression limit was given).
        distinct_l: min over classes of distinct sensitive values (``None`` without
            a sensitive attribute); likewise ``frequency_l`` and ``entropy_l``
            (real-valued, not floored). With several sensitive attributes, the
            smallest over them (per-attribute verdicts are in the borders).
        recursive_c: c* = max over classes of r1/(r_l + … + r_m) for the target
            l (``inf``, ``null`` in JSON, when a class has fewer than l values);
            ``None`` unless recursive (c,l)-diversity is diagnosed; the largest
            over several sensitive attributes.
        per_attribute: with several sensitive attributes, each one's own ``distinct_l``,
            ``frequency_l``, ``entropy_l`` (and ``recursive_c``) by attribute (a per-attribute
            border shows its attribute's l, not the worst one); empty with one attribute.
    """

    attributes: tuple[Hashable, ...]
    classes: int
    k: int
    sample_uniques: int
    records_at_risk: int
    share_at_risk: float
    suppression_needed: int
    suppression_fraction: float
    k_after_suppression: int | None = None
    distinct_l: int | None = None
    frequency_l: float | None = None
    entropy_l: float | None = None
    recursive_c: float | None = None
    per_attribute: Mapping[Hashable, Mapping[str, float]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def size(self) -> int:
        """Number of attributes in the subset."""
        return len(self.attributes)

    def diversity(self, attribute: Hashable | None = None) -> dict[str, float | None]:
        """``distinct_l``, ``frequency_l``, ``entropy_l``, ``recursive_c`` of ``attribute`` (default: the worst)."""
        own = self.per_attribute.get(attribute) if attribute is not None else None
        keys = ("distinct_l", "frequency_l", "entropy_l", "recursive_c")
        if own is not None:
            return {key: own.get(key) for key in keys}
        return {key: getattr(self, key) for key in keys}

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (``inf`` becomes ``None``; ``per_attribute`` only when there are several)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.per_attribute:
            del out["per_attribute"]
        else:
            out["per_attribute"] = {str(name): dict(values) for name, values in self.per_attribute.items()}
        return to_jsonable({"size": self.size, **out})


@dataclass(frozen=True)
class Borders:
    """The positive and negative border of one monotone target over the QI lattice.

    Attributes:
        target: the requirement, as the papers write it (``"5-anonymity"``).
        model: the model family, ``"k-anonymity"``, ``"<variant> l-diversity"``, ``"t-closeness"`` ….
        threshold: the target k, l, c or t.
        positive: Bd+, the maximal subsets that satisfy the target (largest first).
            ``[()]`` when no single attribute satisfies it; empty when not even
            the whole table does.
        negative: Bd−, the minimal subsets that violate it (smallest first).
            ``[()]`` only when the whole table violates it; empty when every
            subset satisfies it.
        subsets_evaluated: subsets the level-wise search measured (the empty set
            and the full set included), the thesis's measure of its efficiency.
        subsets_total: 2^d, the size of the lattice (empty set included).
        evaluated_per_level: ``subsets_evaluated`` split by subset size 0..d.
        sensitive_attribute: the attribute the target protects (``None`` for k-anonymity).
    """

    target: str
    model: str
    threshold: float
    positive: tuple[tuple[Hashable, ...], ...]
    negative: tuple[tuple[Hashable, ...], ...]
    subsets_evaluated: int
    subsets_total: int
    evaluated_per_level: tuple[int, ...]
    sensitive_attribute: Hashable | None = None

    def satisfied_by(self, attributes: tuple[Hashable, ...] | list[Hashable]) -> bool:
        """Whether a subset satisfies the target: it lies below some member of Bd+.

        Example:
            >>> borders = Borders("2-anonymity", "k-anonymity", 2.0, (("age", "sex"),), (("zip",),), 4, 8, (1, 2, 1, 0))
            >>> borders.satisfied_by(["sex"]), borders.satisfied_by(["sex", "zip"])
            (True, False)
        """
        wanted = set(attributes)
        return any(wanted <= set(member) for member in self.positive)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form with ``positive_border`` / ``negative_border`` as lists of attribute lists."""
        return to_jsonable(
            {
                "target": self.target,
                "model": self.model,
                "sensitive_attribute": self.sensitive_attribute,
                "threshold": self.threshold,
                "positive_border": self.positive,
                "negative_border": self.negative,
                "subsets_evaluated": self.subsets_evaluated,
                "subsets_total": self.subsets_total,
                "evaluated_per_level": self.evaluated_per_level,
            }
        )


@dataclass(frozen=True)
class QuasiIdentifierScore:
    """How much one attribute contributes to singling people out.

    Attributes:
        quasi_identifier: the candidate quasi-identifier.
        minimal_sets: how many minimal singling-out sets (Bd− of 2-anonymity)
            contain it.
        smallest_set: the size of the smallest such set (1: the attribute alone
            singles someone out); ``None`` when it is in none, i.e. never needed
            to single anybody out.
    """

    quasi_identifier: Hashable
    minimal_sets: int
    smallest_set: int | None
