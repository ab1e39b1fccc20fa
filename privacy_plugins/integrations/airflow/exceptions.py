"""Task failures with readable messages; the failed requirements travel with the exception."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.sdk.exceptions import AirflowException, AirflowFailException

__all__ = ["PrivacyCheckError", "PrivacyCheckFailed"]


class PrivacyCheckFailed(AirflowFailException):
    """A privacy requirement failed on the candidate, so nothing may be published.

    Subclasses ``AirflowFailException``: a retry would re-measure the same table,
    so the task fails at once. ``check`` holds the check result (no raw values).
    """

    def __init__(self, message: str, *, check: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.check = dict(check) if check is not None else None


class PrivacyCheckError(AirflowException):
    """A check could not be evaluated (e.g. a GX metric raised): a broken gate, not a privacy verdict."""
