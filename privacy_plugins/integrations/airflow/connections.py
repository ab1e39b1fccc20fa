"""Resolve a spec's ``conn_id`` through Airflow's connections and hooks, inside a task.

The release operators run every step under :func:`airflow_resolver`, so
``source: {conn_id: warehouse, table: people}`` reads through the connection
Airflow knows (metadata database, secrets backend or ``AIRFLOW_CONN_*``). The
connection type's own SQL hook builds the engine (common.sql's
``get_sqlalchemy_engine``; see :mod:`.hooks`); the password is registered with
Airflow's secrets masker, so it is redacted from task logs even if some library
prints it. :func:`airflow_secret` reads a connection's password as a pseudonym key.
"""

from __future__ import annotations

from typing import Any

from privacy_plugins.errors import ConfigurationError

__all__ = ["airflow_resolver", "airflow_secret", "masked_connection"]


def airflow_resolver(conn_id: str) -> str:
    """The SQLAlchemy URL of Airflow connection ``conn_id`` (raises ``ConfigurationError`` if Airflow has none)."""
    from privacy_plugins.integrations.airflow.hooks import connection_url  # common.sql: at run time, not DAG parse

    return connection_url(conn_id)


def masked_connection(conn_id: str) -> Any:
    """Airflow connection ``conn_id`` with its password registered with the secrets masker.

    Raises:
        ConfigurationError: Airflow has no such connection (one line naming it and where to define it).
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
    return connection


def airflow_secret(conn_id: str) -> str | None:
    """The password of Airflow connection ``conn_id`` (a pseudonym key: ``pseudonymize.key: {conn_id: …}``).

    Registered with the secrets masker, so it is redacted from task logs; it never goes into XCom.
    """
    password: str | None = masked_connection(conn_id).password
    return password or None
