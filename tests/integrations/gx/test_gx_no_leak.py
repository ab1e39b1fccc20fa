"""No result format puts the records at risk into results, JSON, Data Docs or checkpoint output.

A unique record is planted: it forms a class of one, so every expectation flags it.
Its values must appear in no serialized form of the result, whatever the result
format asks for. The one exception is the explicit opt-in ``include_values=True``,
and even then only its QI values appear, never its sensitive value.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

pytest.importorskip("great_expectations")

import great_expectations as gx
from great_expectations.render.renderer import ValidationResultsPageRenderer
from great_expectations.render.view import DefaultJinjaPageView

import privacy_plugins as pp
from privacy_plugins.integrations.gx import (
    ExpectTableToBeKAnonymous,
    ExpectTableToBeLDiverse,
    ExpectTableToBeTClose,
    ExpectTableToSatisfyPersonalizedLeakageBound,
    outcomes,
)

QIS = ["age", "sex", "zip", "education", "marital_status"]
PLANTED = {
    "person_id": "PLANTED-ID-4242",
    "age": 40,
    "sex": "Female",
    "zip": "QZ9X7",
    "education": "Planted-Doctorate",
    "marital_status": "Planted-Status",
    "occupation": "Planted-Occupation",
    "income": 42_4242,
    "disease": "planted-xenoplague",
}
MARKERS = ["PLANTED-ID-4242", "QZ9X7", "Planted-Doctorate", "Planted-Status", "planted-xenoplague", "Planted-Occ"]
RESULT_FORMATS = [
    "BOOLEAN_ONLY",
    "BASIC",
    "SUMMARY",
    "COMPLETE",
    {
        "result_format": "COMPLETE",
        "partial_unexpected_count": 1000,
        "include_unexpected_rows": True,
        "unexpected_index_column_names": ["person_id"],
        "return_unexpected_index_query": True,
    },
]


@pytest.fixture
def planted_table():
    frame = pp.generate_census(400, seed=11)
    frame.loc[len(frame)] = PLANTED
    return frame


def suite_expectations(include_values: bool = False) -> list:
    return [
        ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2, include_values=include_values),
        ExpectTableToBeKAnonymous(quasi_identifiers=QIS, k=2, suppression_limit=0.5, include_values=include_values),
        ExpectTableToBeLDiverse(
            quasi_identifiers=QIS, sensitive_attribute="disease", l=2, include_values=include_values
        ),
        ExpectTableToBeLDiverse(
            quasi_identifiers=QIS,
            sensitive_attribute="disease",
            l=2,
            l_variant="recursive",
            c=2,
            include_values=include_values,
        ),
        ExpectTableToBeTClose(
            quasi_identifiers=QIS, sensitive_attribute="disease", t=0.1, include_values=include_values
        ),
        ExpectTableToSatisfyPersonalizedLeakageBound(
            quasi_identifiers=QIS, sensitive_attribute="disease", bound=0.5, include_values=include_values
        ),
    ]


def serialized(result) -> str:
    """Every serialized form of a validation result: describe_dict, JSON, str and the Data Docs HTML."""
    forms = [json.dumps(result.describe_dict()), json.dumps(result.to_json_dict()), str(result)]
    if hasattr(result, "results"):
        document = ValidationResultsPageRenderer().render(result)
        forms.append(DefaultJinjaPageView().render(document))
    return "\n".join(forms)


@pytest.mark.parametrize("result_format", RESULT_FORMATS, ids=lambda f: f if isinstance(f, str) else "COMPLETE+all")
def test_planted_record_never_appears(planted_table, pandas_batch, result_format) -> None:
    batch = pandas_batch(planted_table)
    for expectation in suite_expectations():
        result = batch.validate(expectation, result_format=result_format)
        assert not result.success
        text = serialized(result)
        assert not [marker for marker in MARKERS if marker in text], type(expectation).__name__
    suite_result = batch.validate(gx.ExpectationSuite(name="privacy", expectations=suite_expectations()))
    text = serialized(suite_result)
    assert not [marker for marker in MARKERS if marker in text]
    page = " ".join(re.sub(r"<[^>]+>", " ", text).split())  # the Data Docs page as plain text
    assert "Table is 2 -anonymous on age, sex, zip, education, marital_status ." in page
    assert "k = 1;" in page  # the observed-value cell


def test_checkpoint_output_has_no_planted_values(planted_table, context) -> None:
    source = context.data_sources.add_pandas("pandas").add_dataframe_asset("table")
    definition = source.add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add(gx.ExpectationSuite(name="privacy", expectations=suite_expectations()))
    validation = context.validation_definitions.add(gx.ValidationDefinition(name="v", data=definition, suite=suite))
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(name="c", validation_definitions=[validation], result_format={"result_format": "COMPLETE"})
    )
    result = checkpoint.run(batch_parameters={"dataframe": planted_table})
    text = json.dumps(result.describe_dict()) + json.dumps([o.to_dict() for o in outcomes(result)])
    assert not result.success
    assert not [marker for marker in MARKERS if marker in text]


def test_opt_in_shows_only_quasi_identifiers(pandas_batch) -> None:
    frame = pp.generate_census(30, seed=1).assign(age=30, zip="47907", education="HS-grad", marital_status="Married")
    frame.loc[len(frame)] = PLANTED  # the only class below k = 2
    batch = pandas_batch(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.errors.PrivacyRiskWarning)
        result = batch.validate(suite_expectations(include_values=True)[0], result_format="COMPLETE")
    text = serialized(result)
    assert "QZ9X7" in text  # the QI values of the violating class: asked for explicitly
    assert "planted-xenoplague" not in text and "PLANTED-ID-4242" not in text
