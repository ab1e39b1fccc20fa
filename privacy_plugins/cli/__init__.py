"""The ``privacy-plugins`` command: the core's measures, diagnosis and anonymizers from the shell.

Each subcommand lives in its own module and registers itself in
:func:`build_parser` with ``parser.set_defaults(run=...)``. Exit codes: 0 on
success, 2 with a one-line message on stderr for bad input (missing file,
unknown column, empty table, bad parameter), nothing written in that case, and
for an environment problem (a destination or report folder that cannot be
written, an I/O error while publishing). Subcommands may use 1 for their own
"ran, but the answer is no" (``release``: not published, requirements not met).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from privacy_plugins._version import __version__
from privacy_plugins.cli.anonymize import add_anonymize_parser
from privacy_plugins.cli.attack import add_attack_parser
from privacy_plugins.cli.diagnose import add_diagnose_parser
from privacy_plugins.cli.diagnose_releases import add_diagnose_releases_parser
from privacy_plugins.cli.distributed import add_distributed_parser
from privacy_plugins.cli.history import add_history_parser
from privacy_plugins.cli.measure import add_demo_parser, add_measure_parser
from privacy_plugins.cli.published import add_published_parser
from privacy_plugins.cli.release import add_release_parser
from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.errors import PrivacyPluginsError

__all__ = ["EXIT_BAD_INPUT", "build_parser", "main"]

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (exposed for docs and tests)."""
    parser = argparse.ArgumentParser(prog="privacy-plugins", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_measure_parser(commands)
    add_anonymize_parser(commands)
    add_diagnose_parser(commands)
    add_release_parser(commands)
    add_published_parser(commands)
    add_history_parser(commands)
    add_diagnose_releases_parser(commands)
    add_demo_parser(commands)
    add_distributed_parser(commands)
    add_attack_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privacy-plugins`` console script."""
    args = build_parser().parse_args(argv)
    # Error messages quote table values only when asked (--include-values, or an algorithm's --show-values yes).
    show = bool(getattr(args, "include_values", False)) or "yes" in (
        getattr(args, "show_values", None),
        getattr(args, "option_show_values", None),  # anonymize: the algorithm option's flag
    )
    try:
        with values_shown(show):
            return int(args.run(args))
    except (PrivacyPluginsError, ValueError, TypeError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"privacy-plugins: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # FileNotFoundError, PermissionError, a full disk ...: the environment
        message = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
        message = message.splitlines()[0] if message else type(exc).__name__
        print(f"privacy-plugins: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        database = sys.modules.get("sqlalchemy.exc")  # imported only by a release that reached a database
        if database is None or not isinstance(exc, database.SQLAlchemyError):
            raise
        from privacy_plugins.engines.sql import database_message
        from privacy_plugins.release.connections import mask_password

        print(f"privacy-plugins: error: the database refused: {mask_password(database_message(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
