"""anonymize_full_domain: accounting, outputs, errors before searching, utility metrics, Adult vs ARX."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.core.anonymize import anonymize_full_domain
from privacy_plugins.core.anonymize.generalization_lattice import LatticeSearch, exhaustive_search, optimal_search
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.disclosure import values_shown
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity, RecursiveCLDiversity
from privacy_plugins.errors import ConfigurationError, HierarchyError, InfeasibleAnonymizationError

ADULT = Path(__file__).resolve().parents[4] / "shared" / "data" / "adult"
ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]


@pytest.fixture
def song() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """Song et al. Table 1 with a person id, and small hierarchies for Age and Zipcode."""
    frame = pd.DataFrame(
        {
            "name": ["Li", "Wang", "Liu", "Zhao", "Chen"],
            "age": [5, 9, 8, 12, 19],
            "zipcode": ["12000", "14000", "19000", "22000", "24000"],
            "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
        }
    )
    age = Hierarchy.from_rows("age", [[str(a), "[5-10]" if a <= 10 else "[11-20]", "*"] for a in frame["age"]])
    zipcode = Hierarchy.from_rows(
        "zipcode", [[z, "[10001-20000]" if z < "20000" else "[20001-25000]", "*"] for z in frame["zipcode"]]
    )
    return frame, {"age": age, "zipcode": zipcode}


def test_song_table1_becomes_table3(song: tuple[pd.DataFrame, dict[str, Hierarchy]]) -> None:
    frame, hierarchies = song
    result = anonymize_full_domain(
        frame, quasi_identifiers=["age", "zipcode"], hierarchies=hierarchies, models=[KAnonymity(2)],
        identifiers=["name"], insensitive=["disease"],
    )  # fmt: skip
    assert result.details.levels == {"age": 1, "zipcode": 1}
    assert result.table["age"].tolist() == ["[5-10]"] * 3 + ["[11-20]"] * 2
    assert result.table["age"].dtype == object and result.table["zipcode"].dtype == object  # labels, as always
    assert "name" not in result.table.columns and result.dropped_identifiers == ("name",)
    assert (result.rows_in, result.rows_out, result.suppressed) == (5, 5, 0)
    assert result.measures["k"] == 2
    # NCP by hand: age level 1 covers 3 and 2 of 5 leaves, zip likewise: ((2/4)*3 + (1/4)*2)/5 each.
    per_qi = (3 * (2 / 4) + 2 * (1 / 4)) / 5
    assert result.utility.ncp == pytest.approx(per_qi)
    assert result.utility.lm == pytest.approx(2 * per_qi)
    assert result.utility.discernibility == 3**2 + 2**2
    assert result.utility.c_avg == pytest.approx((5 / 2) / 2)
    assert result.utility.height == 2
    assert result.utility.precision == pytest.approx(1 - (1 / 2 + 1 / 2) / 2)
    # ILeft over the QIs (no sensitive attribute was declared): 1 − (3−1)/5 or 1 − (2−1)/5.
    assert result.utility.ileft == pytest.approx(np.mean([1 - 2 / 5] * 3 + [1 - 1 / 5] * 2))


def test_l_diversity_forces_more_generalization(song: tuple[pd.DataFrame, dict[str, Hierarchy]]) -> None:
    frame, hierarchies = song
    result = anonymize_full_domain(
        frame, quasi_identifiers=["age", "zipcode"], hierarchies=hierarchies,
        models=[KAnonymity(2), DistinctLDiversity("disease", 2)], insensitive=["name"],
    )  # fmt: skip
    assert result.table["disease"].tolist() == frame["disease"].tolist()
    # ILeft counts the disease, published as it is, with 1 per tuple.
    levels = result.details.levels
    assert levels == {"age": 2, "zipcode": 2}
    assert result.utility.ileft == pytest.approx((2 * (1 - 4 / 5) + 1) / 3)
    assert pp.l_diversity(result.table, quasi_identifiers=["age", "zipcode"], sensitive_attribute="disease") >= 2


def test_suppression_removes_or_marks_rows() -> None:
    frame = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "2", "3"], "s": list("abcabca")})
    hierarchy = Hierarchy.from_rows("zip", [["1", "*"], ["2", "*"], ["3", "*"]])
    kept = anonymize_full_domain(
        frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(3)], suppression_limit=0.2,
        insensitive=["s"],
    )  # fmt: skip
    assert (kept.rows_out, kept.suppressed, kept.details.levels) == (6, 1, {"zip": 0})
    assert kept.table["zip"].tolist() == ["1", "1", "1", "2", "2", "2"]
    marked = anonymize_full_domain(
        frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(3)],
        suppression_limit=0.2, suppressed_rows="mark", sensitive_attributes=["s"],
    )  # fmt: skip
    # The one marked row would be published as a class of 1 (k = 1): suppress nothing instead.
    assert (marked.suppressed, marked.details.levels, len(marked.table)) == (0, {"zip": 1}, 7)
    # Three marked rows form a class of 3, which is 3-anonymous like the others.
    wider = pd.DataFrame({"zip": list("111222345"), "s": list("abcabcabc")})
    hierarchy = Hierarchy.from_rows("zip", [[z, "*"] for z in "12345"])
    marked = anonymize_full_domain(
        wider, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(3)],
        suppression_limit=0.4, suppressed_rows="mark", sensitive_attributes=["s"],
    )  # fmt: skip
    assert (marked.suppressed, marked.details.levels, len(marked.table)) == (3, {"zip": 0}, 9)
    assert marked.table.iloc[6:].to_numpy().tolist() == [["*", "*"]] * 3
    assert pp.k_anonymity(marked.table, quasi_identifiers=["zip"]) == 3
    hierarchy = Hierarchy.from_rows("zip", [["1", "*"], ["2", "*"], ["3", "*"]])
    # Without a limit the only way is full generalization.
    full = anonymize_full_domain(
        frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(3)], insensitive=["s"]
    )
    assert full.details.levels == {"zip": 1} and full.suppressed == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"hierarchies": {}}, HierarchyError, r"no hierarchy for quasi-identifier\(s\) \['zip'\]"),
        ({"models": [KAnonymity(8)]}, ConfigurationError, r"k=8 is larger than the table \(7 rows\)"),
        ({"suppression_limit": 1.0}, ConfigurationError, r"suppression_limit must be in \[0, 1\)"),
        ({"suppression_limit": -0.1}, ConfigurationError, "suppression_limit"),
        ({"models": []}, ConfigurationError, "at least one privacy model"),
        ({"models": [DistinctLDiversity("s", 4)]}, InfeasibleAnonymizationError, "cannot be met even with every"),
        ({"models": [RecursiveCLDiversity("s", 0.5, 2)]}, InfeasibleAnonymizationError, "cannot be met"),
        ({"algorithm": "flash"}, ConfigurationError, "algorithm must be one of"),
        ({"quasi_identifiers": ["zipp"]}, pp.errors.UnknownColumnError, "zipp"),
    ],
)
def test_bad_input_fails_before_searching(kwargs: dict, error: type, message: str) -> None:
    frame = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "2", "3"], "s": list("abcabca")})
    arguments = {
        "quasi_identifiers": ["zip"],
        "hierarchies": {"zip": Hierarchy.from_rows("zip", [["1", "*"], ["2", "*"], ["3", "*"]])},
        "models": [KAnonymity(2)],
        "sensitive_attributes": ["s"],
    } | kwargs
    with pytest.raises(error, match=message):
        anonymize_full_domain(frame, **arguments)


def test_value_absent_from_hierarchy_is_named() -> None:
    frame = pd.DataFrame({"zip": ["1", "2", "9"], "s": list("abc")})
    hierarchy = Hierarchy.from_rows("zip", [["1", "*"], ["2", "*"]])
    with values_shown(), pytest.raises(HierarchyError, match=r"'zip'.*not leaves.*'9'"):
        anonymize_full_domain(
            frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(1)], insensitive=["s"]
        )


def test_nan_in_a_quasi_identifier_is_an_error() -> None:
    frame = pd.DataFrame({"zip": ["1", None, "2"], "s": list("abc")})
    hierarchy = Hierarchy.from_rows("zip", [["1", "*"], ["2", "*"]])
    with pytest.raises(HierarchyError, match="'zip' has 1 missing value"):
        anonymize_full_domain(
            frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy}, models=[KAnonymity(1)], insensitive=["s"]
        )


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict]:
    if not (ADULT / "adult.csv").exists():
        pytest.skip(f"Adult data not found at {ADULT} (see ../shared/data/README.md)")
    return pp.read_table(ADULT / "adult.csv"), load_hierarchies(ADULT, columns=[*ADULT_QIS, "occupation"])


@pytest.mark.parametrize("fraction", [0.0, 0.01])
def test_adult_optimal_equals_exhaustive_for_k5(adult: tuple[pd.DataFrame, dict], fraction: float) -> None:
    frame, hierarchies = adult
    snapshot = Snapshot.build(frame, quasi_identifiers=ADULT_QIS, hierarchies=hierarchies)
    limit = int(fraction * len(frame))
    reference = exhaustive_search(LatticeSearch(snapshot, [KAnonymity(5)], limit))
    found = optimal_search(LatticeSearch(snapshot, [KAnonymity(5)], limit))
    assert reference.best is not None and found.best is not None
    assert found.best.node == reference.best.node
    assert found.best.loss == pytest.approx(reference.best.loss, abs=1e-12)
    assert found.nodes_checked < reference.nodes_checked == 2160


@pytest.mark.parametrize(
    ("models", "fraction", "ncp", "node"),
    [
        ([KAnonymity(5)], 0.0, 0.6333, (4, 3, 1, 2, 0, 0, 2)),
        ([KAnonymity(5)], 0.05, 0.1765, (3, 1, 0, 1, 0, 0, 1)),
        ([KAnonymity(10)], 0.05, 0.2361, (3, 1, 1, 1, 0, 0, 1)),
        ([DistinctLDiversity("occupation", 2)], 0.05, 0.1295, (3, 1, 0, 1, 0, 0, 0)),
        ([RecursiveCLDiversity("occupation", 3, 2)], 0.05, 0.1392, (3, 1, 0, 1, 0, 0, 0)),
    ],
)
def test_adult_matches_arx_optimum(adult: tuple[pd.DataFrame, dict], models: list, fraction: float, ncp: float,
                                   node: tuple) -> None:  # fmt: skip
    """ARX 3.9.2's optimal NCP ("Loss") on Adult, from issue 3's reference table."""
    frame, hierarchies = adult
    result = anonymize_full_domain(
        frame, quasi_identifiers=ADULT_QIS, hierarchies=hierarchies, models=models, suppression_limit=fraction,
        insensitive=[c for c in ("occupation", "salary-class") if c not in {m.sensitive_attribute for m in models}],
    )  # fmt: skip
    assert round(result.utility.ncp, 4) == ncp
    assert tuple(result.details.levels.values()) == node
    assert result.passed
