"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Hashable, Iterable, Sequence

from privacy_plugins.errors import UnknownColumnError

__all__ = ["Subcommands", "check_columns", "columns_arg"]

Subcommands = argparse._SubParsersAction  # the object add_subparsers() returns


def columns_arg(text: str) -> list[str]:
    """Parse ``"a,b,c"`` into column names, rejecting empty names."""
    columns = [part.strip() for part in text.split(",")]
    if not all(columns):
        raise argparse.ArgumentTypeError(f"empty column name in {text!r}")
    return columns


def check_columns(available: Sequence[Hashable], roles: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Raise :class:`UnknownColumnError` for the first role naming a column not in ``available``.

    One line, like the core's message, with a "did you mean" for near misses::

        quasi_identifiers not found in table: ['agee'] (did you mean 'age'?); available columns: [...]
    """
    names = [str(column) for column in available]
    for role, columns in roles:
        missing = [column for column in columns if column not in names]
        if missing:
            close = {m: difflib.get_close_matches(m, names, n=1) for m in missing}
            hints = [f"{matches[0]!r}" for matches in close.values() if matches]
            hint = f" (did you mean {' and '.join(hints)}?)" if hints else ""
            raise UnknownColumnError(f"{role} not found in table: {missing!r}{hint}; available columns: {names!r}")
