"""Pushdown engines: anonymize and measure where the table lives (pandas, SQL via SQLAlchemy, Spark).

Outside the core on purpose: SQLAlchemy and PySpark are imported lazily, only
when a SQL or Spark table is used. The core receives weighted snapshots and
class counts and returns its own objects.
"""

from __future__ import annotations

from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates
from privacy_plugins.engines.base import APPLY_METHODS, ApplyMethod, EngineTable
from privacy_plugins.engines.full_domain_in_engine import (
    EngineAnonymization,
    anonymize_in_engine,
    engine_snapshot,
    measure_in_engine,
)
from privacy_plugins.engines.pandas_engine import PandasTable, classes_from_pandas
from privacy_plugins.engines.population_join import JoinedSizes, k_map_in_engine, population_risk_in_engine
from privacy_plugins.engines.spark import SparkTable, classes_from_spark
from privacy_plugins.engines.sql import SqlTable, classes_from_sql

__all__ = [
    "APPLY_METHODS",
    "COUNT_COLUMN",
    "ApplyMethod",
    "EngineAnonymization",
    "EngineTable",
    "JoinedSizes",
    "PandasTable",
    "SparkTable",
    "SqlTable",
    "anonymize_in_engine",
    "classes_from_aggregates",
    "classes_from_pandas",
    "classes_from_spark",
    "classes_from_sql",
    "engine_snapshot",
    "k_map_in_engine",
    "measure_in_engine",
    "population_risk_in_engine",
]
