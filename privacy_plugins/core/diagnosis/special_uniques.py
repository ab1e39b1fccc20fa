"""Special uniques (SUDA2): minimal sample uniques per record, SUDA and DIS scores, per-attribute contributions.

A record is a *sample unique* on an attribute set A when no other record shares its
values on A, and A is a *minimal sample unique* (MSU) of that record when it is unique on
A but on no proper subset of A. Records with MSUs are *special uniques*: the smaller
their MSUs and the more of them, the easier they are to single out. Only records unique
on all the candidates can have an MSU, and uniqueness only grows with A, so A is an MSU
of r exactly when r is unique on A and on none of A's subsets one smaller.

The search is level-wise over the subset lattice of the diagnosis (the same units and
partitions, :class:`~.subset_lattice.SubsetLattice`), in the apriori manner of SUDA2:
a record is still a *candidate* for A when it is non-unique on every subset of A one
smaller; A is grouped only when it has a candidate, and a set none of whose records is a
candidate is never grouped, nor any superset. Everything per level is boolean arrays
over the records unique on all candidates — no loop over rows.

Scores follow Elliot et al. as sdcMicro's ``suda2`` computes them (``original_scores=TRUE``),
with M the number of candidates, at least 3 (:data:`MIN_ATTRIBUTES`, below):

* SUDA score of a record = Σ over its MSUs A of (M − |A|)!;
* per-attribute contribution of a record = Σ over its MSUs containing the attribute of
  (M − |A|)!, divided by its score; the table's contribution of an attribute is the sum
  of those numerators over the records divided by the total score (percent; they add up
  to more than 100 because an MSU counts for each of its attributes);
* DIS-SUDA score: with U the records unique on all candidates, P = 2 × the combinations
  held by exactly two records, f the sampling fraction, DIS = U·f / (U·f + P·(1 − f)),
  Q = 1 + (8 − M)/20 and S = Σ_r score_r^(−Q) over the records with a score:
  dis_r = 1 / (1 + (U/DIS − U) / (score_r^Q · S)) (0 without a score).

With one or two candidates M is 3, as in sdcMicro, which pads such a table with constant
columns (they never single anybody out, so the MSUs are the same; only M changes). We follow
it: with M = 2 the weights (M − |A|)! of a 1-attribute and a 2-attribute MSU would both be 1,
so the score would no longer rank the smaller MSU as the riskier one, which is the point of
the (M − |A|)! weights; with M = 3 they are 2 and 1 (and Q = 1.25), and our scores, DIS
scores and contributions equal sdcMicro's on such tables too
(tests/core/diagnosis/test_special_uniques.py::test_one_or_two_candidates_weigh_as_sdcmicros_padded_three).

References:
    Elliot M. J., Manning A., Mayes K., Gurd J., Bane M. SUDA: A Program for Detecting
    Special Uniques. Joint UNECE/Eurostat work session on SDC, 2005.
    Manning A. M., Haglin D. J., Keane J. A. A recursive search algorithm for statistical
    disclosure assessment. Data Min. Knowl. Disc. 16, 2008.
    Templ M., Kowarik A., Meindl B. sdcMicro ``suda2`` (R package).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privacy_plugins.core.diagnosis.search import candidates_above
from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice, bits_of
from privacy_plugins.core.parameters import check_fraction, check_integer
from privacy_plugins.core.results import to_jsonable

__all__ = ["DEFAULT_DIS_FRACTION", "DEFAULT_MSU_MAX_SIZE", "DEFAULT_MSU_MAX_SUBSETS", "SpecialUniques", "find_msus"]

#: MSUs of every size are searched by default (``None``), as sdcMicro does; the subset budget still bounds it.
DEFAULT_MSU_MAX_SIZE: int | None = None
#: At most this many attribute sets are grouped by the MSU search (about a second on Adult's 30k rows).
DEFAULT_MSU_MAX_SUBSETS = 2_000
#: sdcMicro's default sampling fraction of the DIS score.
DEFAULT_DIS_FRACTION = 0.01
#: sdcMicro's intervals of the DIS-SUDA score: (label, upper bound).
_DIS_BINS = (("0", 0.0), ("(0, 0.1]", 0.1), ("(0.1, 0.2]", 0.2), ("(0.2, 0.3]", 0.3), ("(0.3, 0.4]", 0.4),
             ("(0.4, 0.5]", 0.5), ("(0.5, 0.6]", 0.6), ("(0.6, 0.7]", 0.7), ("> 0.7", math.inf))  # fmt: skip
#: Partitions kept as parents for the next level, in unit entries (≈ 160 MB); beyond, sets are grouped afresh.
_KEPT_ENTRIES = 20_000_000
#: The report lists at most this many MSU attribute sets (the most frequent).
_MSU_SETS_SHOWN = 20


@dataclass(frozen=True)
class SpecialUniques:
    """The MSUs of a table and its records' SUDA scores; counts and attribute names only.

    Attributes:
        max_size: the largest MSU size searched (the size bound).
        complete: every MSU was found (no bound cut the search).
        bound_hit: ``None`` when complete; otherwise which bound cut it and how many records it left unsearched.
        records_unique: records unique on all the candidates (the only ones that can have MSUs).
        special_uniques: records with at least one MSU.
        msus: number of (record, MSU) pairs found; ``msus_by_size``: per MSU size.
        msu_sets: the attribute sets that are MSUs of the most records, with those record counts.
        attribute_contributions: percent of the total SUDA score each attribute takes part in.
        max_score, mean_score: of the SUDA score over all records.
        dis_fraction: the sampling fraction of the DIS score; ``dis_histogram``: records per
            sdcMicro DIS interval.
        subsets_grouped: attribute sets grouped by the search.
        scores, dis_scores, contributions: per row of the diagnosed frame (not in JSON): the
            SUDA score, the DIS-SUDA score and the rows × candidates contribution shares.
    """

    attributes: tuple[Hashable, ...]
    max_size: int
    complete: bool
    bound_hit: str | None
    records_unique: int
    special_uniques: int
    msus: int
    msus_by_size: Mapping[int, int]
    msu_sets: tuple[tuple[tuple[Hashable, ...], int], ...]
    attribute_contributions: Mapping[Hashable, float]
    max_score: float
    mean_score: float
    dis_fraction: float
    dis_histogram: Mapping[str, int]
    subsets_grouped: int
    scores: np.ndarray = field(repr=False, compare=False)
    dis_scores: np.ndarray = field(repr=False, compare=False)
    contributions: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form without the per-record arrays."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__ if name not in _PER_RECORD}
        out["attributes"] = [str(a) for a in self.attributes]
        out["msu_sets"] = [{"attributes": [str(a) for a in names], "records": n} for names, n in self.msu_sets]
        out["attribute_contributions"] = {str(a): v for a, v in self.attribute_contributions.items()}
        return to_jsonable(out)


_PER_RECORD = ("scores", "dis_scores", "contributions")

#: The smallest M of the SUDA weights (M − |A|)! and of DIS's Q: sdcMicro's ``suda2`` pads to 3 key variables.
MIN_ATTRIBUTES = 3


def find_msus(
    lattice: SubsetLattice,
    *,
    max_size: int | None = DEFAULT_MSU_MAX_SIZE,
    max_subsets: int = DEFAULT_MSU_MAX_SUBSETS,
    max_cost: int | None = None,
    dis_fraction: float = DEFAULT_DIS_FRACTION,
) -> SpecialUniques:
    """Every MSU of at most ``max_size`` attributes, level by level, with SUDA/DIS scores per record.

    Args:
        lattice: the diagnosis's subset lattice (its candidates are the key variables).
        max_size: the size bound, integer ≥ 1 (larger MSUs are reported as cut off, not searched);
            ``None``: every size.
        max_subsets: the most attribute sets grouped (integer ≥ 1); the search stops there and says so.
        max_cost: the most units × sets grouped (each set is one pass over the lattice's units), as
            the diagnosis's ``max_cost`` bounds its walk (``None``: no limit); stops and says so too.
        dis_fraction: the sampling fraction f of the DIS score, in (0, 1].
    """
    d = lattice.d
    max_size = d if max_size is None else min(check_integer(max_size, name="msu_max_size"), d)
    max_subsets = check_integer(max_subsets, name="msu_max_subsets")
    dis_fraction = check_fraction(dis_fraction, name="dis_fraction", open_low=True)
    weights = lattice.unit_weights
    unique_units = np.flatnonzero(lattice.unique_units(lattice.full_mask)[0] & (weights == 1))
    n_unique = unique_units.shape[0]
    score = np.zeros(n_unique)
    share = np.zeros((n_unique, d))
    by_size: dict[int, int] = {}
    per_set: dict[int, int] = {}
    # non-unique masks (over the unique records) of the previous level; a set absent has none
    alive: dict[int, np.ndarray] = {0: np.full(n_unique, lattice.n_rows > 1)}
    grouped = 0
    bound_hit = None
    lattice.keep_partitions(())
    for size in range(1, min(max_size, d) + 1):
        level: dict[int, np.ndarray] = {}
        done: set[int] = set()
        weight = float(math.factorial(max(d, MIN_ATTRIBUTES) - size))
        for mask in candidates_above(alive, d):  # apriori-gen: every subset one smaller still has candidates
            bits = bits_of(mask)
            candidates = _candidates(mask, alive)
            if candidates is None:
                continue
            over = _over_budget(grouped, lattice.n_units, max_subsets, max_cost)
            if over is not None:
                bound_hit = _cut(over, alive, done, d, n_unique)
                break
            grouped += 1
            done.add(mask)
            unique_all, partition = lattice.unique_units(mask)
            unique = unique_all[unique_units]
            found = candidates & unique
            if found.any():
                score[found] += weight
                share[np.ix_(found, bits)] += weight
                count = int(found.sum())
                by_size[size] = by_size.get(size, 0) + count
                per_set[mask] = count
            still = candidates & ~unique
            if still.any():
                level[mask] = still
                if len(level) * lattice.n_units <= _KEPT_ENTRIES:  # a parent for the next level
                    lattice.keep_partition(mask, partition)
        lattice.keep_partitions(level)
        alive = level
        if bound_hit is not None or not alive:
            break
    if bound_hit is None and max_size < d and alive:
        bound_hit = _cut(f"max_size={max_size}", alive, set(), d, n_unique)
    lattice.keep_partitions(())
    return _report(lattice, unique_units, score, share, by_size, per_set, max_size, bound_hit, grouped, dis_fraction)


def _over_budget(grouped: int, units: int, max_subsets: int, max_cost: int | None) -> str | None:
    """The budget one more grouped set would exceed, named as its setting (``None``: within both)."""
    if grouped >= max_subsets:
        return f"max_subsets={max_subsets}"
    if max_cost is not None and (grouped + 1) * units > max_cost:
        return f"max_cost={max_cost:.3g} (units × attribute sets grouped)"
    return None


def _candidates(mask: int, alive: Mapping[int, np.ndarray]) -> np.ndarray | None:
    """The unique records non-unique on every subset of ``mask`` one smaller (``None``: none)."""
    out = None
    for b in bits_of(mask):
        below = alive.get(mask ^ (1 << b))
        if below is None:
            return None
        out = below.copy() if out is None else out & below
        if not out.any():
            return None
    return out


def _cut(bound: str, alive: Mapping[int, np.ndarray], done: set[int], d: int, n_unique: int) -> str | None:
    """Which records a bound left unsearched: candidates of the next level's sets not grouped (``None``: none)."""
    left = np.zeros(n_unique, dtype=bool)
    size = 0
    for mask in candidates_above(alive, d):
        size = mask.bit_count()
        candidates = None if mask in done else _candidates(mask, alive)
        if candidates is not None:
            left |= candidates
    if not left.any():
        return None
    return f"{bound}: {int(left.sum()):,} records may have MSUs of {size} or more attributes, not searched"


def _report(
    lattice: SubsetLattice,
    unique_units: np.ndarray,
    score: np.ndarray,
    share: np.ndarray,
    by_size: dict[int, int],
    per_set: dict[int, int],
    max_size: int,
    bound_hit: str | None,
    grouped: int,
    dis_fraction: float,
) -> SpecialUniques:
    d = lattice.d
    total = float(score.sum())
    sizes = lattice.class_sizes(lattice.full_mask)
    pairs = 2 * int((sizes == 2).sum())
    dis = _dis_scores(
        score, n_unique=unique_units.shape[0], pairs=pairs, fraction=dis_fraction, m=max(d, MIN_ATTRIBUTES)
    )
    unit_score = np.zeros(lattice.n_units)
    unit_score[unique_units] = score
    unit_dis = np.zeros(lattice.n_units)
    unit_dis[unique_units] = dis
    unit_share = np.zeros((lattice.n_units, d))
    with np.errstate(invalid="ignore", divide="ignore"):
        unit_share[unique_units] = np.where(score[:, None] > 0, share / score[:, None], 0.0)
    rows = lattice.unit_of_row
    top = sorted(per_set.items(), key=lambda item: (-item[1], item[0].bit_count(), item[0]))[:_MSU_SETS_SHOWN]
    return SpecialUniques(
        attributes=lattice.attributes,
        max_size=max_size,
        complete=bound_hit is None,
        bound_hit=bound_hit,
        records_unique=int(unique_units.shape[0]),
        special_uniques=int((score > 0).sum()),
        msus=sum(by_size.values()),
        msus_by_size=dict(sorted(by_size.items())),
        msu_sets=tuple((lattice.names(mask), count) for mask, count in top),
        attribute_contributions={
            name: (100.0 * float(share[:, i].sum()) / total if total else 0.0)
            for i, name in enumerate(lattice.attributes)
        },
        max_score=float(score.max()) if score.shape[0] else 0.0,
        mean_score=total / lattice.n_rows,
        dis_fraction=dis_fraction,
        dis_histogram=_dis_histogram(dis, lattice.n_rows),
        subsets_grouped=grouped,
        scores=unit_score[rows],
        dis_scores=unit_dis[rows],
        contributions=unit_share[rows],
    )


def _dis_scores(score: np.ndarray, *, n_unique: int, pairs: int, fraction: float, m: int) -> np.ndarray:
    """The DIS-SUDA score (as sdcMicro's) of each unique record (0 without a SUDA score)."""
    scored = score > 0
    if not scored.any():
        return np.zeros_like(score)
    dis = n_unique * fraction / (n_unique * fraction + pairs * (1.0 - fraction))
    q = 1.0 + (8.0 - m) / 20.0
    powered = np.where(scored, score, 1.0) ** q
    adjust = float((1.0 / powered[scored]).sum())
    out = 1.0 / (1.0 + (n_unique / dis - n_unique) / (powered * adjust))
    return np.where(scored, out, 0.0)


def _dis_histogram(dis: np.ndarray, n_rows: int) -> dict[str, int]:
    """Records per sdcMicro DIS interval (every record without a score counts as 0)."""
    edges = np.array([upper for _, upper in _DIS_BINS[:-1]])
    positive = dis[dis > 0]
    counts = np.bincount(np.searchsorted(edges, positive, side="left"), minlength=len(_DIS_BINS))
    counts[0] = n_rows - positive.shape[0]
    return {label: int(count) for (label, _), count in zip(_DIS_BINS, counts, strict=True)}
