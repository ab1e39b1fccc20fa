"""The anonymizer seam: registry, one entry point, shared verification, models that declare their needs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import (
    AnonymizedTable,
    anonymize,
    anonymizer_names,
    get_anonymizer,
    register_anonymizer,
    tags_of,
    verify,
)
from privacy_plugins.core.anonymize.registry import _REGISTRY
from privacy_plugins.core.anonymize.registry import anonymization_request as _request
from privacy_plugins.core.diagnosis import find_borders
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.metrics import distinct_l_per_class
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PersonalizedLeakage,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import (
    ConfigurationError,
    InfeasibleAnonymizationError,
    UnknownColumnError,
    VerificationError,
)
from tests.core.anonymize.lattice_problems import Problem, grouping_rows, problems
from tests.unnamed_columns import other_columns

#: The algorithms that solve a weighted snapshot: the full-domain lattice searches (their tags say so).
FULL_DOMAIN = tuple(name for name in anonymizer_names() if tags_of(get_anonymizer(name)).works_on_snapshot)
PACKAGE = Path(__file__).resolve().parents[3] / "privacy_plugins"


def small_problem(rows: int = 24, seed: int = 3) -> Problem:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "q0": rng.integers(0, 6, rows),
            "q1": rng.integers(0, 4, rows),
            "s": rng.choice(list("abcd"), rows),
            "pid": [f"id{i}" for i in range(rows)],
        }
    )
    hierarchies = {
        "q0": Hierarchy.from_rows("q0", grouping_rows(6, [2, 3])),
        "q1": Hierarchy.from_rows("q1", grouping_rows(4, [2])),
    }
    return Problem(frame, ["q0", "q1"], hierarchies)


def check_output(problem: Problem, result, models) -> None:  # type: ignore[no-untyped-def]
    released = result.table if result.rows_out == len(result.table) else None
    assert released is not None
    classes = EquivalenceClasses.from_frame(released.reset_index(drop=True), problem.quasi_identifiers)
    assert all(model.evaluate(classes).passed for model in models)
    assert result.rows_in == len(problem.frame) == result.rows_out + result.suppressed
    assert "pid" not in result.table.columns
    assert result.passed and len(result.models) == len(models)


#: Algorithms that protect the whole table (one tagged ``partial_scope``, such as sensitive-values,
#: protects only part of it by design and has its own tests; one that publishes linked tables,
#: Anatomy, is re-measured on its QIT + ST pair in test_bucketization).
TABLE_WIDE = [
    name
    for name in anonymizer_names()
    if not tags_of(get_anonymizer(name)).partial_scope and not tags_of(get_anonymizer(name)).linked_tables
]


def _k_only(name: str) -> bool:
    """An algorithm that declares it enforces k-anonymity alone (dpp2ga)."""
    return tags_of(get_anonymizer(name)).supported_models.promises == {"k_anonymity"}


@pytest.mark.parametrize("name", TABLE_WIDE)
def test_every_registered_anonymizer_runs_through_anonymize(name: str) -> None:
    problem = small_problem()
    models = [KAnonymity(3)] if _k_only(name) else [KAnonymity(3), DistinctLDiversity("s", 2)]
    result = anonymize(
        problem.frame,
        algorithm=name,
        quasi_identifiers=problem.quasi_identifiers,
        hierarchies=problem.hierarchies,
        models=models,
        identifiers=["pid"],
        insensitive=other_columns(problem.frame, models, problem.quasi_identifiers, ["pid"]),
        suppression_limit=0.1,
        seed=7,
    )
    check_output(problem, result, models)
    assert result.algorithm == name and result.seed == 7
    report = result.to_dict()
    assert report["details"]["kind"] and "levels" not in report
    assert tags_of(get_anonymizer(name)).suppresses or result.suppressed == 0  # a declared non-suppressor
    assert report["k"] >= 3 and (_k_only(name) or report["l"] >= 2)


def test_the_full_domain_searches_are_registered_with_their_option_schema() -> None:
    assert {"optimal", "samarati", "exhaustive"} == set(FULL_DOMAIN)
    options = {option.name: option for option in get_anonymizer("optimal").options}
    assert options["metric"].choices == ("ncp", "lm", "discernibility", "height")
    assert options["suppressed_rows"].default == "remove"


def test_unknown_algorithm_and_option_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"did you mean 'samarati'\?"):
        get_anonymizer("samarti")
    problem = small_problem()
    arguments = {
        "quasi_identifiers": problem.quasi_identifiers,
        "hierarchies": problem.hierarchies,
        "identifiers": ["pid"],
        "insensitive": ["s"],
    }
    with pytest.raises(ConfigurationError, match="has no option"):
        anonymize(problem.frame, models=[KAnonymity(2)], depth=3, **arguments)
    with pytest.raises(ConfigurationError, match="metric must be one of"):
        anonymize(problem.frame, models=[KAnonymity(2)], metric="entropy", **arguments)
    with pytest.raises(ConfigurationError, match="already registered"):
        register_anonymizer("optimal", lambda: get_anonymizer("optimal"))


@dataclass(frozen=True)
class _Cheat:
    """An anonymizer that publishes the raw table: verify must refuse it."""

    name: str = "cheat"
    options: tuple = ()

    def run(self, request, **options):  # type: ignore[no-untyped-def]
        table = request.table.drop(columns=list(request.roles.identifiers))
        utility = UtilityMetrics(ncp=0.0, lm=0.0, discernibility=0.0, c_avg=1.0, height=0, precision=1.0, ileft=1.0)
        return AnonymizedTable(table, np.ones(len(table), dtype=bool), 0, utility)


def test_an_anonymizer_cannot_skip_the_verification() -> None:
    register_anonymizer("cheat", _Cheat)
    try:
        problem = small_problem()
        with pytest.raises(VerificationError, match="re-check"):
            anonymize(problem.frame, algorithm="cheat", quasi_identifiers=problem.quasi_identifiers,
                      models=[KAnonymity(3)], identifiers=["pid"], insensitive=["s"])  # fmt: skip
    finally:
        del _REGISTRY["cheat"]


def test_verify_checks_the_row_accounting() -> None:
    problem = small_problem()
    request = _request(
        problem.frame, quasi_identifiers=["q0"], models=[KAnonymity(1)], suppression_limit=0.5, hierarchies=None,
        sensitive_attributes=None, identifiers=["pid"], seed=0, progress=None, insensitive=["q1", "s"],
    )  # fmt: skip
    table = problem.frame.drop(columns=["pid"]).iloc[:-2]
    utility = UtilityMetrics(ncp=0.0, lm=0.0, discernibility=0.0, c_avg=1.0, height=0, precision=1.0, ileft=1.0)
    with pytest.raises(VerificationError, match="rows in"):
        verify(request, AnonymizedTable(table, np.ones(len(table), dtype=bool), 1, utility), algorithm="x", seconds=0)


MODEL_SETS = st.lists(
    st.sampled_from(
        [
            KAnonymity(2),
            KAnonymity(3),
            DistinctLDiversity("s", 2),
            EntropyLDiversity("s", 1.5),
            RecursiveCLDiversity("s", 3, 2),
            TCloseness("s", 0.4),
            PersonalizedLeakage("s", bound=0.75),
        ]
    ),
    min_size=1,
    max_size=3,
    unique=True,
)


@settings(max_examples=30, deadline=None)
@given(problems(max_rows=30), MODEL_SETS, st.sampled_from([0.0, 0.1, 0.3]), st.sampled_from(FULL_DOMAIN))
def test_full_domain_output_satisfies_its_models_or_raises(
    problem: Problem, models: list[PrivacyModel], limit: float, name: str
) -> None:
    try:
        result = anonymize(
            problem.frame, algorithm=name, quasi_identifiers=problem.quasi_identifiers,
            hierarchies=problem.hierarchies, models=models, identifiers=["pid"], suppression_limit=limit,
        )  # fmt: skip
    except (InfeasibleAnonymizationError, ConfigurationError):
        return
    check_output(problem, result, models)
    assert result.suppressed <= int(limit * len(problem.frame) + 1e-9)
    assert list(result.details.recoding_levels()) == problem.quasi_identifiers  # one level per QI


# A model defined here, and nowhere else: it must work everywhere models are used.
@dataclass(frozen=True)
class DistinctValues(PrivacyModel):
    """Every class holds at least ``m`` distinct values of ``column`` (a column that is not sensitive)."""

    column: str
    m: int

    config_name: ClassVar[str] = "distinct_values"
    family: ClassVar[str] = "distinct values"
    report_key: ClassVar[str] = "distinct_values"
    monotonic_with_suppression: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"{self.m} distinct {self.column!r} per class"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def minimum_class_size(self) -> int:
        return self.m

    @property
    def threshold(self) -> float:
        return float(self.m)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        return distinct_l_per_class(classes.sensitive(self.column)) < self.m

    def observed(self, classes: EquivalenceClasses) -> float:
        return float(distinct_l_per_class(classes.sensitive(self.column)).min())


@dataclass(frozen=True)
class MaxClassSize(PrivacyModel):
    """No class larger than ``size`` (not monotone: generalizing merges classes)."""

    size: int

    monotonic_with_generalization: ClassVar[bool] = False
    report_key: ClassVar[str] = "max_class"
    higher_is_better: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"classes of at most {self.size}"

    @property
    def threshold(self) -> float:
        return float(self.size)

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        return classes.sizes > self.size

    def observed(self, classes: EquivalenceClasses) -> float:
        return float(classes.sizes.max())


def test_a_model_defined_outside_the_package_works_in_measure_anonymize_and_diagnosis() -> None:
    problem = small_problem(rows=40)
    frame = problem.frame.assign(x=np.arange(40) % 5)
    toy, cap = DistinctValues("x", 2), MaxClassSize(20)
    # measure
    raw = EquivalenceClasses.from_frame(frame, problem.quasi_identifiers)
    assert not toy.evaluate(raw).passed
    assert "needs ≥ 2" in toy.describe_gap(toy.observed(raw))
    # anonymize: its column is carried into the snapshot, its report key into the measures
    result = anonymize(frame, quasi_identifiers=problem.quasi_identifiers, hierarchies=problem.hierarchies,
                       models=[toy, cap, KAnonymity(2)], identifiers=["pid"],
                       insensitive=other_columns(frame, [toy, cap], problem.quasi_identifiers, ["pid"]))  # fmt: skip
    assert result.passed and result.measures["distinct_values"] >= 2 and result.measures["max_class"] <= 20
    # check: re-measured on the published table
    published = EquivalenceClasses.from_frame(result.table, problem.quasi_identifiers)
    assert toy.evaluate(published).passed and cap.evaluate(published).passed
    # diagnosis: borders of the monotone one; the other is refused
    borders = find_borders(frame, quasi_identifiers=problem.quasi_identifiers, target=toy)
    assert borders.model == "distinct values" and borders.target == str(toy)
    with pytest.raises(ConfigurationError, match="not monotone"):
        find_borders(frame, quasi_identifiers=problem.quasi_identifiers, target=cap)
    with pytest.raises(UnknownColumnError, match="'nope'"):
        anonymize(frame, quasi_identifiers=["q0"], hierarchies=problem.hierarchies, models=[DistinctValues("nope", 2)])


MODEL_CLASSES = ("PrivacyModel", "KAnonymity", "LDiversity", "DistinctLDiversity", "FrequencyLDiversity",
                 "EntropyLDiversity", "RecursiveCLDiversity", "TCloseness", "PersonalizedLeakage")  # fmt: skip


def test_no_isinstance_on_a_model_type_outside_the_models() -> None:
    pattern = re.compile(r"isinstance\([^()]*\b(" + "|".join(MODEL_CLASSES) + r")\b")
    allowed = {"core/anonymize/registry.py", "core/diagnosis/criteria.py"}  # "is it a PrivacyModel at all?"
    found = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("core/models/"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = pattern.search(line)
            if match and not (match.group(1) == "PrivacyModel" and relative in allowed):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "branch on model attributes, not types:\n" + "\n".join(found)


def test_no_table_keyed_on_a_model_type() -> None:
    offenders = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "type(model)]" in path.read_text(encoding="utf-8") or "type(m)]" in path.read_text(encoding="utf-8")
    ]
    assert not offenders


def test_verify_groups_by_given_codes_only_when_they_spell_the_published_values() -> None:
    problem = small_problem()
    request = _request(
        problem.frame, quasi_identifiers=["q0"], models=[KAnonymity(1)], suppression_limit=0.0, hierarchies=None,
        sensitive_attributes=None, identifiers=["pid"], seed=0, progress=None, insensitive=["q1", "s"],
    )  # fmt: skip
    table = problem.frame.drop(columns=["pid"]).assign(q0=lambda f: f["q0"].astype(str).astype(object))
    codes, labels = pd.factorize(table["q0"])
    labels = np.asarray(labels, dtype=object)
    utility = UtilityMetrics(ncp=0.0, lm=0.0, discernibility=0.0, c_avg=1.0, height=0, precision=1.0, ileft=1.0)
    released = np.ones(len(table), dtype=bool)
    good = AnonymizedTable(table, released, 0, utility, qi_codes={"q0": (codes, labels)})
    assert verify(request, good, algorithm="x", seconds=0).measures["k"] >= 1
    shifted = AnonymizedTable(table, released, 0, utility, qi_codes={"q0": ((codes + 1) % len(labels), labels)})
    with pytest.raises(VerificationError, match="do not match"):
        verify(request, shifted, algorithm="x", seconds=0)
    merged = np.array(["same"] * len(labels), dtype=object)
    with pytest.raises(VerificationError, match="do not match"):
        verify(request, AnonymizedTable(table, released, 0, utility, qi_codes={"q0": (codes, merged)}), algorithm="x",
               seconds=0)  # fmt: skip


def test_verify_checks_categorical_columns_by_code_and_publishes_object_labels() -> None:
    problem = small_problem()
    request = _request(
        problem.frame, quasi_identifiers=["q0"], models=[KAnonymity(1)], suppression_limit=0.0, hierarchies=None,
        sensitive_attributes=None, identifiers=["pid"], seed=0, progress=None, insensitive=["q1", "s"],
    )  # fmt: skip
    plain = problem.frame.drop(columns=["pid"]).assign(q0=lambda f: f["q0"].astype(str).astype(object))
    codes, labels = pd.factorize(plain["q0"])
    labels = np.asarray(labels, dtype=object)
    categorical = plain.assign(q0=pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object)))
    utility = UtilityMetrics(ncp=0.0, lm=0.0, discernibility=0.0, c_avg=1.0, height=0, precision=1.0, ileft=1.0)
    released = np.ones(len(plain), dtype=bool)

    def output(table: pd.DataFrame, row_codes: np.ndarray, names: np.ndarray) -> AnonymizedTable:
        return AnonymizedTable(table, released, 0, utility, qi_codes={"q0": (row_codes, names)})

    result = verify(request, output(categorical, codes, labels), algorithm="x", seconds=0)
    assert result.table["q0"].dtype == object
    assert result.table["q0"].tolist() == plain["q0"].tolist()
    shifted = (codes + 1) % len(labels)
    renamed = np.array([f"{label}!" for label in labels], dtype=object)
    reordered = labels[::-1].copy()
    for wrong, names in [(shifted, labels), (codes, renamed), (codes, reordered)]:
        with pytest.raises(VerificationError, match="do not match"):
            verify(request, output(categorical, wrong, names), algorithm="x", seconds=0)
    missing = categorical.assign(q0=categorical["q0"].cat.set_categories(labels[1:]))  # rows of labels[0] become NaN
    with pytest.raises(VerificationError, match="do not match"):
        verify(request, output(missing, codes, labels), algorithm="x", seconds=0)
