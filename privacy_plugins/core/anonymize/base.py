"""What every anonymizer returns: the published table, the accounting, the utility and the re-check."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import ModelResult, PrivacyModel
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import VerificationError

__all__ = ["AnonymizationResult", "VerificationError", "summary_measures"]


def summary_measures(models: tuple[PrivacyModel, ...], results: tuple[ModelResult, ...]) -> dict[str, float]:
    """The re-measured k / l / c / t / leakage of the output, keyed as the CLI report names them."""
    return {model.report_key: result.observed for model, result in zip(models, results, strict=True)}


@dataclass(frozen=True)
class AnonymizationResult:
    """An anonymized table that has been re-checked by the core measures.

    Attributes:
        algorithm: the search or algorithm that produced it.
        table: the published table: identifiers dropped, QIs generalized, suppressed
            rows removed (or marked with ``*`` when asked).
        quasi_identifiers: the generalized columns.
        levels: for full-domain recoding, the hierarchy level of each QI.
        rows_in: records in the input.
        rows_out: records published (not suppressed).
        suppressed: records suppressed; ``rows_in == rows_out + suppressed``.
        dropped_identifiers: identifier columns removed from the output.
        utility: information-loss metrics of the output.
        models: every requested model re-measured on the published rows.
        nodes_checked: lattice nodes evaluated (lattice searches only).
        lattice_size: nodes in the lattice (lattice searches only).
        seconds: wall time of the anonymization.
        heights: the height of each QI's hierarchy (full-domain recoding).
    """

    algorithm: str
    table: pd.DataFrame
    quasi_identifiers: tuple[Hashable, ...]
    levels: Mapping[Hashable, int] | None
    rows_in: int
    rows_out: int
    suppressed: int
    dropped_identifiers: tuple[Hashable, ...]
    utility: UtilityMetrics
    models: tuple[ModelResult, ...]
    measures: Mapping[str, float]
    nodes_checked: int | None = None
    lattice_size: int | None = None
    seconds: float = 0.0
    heights: Mapping[Hashable, int] | None = None

    @property
    def passed(self) -> bool:
        """True when every requested model holds on the published rows."""
        return all(result.passed for result in self.models)

    def to_dict(self) -> dict[str, Any]:
        """The report (everything but the table itself) as plain JSON."""
        report: dict[str, Any] = {
            "algorithm": self.algorithm,
            "passed": self.passed,
            "quasi_identifiers": list(self.quasi_identifiers),
            "levels": dict(self.levels) if self.levels is not None else None,
            "heights": dict(self.heights) if self.heights is not None else None,
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "suppressed": self.suppressed,
            "dropped_identifiers": list(self.dropped_identifiers),
            **{name: getattr(self.utility, name) for name in ("ncp", "lm", "discernibility", "c_avg")},
            "height": self.utility.height,
            "precision": self.utility.precision,
            "ileft": self.utility.ileft,
            "nodes_checked": self.nodes_checked,
            "lattice_size": self.lattice_size,
            "seconds": self.seconds,
            **self.measures,
            "models": list(self.models),
        }
        return to_jsonable(report)
