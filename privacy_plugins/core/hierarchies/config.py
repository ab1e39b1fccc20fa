"""A hierarchy from its configuration: the one reading of ``{builder: options}`` every surface shares.

A release spec's ``hierarchies:`` entry, a GX expectation's ``sensitive_hierarchy``
and Python callers all describe a hierarchy the same way: a path to an ARX CSV, or
a one-key mapping ``{file|interval|masking|date|taxonomy|grouping: options}``.

``interval``, ``masking`` and ``date`` build their leaves from the data's values;
``file``, ``taxonomy`` and ``grouping`` do not (:data:`DATA_FREE_BUILDERS`). A
sensitive attribute's hierarchy must be data-free: a published table, whose
sensitive column may hold generalized values, is re-measured without the raw data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from privacy_plugins.core.hierarchies.builders import (
    date_hierarchy,
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.hierarchies.io import read_hierarchy
from privacy_plugins.errors import HierarchyError

__all__ = [
    "DATA_FREE_BUILDERS",
    "HIERARCHY_BUILDERS",
    "HierarchyConfig",
    "build_hierarchy",
    "builder_of",
    "check_config_shape",
]

#: Every builder a configuration may name.
HIERARCHY_BUILDERS: tuple[str, ...] = ("file", "interval", "masking", "date", "taxonomy", "grouping")
#: The builders that need no data values (a re-measured published table has none).
DATA_FREE_BUILDERS: tuple[str, ...] = ("file", "taxonomy", "grouping")

#: A path to an ARX CSV, or ``{builder: options}``.
HierarchyConfig = str | Path | Mapping[str, Any]


def builder_of(attribute: Hashable, config: object) -> str:
    """The builder a configuration names (``"file"`` for a path).

    Raises:
        HierarchyError: not a path nor a one-key mapping naming a known builder.

    Example:
        >>> builder_of("disease", {"grouping": {"flu": ["respiratory"]}}), builder_of("disease", "d.csv")
        ('grouping', 'file')
    """
    if isinstance(config, (str, Path)):
        return "file"
    if isinstance(config, Mapping) and len(config) == 1 and next(iter(config)) in HIERARCHY_BUILDERS:
        return str(next(iter(config)))
    raise HierarchyError(
        f"hierarchy for {attribute!r} must be a path to an ARX CSV file or one of "
        f"{{{', '.join(HIERARCHY_BUILDERS)}: ...}}, got {config!r}"
    )


_DATA_BUILDERS: dict[str, Callable[..., Hierarchy]] = {
    "interval": interval_hierarchy,
    "masking": masking_hierarchy,
    "date": date_hierarchy,
}


def check_config_shape(attribute: Hashable, config: object, *, setting: str) -> str:
    """The builder ``config`` names, after checking its options' shape — before any data is read.

    ``file`` takes ``{path, sep}``; ``taxonomy`` and ``grouping`` a mapping; ``interval``,
    ``masking`` and ``date`` a mapping of their keyword options (or nothing).

    Raises:
        HierarchyError: naming ``setting`` (``hierarchies.age``) and what it should be.

    Example:
        >>> check_config_shape("age", {"interval": {"widths": [5, 10]}}, setting="hierarchies.age")
        'interval'
    """
    try:
        kind = builder_of(attribute, config)
    except HierarchyError:
        raise HierarchyError(
            f"{setting} must be one of {{{', '.join(HIERARCHY_BUILDERS)}: ...}}, got {config!r}"
        ) from None
    if not isinstance(config, Mapping):
        return kind
    options = config[kind]
    where = f"{setting}.{kind}"
    if kind == "file":
        if not isinstance(options, Mapping) or not isinstance(options.get("path"), (str, Path)):
            example = options if isinstance(options, str) else "file.csv"
            raise HierarchyError(f"{where} must be a mapping {{path: ..., sep: ';'}}, e.g. `file: {{path: {example}}}`")
        allowed: tuple[str, ...] = ("path", "sep")
    elif kind in ("taxonomy", "grouping"):
        if not isinstance(options, Mapping) or not options:
            raise HierarchyError(f"{where} must be a non-empty mapping, got {options!r}")
        return kind
    else:
        if options is not None and not isinstance(options, Mapping):
            raise HierarchyError(f"{where} must be a mapping of its options (or empty), got {options!r}")
        parameters = inspect.signature(_DATA_BUILDERS[kind]).parameters.values()
        allowed = tuple(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)
    unknown = [key for key in (options or {}) if key not in allowed]
    if unknown:
        raise HierarchyError(f"{where} has unknown option(s) {unknown}; allowed: {list(allowed)}")
    given = dict(options or {})
    if kind == "interval" and sum(given.get(key) is not None for key in ("widths", "cuts")) != 1:
        raise HierarchyError(f"{where} needs exactly one of widths or cuts, got {given!r}")
    return kind


def build_hierarchy(attribute: Hashable, config: HierarchyConfig, values: pd.Series | None = None) -> Hierarchy:
    """The hierarchy ``config`` describes for ``attribute``; ``values`` (the raw column) for data builders.

    ``{"file": {"path": ..., "sep": ";"}}`` or a plain path reads an ARX CSV;
    ``taxonomy`` and ``grouping`` take their tree/mapping as the options.

    Raises:
        HierarchyError: an unknown builder, or a data builder without ``values``.

    Example:
        >>> build_hierarchy("d", {"grouping": {"flu": ["resp"], "cold": ["resp"]}}).to_rows()
        [['flu', 'resp', '*'], ['cold', 'resp', '*']]
    """
    kind = builder_of(attribute, config)
    if isinstance(config, (str, Path)):
        return read_hierarchy(config, attribute=attribute)
    options: Any = config[kind]
    if kind in ("taxonomy", "grouping"):
        return taxonomy_hierarchy(attribute, options) if kind == "taxonomy" else grouping_hierarchy(attribute, options)
    options = dict(options or {})
    if kind == "file":
        if "path" not in options:
            raise HierarchyError(f"hierarchy for {attribute!r}: file needs a path, got {config!r}")
        return read_hierarchy(options["path"], attribute=attribute, sep=options.get("sep", ";"))
    if values is None:
        raise HierarchyError(
            f"hierarchy for {attribute!r}: {kind!r} builds from the data's values, which are not available here; "
            f"use one of {list(DATA_FREE_BUILDERS)} (e.g. write it once with write_hierarchy and give the file)"
        )
    if kind == "interval":
        return interval_hierarchy(attribute, values, **options)
    if kind == "masking":
        return masking_hierarchy(attribute, values.astype(str), **options)
    return date_hierarchy(attribute, values, **options)
