"""Progress of the long release steps: a callback for the CLI, log lines for Airflow and Dagster.

The core reports ``progress(done, total)`` (:class:`privacy_plugins.core.progress.ProgressCallback`).
:class:`StepProgress` forwards each call to the caller's ``on_progress(step, done, total)``
(the CLI draws it with rich) and writes an INFO line on the ``privacy_plugins.release``
logger at most every :data:`LOG_INTERVAL` seconds, so a task that runs for minutes
shows signs of life in the orchestrator's log without flooding it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["LOGGER", "LOG_INTERVAL", "OnProgress", "StepProgress"]

#: The logger of the release steps (Airflow captures it in the task log; in Dagster list it
#: under ``python_logs: managed_python_loggers`` of ``dagster.yaml``).
LOGGER = logging.getLogger("privacy_plugins.release")
#: At most one progress line per step every this many seconds.
LOG_INTERVAL = 5.0

#: ``on_progress(step, done, total)``: ``total`` is ``None`` when not known in advance.
OnProgress = Callable[[str, int, int | None], None]


class StepProgress:
    """The core's progress callback for one step: forwards to ``on_progress`` and logs now and then.

    Args:
        step: the step's name (``"diagnose"``, ``"anonymize"``).
        unit: what is counted, for the log line (``"subsets measured"``, ``"nodes checked"``).
        on_progress: the caller's callback, if any.
        interval: seconds between log lines (default :data:`LOG_INTERVAL`).
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
        self.unit = unit
        self.on_progress = on_progress
        self.interval = LOG_INTERVAL if interval is None else interval
        self.clock = clock
        self.started = clock()
        self.last_logged = self.started

    def __call__(self, done: int, total: int | None, /) -> None:
        """One unit of work done: forward it, and log it when the last line is old enough."""
        if self.on_progress is not None:
            self.on_progress(self.step, done, total)
        now = self.clock()
        if now - self.last_logged >= self.interval:
            self.last_logged = now
            of = "" if total is None else f" of {total:,}"
            LOGGER.info("%s: %s%s %s (%.0f s)", self.step, f"{done:,}", of, self.unit, now - self.started)
