"""Named connections (``conn_id``) for SQL sources and destinations, resolved only when connecting.

A spec can say ``source: {conn_id: warehouse, table: people}`` or
``destination: {conn_id: warehouse, table: people_release}`` instead of a URL,
so credentials live in the orchestrator's connection store, not in the spec.
The name is resolved at the moment a step connects — never when the spec is
read — so the URL with its password is never part of a spec, an artifact, a
template field, an XCom, a report or a log line; every message names only the
``conn_id``.

How a name is resolved:

* inside an Airflow task, through Airflow's connections and hooks (the release
  operators install that resolver, see :func:`connection_resolver`);
* anywhere else, from the environment variable ``AIRFLOW_CONN_<ID>`` (``<ID>``
  upper-cased), in Airflow's URI form (``postgres://user:pw@host:5432/db``,
  ``sqlite://%2Ftmp%2Fpeople.db`` or ``sqlite:////tmp/people.db``) or its JSON form
  (``{"conn_type": "postgres", "host": ..., "login": ..., "password": ...}``);
* otherwise it fails with a :class:`ConfigurationError` naming the ``conn_id``
  and the variable to set.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from privacy_plugins.errors import ConfigurationError

__all__ = [
    "ENV_PREFIX",
    "ConnectionFields",
    "Resolver",
    "connection_resolver",
    "env_variable",
    "from_environment",
    "resolve_url",
    "sqlalchemy_url",
]

ENV_PREFIX = "AIRFLOW_CONN_"

Resolver = Callable[[str], str]
"""Turns a ``conn_id`` into a SQLAlchemy URL (or raises ``ConfigurationError``)."""

_RESOLVER: ContextVar[Resolver | None] = ContextVar("privacy_plugins_connection_resolver", default=None)

# Airflow connection types → SQLAlchemy dialect (``extra.sqlalchemy_scheme`` overrides, e.g. ``postgresql+psycopg``).
_DIALECTS = {
    "postgres": "postgresql",
    "postgresql": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "mssql",
    "oracle": "oracle",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "snowflake": "snowflake",
    "redshift": "redshift",
    "trino": "trino",
}
_CONN_ID = re.compile(r"[A-Za-z0-9_.-]{1,250}")


@dataclass(frozen=True)
class ConnectionFields:
    """The parts of an Airflow-style connection; its ``repr`` never shows the password."""

    conn_type: str
    host: str | None = None
    login: str | None = None
    password: str | None = field(default=None, repr=False)
    schema: str | None = None
    port: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def env_variable(conn_id: str) -> str:
    """The environment variable that holds ``conn_id`` outside Airflow (``AIRFLOW_CONN_WAREHOUSE``)."""
    return ENV_PREFIX + conn_id.upper()


def _check_conn_id(conn_id: object, setting: str) -> str:
    if not isinstance(conn_id, str) or not _CONN_ID.fullmatch(conn_id):
        raise ConfigurationError(f"{setting} must be a connection id (letters, digits, '_', '.', '-'), got {conn_id!r}")
    return conn_id


def _parse_uri(conn_id: str, text: str) -> ConnectionFields:
    """Airflow's URI form: ``type://login:password@host:port/schema?extra`` (host/schema URL-quoted)."""
    parts = urlsplit(text)
    if not parts.scheme:
        raise ConfigurationError(f"connection {conn_id!r} ({env_variable(conn_id)}) is not a URI like type://host/db")
    extra: dict[str, Any] = dict(parse_qsl(parts.query, keep_blank_values=True))
    if "__extra__" in extra:
        extra = dict(json.loads(extra.pop("__extra__")))
    try:
        port = parts.port
    except ValueError:
        raise ConfigurationError(f"connection {conn_id!r} ({env_variable(conn_id)}) has a bad port") from None
    return ConnectionFields(
        conn_type=parts.scheme.replace("-", "_"),
        host=_host(parts.netloc),
        login=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        schema=unquote(parts.path[1:]) or None,
        port=port,
        extra=extra,
    )


def _host(netloc: str) -> str | None:
    """The host of ``login:password@host:port`` keeping its case and URL-quoting undone."""
    host = re.sub(r":\d+$", "", netloc.rsplit("@", 1)[-1])
    return unquote(host) or None


def _parse_json(conn_id: str, text: str) -> ConnectionFields:
    try:
        values = json.loads(text)
    except json.JSONDecodeError:
        raise ConfigurationError(f"connection {conn_id!r} ({env_variable(conn_id)}) is not valid JSON") from None
    if not isinstance(values, Mapping) or "conn_type" not in values:
        raise ConfigurationError(f"connection {conn_id!r} ({env_variable(conn_id)}) needs a conn_type")
    extra = values.get("extra") or {}
    if isinstance(extra, str):
        extra = json.loads(extra)
    port = values.get("port")
    return ConnectionFields(
        conn_type=str(values["conn_type"]).replace("-", "_"),
        host=values.get("host"),
        login=values.get("login"),
        password=values.get("password"),
        schema=values.get("schema"),
        port=int(port) if port not in (None, "") else None,
        extra=dict(extra),
    )


def sqlalchemy_url(conn_id: str, fields: ConnectionFields) -> str:
    """The SQLAlchemy URL of a connection (its password included: pass it only to ``create_engine``).

    Raises:
        ConfigurationError: the connection type has no SQLAlchemy dialect (names only the ``conn_id`` and type).
    """
    from sqlalchemy.engine import URL

    scheme = fields.extra.get("sqlalchemy_scheme") or _DIALECTS.get(fields.conn_type)
    if scheme is None:
        raise ConfigurationError(
            f"connection {conn_id!r} has type {fields.conn_type!r}, which is not a SQL database this release can "
            f"read or write; known types: {sorted(_DIALECTS)} (or set extra.sqlalchemy_scheme)"
        )
    if str(scheme).startswith("sqlite") or str(scheme).startswith("duckdb"):
        database = fields.host or fields.schema
        if not database:
            raise ConfigurationError(f"connection {conn_id!r} ({fields.conn_type}) names no database file (host)")
        return URL.create(str(scheme), database=database).render_as_string(hide_password=False)
    query = {str(k): str(v) for k, v in fields.extra.items() if k != "sqlalchemy_scheme" and isinstance(v, str)}
    url = URL.create(
        str(scheme),
        username=fields.login or None,
        password=fields.password or None,
        host=fields.host or None,
        port=fields.port,
        database=fields.schema or None,
        query=query,
    )
    return url.render_as_string(hide_password=False)


def from_environment(conn_id: str) -> str:
    """Resolve ``conn_id`` from ``AIRFLOW_CONN_<ID>`` (URI or JSON), as Airflow's environment backend does.

    Raises:
        ConfigurationError: the variable is not set or cannot be parsed (the message never shows its value).
    """
    name = env_variable(conn_id)
    text = os.environ.get(name, "").strip()
    if not text:
        raise ConfigurationError(
            f"connection {conn_id!r} is not defined: outside Airflow set the environment variable {name} to its URI "
            f"(e.g. {name}='postgres://user:password@host:5432/database'); inside Airflow define the connection"
        )
    fields = _parse_json(conn_id, text) if text.startswith("{") else _parse_uri(conn_id, text)
    return sqlalchemy_url(conn_id, fields)


@contextmanager
def connection_resolver(resolver: Resolver) -> Iterator[None]:
    """Resolve connection ids with ``resolver`` inside the block (how an orchestrator plugs in its own store)."""
    token = _RESOLVER.set(resolver)
    try:
        yield
    finally:
        _RESOLVER.reset(token)


def resolve_url(conn_id: str, *, setting: str) -> str:
    """The SQLAlchemy URL for ``conn_id``: the active resolver's, else the environment's.

    Args:
        conn_id: the connection's id from the spec.
        setting: the spec setting, for messages (``source.conn_id``).

    Raises:
        ConfigurationError: ``setting: connection 'x' ...`` — never with the URL or password in it.
    """
    _check_conn_id(conn_id, setting)
    resolver = _RESOLVER.get() or from_environment
    try:
        return resolver(conn_id)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{setting}: {exc}") from None
