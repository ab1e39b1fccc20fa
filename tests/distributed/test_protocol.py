"""The pure protocol: the slides' example, in process, with the MODP cipher."""

from __future__ import annotations

import numpy as np
import pandas as pd

from privacy_plugins.core.distributed import (
    Dpp2gaSession,
    LocalParty,
    ModpCipher,
    join_is_k_anonymous,
    trusted_third_party,
)
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure


def _partition(party: LocalParty) -> set[frozenset[int]]:
    classes = party.record_classes()
    return {frozenset(int(i) for i in np.asarray(party.record_ids)[classes == c]) for c in np.unique(classes)}


def _run(a: LocalParty, b: LocalParty) -> tuple[pd.DataFrame, pd.DataFrame, int, list[set[frozenset[int]]]]:
    sa, sb = Dpp2gaSession(a, ModpCipher()), Dpp2gaSession(b, ModpCipher())
    salt = b"test"
    ea, eb = sa.encrypted_classes(salt), sb.encrypted_classes(salt)
    ra, rb = sa.answer(eb), sb.answer(ea)
    sa.accept_answer(rb)
    sb.accept_answer(ra)
    seen = []
    while True:
        seen.append(_partition(a))
        seen.append(_partition(b))
        ga, gb = sa.grouping(), sb.grouping()
        done_a, done_b = sa.satisfied(ga, gb), sb.satisfied(gb, ga)
        assert done_a == done_b
        if done_a:
            break
        sa.step(20)
        sb.step(20)
    ja = sa.join(sb.class_labels(), their_columns=b.quasi_identifiers, ours_first=True, their_grouping=sb.grouping())
    jb = sb.join(sa.class_labels(), their_columns=a.quasi_identifiers, ours_first=False, their_grouping=sa.grouping())
    return ja, jb, sa.rounds, seen


def test_the_slides_example(slides: tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]) -> None:
    p1_part, p2_part, hierarchies = slides
    p1 = LocalParty.start(p1_part, id_column="ID", quasi_identifiers=["AREA", "POSITION"], hierarchies=hierarchies, k=3)
    p2 = LocalParty.start(p2_part, id_column="ID", quasi_identifiers=["SALARY"], hierarchies=hierarchies, k=3)
    assert p1.levels == {"AREA": 1, "POSITION": 0} and p2.levels == {"SALARY": 1}  # the slides' round 1
    ja, jb, rounds, seen = _run(p1, p2)
    # Round 1: γ1 ≠ γ2 since {1,3,9} ∩ {2,3,9} has 2 < 3 records.
    assert seen[0] == {frozenset({1, 3, 9}), frozenset({2, 4, 10}), frozenset({5, 11, 12}), frozenset({6, 7, 8})}
    assert seen[1] == {frozenset({1, 4, 10}), frozenset({2, 3, 9}), frozenset({5, 11, 12}), frozenset({6, 7, 8})}
    # Round 2: P1 generalizes POSITION, P2 SALARY; the slides' partitions, whose join is 3-anonymous.
    assert rounds == 2 and p1.levels == {"AREA": 1, "POSITION": 1} and p2.levels == {"SALARY": 2}
    assert seen[2] == {frozenset({1, 3, 9}), frozenset({2, 4, 5, 10, 11, 12}), frozenset({6, 7, 8})}
    assert seen[3] == {frozenset({1, 2, 3, 4, 9, 10}), frozenset({5, 11, 12}), frozenset({6, 7, 8})}
    assert ja.equals(jb) and list(ja.columns) == ["AREA", "POSITION", "SALARY"] and len(ja) == 12
    assert measure(ja, quasi_identifiers=["AREA", "POSITION", "SALARY"]).k == 3
    reference = trusted_third_party(
        pd.concat([p1_part, p2_part[["SALARY"]]], axis=1),
        quasi_identifiers_a=["AREA", "POSITION"],
        quasi_identifiers_b=["SALARY"],
        hierarchies=hierarchies,
        k=3,
        id_column="ID",
    )
    assert reference.rounds == 2
    rows = sorted(map(tuple, reference.table.astype(str).to_numpy().tolist()))
    assert sorted(map(tuple, ja.astype(str).to_numpy().tolist())) == rows


def test_join_condition() -> None:
    assert join_is_k_anonymous(np.array([0, 0, 0]), np.array([1, 1, 1]), 3)
    assert not join_is_k_anonymous(np.array([0, 0, 0, 1]), np.array([0, 0, 0, 0]), 2)
