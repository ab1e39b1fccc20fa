"""Reading tables from CSV (delimiter sniffed) or Parquet without mangling codes.

CSV cells are read as text first so that codes keep their leading zeros (zip
``02139`` must not become the number 2139 — that would merge or split classes);
spaces right after a delimiter are skipped (UCI Adult writes ``39, State-gov``).
A column is turned into numbers only when every present value is written as a
canonical number (``-12``, ``3.5``, never ``007``), so numeric attributes such as
age still get numeric order for the ordered t-closeness distance.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd

from privacy_plugins.errors import ConfigurationError

__all__ = ["read_table", "sniff_delimiter"]

_PARQUET_SUFFIXES = {".parquet", ".pq", ".parq"}
_CANDIDATE_DELIMITERS = ",;\t|"
_CANONICAL_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")


def sniff_delimiter(path: Path, *, sample_bytes: int = 64 * 1024) -> str:
    """Guess a CSV file's delimiter among ``, ; TAB |`` from its first bytes."""
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        sample = handle.read(sample_bytes)
    if not sample.strip():
        raise ConfigurationError(f"table file {str(path)!r} is empty")
    try:
        return csv.Sniffer().sniff(sample, delimiters=_CANDIDATE_DELIMITERS).delimiter
    except csv.Error:
        header = sample.splitlines()[0]
        counts = {d: header.count(d) for d in _CANDIDATE_DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] > 0 else ","


def _numeric_where_canonical(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        text = frame[column].dropna().astype(str)
        if len(text) and bool(text.str.fullmatch(_CANONICAL_NUMBER).all()):
            frame[column] = pd.to_numeric(frame[column])
    return frame


def read_table(path: str | Path, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV (delimiter auto-detected unless ``sep`` is given) or Parquet table.

    Raises:
        FileNotFoundError: the path does not exist.
        ConfigurationError: the file is empty or cannot be parsed.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"table file not found: {str(source)!r}")
    if source.is_dir() or source.suffix.lower() in _PARQUET_SUFFIXES:
        try:
            return pd.read_parquet(source)
        except Exception as exc:  # pyarrow raises many unrelated types
            raise ConfigurationError(f"cannot read Parquet table {str(source)!r}: {exc}") from exc
    delimiter = sep if sep is not None else sniff_delimiter(source)
    try:
        frame = pd.read_csv(source, sep=delimiter, dtype=str, encoding="utf-8-sig", skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot parse CSV table {str(source)!r}: {exc}") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return _numeric_where_canonical(frame)
