"""The MODP cipher run by OpenSSL gives exactly the stdlib ``pow`` values, and rejects what ``pow`` rejects."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from privacy_plugins.core.distributed import MODP_2048_PRIME, ModpCipher, ProtocolError
from privacy_plugins.distributed import make_cipher
from privacy_plugins.distributed.modp_openssl import OpenSSLModpCipher, openssl_available

pytestmark = pytest.mark.skipif(not openssl_available(), reason="cryptography offers no finite-field DH")


@settings(max_examples=15, deadline=None)
@given(key=st.integers(2, 2**256), ids=st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_openssl_equals_pow(key: int, ids: list[str]) -> None:
    fast, slow = OpenSSLModpCipher(key), ModpCipher(key)
    elements = slow.hash_to_group(ids, b"salt")
    assert fast.hash_to_group(ids, b"salt") == elements
    assert fast.encrypt(elements) == slow.encrypt(elements)
    other = OpenSSLModpCipher()  # commutes with an independent key
    assert other.encrypt(fast.encrypt(elements)) == fast.encrypt(other.encrypt(elements))


@pytest.mark.parametrize(
    "element",
    [(1).to_bytes(256, "big"), (MODP_2048_PRIME - 1).to_bytes(256, "big"), bytes(255), b"\xff" * 256],
)
def test_openssl_rejects_non_elements(element: bytes) -> None:
    with pytest.raises(ProtocolError, match="not an element"):
        OpenSSLModpCipher().encrypt([element])


def test_make_cipher_uses_openssl_for_modp() -> None:
    cipher = make_cipher("modp2048")
    assert isinstance(cipher, OpenSSLModpCipher) and cipher.group == ModpCipher().group
