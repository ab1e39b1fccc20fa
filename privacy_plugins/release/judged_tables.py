"""The original and the candidate as tables, for the models judged on tables (the attacks of ``AttackRisk``).

Most models are judged on the candidate's classes (one ``GROUP BY`` where it is staged).
A model that declares ``judged_on_tables`` attacks the candidate with the original's
records as targets, so the check hands it both as rows: the run's raw quasi-identifier
and sensitive values (the load step's table or weighted snapshot) and the staged
candidate rebuilt from its measured classes — the same multiset of (QI labels, sensitive
values) the digest covers, so what publishing re-checks is what is swapped in.
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

JudgedTables = Callable[[], tuple[pd.DataFrame, pd.DataFrame]]
"""Returns (original, candidate) rows when first called (then the same pair)."""


def judged_tables(spec: ReleaseSpec, folder: Path, measured: StagedMeasure) -> JudgedTables:
    """The run's original records and the measured candidate as rows, built only when a model asks."""
    from privacy_plugins.release.composition_gate import run_targets

    @cache
    def build() -> tuple[pd.DataFrame, pd.DataFrame]:
        targets = run_targets(spec, folder)
        original = targets.loc[targets.index.repeat(targets.pop(COUNT).to_numpy())].reset_index(drop=True)
        classes = measured.classes
        frame = classes.frame.reset_index(drop=True)
        weights = classes.weights if classes.weights is not None else np.ones(len(frame), dtype=np.int64)
        candidate = frame.loc[frame.index.repeat(np.asarray(weights, dtype=np.int64))].reset_index(drop=True)
        return original, candidate

    return build
