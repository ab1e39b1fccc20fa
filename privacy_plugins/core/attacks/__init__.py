"""Attacks on a candidate release before it is published: singling out, linkability, inference.

Anonymeter's methodology (Giomi et al., PETS 2023), on integer codes and read through the
release's generalization (:mod:`privacy_plugins.core.coverage`). See docs/attacks.md.
"""

from privacy_plugins.core.attacks.run import ATTACKS, DEFAULT_ATTACKS, AttackReport, control_surrogate, run_attacks
from privacy_plugins.core.attacks.stats import AttackResult

__all__ = ["ATTACKS", "DEFAULT_ATTACKS", "AttackReport", "AttackResult", "control_surrogate", "run_attacks"]
