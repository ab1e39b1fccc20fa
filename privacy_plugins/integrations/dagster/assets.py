"""build_release_assets: a ReleaseSpec as the asset graph raw → privacy_diagnosis → anonymized_candidate → published.

Each asset is one release step. ``anonymized_candidate`` writes only to the
graph's private working folder (a blocking check cannot stop its own asset from
being stored); its blocking checks stop ``published``, the only asset that
writes the destination — atomically, through ``publish_step``, after the gate
re-measures the candidate. Infeasible requirements make ``anonymized_candidate``
fail with the reason, so neither the checks nor ``published`` run.

A database or Spark source (or a large file) with a full-domain algorithm runs
inside the database asset by asset: ``raw`` is the weighted snapshot,
``anonymized_candidate`` a run-bound staging table in the source database (or a
Parquet working file), measured there by the checks (its metadata by
``GROUP BY``; a blocking failure drops it) and swapped in by ``published``
(see :mod:`privacy_plugins.release.snapshot_path`).
"""

# No ``from __future__ import annotations``: Dagster reads the ``context`` annotation at definition time.

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import Any

import dagster as dg

from privacy_plugins.errors import InfeasibleAnonymizationError
from privacy_plugins.integrations.dagster import metadata as md
from privacy_plugins.integrations.dagster.asset_checks import build_release_checks
from privacy_plugins.integrations.dagster.binding import ASSET_NAMES, ReleaseAssets, ReleaseBinding, runs_whole_here
from privacy_plugins.integrations.dagster.gate import gate
from privacy_plugins.integrations.dagster.gx_suites import read_suite_refs
from privacy_plugins.integrations.dagster.naming import check_severities, release_names
from privacy_plugins.integrations.dagster.partitions import check_partitionable
from privacy_plugins.integrations.dagster.policy import Policy
from privacy_plugins.release import (
    Candidate,
    DiagnosisSummary,
    LoadedTable,
    ReleaseBlocked,
    ReleaseSpec,
    anonymize_step,
    diagnose_step,
    load_step,
    publish_step,
)
from privacy_plugins.release.pseudonym_keys import resource_resolver

__all__ = ["ASSET_NAMES", "ReleaseAssets", "build_release_assets"]


def build_release_assets(
    spec: ReleaseSpec | str | PathLike[str],
    *,
    key_prefix: str | Sequence[str] | None = None,
    severity: Mapping[str, str] | None = None,
    policy: Policy | Mapping[str, float] | None = None,
    expectation_suite: str | PathLike[str] | Sequence[str | PathLike[str]] | None = None,
    gx_context_root: str | PathLike[str] | None = None,
    resource_key: str | None = None,
    group_name: str | None = None,
    owners: Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
    partitions_def: dg.PartitionsDefinition[Any] | None = None,
    source_deps: Sequence[Any] = (),
) -> ReleaseAssets:
    """Turn a release spec into four assets and their blocking privacy checks.

    Args:
        spec: a :class:`ReleaseSpec` or the path of its YAML file (read now; no data is touched).
        key_prefix: asset key prefix, default the spec's name; two graphs in one ``Definitions`` need two.
        severity: check name → GX severity (``critical`` blocks, the default; ``warning`` or ``info``
            fail as Dagster WARN and do not block). Only requirement checks can be softened.
        policy: floors the checks enforce beyond the spec (``min_k``, ``min_l``, ``max_t``); see
            :mod:`~privacy_plugins.integrations.dagster.policy`. Part of the code, so run config cannot drop it.
        expectation_suite: GX suite JSON file(s) run as extra blocking checks (needs the ``gx`` extra at run time).
        gx_context_root: a folder for a GX file context: each suite check then runs through a stored
            ``Checkpoint``, keeps its result and rebuilds Data Docs (the history of the privacy checks).
        resource_key: the :class:`PrivacyReleaseResource` key, default ``<prefix>_release``.
        group_name: the asset group, default the prefix.
        owners: the assets' owners (``team:privacy``, e-mail addresses), shown and searchable in the catalog.
        tags: tags of every asset, over the default ``{"privacy": "release"}``.
        partitions_def: one release per partition (time or static partitions): the source names the partition,
            each partition publishes its own table, all share the release history (see :mod:`.partitions`).
        source_deps: assets that write the source (an extract, a staging table): ``raw`` runs after them.

    Raises:
        DagsterInvalidDefinitionError: a bad prefix, resource key, severity or suite file.
        ConfigurationError: a bad spec or policy.
    """
    if not isinstance(spec, ReleaseSpec):
        spec = ReleaseSpec.from_yaml(Path(spec))
    prefix, key = release_names(spec, key_prefix=key_prefix, resource_key=resource_key)
    binding = ReleaseBinding(
        spec,
        prefix,
        key,
        check_severities(spec, severity),
        read_suite_refs(expectation_suite, gx_context_root),
        Policy.for_spec(spec, policy),
        partitions_def,
    )
    if partitions_def is not None:
        check_partitionable(spec, partitions_def)
    group = group_name or "_".join(prefix)
    kinds = md.asset_kinds(spec)
    asset_tags = {"privacy": "release", **dict(tags or {})}

    key_resources = [spec.pseudonymize.key_resource] if spec.pseudonymize and spec.pseudonymize.key_resource else []

    def release_asset(
        name: str,
        description: str,
        deps: Sequence[Any] = (),
        ins: Mapping[str, dg.AssetIn] | None = None,
    ) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
        return dg.asset(
            key=binding.key(name),
            deps=deps,
            ins=dict(ins or {}),
            description=description,
            group_name=group,
            required_resource_keys={key, binding.artifacts_key, *key_resources},
            io_manager_key=binding.artifacts_key,  # the run's artifacts: bound to the run (artifact_store.py)
            partitions_def=partitions_def,
            kinds=kinds[name],
            owners=list(owners or ()),
            tags=asset_tags,
        )

    def upstream(name: str) -> dict[str, dg.AssetIn]:
        return {name: dg.AssetIn(key=binding.key(name))}

    @release_asset("raw", "The source, validated, identifiers dropped (private).", list(source_deps))
    def raw(context: dg.AssetExecutionContext) -> dg.Output[LoadedTable]:
        release, run = binding.release_spec(context), binding.run_id(context)
        with (
            _ends_run_on_failure(binding, context, release, run),
            resource_resolver(lambda name: getattr(context.resources, name).secret()),  # {key: {resource: …}}
        ):
            loaded = load_step(release, run_id=run)
        return dg.Output(loaded, metadata=md.loaded_metadata(loaded))

    @release_asset("privacy_diagnosis", "Risk of the raw table.", ins=upstream("raw"))
    def privacy_diagnosis(context: dg.AssetExecutionContext, raw: LoadedTable) -> dg.Output[DiagnosisSummary]:
        release, run = binding.release_spec(context), binding.run_id(context)
        with _ends_run_on_failure(binding, context, release, run):
            summary = diagnose_step(release, raw, run_id=run)
        return dg.Output(summary, metadata=md.diagnosis_metadata(summary))

    @release_asset(
        "anonymized_candidate",
        "The anonymized table, kept in the private working folder until the checks pass.",
        [privacy_diagnosis],
        upstream("raw"),
    )
    def anonymized_candidate(context: dg.AssetExecutionContext, raw: LoadedTable) -> dg.Output[Candidate]:
        release, run = binding.release_spec(context), binding.run_id(context)
        binding.artifacts(context).discard(release, "anonymized_candidate", run)
        with _ends_run_on_failure(binding, context, release, run):
            try:
                candidate = anonymize_step(release, raw, run_id=run, keep_workdir=runs_whole_here(context))
            except InfeasibleAnonymizationError as exc:
                raise dg.Failure(
                    description=f"release {release.name!r}: requirements cannot be met, nothing to check or publish: "
                    f"{exc}",
                    allow_retries=False,
                ) from exc
        return dg.Output(candidate, metadata=md.candidate_metadata(release, candidate))

    @release_asset(
        "published",
        "The release at its destination, written atomically once every blocking check passed.",
        ins=upstream("anonymized_candidate"),
    )
    def published(context: dg.AssetExecutionContext, anonymized_candidate: Candidate) -> dg.MaterializeResult[None]:
        release, run = binding.gate_spec(context), binding.run_id(context)
        keep = runs_whole_here(context)
        try:
            check, warned = gate(
                release,
                anonymized_candidate,
                severities=binding.severities,
                suites=binding.suites,
                run_id=run,
                keep_workdir=keep,
            )
            # publish_step re-measures the candidate; only checks the code declared warn-only may fail.
            publication = publish_step(release, anonymized_candidate, check, run_id=run, allowed_failures=warned)
        except ReleaseBlocked as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        finally:
            if not keep:  # one process per step: no run end to wait for (see binding.py)
                binding.artifacts(context).end_run(release, run)
        return dg.MaterializeResult(metadata=md.publication_metadata(release, publication, warned))

    checks = build_release_checks(binding)
    names = tuple(check.name for definition in checks for check in definition.check_specs)
    assets = (raw, privacy_diagnosis, anonymized_candidate, published)
    return ReleaseAssets(spec, prefix, key, assets, checks, names, binding=binding)


@contextmanager
def _ends_run_on_failure(binding: ReleaseBinding, context: Any, spec: ReleaseSpec, run: str) -> Iterator[None]:
    """A step that fails ends its run: with one process per step its working files go now, here and in the store.

    (With the in-process executor the run's end removes them, after any candidate reader.)
    """
    try:
        yield
    except BaseException:
        if not runs_whole_here(context):
            binding.artifacts(context).end_run(spec, run)
        raise
