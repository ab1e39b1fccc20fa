"""The DuckDB token function computes the in-memory path's tokens, inside the engine, the key never in SQL."""

from __future__ import annotations

import duckdb
import pandas as pd
import pyarrow as pa
import pytest

from privacy_plugins.core import pseudonym_kernel
from privacy_plugins.core.pseudonyms import PseudonymKey, new_release_salt, pseudonymize
from privacy_plugins.engines import duckdb_pseudonyms
from privacy_plugins.engines.duckdb_pseudonyms import register_pseudonym_function
from privacy_plugins.errors import ConfigurationError

SECRET = b"a duckdb test key of 32 bytes or more"


@pytest.mark.parametrize("scope", ["stable", "release"])
def test_tokens_in_duckdb_equal_the_in_memory_tokens_and_nulls_stay_null(scope: str) -> None:
    key, salt = PseudonymKey(SECRET), new_release_salt() if scope == "release" else None
    values = pd.Series([f"id-{i % 3000}" for i in range(5000)] + [None], dtype=object)
    connection = duckdb.connect()
    register_pseudonym_function(connection, "pp_token", key, scope=scope, salt=salt)  # type: ignore[arg-type]
    connection.register("ids", pd.DataFrame({"id": values}))
    tokens = connection.execute("SELECT pp_token(id) AS t FROM ids").df()["t"]
    expected = pseudonymize(values, key, scope=scope, salt=salt)  # type: ignore[arg-type]
    assert tokens.iloc[:-1].tolist() == expected.iloc[:-1].tolist() and pd.isna(tokens.iloc[-1])
    assert not set(values.dropna()) & set(tokens.dropna())
    other = duckdb.connect()
    register_pseudonym_function(other, "pp_token", PseudonymKey(SECRET + b"!"), scope=scope, salt=salt)  # type: ignore[arg-type]
    assert (
        other.execute("SELECT pp_token('id-1')").fetchone() != connection.execute("SELECT pp_token('id-1')").fetchone()
    )


def test_a_bad_scope_fails_when_the_function_is_registered() -> None:
    with pytest.raises(ConfigurationError, match="needs a release salt"):
        register_pseudonym_function(duckdb.connect(), "pp_token", PseudonymKey(SECRET), scope="release")


@pytest.mark.skipif(not pseudonym_kernel.AVAILABLE, reason="numba (the 'fast' extra) is not installed")
def test_with_numba_duckdb_batches_go_through_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nulls, empty strings, long values and sliced batches; the per-value hashlib path is never called."""
    key, salt = PseudonymKey(SECRET), new_release_salt()
    values = pd.Series(["", None, "é" * 40, "x" * 70, *(f"p-{i}" for i in range(5000)), None], dtype=object)
    expected = pseudonymize(values, key, scope="release", salt=salt)
    connection = duckdb.connect()
    register_pseudonym_function(connection, "pp_token", key, scope="release", salt=salt)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hashlib path ran")

    monkeypatch.setattr(duckdb_pseudonyms, "pseudonymize", refuse)
    connection.register("ids", pd.DataFrame({"id": values}))
    tokens = connection.execute("SELECT pp_token(id) AS t FROM ids").df()["t"]
    assert [None if pd.isna(t) else t for t in tokens] == expected.tolist()
    sliced = pa.array(values.tolist(), type=pa.string()).slice(1, 4)
    assert duckdb_pseudonyms._compiled_tokens(sliced, key, "release", salt).to_pylist() == expected[1:5].tolist()
