"""The columns a test table names in no role: tests that publish them unchanged declare them insensitive (issue 27)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import pandas as pd

from privacy_plugins.core.models import PrivacyModel


def other_columns(frame: pd.DataFrame, models: Iterable[PrivacyModel] = (), *named: Iterable[Hashable]) -> list:
    """``frame``'s columns not in any of ``named`` and read by none of ``models``."""
    taken = {c for columns in named for c in columns} | {c for model in models for c in model.columns}
    return [c for c in frame.columns if c not in taken]
