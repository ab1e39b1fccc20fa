"""The names of the product's own working tables, which a destination table may not take.

A release creates tables next to the destination table and later drops or renames
them by name: incoming tables of the publishers (``<table>__incoming_<8 hex>``,
also Spark's staging), Spark's previous table during its swap
(``<table>__previous_<8 hex>``), staging tables of a release inside the database
(``<table>__staging_<created>_<run tag>``), temporary helper tables
(``pp_helper_<12 hex>``) and the registry of staging tables (``pp_working_tables``).
A destination table with such a name could be taken for one of them — replaced,
renamed or cleaned up by another release — so the spec refuses it when it is loaded.
"""

from __future__ import annotations

import re

from privacy_plugins.errors import ConfigurationError

__all__ = ["WORKING_NAMES", "check_destination_table"]

#: The working-name patterns, by the form the error message shows.
WORKING_NAMES: dict[str, re.Pattern[str]] = {
    "<table>__incoming_<8 hex>": re.compile(r".*__incoming_[0-9a-f]{8}", re.IGNORECASE),
    "<table>__previous_<8 hex>": re.compile(r".*__previous_[0-9a-f]{8}", re.IGNORECASE),
    "<table>__staging_<8 hex>_<8 hex>": re.compile(r".*__staging_[0-9a-f]{8}_[0-9a-f]{8}", re.IGNORECASE),
    "pp_helper_<12 hex>": re.compile(r"pp_helper_[0-9a-f]{12}", re.IGNORECASE),
    "pp_working_tables": re.compile(r"pp_working_tables", re.IGNORECASE),
}


def check_destination_table(table: str) -> None:
    """Refuse a destination table named like one of the product's working tables.

    Raises:
        ConfigurationError: naming ``destination.table`` and the pattern it matches.
    """
    for form, pattern in WORKING_NAMES.items():
        if pattern.fullmatch(table):
            raise ConfigurationError(
                f"destination.table {table!r} matches {form!r}, a name of this product's own working tables "
                "(which releases create and drop); choose another name"
            )
