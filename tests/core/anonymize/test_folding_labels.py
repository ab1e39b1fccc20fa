"""Labels that compare equal as Python keys (``1`` and ``True`` in a hand-built hierarchy) are published as they are.

Publishing factorizes each QI's labels per group (Categorical codes); ``1 == True`` would fold the two
nodes into one category and publish one for the other. Each published value must be its row's leaf or
one of that leaf's ancestors, of the same type.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.anonymize import anonymize, clustering
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage

LEAVES = ["a", "b", "c", "d"]
# Level 1: {a, b} → 1, {c, d} → True (equal as keys, different nodes).
FOLDING = Hierarchy(
    attribute="c",
    labels=(np.array(LEAVES, dtype=object), np.array([1, True], dtype=object), np.array(["*"], dtype=object)),
    codes=np.array([[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 0, 0]]),
)


def _ancestors(leaf: str) -> list[object]:
    code = LEAVES.index(leaf)
    return [FOLDING.labels[level][FOLDING.codes[level][code]] for level in range(FOLDING.height + 1)]


def _assert_spelled_from_the_hierarchy(raw: pd.Series, published: pd.Series) -> None:
    for leaf, value in zip(raw.tolist(), published.tolist(), strict=True):
        assert any(type(value) is type(node) and value == node for node in _ancestors(leaf)), (leaf, value)


@pytest.mark.parametrize("algorithm", ["mondrian", "two-phase", "k-member", "personalized"])
def test_equal_labels_of_different_nodes_stay_apart(algorithm: str) -> None:
    frame = pd.DataFrame({"c": LEAVES * 4, "s": ["x", "y"] * 8})
    models = [KAnonymity(8)] + ([PersonalizedLeakage("s", bound=0.9)] if algorithm == "personalized" else [])
    result = anonymize(frame, algorithm=algorithm, quasi_identifiers=["c"], hierarchies={"c": FOLDING},
                       models=models, sensitive_attributes=["s"])  # fmt: skip
    assert result.rows_in == result.rows_out + result.suppressed == len(frame)
    _assert_spelled_from_the_hierarchy(frame["c"], result.table["c"])
    # Both nodes are published: neither label took the other's place.
    assert {type(v) for v in result.table["c"].tolist()} == {int, bool}


def test_blocks_whose_labels_fold_are_spelled_per_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """One block publishes ``1``, another ``True``: the union of their categories must not fold them."""
    monkeypatch.setattr(clustering, "BLOCK", 40)
    rng = np.random.default_rng(0)
    n = 160
    frame = pd.DataFrame({"c": np.repeat(LEAVES, n // 4), "age": rng.integers(0, 3, n), "row": np.arange(n)})
    result = anonymize(frame, algorithm="k-member", quasi_identifiers=["c", "age"], hierarchies={"c": FOLDING},
                       models=[KAnonymity(12)], insensitive=["row"], seed=1)  # fmt: skip
    assert result.details.to_dict().get("n_blocks", 1) > 1
    # The block path publishes the rows block by block: ``row`` says whose each one is.
    _assert_spelled_from_the_hierarchy(frame["c"].iloc[result.table["row"]], result.table["c"])
    assert {type(v) for v in result.table["c"].tolist()} >= {int, bool}
