"""Full-domain anonymization where the table lives: one GROUP BY in, the node applied in the engine.

1. :func:`engine_snapshot` — the weighted snapshot (QIs, model columns, count) from
   one GROUP BY, built into the core's :class:`~privacy_plugins.core.anonymize.snapshot.Snapshot`.
2. The core searches it (:func:`~privacy_plugins.core.anonymize.snapshot_search.solve_snapshot`).
3. :func:`anonymize_in_engine` — the chosen node is applied by the engine (mapping
   tables joined, or CASE), the violating classes are removed there, identifiers
   are never selected.
4. :func:`measure_in_engine` — every model re-measured on the result by GROUP BY.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import verify_classes
from privacy_plugins.core.anonymize.registry import DEFAULT_ALGORITHM, get_anonymizer, tags_of, with_derived_columns
from privacy_plugins.core.anonymize.research_scope import scoped_models
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.anonymize.snapshot_search import SnapshotSolution, solve_snapshot
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import PrivacyModel, bind_hierarchies, validate_on_units
from privacy_plugins.core.models.base import ModelResult
from privacy_plugins.core.models.research_subset import subset_flags
from privacy_plugins.core.parameters import suppression_budget
from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates, numeric_columns_as_numbers
from privacy_plugins.engines.base import APPLY_METHODS, ApplyMethod, EngineTable
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "EngineAnonymization",
    "anonymize_in_engine",
    "engine_snapshot",
    "label_mappings",
    "measure_in_engine",
    "model_columns",
    "models_snapshot",
    "publish_node",
    "validate_models",
]


def model_columns(models: Sequence[PrivacyModel], quasi_identifiers: Sequence[str]) -> list[str]:
    """The non-QI columns the models read (sensitive values, a bound column), in order."""
    columns = dict.fromkeys(str(c) for model in models for c in model.columns)
    return [c for c in columns if c not in quasi_identifiers]


def engine_snapshot(
    table: EngineTable | None,
    *,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[Hashable, Hierarchy],
    model_columns: Sequence[str] = (),
    aggregates: pd.DataFrame | None = None,
) -> tuple[Snapshot, pd.DataFrame]:
    """The snapshot from one GROUP BY, and the aggregates it came from (raw values, for the mappings).

    ``aggregates``: the result of ``table.group_counts([*quasi_identifiers, *model_columns])``
    when the caller already ran it (e.g. to build hierarchies from the values present, or a stored
    snapshot of an earlier release step); ``table`` may then be ``None``.

    Raises:
        UnknownColumnError: a column is not in the table.
        EmptyTableError: the table has no rows.
        HierarchyError: a QI value is not a leaf of its hierarchy.
    """
    if aggregates is None:
        if table is None:
            raise ConfigurationError("engine_snapshot needs a table or its aggregates")
        aggregates = table.group_counts([*quasi_identifiers, *model_columns])
    aggregates = validate_frame(aggregates.copy())
    numeric_columns_as_numbers(aggregates)
    snapshot = Snapshot.from_units(
        quasi_identifiers=quasi_identifiers,
        hierarchies=hierarchies,
        leaf_values={q: aggregates[q] for q in quasi_identifiers},
        units=aggregates[list(model_columns)].reset_index(drop=True),
        weights=aggregates[COUNT_COLUMN].to_numpy(dtype=np.int64),
    )
    return snapshot, aggregates


def models_snapshot(
    table: EngineTable | None,
    *,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[Hashable, Hierarchy],
    models: Sequence[PrivacyModel],
    aggregates: pd.DataFrame | None = None,
) -> tuple[Snapshot, pd.DataFrame]:
    """:func:`engine_snapshot` with the columns ``models`` read beside the QIs (see :func:`model_columns`)."""
    return engine_snapshot(
        table,
        quasi_identifiers=quasi_identifiers,
        hierarchies=hierarchies,
        model_columns=model_columns(models, quasi_identifiers),
        aggregates=aggregates,
    )


def label_mappings(
    aggregates: pd.DataFrame, hierarchies: Mapping[Hashable, Hierarchy], levels: Mapping[str, int]
) -> dict[str, pd.DataFrame]:
    """Per QI, the raw values present in the table and their labels at the node's level (small tables)."""
    mappings: dict[str, pd.DataFrame] = {}
    for column, level in levels.items():
        hierarchy = hierarchies[column]
        values = aggregates[column].drop_duplicates().reset_index(drop=True)
        labels = hierarchy.labels[level][hierarchy.codes[level][hierarchy.leaf_codes(values)]]
        mappings[column] = pd.DataFrame({"value": values, "label": np.asarray(labels, dtype=object).astype(str)})
    return mappings


def validate_models(aggregates: pd.DataFrame, n_rows: int, models: Sequence[PrivacyModel]) -> None:
    """Run every model's ``validate_against`` on the aggregates instead of the records (:func:`validate_on_units`)."""
    validate_on_units(aggregates.drop(columns=[COUNT_COLUMN]), n_rows, models)


@dataclass(frozen=True)
class EngineAnonymization:
    """What :func:`anonymize_in_engine` decided and the (lazy) published table in the engine."""

    snapshot: Snapshot
    solution: SnapshotSolution
    rows_in: int
    published: EngineTable
    dropped_identifiers: tuple[str, ...]
    checked: tuple[ModelResult, ...] = ()  # the core's re-check of the whole generalized table
    out_of_scope: int = 0  # rows outside a δ-presence research subset (issue 30): never published
    subset_suppressed: int | None = None  # the subset's rows in suppressed classes (with a subset)

    @property
    def suppressed(self) -> int:
        """Records suppressed (of the research subset, when there is one)."""
        return self.solution.suppressed if self.subset_suppressed is None else self.subset_suppressed

    @property
    def rows_out(self) -> int:
        """Records published (rows in − suppressed − out of scope)."""
        return self.rows_in - self.suppressed - self.out_of_scope


def anonymize_in_engine(
    table: EngineTable,
    *,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[Hashable, Hierarchy],
    models: Sequence[PrivacyModel],
    identifiers: Sequence[str] = (),
    sensitive_attributes: Sequence[str] = (),
    suppression_limit: float = 0.0,
    algorithm: str = DEFAULT_ALGORITHM,
    options: Mapping[str, Any] | None = None,
    method: ApplyMethod = "case",
    progress: Callable[[int, int], None] | None = None,
    aggregates: pd.DataFrame | None = None,
) -> EngineAnonymization:
    """Full-domain generalization with suppression (``suppressed_rows="remove"``), computed in the engine.

    ``algorithm`` is any registered one tagged ``works_on_snapshot`` (the lattice searches);
    ``options`` are its own (e.g. ``{"metric": "lm"}``). Same node, NCP and published rows
    (as a multiset) as that anonymizer in memory; the rows never come to Python.
    """
    if method not in APPLY_METHODS:
        raise ConfigurationError(f"method must be one of {list(APPLY_METHODS)}, got {method!r}")
    qis = [str(q) for q in quasi_identifiers]
    models = bind_hierarchies(models, hierarchies)  # as in memory: exact k-map re-checks published labels
    models = [_with_engine_population(table, model, qis) for model in models]
    columns = table.columns()
    clash = sorted(set(identifiers) & set(qis) | set(identifiers) & set(sensitive_attributes))
    if clash:
        raise ConfigurationError(f"column(s) {clash!r} cannot be both identifier and quasi-identifier/sensitive")
    derived = {str(c) for m in models for c in m.derived_columns(pd.DataFrame(columns=qis))}
    if aggregates is None:  # the columns the models derive (history sets) are computed here, not read
        read = [c for c in model_columns(models, qis) if c not in derived]
        aggregates = table.group_counts([*qis, *read])
    # Derived per distinct QI combination of the aggregates, as the in-memory path derives them per record.
    aggregates = with_derived_columns(aggregates.drop(columns=[c for c in derived if c in aggregates]), models)
    snapshot, aggregates = models_snapshot(
        table, quasi_identifiers=qis, hierarchies=hierarchies, models=models, aggregates=aggregates
    )
    validate_models(aggregates, snapshot.n_rows, models)
    models, subset = scoped_models(models, algorithm, tags_of(get_anonymizer(algorithm)).research_subset)
    read_by_models = (str(c) for m in models for c in m.columns if c not in qis and str(c) not in derived)
    sensitive = dict.fromkeys([*sensitive_attributes, *read_by_models])
    solution = solve_snapshot(
        snapshot,
        models,
        suppression_limit=suppression_limit,
        algorithm=algorithm,
        n_sensitive=len(sensitive),
        progress=progress,
        **(options or {}),
    )
    checked = _verify_on_snapshot(aggregates, hierarchies, snapshot, solution, models, suppression_limit, algorithm)
    levels = dict(zip(qis, solution.node, strict=True))
    scope: dict[str, int] = {}  # a δ-presence research subset: its rows out of scope and suppressed
    if subset is None:
        published = publish_node(
            table,
            aggregates=aggregates,
            hierarchies=hierarchies,
            levels=levels,
            identifiers=identifiers,
            suppressed=solution.suppressed_classes(snapshot),
            method=method,
        )
    else:
        keep = [c for c in columns if c not in set(identifiers)]
        mappings = label_mappings(aggregates, hierarchies, levels)
        published, flags = _subset_published(table, snapshot, solution, aggregates, keep, mappings, str(subset), method)
        weights = snapshot.weights
        scope = {
            "out_of_scope": snapshot.n_rows - int(weights[flags].sum()),
            "subset_suppressed": int(weights[flags & solution.suppressed_units].sum()),
        }
    return EngineAnonymization(
        snapshot=snapshot,
        solution=solution,
        rows_in=snapshot.n_rows,
        published=published,
        dropped_identifiers=tuple(c for c in columns if c in set(identifiers)),
        checked=checked,
        **scope,
    )


def _with_engine_population(table: EngineTable | None, model: PrivacyModel, qis: Sequence[str]) -> PrivacyModel:
    """A model naming a population table of the engine gets its counts per raw QI combination, pulled once."""
    named = model.population_table_in_engine()
    if named is None or table is None:
        return model
    return model.with_population_frame(table.population_counts(named[0], qis, named[1]))


def publish_node(
    table: EngineTable,
    *,
    aggregates: pd.DataFrame,
    hierarchies: Mapping[Hashable, Hierarchy],
    levels: Mapping[str, int],
    identifiers: Sequence[str] = (),
    suppressed: pd.DataFrame | None = None,
    removed: pd.DataFrame | None = None,
    method: ApplyMethod = "case",
) -> EngineTable:
    """The table recoded at ``levels`` where it lives; identifiers are never selected.

    ``suppressed`` classes (labels) and ``removed`` records (raw values, see ``EngineTable.generalized``)
    are left out.
    """
    keep = [c for c in table.columns() if c not in set(identifiers)]
    return table.generalized(
        keep=keep,
        mappings=label_mappings(aggregates, hierarchies, levels),
        suppressed=suppressed if suppressed is not None else pd.DataFrame(),
        removed=removed,
        method=method,
    )


def _subset_published(
    table: EngineTable,
    snapshot: Snapshot,
    solution: SnapshotSolution,
    aggregates: pd.DataFrame,
    keep: list[str],
    mappings: dict[str, pd.DataFrame],
    subset: str,
    method: ApplyMethod,
) -> tuple[EngineTable, np.ndarray]:
    """The research subset's rows of the unsuppressed classes, without the flag column; each unit's flag.

    The engine's own anti-join does the cut: the flag is mapped to "1"/"0" like a QI, and the
    classes removed are the suppressed ones (any flag) and every class's rows flagged "0".
    """
    flags = subset_flags(snapshot.units, subset) == 1.0
    values = aggregates[subset].drop_duplicates().reset_index(drop=True)
    labels = np.where(subset_flags(values.to_frame(subset), subset) == 1.0, "1", "0")
    flag_mapping = {subset: pd.DataFrame({"value": values, "label": labels.astype(object)})}
    suppressed = solution.suppressed_classes(snapshot)
    every_class = pd.DataFrame(
        {str(q): solution.labels(snapshot, i) for i, q in enumerate(snapshot.quasi_identifiers)}
    ).drop_duplicates()
    removed = pd.concat(
        [suppressed.assign(**{subset: "1"}), suppressed.assign(**{subset: "0"}), every_class.assign(**{subset: "0"})],
        ignore_index=True,
    ).drop_duplicates(ignore_index=True)
    cut = table.generalized(
        keep=[*keep, subset] if subset not in keep else keep,
        mappings={**mappings, **flag_mapping},
        suppressed=removed,
        method=method,
    )
    published = cut.generalized(
        keep=[c for c in keep if c != subset], mappings={}, suppressed=removed.head(0), method=method
    )
    return published, flags


def _verify_on_snapshot(
    aggregates: pd.DataFrame,
    hierarchies: Mapping[Hashable, Hierarchy],
    snapshot: Snapshot,
    solution: SnapshotSolution,
    models: Sequence[PrivacyModel],
    suppression_limit: float,
    algorithm: str,
) -> tuple[ModelResult, ...]:
    """End as the in-memory path does, in the core's ``verify_classes`` (its results returned).

    The node is applied to the snapshot by the pandas engine (the same mappings and suppressed
    classes the engine applies to the rows) and the published classes are re-measured.

    Raises:
        VerificationError: the accounting or a model fails on the published classes (nothing is staged).
    """
    from privacy_plugins.engines.pandas_engine import PandasTable

    qis = [str(q) for q in snapshot.quasi_identifiers]
    published = PandasTable(aggregates).generalized(
        keep=list(aggregates.columns),
        mappings=label_mappings(aggregates, hierarchies, dict(zip(qis, solution.node, strict=True))),
        suppressed=solution.suppressed_classes(snapshot),
        method="case",
    )
    frame = published.to_pandas().copy()
    rows_out = int(frame[COUNT_COLUMN].sum())
    return verify_classes(
        classes_from_aggregates(frame, qis) if rows_out else None,
        models,
        rows_in=snapshot.n_rows,
        rows_out=rows_out,
        suppressed=solution.suppressed,
        max_suppressed=suppression_budget(suppression_limit, snapshot.n_rows),
        algorithm=algorithm,
    )


def measure_in_engine(
    table: EngineTable, *, quasi_identifiers: Sequence[str], models: Sequence[PrivacyModel]
) -> list[ModelResult]:
    """Every model measured on ``table`` from one GROUP BY over the QIs and the columns the models read."""
    qis = [str(q) for q in quasi_identifiers]
    aggregates = table.group_counts([*qis, *model_columns(models, qis)])
    classes = classes_from_aggregates(aggregates, qis)
    return [model.evaluate(classes) for model in models]
