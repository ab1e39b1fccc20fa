"""ReleaseArtifacts: the IO manager that hands a release graph's artifacts (and working files) from step to step.

``raw``, ``privacy_diagnosis`` and ``anonymized_candidate`` return their release artifact
(:class:`~privacy_plugins.release.LoadedTable`, ``DiagnosisSummary``, ``Candidate``: paths,
digests and numbers, never rows); their downstream assets and checks receive it as an input.
This IO manager stores it, bound to the run: every artifact lives under the run's id
(``<prefix>__<Dagster root run id>``, shared by re-executions), and loading refuses one whose
run, spec or source fingerprint is not this run's (``accept_artifact``) — the same refusal the
release steps make, before any file is touched.

Where (``base_path``):

* unset (the default): the run's private local working folder, as before — the steps'
  working files (``raw.parquet``, the candidate …) never leave it;
* ``s3://bucket/prefix`` (or any ``universal_pathlib`` path: ``gs://``, ``file://``, a
  folder): the run's folder ``<base>/<prefix>/<run>/`` holds the artifacts *and* the run's
  working files, so steps in separate processes, pods or containers (``multiprocess``,
  ``k8s_job_executor``, ``docker_executor``) share nothing local. Each step pulls the run's
  files into its local private folder (0700) when it loads its input, pushes what it wrote
  (files it pulled unchanged are not sent again) and removes its local copy.

The run's remote folder holds raw rows (the loaded table or snapshot): it goes when the run
ends, however it ends — after ``published`` (or at the run's end with the in-process
executor, after every candidate reader), when a blocking check fails, when a step fails
(infeasible requirements, any exception). A bucket only the code location's identity can
read is still required (a killed worker cannot clean up; add a lifecycle rule on the prefix).

No ``from __future__ import annotations``: Dagster's pydantic-based resources need real annotations.
"""

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import dagster as dg
from pydantic import Field, PrivateAttr

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import Candidate, DiagnosisSummary, LoadedTable, ReleaseSpec
from privacy_plugins.release.artifacts import RunArtifact, accept_artifact
from privacy_plugins.release.destination.working_file import file_sha256
from privacy_plugins.release.destinations import atomic_file
from privacy_plugins.release.workarea import remove_run_dir, run_dir, safe_name

__all__ = ["ARTIFACT_KINDS", "ReleaseArtifacts", "release_artifacts"]

ARTIFACT_KINDS: dict[str, type[Any]] = {
    "raw": LoadedTable,
    "privacy_diagnosis": DiagnosisSummary,
    "anonymized_candidate": Candidate,
}
"""The asset (last key component) → the artifact it hands over."""

_WHAT = {"raw": "loaded table", "privacy_diagnosis": "diagnosis", "anonymized_candidate": "candidate"}


class ReleaseArtifacts(dg.ConfigurableIOManager):
    """Stores one release graph's artifacts per run; refuses an artifact of another run, spec or source.

    ``base_path`` unset keeps everything in the run's local working folder (the default);
    ``s3://bucket/prefix`` shares the run's artifacts and working files between step processes.
    Credentials of the store: ``endpoint_url``, ``access_key_id``, ``secret_access_key`` (set the
    secrets with ``dg.EnvVar``), else the store's own defaults (``AWS_*`` variables, instance role).
    """

    base_path: str | None = Field(
        default=None,
        description="Where runs hand over artifacts and working files (s3://…, a folder); unset: the local run folder.",
    )
    endpoint_url: str | None = Field(default=None, description="The object store's endpoint (S3-compatible servers).")
    access_key_id: str | None = Field(default=None, description="The store's access key id (set with dg.EnvVar).")
    secret_access_key: str | None = Field(default=None, description="The store's secret key (set with dg.EnvVar).")

    # Code, not config: the graph this IO manager serves (set by :func:`release_artifacts`'s subclass).
    binding: ClassVar[Any]

    _pulled: dict[str, str] = PrivateAttr(default_factory=dict)  # file name -> SHA-256 pulled from the store
    _runs: dict[str, ReleaseSpec] = PrivateAttr(default_factory=dict)  # runs whose remote folder the run's end removes

    def get_resource_definition(self) -> Any:
        """Dagster's definition, requiring the graph's release resource by key (where the run's working folder is)."""
        definition = super().get_resource_definition()
        definition._required_resource_keys = {*definition.required_resource_keys, self.binding.resource_key}
        return definition

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Nothing pulled yet in this process."""
        self._pulled, self._runs = {}, {}

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """The in-process executor's run end: remove the remote folders of the runs that ran whole here."""
        for run, spec in self._runs.items():
            self.end_run(spec, run)
        self._runs = {}

    @property
    def shared(self) -> bool:
        """Whether artifacts and working files travel through a store (``base_path``) rather than the local folder."""
        return bool(self.base_path)

    # -- Dagster's side ----------------------------------------------------------------------------

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        """Store the step's artifact (and, with a store, push the run's working files, then drop the local copy)."""
        name = context.asset_key.path[-1]
        if name not in ARTIFACT_KINDS or not isinstance(obj, RunArtifact | DiagnosisSummary):
            raise dg.Failure(f"the artifacts of {self.binding.namespace!r} only store the release's own steps")
        dagster_run = context.step_context.dagster_run
        spec, run = self._spec(dagster_run, context.step_context.instance), self._run(dagster_run)
        text = json.dumps(obj.to_dict(), indent=2) + "\n"
        if not self.shared:
            with atomic_file(run_dir(spec, run, create=True) / f"{name}.json") as temporary:
                temporary.write_text(text, encoding="utf-8")
            return
        folder = self._folder(spec, run)
        self._push(spec, run, folder)
        (folder / "artifacts").mkdir(parents=True, exist_ok=True)
        (folder / "artifacts" / f"{name}.json").write_text(text, encoding="utf-8")
        if spec.workdir is None:
            remove_run_dir(spec, run)  # no raw row stays on this worker

    def load_input(self, context: dg.InputContext) -> Any:
        """This run's artifact of the upstream step (with a store: its working files pulled first)."""
        name = context.asset_key.path[-1]
        dagster_run = context.step_context.dagster_run
        return self.load(self._spec(dagster_run, context.step_context.instance), self._run(dagster_run), name)

    # -- the release's side ------------------------------------------------------------------------

    def load(self, spec: ReleaseSpec, run: str, name: str) -> Any:
        """Read run ``run``'s artifact ``name``; refuse it when it belongs to another run, spec or source."""
        kind = ARTIFACT_KINDS[name]
        if self.shared:
            path: Any = self._folder(spec, run) / "artifacts" / f"{name}.json"
        else:
            try:
                path = run_dir(spec, run) / f"{name}.json"
            except ConfigurationError:
                path = None
        if path is None or not path.is_file():
            raise dg.Failure(
                description=f"release {spec.name!r}: no {name} in this run ({run}); materialize {name} in the same run",
                allow_retries=False,
            )
        artifact = kind.from_dict(json.loads(path.read_text(encoding="utf-8")))
        if self.shared:
            run_dir(spec, run, create=True)  # this worker's private folder (empty until the files are pulled)
        if isinstance(artifact, RunArtifact):
            try:
                accept_artifact(spec, artifact, run, _WHAT[name])
            except ConfigurationError as exc:  # ForeignArtifactError
                raise dg.Failure(description=str(exc), allow_retries=False) from exc
        if self.shared:
            self._pull(spec, run, self._folder(spec, run))
        return artifact

    def discard(self, spec: ReleaseSpec, run: str, name: str) -> None:
        """Forget an artifact of this run, so a failed re-run leaves nothing a later step could pick up."""
        if self.shared:
            path = self._folder(spec, run) / "artifacts" / f"{name}.json"
            if path.exists():
                path.unlink()
            return
        try:
            (run_dir(spec, run) / f"{name}.json").unlink(missing_ok=True)
        except ConfigurationError:
            pass  # no working folder yet: nothing to forget

    def end_with_run(self, spec: ReleaseSpec, run: str) -> None:
        """Remove the run's remote folder when this IO manager is torn down (the in-process executor's run end)."""
        self._runs[run] = spec

    def end_run(self, spec: ReleaseSpec, run: str) -> None:
        """The run is over: remove its working files, in the store and here (a spec's ``workdir`` keeps its own)."""
        if self.shared:
            folder = self._folder(spec, run)
            if folder.exists():
                folder.fs.rm(folder.path, recursive=True)
        if spec.workdir is None:
            remove_run_dir(spec, run)

    # -- internals ---------------------------------------------------------------------------------

    def _spec(self, dagster_run: Any, instance: Any) -> ReleaseSpec:
        """The run's spec as the release resource (and, partitioned, the run's partition) makes it."""
        resources = self.get_resource_context().resources
        return self.binding.release_spec(SimpleNamespace(resources=resources, run=dagster_run, instance=instance))

    def _run(self, dagster_run: Any) -> str:
        return self.binding.run_id(SimpleNamespace(run=dagster_run))

    def _root(self) -> Any:
        from upath import UPath

        options = {
            "endpoint_url": self.endpoint_url,
            "key": self.access_key_id,
            "secret": self.secret_access_key,
        }
        return UPath(str(self.base_path), **{k: v for k, v in options.items() if v})

    def _folder(self, spec: ReleaseSpec, run: str) -> Any:
        """``<base>/<prefix>/<release>/<run>``: one run of one spec and source (never another run's)."""
        release = f"{safe_name(spec.name)}-{spec.source_fingerprint[:12]}"
        return self._root() / safe_name(self.binding.namespace) / release / safe_name(run)

    def _push(self, spec: ReleaseSpec, run: str, folder: Any) -> None:
        """Upload the run's local working files that are new or changed since they were pulled (streamed)."""
        local = run_dir(spec, run, create=True)
        files = folder / "files"
        files.mkdir(parents=True, exist_ok=True)
        _private(files)
        for path in sorted(local.iterdir()):
            if path.name.startswith(".") or path.is_symlink() or not path.is_file() or path.suffix == ".lock":
                continue
            if self._pulled.get(path.name) == file_sha256(path):
                continue  # the store's copy is the one this step pulled
            target = files / path.name
            target.fs.put_file(str(path), target.path)

    def _pull(self, spec: ReleaseSpec, run: str, folder: Any) -> None:
        """Download the run's working files into its local private folder (created 0700), streamed."""
        local = run_dir(spec, run, create=True)
        files = folder / "files"
        if not files.exists():
            return
        for item in files.iterdir():
            if item.is_file():
                target = local / item.name
                partial = local / f".{item.name}.{os.getpid()}.pull"
                item.fs.get_file(item.path, str(partial))
                os.replace(partial, target)  # a step reading the file in parallel (same machine) never sees half of it
                self._pulled[item.name] = file_sha256(target)


def _private(files: Any) -> None:
    """A local store's run folders are 0700 (an object store's privacy is the bucket's)."""
    if getattr(files, "protocol", "") in ("", "file", "local"):
        path = Path(files.path)
        for part in (path, path.parent, path.parent.parent, path.parent.parent.parent):  # files, run, release, prefix
            os.chmod(part, stat.S_IRWXU)


def release_artifacts(binding: Any, **config: Any) -> ReleaseArtifacts:
    """The artifacts IO manager of one release graph, bound to the graph in code."""
    bound = type(
        "ReleaseArtifacts",
        (ReleaseArtifacts,),
        {"binding": binding, "__module__": __name__},
    )
    return bound(**config)
