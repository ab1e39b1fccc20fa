"""ExpectTableToComposeWithHistory: the table, intersected with every earlier release, leaves each record l values.

The composition check of repeated releases (issue 26, ``docs/composition.md``) as an
expectation: the batch is a release (a candidate, or the table published now); ``history``
is the release history kept beside it (its class table ``pp_history_<name>``: a DuckDB file
with ``history_table``, or a Parquet/CSV file), and ``source`` the raw records, each one a
target whose quasi-identifiers the adversary knows. The core's intersection attack
(:func:`~privacy_plugins.core.composition.intersection_attack`) intersects the sensitive values
of the classes covering each target in every release; the expectation passes when no record
is left with fewer than ``l`` distinct values. The result holds counts only.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from great_expectations.compatibility import pydantic
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.validator.validator import ValidationDependencies

from privacy_plugins.core.composition import intersection_attack
from privacy_plugins.core.hierarchies import Hierarchy, build_hierarchy
from privacy_plugins.core.io import read_table
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx.expectations._base import (
    check_qis_and_secret,
    gallery_metadata,
    set_metric_kwargs,
    validation_result,
)
from privacy_plugins.integrations.gx.expectations._rendering import DataDocsSentences
from privacy_plugins.integrations.gx.row_metrics import TABLE_ROWS

__all__ = ["ExpectTableToComposeWithHistory"]

RELEASE = "__release"  # the history's sequence-number column (release/history_store.py)


def _read_history(path: str, table: str | None) -> list[pd.DataFrame]:
    """The kept releases' class signatures, oldest first."""
    source = Path(path).expanduser()
    if not source.is_file():
        raise ConfigurationError(f"history: {str(source)!r} is not a file")
    if source.suffix.lower() == ".duckdb":
        import duckdb

        if not table:
            raise ConfigurationError("history_table: name the history's class table in the DuckDB file")
        with duckdb.connect(str(source), read_only=True) as connection:
            try:
                classes = connection.table(table).df()
            except duckdb.CatalogException:
                raise ConfigurationError(f"history_table: {table!r} is not a table of {str(source)!r}") from None
    else:
        classes = read_table(source)
    if RELEASE not in classes.columns:
        return [classes]
    return [group.drop(columns=RELEASE) for _, group in classes.groupby(RELEASE, sort=True)]


class ExpectTableToComposeWithHistory(DataDocsSentences, BatchExpectation):
    """Expect every record to keep at least ``l`` sensitive values over the table and its release history.

    Args:
        quasi_identifiers: columns an attacker knows.
        sensitive_attribute: the sensitive column of every release.
        history: the history's class table: a DuckDB file (with ``history_table``) or a Parquet/CSV file.
        history_table: the table name in a DuckDB ``history`` (``pp_history_<name>``).
        source: the raw records (Parquet or CSV): every record is a target.
        l: records left with fewer distinct values are at risk (default 2).
        hierarchies: per QI, its hierarchy as a release spec writes it (coverage of labels).

    Example:
        >>> ExpectTableToComposeWithHistory(
        ...     quasi_identifiers=["age"], sensitive_attribute="disease", history="h.parquet", source="s.parquet"
        ... ).expectation_type
        'expect_table_to_compose_with_history'
    """

    quasi_identifiers: list[pydantic.StrictStr] = pydantic.Field(description="Columns an attacker may know.")
    sensitive_attribute: pydantic.StrictStr
    history: pydantic.StrictStr = pydantic.Field(description="The release history's class table (file).")
    history_table: pydantic.StrictStr | None = None
    source: pydantic.StrictStr = pydantic.Field(description="The raw records (Parquet or CSV).")
    l: pydantic.StrictInt = 2
    hierarchies: dict[str, Any] | None = None

    metric_dependencies: ClassVar[tuple[str, ...]] = (TABLE_ROWS,)
    success_keys: ClassVar[tuple[str, ...]] = (
        "quasi_identifiers", "sensitive_attribute", "history", "history_table", "source", "l", "hierarchies",
    )  # fmt: skip
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "sensitive_attribute", "history")
    library_metadata: ClassVar[dict[str, Any]] = gallery_metadata("experimental", "anonymization", "repeated releases")

    @pydantic.root_validator(skip_on_failure=True)
    def _check_settings(cls, values: dict[str, Any]) -> dict[str, Any]:
        check_qis_and_secret(values)
        if values["l"] < 1:
            raise ConfigurationError(f"l must be an integer >= 1, got {values['l']!r}")
        return values

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'With its release history, every record keeps 2 values of disease on age, zip'."""
        values = {"l": params.get("l", 2), "sensitive_attribute": params.get("sensitive_attribute")}
        return (
            "With its release history, every record keeps $l values of $sensitive_attribute on $quasi_identifiers",
            values,
        )

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """Records left below l."""
        return "records below l"

    def get_validation_dependencies(
        self, execution_engine: Any = None, runtime_configuration: dict[str, Any] | None = None
    ) -> ValidationDependencies:
        """The batch's QI and sensitive columns as rows."""
        dependencies: ValidationDependencies = super().get_validation_dependencies(
            execution_engine=execution_engine, runtime_configuration=runtime_configuration
        )
        return set_metric_kwargs(
            dependencies, TABLE_ROWS, {"columns": [*self.quasi_identifiers, self.sensitive_attribute]}
        )

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        release: pd.DataFrame = metrics[TABLE_ROWS]
        source_path = Path(self.source).expanduser()
        if not source_path.is_file():
            raise ConfigurationError(f"source: {str(source_path)!r} is not a file")
        source = read_table(source_path)
        history = _read_history(self.history, self.history_table)
        hierarchies: dict[Hashable, Hierarchy] = {
            qi: build_hierarchy(qi, config, source[qi]) for qi, config in (self.hierarchies or {}).items()
        }
        report = intersection_attack(
            source,
            [*history, release],
            quasi_identifiers=list(self.quasi_identifiers),
            sensitive_attribute=self.sensitive_attribute,
            hierarchies=hierarchies,
            l=self.l,
        )
        overall = report.overall
        details = {"releases": len(history) + 1, "history_releases": len(history), "attack": report.to_dict()}
        return validation_result(overall.below_l == 0, overall.below_l, details)
