"""Resolve a spec's ``conn_id`` through Airflow's connections and hooks, inside a task.

The release operators run every step under :func:`airflow_resolver`, so
``source: {conn_id: warehouse, table: people}`` reads through the connection
Airflow knows (metadata database, secrets backend or ``AIRFLOW_CONN_*``). The
connection's hook gives the SQLAlchemy URL when it offers one (``sqlalchemy_url``
of the SQL providers' hooks); otherwise the connection's fields are mapped to a
URL. The password is registered with Airflow's secrets masker, so it is
redacted from task logs even if some library prints it.
"""

from __future__ import annotations

from typing import Any

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.connections import ConnectionFields, sqlalchemy_url

__all__ = ["airflow_resolver", "airflow_secret"]


def _hook_url(connection: Any) -> str | None:
    """The hook's own SQLAlchemy URL, when the connection type has a SQL hook that builds one."""
    try:
        hook = connection.get_hook()
        url = hook.sqlalchemy_url
    except Exception:
        return None
    rendered: str = url.render_as_string(hide_password=False) if hasattr(url, "render_as_string") else str(url)
    return rendered


def airflow_resolver(conn_id: str) -> str:
    """The SQLAlchemy URL of Airflow connection ``conn_id`` (raises ``ConfigurationError`` if Airflow has none)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.log import mask_secret

    try:
        connection = BaseHook.get_connection(conn_id)
    except Exception as exc:
        raise ConfigurationError(
            f"Airflow has no connection {conn_id!r} ({type(exc).__name__}); define it in Airflow "
            f"(UI, CLI, secrets backend or AIRFLOW_CONN_{conn_id.upper()})"
        ) from None
    if connection.password:
        mask_secret(connection.password)
    url = _hook_url(connection)
    if url is None:
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


def airflow_secret(conn_id: str) -> str | None:
    """The password of Airflow connection ``conn_id`` (a pseudonym key: ``pseudonymize.key: {conn_id: …}``).

    Registered with the secrets masker, so it is redacted from task logs; it never goes into XCom.
    """
    from airflow.sdk import BaseHook
    from airflow.sdk.log import mask_secret

    try:
        connection = BaseHook.get_connection(conn_id)
    except Exception as exc:
        raise ConfigurationError(
            f"Airflow has no connection {conn_id!r} ({type(exc).__name__}); define it in Airflow "
            f"(UI, CLI, secrets backend or AIRFLOW_CONN_{conn_id.upper()})"
        ) from None
    if connection.password:
        mask_secret(connection.password)
    return connection.password or None
