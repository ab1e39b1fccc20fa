"""ExpectTableToComposeWithHistory (issue 26): the intersection attack over a table and its release history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.history import COUNT, class_signature

SOURCE = pd.DataFrame({"age": [21, 22, 23, 24, 25, 26], "disease": ["flu", "hiv", "flu", "cold", "hiv", "flu"]})
FIRST = SOURCE.assign(age=["[21-22]"] * 2 + ["[23-24]"] * 2 + ["[25-26]"] * 2)
NARROWING = SOURCE.assign(age=["[21-23]"] * 3 + ["[24-26]"] * 3)  # 23 and 24 keep one value once intersected


def _history(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """A history's class table: each release's signature with its sequence number."""
    return pd.concat(
        [class_signature(f, ["age"], ["disease"]).assign(__release=i) for i, f in enumerate(frames, 1)],
        ignore_index=True,
    )


def _expectation(tmp_path: Path, history: str, **extra: Any) -> Any:
    from privacy_plugins.integrations.gx import ExpectTableToComposeWithHistory

    source = tmp_path / "source.parquet"
    SOURCE.to_parquet(source, index=False)
    return ExpectTableToComposeWithHistory(
        quasi_identifiers=["age"], sensitive_attribute="disease", history=history, source=str(source), **extra
    )


def test_a_release_that_narrows_the_history_fails_with_the_attacks_counts(
    tmp_path: Path, pandas_batch: Callable[[pd.DataFrame], Any]
) -> None:
    history = tmp_path / "pp_history_demo.parquet"
    _history([FIRST]).to_parquet(history, index=False)
    result = pandas_batch(NARROWING).validate(_expectation(tmp_path, str(history)))
    oracle = intersection_attack(SOURCE, [FIRST, NARROWING], quasi_identifiers=["age"], sensitive_attribute="disease")
    assert not result.success and oracle.overall.below_l > 0
    assert result.result["observed_value"] == oracle.overall.below_l
    assert result.result["details"]["attack"] == oracle.to_dict() and result.result["details"]["releases"] == 2


def test_the_same_release_again_passes_and_a_duckdb_history_is_read(
    tmp_path: Path, pandas_batch: Callable[[pd.DataFrame], Any]
) -> None:
    import duckdb

    path = tmp_path / "release.duckdb"
    classes = _history([FIRST, FIRST])
    with duckdb.connect(str(path)) as connection:
        connection.register("classes", classes)
        connection.execute("CREATE TABLE pp_history_demo AS SELECT * FROM classes")
    result = pandas_batch(FIRST).validate(_expectation(tmp_path, str(path), history_table="pp_history_demo"))
    assert result.success and result.result["observed_value"] == 0
    assert result.result["details"]["history_releases"] == 2
    assert COUNT in classes.columns  # the history's counts travel with it (ignored by the attack's value sets)


def test_bad_history_settings_are_errors_never_a_pass(
    tmp_path: Path, pandas_batch: Callable[[pd.DataFrame], Any]
) -> None:
    from privacy_plugins.integrations.gx import outcome

    missing = pandas_batch(FIRST).validate(_expectation(tmp_path, str(tmp_path / "nope.parquet")))
    assert outcome(missing).status == "error" and "nope.parquet" in outcome(missing).message
    (tmp_path / "h.duckdb").touch()
    unnamed = pandas_batch(FIRST).validate(_expectation(tmp_path, str(tmp_path / "h.duckdb")))
    assert outcome(unnamed).status == "error" and "history_table" in outcome(unnamed).message
    with pytest.raises(ValueError, match="is a quasi-identifier"):
        _expectation(tmp_path, "h.parquet").__class__(
            quasi_identifiers=["age"], sensitive_attribute="age", history="h.parquet", source="s.parquet"
        )
