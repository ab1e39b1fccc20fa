"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path

from privacy_plugins.core.hierarchies import Hierarchy, hierarchy_files, read_hierarchy
from privacy_plugins.core.models import (
    L_VARIANTS,
    T_DISTANCES,
    PrivacyModel,
    models_from_entries,
    requirement_models,
)
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = [
    "Subcommands",
    "add_l_arguments",
    "add_requirements_file_argument",
    "add_role_arguments",
    "add_t_arguments",
    "check_columns",
    "columns_arg",
    "listed_models",
    "models_from_args",
    "sensitive_hierarchies",
]

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


def add_role_arguments(
    parser: argparse.ArgumentParser, *, quasi_identifiers_help: str, identifiers_help: str | None
) -> None:
    """``--quasi-identifiers`` (required), ``--sensitive-attributes`` and ``--identifiers``, comma-separated.

    The one spelling of the roles in every subcommand (the core's keywords with dashes).
    """
    parser.add_argument("--quasi-identifiers", required=True, type=columns_arg, help=quasi_identifiers_help)
    parser.add_argument(
        "--sensitive-attributes", type=columns_arg, default=[], help="sensitive attributes, comma-separated"
    )
    if identifiers_help is not None:
        parser.add_argument("--identifiers", type=columns_arg, default=[], help=identifiers_help)


def add_l_arguments(parser: argparse.ArgumentParser, *, l_help: str) -> None:
    """``--l``, ``--l-variant`` (one of the core's variants) and ``--c``."""
    parser.add_argument("--l", type=float, help=l_help)
    parser.add_argument(
        "--l-variant", choices=L_VARIANTS, default="distinct", help="l-diversity variant (default distinct)"
    )
    parser.add_argument("--c", type=float, help="c of recursive (c,l)-diversity (with --l-variant recursive)")


def add_t_arguments(parser: argparse.ArgumentParser, *, t_help: str) -> None:
    """``--t`` and ``--t-distance`` (default auto: ordered for numeric columns, equal otherwise)."""
    parser.add_argument("--t", type=float, help=t_help)
    parser.add_argument(
        "--t-distance",
        choices=T_DISTANCES,
        default="auto",
        help="ground distance of t-closeness (default auto: ordered for numeric columns, equal otherwise)",
    )


def add_bound_arguments(parser: argparse.ArgumentParser) -> None:
    """``--bound`` and ``--bound-column``: per-record leakage bounds, ``--bound`` the default for empty cells."""
    parser.add_argument(
        "--bound",
        type=float,
        help="one personalized leakage bound in (0,1] for every record (with --bound-column: for empty cells)",
    )
    parser.add_argument("--bound-column", help="column holding each record's leakage bound")


def add_requirements_file_argument(parser: argparse.ArgumentParser) -> None:
    """``--requirements-file``: a YAML/JSON list of models, the form of a release spec's ``requirements:``."""
    parser.add_argument(
        "--requirements-file",
        type=Path,
        help="YAML or JSON list of privacy models, e.g. [{k_anonymity: {k: 5}}, {mypkg.models:MyModel: {...}}] "
        "(a registered name or module:Class); judged together with the requirement flags (the union; "
        "one model twice is an error)",
    )


def listed_models(args: argparse.Namespace) -> list[PrivacyModel]:
    """The models of ``--requirements-file`` (none without it); a bad entry is one line naming it."""
    path: Path | None = getattr(args, "requirements_file", None)
    if path is None:
        return []
    import yaml

    setting = f"--requirements-file {str(path)!r}"
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise ConfigurationError(f"{setting} is not valid YAML or JSON: {problem}") from None
    if isinstance(entries, dict) and set(entries) == {"requirements"}:  # a spec's section pasted as it is
        entries = entries["requirements"]
    return models_from_entries(entries, setting=setting)


def models_from_args(args: argparse.Namespace) -> list[PrivacyModel]:
    """The flags expanded to models (each l/t/bound applies to every sensitive attribute), then the file's.

    The one expansion of the CLI's requirement flags; ``measure`` and ``diagnose`` pass the
    same flags to the core, which expands them with the same
    :func:`~privacy_plugins.core.models.requirement_models`.
    """
    listed = listed_models(args)
    flags = ("k", "l", "t", "bound", "bound_column")
    if not listed and all(getattr(args, flag, None) is None for flag in flags):
        raise ConfigurationError(
            "give at least one requirement: --k, --l, --t, --bound, --bound-column or --requirements-file"
        )
    return requirement_models(
        sensitive_attributes=args.sensitive_attributes,
        k=getattr(args, "k", None),
        l=getattr(args, "l", None),
        l_variant=getattr(args, "l_variant", "distinct"),
        c=getattr(args, "c", None),
        t=getattr(args, "t", None),
        t_distance=getattr(args, "t_distance", "auto"),
        bound=getattr(args, "bound", None),
        bound_column=getattr(args, "bound_column", None),
        models=listed,
    )


def sensitive_hierarchies(args: argparse.Namespace) -> dict[Hashable, Hierarchy]:
    """The sensitive attributes' hierarchies that have a file in ``--hierarchies`` (none without the flag)."""
    if args.hierarchies is None:
        return {}
    files = hierarchy_files(args.hierarchies, columns=args.sensitive_attributes)
    return {
        column: read_hierarchy(files[column], attribute=column)
        for column in args.sensitive_attributes
        if column in files
    }
