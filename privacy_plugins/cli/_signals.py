"""Ending a command cleanly when it is told to stop: SIGTERM, SIGHUP and SIGINT.

That is how Airflow timeouts, ``docker stop``, systemd, Kubernetes and a closed
terminal end a task. Python's defaults would end the process at once (SIGTERM,
SIGHUP) — skipping every ``finally`` — and leave the run's working files, which
hold every quasi-identifier and sensitive value, on disk. Inside
:func:`stopped_by_signals` such a signal raises :class:`Stopped` instead, so the
release's own clean-up runs (working folder, staging table, temporary files); the
caller then calls :func:`die_of` to end the process by that same signal, so the
exit status still says what happened (``-15`` to a parent, ``143`` to a shell).
Further signals are ignored while cleaning up; SIGKILL cannot be caught.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["STOP_SIGNALS", "Stopped", "check_stopped", "die_of", "stopped_by_signals"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Stopped(BaseException):  # a stop, not an error: not caught by ``except Exception``
    """The process was told to stop by ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_pending: list[int] = []  # the stop signal received inside the block (its exception may have been lost)


def _stop(signum: int, frame: FrameType | None) -> None:
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)  # let the clean-up finish
    _pending.append(signum)
    raise Stopped(signum)


def check_stopped() -> None:
    """Raise :class:`Stopped` if a stop signal came but its exception was lost.

    Python drops an exception raised while a ``__del__`` or a weakref callback runs
    ("Exception ignored in …"); the signals are ignored from then on, so without this
    the command would go on — and publish — after it was told to stop.
    """
    if _pending:
        raise Stopped(_pending[0])


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Turn the stop signals into :class:`Stopped` for the block (main thread only).

    The previous handlers come back when the block ends normally or by an error; after a
    :class:`Stopped` the signals stay ignored, so the caller's own clean-up finishes too.
    """
    _pending.clear()
    previous = {number: signal.signal(number, _stop) for number in STOP_SIGNALS}
    try:
        yield
        check_stopped()  # the block ended although it was told to stop: end by the signal all the same
    except Stopped:
        raise
    except BaseException:
        _restore(previous)
        raise
    _restore(previous)


def _restore(previous: dict[signal.Signals, Any]) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)


def die_of(signum: int) -> None:
    """End the process by ``signum`` with its default action, so the exit status reflects it."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # only if the signal did not end the process
