"""The diagnosis of one table: :class:`PrivacyDiagnosis` and its JSON form.

The HTML report is :func:`privacy_plugins.report.render` (outside the core, which never imports it).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from privacy_plugins.core.diagnosis.findings import Borders, QuasiIdentifierScore, SubsetFinding
from privacy_plugins.core.diagnosis.population_section import PopulationDiagnosis
from privacy_plugins.core.diagnosis.special_uniques import SpecialUniques
from privacy_plugins.core.results import to_jsonable

__all__ = ["PrivacyDiagnosis", "rank_quasi_identifiers"]


def rank_quasi_identifiers(
    attributes: Sequence[Hashable], minimal_sets: Sequence[tuple[Hashable, ...]]
) -> tuple[QuasiIdentifierScore, ...]:
    """Rank attributes: those in the smallest minimal singling-out sets first, then by how many sets hold them.

    Example:
        >>> [s.quasi_identifier for s in rank_quasi_identifiers(["age", "sex", "zip"], [("zip",), ("age", "sex")])]
        ['zip', 'age', 'sex']
    """
    scores = []
    for attribute in attributes:
        sizes = [len(s) for s in minimal_sets if attribute in s]
        scores.append(QuasiIdentifierScore(attribute, len(sizes), min(sizes) if sizes else None))
    order = {attribute: i for i, attribute in enumerate(attributes)}
    return tuple(
        sorted(
            scores,
            key=lambda s: (s.smallest_set is None, s.smallest_set or 0, -s.minimal_sets, order[s.quasi_identifier]),
        )
    )


@dataclass(frozen=True)
class PrivacyDiagnosis:
    """What :func:`diagnose` found, before anything is changed.

    Attributes:
        quasi_identifiers: the d candidate quasi-identifiers.
        sensitive_attributes: the attributes whose l-diversity was diagnosed.
        rows: records in the table.
        target_k: the k of ``k_borders`` and of every ``suppression_needed``.
        target_l: the ``l`` keyword of the diagnosis (``None``: not given).
        c: recursive (c,l)'s c, if given.
        suppression_limit: the suppression limit of every ``k_after_suppression``, if given.
        risk_threshold: record risk counted as at risk.
        exhaustive: True when all 2^d subsets were measured (d ≤ ``max_exhaustive``);
            otherwise the search went level-wise only up to the borders.
        whole_table: the empty subset: the whole table as one class.
        all_quasi_identifiers: the subset of every candidate.
        class_size_histogram: class size → number of classes, over all candidates.
        k_borders: Bd+ / Bd− of ``target_k``-anonymity.
        model_borders: Bd+ / Bd− of every other requirement (l-diversity of each
            sensitive attribute, the ``models`` given), each naming its
            ``sensitive_attribute``.
        singling_out: the borders of 2-anonymity: its Bd− are the minimal
            attribute sets that single out at least one person.
        quasi_identifier_ranking: attributes ranked by their part in those sets.
        subsets: every non-empty subset measured, in lattice order (all 2^d − 1
            when ``exhaustive``).
        subsets_measured: distinct subsets whose partition was computed.
        mode_reason: why the diagnosis went level-wise (too many candidates,
            rows × subsets over ``max_cost``, or the ``time_budget`` ran out);
            ``None`` when every subset was measured.
        special_uniques: the minimal sample uniques and SUDA scores of the records
            (``None`` when not searched); its ``bound_hit`` says when a bound cut the search.
        population: risk beyond the sample under the population model given to :func:`diagnose`
            (``None`` without one): per subset measured, for all candidates, and each attacker's
            record-risk distribution.
    """

    quasi_identifiers: tuple[Hashable, ...]
    sensitive_attributes: tuple[Hashable, ...]
    rows: int
    target_k: int
    target_l: float | None
    c: float | None
    suppression_limit: float | None
    risk_threshold: float
    exhaustive: bool
    whole_table: SubsetFinding
    all_quasi_identifiers: SubsetFinding
    class_size_histogram: Mapping[int, int]
    k_borders: Borders
    model_borders: tuple[Borders, ...]
    singling_out: Borders
    quasi_identifier_ranking: tuple[QuasiIdentifierScore, ...]
    subsets: tuple[SubsetFinding, ...]
    subsets_measured: int
    mode_reason: str | None = None
    special_uniques: SpecialUniques | None = None
    #: Columns flagged as direct identifiers (``IdentifierFinding.to_dict()``: category, share, counts; no value).
    direct_identifiers: tuple[dict[str, Any], ...] = ()
    population: PopulationDiagnosis | None = None

    @property
    def subsets_evaluated(self) -> int:
        """Subsets the level-wise search for ``target_k`` evaluated (of 2^d)."""
        return self.k_borders.subsets_evaluated

    @property
    def subsets_total(self) -> int:
        """2^d, the number of subsets of the candidates (the empty one included)."""
        return 2 ** len(self.quasi_identifiers)

    def for_subset(self, attributes: Sequence[Hashable]) -> SubsetFinding:
        """The finding of one subset (any order); ``KeyError`` when it was not measured.

        In level-wise mode only the subsets the search visited were measured;
        :func:`privacy_plugins.measure` measures any other one.
        """
        wanted = set(attributes)
        if not wanted:
            return self.whole_table
        for finding in self.subsets:
            if set(finding.attributes) == wanted:
                return finding
        raise KeyError(f"subset {sorted(map(str, wanted))} was not measured by this diagnosis")

    def border_findings(self) -> tuple[SubsetFinding, ...]:
        """The findings of every subset on some border, smallest subsets first."""
        members = {frozenset(s) for b in (self.k_borders, self.singling_out, *self.model_borders) for s in b.positive}
        members |= {frozenset(s) for b in (self.k_borders, self.singling_out, *self.model_borders) for s in b.negative}
        chosen = [f for f in (self.whole_table, *self.subsets) if frozenset(f.attributes) in members]
        return tuple(sorted(chosen, key=lambda f: f.size))

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form: attribute names and numbers only, never a value of the table.

        Top-level keys include ``subsets_evaluated`` (by the level-wise search
        for ``target_k``) and ``subsets_total`` (2^d), ``positive_border`` and
        ``negative_border`` (of ``target_k``, as lists of attribute lists),
        ``sample_uniques`` (over all candidates) and ``k_by_subset`` (every
        non-empty subset when exhaustive, else ``None``).
        """
        full = self.all_quasi_identifiers
        out: dict[str, Any] = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive_attributes": list(self.sensitive_attributes),
            "rows": self.rows,
            "target_k": self.target_k,
            "target_l": self.target_l,
            "c": self.c,
            "suppression_limit": self.suppression_limit,
            "risk_threshold": self.risk_threshold,
            "mode": "exhaustive" if self.exhaustive else "levelwise",
            "mode_reason": self.mode_reason,
            "subsets_evaluated": self.subsets_evaluated,
            "subsets_total": self.subsets_total,
            "subsets_measured": self.subsets_measured,
            "positive_border": self.k_borders.positive,
            "negative_border": self.k_borders.negative,
            "k": full.k,
            "classes": full.classes,
            "sample_uniques": full.sample_uniques,
            "records_at_risk": full.records_at_risk,
            "share_at_risk": full.share_at_risk,
            "suppression_needed": full.suppression_needed,
            "suppression_needed_fraction": full.suppression_fraction,
            "k_after_suppression": full.k_after_suppression,
            "class_size_histogram": self.class_size_histogram,
            "whole_table": self.whole_table.to_dict(),
            "all_quasi_identifiers": full.to_dict(),
            "k_borders": self.k_borders.to_dict(),
            "model_borders": [b.to_dict() for b in self.model_borders],
            "singling_out": {
                "minimal_sets": self.singling_out.negative,
                "subsets_evaluated": self.singling_out.subsets_evaluated,
                "quasi_identifier_ranking": self.quasi_identifier_ranking,
            },
            "border_subsets": [f.to_dict() for f in self.border_findings()],
            "k_by_subset": [f.to_dict() for f in self.subsets] if self.exhaustive else None,
            "special_uniques": None if self.special_uniques is None else self.special_uniques.to_dict(),
            "direct_identifiers": [dict(f) for f in self.direct_identifiers],
            "population": None if self.population is None else self.population.to_dict(),
        }
        return to_jsonable(out)
