"""Partition, then anonymize every block alone: the block path of the local-recoding family (issue 28).

An anonymizer tagged ``works_per_block`` (a :class:`~.registry.BlockAnonymizer`: k-member,
two-phase's sibling bucket …) is quadratic in the records it sees, so a table above its
``block_limit`` is cut first and each block is anonymized on its own:

1. **Plan** (:func:`plan_blocks`) — on *units*, the distinct combinations of the QIs and the
   columns the models read, with their record counts: Mondrian's cut
   (:func:`~.cluster_blocks.split_blocks`, weighted medians, so the units give the blocks
   their records would) where the anonymizer accepts both halves (``block_admissible``).
   Units with equal QIs always share a block, so the block of a record is a function of its
   QIs alone (:func:`block_keys`): an engine computes the units with one ``GROUP BY`` and
   joins the small key table back, and only those counts ever reach the driver.
2. **Anonymize each block** (:func:`anonymize_block`) — the same function in memory, in a
   process pool (:func:`run_in_blocks`, when there are several blocks and cores) and inside
   an engine's task (``groupBy(block).applyInPandas`` on Spark): the block's records in a
   canonical order (by a hash of every published column: the order they arrive in does not
   matter), a seed drawn from the run's seed and the block id, numeric QIs normalized by the
   whole table's range (``numeric_domains``). So a block gives the same rows wherever it runs.
3. **Re-check the whole** — the blocks' outputs are concatenated and the core re-measures
   every model on the published table, as for any other output (:func:`~.base.verify` in
   memory; ``verify_classes`` over the engine's GROUP BY on an engine).

Blocks are skipped (one run over the whole table) when a model compares a class with the
whole table (``depends_on_table_distribution``: t-closeness, average risk, population
uniqueness): a block does not know the whole table's distribution.

**Cost in NCP.** A greedy pass over a larger pool finds closer records: NCP rises with the
number of blocks (see :mod:`~.cluster_blocks`), which is why the limits are large.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import os
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationDetails, AnonymizationRequest, AnonymizedTable
from privacy_plugins.core.anonymize.cluster_blocks import split_blocks
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace
from privacy_plugins.core.anonymize.mondrian import _dimension, distinct_as_keys, small_codes
from privacy_plugins.core.anonymize.registry import BlockAnonymizer, with_derived_columns
from privacy_plugins.core.metrics.information_loss import UtilityMetrics, average_class_size, discernibility
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.parameters import suppression_budget
from privacy_plugins.core.partition import EquivalenceClasses, combine_codes
from privacy_plugins.core.progress import announce_phase

__all__ = [
    "BLOCK_COLUMN",
    "POOL_ROWS",
    "BlockDetails",
    "anonymize_block",
    "block_keys",
    "block_refusal",
    "merge_blocks",
    "numeric_domains",
    "plan_blocks",
    "run_in_blocks",
    "unit_table",
]

#: The column an engine adds to carry each record's block id (never published).
BLOCK_COLUMN = "__privacy_plugins_block__"
#: Tables of fewer records run their blocks in this process: starting workers costs more.
POOL_ROWS = 65536


@dataclass(frozen=True)
class BlockDetails(AnonymizationDetails):
    """A run in blocks: how many, their sizes, and each block's own details (in block order).

    Attributes:
        n_blocks: blocks the table was cut into.
        limit: most records per block the anonymizer asked for.
        rows_per_block: records per block: min, median, max.
        blocks: every block's own details (``to_dict()``), in block order.
    """

    kind: ClassVar[str] = "blocks"

    n_blocks: int
    limit: int
    rows_per_block: Mapping[str, float]
    blocks: tuple[Mapping[str, Any], ...]
    first_headline: str = ""

    def headline(self) -> str:
        """The blocks and what the first one did."""
        sizes = f"{self.rows_per_block['min']:g}-{self.rows_per_block['max']:g}"
        first = f"; first block: {self.first_headline}" if self.first_headline else ""
        return f"{self.n_blocks:,} blocks of {sizes} records (limit {self.limit:,}){first}"


def block_refusal(models: Sequence[PrivacyModel]) -> str | None:
    """Why these models cannot be met block by block (``None``: they can)."""
    global_models = [str(m) for m in models if m.depends_on_table_distribution]
    if global_models:
        return f"{', '.join(global_models)} compares classes with the whole table, which a block does not see"
    return None


def unit_table(frame: pd.DataFrame, columns: Sequence[Hashable]) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The distinct combinations of ``columns`` (missing values equal), each row's unit, and the records per unit."""
    unit_of_row = frame.groupby(list(columns), dropna=False, sort=False, observed=True).ngroup().to_numpy(np.int64)
    weights = np.bincount(unit_of_row).astype(np.int64)
    first = np.full(weights.shape[0], -1, dtype=np.int64)
    first[unit_of_row[::-1]] = np.arange(unit_of_row.shape[0] - 1, -1, -1)
    units = frame[list(columns)].iloc[first].reset_index(drop=True)
    return units, unit_of_row, weights


def numeric_domains(units: pd.DataFrame, request: AnonymizationRequest) -> dict[Hashable, tuple[float, float]]:
    """Each numeric QI without a hierarchy: its (min, max) over the whole table (the NCP's denominator)."""
    domains: dict[Hashable, tuple[float, float]] = {}
    for q in request.quasi_identifiers:
        column = units[q]
        if request.hierarchies.get(q) is None and pd.api.types.is_numeric_dtype(column.dtype):
            numbers = column.to_numpy(dtype=float, na_value=np.nan)
            if numbers.shape[0] and not np.isnan(numbers).any():
                domains[q] = (float(numbers.min()), float(numbers.max()))
    return domains


def plan_blocks(anonymizer: BlockAnonymizer, units: AnonymizationRequest, weights: np.ndarray) -> np.ndarray:
    """The block of every unit (``units.table``: QIs and model columns, ``weights``: records each), from 0.

    One block when the table fits the anonymizer's limit, when a model needs the whole table
    (:func:`block_refusal`) or when no admissible cut exists.
    """
    n_units = len(units.table)
    one = np.zeros(n_units, dtype=np.int64)
    if int(weights.sum()) <= anonymizer.block_limit() or block_refusal(units.models) is not None:
        return one
    admissible = anonymizer.block_admissible(units, weights)
    every = np.arange(n_units, dtype=np.int64)
    if not admissible(every):
        return one  # the anonymizer itself says why (or suppresses) on the whole table
    space = CostSpace([_dimension(units.table[q], units.hierarchies.get(q))[0] for q in units.quasi_identifiers])
    block_of_unit = np.empty(n_units, dtype=np.int64)
    for block, members in enumerate(split_blocks(space, every, admissible, limit=anonymizer.block_limit(),
                                                 weights=weights)):  # fmt: skip
        block_of_unit[members] = block
    return block_of_unit


def block_keys(units: pd.DataFrame, block_of_unit: np.ndarray, quasi_identifiers: Sequence[Hashable]) -> pd.DataFrame:
    """The distinct QI combinations and their block (:data:`BLOCK_COLUMN`): what an engine joins to its records.

    Units with equal QIs share a block (the cut reads the QIs only), so the QIs alone are the key.
    """
    keys = units[list(quasi_identifiers)].assign(**{BLOCK_COLUMN: block_of_unit})
    keys = keys.drop_duplicates(subset=list(quasi_identifiers), ignore_index=True)
    if len(keys) != len(keys.drop_duplicates(ignore_index=True)):  # pragma: no cover - split_blocks guarantees it
        raise AssertionError("units with equal quasi-identifiers were put in different blocks")
    return keys


def block_seed(seed: int, block: int) -> int:
    """The seed of one block: drawn from the run's seed and the block id (the same wherever the block runs)."""
    return int(np.random.SeedSequence([seed, block]).generate_state(1, dtype=np.uint32)[0])


def canonical_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows sorted by a hash of all their values: one order whatever order they arrived in."""
    keys = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return frame.iloc[np.argsort(keys, kind="stable")].reset_index(drop=True)


def anonymize_block(
    anonymizer: BlockAnonymizer,
    template: AnonymizationRequest,
    options: Mapping[str, Any],
    frame: pd.DataFrame,
    block: int,
) -> AnonymizedTable:
    """One block's records (published columns only, any order) anonymized alone; its output before the re-check.

    The columns the models derive (:meth:`PrivacyModel.derived_columns`) are added here and kept in
    the output, as :func:`~.registry.anonymize` keeps them until the re-check.

    ``template`` is the whole table's request (its table is not read): its models, roles,
    hierarchies, seed, ``suppression_limit`` and ``numeric_domains`` (set by the caller).
    """
    rows = canonical_order(frame)
    rows = with_derived_columns(rows, template.models)
    request = replace(
        template,
        table=rows,
        roles=replace(template.roles, identifiers=()),
        max_suppressed=suppression_budget(template.suppression_limit, len(rows)),
        seed=block_seed(template.seed, block),
        progress=None,
    )
    return anonymizer.run(request, **options)  # derived columns kept: the re-check reads them


def _merged_codes(
    outputs: Sequence[AnonymizedTable], quasi_identifiers: Sequence[Hashable]
) -> dict[Hashable, tuple[np.ndarray, np.ndarray]] | None:
    """Every QI's codes over the blocks' rows (block order) and the union of their labels; ``None`` without codes.

    Each block factorized its own labels; a block's codes are mapped onto the union's (one
    lookup per distinct label), so no label is made per row.
    """
    if any(o.qi_codes is None for o in outputs):
        return None
    merged: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}
    for q in quasi_identifiers:
        pairs = [cast(Mapping[Hashable, tuple[np.ndarray, np.ndarray]], o.qi_codes)[q] for o in outputs]
        union = pd.Index(np.concatenate([np.asarray(labels, dtype=object) for _, labels in pairs]), dtype=object)
        labels = np.asarray(union.unique(), dtype=object)
        if not distinct_as_keys(np.asarray(union, dtype=object), labels.shape[0]):
            return None  # two blocks' labels fold into one category (1 and True): each block's spelt out
        index = pd.Index(labels, dtype=object)
        codes = [small_codes(index.get_indexer(pd.Index(block_labels, dtype=object)), labels.shape[0])[block_codes]
                 for block_codes, block_labels in pairs]  # fmt: skip
        merged[q] = (np.concatenate(codes), labels)
    return merged


def merge_blocks(
    outputs: Sequence[AnonymizedTable], request: AnonymizationRequest, *, limit: int, rows_per_block: Sequence[int]
) -> AnonymizedTable:
    """The blocks' outputs as one (block order): rows concatenated, NCP averaged over the published records.

    QIs published as Categoricals over codes stay so (over the union of the blocks' labels) and
    their codes go to the re-check, which groups by them; otherwise each block's labels are spelt out.
    """
    qis = list(request.quasi_identifiers)
    merged = _merged_codes(outputs, qis)
    tables = []
    for output in outputs:
        table = output.table.reset_index(drop=True)
        if merged is not None:
            table = table.drop(columns=qis)
        elif output.qi_codes is not None:  # Categorical QIs as labels: the blocks' categories differ
            for column, (codes, labels) in output.qi_codes.items():
                table[column] = pd.Series(np.asarray(labels, dtype=object)[codes], dtype=object)
        tables.append(table)
    published = pd.concat(tables, ignore_index=True)
    del tables
    released = np.concatenate([np.asarray(o.released, dtype=bool) for o in outputs])
    out = np.array([int(np.asarray(o.released, dtype=bool).sum()) for o in outputs], dtype=float)
    ncp = float((np.array([o.utility.ncp for o in outputs]) * out).sum() / out.sum()) if out.sum() else 0.0
    suppressed = sum(o.suppressed for o in outputs)
    if merged is not None:
        columns = list(outputs[0].table.columns)
        for q, (codes, labels) in merged.items():
            values = pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object), validate=False)
            published[q] = pd.Series(values, index=published.index, copy=False)
        published = published[columns]
        parts = [(codes[released], labels.shape[0]) for codes, labels in merged.values()]
        class_of_row, n_classes = combine_codes(parts, int(released.sum()))
        sizes = np.bincount(class_of_row, minlength=n_classes).astype(np.int64)
        del parts, class_of_row
    else:
        sizes = EquivalenceClasses.from_frame(published[released].reset_index(drop=True), qis).sizes
    utility = UtilityMetrics(
        ncp=ncp,
        lm=ncp * len(qis),
        discernibility=discernibility(sizes, suppressed, len(request.table)),
        c_avg=average_class_size(sizes, request.minimum_class_size),
    )
    counts = np.asarray(rows_per_block, dtype=float)
    details = BlockDetails(
        n_blocks=len(outputs),
        limit=limit,
        rows_per_block={"min": float(counts.min()), "median": float(np.median(counts)), "max": float(counts.max())},
        blocks=tuple(o.details.to_dict() for o in outputs),
        first_headline=outputs[0].details.headline(),
    )
    return AnonymizedTable(table=published, released=released, suppressed=suppressed, utility=utility,
                           details=details, qi_codes=merged)  # fmt: skip


def _pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """Workers forked from this process when it can and runs no other Python thread, else spawned.

    Forked workers inherit the loaded package and compiled kernels (a spawned one spends ~3 s CPU on
    imports); forking beside other threads (a Spark driver's, an orchestrator's) could copy a held
    lock, so those processes spawn. Children of this process either way.
    """
    alone = threading.active_count() == 1
    method = "fork" if alone and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


def run_in_blocks(
    anonymizer: BlockAnonymizer,
    request: AnonymizationRequest,
    options: Mapping[str, Any],
    *,
    workers: int | None = None,
) -> AnonymizedTable | None:
    """The table anonymized block by block in memory (``None``: it is one block, run it whole).

    ``workers``: processes for the blocks (default: the cores, when the table has at least
    :data:`POOL_ROWS` records and several blocks; 1 runs them here, in block order).
    """
    if len(request.table) <= anonymizer.block_limit() or block_refusal(request.models) is not None:
        return None  # one block: nothing to plan
    frame = request.table.reset_index(drop=True)
    derived = {c for m in request.models for c in m.derived_columns(frame.iloc[:0])}
    columns = list(dict.fromkeys([*request.quasi_identifiers, *request.model_columns]))
    units, unit_of_row, weights = unit_table(frame, [c for c in columns if c not in derived])
    units_request = replace(request, table=with_derived_columns(units, request.models))
    block_of_unit = plan_blocks(anonymizer, units_request, weights)
    n_blocks = int(block_of_unit.max()) + 1 if block_of_unit.shape[0] else 0
    if n_blocks <= 1:
        return None
    # What every block shares, without the table or the progress callback (sent to each worker).
    template = replace(request, table=frame.iloc[:0], progress=None, numeric_domains=numeric_domains(units, request))
    published = frame.drop(columns=[*request.roles.identifiers, *derived])
    block_of_row = block_of_unit[unit_of_row]
    order = np.argsort(block_of_row, kind="stable")
    bounds = np.searchsorted(block_of_row[order], np.arange(n_blocks + 1))
    rows_per_block = np.diff(bounds).tolist()

    def part(b: int) -> pd.DataFrame:
        """Block ``b``'s records: gathered when it is sent, so only the blocks in flight are copies."""
        return published.take(order[bounds[b] : bounds[b + 1]])

    announce_phase(request.progress, f"{anonymizer.name}: {n_blocks} blocks")
    if workers is None:
        workers = min(n_blocks, os.cpu_count() or 1) if len(frame) >= POOL_ROWS else 1
    outputs: list[AnonymizedTable] = []
    report: Callable[[int, int], None] | None = request.progress

    def collect(output: AnonymizedTable) -> None:
        outputs.append(output)
        if report is not None:
            report(int(bounds[len(outputs)]), len(frame))

    if workers > 1:
        with _pool(workers) as pool:
            # Results are taken in block order; at most two blocks per worker are queued at a time.
            pending: collections.deque[concurrent.futures.Future[AnonymizedTable]] = collections.deque()
            for b in range(n_blocks):
                pending.append(pool.submit(anonymize_block, anonymizer, template, options, part(b), b))
                if len(pending) >= 2 * workers:
                    collect(pending.popleft().result())
            while pending:
                collect(pending.popleft().result())
    else:
        for b in range(n_blocks):
            collect(anonymize_block(anonymizer, template, options, part(b), b))
    limit = anonymizer.block_limit()
    return merge_blocks(outputs, request, limit=limit, rows_per_block=rows_per_block)
