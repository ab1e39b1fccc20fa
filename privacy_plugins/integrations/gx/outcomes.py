"""Read GX results as privacy verdicts: passed, failed at a failure level, or errored.

A metric that raises does not raise out of GX's ``validate``, even with
``catch_exceptions=False``. Instead the result has ``success=False`` and the error
in ``exception_info``. That is a broken check, not a privacy failure, and callers
(Airflow operators, Dagster asset checks) must report it as an error.

The GX ``severity`` of a failed expectation maps to our failure level:
``critical`` → ``"error"`` (blocks the release), ``warning`` → ``"warn"``, and
``info`` → ``"info"``. Dagster's ``AssetCheckSeverity`` has ERROR and WARN;
``"info"`` is reported as WARN there and never blocks.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from privacy_plugins.core.results import to_jsonable

__all__ = ["CheckOutcome", "FailureLevel", "outcome", "outcomes"]

FailureLevel = Literal["error", "warn", "info"]
_LEVELS: dict[str, FailureLevel] = {"critical": "error", "warning": "warn", "info": "info"}
# GX's counts in a built-in expectation's result (its value lists are never read)
_COUNT_KEYS = ("element_count", "unexpected_count", "unexpected_percent", "missing_count", "missing_percent")


@dataclass(frozen=True)
class CheckOutcome:
    """One expectation's verdict.

    Attributes:
        expectation_type: e.g. ``"expect_table_to_be_k_anonymous"``.
        status: ``"passed"``, ``"failed"`` (a privacy failure) or ``"error"`` (the check broke).
        level: the failure level from the expectation's GX ``severity``.
        observed: the measured k / l / t / max leakage (``None`` when errored).
        details: counts and histograms from the result (no raw values unless opted in).
        message: one line for logs.
    """

    expectation_type: str
    status: Literal["passed", "failed", "error"]
    level: FailureLevel
    observed: Any
    details: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""

    @property
    def blocks_release(self) -> bool:
        """An error always blocks; a failure blocks at level ``"error"``."""
        return self.status == "error" or (self.status == "failed" and self.level == "error")

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {**to_jsonable(self), "blocks_release": self.blocks_release}


def _error_message(info: Mapping[str, Any] | None) -> str | None:
    """The exception message, from a flat ``exception_info`` or one keyed by metric."""
    if not info:
        return None
    if info.get("raised_exception"):
        return str(info.get("exception_message") or "the check raised an error")
    for value in info.values():
        if isinstance(value, Mapping) and value.get("raised_exception"):
            return str(value.get("exception_message") or "a metric raised an error")
    return None


def outcome(result: Any) -> CheckOutcome:
    """The verdict of one ``ExpectationValidationResult``."""
    config = result.expectation_config
    severity = getattr(getattr(config, "severity", None), "value", None) or str(getattr(config, "severity", "critical"))
    level = _LEVELS.get(severity.lower(), "error")
    kind = str(getattr(config, "type", "expectation"))
    error = _error_message(result.exception_info)
    if error is not None:
        return CheckOutcome(kind, "error", level, None, {}, f"{kind} could not be checked: {error}")
    measured = result.result or {}
    status: Literal["passed", "failed"] = "passed" if result.success else "failed"
    details = measured.get("details") or {}
    if "violations" in details:  # a privacy expectation: its result declares classes and records in violation
        observed, violations = measured.get("observed_value"), details["violations"] or {}
        message = (
            f"{details.get('model', kind)}: {status} (observed {observed}; "
            f"{violations.get('classes', 0)} classes / {violations.get('records', 0)} records in violation)"
        )
        return CheckOutcome(kind, status, level, observed, details, message)
    observed, counts, message = _gx_counts(kind, status, config, measured)
    return CheckOutcome(kind, status, level, observed, counts, message)


def _gx_counts(kind: str, status: str, config: Any, measured: Mapping[str, Any]) -> tuple[Any, dict[str, Any], str]:
    """GX's own numbers for any other expectation: its counts, never its lists of unexpected values.

    The observed value is kept only when it is a number measured on the whole table (a row
    count); a statistic of a column (its max, its most common value …) is a record's value, so
    it is withheld, as are ``partial_unexpected_list`` and friends.
    """
    counts = {key: to_jsonable(measured[key]) for key in _COUNT_KEYS if isinstance(measured.get(key), (int, float))}
    kwargs = getattr(config, "kwargs", None) or {}
    columns = [str(kwargs[key]) for key in sorted(kwargs) if key.startswith("column") and kwargs[key] is not None]
    value = measured.get("observed_value")
    observed: Any = None
    parts = []
    if "unexpected_count" in counts:
        of = f" of {counts['element_count']} rows" if "element_count" in counts else ""
        percent = counts.get("unexpected_percent")
        share = f", {percent:.1f}%" if isinstance(percent, float) else ""
        parts.append(f"{counts['unexpected_count']}{of} unexpected{share}")
    if counts.get("missing_count"):
        parts.append(f"{counts['missing_count']} missing")
    if not columns and isinstance(value, numbers.Real) and not isinstance(value, bool):
        observed = to_jsonable(value)
        parts.append(f"observed {observed}")
    elif value is not None:
        parts.append("observed value withheld (a statistic of the records' values)")
    where = f" on {', '.join(repr(c) for c in columns)}" if columns else ""
    return observed, counts, f"{kind}{where}: {status} ({'; '.join(parts) or 'no counts reported'})"


def outcomes(result: Any) -> tuple[CheckOutcome, ...]:
    """Verdicts of a suite result (``batch.validate(suite)``) or of every run in a ``CheckpointResult``."""
    if hasattr(result, "run_results"):
        return tuple(o for suite_result in result.run_results.values() for o in outcomes(suite_result))
    if hasattr(result, "results"):
        return tuple(outcome(r) for r in result.results)
    return (outcome(result),)
