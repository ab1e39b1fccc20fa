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

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import (
    AnonymizationRequest,
    AnonymizationResult,
    AnonymizedTable,
    LatticeDetails,
)
from privacy_plugins.core.anonymize.generalization_lattice import (
    LOSS_METRICS,
    LatticeSearch,
    LossMetric,
    Node,
    SearchResult,
    exhaustive_search,
    optimal_search,
    samarati_search,
)
from privacy_plugins.core.anonymize.lattice_boxes import breaking_classes
from privacy_plugins.core.anonymize.lattice_repair import left_out
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags, anonymize
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.anonymize.snapshot_search import SnapshotSolution
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.history_boxes import box_rules
from privacy_plugins.core.metrics.information_loss import (
    UtilityMetrics,
    average_class_size,
    discernibility,
    generalization_costs,
    ileft,
    ncp,
    precision,
)
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.parameters import check_fraction, suppression_budget
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.progress import announce_phase
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError, InfeasibleAnonymizationError

__all__ = ["SUPPRESSED_MARK", "FullDomainAnonymizer", "anonymize_full_domain"]

#: The lattice searches, by the name each is registered under (one :class:`FullDomainAnonymizer` each).
_SEARCHES: dict[str, Callable[[LatticeSearch], SearchResult]] = {
    "optimal": optimal_search,
    "samarati": samarati_search,
    "exhaustive": exhaustive_search,
}
#: Value written into the QI and sensitive columns of suppressed rows kept with ``suppressed_rows="mark"``.
SUPPRESSED_MARK = "*"


def _model_columns(models: Sequence[PrivacyModel]) -> list[Hashable]:
    return list(dict.fromkeys(column for model in models for column in model.columns))


def _check_feasible(search: LatticeSearch, models: Sequence[PrivacyModel]) -> None:
    """Fail before searching when even the most general node cannot satisfy the models.

    Only models monotone under generalization (:meth:`PrivacyModel.is_monotonic`, which an
    instance may narrow: a history model with a share bound or the domain rule) are judged at
    the top: for the others (e.g. a cap on class sizes) a lower node may satisfy what the top fails.
    """
    top = tuple(search.heights)
    classes = search.snapshot.classes(top)
    for model in models:
        if model.is_monotonic(with_suppression=False) and model.violating_classes(classes).any():
            raise InfeasibleAnonymizationError(
                f"{model} cannot be met even with every quasi-identifier fully generalized "
                f"(observed {model.observed(classes):.4g} on the whole table); relax the requirement"
            )


def search_lattice(
    snapshot: Snapshot,
    models: Sequence[PrivacyModel],
    budget: int,
    metric: str,
    algorithm: str,
    progress: Callable[[int, int], None] | None = None,
    *,
    removals: bool = True,
) -> tuple[Node, SearchResult]:
    """The node ``algorithm``'s search chooses over ``snapshot`` (records or engine-computed units alike).

    ``removals``: a class may lose a few records instead of all (:mod:`.lattice_repair`); ``False`` where
    the suppression is applied to whole classes by their labels (an engine).

    Raises:
        InfeasibleAnonymizationError: no node satisfies ``models`` suppressing at most ``budget`` records.
    """
    search = LatticeSearch(snapshot, models, budget, metric, progress=progress, removals=removals)  # type: ignore[arg-type]
    _check_feasible(search, models)
    found = _SEARCHES[algorithm](search)
    if found.best is None:
        raise InfeasibleAnonymizationError(
            f"no full-domain generalization satisfies {', '.join(map(str, models))} "
            f"while suppressing at most {budget} of {snapshot.n_rows} records"
        )
    return found.best.node, found


#: Per published QI column, ``(codes, labels)`` with ``labels[codes]`` the column (see :class:`AnonymizedTable`).
QiCodes = dict[Hashable, tuple[np.ndarray, np.ndarray]]


def _publish(
    table: pd.DataFrame,
    snapshot: Snapshot,
    node: Node,
    suppressed: np.ndarray,
    *,
    roles: AttributeRoles,
    suppressed_rows: str,
) -> tuple[pd.DataFrame, QiCodes | None]:
    """The table to publish, and the codes of its QIs when every published QI value is a label of ``node``.

    Removed rows: each QI is a Categorical built from its codes (no string per row is
    made; :func:`verify` re-checks it by code and hands users the object labels).
    Marked rows: object labels, ``*`` in the suppressed rows (then no codes).
    """
    if suppressed_rows == "remove":
        # Take the kept rows of the other columns, label only the kept rows' QIs, and build
        # the frame once from Series (copy=False: no consolidation, no copy; an insert per
        # column costs more than the whole constructor).
        kept = np.flatnonzero(~suppressed)
        everything = kept.shape[0] == len(table)
        units = snapshot.unit_of_row if everything else snapshot.unit_of_row[kept]
        index = table.index if everything else table.index[kept]
        qi_of = {column: qi for qi, column in enumerate(snapshot.quasi_identifiers)}
        identifiers = set(roles.identifiers)
        columns: dict[Hashable, pd.Series] = {}
        codes_of: QiCodes = {}
        for column in table.columns:
            if column in identifiers:
                continue
            if column in qi_of:
                qi = qi_of[column]
                labels = snapshot.hierarchies[qi].labels[node[qi]]
                values = pd.Categorical.from_codes(
                    snapshot.codes(qi, node[qi])[units], categories=pd.Index(labels, dtype=object)
                )
                columns[column] = pd.Series(values, index=index, copy=False)
                codes_of[column] = (np.asarray(values.codes), labels)
            else:
                columns[column] = table[column] if everything else table[column].take(kept)
        rest = pd.DataFrame(columns, index=index, copy=False)
        rest.columns = table.columns.drop(list(identifiers)) if identifiers else table.columns
        return rest.reset_index(drop=True), codes_of
    published = table.drop(columns=list(roles.identifiers))
    codes_of = {}
    for qi, (column, hierarchy) in enumerate(zip(snapshot.quasi_identifiers, snapshot.hierarchies, strict=True)):
        row_codes = snapshot.codes(qi, node[qi])[snapshot.unit_of_row]
        labels = hierarchy.labels[node[qi]]
        published[column] = pd.Series(labels[row_codes], index=published.index, dtype=object, copy=False)
        codes_of[column] = (row_codes, labels)
    if not suppressed.any():
        return published, codes_of
    # QIs (generalized labels, text) become '*'; sensitive values are hidden too: '*' in
    # text columns, missing in numeric ones (so the column keeps its type).
    for column in [*snapshot.quasi_identifiers, *roles.sensitive_attributes]:
        text = column in snapshot.quasi_identifiers or not pd.api.types.is_numeric_dtype(published[column])
        published[column] = published[column].astype(object)
        published.loc[suppressed, column] = SUPPRESSED_MARK if text else None
    return published, None


def _suppressed_units(
    snapshot: Snapshot, node: Node, models: Sequence[PrivacyModel], *, removals: bool = True
) -> np.ndarray:
    """Units left out at ``node``: the classes that violate some model, whole, or the few records removals name.

    ``removals=False``: whole classes only (as :func:`search_lattice` judged them then).
    """
    classes = snapshot.classes(node)
    masks = [model.violating_classes(classes) for model in models]
    breaking = breaking_classes(box_rules(models), snapshot, node, classes)
    if removals:
        return np.asarray(left_out(models, classes, masks, breaking).units, dtype=bool)
    for mask in masks:
        breaking |= mask
    return np.asarray(breaking[classes.class_of_row], dtype=bool)


def _holds(published: pd.DataFrame, roles: AttributeRoles, models: Sequence[PrivacyModel]) -> bool:
    classes = EquivalenceClasses.from_frame(published.reset_index(drop=True), roles.quasi_identifiers)
    return all(model.evaluate(classes).passed for model in models)


def _utility(
    snapshot: Snapshot,
    node: Node,
    suppressed_units: np.ndarray,
    *,
    k: int,
    n_sensitive: int,
) -> UtilityMetrics:
    """The metrics, computed over the node's classes split by suppression, weighted by their records.

    Every record of such a group publishes the same values (or is suppressed), so it
    has the same costs: the metric functions run on a few groups instead of every unit.
    """
    classes = snapshot.classes(node)
    group = classes.class_of_row * 2 + suppressed_units  # a class, suppressed or not
    sizes = np.bincount(group, weights=snapshot.weights, minlength=2 * classes.n_classes)
    first = np.empty(sizes.shape[0], dtype=np.intp)
    first[group[::-1]] = np.arange(group.shape[0] - 1, -1, -1)  # a unit of each group
    present = np.flatnonzero(sizes > 0)
    units, weights = first[present], sizes[present]
    suppressed_groups = np.asarray(suppressed_units, dtype=bool)[units]
    published_sizes = weights[~suppressed_groups].astype(np.int64)
    leaves = [codes[units] for codes in snapshot.leaf_codes]
    costs = [
        generalization_costs(h, leaves[qi], level)
        for qi, (h, level) in enumerate(zip(snapshot.hierarchies, node, strict=True))
    ]
    table_ncp = ncp(costs, suppressed_groups, weights=weights)
    leaf_counts = [
        h.leaf_counts[level][h.codes[level][leaves[qi]]]
        for qi, (h, level) in enumerate(zip(snapshot.hierarchies, node, strict=True))
    ]
    suppressed = int(snapshot.weights[suppressed_units].sum())
    return UtilityMetrics(
        ncp=table_ncp,
        lm=table_ncp * len(node),
        discernibility=discernibility(published_sizes, suppressed, snapshot.n_rows),
        c_avg=average_class_size(published_sizes, k),
        height=int(sum(node)),
        precision=precision(node, snapshot.heights),
        ileft=ileft(
            leaf_counts,
            [h.n_leaves for h in snapshot.hierarchies],
            suppressed_groups,
            n_ungeneralized=n_sensitive,
            weights=weights,
        ),
    )


@dataclass(frozen=True)
class FullDomainAnonymizer:
    """Full-domain generalization with one of the lattice searches (registered as its ``search`` name).

    Options: ``metric`` (the loss to minimise: ``"ncp"``, ``"lm"``, ``"discernibility"``
    or ``"height"``) and ``suppressed_rows`` (``"remove"`` suppressed records, or
    ``"mark"`` them: their QIs become ``*``, their sensitive values ``*`` (text)
    or missing (numeric)).
    """

    #: Checks every model on each candidate, so it can promise any of them (the release spec reads this);
    #: the search needs only the weighted snapshot, so a release can run it inside the database.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(
        works_on_snapshot=True, searches_lattice=True, needs_hierarchies=True, research_subset=True
    )
    search: str = "optimal"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption("metric", str, "ncp", choices=LOSS_METRICS, help="loss to minimise"),
        AnonymizerOption(
            "suppressed_rows", str, "remove", choices=("remove", "mark"), help="remove suppressed rows or mark them"
        ),
    )

    def __post_init__(self) -> None:
        if self.search not in _SEARCHES:
            raise ConfigurationError(f"search must be one of {sorted(_SEARCHES)}, got {self.search!r}")

    @property
    def name(self) -> str:
        """The search's name: ``"optimal"``, ``"samarati"`` or ``"exhaustive"``."""
        return self.search

    def snapshot_refusal(self, options: Mapping[str, Any]) -> str | None:
        """Marked suppressed rows are published with the others: that needs the rows."""
        if options.get("suppressed_rows", "remove") != "remove":
            return "suppressed_rows: mark needs the rows"
        return None

    def solve_snapshot(
        self,
        snapshot: Snapshot,
        models: Sequence[PrivacyModel],
        *,
        suppression_limit: float,
        n_sensitive: int = 0,
        progress: Callable[[int, int], None] | None = None,
        metric: str = "ncp",
        suppressed_rows: str = "remove",
    ) -> SnapshotSolution:
        """Search the snapshot's lattice and suppress the violating classes of the best node.

        The same node, suppression and utility as :meth:`run` with ``suppressed_rows="remove"``
        on the records the snapshot counts (both search the same snapshot). With a research subset
        the caller passes the models as ``run`` gets them (``research_scope.scoped_models``).

        Raises:
            ConfigurationError: ``suppressed_rows="mark"`` (it needs the rows), or a bad suppression limit.
            InfeasibleAnonymizationError: no node satisfies the models within the limit.
        """
        refusal = self.snapshot_refusal({"suppressed_rows": suppressed_rows})
        if refusal is not None:
            raise ConfigurationError(f"{self.search} cannot solve a snapshot with {refusal}")
        check_fraction(suppression_limit, name="suppression_limit")
        budget = suppression_budget(suppression_limit, snapshot.n_rows)
        announce_phase(progress, f"{self.search}: checking lattice nodes")  # as run() does: the same progress lines
        # an engine suppresses whole classes by their labels (SnapshotSolution.suppressed_classes)
        node, found = search_lattice(snapshot, models, budget, metric, self.search, progress, removals=False)
        suppressed = _suppressed_units(snapshot, node, models, removals=False)
        k = max(model.minimum_class_size for model in models)
        qis = list(snapshot.quasi_identifiers)
        return SnapshotSolution(
            node=node,
            suppressed_units=suppressed,
            suppressed=int(snapshot.weights[suppressed].sum()),
            utility=_utility(snapshot, node, suppressed, k=k, n_sensitive=n_sensitive),
            details=LatticeDetails(
                levels=dict(zip(qis, node, strict=True)),
                heights=dict(zip(qis, snapshot.heights, strict=True)),
                nodes_checked=found.nodes_checked,
                lattice_size=found.lattice_size,
            ),
        )

    def run(
        self, request: AnonymizationRequest, *, metric: str = "ncp", suppressed_rows: str = "remove"
    ) -> AnonymizedTable:
        """Search the lattice, suppress the violating classes of the chosen node, publish."""
        table, roles, models = request.table, request.roles, request.models
        snapshot = Snapshot.build(
            table,
            quasi_identifiers=roles.quasi_identifiers,
            hierarchies=request.hierarchies,
            model_columns=_model_columns(models),
        )
        announce_phase(request.progress, f"{self.search}: checking lattice nodes")
        node, found = search_lattice(snapshot, models, request.max_suppressed, metric, self.search, request.progress)
        suppressed_units = _suppressed_units(snapshot, node, models)
        suppressed = suppressed_units[snapshot.unit_of_row]
        published, qi_codes = _publish(table, snapshot, node, suppressed, roles=roles, suppressed_rows=suppressed_rows)
        if suppressed_rows == "mark" and suppressed.any() and not _holds(published, roles, models):
            # The marked rows are published as one class; when that class breaks a model, suppress nothing.
            found = _SEARCHES[self.search](
                LatticeSearch(snapshot, models, 0, metric, progress=request.progress)  # type: ignore[arg-type]
            )
            if found.best is None:
                raise InfeasibleAnonymizationError(
                    f"with suppressed_rows='mark' the suppressed rows are published as one class (every "
                    f"quasi-identifier '*', sensitive values hidden) that does not satisfy "
                    f"{', '.join(map(str, models))}, and no generalization satisfies them without suppression; "
                    "use suppressed_rows='remove' or relax the requirements"
                )
            node = found.best.node
            suppressed_units = _suppressed_units(snapshot, node, models)
            suppressed = suppressed_units[snapshot.unit_of_row]
            published, qi_codes = _publish(
                table, snapshot, node, suppressed, roles=roles, suppressed_rows=suppressed_rows
            )
        utility = _utility(
            snapshot, node, suppressed_units, k=request.minimum_class_size, n_sensitive=len(roles.sensitive_attributes)
        )
        return AnonymizedTable(
            table=published,
            qi_codes=qi_codes,
            released=np.ones(len(published), dtype=bool) if suppressed_rows == "remove" else ~suppressed,
            suppressed=int(suppressed.sum()),
            utility=utility,
            details=LatticeDetails(
                levels=dict(zip(roles.quasi_identifiers, node, strict=True)),
                heights=dict(zip(roles.quasi_identifiers, snapshot.heights, strict=True)),
                nodes_checked=found.nodes_checked,
                lattice_size=found.lattice_size,
            ),
        )


def anonymize_full_domain(
    frame: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    models: Sequence[PrivacyModel],
    identifiers: Sequence[Hashable] = (),
    insensitive: Sequence[Hashable] | None = None,
    sensitive_attributes: Sequence[Hashable] = (),
    suppression_limit: float = 0.0,
    algorithm: Literal["optimal", "samarati", "exhaustive"] = "optimal",
    metric: LossMetric = "ncp",
    suppressed_rows: Literal["remove", "mark"] = "remove",
    progress: Callable[[int, int], None] | None = None,
) -> AnonymizationResult:
    """Generalize every QI to one hierarchy level so that every model holds, with least loss.

    A shorthand for :func:`~privacy_plugins.core.anonymize.registry.anonymize` with
    a full-domain search; the result's :class:`LatticeDetails` hold the levels.

    Args:
        frame: the raw table.
        quasi_identifiers: the columns to generalize (each needs a hierarchy).
        hierarchies: column → :class:`Hierarchy`; every QI value must be a leaf.
        models: the privacy models to satisfy (e.g. ``[KAnonymity(5), DistinctLDiversity("disease", 2)]``).
        identifiers: direct identifiers, dropped from the output.
        insensitive: columns published unchanged (every column needs a role).
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
        ...                                models=[KAnonymity(2)], sensitive_attributes=["disease"])
        >>> result.details.levels, result.table["zip"].tolist()
        ({'zip': 1}, ['4790*', '4790*', '4761*', '4761*'])
    """
    if algorithm not in _SEARCHES:
        raise ConfigurationError(f"algorithm must be one of {sorted(_SEARCHES)}, got {algorithm!r}")
    return anonymize(
        frame,
        algorithm=algorithm,
        quasi_identifiers=quasi_identifiers,
        models=models,
        suppression_limit=suppression_limit,
        hierarchies=hierarchies,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
        insensitive=insensitive,
        progress=progress,
        metric=metric,
        suppressed_rows=suppressed_rows,
    )
