"""Level-wise (apriori) search for the borders of monotone targets over the QI lattice.

The satisfying subsets of a monotone target are down-closed, so the search of
Mannila and Toivonen finds both borders without visiting the lattice:

1. measure the empty set (the whole table as one class): if it violates, every
   subset does (Bd+ = ∅, Bd− = {∅}); then measure the full set: if it
   satisfies, every subset does (Bd+ = {full}, Bd− = ∅);
2. level 1 holds the single attributes; a subset of size i+1 is a candidate
   only when all its subsets of size i satisfy (apriori-gen);
3. violating candidates are minimal violating subsets (Bd−); a satisfying
   subset none of whose one-larger supersets satisfies is maximal (Bd+);
4. stop when a level has no candidate.

Several targets are searched in lockstep so that a subset needed by more than
one of them is measured once; each still counts its own evaluations, the
thesis's measure of the method's efficiency against the 2^d subsets.

References:
    Mannila H., Toivonen H. Levelwise search and borders of theories in
    knowledge discovery. Data Mining and Knowledge Discovery 1(3), 1997.
    Mirakabad M. R. A framework for privacy diagnosis and preservation in data
    publishing. PhD thesis, 2011, §3.1.3 (Algorithm 3.6).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from privacy_plugins.core.diagnosis.findings import Borders
from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice, bits_of, lattice_order
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.progress import ProgressCallback
from privacy_plugins.errors import ConfigurationError

__all__ = ["DEFAULT_MAX_EVALUATIONS", "candidates_above", "levelwise_borders"]

#: The search refuses to measure more subsets than this unless told otherwise.
DEFAULT_MAX_EVALUATIONS = 200_000


@dataclass
class _Search:
    """The running state of one target's search."""

    target: PrivacyModel
    per_level: list[int]
    frontier: set[int] = field(default_factory=set)
    candidates: list[int] = field(default_factory=list)
    positive: list[int] = field(default_factory=list)
    negative: list[int] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return bool(self.frontier)


def candidates_above(frontier: Collection[int], d: int) -> list[int]:
    """Apriori-gen: the subsets one larger than ``frontier``'s whose every subset is in it.

    Each candidate is generated once, from itself minus its highest attribute.

    Example:
        >>> candidates_above({0b001, 0b010, 0b100}, 3)  # three satisfying singletons
        [3, 5, 6]
        >>> candidates_above({0b011, 0b101}, 3)  # {0,1,2} also needs {1,2}
        []
    """
    out = []
    for subset in frontier:
        lower = bits_of(subset)
        for attribute in range(subset.bit_length(), d):
            candidate = subset | (1 << attribute)
            if all(candidate ^ (1 << b) in frontier for b in lower):
                out.append(candidate)
    return sorted(out)


def _start(lattice: SubsetLattice, target: PrivacyModel) -> _Search:
    """Step 1: decide from the empty and the full set alone when possible."""
    search = _Search(target=target, per_level=[1] + [0] * lattice.d)
    lattice.evaluate([0])
    if not lattice.holds(0, target):
        search.negative.append(0)
        return search
    full = lattice.full_mask
    search.per_level[lattice.d] += 1
    lattice.evaluate([full])
    if lattice.holds(full, target):
        search.positive.append(full)
        return search
    search.frontier = {0}
    return search


def _advance(search: _Search, lattice: SubsetLattice, level: int, full: int) -> None:
    """Step 3: classify one level's candidates and close the previous level's maximal sets."""
    satisfying = set()
    for candidate in search.candidates:
        if candidate != full:  # the full set was counted when it was measured first
            search.per_level[level] += 1
        if lattice.holds(candidate, search.target):
            satisfying.add(candidate)
        else:
            search.negative.append(candidate)
    covered = {subset ^ (1 << b) for subset in satisfying for b in bits_of(subset)}
    search.positive.extend(subset for subset in search.frontier if subset not in covered)
    search.frontier = satisfying


def _ordered(lattice: SubsetLattice, masks: Iterable[int], *, largest_first: bool) -> tuple[tuple[Hashable, ...], ...]:
    ranked = sorted(masks, key=lattice_order)
    if largest_first:
        ranked.sort(key=lambda mask: -mask.bit_count())  # stable: candidate order within a size
    return tuple(lattice.names(mask) for mask in ranked)


def levelwise_borders(
    lattice: SubsetLattice,
    targets: Sequence[PrivacyModel],
    *,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    progress: ProgressCallback | None = None,
) -> tuple[Borders, ...]:
    """Bd+ and Bd− of each target, found level-wise with monotonicity pruning.

    Args:
        lattice: the measured table.
        targets: privacy models monotone under generalization (see
            :mod:`privacy_plugins.core.diagnosis.criteria`); each decides on a subset's classes.
        max_evaluations: stop with :class:`ConfigurationError` rather than measure
            more distinct subsets than this (integer ≥ 1).
        progress: called as ``progress(subsets_measured, None)`` after each newly measured subset.

    Returns:
        One :class:`Borders` per target, in the order given.
    """
    searches = [_start(lattice, target) for target in targets]
    full = lattice.full_mask
    measured_so_far = len(lattice.findings)
    level = 0
    while any(search.active for search in searches):
        level += 1
        active = [search for search in searches if search.active]
        wanted: set[int] = set()
        for search in active:
            search.candidates = candidates_above(search.frontier, lattice.d)
            wanted.update(search.candidates)
        measured_so_far += len(wanted)
        if measured_so_far > max_evaluations:
            raise ConfigurationError(
                f"the border search over {lattice.d} quasi-identifiers needs more than "
                f"max_evaluations={max_evaluations} subsets (level {level} alone has {len(wanted)} candidates); "
                "raise max_evaluations or diagnose fewer candidate quasi-identifiers"
            )
        lattice.evaluate(sorted(wanted), progress=progress)
        for search in active:
            _advance(search, lattice, level, full)
        lattice.keep_partitions(set().union(*(search.frontier for search in active)))
    return tuple(
        Borders(
            target=str(search.target),
            model=search.target.family,
            threshold=search.target.threshold,
            positive=_ordered(lattice, search.positive, largest_first=True),
            negative=_ordered(lattice, search.negative, largest_first=False),
            subsets_evaluated=sum(search.per_level),
            subsets_total=2**lattice.d,
            evaluated_per_level=tuple(search.per_level),
            sensitive_attribute=search.target.sensitive_attribute,
        )
        for search in searches
    )
