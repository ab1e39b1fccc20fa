"""The ``pseudonymize:`` section of a release spec and where its key comes from (never the spec file).

```yaml
pseudonymize:
  columns: [patient_id]
  key: {env: PRIVACY_PLUGINS_PSEUDONYM_KEY}   # the default; or {conn_id: pseudonym_key} (its password),
                                              # or {resource: pseudonym_key} (a Dagster PseudonymKeyResource)
  scope: release                              # or stable: the same token in every release
  shift_dates: {columns: [admitted], max_days: 30}   # optional: each person's dates moved by one secret shift
```

``shift_dates`` moves every date of a person by the same number of days in ``[-max_days, max_days]``,
derived under the key from the person's id (``by:``, default the one pseudonym column; see
:func:`~privacy_plugins.core.pseudonyms.date_shift_days`): intervals within a person stay exact,
calendar dates do not. The shift follows the scope: the same person gets the same shift within a
release (``scope: release``) or in every release (``stable``).

The key is resolved in the load step, before any row is read: a missing or short key is a
``ConfigurationError`` naming the setting (exit 2), never the key. Orchestrators plug in
their own secret store with :func:`secret_resolver` (Airflow: the connection's password) and
:func:`resource_resolver` (Dagster: the key of the run's ``PseudonymKeyResource``).
The resolved :class:`~privacy_plugins.core.pseudonyms.PseudonymKey` hides its bytes in
``repr`` and refuses to be pickled, so it cannot reach a log, a report or XCom.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd

from privacy_plugins.core.pseudonyms import (
    MIN_KEY_BYTES,
    PseudonymKey,
    Scope,
    date_shift_days,
    new_release_salt,
    pseudonymize,
)
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.connections import env_variable

__all__ = ["DEFAULT_KEY_ENV", "DateShift", "PseudonymizeSpec", "pseudonymized", "resource_resolver", "secret_resolver"]

DEFAULT_KEY_ENV = "PRIVACY_PLUGINS_PSEUDONYM_KEY"

SecretResolver = Callable[[str], "str | None"]
"""Turns a ``conn_id`` into its password (``None`` when it has none)."""

_SECRETS: ContextVar[SecretResolver | None] = ContextVar("privacy_plugins_secret_resolver", default=None)
_RESOURCES: ContextVar[SecretResolver | None] = ContextVar("privacy_plugins_resource_resolver", default=None)


@contextmanager
def secret_resolver(resolver: SecretResolver) -> Iterator[None]:
    """Resolve ``key: {conn_id: …}`` with ``resolver`` inside the block (how Airflow plugs in its connections)."""
    token = _SECRETS.set(resolver)
    try:
        yield
    finally:
        _SECRETS.reset(token)


@contextmanager
def resource_resolver(resolver: SecretResolver) -> Iterator[None]:
    """Resolve ``key: {resource: …}`` with ``resolver`` inside the block (how Dagster plugs in its resources)."""
    token = _RESOURCES.set(resolver)
    try:
        yield
    finally:
        _RESOURCES.reset(token)


def _password_from_environment(conn_id: str) -> str | None:
    """The password of ``AIRFLOW_CONN_<ID>`` (URI or JSON), as Airflow's environment backend reads it."""
    text = os.environ.get(env_variable(conn_id), "").strip()
    if not text:
        raise ConfigurationError(f"connection {conn_id!r} is not defined (set {env_variable(conn_id)})")
    if text.startswith("{"):
        try:
            values = json.loads(text)
        except json.JSONDecodeError:
            raise ConfigurationError(f"connection {conn_id!r} ({env_variable(conn_id)}) is not valid JSON") from None
        password = values.get("password") if isinstance(values, Mapping) else None
        return None if password is None else str(password)
    password = urlsplit(text).password
    return unquote(password) if password else None


@dataclass(frozen=True)
class DateShift:
    """``pseudonymize.shift_dates``: the date columns shifted per person, the bound, and the person's column."""

    columns: tuple[str, ...]
    max_days: int
    by: str

    @classmethod
    def from_value(cls, value: object, pseudonyms: tuple[str, ...]) -> DateShift | None:
        """From the YAML mapping (``None``: no shifting)."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"pseudonymize.shift_dates must be a mapping, got {type(value).__name__}")
        unknown = [k for k in value if k not in ("columns", "max_days", "by")]
        if unknown:
            raise ConfigurationError(
                f"unknown key {unknown[0]!r} in pseudonymize.shift_dates; allowed: columns, max_days, by"
            )
        columns = value.get("columns")
        if isinstance(columns, str) or not isinstance(columns, (list, tuple)) or not columns:
            raise ConfigurationError("pseudonymize.shift_dates.columns must be a non-empty list of column names")
        max_days = value.get("max_days")
        if not isinstance(max_days, int) or isinstance(max_days, bool) or max_days < 1:
            raise ConfigurationError(f"pseudonymize.shift_dates.max_days must be an integer >= 1, got {max_days!r}")
        by = value.get("by")
        if by is None:
            if len(pseudonyms) != 1:
                raise ConfigurationError(
                    "pseudonymize.shift_dates.by must name the person's column (one of pseudonymize.columns)"
                )
            by = pseudonyms[0]
        if by not in pseudonyms:
            raise ConfigurationError(f"pseudonymize.shift_dates.by must be one of pseudonymize.columns, got {by!r}")
        shifted = tuple(str(c) for c in columns)
        if set(shifted) & set(pseudonyms) or len(set(shifted)) != len(shifted):
            raise ConfigurationError("pseudonymize.shift_dates.columns must be distinct date columns, not pseudonyms")
        return cls(shifted, max_days, str(by))


def shifted_dates(column: pd.Series, days: np.ndarray, name: str) -> pd.Series:
    """``column`` (dates as datetimes, dates or ISO text) moved by ``days``; text stays text, nulls stay null."""
    text = column.dtype == object or pd.api.types.is_string_dtype(column.dtype)
    try:
        parsed = pd.to_datetime(column, format="ISO8601") if text else pd.to_datetime(column)
    except (ValueError, TypeError):
        raise ConfigurationError(
            f"pseudonymize.shift_dates: column {name!r} does not hold dates (ISO 8601 text, dates or datetimes)"
        ) from None
    moved = parsed + pd.to_timedelta(days, unit="D")
    if not text:
        return moved.set_axis(column.index)
    timed = bool((parsed.dropna() != parsed.dropna().dt.normalize()).any())
    formatted = moved.dt.strftime("%Y-%m-%dT%H:%M:%S" if timed else "%Y-%m-%d")
    texts = formatted.to_numpy(dtype=object, na_value=None)
    texts[moved.isna().to_numpy()] = None
    return pd.Series(texts, index=column.index, name=column.name, dtype=object)


@dataclass(frozen=True)
class PseudonymizeSpec:
    """Which columns become keyed tokens, where the key comes from, and the tokens' scope."""

    columns: tuple[str, ...]
    key_env: str | None = DEFAULT_KEY_ENV
    key_conn_id: str | None = None
    scope: Scope = "release"
    key_resource: str | None = None
    shift_dates: DateShift | None = None

    KEYS = ("columns", "key", "scope", "shift_dates")

    def __post_init__(self) -> None:
        if not self.columns:
            raise ConfigurationError("pseudonymize.columns must name at least one column")
        if len(set(self.columns)) != len(self.columns):
            raise ConfigurationError(f"pseudonymize.columns lists a column twice: {list(self.columns)}")
        if self.scope not in ("release", "stable"):
            raise ConfigurationError(f"pseudonymize.scope must be 'release' or 'stable', got {self.scope!r}")
        if sum(source is not None for source in (self.key_env, self.key_conn_id, self.key_resource)) != 1:
            raise ConfigurationError("pseudonymize.key needs exactly one of env, conn_id or resource")

    @classmethod
    def from_value(cls, value: object) -> PseudonymizeSpec | None:
        """From the YAML section (``None``: no pseudonyms). A key written into the spec is refused."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"pseudonymize must be a mapping, got {type(value).__name__}")
        unknown = [k for k in value if k not in cls.KEYS]
        if unknown:
            raise ConfigurationError(f"unknown key {unknown[0]!r} in pseudonymize; allowed: {list(cls.KEYS)}")
        columns = value.get("columns")
        if isinstance(columns, str) or not isinstance(columns, (list, tuple)):
            raise ConfigurationError(
                f"pseudonymize.columns must be a list of column names, got {type(columns).__name__}"
            )
        key = value.get("key", {"env": DEFAULT_KEY_ENV})
        if not isinstance(key, Mapping) or set(key) - {"env", "conn_id", "resource"} or len(key) != 1:
            # never echo the value: it may be the key itself, written into the spec by mistake
            raise ConfigurationError(
                "pseudonymize.key must be {env: VARIABLE}, {conn_id: CONNECTION} or {resource: DAGSTER_RESOURCE}; "
                "the key itself never goes into a spec file"
            )
        env, conn_id, resource = key.get("env"), key.get("conn_id"), key.get("resource")
        for setting, given in (("env", env), ("conn_id", conn_id), ("resource", resource)):
            if given is not None and (not isinstance(given, str) or not given.strip()):
                raise ConfigurationError(f"pseudonymize.key.{setting} must be a name")
        names = tuple(str(c) for c in columns)
        return cls(
            columns=names,
            key_env=env,
            key_conn_id=conn_id,
            scope=value.get("scope", "release"),
            key_resource=resource,
            shift_dates=DateShift.from_value(value.get("shift_dates"), names),
        )

    @property
    def setting(self) -> str:
        """How the key is set, for messages (never the key)."""
        if self.key_env is not None:
            return f"pseudonymize.key (environment variable {self.key_env})"
        if self.key_resource is not None:
            return f"pseudonymize.key (Dagster resource {self.key_resource!r})"
        return f"pseudonymize.key (connection {self.key_conn_id!r})"

    def key(self) -> PseudonymKey:
        """The secret key, resolved now.

        Raises:
            ConfigurationError: the variable or connection is missing, or the key is shorter than 32 bytes.
        """
        if self.key_env is not None:
            secret = os.environ.get(self.key_env)
        elif self.key_resource is not None:
            from_resource = _RESOURCES.get()
            if from_resource is None:
                raise ConfigurationError(
                    f"{self.setting} is resolved only in a Dagster run: give the release assets a "
                    f"PseudonymKeyResource under the resource key {self.key_resource!r}"
                )
            secret = from_resource(self.key_resource)
        else:
            assert self.key_conn_id is not None
            resolver = _SECRETS.get() or _password_from_environment
            try:
                secret = resolver(self.key_conn_id)
            except ConfigurationError as exc:
                raise ConfigurationError(f"{self.setting}: {exc}") from None
        if not secret:
            where = "is not set" if self.key_conn_id is None else "has no password"
            raise ConfigurationError(
                f"{self.setting} {where}: set it to a random secret of at least {MIN_KEY_BYTES} bytes "
                "(e.g. the output of `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
            )
        return PseudonymKey(secret.encode("utf-8"), setting=self.setting)

    def describe(self) -> dict[str, Any]:
        """For reports: the columns, the scope and where the key comes from (never the key)."""
        source = {"env": self.key_env} if self.key_env is not None else {"conn_id": self.key_conn_id}
        if self.key_resource is not None:
            source = {"resource": self.key_resource}
        described: dict[str, Any] = {"columns": list(self.columns), "scope": self.scope, "key": source}
        if self.shift_dates is not None:
            shift = self.shift_dates
            described["shift_dates"] = {"columns": list(shift.columns), "max_days": shift.max_days, "by": shift.by}
        return described


def pseudonymized(frame: pd.DataFrame, spec: PseudonymizeSpec, key: PseudonymKey) -> pd.DataFrame:
    """``frame`` with every pseudonym column replaced by its token (a fresh salt per call for ``scope: release``).

    One call per release run: the tables of one release share the salt, so their tokens join.
    """
    salt = new_release_salt() if spec.scope == "release" else None
    out = frame.copy(deep=False)
    if spec.shift_dates is not None:  # from the raw ids, before they become tokens
        shift = spec.shift_dates
        days = date_shift_days(frame[shift.by], key, max_days=shift.max_days, scope=spec.scope, salt=salt)
        unknown = frame[shift.by].isna().to_numpy()  # no person, no shift: those dates are not published
        for column in shift.columns:
            out[column] = shifted_dates(frame[column].mask(unknown), days, column)
    for column in spec.columns:
        out[column] = pseudonymize(frame[column], key, scope=spec.scope, salt=salt)
    return out
