"""Issue 27 in ``anonymize()`` and the ``anonymize`` command: a column with no role is refused, or dropped."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.cli import main
from privacy_plugins.errors import ConfigurationError

TABLE = pd.DataFrame(
    {
        "age": [30, 31, 32, 33, 40, 41, 42, 43],
        "email": [f"p{i}@example.org" for i in range(8)],
        "note": list("abcdefgh"),
    }
)


def test_anonymize_refuses_a_column_with_no_role_by_default() -> None:
    with pytest.raises(ConfigurationError, match=r"\['email', 'note'\] have no role.*insensitive=.*unlisted_columns"):
        pp.anonymize(TABLE, algorithm="mondrian", quasi_identifiers=["age"], models=[pp.KAnonymity(4)])


def test_insensitive_columns_are_published_unchanged_and_drop_leaves_the_unlisted_out() -> None:
    kept = pp.anonymize(
        TABLE, algorithm="mondrian", quasi_identifiers=["age"], models=[pp.KAnonymity(4)],
        identifiers=["email"], insensitive=["note"],
    )  # fmt: skip
    assert list(kept.table.columns) == ["age", "note"] and kept.table["note"].tolist() == list("abcdefgh")
    dropped = pp.anonymize(
        TABLE, algorithm="mondrian", quasi_identifiers=["age"], models=[pp.KAnonymity(4)], unlisted_columns="drop"
    )
    assert list(dropped.table.columns) == ["age"]
    with pytest.raises(ConfigurationError, match="unlisted_columns must be 'refuse' or 'drop'"):
        pp.anonymize(TABLE, quasi_identifiers=["age"], models=[pp.KAnonymity(4)], unlisted_columns="keep")


def test_the_cli_exits_2_naming_the_column_and_accepts_insensitive_and_drop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "people.csv", tmp_path / "out.csv"
    TABLE.to_csv(data, index=False)
    base = ["anonymize", str(data), "--algorithm", "mondrian", "--quasi-identifiers", "age", "--k", "4", "--quiet"]
    assert main([*base, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "['email', 'note'] have no role" in err and "@example.org" not in err
    assert not out.exists()
    assert main([*base, "--identifiers", "email", "--insensitive", "note", "--out", str(out)]) == 0
    assert list(pd.read_csv(out).columns) == ["age", "note"]
    assert main([*base, "--unlisted-columns", "drop", "--out", str(out)]) == 0
    assert list(pd.read_csv(out).columns) == ["age"]
