"""Progress of the long steps as lines: log lines for Airflow and Dagster, stderr lines for redirected CLI runs.

The core reports ``progress(done, total)`` (:class:`privacy_plugins.core.progress.ProgressCallback`)
and announces named phases (:func:`~privacy_plugins.core.progress.announce_phase`).
:class:`StepProgress` forwards each call to the caller's ``on_progress(step, done, total)``
(the CLI draws it with rich on a terminal) and writes an INFO line on the
``privacy_plugins.release`` logger at most every :func:`progress_interval` seconds, so a
task that runs for minutes shows signs of life in the orchestrator's log without flooding
it. :class:`ProgressLines` is that throttle, also used by the CLI when stderr is not a
terminal (a redirected or CI run would otherwise print nothing until the end).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from privacy_plugins.core.progress import announce_phase

__all__ = [
    "LOGGER",
    "LOG_INTERVAL",
    "PROGRESS_INTERVAL_ENV",
    "OnProgress",
    "ProgressLines",
    "StepProgress",
    "progress_interval",
]

#: The logger of the release steps (Airflow captures it in the task log; in Dagster list it
#: under ``python_logs: managed_python_loggers`` of ``dagster.yaml``).
LOGGER = logging.getLogger("privacy_plugins.release")
#: At most one progress line every this many seconds (unless the environment says otherwise).
LOG_INTERVAL = 10.0
#: Environment variable overriding :data:`LOG_INTERVAL` (seconds, e.g. ``0`` for every update).
PROGRESS_INTERVAL_ENV = "PRIVACY_PLUGINS_PROGRESS_INTERVAL"

#: ``on_progress(step, done, total)``: ``total`` is ``None`` when not known in advance. An object
#: that also has ``phase(name)`` is told each phase's name as it starts.
OnProgress = Callable[[str, int, int | None], None]


def progress_interval() -> float:
    """Seconds between progress lines: ``$PRIVACY_PLUGINS_PROGRESS_INTERVAL`` if a number ≥ 0, else 10."""
    text = os.environ.get(PROGRESS_INTERVAL_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return LOG_INTERVAL
    return value if value >= 0 else LOG_INTERVAL


def progress_text(what: str, done: int, total: int | None) -> str:
    """``"two-phase: merging clusters 41% (1,234 of 3,000)"``, or a count when the total is unknown.

    >>> progress_text("subsets measured", 20, 100)
    'subsets measured 20% (20 of 100)'
    >>> progress_text("subsets measured", 7, None)
    'subsets measured: 7 so far'
    """
    if total is None:
        return f"{what}: {done:,} so far"
    percent = 100 * done // max(total, 1)
    return f"{what} {percent}% ({done:,} of {total:,})"


class ProgressLines:
    """Throttled progress lines: at most one every ``interval`` seconds, each with the phase and a percentage.

    Args:
        write: where a line goes (``LOGGER.info``, or a print to stderr).
        what: what is counted until a phase is announced (``"subsets measured"``).
        prefix: put before every line (the step: ``"anonymize: "``).
        interval: seconds between lines (default :func:`progress_interval`).
        clock: monotonic seconds (for tests).
    """

    def __init__(
        self,
        write: Callable[[str], None],
        what: str = "",
        *,
        prefix: str = "",
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.write = write
        self.what = what
        self.prefix = prefix
        self.interval = progress_interval() if interval is None else interval
        self.clock = clock
        self.started = clock()
        self.last_written = self.started

    def phase(self, name: str) -> None:
        """Name what is counted from now on (the algorithm's phase)."""
        self.what = name

    def __call__(self, done: int, total: int | None, /) -> None:
        """Write a line when the last one is old enough."""
        now = self.clock()
        if now - self.last_written >= self.interval:
            self.last_written = now
            self.write(f"{self.prefix}{progress_text(self.what, done, total)}, {now - self.started:.0f} s")


class StepProgress:
    """The core's progress callback for one step: forwards to ``on_progress`` and logs now and then.

    Args:
        step: the step's name (``"diagnose"``, ``"anonymize"``).
        unit: what is counted until the algorithm names its phase (``"subsets measured"``).
        on_progress: the caller's callback, if any (told the phases too when it has ``phase``).
        interval: seconds between log lines (default :func:`progress_interval`).
        clock: monotonic seconds (for tests).
    """

    def __init__(
        self,
        step: str,
        unit: str,
        on_progress: OnProgress | None = None,
        *,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.step = step
        self.on_progress = on_progress
        self.lines = ProgressLines(LOGGER.info, unit, prefix=f"{step}: ", interval=interval, clock=clock)

    @property
    def unit(self) -> str:
        """What is counted now: the announced phase, else the step's unit."""
        return self.lines.what

    def phase(self, name: str) -> None:
        """The algorithm names its phase: use it in the log lines and tell the caller."""
        self.lines.phase(name)
        announce_phase(self.on_progress, name)

    def __call__(self, done: int, total: int | None, /) -> None:
        """One unit of work done: forward it, and log it when the last line is old enough."""
        if self.on_progress is not None:
            self.on_progress(self.step, done, total)
        self.lines(done, total)
