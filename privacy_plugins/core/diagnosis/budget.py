"""How much of the subset lattice the diagnosis measures: every subset, or only up to the borders.

Measuring a subset costs one pass over the rows, so measuring all 2^d subsets
costs about rows × 2^d (≈ 200 ns per row and subset on a laptop core): 4096
subsets of a million rows is more than ten minutes. The diagnosis therefore
measures every subset only when

* d ≤ ``max_exhaustive`` (2^d subsets at most; 12 → 4096 by default),
* rows × 2^d ≤ ``max_cost`` (default :data:`DEFAULT_MAX_COST`, ≈ 20 s), and
* the walk finishes within ``time_budget`` seconds (default :data:`DEFAULT_TIME_BUDGET`);

otherwise it switches to the level-wise border search, which measures only
the subsets up to the borders, and says why (``PrivacyDiagnosis.mode_reason``).
The borders are the same in both modes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from privacy_plugins.core.parameters import check_integer, check_real
from privacy_plugins.errors import ConfigurationError

__all__ = ["DEFAULT_MAX_COST", "DEFAULT_TIME_BUDGET", "DiagnosisBudget"]

#: Measure every subset only while rows × 2^d stays below this (≈ 20 s of work).
DEFAULT_MAX_COST = 100_000_000
#: Stop measuring every subset after this many seconds and go level-wise.
DEFAULT_TIME_BUDGET = 30.0


@dataclass
class DiagnosisBudget:
    """The limits of the exhaustive walk, and the clock that enforces the time budget.

    Example:
        >>> DiagnosisBudget(max_exhaustive=12).exhaustive_refusal(rows=1_000_000, d=12)
        'measuring all 4,096 subsets of 1,000,000 rows (4.1e+09 row-subsets) exceeds max_cost=1e+08'
        >>> DiagnosisBudget(max_exhaustive=12).exhaustive_refusal(rows=1_000, d=12) is None
        True
    """

    max_exhaustive: int
    max_cost: int | None = DEFAULT_MAX_COST
    time_budget: float | None = DEFAULT_TIME_BUDGET
    _deadline: float | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_cost is not None:
            self.max_cost = check_integer(self.max_cost, name="max_cost")
        if self.time_budget is not None:
            budget = check_real(self.time_budget, name="time_budget")
            if budget < 0:
                raise ConfigurationError(f"time_budget must be ≥ 0 seconds (or None), got {self.time_budget!r}")
            self.time_budget = budget

    def exhaustive_refusal(self, *, rows: int, d: int) -> str | None:
        """Why every subset must not be measured, or ``None`` when it may."""
        if d > self.max_exhaustive:
            return f"{d} candidate quasi-identifiers exceed max_exhaustive={self.max_exhaustive} (2^{d} subsets)"
        cost = rows * 2**d
        if self.max_cost is not None and cost > self.max_cost:
            return (
                f"measuring all {2**d:,} subsets of {rows:,} rows ({cost:.2g} row-subsets) "
                f"exceeds max_cost={self.max_cost:.2g}"
            )
        return None

    def start(self) -> None:
        """Start the clock of the time budget."""
        self._deadline = None if self.time_budget is None else time.perf_counter() + self.time_budget

    def expired(self) -> bool:
        """True once the time budget (from :meth:`start`) is spent."""
        return self._deadline is not None and time.perf_counter() > self._deadline

    def timeout_reason(self, measured: int, total: int) -> str:
        """The mode reason when the exhaustive walk ran out of time."""
        return (
            f"the time_budget of {self.time_budget:g} s ran out after {measured:,} of {total:,} subsets; "
            "the rest was searched level-wise"
        )
