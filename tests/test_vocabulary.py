"""One vocabulary on every surface (issue 12 item 2): the old words must not come back.

The words are ``quasi_identifiers``, ``sensitive_attributes`` (one model's
``sensitive_attribute``), ``identifiers``, ``suppression_limit``, ``l_variant``
and ``t_distance`` — in Python keywords, CLI flags (with dashes), GX kwargs and
the core's JSON. This test scans what users type and read.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Iterator

import pytest

import privacy_plugins as pp
from privacy_plugins.cli import build_parser
from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.diagnosis import diagnose
from privacy_plugins.core.models import MODEL_REGISTRY, requirement_models

# Whole words (between separators) that once named a concept of the vocabulary.
FORBIDDEN_WORDS = {"delta", "max_suppression", "sensitive", "attribute", "variant", "variants", "distance", "qi"}
FORBIDDEN_FLAGS = {"--qi", "--sensitive", "--suppression", "--delta", "--mark-suppressed"}


def _words(name: str) -> set[str]:
    """``"sensitive_attribute"`` is one word of the vocabulary; ``"sensitive"`` alone is not."""
    return {name.strip("-").replace("-", "_")}


def _flags() -> Iterator[tuple[str, str]]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, subparser in commands.choices.items():
        for action in subparser._actions:
            for flag in action.option_strings:
                yield command, flag


def test_cli_flags_use_the_vocabulary() -> None:
    bad = [
        f"{command} {flag}" for command, flag in _flags() if flag in FORBIDDEN_FLAGS or _words(flag) & FORBIDDEN_WORDS
    ]
    assert not bad, f"old words in CLI flags: {bad}"


def test_role_flags_are_spelled_the_same_in_every_subcommand() -> None:
    seen: dict[str, set[str]] = {}
    for command, flag in _flags():
        seen.setdefault(command, set()).add(flag)
    for command in ("measure", "diagnose", "anonymize"):
        assert {"--quasi-identifiers", "--sensitive-attributes"} <= seen[command], command
    for command in ("measure", "diagnose", "anonymize"):
        assert "--suppression-limit" in seen[command], command
    for command in ("diagnose", "anonymize"):
        assert "--l-variant" in seen[command], command
    for command in ("measure", "anonymize"):
        assert "--t-distance" in seen[command], command


def _gx_fields() -> Iterator[tuple[str, str]]:
    pytest.importorskip("great_expectations")  # the adapter imports it: skip, not fail, without the gx extra
    gx = pytest.importorskip("privacy_plugins.integrations.gx")
    for name in (
        "ExpectTableToBeKAnonymous",
        "ExpectTableToBeLDiverse",
        "ExpectTableToBeTClose",
        "ExpectTableToSatisfyPersonalizedLeakageBound",
    ):
        expectation = getattr(gx, name)
        for field in expectation.__fields__:
            yield name, field


def test_gx_expectation_fields_use_the_vocabulary() -> None:
    fields = list(_gx_fields())
    bad = [f"{name}.{field}" for name, field in fields if _words(field) & FORBIDDEN_WORDS]
    assert not bad, f"old words in GX kwargs: {bad}"
    names = {field for _, field in fields}
    assert {"quasi_identifiers", "sensitive_attribute", "suppression_limit", "l_variant", "t_distance"} <= names


@pytest.mark.parametrize(
    "function", [pp.measure, diagnose, anonymize, requirement_models, pp.l_diversity, pp.t_closeness]
)
def test_python_keywords_use_the_vocabulary(function: object) -> None:
    parameters = inspect.signature(function).parameters  # type: ignore[arg-type]
    bad = [name for name in parameters if _words(name) & FORBIDDEN_WORDS]
    assert not bad, f"{function.__name__}: old keywords {bad}"  # type: ignore[attr-defined]


def test_model_fields_use_the_vocabulary() -> None:
    for name, model in MODEL_REGISTRY.items():
        parameters = inspect.signature(model).parameters
        bad = [p for p in parameters if _words(p) & FORBIDDEN_WORDS]
        assert not bad, f"{name}: old field names {bad}"


def test_core_json_uses_the_vocabulary() -> None:
    frame = pp.generate_census(200, seed=1)
    report = pp.measure(
        frame, quasi_identifiers=["sex"], sensitive_attributes=["disease"], k=2, l=2, t=0.5, suppression_limit=0.1
    ).to_dict()
    diagnosis = diagnose(
        frame, quasi_identifiers=["sex", "zip"], sensitive_attributes=["disease"], k=2, l=2, suppression_limit=0.1
    ).to_dict()
    keys: set[str] = set()

    def collect(value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                keys.add(str(key))
                collect(inner)
        elif isinstance(value, list):
            for inner in value:
                collect(inner)

    collect(report)
    collect(diagnosis)
    keys -= {"disease"}  # a column name, not a key of the contract
    bad = sorted(key for key in keys if re.fullmatch(r"[a-z_]+", key) and _words(key) & FORBIDDEN_WORDS)
    assert not bad, f"old words in JSON keys: {bad}"


DOCUMENTS = ["README.md", "expectations/README.md", "dags/README.md", "dagster_defs/README.md"]
OLD_IN_DOCS = re.compile(
    r"--qi\b|--sensitive(?![-\w])|--delta\b|--suppression(?![-\w])|--mark-suppressed|\bmax_suppression\b"
    r'|"(?:sensitive|variant|distance|delta)"\s*:|\b(?:variant|distance|delta|sensitive)='
)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_documents_use_the_vocabulary(document: str) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / document).read_text(encoding="utf-8")
    bad = sorted({match.group(0) for match in OLD_IN_DOCS.finditer(text)})
    assert not bad, f"{document}: old words {bad}"


def test_gx_suites_use_the_vocabulary() -> None:
    import json
    from pathlib import Path

    for path in (Path(__file__).resolve().parents[1] / "expectations").glob("*.json"):
        for expectation in json.loads(path.read_text(encoding="utf-8"))["expectations"]:
            bad = [key for key in expectation["kwargs"] if _words(key) & FORBIDDEN_WORDS]
            assert not bad, f"{path.name}: old kwargs {bad}"
