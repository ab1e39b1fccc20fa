"""Full-domain (global) generalization: choose a lattice node, publish, re-check.

Suppression follows ARX's rule: at the chosen node, every equivalence class
that violates a model is suppressed whole, provided the suppressed records fit
the limit ⌊suppression_limit · n⌋; otherwise the node does not satisfy.

Marked suppression (``suppressed_rows="mark"``) publishes the suppressed rows
with every QI ``*`` and their sensitive values hidden: they form one more class
of the published table, which must satisfy the models like any other (k rows
at least; hidden sensitive values are one value, so it is never l-diverse). When
it does not, the search is repeated with no suppression at all; the re-check
measures the whole published table, marked rows included.

References:
    Samarati P. Protecting respondents' identities in microdata release. TKDE 13(6), 2001.
    Kohlmayer F., Prasser F., Eckert C., Kemper A., Kuhn K. Flash: efficient, stable and
    optimal k-anonymity. PASSAT 2012.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationResult, VerificationError, summary_measures
from privacy_plugins.core.anonymize.lattice import (
    LatticeSearch,
    LossMetric,
    Node,
    SearchResult,
    exhaustive_search,
    optimal_search,
    samarati_search,
)
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.information_loss import (
    UtilityMetrics,
    average_class_size,
    discernibility,
    ileft,
    ncp,
    precision,
)
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage, PrivacyModel
from privacy_plugins.core.parameters import check_real
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

__all__ = ["FULL_DOMAIN_ALGORITHMS", "SUPPRESSED_MARK", "anonymize_full_domain"]

FULL_DOMAIN_ALGORITHMS: dict[str, Callable[[LatticeSearch], SearchResult]] = {
    "optimal": optimal_search,
    "samarati": samarati_search,
    "exhaustive": exhaustive_search,
}
#: Value written into the QI and sensitive columns of suppressed rows kept with ``suppressed_rows="mark"``.
SUPPRESSED_MARK = "*"


def _validate(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable],
    suppression_limit: float,
    algorithm: str,
    suppressed_rows: str,
) -> tuple[pd.DataFrame, AttributeRoles, int]:
    if not models:
        raise ConfigurationError("models must name at least one privacy model (e.g. KAnonymity(5))")
    for model in models:
        if not isinstance(model, PrivacyModel):
            raise TypeError(f"models must be PrivacyModel instances, got {type(model).__name__} {model!r}")
    sensitive = list(
        dict.fromkeys(
            [*sensitive_attributes, *(m.sensitive_attribute for m in models if m.sensitive_attribute is not None)]
        )
    )
    roles = AttributeRoles(quasi_identifiers=quasi_identifiers, sensitive_attributes=sensitive, identifiers=identifiers)
    table = validate_frame(frame)
    roles.check_columns(list(table.columns))
    limit = check_real(suppression_limit, name="suppression_limit")
    if not 0.0 <= limit < 1.0:
        raise ConfigurationError(f"suppression_limit must be in [0, 1), got {suppression_limit!r}")
    if algorithm not in FULL_DOMAIN_ALGORITHMS:
        raise ConfigurationError(f"algorithm must be one of {sorted(FULL_DOMAIN_ALGORITHMS)}, got {algorithm!r}")
    if suppressed_rows not in ("remove", "mark"):
        raise ConfigurationError(f"suppressed_rows must be 'remove' or 'mark', got {suppressed_rows!r}")
    for model in models:
        if isinstance(model, KAnonymity) and model.k > len(table):
            raise ConfigurationError(f"k={model.k} is larger than the table ({len(table)} rows)")
        if isinstance(model, PersonalizedLeakage) and model.bound_column is not None:
            if model.bound_column in roles.named_columns:
                raise ConfigurationError(f"bound_column {model.bound_column!r} already has another role")
            model.bounds(EquivalenceClasses.from_frame(table, [model.bound_column]))  # validates the values
    return table, roles, math.floor(limit * len(table) + 1e-9)


def _model_columns(models: Sequence[PrivacyModel]) -> list[Hashable]:
    columns: list[Hashable] = []
    for model in models:
        if model.sensitive_attribute is not None:
            columns.append(model.sensitive_attribute)
        if isinstance(model, PersonalizedLeakage) and model.bound_column is not None:
            columns.append(model.bound_column)
    return list(dict.fromkeys(columns))


def _check_feasible(search: LatticeSearch, models: Sequence[PrivacyModel]) -> None:
    """Fail before searching when even the most general node cannot satisfy the models."""
    top = tuple(search.heights)
    classes = search.snapshot.classes(top)
    for model in models:
        if model.violating_classes(classes).any():
            raise InfeasibleAnonymizationError(
                f"{model} cannot be met even with every quasi-identifier fully generalized "
                f"(observed {model.observed(classes):.4g} on the whole table); relax the requirement"
            )


def _publish(
    table: pd.DataFrame,
    snapshot: Snapshot,
    node: Node,
    suppressed: np.ndarray,
    *,
    roles: AttributeRoles,
    suppressed_rows: str,
) -> pd.DataFrame:
    published = table.drop(columns=list(roles.identifiers))
    for qi, (column, hierarchy) in enumerate(zip(snapshot.quasi_identifiers, snapshot.hierarchies, strict=True)):
        row_codes = snapshot.codes(qi, node[qi])[snapshot.unit_of_row]
        published[column] = pd.Series(hierarchy.labels[node[qi]][row_codes], index=published.index, dtype=object)
    if suppressed_rows == "remove":
        return published.loc[~suppressed].reset_index(drop=True)
    # QIs (generalized labels, text) become '*'; sensitive values are hidden too: '*' in
    # text columns, missing in numeric ones (so the column keeps its type).
    for column in [*snapshot.quasi_identifiers, *roles.sensitive_attributes]:
        text = column in snapshot.quasi_identifiers or not pd.api.types.is_numeric_dtype(published[column])
        published[column] = published[column].astype(object)
        published.loc[suppressed, column] = SUPPRESSED_MARK if text else None
    return published


def _suppressed(snapshot: Snapshot, node: Node, models: Sequence[PrivacyModel]) -> np.ndarray:
    """Rows of the classes that violate some model at ``node`` (suppressed whole)."""
    classes = snapshot.classes(node)
    violating = np.zeros(classes.n_classes, dtype=bool)
    for model in models:
        violating |= model.violating_classes(classes)
    return np.asarray(violating[classes.class_of_row][snapshot.unit_of_row], dtype=bool)


def _holds(published: pd.DataFrame, roles: AttributeRoles, models: Sequence[PrivacyModel]) -> bool:
    classes = EquivalenceClasses.from_frame(published.reset_index(drop=True), roles.quasi_identifiers)
    return all(model.evaluate(classes).passed for model in models)


def _utility(
    snapshot: Snapshot, node: Node, suppressed: np.ndarray, published_sizes: np.ndarray, *, k: int, n_sensitive: int
) -> UtilityMetrics:
    rows = snapshot.unit_of_row
    costs = [snapshot.costs(qi, level)[rows] for qi, level in enumerate(node)]
    table_ncp = ncp(costs, suppressed)
    leaf_counts = [
        h.leaf_counts[level][snapshot.codes(qi, level)[rows]]
        for qi, (h, level) in enumerate(zip(snapshot.hierarchies, node, strict=True))
    ]
    return UtilityMetrics(
        ncp=table_ncp,
        lm=table_ncp * len(node),
        discernibility=discernibility(published_sizes, int(suppressed.sum()), snapshot.n_rows),
        c_avg=average_class_size(published_sizes, k),
        height=int(sum(node)),
        precision=precision(node, snapshot.heights),
        ileft=ileft(leaf_counts, [h.n_leaves for h in snapshot.hierarchies], suppressed, n_ungeneralized=n_sensitive),
    )


def anonymize_full_domain(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    models: Sequence[PrivacyModel],
    identifiers: Sequence[Hashable] = (),
    sensitive_attributes: Sequence[Hashable] = (),
    suppression_limit: float = 0.0,
    algorithm: Literal["optimal", "samarati", "exhaustive"] = "optimal",
    metric: LossMetric = "ncp",
    suppressed_rows: Literal["remove", "mark"] = "remove",
    progress: Callable[[int, int], None] | None = None,
) -> AnonymizationResult:
    """Generalize every QI to one hierarchy level so that every model holds, with least loss.

    Args:
        frame: the raw table.
        quasi_identifiers: the columns to generalize (each needs a hierarchy).
        hierarchies: column → :class:`Hierarchy`; every QI value must be a leaf.
        models: the privacy models to satisfy (e.g. ``[KAnonymity(5), DistinctLDiversity("disease", 2)]``).
        identifiers: direct identifiers, dropped from the output.
        sensitive_attributes: sensitive columns besides those the models name (they are
            published as they are, blanked in marked suppressed rows, and count in ILeft).
        suppression_limit: fraction of records that may be suppressed, in [0, 1).
        algorithm: ``"optimal"`` (least loss, pruned), ``"samarati"`` (binary search on
            height) or ``"exhaustive"`` (checks every node; for tests and small lattices).
        metric: the loss to minimise: ``"ncp"`` (default), ``"lm"``, ``"discernibility"`` or ``"height"``.
        suppressed_rows: ``"remove"`` suppressed records, or ``"mark"`` them: their QIs
            become ``*``, their sensitive values ``*`` (text) or missing (numeric).
        progress: called as ``progress(nodes_checked, lattice_size)`` after each check.

    Returns:
        An :class:`AnonymizationResult` whose models were re-measured on the output.

    Raises:
        ConfigurationError: bad parameters or roles (before any search).
        HierarchyError: a QI without hierarchy, or a value that is not a leaf of it.
        InfeasibleAnonymizationError: no node satisfies the models within the limit.
        VerificationError: the output failed the independent re-measurement (a bug;
            nothing must be published).

    Example:
        >>> import pandas as pd
        >>> from privacy_plugins.core.models import KAnonymity
        >>> df = pd.DataFrame({"zip": ["47906", "47907", "47611", "47612"], "disease": ["a", "b", "a", "c"]})
        >>> h = Hierarchy.from_rows("zip", [[z, z[:4] + "*", "*"] for z in df["zip"]])
        >>> result = anonymize_full_domain(df, quasi_identifiers=["zip"], hierarchies={"zip": h},
        ...                                models=[KAnonymity(2)])
        >>> result.levels, result.table["zip"].tolist()
        ({'zip': 1}, ['4790*', '4790*', '4761*', '4761*'])
    """
    started = time.perf_counter()
    table, roles, max_suppressed = _validate(
        frame,
        quasi_identifiers=quasi_identifiers,
        models=models,
        identifiers=identifiers,
        sensitive_attributes=sensitive_attributes,
        suppression_limit=suppression_limit,
        algorithm=algorithm,
        suppressed_rows=suppressed_rows,
    )
    snapshot = Snapshot.build(
        table, quasi_identifiers=roles.quasi_identifiers, hierarchies=hierarchies, model_columns=_model_columns(models)
    )
    search = LatticeSearch(snapshot, models, max_suppressed, metric, progress=progress)
    _check_feasible(search, models)
    found = FULL_DOMAIN_ALGORITHMS[algorithm](search)
    if found.best is None:
        raise InfeasibleAnonymizationError(
            f"no full-domain generalization satisfies {', '.join(map(str, models))} "
            f"while suppressing at most {max_suppressed} of {len(table)} records"
        )
    node: Node = found.best.node
    suppressed = _suppressed(snapshot, node, models)
    published = _publish(table, snapshot, node, suppressed, roles=roles, suppressed_rows=suppressed_rows)
    if suppressed_rows == "mark" and suppressed.any() and not _holds(published, roles, models):
        # The marked rows, published as one class, would break a model: suppress nothing instead.
        found = FULL_DOMAIN_ALGORITHMS[algorithm](LatticeSearch(snapshot, models, 0, metric, progress=progress))
        if found.best is None:
            raise InfeasibleAnonymizationError(
                f"with suppressed_rows='mark' the suppressed rows are published as one class (every "
                f"quasi-identifier '*', sensitive values hidden) that does not satisfy "
                f"{', '.join(map(str, models))}, and no generalization satisfies them without suppression; "
                "use suppressed_rows='remove' or relax the requirements"
            )
        node = found.best.node
        suppressed = _suppressed(snapshot, node, models)
        published = _publish(table, snapshot, node, suppressed, roles=roles, suppressed_rows=suppressed_rows)

    # Independent re-check of the table exactly as published: encode its labels afresh, measure every model.
    recheck = EquivalenceClasses.from_frame(published.reset_index(drop=True), roles.quasi_identifiers)
    checked = tuple(model.evaluate(recheck) for model in models)
    kept_sizes = recheck.sizes
    if suppressed_rows == "mark" and suppressed.any():  # utility counts the marked rows as suppressed, not as a class
        kept = published.loc[~suppressed].reset_index(drop=True)
        kept_sizes = EquivalenceClasses.from_frame(kept, roles.quasi_identifiers).sizes if len(kept) else recheck.sizes
    k_target = max((m.k for m in models if isinstance(m, KAnonymity)), default=1)
    result = AnonymizationResult(
        algorithm=algorithm,
        table=published,
        quasi_identifiers=tuple(roles.quasi_identifiers),
        levels=dict(zip(roles.quasi_identifiers, node, strict=True)),
        rows_in=len(table),
        rows_out=int((~suppressed).sum()),
        suppressed=int(suppressed.sum()),
        dropped_identifiers=tuple(roles.identifiers),
        utility=_utility(
            snapshot, node, suppressed, kept_sizes, k=k_target, n_sensitive=len(roles.sensitive_attributes)
        ),
        models=checked,
        measures={"k": float(recheck.sizes.min()), **summary_measures(tuple(models), checked)},
        nodes_checked=found.nodes_checked,
        lattice_size=found.lattice_size,
        seconds=time.perf_counter() - started,
        heights=dict(zip(roles.quasi_identifiers, snapshot.heights, strict=True)),
    )
    if not result.passed:
        failed = [r.model for r in checked if not r.passed]
        raise VerificationError(f"the anonymized table failed the re-check of {failed}; nothing may be published")
    return result
