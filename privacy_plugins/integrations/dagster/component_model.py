"""The typed YAML model of the ``PrivacyRelease`` component: every section of a release spec, key by key.

``dg check yaml`` validates a component's ``attributes`` against the JSON schema of
its model before any Python runs. With untyped ``dict`` sections a misspelt key
(``suppresion_limit``) passed that check and failed later, when the definitions
loaded, with a stack trace. Here each section is a :class:`dagster.Model`
(pydantic, unknown keys forbidden) whose fields are the release layer's own
``KEYS``, so ``dg check yaml`` names the file, line and column of the typo. The
values are still validated by :class:`~privacy_plugins.release.ReleaseSpec`
when the definitions load (ranges, combinations, paths). The algorithm's name
and options come from the anonymizer registry when this module is imported (an
algorithm your own code registers must be registered before that, e.g. at the
top of the project's package); the hierarchy builders from the core's
``HIERARCHY_BUILDERS``.
"""

# No ``from __future__ import annotations``: Dagster's Model/Resolvable read the annotations at class creation.

import functools
from typing import Any, Literal

import dagster as dg
from pydantic import BaseModel, create_model

from privacy_plugins.core.anonymize.registry import DEFAULT_ALGORITHM, anonymizer_names, get_anonymizer
from privacy_plugins.core.hierarchies.config import HIERARCHY_BUILDERS

__all__ = [
    "AlgorithmModel",
    "DestinationModel",
    "HierarchyModel",
    "HistoryModel",
    "PolicyModel",
    "PopulationModel",
    "ReportModel",
    "RequirementsModel",
    "SourceModel",
    "section",
    "yaml_checked",
]


class SourceModel(dg.Model):
    """``source:`` — exactly one of path, url, conn_id, duckdb, spark or generate (checked when loading)."""

    path: str | None = None
    sep: str | None = None
    encoding: str | None = None
    url: str | None = None
    table: str | None = None
    query: str | None = None
    generate: Literal["census"] | None = None
    rows: int | None = None
    seed: int | None = None
    conn_id: str | None = None
    duckdb: str | None = None
    max_rows_in_memory: int | None = None
    out_of_core_bytes: int | None = None
    spark: str | None = None
    spark_settings: dict[str, Any] | None = None


class RequirementsModel(dg.Model):
    """``requirements:`` — k, l (and its variant, c), t (and its distance), a leakage bound, the suppression limit.

    ``models`` lists privacy models, ``{name: {parameters}}`` each (checked when loading).
    """

    k: int | None = None
    l: float | None = None
    l_variant: str | None = None
    c: float | None = None
    t: float | None = None
    t_distance: str | None = None
    bound: float | None = None
    bound_column: str | None = None
    suppression_limit: float | None = None
    models: list[dict[str, dict[str, Any] | None]] | None = None


class DestinationModel(dg.Model):
    """``destination:`` — the table and exactly one place to publish it."""

    table: str | None = None
    duckdb: str | None = None
    parquet: str | None = None
    url: str | None = None
    conn_id: str | None = None
    spark: str | None = None
    spark_settings: dict[str, Any] | None = None


class ReportModel(dg.Model):
    """``report:`` — the folder of the diagnosis reports."""

    directory: str | None = None


class HistoryModel(dg.Model):
    """``history:`` — the release history this release is checked against and appended to (or ``false``)."""

    name: str | None = None
    keep_releases: int | None = None
    reapply: bool | None = None
    keep_signatures: bool | None = None
    protect: str | None = None


class PopulationModel(dg.Model):
    """``population:`` — what is known of the population: one of fraction, size, table or weights."""

    fraction: float | None = None
    size: int | None = None
    table: str | None = None
    count_column: str | None = None
    weights: str | None = None


class PolicyModel(dg.Model):
    """``policy:`` — floors the checks enforce beyond the spec (see ``Policy``)."""

    min_k: int | None = None
    min_l: float | None = None
    max_t: float | None = None


HierarchyModel: Any = create_model(
    "HierarchyModel",
    __base__=dg.Model,
    __doc__="One column's hierarchy: one builder (``interval: {...}``, ``taxonomy: {...}`` …) and its settings.",
    **{builder: (dict[str, Any] | None, None) for builder in HIERARCHY_BUILDERS},  # type: ignore[call-overload]
)

_OPTIONS = sorted({option.name for name in anonymizer_names() for option in get_anonymizer(name).options})
AlgorithmModel: Any = create_model(
    "AlgorithmModel",
    __base__=dg.Model,
    __doc__="``algorithm:`` — a registered name, a seed and that algorithm's options (checked when loading).",
    name=(Literal[tuple(anonymizer_names())], DEFAULT_ALGORITHM),
    seed=(int | None, None),
    **{option: (Any, None) for option in _OPTIONS if option not in ("name", "seed")},  # type: ignore[call-overload]
)


def _precise(prop: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [section, string, null]`` as ``if object then section else string/null``.

    Dagster lets every attribute be a template string, so each section's schema is an
    ``anyOf``; a typo inside a section then fails *every* branch and ``dg check yaml``
    reports only "not valid under any of the given schemas" at the section's first line.
    With ``if``/``then`` a mapping is checked against the section alone, so the error is
    the section's own ("'suppresion_limit' was unexpected") at the typo's line and column.
    """
    branches = prop.get("anyOf")
    if not isinstance(branches, list):
        return prop
    mappings = [b for b in branches if "$ref" in b or b.get("type") == "object"]
    if len(mappings) != 1:
        return prop
    others = [b for b in branches if b is not mappings[0]]
    precise = {key: value for key, value in prop.items() if key != "anyOf"}
    return {**precise, "if": {"type": "object"}, "then": mappings[0], "else": {"anyOf": others}}


@functools.cache
def yaml_checked(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` (the component's derived YAML model) whose JSON schema reports errors inside sections precisely."""

    class Checked(model):  # type: ignore[misc, valid-type]
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            schema = super().model_json_schema(*args, **kwargs)
            schema["properties"] = {name: _precise(prop) for name, prop in schema.get("properties", {}).items()}
            return schema

    Checked.__name__ = Checked.__qualname__ = model.__name__
    return Checked


def section(value: Any) -> Any:
    """A section as the release spec's plain data: the keys given, models turned into dicts."""
    if isinstance(value, dg.Model):
        return {key: section(item) for key, item in value.model_dump(exclude_none=True).items()}
    if isinstance(value, dict):
        return {key: section(item) for key, item in value.items()}
    return value
