"""Shared working storage for multi-machine deployments: the run's working files on an ObjectStoragePath.

The release steps read and write the run's private local working folder (see
:mod:`privacy_plugins.release.workarea`). On Celery or Kubernetes executors the
next task may run on another machine, where that folder does not exist. With a
working storage (``working_storage="s3://bucket/privacy-work"`` on the operators
or ``release_tasks``, or ``$PRIVACY_PLUGINS_WORKING_STORAGE``; any Airflow
``ObjectStoragePath``: ``s3://``, ``gs://``, ``file://`` …, with
``working_storage_conn_id`` for credentials) each task:

1. pulls the run's files from ``<storage>/<release>/<run id>/`` into its local
   private folder (0700) before its step,
2. pushes the files its step wrote or changed back after the step succeeded (a
   file whose SHA-256 is the one pulled is not sent again; files stream through
   the store's fsspec ``get_file``/``put_file``, never whole in memory), then
   removes its local copy (succeeded or not: no raw row stays on a worker machine),
3. and the publish task (or, for a run that stopped earlier, the ``cleanup``
   teardown of ``release_tasks``) deletes the run's remote folder with the local one.

What stays true: the files are the run's own (the steps still refuse an
artifact of another run and a file whose SHA-256 changed — a tampered or
half-copied remote file is refused, not used); a run never sees another run's
folder; the folder is removed after publishing, and by the ``cleanup`` teardown
when the run stops earlier (operators wired by hand without that teardown keep it). Privacy of the remote
folder is the store's: a ``file://`` folder is created 0700; for object stores
use a bucket/prefix only the Airflow workers' identity can read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from privacy_plugins.release import ReleaseSpec, run_dir
from privacy_plugins.release.destination.working_file import file_sha256

__all__ = ["STORAGE_CONN_ENV", "STORAGE_ENV", "ReportStorage", "WorkingStorage"]

STORAGE_ENV = "PRIVACY_PLUGINS_WORKING_STORAGE"
STORAGE_CONN_ENV = "PRIVACY_PLUGINS_WORKING_STORAGE_CONN_ID"


class WorkingStorage:
    """One run's folder on shared storage, mirrored to and from its local private working folder."""

    def __init__(self, url: str, *, conn_id: str | None = None) -> None:
        from airflow.sdk import ObjectStoragePath

        self.root: Any = ObjectStoragePath(url, conn_id=conn_id) if conn_id else ObjectStoragePath(url)
        self._pulled: dict[str, str] = {}  # file name -> SHA-256 of the copy pulled from the store

    @classmethod
    def configured(cls, url: str | None = None, conn_id: str | None = None) -> WorkingStorage | None:
        """The operator's setting, else the environment's; ``None`` when neither is set (local folders only)."""
        url = (url or "").strip() or os.environ.get(STORAGE_ENV, "").strip()
        if not url:
            return None
        return cls(url, conn_id=(conn_id or "").strip() or os.environ.get(STORAGE_CONN_ENV, "").strip() or None)

    def _remote(self, local: Path) -> Any:
        return self.root / local.parent.name / local.name  # <release>/<run id>, as in the local root

    def _private(self, folder: Any) -> None:
        if folder.protocol in ("file", "local"):
            for path in (folder.parent, folder):
                os.chmod(path.path, stat.S_IRWXU)

    def pull(self, spec: ReleaseSpec, run_id: str) -> list[str]:
        """Download the run's remote files into its local folder (created 0700); returns the names copied.

        Each file streams through the store's filesystem (fsspec ``get_file``), never whole in memory;
        its SHA-256 is remembered, so :meth:`push` skips the files this task did not change.
        """
        remote = self._remote(run_dir(spec, run_id, create=True))
        local = run_dir(spec, run_id)
        if not remote.exists():
            return []
        names = []
        for item in remote.iterdir():
            if item.is_file():
                target = local / item.name
                item.fs.get_file(item.path, str(target))
                self._pulled[item.name] = file_sha256(target)
                names.append(item.name)
        return sorted(names)

    def push(self, spec: ReleaseSpec, run_id: str) -> list[str]:
        """Upload the run's local files that are new or changed since :meth:`pull`; returns the names uploaded."""
        local = run_dir(spec, run_id)
        remote = self._remote(local)
        remote.mkdir(parents=True, exist_ok=True)
        self._private(remote)
        names = []
        for path in sorted(local.iterdir()):
            if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                if self._pulled.get(path.name) == file_sha256(path):
                    continue  # the remote copy is the one this task pulled: nothing to send
                target = remote / path.name
                target.fs.put_file(str(path), target.path)  # streamed
                names.append(path.name)
        return names

    def remove(self, spec: ReleaseSpec, run_id: str) -> None:
        """Delete the run's remote folder (after publishing, or in the release's cleanup teardown)."""
        from privacy_plugins.release.workarea import safe_name

        remote = self.root / f"{safe_name(spec.name)}-{spec.source_fingerprint[:12]}" / safe_name(run_id)
        if remote.exists():
            remote.rmdir(recursive=True)


class ReportStorage:
    """Where the reports of every run are kept beyond the worker: ``<storage>/<release>/<run id>/<report>``.

    The diagnosis (``diagnosis.html``, ``diagnosis.json``) and the release summary (``release.json``:
    the publication — destination, rows, numbers; no value) of each run, on any ``ObjectStoragePath``
    (``report_storage="s3://bucket/privacy-reports"``), so a Kubernetes pod's disk is never their only
    copy. Reports hold counts and measures only (values only when a spec opts in); a ``file://``
    folder is created 0700.
    """

    def __init__(self, url: str, *, conn_id: str | None = None) -> None:
        from airflow.sdk import ObjectStoragePath

        self.root: Any = ObjectStoragePath(url, conn_id=conn_id) if conn_id else ObjectStoragePath(url)

    @classmethod
    def configured(cls, url: str | None, conn_id: str | None = None) -> ReportStorage | None:
        """``None`` when no report storage is set."""
        url = (url or "").strip()
        return cls(url, conn_id=(conn_id or "").strip() or None) if url else None

    def store(self, spec: ReleaseSpec, run_id: str, reports: Mapping[str, Path | bytes]) -> list[str]:
        """Copy ``reports`` (a file, streamed, or bytes) into the run's folder; returns the stored locations."""
        from privacy_plugins.release.workarea import safe_name

        folder = self.root / safe_name(spec.name) / safe_name(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        if folder.protocol in ("file", "local"):
            for path in (folder.parent, folder):
                os.chmod(path.path, stat.S_IRWXU)
        stored = []
        for name, content in reports.items():
            target = folder / name
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.fs.put_file(str(content), target.path)
            stored.append(str(target))
        return stored
