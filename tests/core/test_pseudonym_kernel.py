"""The compiled HMAC-SHA256 kernel gives exactly the tokens of ``core.pseudonyms.token``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core import pseudonym_kernel
from privacy_plugins.core.pseudonyms import TOKEN_LENGTH, PseudonymKey, pseudonymize, token, utf8_tokens

pytestmark = pytest.mark.skipif(not pseudonym_kernel.AVAILABLE, reason="numba (the 'fast' extra) is not installed")

KEY = PseudonymKey(b"a kernel test key, 32 bytes or longer")
SALT = b"sixteen byte salt"


def _buffers(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.cumsum([0, *map(len, encoded)]).astype(np.int32)
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)


def _split(out: np.ndarray) -> list[str]:
    return [bytes(out[i : i + TOKEN_LENGTH]).decode("ascii") for i in range(0, len(out), TOKEN_LENGTH)]


# lengths around the SHA-256 block edges: 55 bytes fit one padded block, 56..63 need two, 64+ a whole block more
EDGES = ["", "a", "x" * 55, "x" * 56, "x" * 63, "x" * 64, "x" * 119, "x" * 120, "é" * 28, "\U0001f600" * 30]


@pytest.mark.parametrize("scope,salt", [("stable", None), ("release", SALT)])
def test_block_edges_give_the_reference_tokens(scope: str, salt: bytes | None) -> None:
    out = utf8_tokens(*_buffers(EDGES), KEY, scope=scope, salt=salt)  # type: ignore[arg-type]
    assert out is not None
    assert _split(out) == [token(v, KEY, scope=scope, salt=salt) for v in EDGES]  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=150), st.binary(max_size=150).map(lambda b: b.hex())), max_size=30))
def test_random_unicode_values_give_the_reference_tokens(values: list[str]) -> None:
    out = utf8_tokens(*_buffers(values), KEY, scope="release", salt=SALT)
    assert out is not None
    assert _split(out) == pseudonymize(pd.Series(values, dtype=object), KEY, scope="release", salt=SALT).tolist()


def test_the_kernel_reads_only_between_its_offsets() -> None:
    offsets, data = _buffers(["skip", "ab", "cd", "tail"])
    out = utf8_tokens(offsets[1:3], data, KEY, scope="stable")
    assert out is not None and _split(out) == [token("ab", KEY, scope="stable")]
