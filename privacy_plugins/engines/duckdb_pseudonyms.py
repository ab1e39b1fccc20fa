"""Keyed pseudonyms computed inside DuckDB: a vectorized (Arrow) scalar UDF over the core's token function.

DuckDB has ``sha256()`` but no keyed HMAC; :func:`register_pseudonym_function` registers
``name(VARCHAR) -> VARCHAR`` on a DuckDB connection. DuckDB hands the UDF one Arrow batch at
a time (about 2,048 values). With numba (the ``fast`` extra) the batch's offsets and bytes
go to one compiled HMAC-SHA256 call (:func:`~privacy_plugins.core.pseudonyms.utf8_tokens`)
and the tokens come back as an Arrow string array built on the kernel's bytes, without a
Python object per value; without numba each batch's distinct values are hashed by
:func:`~privacy_plugins.core.pseudonyms.pseudonymize`. Either way the tokens equal the
in-memory path's token for token, and no row leaves the engine except through the batches.
The key stays in the function's closure: it is never part of the SQL text or a parameter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.pseudonyms import TOKEN_LENGTH, PseudonymKey, Scope, pseudonymize, utf8_tokens

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
        compiled = _compiled_tokens(values, key, scope, salt)
        if compiled is not None:
            return compiled
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


def _compiled_tokens(values: Any, key: PseudonymKey, scope: Scope, salt: bytes | None) -> Any:
    """The batch's tokens from the compiled kernel, as an Arrow string array (``None`` without numba)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type == pa.string_view():
        values = values.cast(pa.large_string())
    width = np.int64 if values.type == pa.large_string() else np.int32
    count = len(values)
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=width)[values.offset : values.offset + count + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, dtype=np.uint8)
    out = utf8_tokens(offsets, data, key, scope=scope, salt=salt)
    if out is None:
        return None
    validity = values.is_valid().buffers()[1] if values.null_count else None
    token_offsets = np.arange(0, (count + 1) * TOKEN_LENGTH, TOKEN_LENGTH, dtype=np.int32)
    return pa.StringArray.from_buffers(count, pa.py_buffer(token_offsets), pa.py_buffer(out), validity)
