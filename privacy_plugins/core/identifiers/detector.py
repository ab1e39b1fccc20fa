"""Flag columns that hold direct identifiers, from their names and a sample of their values.

Covers the HIPAA Safe Harbor categories a table can show (names, e-mail, phone
and fax, SSN, IP addresses, URLs, card and account numbers, IBAN, vehicle ids,
street addresses, birth dates, five-digit ZIP codes), free text, and columns
that are unique (or nearly) per row. Each check runs vectorized over a sample
of a column's distinct values; a finding reports counts and shares only, never
a value, so it can travel into reports, logs and metadata.

References:
    45 CFR § 164.514(b)(2) (HIPAA Safe Harbor de-identification, 18 identifiers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.identifiers.checks import VALUE_CHECKS
from privacy_plugins.core.identifiers.names import GIVEN_NAMES, SURNAMES
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["CATEGORIES", "IdentifierFinding", "detect_identifiers"]

_KNOWN_NAMES = GIVEN_NAMES | SURNAMES
_PERSON_QUALIFIERS = frozenset(
    "first last given family full middle maiden patient person customer employee contact client member".split()
)


def _person_name_values(values: pd.Series) -> np.ndarray:
    """Words of letters (any case), at least one of them a known given name or surname."""
    values = values.str.title()  # "JOHN SMITH" and "john smith" are names too
    shaped = VALUE_CHECKS["person_name_shape"](values)
    words = values[shaped].reset_index(drop=True).str.split(r"[ '-]", regex=True).explode()
    known = np.zeros(len(values), dtype=bool)
    known[np.flatnonzero(shaped)] = words.isin(_KNOWN_NAMES).groupby(level=0).any().to_numpy(dtype=bool)
    return known


def _free_text_values(values: pd.Series) -> np.ndarray:
    """Prose: at least five words and 30 characters (labels and codes are shorter)."""
    words = values.str.count(r"\S+").to_numpy()
    return np.asarray((words >= 5) & (values.str.len().to_numpy() >= 30))


@dataclass(frozen=True)
class _Rule:
    """One category: the column-name words that suggest it and the value checks.

    ``value_check`` alone is evidence unless ``needs_name``; when the column name
    matches, the looser ``named_values`` check (default: ``value_check``) is used.
    ``numbers`` says whether a numeric column can hold the category (a ZIP code
    or a card number stored as an integer can; an e-mail address cannot).
    """

    category: str
    names: frozenset[str]
    value_check: Callable[[pd.Series], np.ndarray]
    named_values: Callable[[pd.Series], np.ndarray] | None = None
    needs_name: bool = False
    numbers: bool = False


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RULES: tuple[_Rule, ...] = (
    _Rule("email", _words("email mail emailaddress"), VALUE_CHECKS["email"]),
    _Rule(
        "ssn",
        _words("ssn socialsecurity socialsecuritynumber"),
        VALUE_CHECKS["ssn"],
        VALUE_CHECKS["ssn_named"],
        numbers=True,
    ),
    _Rule(
        "phone",
        _words("phone telephone tel fax mobile cell cellphone phonenumber"),
        VALUE_CHECKS["phone"],
        lambda v: VALUE_CHECKS["phone"](v) | VALUE_CHECKS["phone_named"](v),
        numbers=True,
    ),
    _Rule("card_number", _words("card cc pan creditcard cardnumber"), VALUE_CHECKS["card_number"], numbers=True),
    _Rule("iban", _words("iban"), VALUE_CHECKS["iban"]),
    _Rule("vehicle_id", _words("vin vehicle"), VALUE_CHECKS["vehicle_id"]),
    _Rule("ip_address", _words("ip ipaddress ipv4 ipv6"), VALUE_CHECKS["ip_address"]),
    _Rule("url", _words("url uri website homepage link"), VALUE_CHECKS["url"]),
    _Rule("street_address", _words("address street addr"), VALUE_CHECKS["street_address"]),
    _Rule("person_name", frozenset(), _person_name_values, lambda v: VALUE_CHECKS["person_name_shape"](v.str.title())),
    _Rule(
        "birth_date",
        _words("birth dob born birthday birthdate dateofbirth"),
        VALUE_CHECKS["birth_date"],
        needs_name=True,
    ),
    _Rule(
        "zip_code",
        _words("zip zipcode zip5 postal postcode postalcode"),
        VALUE_CHECKS["zip_code"],
        needs_name=True,
        numbers=True,
    ),
    _Rule(
        "record_number",
        _words("account acct mrn medicalrecord beneficiary policy license licence passport certificate"),
        VALUE_CHECKS["record_number"],
        needs_name=True,
        numbers=True,
    ),
    _Rule("free_text", _words("comment comments note notes remarks description text narrative"), _free_text_values),
)
#: Every category a finding can carry.
CATEGORIES: tuple[str, ...] = (*(rule.category for rule in _RULES), "unique_per_row")


def _name_tokens(column: Hashable) -> frozenset[str]:
    """Lower-case words of a column name, split on punctuation, digits and camelCase, plus their join."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(column))
    words = re.findall(r"[a-z]+|[0-9]+", text.lower())
    return frozenset({*words, "".join(words)})


def _name_matches(rule: _Rule, tokens: frozenset[str]) -> bool:
    if rule.category == "person_name":
        named = "name" in tokens and (len(tokens) <= 2 or bool(tokens & _PERSON_QUALIFIERS))
        return named or bool(tokens & _words("surname forename firstname lastname fullname"))
    return bool(tokens & rule.names)


@dataclass(frozen=True)
class IdentifierFinding:
    """A column flagged as a direct identifier, with the evidence; never a value.

    Args:
        column: the column's name.
        category: one of :data:`CATEGORIES`.
        matching_share: share of the sampled distinct values that match the
            category (for ``unique_per_row``: the uniqueness), in [0, 1].
        uniqueness: distinct non-null values / non-null rows, in [0, 1].
        distinct_values: number of distinct non-null values.
        rows: number of non-null rows.
        sampled_values: how many distinct values were checked.
        evidence: ``"name"`` (the column's name suggests the category),
            ``"values"`` (the values match) and/or ``"uniqueness"``.
    """

    column: Hashable
    category: str
    matching_share: float
    uniqueness: float
    distinct_values: int
    rows: int
    sampled_values: int
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (the column name as a string)."""
        return {**to_jsonable(self), "column": str(self.column)}


def _integral(series: pd.Series) -> bool:
    """An integer column, or a float one whose values are all whole (integer ids with nulls turn float)."""
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        return False
    if pd.api.types.is_integer_dtype(series.dtype):
        return True
    values = series.dropna().to_numpy(dtype=float, na_value=np.nan)
    return bool((np.abs(values) < 2.0**53).all() and (values == np.floor(values)).all())  # also excludes inf, NaN


def _sample_text(series: pd.Series, sample_size: int, seed: int, integral: bool) -> tuple[pd.Series, int, int]:
    """Distinct non-null values (a seeded sample of at most ``sample_size``) as stripped text."""
    present = series.dropna()
    distinct = present.unique()  # Arrow-backed text uses Arrow's hash table, not Python objects
    picked = distinct
    if len(distinct) > sample_size:
        picked = distinct[np.random.default_rng(seed).choice(len(distinct), sample_size, replace=False)]
    if integral:
        # whole numbers as integers; ZIP codes stored as integers lost their leading zeros
        text = pd.Series(np.asarray(picked, dtype=np.int64)).astype(str).str.zfill(5)
    else:
        text = pd.Series(np.asarray(picked, dtype=object), dtype=object).astype(str).str.strip()
    return text, len(distinct), len(present)


def _judge(
    column: Hashable, series: pd.Series, settings: _Settings, totals: tuple[int, int] | None = None
) -> IdentifierFinding | None:
    integral = _integral(series)
    sample, distinct, rows = _sample_text(series, settings.sample_size, settings.seed, integral)
    if totals is not None:  # the series is a sample of distinct values drawn elsewhere (an engine)
        distinct, rows = totals
    if rows == 0:
        return None
    uniqueness = distinct / rows
    tokens = _name_tokens(column)
    numeric = pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype)
    best: tuple[float, str, tuple[str, ...]] | None = None
    for rule in _RULES:
        named = _name_matches(rule, tokens)
        if rule.needs_name and not named:
            continue
        if numeric and not rule.numbers:
            continue
        check = rule.named_values if named and rule.named_values is not None else rule.value_check
        share = float(np.mean(check(sample)))
        if share >= settings.min_share and (best is None or share > best[0]):
            best = (share, rule.category, ("name", "values") if named else ("values",))
    if best is not None:
        return IdentifierFinding(column, best[1], best[0], uniqueness, distinct, rows, len(sample), best[2])
    measured = numeric and not integral  # floats and booleans measure; they do not name anybody
    temporal = pd.api.types.is_datetime64_any_dtype(series.dtype) or isinstance(series.dtype, pd.PeriodDtype)
    if rows >= settings.min_rows_for_uniqueness and uniqueness >= settings.uniqueness and not (measured or temporal):
        return IdentifierFinding(
            column, "unique_per_row", uniqueness, uniqueness, distinct, rows, len(sample), ("uniqueness",)
        )
    return None


@dataclass(frozen=True)
class _Settings:
    sample_size: int
    min_share: float
    uniqueness: float
    min_rows_for_uniqueness: int
    seed: int


def detect_identifiers(
    frame: pd.DataFrame,
    *,
    columns: Iterable[Hashable] | None = None,
    sample_size: int = 5000,
    min_share: float = 0.8,
    uniqueness: float = 0.95,
    min_rows_for_uniqueness: int = 100,
    seed: int = 0,
    totals: Mapping[Hashable, tuple[int, int]] | None = None,
) -> tuple[IdentifierFinding, ...]:
    """Flag the columns that look like direct identifiers, one finding per flagged column.

    Args:
        frame: the table (or a row sample of it, for large tables).
        columns: the columns to check (default: all).
        sample_size: distinct values checked per column, integer ≥ 1.
        min_share: share of sampled values that must match a category, in (0, 1].
        uniqueness: distinct/rows at or above which an integer or text column is
            flagged ``unique_per_row`` when no category matched, in (0, 1].
        min_rows_for_uniqueness: fewer non-null rows than this never count as
            unique per row (in a small table everything is), integer ≥ 1.
        seed: seed of the value sample.
        totals: column → (distinct non-null values, non-null rows) of the whole table, when
            ``frame`` holds only a sample of its distinct values (drawn in a database engine).

    Returns:
        The findings, in column order.

    Example:
        >>> table = pd.DataFrame({"contact": ["ann@example.org", "bo@example.com"], "age": [34, 51]})
        >>> [(f.column, f.category, f.evidence) for f in detect_identifiers(table)]
        [('contact', 'email', ('values',))]
    """
    if not isinstance(sample_size, int) or isinstance(sample_size, bool) or sample_size < 1:
        raise ConfigurationError(f"sample_size must be an integer >= 1, got {sample_size!r}")
    for setting, value in (("min_share", min_share), ("uniqueness", uniqueness)):
        if not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise ConfigurationError(f"{setting} must be a number in (0, 1], got {value!r}")
    if not isinstance(min_rows_for_uniqueness, int) or min_rows_for_uniqueness < 1:
        raise ConfigurationError(f"min_rows_for_uniqueness must be an integer >= 1, got {min_rows_for_uniqueness!r}")
    if not frame.columns.is_unique:
        duplicated = frame.columns[frame.columns.duplicated()].unique()
        raise ConfigurationError(f"column names must be unique; repeated: {', '.join(map(repr, duplicated))}")
    selected = list(frame.columns) if columns is None else list(columns)
    missing = [column for column in selected if column not in frame.columns]
    if missing:
        raise UnknownColumnError(f"columns not in the table: {', '.join(map(repr, missing))}")
    settings = _Settings(sample_size, float(min_share), float(uniqueness), min_rows_for_uniqueness, seed)
    findings = (_judge(column, frame[column], settings, (totals or {}).get(column)) for column in selected)
    return tuple(finding for finding in findings if finding is not None)
