"""A CSV file read by DuckDB (out of core) with the types and missing values ``read_table`` gives.

``core/io.py::read_table`` reads every cell as text, skips spaces after a
delimiter, turns pandas' default NA strings into missing values, and makes a
column numeric only when every present value is a canonical number (int64 when
none is missing and none has a decimal point, float64 otherwise). The SELECT built
here reproduces that in DuckDB so a large CSV gives the same snapshot, node and
published rows as the pandas path: header and delimiter come from the same Python
code (a repeated column name is the same error), cells are read as VARCHAR,
left-trimmed of spaces, mapped to NULL when they are an NA string, and cast per
column after one aggregate pass over the file decides each column's type.

Where the rules cannot be matched the file is refused with a clear error (the
message says to raise ``source.out_of_core_bytes`` or convert to Parquet), never
read differently: a *quoted* value that starts with a space (``" x"``; pandas keeps
the space, but DuckDB unquotes before the trim, so it would be lost), found by one
scan of the raw lines; and integers too long for int64 (pandas falls back to
other types).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from privacy_plugins.core.io import CANONICAL_NUMBER, PANDAS_NA_STRINGS, check_encoding, csv_layout
from privacy_plugins.engines.sql import SqlTable
from privacy_plugins.errors import ConfigurationError

__all__ = ["open_csv_in_duckdb"]

_MAX_INT64_DIGITS = 18  # every canonical integer of at most 18 digits fits int64


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _encoding(encoding: str) -> str:
    """DuckDB's ``encoding=`` argument for a Python codec name (it reads utf-8, utf-16 and latin-1 itself)."""
    name = check_encoding(encoding, setting="source.encoding").removesuffix("-sig")
    duckdb_names = {"utf-8": "utf-8", "utf-16": "utf-16", "latin-1": "latin-1", "iso8859-1": "latin-1"}
    if name not in duckdb_names:
        raise ConfigurationError(
            f"source.encoding {encoding!r}: the out-of-core CSV reader (DuckDB) reads utf-8, utf-16 and latin-1 "
            "only; raise source.out_of_core_bytes to read the file with pandas, or convert it to UTF-8"
        )
    return f", encoding={_literal(duckdb_names[name])}"


def _reader(path: Path, delimiter: str, header: list[str], encoding: str = "utf-8") -> str:
    """read_csv with our header as VARCHAR columns; short rows padded with NULL (as pandas), long rows an error."""
    columns = ", ".join(f"{_literal(f'c{i}')}: 'VARCHAR'" for i in range(len(header)))
    return (
        f"read_csv({_literal(str(path))}, delim={_literal(delimiter)}, header=true, auto_detect=false, "
        f"quote='\"', escape='\"', columns={{{columns}}}, null_padding=true, strict_mode=true{_encoding(encoding)})"
    )


def _cells(header: list[str]) -> list[str]:
    """Each column as read_table's text: spaces after the delimiter skipped, NA strings → NULL."""
    na = ", ".join(_literal(value) for value in PANDAS_NA_STRINGS)
    return [
        f"CASE WHEN ltrim(c{i}, ' ') IN ({na}) THEN NULL ELSE ltrim(c{i}, ' ') END AS {_ident(name)}"
        for i, name in enumerate(header)
    ]


def _types(connection: Any, text: str, header: list[str], where: str) -> list[str]:
    """One pass over the file: each column's SQL type by read_table's canonical-number rule."""
    parts = []
    for name in header:
        column = _ident(name)
        parts += [
            f"count({column})",
            f"coalesce(bool_and(regexp_full_match({column}, {_literal(CANONICAL_NUMBER)})), false)",
            f"coalesce(bool_or(contains({column}, '.')), false)",
            f"count(*) - count({column})",
            f"coalesce(max(length({column})), 0)",
        ]
    row = connection.exec_driver_sql(f"SELECT {', '.join(parts)} FROM ({text}) AS cells").fetchone()
    types = []
    for index, name in enumerate(header):
        present, numeric, decimal, missing, longest = row[5 * index : 5 * index + 5]
        if not present or not numeric:
            types.append("VARCHAR")
        elif decimal or missing:
            types.append("DOUBLE")
        elif longest > _MAX_INT64_DIGITS:
            raise ConfigurationError(
                f"{where}: column {name!r} holds integers longer than {_MAX_INT64_DIGITS} digits, which the "
                "DuckDB reader does not type as pandas would; raise source.out_of_core_bytes to read it with "
                "pandas, or convert the file to Parquet"
            )
        else:
            types.append("BIGINT")
    return types


def _quoted_leading_space(connection: Any, path: Path, delimiter: str, encoding: str = "utf-8") -> int:
    """Lines with a quoted field that starts with a space (raw lines, quotes not parsed)."""
    pattern = f'(^|{re.escape(delimiter)}) *" '
    lines = (
        f"read_csv({_literal(str(path))}, columns={{'line': 'VARCHAR'}}, delim='\x01', quote='', escape='', "
        f"header=false, auto_detect=false, strict_mode=false{_encoding(encoding)})"
    )
    query = f"SELECT count(*) FILTER (WHERE regexp_matches(line, {_literal(pattern)})) FROM {lines}"
    return int(connection.exec_driver_sql(query).scalar_one())


def open_csv_in_duckdb(path: Path, *, sep: str | None = None, encoding: str = "utf-8") -> SqlTable:
    """The CSV as a query of an in-process DuckDB, typed as ``read_table`` types it.

    Raises:
        ConfigurationError: repeated column names, a row longer than the header, a file DuckDB cannot
            parse (with DuckDB's message), a quoted value starting with a space, or integers too long for int64.
    """
    import sqlalchemy as sa

    where = f"CSV table {str(path)!r}"
    delimiter, header = csv_layout(path, sep=sep, encoding=encoding)
    text = f"SELECT {', '.join(_cells(header))} FROM {_reader(path, delimiter, header, encoding)}"
    engine = sa.create_engine("duckdb:///:memory:")
    try:
        with engine.connect() as connection:
            if _quoted_leading_space(connection, path, delimiter, encoding):
                raise ConfigurationError(
                    f"{where} has quoted values that start with a space, which the DuckDB reader cannot keep as "
                    "pandas does; raise source.out_of_core_bytes to read it with pandas, or convert it to Parquet"
                )
            types = _types(connection, text, header, where)
    except sa.exc.DBAPIError as exc:
        message = str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc)
        raise ConfigurationError(f"cannot parse {where} with DuckDB: {message}") from exc
    typed = ", ".join(
        f"CAST({_ident(name)} AS {kind}) AS {_ident(name)}" if kind != "VARCHAR" else _ident(name)
        for name, kind in zip(header, types, strict=True)
    )
    return SqlTable.from_query(engine, f"SELECT {typed} FROM ({text}) AS cells")
