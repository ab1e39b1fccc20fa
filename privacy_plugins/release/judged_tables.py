"""The original and the candidate as tables, for the models judged on tables (the attacks of ``AttackRisk``).

Most models are judged on the candidate's classes (one ``GROUP BY`` where it is staged).
A model that declares ``judged_on_tables`` attacks the candidate with the original's
records as targets, so the check hands it both tables: the run's raw quasi-identifier
and sensitive values (the load step's table or weighted snapshot, grouped where it lives)
and the staged candidate's measured classes — the same multiset of (QI labels, sensitive
values) the digest covers, so what publishing re-checks is what is swapped in.

Both come as *distinct rows with their counts* (what the engine's ``GROUP BY`` returned),
never rebuilt as one pandas row per record: the attacks read each distinct row once and
repeat its integer codes (``run_attacks(..., original_counts=, release_counts=)``), with the
report of the expanded records. A generalized candidate of a million rows is a few thousand
classes; the targets are sampled from the counts (the sample size is in the report).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privacy_plugins.core.history import COUNT

if TYPE_CHECKING:
    from privacy_plugins.release.spec import ReleaseSpec
    from privacy_plugins.release.staging import StagedMeasure

__all__ = ["JudgedTables", "judged_tables"]

JudgedTables = Callable[[], tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]]
"""Returns (original, its counts, candidate, its counts) when first called (then the same)."""


def judged_tables(spec: ReleaseSpec, folder: Path, measured: StagedMeasure) -> JudgedTables:
    """The run's original records and the measured candidate as distinct rows with counts, read when a model asks."""
    from privacy_plugins.release.composition_gate import run_targets

    @cache
    def build() -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
        targets = run_targets(spec, folder)
        counts = targets.pop(COUNT).to_numpy(dtype=np.int64)
        classes = measured.classes
        frame = classes.frame.reset_index(drop=True)
        weights = classes.weights if classes.weights is not None else np.ones(len(frame), dtype=np.int64)
        candidate, sizes = _canonical(frame, np.asarray(weights, dtype=np.int64))
        return targets.reset_index(drop=True), counts, candidate, sizes

    return build


def _canonical(frame: pd.DataFrame, counts: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The classes in the order of their text, as the digest reads them.

    A ``GROUP BY`` returns its groups in an order that can change from one query to the next
    (a parallel hash aggregate), while the digest that binds the check to the publish ignores
    it; the attacks draw release rows by position, so the check and the publish's re-check
    must see one order to reach one verdict.
    """
    text = frame.astype(str)
    order = text.sort_values(list(text.columns), kind="stable").index.to_numpy()
    return frame.iloc[order].reset_index(drop=True), counts[order]
