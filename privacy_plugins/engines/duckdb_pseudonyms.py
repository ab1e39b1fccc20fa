"""Keyed pseudonyms computed inside DuckDB: a vectorized (Arrow) scalar UDF over the core's token function.

DuckDB has ``sha256()`` but no keyed HMAC; :func:`register_pseudonym_function` registers
``name(VARCHAR) -> VARCHAR`` on a DuckDB connection. DuckDB hands the UDF one Arrow batch at
a time (about 2,048 values); each batch's distinct values are hashed once by
:func:`~privacy_plugins.core.pseudonyms.pseudonymize`, so the tokens equal the in-memory
path's token for token, and no row leaves the engine except through the function's batches.
The key stays in the function's closure: it is never part of the SQL text or a parameter.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from privacy_plugins.core.pseudonyms import PseudonymKey, Scope, pseudonymize

__all__ = ["register_pseudonym_function"]


def register_pseudonym_function(
    connection: Any, name: str, key: PseudonymKey, *, scope: Scope = "release", salt: bytes | None = None
) -> None:
    """Register ``name(value VARCHAR) -> VARCHAR`` on a ``duckdb.DuckDBPyConnection``: the value's token.

    Nulls stay null. Non-text columns are cast to ``VARCHAR`` by the caller (``name(CAST(c AS VARCHAR))``);
    integers then key like the in-memory path's integers.

    Example:
        >>> import duckdb
        >>> from privacy_plugins.core.pseudonyms import token
        >>> con, key = duckdb.connect(), PseudonymKey(b"k" * 32)
        >>> register_pseudonym_function(con, "pp_token", key, scope="stable")
        >>> con.execute("SELECT pp_token('a')").fetchone()[0] == token("a", key, scope="stable")
        True
    """
    import duckdb
    import pyarrow as pa

    pseudonymize(pd.Series(["check"]), key, scope=scope, salt=salt)  # a bad scope or salt fails now, not in SQL

    def tokens(values: Any) -> Any:
        column = values.to_pandas(types_mapper=None)
        return pa.array(pseudonymize(column, key, scope=scope, salt=salt).to_numpy(), type=pa.string())

    connection.create_function(
        name,
        tokens,
        [duckdb.sqltype("VARCHAR")],
        duckdb.sqltype("VARCHAR"),
        type="arrow",
        null_handling="special",
        side_effects=False,
    )
