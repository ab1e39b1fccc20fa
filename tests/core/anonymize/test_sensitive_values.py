"""Sensitive-attribute-based anonymity (Nagendra & Aparna): only the records in A are k-anonymized."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from privacy_plugins.core.anonymize import SensitiveValuesDetails, anonymize
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import KAnonymity
from privacy_plugins.errors import ConfigurationError, PrivacyRiskWarning
from tests.unnamed_columns import other_columns

# The paper's Table 2 (the "3 6900" zipcode read as 36900).
TABLE2 = pd.DataFrame(
    {
        "id": range(1, 9),
        "zipcode": [42302, 52020, 36900, 52013, 42025, 13025, 13022, 52013],
        "age": [25, 22, 23, 29, 31, 38, 36, 32],
        "nativity": ["Indian", "American", "Chinese", "American", "Indian", "German", "German", "American"],
        "diagnostic": ["Flu", "Flu", "Heart disease", "Cancer", "HIV", "HIV", "HIV", "HIV"],
    }
)
QIS = ["zipcode", "age"]


def _run(table: pd.DataFrame = TABLE2, **options: object):  # type: ignore[no-untyped-def]
    return anonymize(
        table,
        algorithm="sensitive-values",
        quasi_identifiers=QIS,
        identifiers=["id"],
        sensitive_attributes=["diagnostic"],
        insensitive=other_columns(table, [], QIS, ["id", "diagnostic"]),
        models=[KAnonymity(4)],
        **{"base_algorithm": "mondrian", **options},
    )


def test_table2_records_in_a_are_4_anonymous_the_rest_as_is() -> None:
    with pytest.warns(
        PrivacyRiskWarning, match="reveals that its 'diagnostic' is one of the sensitive_values \\(values"
    ):
        result = _run(sensitive_values="HIV,Cancer")
    table = result.table
    assert "id" not in table.columns and result.rows_out == 8 and result.passed
    in_a = TABLE2["diagnostic"].isin(["HIV", "Cancer"]).to_numpy()
    # Input order kept; the others exactly as given (as text).
    assert table["diagnostic"].tolist() == TABLE2["diagnostic"].tolist()
    assert table.loc[~in_a, "zipcode"].tolist() == ["42302", "52020", "36900"]
    assert table.loc[~in_a, "age"].tolist() == ["25", "22", "23"]
    sensitive = table.loc[in_a]
    assert sensitive.groupby(QIS).size().min() >= 4
    # Honest: table-wide k is 1, and every record in A is revealed as such.
    assert measure(table, quasi_identifiers=QIS).k == 1 and result.measures["k"] == 1
    details = result.details
    assert isinstance(details, SensitiveValuesDetails)
    assert details.records_in_a == 5 and details.records_published_as_is == 3
    assert details.membership_revealed == 5 and details.max_membership_probability == 1.0
    assert result.models[0].model == "4-anonymity for the records whose 'diagnostic' is one of the 2 sensitive_values"
    json.dumps(result.to_dict())


def test_table3_style_homogeneity_is_still_visible_in_the_class_of_a() -> None:
    # The paper's Table 3 has a class of four HIV records: anonymizing only A = {HIV} gives one such class.
    with pytest.warns(PrivacyRiskWarning):
        result = _run(sensitive_values="HIV")
    hiv = result.table[result.table["diagnostic"] == "HIV"]
    assert len(hiv.groupby(QIS)) == 1 and result.details.max_membership_probability == 1.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("", r"sensitive_values \(the set A\) is empty"),
        (" , ", r"sensitive_values \(the set A\) is empty"),
        ("HIV,Malaria,Ebola", r"2 of the 3 sensitive_values never occur in 'diagnostic': \['Malaria', 'Ebola'\]"),
    ],
)
def test_bad_sets_are_named(values: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _run(sensitive_values=values)


def test_base_algorithm_must_be_another_registered_one() -> None:
    with pytest.raises(ConfigurationError, match="base_algorithm must be another"):
        _run(sensitive_values="HIV", base_algorithm="sensitive-values")
    with pytest.raises(ConfigurationError, match="algorithm must be one of"):
        _run(sensitive_values="HIV", base_algorithm="nope")
