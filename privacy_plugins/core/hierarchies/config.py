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

from collections.abc import Hashable, Mapping
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

__all__ = ["DATA_FREE_BUILDERS", "HIERARCHY_BUILDERS", "HierarchyConfig", "build_hierarchy", "builder_of"]

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
