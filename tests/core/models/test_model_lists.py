"""Requirements as a list of models: the registry's list form, its errors, and the keyword sugar expanding to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import get_anonymizer, tags_of
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import (
    MODEL_REGISTRY,
    DistinctLDiversity,
    KAnonymity,
    PrivacyModel,
    check_name,
    from_config,
    models_from_entries,
    register_model,
    requirement_models,
)
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.errors import ConfigurationError


@dataclass(frozen=True)
class _ClassCount(PrivacyModel):
    """A toy model defined here: at least ``classes`` equivalence classes."""

    classes: int
    config_name: ClassVar[str] = "toy_class_count"
    report_key: ClassVar[str] = "classes"

    def violating_classes(self, classes: EquivalenceClasses) -> np.ndarray:
        return np.full(classes.n_classes, classes.n_classes < self.classes)

    def observed(self, classes: EquivalenceClasses) -> float:
        return float(classes.n_classes)

    @property
    def threshold(self) -> float:
        return float(self.classes)


def test_a_list_entry_is_name_to_parameters() -> None:
    models = models_from_entries(
        [{"k_anonymity": {"k": 5}}, {"distinct_l_diversity": {"sensitive_attribute": "disease", "l": 2}}]
    )
    assert models == [KAnonymity(5), DistinctLDiversity("disease", 2)]
    assert [check_name(m) for m in models] == ["k_anonymity", "distinct_l_diversity_disease"]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            [{"k_anonimity": {"k": 5}}],
            r"^requirements\[0\]: unknown privacy model 'k_anonimity'; did you mean 'k_anonymity'\?",
        ),
        ([{"k_anonymity": {"kk": 5}}], r"^requirements\[0\]: k_anonymity: unknown parameter 'kk'; did you mean 'k'\?"),
        ([{"k_anonymity": {}}], r"^requirements\[0\]: k_anonymity: missing parameter\(s\) \['k'\]"),
        ([{"k_anonymity": {"k": 0}}], r"^requirements\[0\]: k_anonymity: k must be"),
        ([{"k_anonymity": {"k": "five"}}], r"^requirements\[0\]: k_anonymity: "),
        ([{"k_anonymity": 5}], r"^requirements\[0\] \(k_anonymity\): the parameters must be a mapping"),
        ([{"k_anonymity": {"k": 5}, "t_closeness": {}}], r"^requirements\[0\] must be one mapping"),
        ([{"k_anonymity": {"k": 5}}, {"k_anonymity": {"k": 9}}], "share the check name 'k_anonymity'"),
        ({"k_anonymity": {"k": 5}}, r"^requirements must be a list of models"),
        ([{"no_such_module_xyz:Model": {}}], r"cannot import module 'no_such_module_xyz'"),
        ([{"privacy_plugins.core.models:Nope": {}}], r"has no 'Nope'"),
        ([{"pandas:DataFrame": {}}], r"register_model needs a PrivacyModel subclass"),
    ],
)
def test_a_bad_entry_is_one_line_naming_it(entries: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        models_from_entries(entries)
    assert "\n" not in str(caught.value)


def test_keyword_sugar_and_list_give_the_same_models() -> None:
    sugar = requirement_models(sensitive_attributes=["disease", "income"], k=5, l=2, t=0.3, bound=0.5)
    listed = models_from_entries(
        [
            {"k_anonymity": {"k": 5}},
            {"distinct_l_diversity": {"sensitive_attribute": "disease", "l": 2}},
            {"t_closeness": {"sensitive_attribute": "disease", "t": 0.3}},
            {"personalized_leakage": {"sensitive_attribute": "disease", "bound": 0.5}},
            {"distinct_l_diversity": {"sensitive_attribute": "income", "l": 2}},
            {"t_closeness": {"sensitive_attribute": "income", "t": 0.3}},
            {"personalized_leakage": {"sensitive_attribute": "income", "bound": 0.5}},
        ]
    )
    assert sugar == listed


def test_register_model_and_every_kind() -> None:
    register_model(_ClassCount)
    try:
        assert from_config("toy_class_count", classes=3) == _ClassCount(3)
        assert register_model(_ClassCount) is _ClassCount  # the same class again is fine
        # An anonymizer that promises every kind accepts a custom one; one that promises some refuses it.
        assert tags_of(get_anonymizer("optimal")).supported_models.refusal([_ClassCount(3)]) is None
        assert "cannot promise toy_class_count" in str(
            tags_of(get_anonymizer("dpp2ga")).supported_models.refusal([_ClassCount(3)])
        )

        @dataclass(frozen=True)
        class Impostor(_ClassCount):
            pass

        with pytest.raises(ConfigurationError, match="'toy_class_count' is taken by"):
            register_model(Impostor)
    finally:
        MODEL_REGISTRY.pop("toy_class_count", None)


def test_measure_models_keys_results_by_check_name() -> None:
    frame = pd.DataFrame({"zip": ["1", "1", "2", "2", "2"], "disease": ["a", "b", "a", "a", "a"]})
    report = measure(frame, quasi_identifiers=["zip"], sensitive_attributes=["disease"], k=2, models=[_ClassCount(3)])
    assert list(report.results) == ["k_anonymity", "toy_class_count"]
    assert report.results["k_anonymity"].passed and not report.results["toy_class_count"].passed
    assert report.to_dict()["models"]["toy_class_count"]["observed"] == 2.0
    with pytest.raises(ConfigurationError, match="not among the sensitive attributes"):
        measure(frame, quasi_identifiers=["zip"], models=[DistinctLDiversity("disease", 2)])


_FRAMES = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from("abc"), min_size=n, max_size=n),
        st.lists(st.sampled_from("xy"), min_size=n, max_size=n),
        st.lists(st.sampled_from(["flu", "hiv", "cold", "cancer"]), min_size=n, max_size=n),
        st.lists(st.integers(min_value=1, max_value=100), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(
    columns=_FRAMES,
    k=st.one_of(st.none(), st.integers(min_value=1, max_value=3)),
    l=st.one_of(st.none(), st.sampled_from([1.0, 1.5, 2.0, 3.0])),
    c=st.one_of(st.none(), st.sampled_from([0.5, 2.0])),
    t=st.one_of(st.none(), st.sampled_from([0.0, 0.2, 1.0])),
    bound=st.one_of(st.none(), st.sampled_from([0.3, 1.0])),
    t_distance=st.sampled_from(["auto", "equal", "ordered"]),
)
def test_keyword_form_equals_its_expanded_models(columns, k, l, c, t, bound, t_distance) -> None:  # type: ignore[no-untyped-def]
    """``measure(k=…, l=…)`` judges exactly the models its keywords expand to: identical results."""
    a, b, disease, score = columns
    frame = pd.DataFrame({"a": a, "b": b, "disease": disease, "score": score})
    if k is not None and k > len(frame):
        k = len(frame)
    if c is not None and (l is None or not float(l).is_integer()):
        c = None
    roles = {"quasi_identifiers": ["a", "b"], "sensitive_attributes": ["disease", "score"]}
    keywords = measure(frame, **roles, k=k, l=l, c=c, t=t, bound=bound, t_distance=t_distance)
    expanded = requirement_models(
        sensitive_attributes=["disease", "score"],
        k=k,
        l=l,
        l_variant="recursive" if c is not None else "distinct",
        c=c,
        t=t,
        t_distance=t_distance,
        bound=bound,
    )
    as_models = measure(frame, **roles, models=expanded)
    assert keywords.results == as_models.results
    assert list(keywords.results) == [check_name(m) for m in expanded]


@dataclass(frozen=True)
class _AnyOf(_ClassCount):
    """A toy model with a list parameter."""

    names: tuple[str, ...] = ()
    config_name: ClassVar[str] = "toy_any_of"


def test_a_list_parameter_arrives_as_a_tuple_so_the_model_hashes() -> None:
    register_model(_AnyOf)
    try:
        (model,) = models_from_entries([{"toy_any_of": {"classes": 2, "names": ["a", "b"]}}])
        assert model == _AnyOf(2, ("a", "b")) and hash(model) == hash(_AnyOf(2, ("a", "b")))
    finally:
        MODEL_REGISTRY.pop("toy_any_of", None)
