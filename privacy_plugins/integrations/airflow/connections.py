"""Resolve a spec's ``conn_id`` through Airflow's connections and hooks, inside a task.

The release operators run every step under :func:`airflow_resolver`, so
``source: {conn_id: warehouse, table: people}`` reads through the connection
Airflow knows (metadata database, secrets backend or ``AIRFLOW_CONN_*``). The
connection type's own SQL hook builds the engine (common.sql's
``get_sqlalchemy_engine``; see :mod:`.hooks`); the password is registered with
Airflow's secrets masker, so it is redacted from task logs even if some library
prints it.
"""

from __future__ import annotations

__all__ = ["airflow_resolver"]


def airflow_resolver(conn_id: str) -> str:
    """The SQLAlchemy URL of Airflow connection ``conn_id`` (raises ``ConfigurationError`` if Airflow has none)."""
    from privacy_plugins.integrations.airflow.hooks import connection_url  # common.sql: at run time, not DAG parse

    return connection_url(conn_id)
