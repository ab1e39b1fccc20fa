"""The progress-callback protocol of long-running core functions (no display code here).

A core function that can run for more than a few seconds takes an optional
``progress`` callable and calls it as ``progress(done, total)`` after each unit
of work: ``done`` units so far, and ``total`` when it is known in advance
(``None`` when it is not, e.g. a level-wise search that stops at the borders).
Adapters turn the calls into a progress bar (the CLI, with rich) or into log
lines (the release steps, for Airflow and Dagster); the core never imports either.

A function that goes through named phases (two-phase clustering: merging, splitting,
refining) calls :func:`announce_phase` as each one starts, so that a display can say
what is running instead of a generic "checking nodes". A callback that wants the names
has a ``phase(name)`` method (:class:`PhaseListener`); a plain function has none and is
simply not told.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["PhaseListener", "ProgressCallback", "announce_phase"]


class ProgressCallback(Protocol):
    """``progress(done, total)``: ``done`` units of work finished, of ``total`` (``None``: unknown)."""

    def __call__(self, done: int, total: int | None, /) -> None:
        """Report progress; must be cheap (called once per unit of work)."""


@runtime_checkable
class PhaseListener(Protocol):
    """A progress callback that also wants to know which phase is running."""

    def phase(self, name: str, /) -> None:
        """A phase starts: ``name`` says what runs, in the algorithm's words (``"two-phase: refining"``)."""


def announce_phase(progress: object, name: str) -> None:
    """Tell ``progress`` that the phase ``name`` starts, when it listens (has a ``phase`` method).

    Example:
        >>> class Bar:
        ...     def __call__(self, done, total): ...
        ...     def phase(self, name): print("now:", name)
        >>> announce_phase(Bar(), "k-member: building clusters")
        now: k-member: building clusters
        >>> announce_phase(lambda done, total: None, "ignored")  # a plain function is not told
    """
    if isinstance(progress, PhaseListener):
        progress.phase(name)
