"""k for a subpopulation: the privacy expectations take GX's ``row_condition``; they carry ``library_metadata``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from great_expectations.expectations.row_conditions import Column

from privacy_plugins.integrations.gx import ExpectTableToBeKAnonymous, ExpectTableToBeLDiverse

# Women: two classes of two (k = 2, each with two diseases); men: one class of one (k = 1).
PEOPLE = pd.DataFrame(
    {
        "sex": ["F", "F", "F", "F", "M"],
        "age": ["20-29", "20-29", "30-39", "30-39", "40-49"],
        "disease": ["flu", "asthma", "flu", "asthma", "flu"],
    }
)


@pytest.mark.parametrize("engine", ["pandas", "sqlite"])
def test_k_and_l_hold_for_the_subpopulation_the_row_condition_selects(
    engine: str, pandas_batch: Callable[[pd.DataFrame], Any], sql_batch: Callable[[pd.DataFrame, str], Any]
) -> None:
    batch = pandas_batch(PEOPLE) if engine == "pandas" else sql_batch(PEOPLE, engine)
    women = Column("sex") == "F"
    whole = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["age"], k=2))
    subpopulation = batch.validate(ExpectTableToBeKAnonymous(quasi_identifiers=["age"], k=2, row_condition=women))
    diverse = batch.validate(
        ExpectTableToBeLDiverse(quasi_identifiers=["age"], sensitive_attribute="disease", l=2, row_condition=women)
    )
    assert (whole.success, whole.result["observed_value"]) == (False, 1)
    assert (subpopulation.success, subpopulation.result["observed_value"]) == (True, 2)
    assert subpopulation.result["details"]["records"] == 4 and diverse.success
    # the condition is part of the stored configuration (suites keep it)
    stored = subpopulation.expectation_config.to_json_dict()["kwargs"]
    assert "row_condition" in stored and "F" in str(stored["row_condition"])


def test_the_expectations_declare_their_library_metadata() -> None:
    metadata = ExpectTableToBeKAnonymous.library_metadata
    assert "privacy" in metadata["tags"] and metadata["has_full_test_suite"] is True
    assert ExpectTableToBeLDiverse.library_metadata is metadata  # shared by the four


@pytest.mark.filterwarnings("ignore:.*deprecated as of GX Core 1.9.0:DeprecationWarning")
@pytest.mark.parametrize("engine", ["pandas", "sqlite"])
def test_a_string_row_condition_with_its_condition_parser_selects_the_same_subpopulation(
    engine: str, pandas_batch: Callable[[pd.DataFrame], Any], sql_batch: Callable[[pd.DataFrame, str], Any]
) -> None:
    """GX's string form (``condition_parser="great_expectations"``; deprecated since GX 1.9) selects the same rows."""
    batch = pandas_batch(PEOPLE) if engine == "pandas" else sql_batch(PEOPLE, engine)
    result = batch.validate(
        ExpectTableToBeKAnonymous(
            quasi_identifiers=["age"], k=2, row_condition='col("sex")=="F"', condition_parser="great_expectations"
        )
    )
    assert (result.success, result.result["observed_value"], result.result["details"]["records"]) == (True, 2, 4)


def test_every_expectation_of_the_package_carries_library_metadata() -> None:
    import privacy_plugins.integrations.gx.expectations as expectations

    classes = [getattr(expectations, name) for name in expectations.__all__]
    assert len(classes) == 8
    for cls in classes:
        metadata = cls.library_metadata
        assert metadata["tags"][0] == "privacy" and metadata["tags"][-1] == "table expectation", cls.__name__
        assert metadata["maturity"] in ("production", "experimental") and metadata["has_full_test_suite"] is True
