"""The four expectations on pandas: worked examples, eager validation, Data Docs sentences, outcomes."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from great_expectations.expectations.registry import get_expectation_impl

from privacy_plugins.errors import PrivacyRiskWarning
from privacy_plugins.integrations.gx import (
    ExpectTableToBeKAnonymous,
    ExpectTableToBeLDiverse,
    ExpectTableToBeTClose,
    ExpectTableToSatisfyPersonalizedLeakageBound,
    outcome,
)

# Song et al. Table 3 (2-anonymous; rows 4-5 share pneumonia).
SONG = pd.DataFrame(
    {
        "age": ["[5-10]"] * 3 + ["[11-20]"] * 2,
        "zipcode": ["[10001-20000]"] * 3 + ["[20001-25000]"] * 2,
        "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
    }
)
# Mirakabad thesis Table 1.4 (2-anonymous, second class all HIV) and the raw Table 1.2.
MIRAKABAD_14 = pd.DataFrame(
    {
        "age": ["[21-22]", "[21-22]", "[23-24]", "[23-24]"],
        "gender": ["*", "*", "Male", "Male"],
        "zip": ["1765*", "1765*", "1766*", "1766*"],
        "disease": ["Cancer", "Flu", "HIV", "HIV"],
    }
)
MIRAKABAD_12 = pd.DataFrame(
    {
        "age": [21, 22, 23, 24],
        "gender": ["Female", "Male", "Male", "Male"],
        "zip": ["17651", "17652", "17661", "17662"],
        "disease": ["Cancer", "Flu", "HIV", "HIV"],
    }
)
# Nagendra & Aparna Table 3 (k = 4; the second class is all HIV: homogeneity attack).
NAGENDRA = pd.DataFrame(
    {
        "zip": ["476**"] * 4 + ["4790*"] * 4,
        "age": ["2*"] * 4 + [">=40"] * 4,
        "disease": ["Heart", "Flu", "Cancer", "Flu"] + ["HIV"] * 4,
    }
)


def test_importing_registers_the_four_types() -> None:
    for name, cls in [
        ("expect_table_to_be_k_anonymous", ExpectTableToBeKAnonymous),
        ("expect_table_to_be_l_diverse", ExpectTableToBeLDiverse),
        ("expect_table_to_be_t_close", ExpectTableToBeTClose),
        ("expect_table_to_satisfy_personalized_leakage_bound", ExpectTableToSatisfyPersonalizedLeakageBound),
    ]:
        assert cls.expectation_type == name
        assert get_expectation_impl(name) is cls


def test_song_table_3(pandas_batch) -> None:
    batch = pandas_batch(SONG)
    qis = ["age", "zipcode"]
    k = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=qis, k=2))
    assert k.success and k.result["observed_value"] == 2
    l_result = batch.validate(ExpectTableToBeLDiverse(quasi_identifiers=qis, sensitive_attribute="disease", l=2))
    assert not l_result.success and l_result.result["observed_value"] == 1
    leak = batch.validate(
        ExpectTableToSatisfyPersonalizedLeakageBound(quasi_identifiers=qis, sensitive_attribute="disease", bound=0.5)
    )
    details = leak.result["details"]
    assert not leak.success and leak.result["observed_value"] == 1.0
    assert details["leakage_violations"] == 2  # rows 4 and 5: Pleak = 1 > 0.5
    assert details["violations"]["classes"] == 1 and details["violations"]["records"] == 2
    assert details["mean_leakage"] == pytest.approx((3 * (1 / 3) + 2 * 1.0) / 5)


def test_song_per_record_bounds(pandas_batch) -> None:
    # Rows 1-3 leak 1/3; a bound column that allows that for them and 1 for rows 4-5 passes.
    table = SONG.assign(pleak=[0.34, 0.5, 0.4, 1.0, 1.0])
    result = pandas_batch(table).validate(
        ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=["age", "zipcode"], sensitive_attribute="disease", bound_column="pleak"
        )
    )
    assert result.success, result.result
    assert result.result["details"]["threshold"] is None  # per-record bounds: no single threshold


def test_mirakabad_tables(pandas_batch) -> None:
    qis = ["age", "gender", "zip"]
    published = pandas_batch(MIRAKABAD_14)
    assert published.validate(ExpectTableToBeKAnonymous(quasi_identifiers=qis, k=2)).success
    diverse = published.validate(ExpectTableToBeLDiverse(quasi_identifiers=qis, sensitive_attribute="disease", l=2))
    assert not diverse.success and diverse.result["observed_value"] == 1
    raw = pandas_batch(MIRAKABAD_12)
    for subset in (["zip"], ["age", "zip"], ["gender", "zip"], qis):
        result = raw.validate(ExpectTableToBeKAnonymous(quasi_identifiers=subset, k=2))
        assert result.result["observed_value"] == 1 and not result.success


def test_nagendra_homogeneity(pandas_batch) -> None:
    batch = pandas_batch(NAGENDRA)
    assert batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["zip", "age"], k=4)).success
    for variant in ("distinct", "frequency", "entropy"):
        result = batch.validate(
            ExpectTableToBeLDiverse(
                quasi_identifiers=["zip", "age"], sensitive_attribute="disease", l=2, l_variant=variant
            )
        )
        assert not result.success and result.result["observed_value"] == pytest.approx(1.0)
    recursive = batch.validate(
        ExpectTableToBeLDiverse(
            quasi_identifiers=["zip", "age"], sensitive_attribute="disease", l=2, l_variant="recursive", c=3
        )
    )
    assert not recursive.success and recursive.result["observed_value"] is None  # c* = inf: one value only


def test_k_with_suppression(pandas_batch) -> None:
    table = pd.DataFrame({"q": ["a"] * 5 + ["b"] * 5 + ["c"]})  # one sample unique out of 11 rows
    batch = pandas_batch(table)
    strict = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q"], k=5))
    assert not strict.success and strict.result["observed_value"] == 1
    loose = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q"], k=5, suppression_limit=0.1))
    assert loose.success and loose.result["observed_value"] == 5
    details = loose.result["details"]
    assert details["k_before_suppression"] == 1
    assert details["suppression"] == {"suppression_limit": 0.1, "budget_rows": 1, "k": 5, "suppressed_rows": 1}
    too_little = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q"], k=5, suppression_limit=0.05))
    assert not too_little.success  # ⌊0.05 · 11⌋ = 0 rows


def test_missing_values_form_their_own_class_and_value(pandas_batch) -> None:
    table = pd.DataFrame({"q": ["a", "a", None, None], "s": ["x", None, None, None]})
    batch = pandas_batch(table)
    k = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["q"], k=2))
    assert k.success and k.result["details"]["classes"] == 2
    distinct = batch.validate(ExpectTableToBeLDiverse(quasi_identifiers=["q"], sensitive_attribute="s", l=2))
    assert distinct.result["observed_value"] == 1  # class q=NULL holds one value: NULL
    assert distinct.result["details"]["violations"]["classes"] == 1


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=["a"], k=0), "k must be"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=["a"], k=5.5), "integer"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=["a"], k="5"), "integer"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=[], k=5), "at least one"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers="age", k=5), "list"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=["a", "a"], k=5), "more than once"),
        (lambda: ExpectTableToBeKAnonymous(quasi_identifiers=["a"], k=5, suppression_limit=1.5), "suppression_limit"),
        (lambda: ExpectTableToBeLDiverse(quasi_identifiers=["a"], sensitive_attribute="a", l=2), "two roles"),
        (lambda: ExpectTableToBeLDiverse(quasi_identifiers=["a"], sensitive_attribute="s", l=0.5), "l must be"),
        (
            lambda: ExpectTableToBeLDiverse(quasi_identifiers=["a"], sensitive_attribute="s", l=2, l_variant="max"),
            "variant",
        ),
        (
            lambda: ExpectTableToBeLDiverse(
                quasi_identifiers=["a"], sensitive_attribute="s", l=2, l_variant="recursive"
            ),
            "needs c",
        ),
        (lambda: ExpectTableToBeLDiverse(quasi_identifiers=["a"], sensitive_attribute="s", l=2, c=3), "c is"),
        (
            lambda: ExpectTableToBeLDiverse(
                quasi_identifiers=["a"], sensitive_attribute="s", l=2.5, l_variant="recursive", c=3
            ),
            "integer",
        ),
        (lambda: ExpectTableToBeTClose(quasi_identifiers=["a"], sensitive_attribute="s", t=1.5), "t must be"),
        (
            lambda: ExpectTableToBeTClose(quasi_identifiers=["a"], sensitive_attribute="s", t=0.2, t_distance="hier"),
            "distance",
        ),
        (
            lambda: ExpectTableToSatisfyPersonalizedLeakageBound(quasi_identifiers=["a"], sensitive_attribute="s"),
            "needs a bound, a bound_column, or both",
        ),
        (
            lambda: ExpectTableToSatisfyPersonalizedLeakageBound(
                quasi_identifiers=["a"], sensitive_attribute="s", bound=0
            ),
            "bound must be",
        ),
        (
            lambda: ExpectTableToSatisfyPersonalizedLeakageBound(
                quasi_identifiers=["a"], sensitive_attribute="s", bound_column="a"
            ),
            "bound_column",
        ),
    ],
)
def test_bad_configuration_is_rejected_when_built(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_data_docs_sentences(pandas_batch) -> None:
    table = pd.DataFrame(
        {"age": [30] * 7, "zip": ["47907"] * 7, "sex": ["F"] * 7, "disease": ["flu", "hiv"] * 3 + ["a"]}
    )
    batch = pandas_batch(table)
    cases = [
        (
            ExpectTableToBeKAnonymous(quasi_identifiers=["age", "zip", "sex"], k=5),
            "Table is 5-anonymous on age, zip, sex (observed k = 7).",
        ),
        (
            ExpectTableToBeLDiverse(quasi_identifiers=["age"], sensitive_attribute="disease", l=2),
            "Table is distinct 2-diverse for disease on age (observed l = 3).",
        ),
        (
            ExpectTableToBeLDiverse(
                quasi_identifiers=["age"], sensitive_attribute="disease", l=2, l_variant="recursive", c=2
            ),
            "Table is recursive (2, 2)-diverse for disease on age (observed c* = 0.75).",
        ),
        (
            ExpectTableToBeTClose(quasi_identifiers=["age"], sensitive_attribute="disease", t=0.2),
            "Table is 0.2-close for disease (auto distance) on age (observed t = 0).",
        ),
        (
            ExpectTableToSatisfyPersonalizedLeakageBound(
                quasi_identifiers=["age"], sensitive_attribute="disease", bound=0.5
            ),
            "Every record's leakage of disease is at most 0.5 on age (observed max leakage = 0.4286).",
        ),
    ]
    for expectation, sentence in cases:
        result = batch.validate(expectation)
        (content,) = type(expectation)._prescriptive_renderer(result=result)
        template = content.string_template
        text = template["template"]
        for name, value in sorted(template["params"].items(), key=lambda item: -len(item[0])):
            text = text.replace(f"${name}", str(value))
        assert text == sentence
        assert (
            "(observed"
            not in type(expectation)
            ._prescriptive_renderer(configuration=expectation.configuration)[0]
            .string_template["template"]
        )
        expectation.render()  # the atomic renderer GX stores in suites
        assert expectation.rendered_content[0].value.template.startswith(("Table is", "Every record"))


def test_observed_value_cell(pandas_batch) -> None:
    result = pandas_batch(NAGENDRA.iloc[:5]).validate(ExpectTableToBeKAnonymous(quasi_identifiers=["zip"], k=4))
    cell = ExpectTableToBeKAnonymous._diagnostic_observed_value_renderer(result=result)
    assert cell == "k = 1; 1 classes / 1 records in violation"


@pytest.mark.parametrize(("severity", "level"), [("critical", "error"), ("warning", "warn"), ("info", "info")])
def test_outcome_maps_severity_to_failure_level(pandas_batch, severity: str, level: str) -> None:
    expectation = ExpectTableToBeKAnonymous(quasi_identifiers=["zip"], k=5, severity=severity)
    verdict = outcome(pandas_batch(NAGENDRA).validate(expectation))
    assert (verdict.status, verdict.level, verdict.observed) == ("failed", level, 4)
    assert verdict.blocks_release == (level == "error")
    json.dumps(verdict.to_dict())


def test_include_values_is_an_explicit_opt_in(pandas_batch) -> None:
    table = pd.DataFrame({"zip": ["47907"] * 4 + ["12345"], "disease": ["flu", "hiv", "flu", "hiv", "cancer"]})
    batch = pandas_batch(table)
    hidden = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["zip"], k=2), result_format="COMPLETE")
    assert hidden.result["details"]["violations"]["examples"] is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shown = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["zip"], k=2, include_values=True))
    assert shown.result["details"]["violations"]["examples"] == [{"zip": "12345"}]
    assert any(issubclass(w.category, PrivacyRiskWarning) for w in caught)


def test_a_bound_column_with_a_default_bound_is_accepted() -> None:
    """As in the core model: ``bound`` is the default for records whose ``bound_column`` is empty."""
    expectation = ExpectTableToSatisfyPersonalizedLeakageBound(
        quasi_identifiers=["a"], sensitive_attribute="s", bound=0.5, bound_column="b"
    )
    assert expectation.bound == 0.5 and expectation.bound_column == "b"
