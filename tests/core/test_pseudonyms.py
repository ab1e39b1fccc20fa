"""Keyed pseudonym tokens: determinism, key/salt separation, no raw value, no key anywhere."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.pseudonyms import (
    TOKEN_LENGTH,
    PseudonymKey,
    new_release_salt,
    pseudonymize,
    token,
)
from privacy_plugins.errors import ConfigurationError

SECRET = b"0123456789abcdef0123456789abcdef-secret"
KEY = PseudonymKey(SECRET)
TOKEN = re.compile(r"[a-z2-7]{26}")
keys = st.binary(min_size=32, max_size=48)
salts = st.binary(min_size=16, max_size=24)
values = st.one_of(st.text(max_size=20), st.integers(), st.from_regex(r"[a-z]{1,8}@[a-z]{1,8}\.org", fullmatch=True))


@settings(max_examples=50)
@given(value=values, secret=keys, salt=salts)
def test_tokens_are_stable_under_the_same_key_and_scope(value: object, secret: bytes, salt: bytes) -> None:
    first = token(value, PseudonymKey(secret), scope="release", salt=salt)
    again = token(value, PseudonymKey(bytes(secret)), scope="release", salt=bytes(salt))
    assert first == again
    assert token(value, PseudonymKey(secret), scope="stable") == token(value, PseudonymKey(secret), scope="stable")
    assert TOKEN.fullmatch(first) and len(first) == TOKEN_LENGTH
    assert first != str(value)


@settings(max_examples=50)
@given(value=values, first=keys, second=keys, salt=salts, other_salt=salts)
def test_tokens_differ_across_keys_salts_and_scopes(
    value: object, first: bytes, second: bytes, salt: bytes, other_salt: bytes
) -> None:
    if first != second:
        assert token(value, PseudonymKey(first), scope="stable") != token(value, PseudonymKey(second), scope="stable")
    if salt != other_salt:
        assert token(value, PseudonymKey(first), salt=salt) != token(value, PseudonymKey(first), salt=other_salt)
    assert token(value, PseudonymKey(first), salt=salt) != token(value, PseudonymKey(first), scope="stable")


@settings(max_examples=30)
@given(column=st.lists(st.one_of(st.none(), st.text(max_size=8)), max_size=40))
def test_a_column_maps_each_value_to_its_token_and_keeps_nulls(column: list[str | None]) -> None:
    salt = new_release_salt()
    series = pd.Series(column, dtype=object, index=np.arange(len(column)) * 3, name="patient_id")
    out = pseudonymize(series, KEY, salt=salt)
    assert out.index.equals(series.index) and out.name == "patient_id"
    for raw, tok in zip(column, out, strict=True):
        if raw is None:
            assert tok is None
        else:
            assert tok == token(raw, KEY, salt=salt) and tok != raw
    # equal values get equal tokens, different values different ones
    assert out.dropna().nunique() == series.dropna().nunique()


def test_the_token_is_hmac_sha256_in_lowercase_base32() -> None:
    mac_key = hmac.digest(SECRET, b"privacy_plugins pseudonym v1\x00stable\x00", hashlib.sha256)
    raws = ["alice", "", "ünïcode", "x" * 1000, *(f"id-{i}" for i in range(300))]
    expected = [
        base64.b32encode(hmac.digest(mac_key, raw.encode(), hashlib.sha256)[:16]).decode().rstrip("=").lower()
        for raw in raws
    ]
    assert pseudonymize(pd.Series(raws), KEY, scope="stable").tolist() == expected


def test_integral_floats_of_an_id_column_with_nulls_match_the_integers() -> None:
    with_nulls = pseudonymize(pd.Series([1001, None, 1002]).astype(float), KEY, scope="stable")
    plain = pseudonymize(pd.Series([1001, 1002]), KEY, scope="stable")
    assert with_nulls[0] == plain[0] and with_nulls[2] == plain[1] and with_nulls[1] is None
    assert pseudonymize(pd.Series([pd.NA, np.nan], dtype=object), KEY, scope="stable").isna().all()


@pytest.mark.parametrize("secret", [b"", b"qzxj", SECRET[:31]])
def test_a_short_key_is_refused_naming_the_setting_not_the_key(secret: bytes) -> None:
    with pytest.raises(ConfigurationError, match=r"pseudonymize\.key is too short") as raised:
        PseudonymKey(secret, setting="pseudonymize.key")
    if secret:
        assert secret.decode() not in str(raised.value)


def test_a_key_that_is_not_bytes_is_refused_without_echoing_it() -> None:
    text_key = SECRET.decode()
    with pytest.raises(ConfigurationError, match="must be bytes") as raised:
        PseudonymKey(text_key)  # type: ignore[arg-type]
    assert text_key not in str(raised.value)


@pytest.mark.parametrize(
    ("scope", "salt", "message"),
    [
        ("release", None, "needs a release salt"),
        ("release", b"too short", "needs a release salt"),
        ("stable", b"s" * 16, "must not be given"),
        ("forever", None, "must be 'release' or 'stable'"),
    ],
)
def test_bad_scope_and_salt_are_configuration_errors(scope: str, salt: bytes | None, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        pseudonymize(pd.Series(["a"]), KEY, scope=scope, salt=salt)  # type: ignore[arg-type]


def test_the_key_never_shows_in_repr_str_errors_or_pickles() -> None:
    texts = [repr(KEY), str(KEY), f"{KEY}", repr([KEY]), repr({"key": KEY})]
    with pytest.raises(TypeError) as raised:
        pickle.dumps(KEY)
    texts.append(str(raised.value))
    with pytest.raises(ConfigurationError) as bad_scope:
        pseudonymize(pd.Series(["a"]), KEY, scope="nope")  # type: ignore[arg-type]
    texts.append(str(bad_scope.value))
    for text in texts:
        assert SECRET.decode() not in text and SECRET.hex() not in text
    assert copy.deepcopy(KEY) is KEY and copy.copy(KEY) is KEY
    assert not hasattr(KEY, "__dict__")


@pytest.mark.parametrize("null", [None, float("nan"), pd.NA, pd.NaT, np.nan])
def test_a_null_has_no_single_token(null: object) -> None:
    with pytest.raises(ConfigurationError, match="null"):
        token(null, KEY, scope="stable")


def test_a_raw_key_where_a_pseudonym_key_belongs_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigurationError, match="must be a PseudonymKey") as raised:
        pseudonymize(pd.Series(["a"]), SECRET, scope="stable")  # type: ignore[arg-type]
    assert SECRET.decode() not in str(raised.value) and SECRET.decode() not in repr(raised.value)
