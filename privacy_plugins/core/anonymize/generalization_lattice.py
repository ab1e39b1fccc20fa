"""Full-domain generalization lattice: node evaluation and three searches.

A node is a vector of levels, one per QI; the lattice orders nodes
component-wise. A node *satisfies* when, after suppressing every class that
violates some model (whole classes, as ARX does), the suppressed records fit
the limit. Searches:

* :func:`exhaustive_search` checks every node (the reference the tests use);
* :func:`optimal_search` finds the same optimum while checking few nodes:
  nodes are visited in order of a lower bound of their loss (the loss the node
  would have without suppression, monotone in the levels), the search stops
  once that bound exceeds the best loss found, and monotone models tag whole
  sub-lattices (a failing node fails with all its specializations, a
  satisfying one — when every model is monotone under the suppression setting
  — satisfies with all its generalizations), in the manner of ARX's Flash/OLA
  predictive tagging;
* :func:`samarati_search`: binary search over lattice height for the lowest
  height holding a satisfying node, then the least-loss node at that height.

Suppression and monotonicity: k-anonymity and distinct l-diversity stay
monotone when violating classes are suppressed; the other l variants,
t-closeness and per-record leakage bounds do not, so with a suppression limit
they never tag nodes as satisfying. Failing nodes are still tagged through a
monotone *relaxation* (k-anonymity, distinct l-diversity with the same l),
which fails whenever the real model set fails, and through a model's
*suppression bound* (:meth:`PrivacyModel.suppression_bound`, t-closeness): a
lower bound on what every specialization of a node must suppress, so a node
whose bound exceeds the limit fails with its whole sub-lattice. Neither is a
reason to skip a node that is not proven to fail: a "pass" tag only steers the
classification (and, when every model is monotone and nothing may be
suppressed, where it is exact, stands for a check).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from privacy_plugins.core.anonymize.lattice_boxes import breaking_classes
from privacy_plugins.core.anonymize.lattice_repair import left_out, repairable
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.history_boxes import box_rules
from privacy_plugins.core.metrics.information_loss import discernibility, generalization_costs
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.partition import dense_key_limit
from privacy_plugins.errors import ConfigurationError

__all__ = [
    "LOSS_METRICS",
    "LatticeSearch",
    "LossMetric",
    "Node",
    "NodeOutcome",
    "SearchResult",
    "check_lattice_size",
    "exhaustive_search",
    "optimal_search",
    "samarati_search",
]

Node = tuple[int, ...]
LossMetric = Literal["ncp", "lm", "discernibility", "height"]
LOSS_METRICS: tuple[str, ...] = ("ncp", "lm", "discernibility", "height")
#: Above this many nodes the lattice is refused (use a local-recoding algorithm instead).
MAX_LATTICE_SIZE = 1_000_000
#: Lattices larger than this are classified whole before the scan (smaller ones where the bound can still win).
#: Classifying only where the bound can win was faster on every lattice measured, so by default never.
CLASSIFY_WITH_SUPPRESSION_ABOVE = MAX_LATTICE_SIZE
_EPS = 1e-12


def check_lattice_size(heights: Sequence[int]) -> int:
    """The number of nodes Π (height + 1) of a full-domain lattice; refuses more than :data:`MAX_LATTICE_SIZE`.

    Cheap (no data needed), so a release calls it before the diagnosis rather
    than finding out after minutes that the anonymizer refuses the lattice.

    Raises:
        ConfigurationError: the lattice is larger than the searches accept.

    Example:
        >>> check_lattice_size([4, 1, 5])
        60
        >>> check_lattice_size([9] * 12)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        privacy_plugins.errors.ConfigurationError: the generalization lattice has 1,000,000,000,000 nodes ...
    """
    size = math.prod(h + 1 for h in heights)
    if size > MAX_LATTICE_SIZE:
        raise ConfigurationError(
            f"the generalization lattice has {size:,} nodes (more than {MAX_LATTICE_SIZE:,}); "
            "use fewer quasi-identifiers or shallower hierarchies"
        )
    return size


@dataclass(frozen=True)
class NodeOutcome:
    """The check of one node: whether it satisfies, what it suppresses, and its loss."""

    node: Node
    satisfied: bool
    suppressed: int
    loss: float
    #: The node is proven to fail with every specialization (relaxation or suppression bound).
    relaxation_failed: bool


@dataclass(frozen=True)
class SearchResult:
    """The node a search chose, or ``None`` when no node satisfies the models."""

    best: NodeOutcome | None
    nodes_checked: int
    lattice_size: int
    algorithm: str


def _level_costs(snapshot: Snapshot, qi: int, weights: np.ndarray) -> list[float]:
    """Σ over records of QI ``qi``'s NCP cost at each level (records per leaf × the leaf's cost)."""
    hierarchy = snapshot.hierarchies[qi]
    per_leaf = np.bincount(snapshot.leaf_codes[qi], weights=weights, minlength=hierarchy.n_leaves)
    leaves = np.arange(hierarchy.n_leaves)
    return [
        float((generalization_costs(hierarchy, leaves, level) * per_leaf).sum())
        for level in range(hierarchy.height + 1)
    ]


def _relaxation(models: Sequence[PrivacyModel], *, with_suppression: bool) -> list[PrivacyModel]:
    """Monotone models that fail whenever ``models`` fail (used to tag failing sub-lattices)."""
    relaxed = (model.monotone_relaxation(with_suppression=with_suppression) for model in models)
    return [model for model in relaxed if model is not None]


@dataclass(eq=False)
class LatticeSearch:
    """Shared state of a search: the snapshot, the models, the limit and a cache of checked nodes."""

    snapshot: Snapshot
    models: Sequence[PrivacyModel]
    max_suppressed: int
    metric: LossMetric = "ncp"
    progress: Callable[[int, int], None] | None = None
    checked: dict[Node, NodeOutcome] = field(default_factory=dict)
    #: Whether the caller can leave out part of a class (rows in hand); an engine filters whole classes only.
    removals: bool = True

    def __post_init__(self) -> None:
        if self.metric not in LOSS_METRICS:
            raise ConfigurationError(f"metric must be one of {list(LOSS_METRICS)}, got {self.metric!r}")
        check_lattice_size(self.heights)
        with_suppression = self.max_suppressed > 0
        self.monotone = all(m.is_monotonic(with_suppression=with_suppression) for m in self.models)
        self.relaxed = _relaxation(self.models, with_suppression=with_suppression)
        self.redistributing = [m for m in self.models if m.depends_on_table_distribution]
        self.bounding = [m for m in self.models if m.bounds_suppression]
        #: Rules asked of each class's box (never monotone: judged on nodes the models pass, never pruned with).
        self.box_rules = box_rules(self.models)
        #: Some model names the few records a failing class may lose instead of all of them.
        self.removing = self.removals and any(m.repaired_by_removal for m in self.models)
        self.relaxed_is_models = len(self.relaxed) == len(self.models) and all(
            r is m for r, m in zip(self.relaxed, self.models, strict=True)
        )
        n, d = self.snapshot.n_rows, len(self.heights)
        weights = self.snapshot.weights.astype(float)
        # total_cost[qi][level] = Σ over records of the NCP cost at that level, summed
        # per leaf (records per leaf × the leaf's cost): leaves, not units, per level.
        self.total_cost = [_level_costs(self.snapshot, qi, weights) for qi in range(d)]
        self._norm = float(n * d)
        # Models judged by class sizes alone (k-anonymity) are checked by one bincount
        # of the units' class keys (see _check_by_size); the others build the classes.
        by_size = bool(self.models) and all(m.judged_by_size for m in self.models)
        self.size_threshold = (
            max(m.minimum_class_size for m in self.models)
            if by_size and self.relaxed_is_models and not self.bounding and not self.redistributing
            else None
        )
        n_units = self.snapshot.weights.shape[0]
        # Dense keys stay below dense_key_limit: int32 whenever that fits (half the bytes per pass).
        self._keys = np.empty(n_units, dtype=np.int32 if dense_key_limit(n_units) < 2**31 else np.int64)
        # Without repeated units the counts need no weights (an integer bincount, faster).
        self._count_weights = None if bool((self.snapshot.weights == 1).all()) else weights

    @property
    def heights(self) -> tuple[int, ...]:
        """Hierarchy height of each QI."""
        return self.snapshot.heights

    @property
    def lattice_size(self) -> int:
        """Number of nodes."""
        return math.prod(h + 1 for h in self.heights)

    def nodes(self) -> Iterator[Node]:
        """Every node, bottom-up in lexicographic order."""
        return itertools.product(*(range(h + 1) for h in self.heights))

    def lower_bound(self, node: Node) -> float:
        """A lower bound of the node's loss that never decreases with generalization."""
        if self.metric == "height":
            return float(sum(node))
        if self.metric == "discernibility":
            return 0.0
        bound = sum(self.total_cost[qi][level] for qi, level in enumerate(node)) / self._norm
        return bound * len(node) if self.metric == "lm" else bound

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """:meth:`lower_bound` of every row of ``nodes`` at once (summed in the same order, so equal)."""
        if self.metric == "height":
            return nodes.sum(axis=1).astype(float)
        if self.metric == "discernibility":
            return np.zeros(nodes.shape[0])
        total = np.zeros(nodes.shape[0])
        for qi in range(nodes.shape[1]):
            total = total + np.asarray(self.total_cost[qi])[nodes[:, qi]]
        bound = total / self._norm
        return bound * nodes.shape[1] if self.metric == "lm" else bound

    def _loss(
        self, node: Node, suppressed_units: np.ndarray | None, suppressed: int, published_sizes: np.ndarray
    ) -> float:
        if self.metric == "height":
            return float(sum(node))
        if self.metric == "discernibility":
            return discernibility(published_sizes, suppressed, self.snapshot.n_rows)
        removed = 0.0
        if suppressed_units is not None:
            weights = self.snapshot.weights[suppressed_units].astype(float)
            removed = sum(
                float((self.snapshot.costs(qi, level)[suppressed_units] * weights).sum())
                for qi, level in enumerate(node)
            )
        total = sum(self.total_cost[qi][level] for qi, level in enumerate(node))
        ncp = (total - removed + len(node) * suppressed) / self._norm
        return ncp * len(node) if self.metric == "lm" else ncp

    def check(self, node: Node) -> NodeOutcome:
        """Evaluate one node (cached)."""
        cached = self.checked.get(node)
        if cached is not None:
            return cached
        outcome = None if self.size_threshold is None else self._check_by_size(node, self.size_threshold)
        if outcome is None:
            outcome = self._check_classes(node)
        self.checked[node] = outcome
        if self.progress is not None:
            self.progress(len(self.checked), self.lattice_size)
        return outcome

    def _check_by_size(self, node: Node, k: int) -> NodeOutcome | None:
        """The check when every model is "classes of at least ``k`` records"; ``None`` when the keys are too wide.

        Records per class come from one ``bincount`` of the units' uncompacted class
        keys (:meth:`Snapshot.class_keys`): no class ids, no class table. The outcome
        equals :meth:`_check_classes`: a class violates iff it counts fewer than
        ``k`` records; keys no unit has count 0 (< k too, but they add nothing to the
        suppressed records and publish nothing); the models are their own relaxation
        and none bounds suppression or depends on the published distribution (the
        caller checked).
        """
        keys = self._keys
        space = self.snapshot.class_keys(node, keys)
        if space is None:
            return None
        counts = np.bincount(keys, weights=self._count_weights, minlength=space)
        small = counts < k
        suppressed = int(counts[small].sum())
        failed = suppressed > self.max_suppressed
        satisfied = not failed and suppressed < self.snapshot.n_rows
        loss = math.inf
        if satisfied:
            published = counts[~small].astype(np.int64) if self.metric == "discernibility" else counts[:0]
            loss = self._loss(node, small[keys] if suppressed else None, suppressed, published)
        return NodeOutcome(node=node, satisfied=satisfied, suppressed=suppressed, loss=loss, relaxation_failed=failed)

    def _check_classes(self, node: Node) -> NodeOutcome:
        """The check on the node's equivalence classes (any models)."""
        classes = self.snapshot.classes(node)
        masks = [model.violating_classes(classes) for model in self.models]
        violating = np.zeros(classes.n_classes, dtype=bool)
        for mask in masks:
            violating |= mask
        if self.relaxed_is_models:  # monotone models are their own relaxation: measure once
            relaxed_violating = violating
        else:
            relaxed_violating = np.zeros(classes.n_classes, dtype=bool)
            for model in self.relaxed:
                relaxed_violating |= model.violating_classes(classes)
        suppressed = int(classes.sizes[violating].sum())
        relaxation_failed = int(classes.sizes[relaxed_violating].sum()) > self.max_suppressed or any(
            # The bound is a sum of floats; the margin keeps rounding from failing a node wrongly.
            model.suppression_bound(classes) > self.max_suppressed + 1e-9 * classes.n_rows
            for model in self.bounding
        )
        # classes only removable models fail may cost a few records, not their size (lattice_repair.py)
        fixable = repairable(self.models, masks, np.zeros(classes.n_classes, dtype=bool)) if self.removing else None
        firm = suppressed if fixable is None else int(classes.sizes[violating & ~fixable].sum())
        breaking = np.zeros(classes.n_classes, dtype=bool)
        if self.box_rules and firm <= self.max_suppressed:  # only a node the models pass can need it
            breaking = breaking_classes(self.box_rules, self.snapshot, node, classes)
            violating = violating | breaking
            suppressed = int(classes.sizes[violating].sum())
        units: np.ndarray | None = None
        if fixable is not None and fixable.any() and firm <= self.max_suppressed:
            units = left_out(self.models, classes, masks, breaking).units
            suppressed = int(classes.unit_weights[units].sum())
        satisfied = suppressed <= self.max_suppressed and suppressed < classes.n_rows
        # Per-unit flags cost a pass over the units: only a satisfying node with
        # suppressed classes reads them (failing nodes, the most checked, never do).
        if units is None and satisfied and suppressed:
            units = violating[classes.class_of_row]
        suppressed_units = units if satisfied and suppressed else None
        if suppressed_units is not None and self.redistributing:
            # Suppression changed the published distribution: re-check against it.
            published = classes.restricted(~suppressed_units)
            satisfied = not any(m.violating_classes(published).any() for m in self.redistributing)
        loss = math.inf
        if satisfied:
            sizes = classes.sizes[~violating]
            if self.metric == "discernibility" and suppressed_units is not None and fixable is not None:
                left = ~suppressed_units  # classes may have lost a few records only
                sizes = np.bincount(classes.class_of_row[left], weights=classes.unit_weights[left])
                sizes = sizes[sizes > 0].astype(np.int64)
            loss = self._loss(node, suppressed_units, suppressed, sizes)
        return NodeOutcome(
            node=node, satisfied=satisfied, suppressed=suppressed, loss=loss, relaxation_failed=relaxation_failed
        )

    def sort_key(self, outcome: NodeOutcome) -> tuple[float, int, Node]:
        """Best node first: least loss, then lowest height, then lexicographic."""
        return (round(outcome.loss, 12), sum(outcome.node), outcome.node)


def _best(outcomes: Sequence[NodeOutcome], key: Callable[[NodeOutcome], tuple[float, int, Node]]) -> NodeOutcome | None:
    satisfying = [o for o in outcomes if o.satisfied]
    return min(satisfying, key=key) if satisfying else None


def exhaustive_search(search: LatticeSearch) -> SearchResult:
    """Check every node and return the least-loss satisfying one (the reference)."""
    outcomes = [search.check(node) for node in search.nodes()]
    return SearchResult(
        best=_best(outcomes, search.sort_key),
        nodes_checked=len(search.checked),
        lattice_size=search.lattice_size,
        algorithm="exhaustive",
    )


def lattice_nodes(heights: Sequence[int]) -> np.ndarray:
    """Every node as a row, in lexicographic order: row ``Σ level·stride`` (C order of the lattice's shape)."""
    shape = tuple(h + 1 for h in heights)
    return np.indices(shape).reshape(len(shape), math.prod(shape)).T


def _box(grid: np.ndarray, levels: Sequence[int], *, below: bool) -> np.ndarray:
    """The view of ``grid`` (tags shaped like the lattice) over the nodes below or above ``levels``."""
    cut = tuple(slice(0, level + 1) if below else slice(level, None) for level in levels)
    return grid[(*cut, Ellipsis)]  # the Ellipsis keeps a 0-d grid (no QI) a view


_OPEN, _FAILS, _PASSES = 0, 1, 2


def _classify(
    search: LatticeSearch, nodes: np.ndarray, bounds: np.ndarray, *, bounded: bool = False, steep: bool = False
) -> np.ndarray:
    """Tag nodes as passing (+1) or failing (−1) the monotone relaxation, checking few nodes.

    Flash-style: take the lowest unclassified node, walk a chain of unclassified
    successors up to the top (always towards the smallest loss bound), binary
    search the chain for the pass/fail boundary, and propagate each verdict to
    the whole sub-lattice above (pass) or below (fail) the checked node.

    With ``bounded``, only nodes whose loss bound does not exceed the least loss of
    a satisfying node checked so far are classified (chains stop there too): the
    scan that follows never visits the others, so classifying them is wasted. Each
    tag is still the relaxation's verdict propagated along the order, so it is
    sound whatever region it was found in.

    With ``steep``, chains start at the least loss bound (then lowest) and climb
    towards the *largest* bound: without suppression the satisfying nodes lie high,
    and a steep chain reaches the pass/fail boundary in fewer checks (Adult, k=5,
    0 %: 97 checks instead of 123). The order only changes which nodes are checked,
    never a tag, so the optimum is the same.
    """
    n_nodes, width = nodes.shape
    shape = tuple(h + 1 for h in search.heights)
    # One byte per node (_OPEN, _FAILS, _PASSES) seen two ways over the same memory: the
    # walk reads single tags from the bytearray as Python ints (no numpy scalar per
    # read), and a verdict tags its whole sub-lattice through the numpy view, a box.
    tags = bytearray(n_nodes)
    grid = np.frombuffer(tags, dtype=np.uint8).reshape(shape)
    strides = [math.prod(shape[qi + 1 :]) for qi in range(width)]
    top = search.heights
    levels_of: list[list[int]] = nodes.tolist()
    bound_of: list[float] = bounds.tolist()
    heights = nodes.sum(axis=1)
    # Lowest first, then least bound. Tags only fill in and the best loss only falls,
    # so a node passed over stays passed over: one pointer walks this order once.
    order: list[int] = np.lexsort((np.arange(n_nodes), *((heights, bounds) if steep else (bounds, heights)))).tolist()
    limit = math.inf  # bounded: the best loss found so far (+ rounding margin); beyond it nothing is classified
    cursor = 0
    while True:
        while cursor < n_nodes and (tags[order[cursor]] != _OPEN or bound_of[order[cursor]] > limit):
            cursor += 1
        if cursor == n_nodes:
            break
        current = order[cursor]
        chain = [current]
        while True:
            levels = levels_of[current]
            chosen = -1
            for qi in range(width):
                if levels[qi] == top[qi]:
                    continue
                successor = current + strides[qi]
                if tags[successor] != _OPEN or bound_of[successor] > limit:
                    continue
                if chosen < 0:
                    chosen = successor
                elif steep:  # the largest bound, then the first successor: max by (bound, −index)
                    if bound_of[successor] > bound_of[chosen] or (
                        bound_of[successor] == bound_of[chosen] and successor < chosen
                    ):
                        chosen = successor
                elif bound_of[successor] < bound_of[chosen] or (  # min by (bound, index)
                    bound_of[successor] == bound_of[chosen] and successor < chosen
                ):
                    chosen = successor
            if chosen < 0:
                break
            current = chosen
            chain.append(current)
        low, high = 0, len(chain) - 1
        while low <= high:
            middle = (low + high) // 2
            index = chain[middle]
            if tags[index] == _OPEN:
                outcome = search.check(tuple(levels_of[index]))
                if outcome.satisfied and bounded:
                    limit = min(limit, outcome.loss + _EPS)
                box = _box(grid, levels_of[index], below=outcome.relaxation_failed)
                box[box == _OPEN] = _FAILS if outcome.relaxation_failed else _PASSES
            if tags[index] == _PASSES:
                high = middle - 1
            else:
                low = middle + 1
    return np.array([0, -1, 1], dtype=np.int8)[np.frombuffer(tags, dtype=np.uint8)]


def optimal_search(search: LatticeSearch) -> SearchResult:
    """The least-loss satisfying node, checking as few nodes as the bounds and tags allow.

    Returns the same optimum as :func:`exhaustive_search` (same loss and, with the
    same tie-breaking, the same node): a node is skipped only when it is proven
    to fail (its monotone relaxation fails, or a generalization's suppression
    bound exceeds the limit) or proven not to beat the best node found (its loss
    lower bound exceeds that loss).
    """
    nodes = lattice_nodes(search.heights)
    bounds = search.lower_bounds(nodes)
    # Flash-style classification first, limited to the nodes whose loss bound does not
    # exceed the best loss found so far (Adult, 5 %: k=20 137 checks instead of 512 for
    # a bound-ordered scan, k=5 56 instead of 124; 0 %, Adult x33: 30 instead of 147
    # when classifying everything; MACH2019, 9 QIs, 38,880 nodes, k=5, 1 %: 1,311
    # instead of 7,477, 3.8 s instead of 21 s). Without suppression a node tagged satisfying has its
    # bound as loss. t-closeness has no monotone relaxation under suppression, but its
    # suppression bound (TCloseness.suppression_bound) fails whole sub-lattices just
    # the same (Adult, t=0.2, 5 %: 237 checks instead of 2,142).
    exact_without_check = search.monotone and search.max_suppressed == 0 and search.metric in ("ncp", "lm", "height")
    if search.relaxed or search.bounding:
        status = _classify(
            search,
            nodes,
            bounds,
            bounded=search.lattice_size <= CLASSIFY_WITH_SUPPRESSION_ABOVE,
            steep=exact_without_check,
        )
    else:
        status = np.zeros(nodes.shape[0], dtype=np.int8)
    grid = status.reshape(tuple(h + 1 for h in search.heights))
    order = np.lexsort((np.arange(nodes.shape[0]), nodes.sum(axis=1), bounds))
    outcomes: list[NodeOutcome] = []
    best_loss = math.inf
    # Tagged failing nodes stay failing and are skipped anyway; the bounds ascend along
    # the order, so leaving them out stops the scan at the same place.
    for index in order[status[order] >= 0].tolist():
        bound = float(bounds[index])
        if bound > best_loss + _EPS:
            break
        if status[index] < 0:
            continue
        node = tuple(nodes[index].tolist())
        if exact_without_check and status[index] > 0 and node not in search.checked:
            # Proven to satisfy, and with no suppression its loss is exactly the bound.
            outcome = NodeOutcome(node=node, satisfied=True, suppressed=0, loss=bound, relaxation_failed=False)
        else:
            outcome = search.check(node)
            if outcome.relaxation_failed:
                _box(grid, node, below=True)[...] = -1
        outcomes.append(outcome)
        if outcome.satisfied:
            best_loss = min(best_loss, outcome.loss)
    return SearchResult(
        best=_best(outcomes, search.sort_key),
        nodes_checked=len(search.checked),
        lattice_size=search.lattice_size,
        algorithm="optimal",
    )


def samarati_search(search: LatticeSearch) -> SearchResult:
    """Samarati's binary search over height, then the least-loss node at the lowest height found.

    Exact for models that are monotone under the suppression setting (k-anonymity,
    distinct l-diversity; every model without suppression except per-record
    bounds); for the others the binary search is a heuristic, as in the original.
    """
    by_height: dict[int, list[Node]] = {}
    for node in search.nodes():
        by_height.setdefault(sum(node), []).append(node)
    top = max(by_height)

    def exists(height: int) -> bool:
        return any(search.check(node).satisfied for node in by_height[height])

    if not exists(top):
        return SearchResult(best=None, nodes_checked=len(search.checked), lattice_size=search.lattice_size,
                            algorithm="samarati")  # fmt: skip
    low, high = 0, top
    while low < high:
        middle = (low + high) // 2
        if exists(middle):
            high = middle
        else:
            low = middle + 1
    outcomes = [search.check(node) for node in by_height[low]]
    return SearchResult(
        best=_best(outcomes, search.sort_key),
        nodes_checked=len(search.checked),
        lattice_size=search.lattice_size,
        algorithm="samarati",
    )
