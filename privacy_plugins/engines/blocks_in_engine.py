"""Local recoding block by block where the table lives: the plan from one GROUP BY, each block a task (issue 28).

For an anonymizer tagged ``works_per_block`` (k-member, bucket):

1. **What crosses to the driver:** one ``GROUP BY`` over the QIs and the columns the models
   read, with counts (the *units*, as a full-domain release's snapshot) — never a record.
2. The core cuts the units into blocks (:func:`~privacy_plugins.core.anonymize.block_path.plan_blocks`,
   the same cut as in memory) and returns a small key table, distinct QI combination → block.
3. The engine joins the keys to its records (broadcast) and hands every block to
   :func:`~privacy_plugins.core.anonymize.block_path.anonymize_block` as one task
   (Spark: ``groupBy(block).applyInPandas``), the function the in-memory path runs: the same
   blocks give the same published multiset. Each task re-checks its block with the core's
   ``verify`` (accounting and every model) before it returns a row.
4. The whole output is re-measured by one more ``GROUP BY`` (published QIs, model columns,
   counts, the blocks' NCP) and checked by the core's ``verify_classes`` — every model on the
   published table, as in memory.

Every block is clustered once, where it is applied: a database writes the blocks' output to a
temporary table, Spark persists it (memory, then disk) and computes it with one action, so the
re-check's ``GROUP BY`` and the destination read what was computed (``EngineBlocks.blocks.uncache()``
frees Spark's copy); ``progress`` hears the blocks done as the engine finishes them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationRequest, verify, verify_classes
from privacy_plugins.core.anonymize.block_path import (
    BLOCK_COLUMN,
    anonymize_block,
    block_keys,
    block_refusal,
    numeric_domains,
    plan_blocks,
)
from privacy_plugins.core.anonymize.registry import (
    BlockAnonymizer,
    anonymization_request,
    anonymizer_options,
    get_anonymizer,
    tags_of,
)
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import PrivacyModel
from privacy_plugins.core.models.base import ModelResult
from privacy_plugins.core.parameters import suppression_budget
from privacy_plugins.core.progress import ProgressCallback, announce_phase
from privacy_plugins.engines.aggregates import COUNT_COLUMN, classes_from_aggregates, numeric_columns_as_numbers
from privacy_plugins.engines.base import EngineTable
from privacy_plugins.engines.full_domain_in_engine import model_columns
from privacy_plugins.errors import ConfigurationError

__all__ = ["EngineBlocks", "anonymize_blocks_in_engine", "engine_block_refusal"]

#: The per-record NCP column the tasks add for the whole table's NCP (never published).
NCP_COLUMN = "__privacy_plugins_ncp__"


@dataclass(frozen=True)
class EngineBlocks:
    """What :func:`anonymize_blocks_in_engine` did, and the (lazy) published table in the engine."""

    published: EngineTable
    #: the blocks' output as the engine computed it (once); ``uncache()`` it once ``published`` has been read
    blocks: EngineTable
    rows_in: int
    rows_out: int
    suppressed: int
    n_blocks: int
    ncp: float
    checked: tuple[ModelResult, ...]
    dropped_identifiers: tuple[str, ...]


@dataclass(frozen=True)
class _BlockTask:
    """One block's work inside an engine task: picklable, the same function the in-memory path runs."""

    anonymizer: BlockAnonymizer
    template: AnonymizationRequest
    options: Mapping[str, Any]
    algorithm: str

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        block = int(frame[BLOCK_COLUMN].iloc[0])
        rows = frame.drop(columns=[BLOCK_COLUMN]).reset_index(drop=True)
        output = anonymize_block(self.anonymizer, self.template, self.options, rows, block)
        request = replace(self.template, table=rows, roles=replace(self.template.roles, identifiers=()))
        request = replace(request, max_suppressed=suppression_budget(self.template.suppression_limit, len(rows)))
        verify(request, output, algorithm=self.algorithm, seconds=0.0)  # raises: the task and the job fail
        released = np.asarray(output.released, dtype=bool)
        table = output.table.reset_index(drop=True).loc[released].reset_index(drop=True)
        if output.qi_codes is not None:
            for column, (codes, labels) in output.qi_codes.items():
                table[column] = np.asarray(labels, dtype=object)[codes[released]]
        for q in self.template.quasi_identifiers:
            table[q] = table[q].astype(object).where(table[q].isna(), table[q].astype(str))
        table[NCP_COLUMN] = float(output.utility.ncp)
        return table[[*rows.columns, NCP_COLUMN]]


def engine_block_refusal(models: Sequence[PrivacyModel], quasi_identifiers: Sequence[str]) -> str | None:
    """Why these models cannot be met block by block in an engine's tasks (``None``: they can).

    Besides the core's :func:`~privacy_plugins.core.anonymize.block_path.block_refusal` (a model
    that compares classes with the whole table), a model that derives columns on the driver or
    reads a population table of the engine: the tasks have neither.
    """
    refusal = block_refusal(models)
    if refusal is None and any(m.derived_columns(pd.DataFrame(columns=list(quasi_identifiers)))
                               or m.population_table_in_engine() for m in models):  # fmt: skip
        refusal = "a model derives columns or reads a population table, which the blocks' tasks do not have"
    return refusal


def anonymize_blocks_in_engine(
    table: EngineTable,
    *,
    algorithm: str,
    quasi_identifiers: Sequence[str],
    models: Sequence[PrivacyModel],
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    identifiers: Sequence[str] = (),
    sensitive_attributes: Sequence[str] = (),
    insensitive: Sequence[str] | None = None,
    suppression_limit: float = 0.0,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    aggregates: pd.DataFrame | None = None,
    progress: ProgressCallback | None = None,
) -> EngineBlocks:
    """``algorithm`` (tagged ``works_per_block``) run block by block in the engine; the whole output re-checked.

    The same published multiset as ``anonymize(table.to_pandas(), algorithm=…)``, with the records
    never brought to the driver (only the units' counts).

    ``aggregates``: the result of ``table.group_counts`` over the QIs, the columns the models read
    and possibly more columns (summed away), when the caller already ran it (a release's load step):
    then no ``GROUP BY`` of the source runs here, only the one re-measuring the output.

    ``progress``: told the phases and ``(blocks done, blocks)`` as the engine finishes them (a database
    after each block; Spark as each task ends). Every block is clustered once: the re-check and the
    destination read what the engine computed (Spark: persisted; ``blocks.uncache()`` frees it).

    Raises:
        ConfigurationError: the algorithm does not work per block, a model needs the whole table or
            columns derived on the driver, the engine cannot run Python per block, or bad settings.
        VerificationError: a block or the whole output fails the core's re-check (nothing to publish).
    """
    anonymizer = get_anonymizer(algorithm)
    if not tags_of(anonymizer).works_per_block:
        raise ConfigurationError(f"algorithm {algorithm!r} does not anonymize block by block; read the rows instead")
    block_anonymizer = cast(BlockAnonymizer, anonymizer)
    chosen = anonymizer_options(anonymizer, dict(options or {}))
    qis = [str(q) for q in quasi_identifiers]
    refusal = engine_block_refusal(models, qis)
    if refusal is not None:
        raise ConfigurationError(f"{algorithm} cannot run block by block in the engine: {refusal}")
    clash = [c for c in (BLOCK_COLUMN, NCP_COLUMN) if c in table.columns()]
    if clash:
        raise ConfigurationError(f"column(s) {clash!r} are reserved for the block path's own data; rename them")
    read = model_columns(models, qis)
    if aggregates is None:
        aggregates = table.group_counts([*qis, *read])
    else:
        grouped = aggregates.groupby([*qis, *read], dropna=False, sort=False, observed=True)[COUNT_COLUMN]
        aggregates = grouped.sum().reset_index()
    numeric_columns_as_numbers(aggregates)
    weights = aggregates[COUNT_COLUMN].to_numpy(dtype=np.int64)
    units = aggregates.drop(columns=[COUNT_COLUMN]).reset_index(drop=True)
    columns = table.columns()
    keep = [c for c in columns if c not in set(identifiers)]
    probe = units.reindex(columns=columns)  # every column, for the same validation as anonymize()
    request = anonymization_request(
        probe,
        quasi_identifiers=qis,
        models=models,
        suppression_limit=suppression_limit,
        hierarchies=hierarchies,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
        seed=seed,
        progress=None,
        insensitive=insensitive,
    )
    block_of_unit = plan_blocks(block_anonymizer, replace(request, table=units), weights)
    template = replace(request, table=units.iloc[:0], numeric_domains=numeric_domains(units, request))
    task = _BlockTask(block_anonymizer, template, chosen, anonymizer.name)
    n_blocks = int(block_of_unit.max()) + 1 if block_of_unit.shape[0] else 0
    announce_phase(progress, f"{anonymizer.name}: {n_blocks:,} blocks anonymized as {table.engine_name} tasks")
    published = table.blocks_applied(
        block_keys(units, block_of_unit, qis),
        BLOCK_COLUMN,
        task,
        keep=keep,
        text=qis,
        numbers=[NCP_COLUMN],
        progress=progress,
    )
    announce_phase(progress, f"{anonymizer.name}: the whole output re-measured")
    rows_in = int(weights.sum())
    try:
        measured = published.group_counts([*qis, *read, NCP_COLUMN])
        rows_out = int(measured[COUNT_COLUMN].sum())
        ncp = float((measured[NCP_COLUMN] * measured[COUNT_COLUMN]).sum() / rows_out) if rows_out else 0.0
        grouped = measured.drop(columns=[NCP_COLUMN]).groupby([*qis, *read], dropna=False, sort=False)
        counts = grouped[COUNT_COLUMN].sum()
        checked = verify_classes(
            classes_from_aggregates(counts.reset_index(), qis) if rows_out else None,
            request.models,
            rows_in=rows_in,
            rows_out=rows_out,
            suppressed=rows_in - rows_out,
            max_suppressed=suppression_budget(suppression_limit, rows_in),
            algorithm=anonymizer.name,
        )
    except BaseException:
        published.uncache()  # nothing will read the blocks
        raise
    return EngineBlocks(
        published=published.generalized(keep=keep, mappings={}, suppressed=pd.DataFrame(), method="case"),
        blocks=published,
        rows_in=rows_in,
        rows_out=rows_out,
        suppressed=rows_in - rows_out,
        n_blocks=n_blocks,
        ncp=ncp,
        checked=checked,
        dropped_identifiers=tuple(c for c in columns if c in set(identifiers)),
    )
