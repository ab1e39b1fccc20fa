"""ExpectTableAttackRiskToBeBelow: singling-out, linkability and inference attacks on a release stay under limits.

The batch is the release (generalized or not); the original records are read from a file
the expectation names (``original``; Parquet or CSV), with an optional held-out ``control``
(without it a per-column permutation of the original stands in, which over-estimates the
risk: docs/attacks.md). The core's :class:`~privacy_plugins.core.models.AttackRisk` runs the
attacks; the expectation passes when each attack's upper confidence bound is at most its limit.
The result holds rates, intervals and counts only — never a value of either table.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from great_expectations.compatibility import pydantic
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.validator.validator import ValidationDependencies

from privacy_plugins.core.hierarchies import Hierarchy, build_hierarchy
from privacy_plugins.core.io import read_table
from privacy_plugins.core.models import AttackRisk
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.integrations.gx.expectations._base import (
    check_qis_and_secret,
    gallery_metadata,
    set_metric_kwargs,
    validation_result,
)
from privacy_plugins.integrations.gx.expectations._rendering import DataDocsSentences
from privacy_plugins.integrations.gx.row_metrics import TABLE_ROWS

__all__ = ["ExpectTableAttackRiskToBeBelow"]


def _read_records(path: str) -> pd.DataFrame:
    """The original (or control) records from a Parquet or CSV file."""
    source = Path(path).expanduser()
    if not source.is_file():
        raise ConfigurationError(f"original/control: {str(source)!r} is not a file")
    return read_table(source)


class ExpectTableAttackRiskToBeBelow(DataDocsSentences, BatchExpectation):
    """Expect the release's attack risks (upper confidence bounds) to be at most their limits.

    Args:
        quasi_identifiers: columns an attacker knows (linkability splits them in two halves).
        original: path of the original records (Parquet or CSV) the release was made from.
        control: path of records held out of the release (optional; see the module doc).
        sensitive_attribute: the secret the inference attack guesses (without it: no inference attack).
        singling_out, linkability, inference: limits in [0, 1]; confidence: the intervals' level.
        n_attacks, seed: the attacks (same seed, same verdict).
        hierarchies: per generalized QI, its hierarchy as a release spec writes it (a label's
            candidates are then the leaves below it).

    Example:
        >>> ExpectTableAttackRiskToBeBelow(quasi_identifiers=["age", "zip"], original="people.parquet").expectation_type
        'expect_table_attack_risk_to_be_below'
    """

    quasi_identifiers: list[pydantic.StrictStr] = pydantic.Field(description="Columns an attacker may know.")
    original: pydantic.StrictStr = pydantic.Field(description="Path of the original records (Parquet or CSV).")
    control: pydantic.StrictStr | None = pydantic.Field(None, description="Path of held-out control records.")
    sensitive_attribute: pydantic.StrictStr | None = None
    singling_out: float = 0.05
    linkability: float = 0.05
    inference: float = 0.1
    confidence: float = 0.95
    n_attacks: pydantic.StrictInt = 500
    seed: pydantic.StrictInt = 0
    hierarchies: dict[str, Any] | None = None

    metric_dependencies: ClassVar[tuple[str, ...]] = (TABLE_ROWS,)
    success_keys: ClassVar[tuple[str, ...]] = (
        "quasi_identifiers", "original", "control", "sensitive_attribute", "singling_out", "linkability",
        "inference", "confidence", "n_attacks", "seed", "hierarchies",
    )  # fmt: skip
    args_keys: ClassVar[tuple[str, ...]] = ("quasi_identifiers", "original")
    library_metadata: ClassVar[dict[str, Any]] = gallery_metadata("experimental", "anonymization", "attack")

    @pydantic.root_validator(skip_on_failure=True)
    def _check_with_core(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Reject bad limits, a secret that is a QI, or too few QIs, when the expectation is built."""
        cls.model(values)
        check_qis_and_secret(values)
        return values

    @classmethod
    def model(cls, params: Mapping[str, Any]) -> AttackRisk:
        """The core model for these parameters (its own checks raise)."""
        return AttackRisk(
            singling_out=params.get("singling_out", 0.05),
            linkability=params.get("linkability", 0.05),
            inference=params.get("inference", 0.1),
            confidence=params.get("confidence", 0.95),
            sensitive_attribute=params.get("sensitive_attribute"),
            n_attacks=params.get("n_attacks", 500),
            seed=params.get("seed", 0),
        )

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """'Attacks on age, zip, sex stay below singling out 0.05, linkability 0.05, inference 0.1 (95%)'."""
        limits = cls.model(params).limits()
        text = ", ".join(f"{name.replace('_', ' ')} {limit:g}" for name, limit in limits.items())
        return "Attacks on $quasi_identifiers stay below $limits ($confidence upper bounds)", {
            "limits": text,
            "confidence": f"{params.get('confidence', 0.95):.0%}",
        }

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """The worst attack's upper bound."""
        return "highest upper bound"

    def get_validation_dependencies(
        self, execution_engine: Any = None, runtime_configuration: dict[str, Any] | None = None
    ) -> ValidationDependencies:
        """The batch's QI and secret columns as rows."""
        dependencies: ValidationDependencies = super().get_validation_dependencies(
            execution_engine=execution_engine, runtime_configuration=runtime_configuration
        )
        secret = [self.sensitive_attribute] if self.sensitive_attribute else []
        return set_metric_kwargs(dependencies, TABLE_ROWS, {"columns": [*self.quasi_identifiers, *secret]})

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        release: pd.DataFrame = metrics[TABLE_ROWS]
        columns = list(release.columns)
        original = _read_records(self.original)
        control = _read_records(self.control) if self.control else None
        for name, frame in (("original", original), ("control", control)):
            missing = [] if frame is None else [c for c in columns if c not in frame.columns]
            if missing:
                raise ConfigurationError(f"{name}: column(s) {missing} are not in {getattr(self, name)!r}")
        hierarchies: dict[Hashable, Hierarchy] = {
            qi: build_hierarchy(qi, config, original[qi]) for qi, config in (self.hierarchies or {}).items()
        }
        model = self.model(self.__dict__)
        report = model.attack(
            original[columns],
            release,
            quasi_identifiers=list(self.quasi_identifiers),
            control=control[columns] if control is not None else None,
            hierarchies=hierarchies,
        )
        limits = model.limits()
        uppers = {key: result.upper for key, result in report.results.items()}
        failing = sorted(key for key, upper in uppers.items() if upper > limits[key])
        details = {
            "model": str(model),
            "limits": {key: limits[key] for key in uppers},
            "failing": failing,
            "attacks": report.to_dict(),  # rates, intervals and counts only
        }
        return validation_result(not failing, max(uppers.values()), details)
