"""Reading tables from CSV (delimiter sniffed) or Parquet without mangling codes.

CSV cells are read as text first so that codes keep their leading zeros (zip
``02139`` must not become the number 2139 — that would merge or split classes);
spaces right after a delimiter are skipped (UCI Adult writes ``39, State-gov``).
A column is turned into numbers only when every present value is written as a
canonical number (``-12``, ``3.5``, never ``007``), so numeric attributes such as
age still get numeric order for the ordered t-closeness distance.

Column names are never renamed, dropped or invented on the way in — a repeated
name would otherwise reach the release as ``ssn.1``, outside every role:

* CSV: the header is read here, stripped, and a name that repeats (before or
  after stripping) is an error; a data row with more fields than the header is
  an error (pandas would silently turn the first column into the index).
* Parquet: a field name that repeats is an error. A pandas index stored in the
  file is read back as an ordinary column when it has a name (``ssn`` stays
  ``ssn``, so its role applies); an unnamed stored index (``__index_level_0__``)
  is an error rather than a column that appears from nowhere — write the file
  with ``index=False`` or name the index. A default ``RangeIndex`` is not data
  and stores no column.
"""

from __future__ import annotations

import codecs
import csv
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from privacy_plugins.errors import ConfigurationError

__all__ = [
    "CANONICAL_NUMBER",
    "check_encoding",
    "check_unique_columns",
    "csv_layout",
    "read_table",
    "sniff_delimiter",
]

_PARQUET_SUFFIXES = {".parquet", ".pq", ".parq"}
_CANDIDATE_DELIMITERS = ",;\t|"
CANONICAL_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?"
"""A CSV column becomes numbers only when every present value matches this (the DuckDB reader uses it too)."""
_CANONICAL_NUMBER = re.compile(CANONICAL_NUMBER)
PANDAS_NA_STRINGS = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip
"""The cells ``read_table`` reads as missing (pandas' default ``na_values``), after skipping leading spaces."""


def check_encoding(encoding: object, *, setting: str = "encoding") -> str:
    """The codec Python reads ``encoding`` with (``utf-8`` also skips a byte-order mark).

    Raises:
        ConfigurationError: not a text encoding Python knows, naming ``setting``.
    """
    try:
        name = codecs.lookup(str(encoding)).name if isinstance(encoding, str) else ""
    except LookupError:
        name = ""
    if not name:
        raise ConfigurationError(
            f"{setting} must be a text encoding such as utf-8, latin-1 or cp1252, got {encoding!r}"
        )
    return "utf-8-sig" if name == "utf-8" else name


def _undecodable(path: Path, encoding: str, exc: UnicodeDecodeError) -> ConfigurationError:
    """A one-line error naming the file, the first line that does not decode, and the setting to change."""
    line = None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):  # only on this error path, up to the bad line
            try:
                raw.decode(encoding)
            except UnicodeDecodeError:
                line = number
                break
    at = f" line {line}:" if line is not None else ""
    byte = exc.object[exc.start : exc.start + 1].hex() if exc.object else ""
    shown = encoding.removesuffix("-sig")
    return ConfigurationError(
        f"CSV table {str(path)!r} is not {shown} text:{at} byte 0x{byte} cannot be decoded; give the file's "
        "encoding (source.encoding in a release spec, --encoding on the command line; e.g. latin-1 or cp1252)"
    )


def sniff_delimiter(path: Path, *, sample_bytes: int = 64 * 1024, encoding: str = "utf-8") -> str:
    """Guess a CSV file's delimiter among ``, ; TAB |`` from its first bytes."""
    codec = check_encoding(encoding)
    try:
        with path.open("r", encoding=codec, newline="") as handle:
            sample = handle.read(sample_bytes)
    except UnicodeDecodeError as exc:
        raise _undecodable(path, codec, exc) from None
    if not sample.strip():
        raise ConfigurationError(f"table file {str(path)!r} is empty")
    try:
        return csv.Sniffer().sniff(sample, delimiters=_CANDIDATE_DELIMITERS).delimiter
    except csv.Error:
        header = sample.splitlines()[0]
        counts = {d: header.count(d) for d in _CANDIDATE_DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] > 0 else ","


def check_unique_columns(names: Sequence[object], *, where: str) -> None:
    """Raise when a column name repeats (compared as stripped text, as the release compares them).

    Raises:
        ConfigurationError: naming every repeated column.
    """
    counts = Counter(str(name).strip() for name in names)
    repeated = [name for name, count in counts.items() if count > 1]
    if repeated:
        raise ConfigurationError(
            f"{where} has repeated column name(s) {repeated!r}; every column needs its own name "
            "(a repeated identifier would otherwise be published under another name)"
        )


def _csv_header(path: Path, delimiter: str, codec: str) -> list[str]:
    with path.open("r", encoding=codec, newline="") as handle:
        header = next(csv.reader(handle, delimiter=delimiter, skipinitialspace=True), None)
    if not header:
        raise ConfigurationError(f"table file {str(path)!r} has no header row")
    return header


_PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def _read_parquet(source: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    files = sorted(source.rglob("*.parquet")) if source.is_dir() else [source]
    try:
        for file in files:  # the schema first: reading a table whose names repeat fails obscurely
            check_unique_columns(pq.ParquetFile(file).schema_arrow.names, where=f"Parquet table {str(file)!r}")
        table = pq.read_table(source)
    except ConfigurationError:
        raise
    except Exception as exc:  # pyarrow raises many unrelated types
        raise ConfigurationError(f"cannot read Parquet table {str(source)!r}: {exc}") from exc
    names = list(table.schema.names)
    check_unique_columns(names, where=f"Parquet table {str(source)!r}")
    unnamed = [name for name in names if _PANDAS_INDEX.fullmatch(name)]
    if unnamed:
        raise ConfigurationError(
            f"Parquet table {str(source)!r} stores an unnamed pandas index as {unnamed!r}; "
            "write it with to_parquet(index=False), or name the index so it is read as a column"
        )
    try:
        # ignore_metadata: a stored (named) index comes back as an ordinary column, not as the index.
        return table.to_pandas(ignore_metadata=True)
    except Exception as exc:
        raise ConfigurationError(f"cannot read Parquet table {str(source)!r}: {exc}") from exc


def _numeric_where_canonical(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        text = frame[column].dropna().astype(str)
        if len(text) and bool(text.str.fullmatch(_CANONICAL_NUMBER).all()):
            frame[column] = pd.to_numeric(frame[column])
    return frame


def csv_layout(source: Path, *, sep: str | None = None, encoding: str = "utf-8") -> tuple[str, list[str]]:
    """The delimiter (sniffed unless given) and the stripped header of a CSV file; names must not repeat.

    Raises:
        ConfigurationError: the file is empty, has no header, cannot be parsed or decoded, or repeats a
            column name.
    """
    codec = check_encoding(encoding)
    delimiter = sep if sep is not None else sniff_delimiter(source, encoding=encoding)
    try:
        header = [name.strip() for name in _csv_header(source, delimiter, codec)]
    except UnicodeDecodeError as exc:
        raise _undecodable(source, codec, exc) from None
    except csv.Error as exc:
        raise ConfigurationError(f"cannot parse CSV table {str(source)!r}: {exc}") from exc
    check_unique_columns(header, where=f"CSV table {str(source)!r}")
    return delimiter, header


def read_table(path: str | Path, *, sep: str | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a CSV (delimiter auto-detected unless ``sep`` is given; text in ``encoding``) or Parquet table.

    Raises:
        FileNotFoundError: the path does not exist.
        ConfigurationError: the file is empty, cannot be parsed or decoded (naming the first bad line),
            a column name repeats, or a row has more fields than the header.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"table file not found: {str(source)!r}")
    if source.is_dir() or source.suffix.lower() in _PARQUET_SUFFIXES:
        return _read_parquet(source)
    delimiter, header = csv_layout(source, sep=sep, encoding=encoding)
    codec = check_encoding(encoding)
    try:
        with warnings.catch_warnings():
            # index_col=False + this warning: rows longer than the header are an error, not an index.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                source,
                sep=delimiter,
                dtype=str,
                encoding=codec,
                skipinitialspace=True,
                header=0,
                names=header,
                index_col=False,
            )
    except UnicodeDecodeError as exc:
        raise _undecodable(source, codec, exc) from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError) as exc:
        raise ConfigurationError(f"cannot parse CSV table {str(source)!r}: {exc}") from exc
    return _numeric_where_canonical(frame)
