"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse

__all__ = ["Subcommands", "columns_arg"]

Subcommands = argparse._SubParsersAction  # the object add_subparsers() returns


def columns_arg(text: str) -> list[str]:
    """Parse ``"a,b,c"`` into column names, rejecting empty names."""
    columns = [part.strip() for part in text.split(",")]
    if not all(columns):
        raise argparse.ArgumentTypeError(f"empty column name in {text!r}")
    return columns
