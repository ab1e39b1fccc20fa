"""Whether an error message may quote values of the table: only when the caller opted in.

The rule of the README ("counts and column names by default, values only with
``--include-values`` / ``show_values``") holds for exceptions and warnings too: a
value missing from a hierarchy or the chosen sensitive values are a person's data.
Messages are built deep inside the core, far from the flag, so the opt-in is a
context (like the connection resolver of a release): the CLI's ``--include-values``
wraps the command in :func:`values_shown`; everything else gets counts.

Example:
    >>> f"2 value(s) are not leaves{examples(['99', '7'])}"
    "2 value(s) are not leaves (values hidden: --include-values / show_values='yes' shows them)"
    >>> with values_shown():
    ...     f"2 value(s) are not leaves{examples(['99', '7'])}"
    "2 value(s) are not leaves, e.g. ['99', '7']"
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["HIDDEN", "examples", "showing_values", "values_shown"]

_SHOW: ContextVar[bool] = ContextVar("privacy_plugins_show_values", default=False)

#: What a message says instead of the values.
HIDDEN = " (values hidden: --include-values / show_values='yes' shows them)"


@contextmanager
def values_shown(show: bool = True) -> Iterator[None]:
    """Inside the block, messages may quote table values (the caller opted in)."""
    token = _SHOW.set(show)
    try:
        yield
    finally:
        _SHOW.reset(token)


def showing_values() -> bool:
    """Whether the caller opted in to values in messages."""
    return _SHOW.get()


def examples(values: Sequence[object], *, limit: int = 10) -> str:
    """``", e.g. [...]"`` (plain Python values, at most ``limit``) when opted in, else the hidden note."""
    if not showing_values():
        return HIDDEN
    plain = [value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value
             for value in list(values)[:limit]]  # fmt: skip
    return f", e.g. {plain!r}"
