"""The release policy: floors the checks and the publish gate enforce on top of the spec's requirements.

A policy only tightens (``min_k``, ``min_l`` raise k and l; ``max_t`` lowers t),
and only what the checks enforce: the anonymizer still targets the spec, so a
policy stricter than the spec blocks the release until the spec is raised —
the release author cannot weaken it, and it never changes the data silently.
A floor for a requirement the spec does not declare is an error (no check
exists for it). The factory's policy is part of the code; the resource's floors
add to it per deployment (and, like any resource field, are reset by run
configuration that does not repeat them — so a floor that must hold belongs in
the factory).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from privacy_plugins.core.parameters import check_fraction, check_integer, check_positive
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec

__all__ = ["Policy", "tighten"]

N = TypeVar("N", int, float)


@dataclass(frozen=True)
class Policy:
    """Floors on what the checks enforce: ``min_k`` (integer ≥ 1), ``min_l`` (≥ 1), ``max_t`` (in [0, 1])."""

    min_k: int | None = None
    min_l: float | None = None
    max_t: float | None = None

    def __post_init__(self) -> None:
        if self.min_k is not None:
            check_integer(self.min_k, name="policy min_k")
        if self.min_l is not None:
            check_positive(self.min_l, name="policy min_l", minimum=1.0, inclusive=True)
        if self.max_t is not None:
            check_fraction(self.max_t, name="policy max_t")

    @classmethod
    def from_mapping(cls, policy: Mapping[str, float] | None) -> Policy:
        """Build from ``{"min_k": 10, ...}``, rejecting unknown keys."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(policy or {}) - set(names))
        if unknown:
            raise ConfigurationError(f"unknown policy keys {unknown}; known: {names}")
        return cls(**dict(policy or {}))  # type: ignore[arg-type]

    @classmethod
    def for_spec(cls, spec: ReleaseSpec, policy: Policy | Mapping[str, float] | None) -> Policy:
        """The policy, checked against ``spec`` now: a floor on an undeclared requirement fails here."""
        checked = policy if isinstance(policy, Policy) else cls.from_mapping(policy)
        tighten(spec, checked)
        return checked


def _tighter(value: N | None, bound: N | None, pick: Callable[[N, N], N]) -> N | None:
    return value if value is None or bound is None else pick(value, bound)


def tighten(spec: ReleaseSpec, policy: Policy) -> ReleaseSpec:
    """``spec`` with its requirements tightened by ``policy`` (``spec`` itself when nothing changes)."""
    requirements = spec.requirements
    for field, bound in (("k", policy.min_k), ("l", policy.min_l), ("t", policy.max_t)):
        if bound is not None and getattr(requirements, field) is None:
            listed = " (a floor tightens the shorthand keys, not a model in requirements' list)"
            raise ConfigurationError(
                f"policy sets a bound on {field} ({bound!r}) but release {spec.name!r} does not require "
                f"{field}; add requirements.{field} to the spec so the anonymizer targets it"
                + (listed if requirements.listed else "")
            )
    tightened = dataclasses.replace(
        requirements,
        k=_tighter(requirements.k, policy.min_k, max),
        l=_tighter(requirements.l, policy.min_l, max),
        t=_tighter(requirements.t, policy.max_t, min),
    )
    return spec if tightened == requirements else dataclasses.replace(spec, requirements=tightened)
