"""What the data can refute about a spec, checked before anything slow runs or anything is written."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import pandas as pd

from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.core.anonymize.generalization_lattice import check_lattice_size
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.errors import HierarchyError, UnknownColumnError
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["check_lattice", "checked_hierarchies", "validate_against_data"]


def check_lattice(spec: ReleaseSpec, hierarchies: Mapping[Hashable, Hierarchy]) -> None:
    """Refuse a generalization lattice the anonymizer would refuse, before anything slow runs.

    The lattice has Π (height + 1) nodes over the quasi-identifiers' hierarchies;
    above the searches' cap this raises the anonymizer's own ``ConfigurationError``
    (exit 2 in the CLI, a failed task in Airflow/Dagster), seconds after loading
    instead of after the diagnosis.
    """
    if tags_of(get_anonymizer(spec.algorithm.name)).searches_lattice:
        check_lattice_size([hierarchies[column].height for column in spec.quasi_identifiers])


def checked_hierarchies(spec: ReleaseSpec, frame: pd.DataFrame) -> dict[Hashable, Hierarchy]:
    """The QIs' hierarchies, every value of ``frame`` (rows or units) a leaf; a QI without one must be numeric."""
    hierarchies = spec.build_hierarchies(frame)
    for column, hierarchy in hierarchies.items():
        hierarchy.leaf_codes(frame[column])  # every value must be a leaf, or a clear error now
    for column in spec.quasi_identifiers:
        if column not in hierarchies and not pd.api.types.is_numeric_dtype(frame[column]):
            raise HierarchyError(
                f"quasi-identifier {column!r} is not numeric and has no hierarchy; algorithm "
                f"{spec.algorithm.name!r} publishes only numeric quasi-identifiers as ranges"
            )
    return hierarchies


def validate_against_data(spec: ReleaseSpec, frame: pd.DataFrame) -> None:
    """Everything about the spec that the data can refute, before anything is written."""
    spec.roles.check_columns([str(c) for c in frame.columns])
    bound_column = spec.requirements.bound_column
    if bound_column is not None and bound_column not in frame.columns:
        raise UnknownColumnError(f"bound_column not found in table: {bound_column!r}; available: {list(frame.columns)}")
    check_lattice(spec, checked_hierarchies(spec, frame))  # before the diagnosis, which can take minutes
    for model in spec.models():  # each model checks itself against the data (k vs rows, bounds in (0, 1])
        model.validate_against(frame)
