"""PrivacyCheckOperator: re-measure every requirement on the candidate (and optionally a GX suite).

On a failed requirement the task fails with the list of failed checks
(``on_failure="fail"``, the default) or, like ``ShortCircuitOperator``, succeeds
and skips everything downstream (``on_failure="skip_downstream"``). Either way
the publish task never runs. A check that cannot be evaluated always fails the task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import SkipMixin

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.airflow.exceptions import PrivacyCheckError, PrivacyCheckFailed
from privacy_plugins.integrations.airflow.operators._base import ReleaseStepOperator
from privacy_plugins.release import Candidate, CheckResult, ReleaseSpec, RequirementCheck, check_step

if TYPE_CHECKING:
    from airflow.sdk import Context, XComArg

__all__ = ["ON_FAILURE", "PrivacyCheckOperator"]

ON_FAILURE = ("fail", "skip_downstream")
# the log label of a failed GX expectation, by its failure level (only "error" blocks the release)
_FAILED_LABELS = {"error": "FAIL", "warn": "WARN", "info": "INFO"}


class PrivacyCheckOperator(ReleaseStepOperator, SkipMixin):
    """Release step 4: ``check_step`` (plus a GX suite); pushes the ``CheckResult`` dict, pass or fail.

    Args:
        candidate: the ``AnonymizeOperator``'s output (``anonymize.output``).
        expectation_suite: a GX suite JSON (e.g. ``expectations/demo_release.json``) validated on the
            candidate as well; relative paths resolve against the spec's folder; ``None`` or ``""``: core only.
            Needs the ``gx`` extra; GX is imported inside ``execute()``.
        gx_context_root: a folder for a GX file context (relative: against the spec's folder); the suite then
            runs through a stored ``Checkpoint`` that keeps each run's result and rebuilds Data Docs
            (:mod:`privacy_plugins.integrations.gx.checkpoints`); ``None`` or ``""``: an ephemeral context.
        on_failure: ``"fail"`` (raise ``PrivacyCheckFailed``) or ``"skip_downstream"``.
        spec_path, overrides: see ``ReleaseStepOperator``; ``overrides={"requirements": {...}}`` sets thresholds.
    """

    template_fields: Sequence[str] = (
        *ReleaseStepOperator.template_fields,
        "candidate",
        "expectation_suite",
        "gx_context_root",
    )
    inherits_from_skipmixin = True

    def __init__(
        self,
        *,
        candidate: Mapping[str, Any] | XComArg,
        expectation_suite: str | None = None,
        gx_context_root: str | None = None,
        on_failure: str = "fail",
        **kwargs: Any,
    ) -> None:
        if on_failure not in ON_FAILURE:
            raise ConfigurationError(f"on_failure must be one of {list(ON_FAILURE)}, got {on_failure!r}")
        super().__init__(**kwargs)
        self.candidate = candidate
        self.expectation_suite = expectation_suite
        self.gx_context_root = gx_context_root
        self.on_failure = on_failure

    def run_step(self, spec: ReleaseSpec, context: Context) -> CheckResult:
        """Check; on failure raise or skip downstream, according to ``on_failure``."""
        candidate = self.artifact(Candidate, self.candidate, name="candidate")
        # The suite first: a failed core check of a release inside the database drops its staging table.
        suite_checks = (
            self._suite_checks(spec, candidate, self.run_id(context))
            if (self.expectation_suite or "").strip()
            else None
        )
        result = check_step(spec, candidate, run_id=self.run_id(context))
        logged = [("PASS" if c.passed else "FAIL", c) for c in result.checks]
        if suite_checks is not None:
            logged += suite_checks
            checks = [*result.checks, *(check for _, check in suite_checks)]
            result = dataclasses.replace(result, passed=all(c.passed for c in checks), checks=checks)
        for label, check in logged:
            self.log.info("%s %s: %s", label, check.requirement, check.detail)
        if result.passed:
            return result
        failed = [c for c in result.checks if not c.passed]
        message = (
            f"release {spec.name!r} blocked: {len(failed)} of {len(result.checks)} privacy checks failed on the "
            f"anonymized candidate; nothing will be published.\n{result.summary()}"
        )
        if self.on_failure == "fail":
            raise PrivacyCheckFailed(message, check=result.to_dict())
        self.log.warning("%s\nSkipping downstream tasks.", message)
        context["ti"].xcom_push(key="return_value", value=result.to_dict())
        self.skip(ti=context["ti"], tasks=[t for t in self.get_flat_relatives(upstream=False) if not t.is_teardown])
        return result

    def _suite_path(self, setting: str | None = None) -> Path:
        path = Path(str(setting or self.expectation_suite).strip()).expanduser()
        return path if path.is_absolute() else Path(str(self.spec_path)).resolve().parent / path

    def _suite_checks(
        self, spec: ReleaseSpec, candidate: Candidate, run: str | None
    ) -> list[tuple[str, RequirementCheck]]:
        """Validate the candidate with the GX suite; each expectation becomes one check, with its log label.

        A failed ``warning``/``info`` expectation does not block (its check counts as passed) but is
        logged as ``WARN``/``INFO``, not ``PASS``; only a failed ``critical`` one is ``FAIL``.
        """
        from privacy_plugins.integrations import gx as privacy_gx  # costs seconds: only when a suite is used

        suite = privacy_gx.load_suite(self._suite_path())
        root = (self.gx_context_root or "").strip()
        if root:  # a stored checkpoint: each run's result kept, Data Docs rebuilt
            from privacy_plugins.integrations.gx.checkpoints import validate_candidate_stored

            result = validate_candidate_stored(
                spec, candidate, suite, context_root=self._suite_path(root), run_id=run or ""
            )
        else:
            result = privacy_gx.validate_candidate(spec, candidate, suite)  # where it is staged
        outcomes = privacy_gx.outcomes(result)
        errors = [o.message for o in outcomes if o.status == "error"]
        if errors:
            raise PrivacyCheckError(f"GX suite {suite.name!r} could not be evaluated:\n" + "\n".join(errors))
        return [
            (
                "PASS" if o.status == "passed" else _FAILED_LABELS[o.level],
                RequirementCheck(
                    f"GX {suite.name}: {o.expectation_type}",
                    not o.blocks_release,
                    float(o.observed) if isinstance(o.observed, (int, float)) else None,
                    None,
                    o.message if o.status == "passed" else f"{o.message}; severity {o.level}",
                    name=f"gx_{o.expectation_type}",
                ),
            )
            for o in outcomes
        ]
