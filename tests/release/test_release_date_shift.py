"""pseudonymize.shift_dates: each person's dates move by one keyed shift within ±max_days; no raw date leaks."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.pseudonyms import PseudonymKey, date_shift_days, pseudonymize
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, run_release

KEY = "a-date-shift-test-key-long-enough-012345"
ENV = "PP_TEST_DATE_SHIFT_KEY"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=40), st.integers(1, 400))
def test_the_same_person_gets_the_same_shift_within_the_bound(ids: list[str], max_days: int) -> None:
    key = PseudonymKey(KEY.encode())
    days = date_shift_days(pd.Series(ids, dtype=object), key, max_days=max_days, scope="stable")
    assert np.abs(days).max() <= max_days
    by_id: dict[str, set[int]] = {}
    for person, shift in zip(ids, days.tolist(), strict=True):
        by_id.setdefault(person, set()).add(shift)
    assert all(len(shifts) == 1 for shifts in by_id.values())


def test_shifts_depend_on_the_key_and_the_release_salt() -> None:
    ids = pd.Series([f"P{i}" for i in range(200)])
    key = PseudonymKey(KEY.encode())
    stable = date_shift_days(ids, key, max_days=365, scope="stable")
    other_key = date_shift_days(ids, PseudonymKey(KEY.encode() + b"!"), max_days=365, scope="stable")
    salted = date_shift_days(ids, key, max_days=365, scope="release", salt=b"0123456789abcdef")
    assert (stable != other_key).mean() > 0.9 and (stable != salted).mean() > 0.9
    assert len(set(stable.tolist())) > 100  # spread over the range, not a constant


def _spec(tmp_path: Path, frame: pd.DataFrame, **shift: object) -> ReleaseSpec:
    source = tmp_path / "visits.csv"
    frame.to_csv(source, index=False)
    return ReleaseSpec.from_dict(
        {
            "name": "visits",
            "source": {"path": str(source)},
            "pseudonymize": {
                "columns": ["patient_id"],
                "key": {"env": ENV},
                "scope": "stable",
                "shift_dates": {"columns": ["admitted", "discharged"], "max_days": 30, **shift},
            },
            "quasi_identifiers": ["age", "sex"],
            "sensitive_attributes": ["disease"],
            "hierarchies": {
                "age": {"interval": {"widths": [10, 20, 40]}},
                "sex": {"taxonomy": {"*": ["Female", "Male"]}},
            },
            "requirements": {"k": 5},
            "destination": {"duckdb": str(tmp_path / "out.duckdb"), "table": "visits_release"},
            "report": {"directory": str(tmp_path / "reports")},
        }
    )


def _visits(people: int = 100) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    person = np.repeat(np.arange(people), 2)  # two visits per person
    admitted = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 300, len(person)), unit="D")
    stay = rng.integers(0, 20, len(person))
    return pd.DataFrame(
        {
            "patient_id": [f"P{p:05d}" for p in person],
            "age": 20 + person % 50,
            "sex": np.where(person % 2 == 0, "Female", "Male"),
            "disease": np.array(["flu", "cold", "asthma", "none"])[person % 4],
            "admitted": admitted.strftime("%Y-%m-%d"),
            "discharged": (admitted + pd.to_timedelta(stay, unit="D")).strftime("%Y-%m-%d"),
        }
    )


def test_a_release_shifts_every_date_of_a_person_by_one_shift_and_keeps_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, KEY)
    raw = _visits()
    spec = _spec(tmp_path, raw)
    result = run_release(spec)
    assert result.passed and result.loaded.column_roles["admitted"] == "date_shifted"
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as connection:
        published = connection.sql("SELECT patient_id, admitted, discharged FROM visits_release").df()
    tokens = pseudonymize(raw["patient_id"], PseudonymKey(KEY.encode()), scope="stable")
    raw = raw.assign(token=tokens)
    shifts = {}
    for token, rows in raw.groupby("token"):
        out = published[published["patient_id"] == token]
        moved = pd.to_datetime(out["admitted"]).sort_values().to_numpy()
        original = pd.to_datetime(rows["admitted"]).sort_values().to_numpy()
        delta = {int(d) for d in (moved - original) // np.timedelta64(1, "D")}
        assert len(delta) == 1 and abs(next(iter(delta))) <= 30  # one shift per person, within the bound
        stays_out = (pd.to_datetime(out["discharged"]) - pd.to_datetime(out["admitted"])).sort_values().tolist()
        stays_in = (pd.to_datetime(rows["discharged"]) - pd.to_datetime(rows["admitted"])).sort_values().tolist()
        assert stays_out == stays_in
        shifts[token] = next(iter(delta))
    assert len(set(shifts.values())) > 10 and sum(s == 0 for s in shifts.values()) < 10  # spread, rarely 0
    summary = spec.report.release_json.read_text(encoding="utf-8")
    assert '"date_shifted": [\n      "admitted",\n      "discharged"\n    ]' in summary
    texts = [summary] + [p.read_text(errors="replace") for p in spec.report.directory.rglob("*") if p.is_file()]
    dates = set(raw["admitted"]) | set(raw["discharged"])
    assert not [d for text in texts for d in dates if d in text]


def test_a_row_without_a_person_loses_its_dates_instead_of_publishing_them_unshifted() -> None:
    from privacy_plugins.release.pseudonym_keys import PseudonymizeSpec, pseudonymized

    spec = PseudonymizeSpec.from_value(
        {"columns": ["pid"], "scope": "stable", "shift_dates": {"columns": ["day"], "max_days": 5}}
    )
    assert spec is not None
    frame = pd.DataFrame({"pid": ["a", None, "a"], "day": ["2024-03-01", "2024-03-02", "2024-03-04"]})
    out = pseudonymized(frame, spec, PseudonymKey(KEY.encode()))
    assert out["day"][1] is None and out["pid"][1] is None
    moved = pd.to_datetime(out["day"][[0, 2]]) - pd.to_datetime(frame["day"][[0, 2]])
    assert len(set(moved)) == 1 and abs(moved.iloc[0].days) <= 5


def test_bad_shift_settings_exit_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="max_days must be an integer >= 1"):
        _spec(tmp_path, _visits(4), max_days=0)
    with pytest.raises(ConfigurationError, match="by must be one of pseudonymize.columns"):
        _spec(tmp_path, _visits(4), by="age")
