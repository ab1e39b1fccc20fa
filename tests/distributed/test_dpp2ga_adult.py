"""Adult split vertically between two parties: global k, the re-measured join, the trusted third party.

Party A holds age, education, sex; party B marital-status, race, native-country,
workclass. The k = 2, 5, 10 runs use the X25519 cipher over a loopback socket
(the protocol's decisions depend only on which tokens are equal, which any
commutative cipher preserves, so its result is the MODP one); one run keeps the
RFC 3526 MODP group on the first 3,000 records.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Hashable
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.core.distributed import trusted_third_party
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies
from privacy_plugins.core.measure import measure
from privacy_plugins.distributed import PartyResult, run_two_parties

#: The x25519 group (the default) needs the ``distributed`` extra; without it these tests skip.
needs_cryptography = pytest.mark.skipif(
    importlib.util.find_spec("cryptography") is None, reason="needs the 'distributed' extra (cryptography)"
)


ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult"
A_QIS = ["age", "education", "sex"]
B_QIS = ["marital-status", "race", "native-country", "workclass"]


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict[Hashable, Hierarchy]]:
    if not (ADULT / "adult.csv").is_file():
        pytest.skip(f"Adult data not found at {ADULT} (expected ../shared/data/adult beside the repo)")
    frame = pp.read_table(ADULT / "adult.csv")
    frame.insert(0, "id", [f"person-{i}" for i in range(len(frame))])
    return frame, load_hierarchies(ADULT, columns=A_QIS + B_QIS)


def _rows(table: pd.DataFrame) -> pd.Series:
    """The join as a multiset of rows (the protocol orders rows by token, the reference by input)."""
    return table.astype(str).value_counts().sort_index()


def _check(frame: pd.DataFrame, hierarchies: dict[Hashable, Hierarchy], k: int, a: PartyResult, b: PartyResult) -> None:
    assert a.table.equals(b.table) and list(a.table.columns) == A_QIS + B_QIS
    assert len(a.table) == len(frame) and "id" not in a.table.columns
    report = measure(a.table, quasi_identifiers=A_QIS + B_QIS)
    assert report.k >= k  # the published join re-measured by the core
    reference = trusted_third_party(
        frame, quasi_identifiers_a=A_QIS, quasi_identifiers_b=B_QIS, hierarchies=hierarchies, k=k, id_column="id"
    )
    assert dict(a.levels) == dict(reference.levels_a) and dict(b.levels) == dict(reference.levels_b)
    assert a.rounds == b.rounds == reference.rounds
    assert _rows(a.table).equals(_rows(reference.table))


@needs_cryptography
@pytest.mark.parametrize("k", [2, 5, 10])
def test_adult_reaches_global_k(adult: tuple[pd.DataFrame, dict[Hashable, Hierarchy]], k: int) -> None:
    frame, hierarchies = adult
    shuffled = frame.sample(frac=1.0, random_state=k)  # the parties need not hold their rows in the same order
    a, b = run_two_parties(
        frame[["id", *A_QIS]], shuffled[["id", *B_QIS]], id_column="id", quasi_identifiers_a=A_QIS,
        quasi_identifiers_b=B_QIS, hierarchies=hierarchies, k=k, group="x25519",
    )  # fmt: skip
    _check(frame, hierarchies, k, a, b)


def test_adult_with_the_modp_group(adult: tuple[pd.DataFrame, dict[Hashable, Hierarchy]]) -> None:
    frame, hierarchies = adult
    part = frame.iloc[:3000].reset_index(drop=True)
    a, b = run_two_parties(
        part[["id", *A_QIS]], part[["id", *B_QIS]], id_column="id", quasi_identifiers_a=A_QIS,
        quasi_identifiers_b=B_QIS, hierarchies=hierarchies, k=5, group="modp2048",
    )  # fmt: skip
    assert a.rounds > 1  # the local nodes alone do not give a 5-anonymous join: the rounds are exercised
    _check(part, hierarchies, 5, a, b)
