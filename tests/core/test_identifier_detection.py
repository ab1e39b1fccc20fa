"""Direct-identifier detection: one test per category, each beside look-alikes that must not be flagged."""

from __future__ import annotations

import json
import string
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.identifiers import CATEGORIES, IdentifierFinding, detect_identifiers
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

ROWS = 300
_VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"


def _rng() -> np.random.Generator:
    return np.random.default_rng(27)


def _digits(rng: np.random.Generator, count: int, length: int, first: str = "") -> list[str]:
    body = rng.integers(0, 10, size=(count, length - len(first)))
    return [first + "".join(map(str, row)) for row in body]


def luhn_digit(partial: str) -> str:
    total = 0
    for position, char in enumerate(reversed(partial)):
        value = int(char) * (2 if position % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


def iban_check(country: str, bban: str) -> str:
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{98 - int(numeric) % 97:02d}"


def vin_with_check(body: str, *, valid: bool = True) -> str:
    values = {**{str(d): d for d in range(10)}}
    for letters, start in (("ABCDEFGH", 1), ("JKLMN", 1), ("P", 7), ("R", 9), ("STUVWXYZ", 2)):
        values.update({letter: start + i for i, letter in enumerate(letters)})
    weights = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]
    remainder = sum(values[c] * w for c, w in zip(body, weights, strict=True)) % 11
    check = "X" if remainder == 10 else str(remainder)
    if not valid:
        check = "X" if check != "X" else "1"
    return body[:8] + check + body[9:]


def _cards(rng: np.random.Generator, valid: bool) -> list[str]:
    out = []
    for partial in _digits(rng, ROWS, 15, first="4"):
        check = luhn_digit(partial)
        out.append(partial + (check if valid else str((int(check) + 1) % 10)))
    return out


def _ibans(rng: np.random.Generator, valid: bool) -> list[str]:
    out = []
    for bban in _digits(rng, ROWS, 18):
        check = iban_check("DE", bban)
        out.append("DE" + (check if valid else f"{(int(check) + 1) % 97:02d}") + bban)
    return out


def _vins(rng: np.random.Generator, valid: bool) -> list[str]:
    bodies = ["".join(rng.choice(list(_VIN_CHARS), 17)) for _ in range(ROWS)]
    return [vin_with_check(body, valid=valid) for body in bodies]


def _ssns(rng: np.random.Generator, area_low: int, area_high: int) -> list[str]:
    areas = rng.integers(area_low, area_high, ROWS)
    areas = np.where(areas == 666, 667, areas)
    return [
        f"{a:03d}-{g:02d}-{s:04d}"
        for a, g, s in zip(areas, rng.integers(1, 100, ROWS), rng.integers(1, 10000, ROWS), strict=True)
    ]


def _names(rng: np.random.Generator) -> list[str]:
    first = ["John", "Mary", "Aisha", "Wei", "Carlos", "Emma", "Priya", "Zbigniew"]
    last = ["Smith", "Nguyen", "Garcia", "Khan", "Okonkwo", "Brown", "Patel"]
    return [f"{rng.choice(first)} {rng.choice(last)}" for _ in range(ROWS)]


def _repeat(values: list[str], times: int = 3) -> list[str]:
    """Look-alikes repeat (order lines share an order number), so uniqueness is not what flags them."""
    return [values[i // times] for i in range(ROWS)]


Generator = Callable[[np.random.Generator], tuple[dict[str, object], dict[str, object]]]

CASES: dict[str, Generator] = {
    "email": lambda r: (
        {"contact": [f"user{i}@example.{r.choice(['org', 'com'])}" for i in range(ROWS)]},
        {
            "file_name": _repeat([f"report_{i}.pdf" for i in range(ROWS)]),
            "handle": _repeat([f"@user{i}" for i in range(ROWS)]),
        },
    ),
    "phone": lambda r: (
        {
            "fax": [
                f"({a}) {b}-{c}"
                for a, b, c in zip(_digits(r, ROWS, 3, "2"), _digits(r, ROWS, 3), _digits(r, ROWS, 4), strict=True)
            ]
        },
        {
            "order_number": _repeat(_digits(r, ROWS, 10, "1")),
            "ordered_at": _repeat(
                [f"12:{m:02d}:{s:02d}" for m, s in zip(r.integers(0, 60, ROWS), r.integers(0, 60, ROWS), strict=True)]
            ),
        },
    ),
    "ssn": lambda r: (
        {"ssn": _ssns(r, 1, 900)},
        {"ref_code": _repeat(_ssns(r, 900, 1000)), "tax_ref": _repeat(_ssns(r, 900, 1000))},
    ),
    "ip_address": lambda r: (
        {
            "client_ip": [".".join(map(str, r.integers(0, 256, 4))) for _ in range(ROWS // 2)]
            + [":".join(f"{x:x}" for x in r.integers(0, 65536, 8)) for _ in range(ROWS - ROWS // 2)]
        },
        {
            "version": _repeat([".".join(map(str, r.integers(0, 20, 3))) for _ in range(ROWS)]),
            "duration": _repeat([f"{h}:{m:02d}:{s:02d}" for h, m, s in r.integers(0, 60, (ROWS, 3))]),
        },
    ),
    "url": lambda r: (
        {"profile": [f"https://social.example/u/{i}" for i in range(ROWS)]},
        {"path": _repeat([f"/docs/page-{i}" for i in range(ROWS)])},
    ),
    "card_number": lambda r: (
        {"payment": _cards(r, True)},
        {"order_number": _repeat(_cards(r, False)), "product_code": _repeat(_digits(r, ROWS, 16, "4"))},
    ),
    "iban": lambda r: ({"payout": _ibans(r, True)}, {"shipment": _repeat(_ibans(r, False))}),
    "vehicle_id": lambda r: ({"car": _vins(r, True)}, {"part_number": _repeat(_vins(r, False))}),
    "street_address": lambda r: (
        {
            "address": [
                f"{n} {s} {k}"
                for n, s, k in zip(
                    r.integers(1, 9999, ROWS),
                    r.choice(["Oak", "Main", "Elm Tree"], ROWS),
                    r.choice(["Street", "Ave", "Road"], ROWS),
                    strict=True,
                )
            ]
        },
        {"ward": _repeat([f"Cardiology Ward {i % 9}" for i in range(ROWS)])},
    ),
    "person_name": lambda r: (
        {"patient": _names(r)},
        {
            "product_name": _repeat(
                [
                    f"{c} {t}"
                    for c, t in zip(
                        r.choice(["Blue", "Steel", "Large"], ROWS),
                        r.choice(["Widget", "Bolt", "Gear"], ROWS),
                        strict=True,
                    )
                ]
            )
        },
    ),
    "birth_date": lambda r: (
        {"DateOfBirth": pd.to_datetime("1940-01-01") + pd.to_timedelta(r.integers(0, 25000, ROWS), unit="D")},
        {
            "age": r.integers(18, 90, ROWS),
            "birth_decade": _repeat([f"[{d}-{d + 10})" for d in r.choice([1950, 1960, 1970], ROWS)]),
            "visit_date": _repeat(
                [
                    str(d.date())
                    for d in pd.to_datetime("2020-01-01") + pd.to_timedelta(r.integers(0, 900, ROWS), unit="D")
                ]
            ),
        },
    ),
    "zip_code": lambda r: (
        {"zip": r.integers(1000, 99999, ROWS)},
        {
            "zip3": _repeat([f"{z}**" for z in r.integers(100, 999, ROWS)]),
            "quantity": r.integers(10000, 10100, ROWS),
            "count": r.integers(0, 40, ROWS),
        },
    ),
    "record_number": lambda r: (
        {"account_number": [f"ACC-{i:07d}" for i in range(ROWS)]},
        {"account_type": r.choice(["savings", "checking"], ROWS)},
    ),
    "free_text": lambda r: (
        {"notes": [f"Patient {i} reported mild pain after the visit and was advised to rest." for i in range(ROWS)]},
        {
            "age_group": _repeat([f"[{a}-{a + 10})" for a in r.choice([20, 30, 40], ROWS)]),
            "diagnosis": r.choice(["flu", "cancer", "hiv"], ROWS),
        },
    ),
    "unique_per_row": lambda r: (
        {"customer_id": r.permutation(10**6)[:ROWS]},
        {
            "order_number": _repeat([f"ORD-{i:06d}" for i in r.integers(0, 10**6, ROWS)]),
            "height_cm": r.normal(170, 10, ROWS),
        },
    ),
}


def test_every_category_has_a_case() -> None:
    assert set(CASES) == set(CATEGORIES)


@pytest.mark.parametrize("category", sorted(CASES))
def test_each_category_is_flagged_and_its_look_alikes_are_not(category: str) -> None:
    identifiers, look_alikes = CASES[category](_rng())
    table = pd.DataFrame({**identifiers, **look_alikes})
    findings = detect_identifiers(table)
    assert {f.column: f.category for f in findings} == dict.fromkeys(identifiers, category)
    for finding in findings:
        assert finding.matching_share >= 0.8 and 0 < finding.uniqueness <= 1
        assert finding.rows == ROWS and finding.sampled_values == finding.distinct_values
        text = json.dumps(finding.to_dict())
        raw = {str(v) for column in table for v in table[column]} | {
            str(v) for column in table for v in table[column].astype(str)
        }
        assert not any(value in text for value in raw if len(value) >= 6), "a raw value leaked into the finding"


def test_evidence_says_whether_the_name_or_the_values_matched() -> None:
    r = _rng()
    table = pd.DataFrame(
        {"ssn": [s.replace("-", "") for s in _ssns(r, 1, 900)], "payment": _cards(r, True), "email": ["n/a"] * ROWS}
    )
    by_column = {f.column: f for f in detect_identifiers(table)}
    assert by_column["ssn"].evidence == ("name", "values")  # bare nine digits count only under an SSN name
    assert by_column["payment"].evidence == ("values",)
    assert "email" not in by_column  # the name alone, without matching values, is not a finding
    renamed = {f.column: f.category for f in detect_identifiers(table.rename(columns={"ssn": "batch"}))}
    assert renamed["batch"] == "unique_per_row"  # not "ssn": bare digits need the name


@settings(max_examples=20)
@given(
    partials=st.lists(st.text(string.digits, min_size=11, max_size=17), min_size=3, max_size=20, unique=True),
    prefix=st.sampled_from("3456"),
)
def test_luhn_valid_numbers_are_flagged_and_the_same_numbers_off_by_one_are_not(
    partials: list[str], prefix: str
) -> None:
    valid = [prefix + p + luhn_digit(prefix + p) for p in partials]
    invalid = [v[:-1] + str((int(v[-1]) + 1) % 10) for v in valid]
    table = pd.DataFrame({"a": valid * 2, "b": invalid * 2})
    assert [(f.column, f.category) for f in detect_identifiers(table)] == [("a", "card_number")]


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(13, 19), prefix=st.sampled_from("23456"))
def test_random_order_numbers_of_card_shape_are_not_flagged(seed: int, length: int, prefix: str) -> None:
    numbers = _repeat(_digits(np.random.default_rng(seed), ROWS, length, prefix), 2)  # about 1 in 10 passes Luhn
    assert detect_identifiers(pd.DataFrame({"order_number": numbers})) == ()


@settings(max_examples=15)
@given(
    frame=st.lists(st.tuples(st.text(max_size=12), st.integers(-5, 5)), min_size=1, max_size=30).map(
        lambda rows: pd.DataFrame(rows, columns=["text", "number"])
    )
)
def test_findings_are_json_and_sampling_never_exceeds_its_limit(frame: pd.DataFrame) -> None:
    for finding in detect_identifiers(frame, sample_size=3, min_rows_for_uniqueness=1):
        assert isinstance(finding, IdentifierFinding) and finding.category in CATEGORIES
        assert finding.sampled_values <= 3 and finding.distinct_values <= finding.rows
        json.dumps(finding.to_dict())


def test_nulls_are_not_values_and_sampling_is_deterministic() -> None:
    emails = [f"user{i}@example.org" if i % 3 else None for i in range(ROWS)]
    table = pd.DataFrame({"contact": emails})
    (finding,) = detect_identifiers(table, sample_size=50)
    assert finding.rows == finding.distinct_values == sum(e is not None for e in emails)
    assert finding.sampled_values == 50 and finding.matching_share == 1.0
    assert detect_identifiers(table, sample_size=50) == detect_identifiers(table, sample_size=50)
    assert detect_identifiers(pd.DataFrame({"contact": [None, None]})) == ()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"sample_size": 0}, ConfigurationError, "sample_size"),
        ({"min_share": 1.5}, ConfigurationError, "min_share"),
        ({"uniqueness": 0}, ConfigurationError, "uniqueness"),
        ({"min_rows_for_uniqueness": 0}, ConfigurationError, "min_rows_for_uniqueness"),
        ({"columns": ["nope"]}, UnknownColumnError, "nope"),
    ],
)
def test_bad_settings_name_the_setting(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        detect_identifiers(pd.DataFrame({"a": [1]}), **kwargs)  # type: ignore[arg-type]


def test_whole_floats_of_an_id_column_with_nulls_count_as_integers() -> None:
    r = _rng()
    table = pd.DataFrame({"zip": r.integers(1000, 99999, ROWS).astype(float), "patient_id": np.arange(ROWS) * 7.0})
    table.loc[::10, ["zip", "patient_id"]] = np.nan
    table["weight_kg"] = r.normal(70, 9, ROWS)  # measured, unique per row, not an identifier
    assert {f.column: f.category for f in detect_identifiers(table)} == {
        "zip": "zip_code",
        "patient_id": "unique_per_row",
    }


def test_repeated_column_names_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="repeated: 'a'"):
        detect_identifiers(pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_names_in_capitals_or_lower_case_are_names() -> None:
    names = _names(_rng())
    table = pd.DataFrame({"who": [n.upper() for n in names], "last_name": [n.split()[1].lower() for n in names]})
    table["visited"] = table["who"].str.len()  # a count beside them
    assert {f.column: f.category for f in detect_identifiers(table)} == {
        "who": "person_name",
        "last_name": "person_name",
    }
