"""Attribute roles: which columns identify, quasi-identify, are sensitive or neither.

The roles are declared once and checked against the table before any measure or
anonymizer touches the data, so a misspelled column fails loudly instead of being
silently ignored (the worst outcome for a privacy check).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from privacy_plugins.errors import RoleConflictError, UnknownColumnError

__all__ = ["AttributeRoles", "as_column_list"]


def as_column_list(value: Any, *, parameter: str) -> tuple[Hashable, ...]:
    """Normalise a column list parameter, rejecting a bare string.

    A bare string is almost always a mistake (``"age,zip"`` or ``"age"`` instead of
    ``["age"]``), so it raises ``TypeError`` rather than being guessed at.
    """
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"{parameter} must be a sequence of column names, got the string {value!r}; did you mean {[value]!r}?"
        )
    if not isinstance(value, Iterable):
        raise TypeError(f"{parameter} must be a sequence of column names, got {type(value).__name__}")
    columns = tuple(value)
    for column in columns:
        if not isinstance(column, Hashable):
            raise TypeError(f"{parameter} contains an unhashable column name: {column!r}")
    seen: set[Hashable] = set()
    for column in columns:
        if column in seen:
            raise RoleConflictError(f"{parameter} lists column {column!r} more than once")
        seen.add(column)
    return columns


@dataclass(frozen=True)
class AttributeRoles:
    """The role of every column that matters for privacy.

    Args:
        quasi_identifiers: columns that together can link a record to a person
            (at least one).
        sensitive_attributes: columns that must not be linkable to a person.
        identifiers: columns that name a person directly; never published.
        insensitive: columns declared harmless, published unchanged. A column named
            nowhere has no role: :meth:`unlisted` finds it, and ``anonymize()`` and a
            release refuse it (or drop it when asked), never publish it silently.

    Example:
        >>> roles = AttributeRoles(quasi_identifiers=["age", "zip"], sensitive_attributes=["disease"])
        >>> roles.quasi_identifiers
        ('age', 'zip')
    """

    quasi_identifiers: Sequence[Hashable]
    sensitive_attributes: Sequence[Hashable] = ()
    identifiers: Sequence[Hashable] = ()
    insensitive: Sequence[Hashable] = field(default=())

    def __post_init__(self) -> None:
        roles: dict[str, tuple[Hashable, ...]] = {}
        for name in ("quasi_identifiers", "sensitive_attributes", "identifiers", "insensitive"):
            columns = as_column_list(getattr(self, name), parameter=name)
            object.__setattr__(self, name, columns)
            roles[name] = columns
        if not roles["quasi_identifiers"]:
            raise RoleConflictError(
                "quasi_identifiers must name at least one column; without quasi-identifiers "
                "every record is indistinguishable and no privacy measure is meaningful"
            )
        owner: dict[Hashable, str] = {}
        for role, columns in roles.items():
            for column in columns:
                if column in owner:
                    raise RoleConflictError(f"column {column!r} is given two roles: {owner[column]} and {role}")
                owner[column] = role

    @property
    def named_columns(self) -> tuple[Hashable, ...]:
        """Every column named in any role, in role order."""
        return (
            tuple(self.quasi_identifiers)
            + tuple(self.sensitive_attributes)
            + tuple(self.identifiers)
            + tuple(self.insensitive)
        )

    def check_columns(self, available: Sequence[Hashable]) -> None:
        """Raise :class:`UnknownColumnError` naming every role column absent from ``available``."""
        present = set(available)
        for role in ("quasi_identifiers", "sensitive_attributes", "identifiers", "insensitive"):
            missing = [c for c in getattr(self, role) if c not in present]
            if missing:
                raise UnknownColumnError(
                    f"{role} not found in table: {missing!r}; available columns: {list(available)!r}"
                )

    def unlisted(self, available: Sequence[Hashable], *, also: Iterable[Hashable] = ()) -> list[Hashable]:
        """The columns of ``available`` named in no role (nor in ``also``, e.g. the columns a model reads)."""
        named = {*self.named_columns, *also}
        return [c for c in available if c not in named]

    def publishable_columns(self, available: Sequence[Hashable]) -> tuple[Hashable, ...]:
        """The columns that may appear in a release: everything except identifiers."""
        dropped = set(self.identifiers)
        return tuple(c for c in available if c not in dropped)
