"""The release history as a model: every record keeps l sensitive values over all releases together.

For a record t with raw quasi-identifiers q, the history leaves the adversary
H(t) = ∩_r C_r(t): the sensitive values of the classes covering q in every kept release r
(``docs/composition.md``; a release covering nobody with q tells nothing). A class E of the
new release is acceptable when |H(t) ∩ S(E)| ≥ l for every record t of E, S(E) being E's
sensitive values — or, for a record the history alone already leaves fewer than l values (a
newcomer covered by earlier classes she was never in: no release can repair that),
H(t) ⊆ S(E), so the release narrows nothing further. The candidate's own covering classes can
only add values to what it tells about t (S(E) is a subset of them), so a table that meets this model passes the gate's
:func:`~privacy_plugins.core.history_check.composition_check` for distinct l-diversity on
every record it publishes.

H(t) depends only on t's raw QIs and the history, never on the generalization: the model
computes it once per table (:meth:`HistoryDiversity.derived_columns`, added by
:func:`~privacy_plugins.core.anonymize.anonymize` before any work and dropped from the
published table after the re-check), encoded per record as a bit string over the history's
values (``"*"``: no kept release covers the record). The class check is then a vectorized
lookup over the distinct (class, H) pairs.

**Monotone under generalization** (without suppression): merging classes only grows S(E), so
|H(t) ∩ S(E)| never shrinks; the lattice prunes with it. **Not monotone with suppression**: a
parent class can fail through one record whose child failed (and was suppressed) while its
other records came from passing children; with suppression the lattice prunes with distinct
l-diversity instead (which this model implies).

**Deletions** (m-invariance, Xiao & Tao 2007): H(t) is computed for the records of the
current table only. A record deleted since an earlier release is not a target of the new
release; if the adversary wrongly assumes her in it, her intersection may shrink (and then
exclude her value, or not). This model guarantees nothing for deleted records; m-invariance's
signature rule does (:mod:`privacy_plugins.core.history_signatures`, applied by (c) when asked;
its counterfeit tuples are not implemented). See ``docs/composition.md``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from privacy_plugins.core.composition import covering_sets
from privacy_plugins.core.coverage import marked_suppressed
from privacy_plugins.core.frame import encode_column
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.core.history import COUNT, ReleaseHistory
from privacy_plugins.core.history_boxes import BoxRule
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.l_diversity import DistinctLDiversity
from privacy_plugins.core.parameters import TOLERANCE, check_fraction, check_positive
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["UNIVERSAL", "HistoryDiversity"]

#: The encoded history set of a record no kept release covers (any value is possible).
UNIVERSAL = "*"


class _Shares(NamedTuple):
    """:meth:`HistoryDiversity._shares`: per distinct (class, H(t)) pair of a partition."""

    cls: np.ndarray  # the pair's class
    pair_of_unit: np.ndarray  # each unit's pair
    total: np.ndarray  # ΣN over H(t)
    top: np.ndarray  # the most frequent value's N …
    top_value: np.ndarray  # … and that value (position among ``values``)
    over: np.ndarray  # top > bound · total (judged pairs only)
    class_count: np.ndarray  # classes × values: records of each value
    unit_value: np.ndarray  # each unit's value (position among ``values``, -1: not published before)


@dataclass(frozen=True)
class HistoryDiversity(PrivacyModel):
    """|H(t) ∩ S(E)| ≥ l for every record t of every class E, H(t) being what ``history`` leaves of t.

    ``l`` ≥ 1; ``history`` the kept earlier releases (their QIs are read from the raw table);
    ``hierarchies`` the QI hierarchies the releases generalize along (bound from the request's
    when not given).
    """

    sensitive_attribute: Hashable
    l: float
    history: ReleaseHistory = field(compare=False, repr=False)
    hierarchies: Mapping[Hashable, Hierarchy] | None = field(default=None, compare=False, repr=False)
    bound: float | None = None
    domain: bool = False

    requires_sensitive: ClassVar[bool] = True
    monotonic_with_suppression: ClassVar[bool] = False
    config_name: ClassVar[str] = "history_l_diversity"
    stated_in_specs: ClassVar[bool] = False  # the release layer binds it from the stored history
    family: ClassVar[str] = "history l-diversity"
    report_key: ClassVar[str] = "history_l"

    def __post_init__(self) -> None:
        check_positive(self.l, name="l", minimum=1.0, inclusive=True)
        if self.bound is not None:
            check_fraction(self.bound, name="bound", open_low=True)
        if not isinstance(self.history, ReleaseHistory):
            raise TypeError(f"history must be a ReleaseHistory, got {type(self.history).__name__}")
        if len(self.history) and self.sensitive_attribute not in self.history.sensitive_attributes:
            raise ConfigurationError(
                f"the release history {self.history.name!r} does not keep {self.sensitive_attribute!r}"
            )

    def __str__(self) -> str:
        share = "" if self.bound is None else f", no value over {self.bound:g} of what is left"
        points = ", every point of each class's box" if self.domain else ""
        return (
            f"distinct-{self.l:g}-diversity{share}{points} for {self.sensitive_attribute!r} "
            f"over the {len(self.history)} releases of history {self.history.name!r}"
        )

    @property
    def set_column(self) -> str:
        """The derived column holding each record's encoded history set."""
        return f"__history_set__{self.sensitive_attribute}"

    @property
    def columns(self) -> tuple[Hashable, ...]:
        """The sensitive attribute and the derived history-set column."""
        return (self.sensitive_attribute, self.set_column)

    @property
    def minimum_class_size(self) -> int:
        """⌈l⌉."""
        return max(1, math.ceil(self.l - TOLERANCE))

    @property
    def threshold(self) -> float:
        """L."""
        return float(self.l)

    def with_hierarchies(self, hierarchies: Mapping[Hashable, Hierarchy]) -> HistoryDiversity:
        """This model reading coverage along ``hierarchies`` when it has none yet."""
        return self if self.hierarchies is not None else replace(self, hierarchies=dict(hierarchies))

    def box_rule(self) -> BoxRule | None:
        """With ``domain`` (``history: {protect: domain}``): the domain rule on each class's box over the history.

        Every cell of a class's box that a kept release covers must keep min(l, |H(c)|) of the
        class's values (:mod:`~privacy_plugins.core.history_domain`); one rule per model, so its
        memo of what each box asks serves the whole search.
        """
        return self._box_rule if self.domain and len(self.history) else None

    @cached_property
    def _box_rule(self) -> BoxRule:
        return BoxRule(
            self.history.signatures(),
            self.history.quasi_identifiers,
            self.sensitive_attribute,
            self.minimum_class_size,
            self.hierarchies,
        )

    @property
    def repaired_by_merging(self) -> bool:
        """Not with a share bound: merging can push a value over its share of someone's history set."""
        return self.bound is None

    def is_monotonic(self, *, with_suppression: bool) -> bool:
        """Monotone without suppression, without a share ``bound`` and without ``domain``.

        Shares can grow when classes merge; a coarser box also covers points no finer class did
        (:mod:`~privacy_plugins.core.anonymize.lattice_boxes`).
        """
        return self.bound is None and not self.domain and not with_suppression

    def monotone_relaxation(self, *, with_suppression: bool) -> PrivacyModel | None:
        """Without suppression, the distinct record part; with it, distinct l-diversity (|H ∩ S| ≥ l ⇒ |S| ≥ l)."""
        if with_suppression:
            return DistinctLDiversity(self.sensitive_attribute, self.l)
        return self if self.is_monotonic(with_suppression=False) else replace(self, bound=None, domain=False)

    @cached_property
    def values(self) -> pd.Index:
        """The sensitive labels the history published (the bits of an encoded set), sorted."""
        qis, attribute = list(self.history.quasi_identifiers), self.sensitive_attribute
        published = [  # marked suppressed rows publish no value (core/coverage.py)
            as_labels(signature.loc[~marked_suppressed(signature, qis, attribute), attribute])
            for signature in self.history.signatures()
        ]
        if not published:
            return pd.Index([], dtype=object)
        return pd.Index(sorted(pd.unique(pd.concat(published, ignore_index=True).to_numpy(dtype=object))))

    def derived_columns(self, table: pd.DataFrame) -> dict[Hashable, np.ndarray]:
        """Each record's history set H(t), encoded (hex bit string over :attr:`values`, or ``"*"``)."""
        qis = list(self.history.quasi_identifiers)
        missing = [qi for qi in qis if qi not in table.columns]
        if missing:
            raise UnknownColumnError(f"{self} reads the history's quasi-identifier(s) {missing!r}, not in the table")
        if not len(self.history) or not len(table):
            return {self.set_column: np.full(len(table), UNIVERSAL, dtype=object)}
        combo_of_row = table.groupby(qis, dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
        first = np.unique(combo_of_row, return_index=True)[1]
        combos = table.iloc[first][qis].reset_index(drop=True)
        releases = [
            signature[[*qis, self.sensitive_attribute, COUNT]] if COUNT in signature else signature
            for signature in self.history.signatures()
        ]
        sets = covering_sets(combos, releases, qis, self.sensitive_attribute, self.hierarchies)
        order = self.values.get_indexer(sets.labels)
        left = np.ones((len(combos), len(self.values)), dtype=bool)
        for held in sets.held:
            left &= held[:, np.argsort(order)] if len(order) else held
        universal = ~np.logical_or.reduce(sets.covered)
        codes = _encode(left, universal)
        return {self.set_column: codes[combo_of_row]}

    def left_per_unit(self, classes: EquivalenceClasses) -> tuple[np.ndarray, np.ndarray]:
        """|H(t) ∩ S(E)| and what it must reach, min(l, |H(t)|), for every unit (row of ``classes.frame``).

        A record the history alone already leaves fewer than l values (a newcomer covered by
        earlier classes she was never in) cannot be repaired; it must keep every value it has.
        """
        counts = classes.sensitive(self.sensitive_attribute)
        in_history = self._history_positions(counts.column.values)
        known = in_history[counts.pair_value] >= 0
        class_has = np.zeros((classes.n_classes, len(self.values)), dtype=bool)
        class_has[counts.pair_class[known], in_history[counts.pair_value[known]]] = True
        distinct = counts.distinct_per_class
        # The set column is encoded once per frame (partitions of one frame share their encodings).
        column = classes.encodings.get((self.set_column, False))
        if column is None:
            column = encode_column(classes.frame, self.set_column)
            classes.encodings[(self.set_column, False)] = column
        set_codes, encoded = column.codes, column.values  # noqa: PD011 (an EncodedColumn)
        sets, universal = self._decoded(encoded)
        key = classes.class_of_row.astype(np.int64) * max(len(encoded), 1) + set_codes
        pairs, pair_of_unit = np.unique(key, return_inverse=True)
        cls, held = pairs // max(len(encoded), 1), pairs % max(len(encoded), 1)
        left = np.where(universal[held], distinct[cls], (sets[held] & class_has[cls]).sum(axis=1))
        need = np.where(universal, self.l, np.minimum(sets.sum(axis=1), self.l))
        return np.asarray(left[pair_of_unit.reshape(-1)], dtype=float), need[set_codes]

    def history_sets(self, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``table`` (with :attr:`set_column`): H(t) as booleans over :attr:`values`, and "universal"."""
        codes, inverse = np.unique(table[self.set_column].to_numpy(dtype=object).astype(str), return_inverse=True)
        sets, universal = _decode(codes.astype(object), len(self.values))
        return sets[inverse.reshape(-1)], universal[inverse.reshape(-1)]

    def intersection_history(self, table: pd.DataFrame) -> tuple[pd.Index, np.ndarray, np.ndarray]:
        """The history's values and, per row of ``table`` (with :attr:`set_column`), H(t) and "universal"."""
        return (self.values, *self.history_sets(table))

    def over_share_per_unit(self, classes: EquivalenceClasses) -> np.ndarray:
        """Units whose class, restricted to their history set H(t), gives one value more than ``bound`` of its rows.

        What the gate's leakage rule asks of t's own class (``docs/composition.md``: max N / ΣN over
        the values left). Not judged for records no kept release covers (the release's own model
        judges the whole class) nor for records the history alone leaves fewer than l values (they
        are only kept from narrowing further, as the gate does).
        """
        shares = self._shares(classes)
        return np.asarray(shares.over[shares.pair_of_unit], dtype=bool)

    @property
    def repaired_by_removal(self) -> bool:
        """With a share bound: a value over its share of someone's H(t) is brought within it by fewer of its records."""
        return self.bound is not None

    def removals(self, classes: EquivalenceClasses, failing: np.ndarray) -> np.ndarray:
        """Per ``failing`` class and value over a share: the fewest of its units to leave out.

        For a (class, H(t)) whose top value v holds N_v > b·ΣN, ⌈(N_v − b·ΣN)/(1 − b)⌉ records of v
        bring it within b (what (c) leaves out, :mod:`~privacy_plugins.core.history_share`); per
        class and value the largest such need is taken, from the value's units in order. A class
        and value whose need would take every record of the value is left alone (the caller then
        suppresses the class whole), so no class loses a value.
        """
        out = np.zeros(classes.n_units, dtype=bool)
        if self.bound is None or not failing.any():
            return out
        shares = self._shares(classes)
        chosen = shares.over & failing[shares.cls]
        if not chosen.any():
            return out
        width = max(len(self.values), 1)
        need = np.ceil((shares.top - self.bound * shares.total) / (1.0 - self.bound) - TOLERANCE).astype(np.int64)
        per = np.zeros(classes.n_classes * width, dtype=np.int64)  # per (class, value): records to leave out
        np.maximum.at(per, shares.cls[chosen] * width + shares.top_value[chosen], need[chosen])
        value = shares.unit_value
        known = value >= 0
        group = np.where(known, classes.class_of_row.astype(np.int64) * width + np.maximum(value, 0), -1)
        units = np.flatnonzero(known & (per[np.maximum(group, 0)] > 0))
        if not units.shape[0]:
            return out
        units = units[np.argsort(group[units], kind="stable")]  # by (class, value), then unit order
        weight = classes.unit_weights[units].astype(np.int64)
        key = group[units]
        first = np.r_[True, key[1:] != key[:-1]]
        before = np.cumsum(weight) - weight
        before -= np.maximum.accumulate(np.where(first, before, 0))  # records of the group before this unit
        take = before < per[key]
        taken = np.bincount(key, weights=weight * take, minlength=classes.n_classes * width)
        held = shares.class_count.reshape(-1)
        whole = taken[key] >= held[key]  # it would take every record of the value: left to whole suppression
        out[units[take & ~whole]] = True
        return out

    def _shares(self, classes: EquivalenceClasses) -> _Shares:
        """Per distinct (class, H(t)) pair: the class counted over H(t), its top value, and whether over ``bound``."""
        assert self.bound is not None
        found = self._memo.get("shares")  # the last partition's only (a search asks removals right after)
        if found is not None and found[0] is classes:
            return found[1]
        counts = classes.sensitive(self.sensitive_attribute)
        in_history = self._history_positions(counts.column.values)
        known = in_history[counts.pair_value] >= 0
        class_count = np.zeros((classes.n_classes, len(self.values)), dtype=np.int64)
        where = (counts.pair_class[known], in_history[counts.pair_value[known]])
        np.add.at(class_count, where, counts.pair_count[known])
        column = classes.encodings.get((self.set_column, False))
        if column is None:
            column = encode_column(classes.frame, self.set_column)
            classes.encodings[(self.set_column, False)] = column
        set_codes, encoded = column.codes, column.values  # noqa: PD011 (an EncodedColumn)
        sets, universal = self._decoded(encoded)
        width = max(len(encoded), 1)
        key_of_unit = classes.class_of_row.astype(np.int64) * width + set_codes
        pairs, pair_of_unit = np.unique(key_of_unit, return_inverse=True)
        cls, held = pairs // width, pairs % width
        restricted = class_count[cls] * sets[held]
        total = restricted.sum(axis=1)
        top = restricted.max(axis=1, initial=0)
        judged = ~universal[held] & (sets[held].sum(axis=1) >= self.l - TOLERANCE)
        over = judged & (total > 0) & (top > (self.bound + TOLERANCE) * total)
        unit_value = in_history[counts.column.codes]
        shares = _Shares(
            cls, pair_of_unit.reshape(-1), total, top,
            restricted.argmax(axis=1) if len(self.values) else np.zeros(len(cls), dtype=np.int64),
            over, class_count, unit_value,
        )  # fmt: skip
        self._memo["shares"] = (classes, shares)
        return shares

    def _history_positions(self, labels: pd.Index) -> np.ndarray:
        """Each sensitive value's bit among :attr:`values` (-1: not published before), memoized per encoding."""
        key = id(labels)
        found = self._memo.get(key)
        if found is None or found[0] is not labels:
            found = (labels, self.values.get_indexer(as_labels(pd.Series(labels, dtype=object))))
            self._memo[key] = found
        return np.asarray(found[1])

    def _decoded(self, encoded: pd.Index) -> tuple[np.ndarray, np.ndarray]:
        """The sets of a set column's distinct codes, memoized per encoding."""
        key = ("sets", id(encoded))
        found = self._memo.get(key)
        if found is None or found[0] is not encoded:
            found = (encoded, _decode(np.asarray(encoded, dtype=object), len(self.values)))
            self._memo[key] = found
        return found[1]

    @cached_property
    def _memo(self) -> dict[Any, Any]:
        """Per-instance memo of decodings (keyed by the encodings' identity, which it keeps alive)."""
        return {}

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Classes holding a record left with fewer values than it needs over the history and the class."""
        left, need = self.left_per_unit(classes)
        short = left < need - TOLERANCE
        if self.bound is not None:
            short |= self.over_share_per_unit(classes)
        mask = np.zeros(classes.n_classes, dtype=bool)
        mask[classes.class_of_row[short]] = True
        return mask

    def observed(self, classes: EquivalenceClasses) -> float:
        """The fewest values any record keeps."""
        left, _ = self.left_per_unit(classes)
        return float(left.min()) if len(left) else float("inf")

    def intersection_at_risk(self, counts: np.ndarray, bounds: np.ndarray | None) -> np.ndarray | None:
        """Fewer than l distinct values left.

        The gate judges it as distinct l-diversity, with the same allowance for records the history
        alone already leaves fewer.
        """
        return np.asarray((counts > 0).sum(axis=1) < self.l - TOLERANCE)


def _encode(left: np.ndarray, universal: np.ndarray) -> np.ndarray:
    """Rows of a boolean matrix as hex bit strings (``"*"`` where ``universal``); one string per distinct row."""
    packed = np.packbits(left, axis=1) if left.shape[1] else np.zeros((len(left), 1), dtype=np.uint8)
    rows, inverse = np.unique(packed, axis=0, return_inverse=True)
    text = np.array([row.tobytes().hex() for row in rows], dtype=object)  # distinct sets only
    codes = text[inverse.reshape(-1)]
    codes[universal] = UNIVERSAL
    return codes


def _decode(encoded: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """The boolean sets and universal flags of distinct encoded strings (few: one per distinct set)."""
    universal = np.array([code == UNIVERSAL for code in encoded], dtype=bool)
    width = max(1, (n_values + 7) // 8)
    raw = np.zeros((len(encoded), width), dtype=np.uint8)
    for row, code in enumerate(encoded):
        if code != UNIVERSAL:
            data = np.frombuffer(bytes.fromhex(str(code)), dtype=np.uint8)
            if data.shape[0] != width:
                raise ConfigurationError("a history-set column does not match the release history it was made for")
            raw[row] = data
    sets = np.unpackbits(raw, axis=1)[:, :n_values].astype(bool)
    return sets, universal
