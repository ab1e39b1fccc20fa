"""Result records shared by every measure: frozen, typed and JSON-serializable.

Violations are reported as *shapes* (how many classes, how many records, which
class sizes) and never as raw quasi-identifier or sensitive values unless the
caller opts in, because reports travel into logs, XCom, Data Docs and Dagster
metadata where the very records at risk must not appear.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from privacy_plugins.core.partition import EquivalenceClasses

__all__ = ["ClassViolations", "size_histogram", "to_jsonable", "violations_from_mask"]

#: How many violating classes are shown when a caller opts in to raw values.
MAX_EXAMPLES = 10


def to_jsonable(value: Any) -> Any:
    """Convert dataclasses, numpy scalars and non-finite floats into plain JSON values.

    ``inf``/``nan`` become ``None``: strict JSON has no infinity, and every place
    where a measure can be infinite documents what ``None`` means there.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {(k if isinstance(k, str) else str(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if value is None or isinstance(value, str):
        return value
    return str(value)


@dataclass(frozen=True)
class ClassViolations:
    """Which equivalence classes miss a target, described without their values.

    Attributes:
        target: the requirement checked, e.g. ``"k>=5"`` or ``"distinct_l>=3"``.
        classes: number of classes that miss it.
        records: number of records in those classes.
        size_histogram: class size → number of violating classes of that size.
        examples: QI values of up to ``MAX_EXAMPLES`` violating classes, only when
            the caller passed ``include_values=True``; otherwise ``None``.
    """

    target: str
    classes: int
    records: int
    size_histogram: Mapping[int, int]
    examples: tuple[Mapping[Hashable, Any], ...] | None = None

    @property
    def passed(self) -> bool:
        """True when no class misses the target."""
        return self.classes == 0

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return to_jsonable(self)


def size_histogram(sizes: np.ndarray) -> dict[int, int]:
    """Class size → number of classes of that size, for the given class sizes."""
    values, counts = np.unique(sizes, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def violations_from_mask(
    classes: EquivalenceClasses,
    violating: np.ndarray,
    *,
    target: str,
    include_values: bool = False,
) -> ClassViolations:
    """Summarise the classes flagged in the boolean per-class mask ``violating``."""
    sizes = classes.sizes[violating]
    examples = None
    if include_values:
        ids = np.flatnonzero(violating)[:MAX_EXAMPLES]
        examples = tuple(classes.class_values(ids))
    return ClassViolations(
        target=target,
        classes=int(sizes.shape[0]),
        records=int(sizes.sum()),
        size_histogram=size_histogram(sizes),
        examples=examples,
    )
