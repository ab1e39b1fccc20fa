"""The progress-callback protocol of long-running core functions (no display code here).

A core function that can run for more than a few seconds takes an optional
``progress`` callable and calls it as ``progress(done, total)`` after each unit
of work: ``done`` units so far, and ``total`` when it is known in advance
(``None`` when it is not, e.g. a level-wise search that stops at the borders).
Adapters turn the calls into a progress bar (the CLI, with rich) or into log
lines (the release steps, for Airflow and Dagster); the core never imports either.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["ProgressCallback"]


class ProgressCallback(Protocol):
    """``progress(done, total)``: ``done`` units of work finished, of ``total`` (``None``: unknown)."""

    def __call__(self, done: int, total: int | None, /) -> None:
        """Report progress; must be cheap (called once per unit of work)."""
