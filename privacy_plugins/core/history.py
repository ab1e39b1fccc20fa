"""A release history: what every earlier release of the same data published, and nothing more.

The adversary of repeated releases (see ``docs/composition.md``) keeps every table the
destination has exposed. To check a new release against them the product keeps, per
release, only what that release published about its classes — the *class signature*:
one row per (class, combination of sensitive values) with the generalized
quasi-identifier labels, the published sensitive values and the number of rows
(:data:`COUNT`) — plus the transformation that produced it, so it can be re-applied to a
grown table. No raw value and no record-level link is kept: everything in a signature was
in the published table already.

The release layer stores a :class:`ReleaseHistory` beside the published table (a table in
DuckDB/SQL, a folder beside a Parquet release) and writes it in the same swap as the
release; the core reads it from here.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from privacy_plugins.core.hierarchies import as_labels
from privacy_plugins.errors import UnknownColumnError

__all__ = ["COUNT", "PublishedRelease", "ReleaseHistory", "class_signature", "linked_signature"]

#: The rows-per-signature-row column of a class signature.
COUNT = "__count"


@dataclass(frozen=True)
class PublishedRelease:
    """One release as the history keeps it.

    Attributes:
        run_id: the run that published it.
        published_at: ISO-8601 UTC time of the swap.
        spec_fingerprint: the fingerprint of the spec that produced it.
        transformation: JSON-ready facts that re-apply it (e.g. ``{"levels": {"age": 2, …}}``
            for a full-domain node); empty when the signature itself is the transformation
            (local recoding: new records are recoded to the labels of a covering class).
        classes: the class signature (:func:`class_signature`).
        sequence: its number in the history (1 for the first release ever kept; 0 until appended).
        published_rows: the rows it published, when its signature's counts do not add up to them.
        release_sha256: the published file's SHA-256 where the store needs it to tell a published
            release from one killed before its swap (a single Parquet file); empty otherwise.
    """

    run_id: str
    published_at: str
    spec_fingerprint: str
    transformation: Mapping[str, Any]
    classes: pd.DataFrame = field(repr=False)
    sequence: int = 0
    release_sha256: str = ""
    published_rows: int | None = None

    @property
    def rows(self) -> int:
        """Rows the release published (marked suppressed rows included).

        The signature's counts add up to them, except for a two-table release (:func:`linked_signature`
        counts a group once per QI tuple it holds), which states them (``published_rows``).
        """
        if self.published_rows is not None:
            return self.published_rows
        return int(self.classes[COUNT].sum()) if len(self.classes) else 0


@dataclass(frozen=True)
class ReleaseHistory:
    """The releases of one history name, oldest first.

    Attributes:
        name: the history's name (by default the spec's name).
        quasi_identifiers: the QI columns every signature has.
        sensitive_attributes: the sensitive columns every signature has.
        releases: the kept releases, oldest first.
    """

    name: str
    quasi_identifiers: tuple[Hashable, ...]
    sensitive_attributes: tuple[Hashable, ...]
    releases: tuple[PublishedRelease, ...] = ()

    def __len__(self) -> int:
        return len(self.releases)

    def signatures(self) -> list[pd.DataFrame]:
        """Every release's class signature, oldest first."""
        return [release.classes for release in self.releases]

    def appended(self, release: PublishedRelease, *, keep_releases: int | None = None) -> ReleaseHistory:
        """The history with ``release`` added (and only the newest ``keep_releases`` kept, when given)."""
        number = self.releases[-1].sequence + 1 if self.releases else 1
        kept = (*self.releases, replace(release, sequence=number))
        if keep_releases is not None:
            kept = kept[-keep_releases:]
        return ReleaseHistory(self.name, self.quasi_identifiers, self.sensitive_attributes, kept)


def class_signature(
    table: pd.DataFrame, quasi_identifiers: Sequence[Hashable], sensitive_attributes: Sequence[Hashable]
) -> pd.DataFrame:
    """The class signature of a published table: labels and sensitive values with their row counts.

    Every column is written as text the way :func:`~privacy_plugins.core.hierarchies.as_labels`
    writes labels (``39`` and ``39.0`` are both ``"39"``), so a signature computed in an engine
    with ``CAST(... AS VARCHAR)`` and one computed here agree after :func:`as_labels`.

    Example:
        >>> published = pd.DataFrame({"age": ["[20-29]", "[20-29]", "*"], "disease": ["flu", "hiv", "flu"]})
        >>> class_signature(published, ["age"], ["disease"]).values.tolist()
        [['*', 'flu', 1], ['[20-29]', 'flu', 1], ['[20-29]', 'hiv', 1]]
    """
    columns = [*quasi_identifiers, *sensitive_attributes]
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise UnknownColumnError(f"the published table lacks column(s) {missing!r} for its class signature")
    labels = pd.DataFrame({column: as_labels(table[column]) for column in columns})
    counted = labels.groupby(columns, dropna=False, sort=True).size().rename(COUNT).reset_index()
    counted[COUNT] = counted[COUNT].astype("int64")
    return counted


def linked_signature(
    qit: pd.DataFrame,
    st: pd.DataFrame,
    group_column: str,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable],
) -> pd.DataFrame:
    """The class signature of a two-table release (Anatomy's QIT + ST), in the layout of :func:`class_signature`.

    The QIT publishes exact QI values, so a group covers a target when it holds a row with
    exactly her QI tuple, and her candidate values are the union of the values of every group
    that holds it. One row per distinct (group, QI tuple) carrying the group's sensitive counts,
    summed per (QI tuple, value): a class of the signature is a QI tuple, its values the union over
    the groups holding it and its counts their sum — each group once, however many of its rows
    hold the tuple. Only published values (QIT labels, ST values and counts); no group id.

    Example:
        >>> qit = pd.DataFrame({"age": [30, 30, 41, 30], "group_id": [0, 0, 1, 1]})
        >>> st = pd.DataFrame({"group_id": [0, 0, 1, 1], "disease": ["flu", "hiv", "flu", "cold"], "count": 1})
        >>> linked_signature(qit, st, "group_id", ["age"], ["disease"]).values.tolist()
        [['30', 'cold', 1], ['30', 'flu', 2], ['30', 'hiv', 1], ['41', 'cold', 1], ['41', 'flu', 1]]
    """
    qis, sensitive = list(quasi_identifiers), list(sensitive_attributes)
    missing = [c for c in qis if c not in qit.columns] + [c for c in sensitive if c not in st.columns]
    if missing or group_column not in qit.columns or group_column not in st.columns or "count" not in st.columns:
        raise UnknownColumnError(f"the linked pair lacks column(s) {missing or [group_column, 'count']!r}")
    held = pd.DataFrame({q: as_labels(qit[q]) for q in qis})
    held[group_column] = qit[group_column].to_numpy()
    held = held.drop_duplicates(ignore_index=True)  # a group holding a tuple twice covers it once
    values = pd.DataFrame({c: as_labels(st[c]) for c in sensitive})
    values[group_column] = st[group_column].to_numpy()
    values[COUNT] = st["count"].to_numpy(dtype="int64")
    joined = held.merge(values, on=group_column, how="inner")
    signature = joined.groupby([*qis, *sensitive], dropna=False, sort=True)[COUNT].sum().reset_index()
    signature[COUNT] = signature[COUNT].astype("int64")
    return signature[[*qis, *sensitive, COUNT]]
