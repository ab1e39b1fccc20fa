"""The anonymize step's work for an algorithm that ``works_per_block`` on a source an engine holds (issue 28).

Local recoding (k-member, bucket: anonymizers tagged ``works_per_block``) on a Spark, database
or large-file source runs where the rows are, as
:func:`~privacy_plugins.engines.blocks_in_engine.anonymize_blocks_in_engine` does: the load step
stores one ``GROUP BY`` of the source (the same snapshot file as a full-domain release,
``LoadedTable.kind == "blocks"``), the anonymize step plans the blocks on it, the engine runs
each block as a task (Spark: ``groupBy(block).applyInPandas``; a database: one block at a time
in this process, into a temporary table) and re-measures the whole output with one more
``GROUP BY``. No record crosses to the driver beyond those two ``GROUP BY``s (and the identifier
gate's sample of single-column values, as on the snapshot route), and
``source.max_rows_in_memory`` does not apply. From there the candidate is staged, checked
(the history's composition check included), gated and published like any other.

When the route does not apply (:func:`blocks_reason` says why) the release reads the rows into
memory as before, capped by ``source.max_rows_in_memory``, and that limit's error says why:

- a model compares classes with the whole table (t-closeness, average risk, population
  uniqueness) or derives columns / reads a population table the tasks do not have;
- ``pseudonymize`` (tokens are computed in memory);
- the release history already holds a release: steering against it (re-apply, history models,
  records at risk left out) works record by record on the rows. A first release of a history
  takes this route, and the gate's composition check judges every candidate as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd

from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.engines.aggregates import numeric_columns_as_numbers
from privacy_plugins.engines.blocks_in_engine import anonymize_blocks_in_engine, engine_block_refusal
from privacy_plugins.errors import ForeignArtifactError
from privacy_plugins.release.artifacts import LoadedTable, Solved
from privacy_plugins.release.column_roles import dropped_columns
from privacy_plugins.release.destination import TABLE
from privacy_plugins.release.history_anonymize import spec_history
from privacy_plugins.release.progress import LOGGER, OnProgress, StepProgress
from privacy_plugins.release.source_table import opened_unchanged, rows_in_engine
from privacy_plugins.release.spec import ReleaseSpec

__all__ = ["blocks_reason", "solved_in_blocks"]

#: The roles published unchanged beside the QIs (as the in-memory path passes them).
_AS_IS = ("insensitive", "pseudonym", "date_shifted")


def blocks_reason(spec: ReleaseSpec, *, earlier_releases: int = 0) -> str | None:
    """``None`` when the release is anonymized block by block in the source's engine; otherwise why not.

    ``earlier_releases``: releases the spec's history holds now (the load step reads it).
    """
    anonymizer = get_anonymizer(spec.algorithm.name)
    if not tags_of(anonymizer).works_per_block:
        return f"algorithm {spec.algorithm.name!r} does not anonymize block by block"
    if not rows_in_engine(spec):
        return "the source is read into memory anyway"
    if spec.pseudonymize is not None:
        return "pseudonymize: the tokens are computed in memory"
    refusal = engine_block_refusal(spec.models(), [str(q) for q in spec.quasi_identifiers])
    if refusal is not None:
        return refusal
    if earlier_releases:
        return "the release history holds a release, and steering against it works record by record"
    return None


def rows_needed_because(spec: ReleaseSpec, reason: str) -> str:
    """The end of ``source.max_rows_in_memory``'s error for a block algorithm that must read the rows."""
    return (
        f"algorithm {spec.algorithm.name!r} runs block by block in the source's engine, but not here ({reason}), "
        "so it reads the rows into memory; raise the limit or change what keeps it out of the engine"
    )


@contextmanager
def solved_in_blocks(
    spec: ReleaseSpec, loaded: LoadedTable, stored: pd.DataFrame, on_progress: OnProgress | None
) -> Iterator[Solved]:
    """The blocks anonymized in the source's engine; yield the published rows as a table of the open source.

    ``stored`` is the load step's ``GROUP BY`` (the hierarchies are built from its values, as the
    in-memory path builds them from the rows'). ``on_progress`` is told the phases and the blocks
    done (a database after each block, Spark as each task ends), and the log has a line now and then.

    Raises:
        InfeasibleAnonymizationError: a block cannot meet the requirements (nothing is staged).
        VerificationError: a block or the whole output fails the core's re-check.
        ConfigurationError: the source changed since the load step, or a release joined the history.
    """
    aggregates = stored.copy()
    numeric_columns_as_numbers(aggregates)
    qis = [str(q) for q in spec.quasi_identifiers]
    hierarchies = spec.build_hierarchies(aggregates[qis])
    if spec_history(spec, hierarchies) is not None:
        raise ForeignArtifactError(
            f"release {spec.name!r}: a release joined its history after the load step, and this run was loaded "
            "to anonymize block by block in the engine, which cannot steer against it; re-run from the load step"
        )
    roles = loaded.column_roles
    with opened_unchanged(spec, loaded.rows) as source:
        done = anonymize_blocks_in_engine(
            source,
            algorithm=spec.algorithm.name,
            quasi_identifiers=qis,
            models=spec.models(),
            hierarchies=hierarchies,
            identifiers=dropped_columns(roles) or list(spec.identifiers),
            sensitive_attributes=[str(c) for c in spec.sensitive_attributes],
            insensitive=[column for column, role in roles.items() if role in _AS_IS],
            suppression_limit=spec.requirements.suppression_limit,
            seed=spec.algorithm.seed,
            options=spec.algorithm.options,
            aggregates=aggregates,  # the load step's GROUP BY: the source is not grouped again
            progress=StepProgress("anonymize", "blocks anonymized", on_progress),
        )
        headline = f"{done.n_blocks:,} block(s) anonymized as {source.engine_name} tasks"
        LOGGER.info("anonymize: %s", headline)
        try:
            yield Solved(
                parts={TABLE: done.published},
                algorithm=spec.algorithm.name,
                levels={},
                rows_in=done.rows_in,
                rows_out=done.rows_out,
                suppressed=done.suppressed,
                ncp=done.ncp,
                headline=headline,
                report={
                    "algorithm": spec.algorithm.name,
                    "rows_in": done.rows_in,
                    "rows_out": done.rows_out,
                    "suppressed": done.suppressed,
                    "ncp": done.ncp,
                    "n_blocks": done.n_blocks,
                    "engine": source.engine_name,
                    "seed": spec.algorithm.seed,
                    "models": [result.to_dict() for result in done.checked],  # the core's re-check of the whole
                },
                engine=source.engine_name,
            )
        finally:
            done.blocks.uncache()  # the destination has read the blocks Spark kept
