"""The Adult data set as the Adult benchmarks use it: the table, the seven QIs and their hierarchies.

Imported by the benchmarks run from this folder (``python benchmarks/bench_x.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

import privacy_plugins as pp
from privacy_plugins.core.hierarchies import load_hierarchies

SHARED = Path(__file__).resolve().parents[2] / "shared"
ADULT = SHARED / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]


def load_adult(rows: int = 0) -> tuple[pd.DataFrame, Any] | None:
    """Adult (its first ``rows`` rows; 0: all) and the QIs' hierarchies; ``None``, said why, when it is missing."""
    if not (ADULT / "adult.csv").exists():
        print(f"skipped: Adult data not found at {ADULT} (see ../shared/data/README.md)")
        return None
    adult = pp.read_table(ADULT / "adult.csv")
    if rows:
        adult = adult.iloc[:rows].reset_index(drop=True)
    return adult, load_hierarchies(ADULT, columns=QIS)
