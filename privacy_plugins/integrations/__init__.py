"""Thin adapters over the core for Great Expectations, Airflow and Dagster.

Nothing is imported eagerly: each subpackage needs its extra
(``pip install 'privacy-plugins[gx]'``, ``[airflow]``, ``[dagster]``).
"""
