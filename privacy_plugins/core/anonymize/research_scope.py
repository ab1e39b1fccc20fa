"""Partial scope for δ-presence: search the population, publish the research subset alone (issue 30).

A model that names a research subset (:attr:`PrivacyModel.research_subset_column`, δ-presence's
``subset_column``) is measured on the whole table — the population — while only the flagged
rows are published. An anonymizer that declares ``research_subset`` in its tags gets every other
model wrapped in :class:`~privacy_plugins.core.models.research_subset.InResearchSubset` (judged on
the subset's rows of each class), runs over the whole table, is re-checked on it (the core's
``verify``), and then the published table keeps the subset's rows only, without the flag
column. The accounting: input rows = published + suppressed (subset rows) + out of scope.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationRequest, AnonymizationResult
from privacy_plugins.core.models.base import PrivacyModel
from privacy_plugins.core.models.research_subset import InResearchSubset, subset_flags
from privacy_plugins.errors import ConfigurationError

__all__ = ["published_subset", "research_subset_request", "scoped_models"]


def research_subset_request(
    request: AnonymizationRequest, algorithm: str, supported: bool
) -> tuple[AnonymizationRequest, Hashable | None]:
    """The request with the other models judged on the subset, and the flag column (``None``: no subset).

    Raises:
        ConfigurationError: see :func:`scoped_models`.
    """
    models, column = scoped_models(request.models, algorithm, supported)
    return (request, None) if column is None else (replace(request, models=models), column)


def scoped_models(
    models: Sequence[PrivacyModel], algorithm: str, supported: bool
) -> tuple[tuple[PrivacyModel, ...], Hashable | None]:
    """The models with every other model judged on the research subset, and its flag column (``None``: none).

    Raises:
        ConfigurationError: the anonymizer does not declare ``research_subset``, or two models name
            different subset columns.
    """
    columns = list(dict.fromkeys(m.research_subset_column for m in models if m.research_subset_column is not None))
    if not columns:
        return tuple(models), None
    scoped = [str(m) for m in models if m.research_subset_column is not None]
    if not supported:
        raise ConfigurationError(
            f"algorithm {algorithm!r} cannot publish only a research subset ({', '.join(scoped)}): its tags do not "
            "declare research_subset; use a full-domain search (optimal, samarati or exhaustive)"
        )
    if len(columns) > 1:
        raise ConfigurationError(f"models name different research subsets {columns!r}; give one subset_column")
    column = columns[0]
    return tuple(m if m.research_subset_column is not None else InResearchSubset(m, column) for m in models), column


def published_subset(
    result: AnonymizationResult, released: np.ndarray, table: pd.DataFrame, column: Hashable
) -> AnonymizationResult:
    """``result`` cut to the research subset's rows, without the flag column, its accounting completed."""
    published = result.table
    if len(published) != len(released):
        raise ConfigurationError("the anonymized table does not line up with its released rows")  # (never: verify)
    flagged = subset_flags(published, column) == 1.0
    subset_rows = int((subset_flags(table, column) == 1.0).sum())
    rows_out = int((flagged & np.asarray(released, dtype=bool)).sum())
    kept = published.loc[flagged].drop(columns=[column]).reset_index(drop=True)
    sizes = (
        kept.loc[np.asarray(released, dtype=bool)[flagged]]
        .groupby(list(result.quasi_identifiers), dropna=False, sort=False)
        .size()
    )
    measures = {**result.measures, "k": float(sizes.min()) if len(sizes) else 0.0}
    return replace(
        result,
        table=kept,
        rows_out=rows_out,
        suppressed=subset_rows - rows_out,
        out_of_scope=len(table) - subset_rows,
        measures=measures,
    )
