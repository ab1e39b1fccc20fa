"""Read and write ARX's CSV hierarchy format (``value;level1;…;top``, no header).

A folder of hierarchies loads in one call: ``<dataset>_hierarchy_<column>.csv``
(ARX's naming) or ``<column>.csv``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Hashable, Iterable
from pathlib import Path

from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.errors import HierarchyError

__all__ = ["hierarchy_files", "load_hierarchies", "read_hierarchy", "write_hierarchy"]

_ARX_NAME = re.compile(r"^(?:.*_)?hierarchy_(?P<column>.+)\.csv$")


def read_hierarchy(path: str | Path, *, attribute: Hashable | None = None, sep: str = ";") -> Hierarchy:
    """Read one ARX CSV hierarchy (CRLF or LF line ends; blank lines ignored).

    ``attribute`` defaults to the column name in the file name.
    """
    source = Path(path)
    if not source.is_file():
        raise HierarchyError(f"hierarchy file not found: {str(source)!r}")
    with source.open("r", encoding="utf-8-sig", newline="") as handle:
        rows = [row for row in csv.reader(handle, delimiter=sep) if any(cell.strip() for cell in row)]
    if attribute is None:
        match = _ARX_NAME.match(source.name)
        attribute = match.group("column") if match else source.stem
    try:
        return Hierarchy.from_rows(attribute, rows)
    except HierarchyError as exc:
        raise HierarchyError(f"{exc} (in {str(source)!r})") from exc


def write_hierarchy(hierarchy: Hierarchy, path: str | Path, *, sep: str = ";") -> Path:
    """Write ``hierarchy`` in ARX's CSV format and return the path."""
    target = Path(path)
    with target.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter=sep, lineterminator="\n").writerows(hierarchy.to_rows())
    return target


def hierarchy_files(folder: str | Path, *, columns: Iterable[Hashable] | None = None) -> dict[Hashable, Path]:
    """The hierarchy file of each column in ``folder`` (ARX naming or ``<column>.csv``), without reading them.

    With ``columns``, a plain ``<name>.csv`` counts only for a column asked for
    (a folder in ARX's layout also holds the data tables, e.g. ``adult.csv``);
    columns without a file are simply absent from the result.
    """
    directory = Path(folder)
    if not directory.is_dir():
        raise HierarchyError(f"hierarchy folder not found: {str(directory)!r}")
    arx_named: dict[Hashable, Path] = {}
    plain: dict[Hashable, Path] = {}
    for path in sorted(directory.glob("*.csv")):
        match = _ARX_NAME.match(path.name)
        if match:
            arx_named[match.group("column")] = path
        else:
            plain[path.stem] = path
    requested = None if columns is None else list(columns)
    if requested is not None:
        plain = {name: path for name, path in plain.items() if name in requested}
    return dict(arx_named) if arx_named and requested is None else {**plain, **arx_named}


def load_hierarchies(
    folder: str | Path, *, columns: Iterable[Hashable] | None = None, sep: str = ";"
) -> dict[Hashable, Hierarchy]:
    """Load every hierarchy in ``folder`` (ARX naming or ``<column>.csv``).

    With ``columns``, only those are loaded and a missing one is an error naming it.
    """
    directory = Path(folder)
    requested = None if columns is None else list(columns)
    found = hierarchy_files(directory, columns=requested)
    wanted = list(found) if requested is None else requested
    missing = [column for column in wanted if column not in found]
    if missing:
        raise HierarchyError(
            f"no hierarchy for {missing!r} in {str(directory)!r}; expected <dataset>_hierarchy_<column>.csv "
            f"or <column>.csv; found hierarchies for {sorted(map(str, found))!r}"
        )
    return {column: read_hierarchy(found[column], attribute=column, sep=sep) for column in wanted}
