"""PrivacyHook: a release's source or destination database opened from an Airflow Connection.

Any connection whose type has a SQL hook (a common.sql ``DbApiHook``: postgres,
mysql, snowflake, …) opens through that hook's ``get_sqlalchemy_engine``, so the
provider's own rules (drivers, ``extra`` options, IAM tokens) apply rather than
a table of ours. This provider adds one connection type, ``privacy_duckdb``: a
DuckDB database file (the release's default destination; no Airflow provider
has a DuckDB connection), whose hook is ``PrivacyHook`` itself.

Only a connection type with no installed hook (e.g. ``sqlite`` without the
sqlite provider) falls back to the field mapping of
:func:`privacy_plugins.release.connections.sqlalchemy_url`, with a warning.
Every password is registered with Airflow's secrets masker before use.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow.sdk import BaseHook

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.connections import ConnectionFields, sqlalchemy_url

try:  # common.sql gives get_sqlalchemy_engine / get_uri / test_connection the way SQL providers have them
    from airflow.providers.common.sql.hooks.sql import DbApiHook as _SqlHook
except ImportError:  # pragma: no cover  (common.sql ships with Airflow's standard install)
    _SqlHook = BaseHook  # type: ignore[misc,assignment]

__all__ = ["PrivacyHook", "connection_url"]

log = logging.getLogger(__name__)


class PrivacyHook(_SqlHook):
    """The ``privacy_duckdb`` connection: a DuckDB database file named by the connection's ``host``.

    ``PrivacyHook.connection_url(conn_id)`` opens *any* connection a spec names (see :func:`connection_url`).
    """

    conn_name_attr = "privacy_conn_id"
    default_conn_name = "privacy_default"
    conn_type = "privacy_duckdb"
    hook_name = "DuckDB file (Privacy Plugins)"
    supports_autocommit = True

    def __init__(self, *args: Any, privacy_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.privacy_conn_id = privacy_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """The connection form: only the database file (``host``) and a description."""
        return {
            "hidden_fields": ["login", "password", "port", "schema", "extra"],
            "relabeling": {"host": "DuckDB database file"},
            "placeholders": {"host": "/data/releases/release.duckdb"},
        }

    @property
    def sqlalchemy_url(self) -> Any:
        """``duckdb:///<host>`` (common.sql's ``get_sqlalchemy_engine`` builds the engine from it)."""
        from sqlalchemy.engine import URL

        connection = self.get_connection(self.privacy_conn_id)
        if not connection.host:
            raise ConfigurationError(f"connection {self.privacy_conn_id!r} (privacy_duckdb) names no database file")
        return URL.create("duckdb", database=connection.host)

    def get_uri(self) -> str:
        """The SQLAlchemy URL as a string."""
        url: str = self.sqlalchemy_url.render_as_string(hide_password=False)
        return url

    def get_conn(self) -> Any:
        """A DB-API connection (DuckDB's own, through SQLAlchemy)."""
        return self.get_sqlalchemy_engine().raw_connection()

    @staticmethod
    def connection_url(conn_id: str) -> str:
        """The SQLAlchemy URL of connection ``conn_id`` (see :func:`connection_url`)."""
        return connection_url(conn_id)


def _hook_engine_url(connection: Any) -> str | None:
    """The URL of the engine the connection type's SQL hook builds; ``None`` when the type has no SQL hook."""
    try:
        hook = connection.get_hook()
    except Exception:  # no provider for this connection type is installed
        return None
    if not hasattr(hook, "get_sqlalchemy_engine"):
        return None
    engine = hook.get_sqlalchemy_engine()
    try:
        url: str = engine.url.render_as_string(hide_password=False)
    finally:
        engine.dispose()
    return url


def connection_url(conn_id: str) -> str:
    """The SQLAlchemy URL of Airflow connection ``conn_id`` (raises ``ConfigurationError`` if Airflow has none).

    The password is masked in task logs first; the URL itself is masked too (never log it).
    """
    from airflow.sdk.log import mask_secret

    from privacy_plugins.integrations.airflow.connections import masked_connection

    connection = masked_connection(conn_id)
    try:
        url = _hook_engine_url(connection)
    except ConfigurationError:
        raise
    except Exception as exc:  # the hook could not build an engine (a driver missing, a bad extra)
        raise ConfigurationError(
            f"connection {conn_id!r} ({connection.conn_type}): its hook cannot open it ({type(exc).__name__})"
        ) from None
    if url is None:
        log.warning(
            "connection %r: no SQL hook is installed for type %r; mapping its fields to a SQLAlchemy URL "
            "(install the type's Airflow provider to open it the provider's way)",
            conn_id,
            connection.conn_type,
        )
        fields = ConnectionFields(
            conn_type=str(connection.conn_type or ""),
            host=connection.host,
            login=connection.login,
            password=connection.password,
            schema=connection.schema,
            port=connection.port,
            extra=dict(connection.extra_dejson or {}),
        )
        url = sqlalchemy_url(conn_id, fields)
    mask_secret(url)
    return url
