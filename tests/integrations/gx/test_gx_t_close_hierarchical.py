"""ExpectTableToBeTClose with the hierarchical distance, in pandas and pushed down to SQLite."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.integrations.gx import ExpectTableToBeTClose, ExpectTableToSatisfyPrivacyModel

TABLE = pd.DataFrame(
    {
        "zip": ["4767*", "4760*", "4767*", "4790*", "4790*", "4790*", "4760*", "4767*", "4760*"],
        "disease": ["gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu",
                    "bronchitis", "bronchitis", "pneumonia", "stomach cancer"],
    }
)  # fmt: skip
TREE = {"*": {"respiratory": {"respiratory infection": ["flu", "pneumonia", "bronchitis"]},
              "digestive": {"stomach diseases": ["gastric ulcer", "gastritis", "stomach cancer"]}}}  # fmt: skip


def expectation(t: float, **extra: object) -> ExpectTableToBeTClose:
    return ExpectTableToBeTClose(
        quasi_identifiers=["zip"], sensitive_attribute="disease", t=t, t_distance="hierarchical", **extra
    )


@pytest.mark.parametrize("engine", ["pandas", "sqlite"])
def test_hierarchical_t_in_every_engine(engine: str, pandas_batch, sql_batch) -> None:  # type: ignore[no-untyped-def]
    batch = pandas_batch(TABLE) if engine == "pandas" else sql_batch(TABLE, "sqlite")
    passed = batch.validate(expectation(0.3, sensitive_hierarchy={"taxonomy": TREE}))
    assert passed.success and passed.result["observed_value"] == pytest.approx(8 / 27)
    assert passed.result["details"]["t_distance"] == "hierarchical"
    failed = batch.validate(expectation(0.29, sensitive_hierarchy={"taxonomy": TREE}))
    assert not failed.success and failed.result["details"]["violations"]["classes"] == 1


def test_hierarchical_t_without_a_hierarchy_fails_with_the_reason(pandas_batch) -> None:  # type: ignore[no-untyped-def]
    result = pandas_batch(TABLE).validate(expectation(0.3))
    assert not result.success
    assert "needs a hierarchy of the sensitive attribute 'disease'" in str(result.exception_info)


def test_the_generic_model_expectation_takes_the_hierarchy_as_a_parameter(pandas_batch) -> None:  # type: ignore[no-untyped-def]
    parameters = {"sensitive_attribute": "disease", "t": 0.3, "t_distance": "hierarchical",
                  "sensitive_hierarchy": {"taxonomy": TREE}}  # fmt: skip
    result = pandas_batch(TABLE).validate(
        ExpectTableToSatisfyPrivacyModel(quasi_identifiers=["zip"], privacy_model="t_closeness", parameters=parameters)
    )
    assert result.success and result.result["observed_value"] == pytest.approx(8 / 27)
