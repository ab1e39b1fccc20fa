"""Spark settings and sessions: validated before any work, one session per process.

The settings are the ``spark.*`` keys a spec gives (``source.spark_settings``,
``destination.spark_settings``). They are checked twice, both times before any
row is read or written:

* when the spec is built (:func:`check_spark_settings`, no PySpark needed): keys
  are strings starting with ``spark.``, values are strings, numbers or booleans,
  and ``spark.master`` has a form Spark knows;
* when a session is needed (:func:`spark_session`): PySpark and a Java runtime are
  there, and a ``spark://`` or ``k8s://`` master answers on its port — Spark itself
  would start and then retry an unreachable master for minutes.

Error messages name the setting and the key, never a value (a value may be a secret,
e.g. ``spark.hadoop.fs.s3a.secret.key``), except ``spark.master``'s.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping
from typing import Any

from privacy_plugins.errors import ConfigurationError

__all__ = ["check_master", "check_spark_settings", "is_spark_path", "require_spark", "spark_session"]

#: Seconds to wait for a ``spark://`` / ``k8s://`` master to accept a connection.
MASTER_PROBE_SECONDS = 3.0

_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|spark://[^/\s]+|k8s://\S+")


def is_spark_path(name: str) -> bool:
    """Whether a ``spark:`` value is a path (has a ``/`` or a ``.parquet``/``.csv`` suffix) rather than a table name.

    Example:
        >>> is_spark_path("warehouse.census"), is_spark_path("out/census"), is_spark_path("census.parquet")
        (False, True, True)
    """
    return "/" in name or name.lower().endswith((".parquet", ".csv"))


def check_spark_settings(settings: object, *, setting: str) -> dict[str, str | int | float | bool]:
    """The settings as a plain dict, or a :class:`ConfigurationError` naming the bad key.

    Raises:
        ConfigurationError: not a mapping, a key that is not ``spark.*``, a value that is
            not a string, number or boolean, or a ``spark.master`` Spark does not know.
    """
    if settings is None:
        return {}
    if not isinstance(settings, Mapping):
        raise ConfigurationError(f"{setting} must map spark.* keys to values, got {type(settings).__name__}")
    checked: dict[str, str | int | float | bool] = {}
    for key, value in settings.items():
        if not isinstance(key, str) or not key.startswith("spark."):
            raise ConfigurationError(f"{setting} must map spark.* keys to values; {key!r} is not a spark.* key")
        if not isinstance(value, (str, int, float, bool)):
            raise ConfigurationError(
                f"{setting}[{key!r}] must be a string, number or boolean, got {type(value).__name__}"
            )
        checked[key] = value
    master = checked.get("spark.master")
    if master is not None and not _MASTER.fullmatch(str(master)):
        raise ConfigurationError(
            f"{setting}['spark.master'] must be local, local[N], local[*], spark://HOST:PORT, yarn or "
            f"k8s://URL, got {master!r}"
        )
    return checked


def _master_addresses(master: str) -> list[tuple[str, int]]:
    """The host/port pairs a ``spark://`` (possibly several, for standby masters) or ``k8s://`` master names."""
    if master.startswith("spark://"):
        hosts = master.removeprefix("spark://").split(",")
        default = 7077
    elif master.startswith("k8s://"):
        url = master.removeprefix("k8s://")
        scheme, _, rest = url.rpartition("://")
        hosts = [rest.split("/", 1)[0]]
        default = 80 if scheme == "http" else 443
    else:
        return []
    addresses = []
    for host in hosts:
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "")
        addresses.append((name.strip("[]"), int(port) if port.isdigit() else default))
    return addresses


def check_master(settings: Mapping[str, Any] | None, *, setting: str) -> None:
    """Valid settings, and a ``spark://`` / ``k8s://`` master that accepts a TCP connection; no session is started.

    Raises:
        ConfigurationError: as :func:`check_spark_settings`, or the master does not answer.
    """
    master = check_spark_settings(settings, setting=setting).get("spark.master")
    if master is not None:
        _probe(str(master), setting)


def _probe(master: str, setting: str) -> None:
    """Refuse a cluster master that does not accept a TCP connection (Spark would retry it for minutes)."""
    addresses = _master_addresses(master)
    if not addresses:
        return
    problems = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=MASTER_PROBE_SECONDS):
                return
        except OSError as exc:
            problems.append(f"{host}:{port} ({exc.strerror or type(exc).__name__})")
    raise ConfigurationError(
        f"{setting}['spark.master']: cannot reach {master!r}: {', '.join(problems)}; nothing was read or written"
    )


def require_spark(setting: str) -> None:
    """PySpark importable and a Java runtime present, or a :class:`ConfigurationError` naming ``setting``."""
    import importlib.util
    import os
    import shutil

    try:
        found = importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):  # a broken or blocked pyspark (sys.modules["pyspark"] = None)
        found = False
    if not found:
        raise ConfigurationError(f"{setting} needs PySpark: pip install 'privacy-plugins[spark]'")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise ConfigurationError(f"{setting} needs a Java runtime (java on PATH or JAVA_HOME)")


def spark_session(settings: Mapping[str, Any] | None, *, setting: str) -> Any:
    """The process's ``SparkSession``, built from ``settings`` (``spark.master`` ``local[*]`` by default).

    An existing session is reused: Spark keeps its static settings (master, memory);
    the others are applied to it. ``setting`` names the spec section in errors.

    Raises:
        ConfigurationError: bad settings, PySpark or Java missing, an unreachable master,
            or Spark failed to start — before anything is read or written.
    """
    config = {
        "spark.master": "local[*]",
        "spark.ui.showConsoleProgress": "false",
        **check_spark_settings(settings, setting=setting),
    }
    if str(config["spark.master"]).startswith("local"):
        # Python tasks (the block path's applyInPandas) run in this interpreter, which has the package
        # (PySpark reads the variable when the context starts; its default is whatever python3 is on PATH).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    require_spark(setting)
    _probe(str(config["spark.master"]), setting)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in config.items():
        builder = builder.config(key, str(value).lower() if isinstance(value, bool) else str(value))
    try:
        return builder.getOrCreate()
    except Exception as exc:  # Py4J and Spark raise their own classes; the first line says what went wrong
        raise ConfigurationError(f"{setting}: Spark did not start: {str(exc).strip().splitlines()[0]}") from exc
