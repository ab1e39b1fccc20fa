"""Check names and severities: fixed when the graph is defined, so Dagster knows every check up front.

A requirement check is named after the model's registry name
(``privacy_plugins.core.models.MODEL_REGISTRY``) and its sensitive attribute:
``k_anonymity``, ``distinct_l_diversity_disease``, ``t_closeness_income``,
``personalized_leakage_disease``; with a release history, ``composition`` comes last. Four
structural checks of the release layer come first and always block: ``no_identifiers``,
``row_accounting``, ``suppression_limit``, ``no_direct_identifiers``. Severities use GX's words
(``critical``, ``warning``,
``info``), as suites do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import dagster as dg

from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.composition_gate import composition_check_names
from privacy_plugins.release.steps import check_name

__all__ = [
    "SEVERITIES",
    "STRUCTURAL_CHECKS",
    "check_severities",
    "identifier",
    "release_names",
    "requirement_check_names",
]

#: The release layer's structural checks, in ``check_step`` order; these never soften.
STRUCTURAL_CHECKS = ("no_identifiers", "row_accounting", "suppression_limit", "no_direct_identifiers")
#: GX severity → Dagster severity. ``info`` reports as WARN: Dagster has no lower level.
SEVERITIES: Mapping[str, dg.AssetCheckSeverity] = {
    "critical": dg.AssetCheckSeverity.ERROR,
    "warning": dg.AssetCheckSeverity.WARN,
    "info": dg.AssetCheckSeverity.WARN,
}


def identifier(text: object) -> str:
    """``text`` as a Dagster name: letters, digits and ``_`` only."""
    return re.sub(r"[^A-Za-z0-9_]", "_", str(text)) or "_"


def release_names(
    spec: ReleaseSpec, *, key_prefix: str | Sequence[str] | None, resource_key: str | None
) -> tuple[tuple[str, ...], str]:
    """The asset key prefix (default: the spec's name) and the resource key (default ``<prefix>_release``)."""
    prefix = (
        (identifier(spec.name),)
        if key_prefix is None
        else tuple([key_prefix] if isinstance(key_prefix, str) else key_prefix)
    )
    key = resource_key or f"{'_'.join(prefix)}_release"
    for what, names in (("key_prefix", prefix), ("resource_key", (key,))):
        if not names or not all(re.fullmatch(r"[A-Za-z0-9_]+", name) for name in names):
            raise dg.DagsterInvalidDefinitionError(f"{what} must be names of letters, digits and '_', got {names!r}")
    return prefix, key


def requirement_check_names(spec: ReleaseSpec) -> tuple[str, ...]:
    """The check names of ``spec``, in the order ``check_step`` reports them."""
    names = STRUCTURAL_CHECKS + tuple(check_name(m) for m in spec.models()) + composition_check_names(spec)
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise dg.DagsterInvalidDefinitionError(
            f"release {spec.name!r}: sensitive attribute names collide as check names {duplicated}; "
            "rename the columns so they differ in letters, digits or '_'"
        )
    return names


def check_severities(spec: ReleaseSpec, severity: Mapping[str, str] | None) -> dict[str, str]:
    """Every requirement check's GX severity (default ``critical``), rejecting unknown names and levels."""
    names = requirement_check_names(spec)
    softenable = names[len(STRUCTURAL_CHECKS) :]
    levels = dict.fromkeys(names, "critical")
    for name, level in (severity or {}).items():
        if name in STRUCTURAL_CHECKS:
            raise dg.DagsterInvalidDefinitionError(
                f"severity: {name!r} is a structural check and always blocks; softenable checks: {list(softenable)}"
            )
        if name not in softenable:
            raise dg.DagsterInvalidDefinitionError(
                f"severity names an unknown check {name!r} for release {spec.name!r}; its checks: {list(softenable)}"
            )
        if level not in SEVERITIES:
            raise dg.DagsterInvalidDefinitionError(
                f"severity for {name!r} must be one of {list(SEVERITIES)} (GX's words), got {level!r}"
            )
        levels[name] = level
    return levels
