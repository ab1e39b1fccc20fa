"""Great Expectations suites as extra blocking checks: read as JSON when defined, run with GX only at run time.

Defining the graph never imports GX (3–5 s, and an extra the Dagster user may
not have). The suite file is checked up front (it exists, is JSON, names itself
and lists expectations); GX itself, with ``privacy_plugins.integrations.gx`` and
its ``load_suite`` guard against silently dropped expectations, is imported by
the check when it runs. A suite's own ``severity`` per expectation decides:
any ``critical`` failure — or any check that could not run — is an ERROR and
blocks; ``warning``/``info`` failures only are a WARN.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import dagster as dg

from privacy_plugins.integrations.dagster.naming import identifier
from privacy_plugins.release import Candidate, ReleaseSpec

__all__ = ["SuiteRef", "SuiteVerdict", "read_suite_refs", "run_suite"]


@dataclass(frozen=True)
class SuiteRef:
    """A suite file checked at definition time."""

    path: Path
    name: str
    #: a GX file context where each run's result is stored and Data Docs rebuilt (``None``: ephemeral)
    context_root: Path | None = None

    @property
    def check_name(self) -> str:
        """The asset check's name, ``gx_<suite name>``."""
        return f"gx_{identifier(self.name)}"


@dataclass(frozen=True)
class SuiteVerdict:
    """What one suite said about the candidate (no raw values: type, status, level and observed measure)."""

    ref: SuiteRef
    blocks: bool
    failed: int
    outcomes: list[dict[str, Any]]
    message: str


def _read_ref(path: str | PathLike[str], context_root: Path | None) -> SuiteRef:
    source = Path(path).expanduser().resolve()
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise dg.DagsterInvalidDefinitionError(
            f"expectation_suite {str(source)!r} cannot be read as JSON: {exc}"
        ) from exc
    if not isinstance(data, dict) or not data.get("name") or not data.get("expectations"):
        raise dg.DagsterInvalidDefinitionError(
            f"expectation_suite {str(source)!r} needs a 'name' and a non-empty 'expectations' list"
        )
    return SuiteRef(path=source, name=str(data["name"]), context_root=context_root)


def read_suite_refs(
    suites: str | PathLike[str] | Sequence[str | PathLike[str]] | None,
    gx_context_root: str | PathLike[str] | None = None,
) -> tuple[SuiteRef, ...]:
    """Check one suite path or several; their check names must differ.

    ``gx_context_root``: a folder for a GX file context; each check's result is then stored
    there through a ``Checkpoint`` and its Data Docs rebuilt (:mod:`privacy_plugins.integrations.gx.checkpoints`).
    """
    if suites is None:
        return ()
    root = Path(gx_context_root).expanduser().resolve() if gx_context_root else None
    paths = [suites] if isinstance(suites, (str, PathLike)) else list(suites)
    refs = tuple(_read_ref(p, root) for p in paths)
    names = [r.check_name for r in refs]
    if len(set(names)) != len(names):
        raise dg.DagsterInvalidDefinitionError(f"two expectation suites share a check name: {names}")
    return refs


def run_suite(ref: SuiteRef, spec: ReleaseSpec, candidate: Candidate) -> SuiteVerdict:
    """Validate the candidate where it is staged (imports GX now; MissingDependencyError names the extra)."""
    from privacy_plugins.integrations import gx as privacy_gx

    suite = privacy_gx.load_suite(ref.path)
    if ref.context_root is None:
        result = privacy_gx.validate_candidate(spec, candidate, suite)
    else:  # a stored checkpoint: the result kept and Data Docs rebuilt
        from privacy_plugins.integrations.gx.checkpoints import validate_candidate_stored

        result = validate_candidate_stored(spec, candidate, suite, context_root=ref.context_root)
    outcomes = privacy_gx.outcomes(result)
    keys = ("expectation_type", "status", "level", "observed", "message")
    summaries = [{key: o.to_dict()[key] for key in keys} for o in outcomes]  # counts, never the values GX saw
    failing = [o for o in outcomes if o.status != "passed"]
    lines = [o.message for o in failing] or [f"all {len(outcomes)} expectations passed"]
    return SuiteVerdict(
        ref=ref,
        blocks=any(o.blocks_release for o in outcomes),
        failed=len(failing),
        outcomes=summaries,
        message=f"GX suite {ref.name!r}: " + "; ".join(lines),
    )
