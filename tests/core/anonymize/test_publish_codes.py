"""Local recoding publishes its QIs as Categoricals over per-group codes (issue 28: memory at 1M rows).

The published content must be what the object-label publish gave, value for value; users
still get object labels once the re-check has passed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, clustering, get_anonymizer
from privacy_plugins.core.anonymize.block_path import run_in_blocks
from privacy_plugins.core.anonymize.mondrian import _dimension, _labels, _spans, publish_groups, small_codes
from privacy_plugins.core.anonymize.registry import anonymization_request
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.metrics.information_loss import ileft, ncp
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.core.partition import EquivalenceClasses

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)


def table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": np.arange(n), "age": rng.integers(17, 90, n),
                         "color": rng.choice(["red", "blue", "orange", "green"], n),
                         "s": rng.choice(list("abcde"), n), "note": rng.integers(0, 3, n)})  # fmt: skip


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60), n_groups=st.integers(1, 12))
def test_published_categoricals_spell_what_the_object_labels_were(seed: int, n: int, n_groups: int) -> None:
    frame = table(seed, n)
    group = np.random.default_rng(seed).integers(0, n_groups, n)
    group = np.unique(group, return_inverse=True)[1].ravel()  # dense ids
    n_groups = int(group.max()) + 1
    request = anonymization_request(frame, quasi_identifiers=["age", "color"], models=[KAnonymity(1)],
                                    hierarchies={"color": COLOR}, identifiers=["pid"], sensitive_attributes=["s"],
                                    insensitive=["note"])  # fmt: skip
    coded = [_dimension(frame[q], request.hierarchies.get(q)) for q in ("age", "color")]
    published, utility, classes, qi_codes = publish_groups(frame, request, coded, group, n_groups)

    # The reference: the object publish (one label per row, costs per row, classes hashed from the labels).
    reference = frame.drop(columns=["pid"])
    costs = []
    for q, (dimension, code_labels) in zip(("age", "color"), coded, strict=True):
        low, high = _spans(group, n_groups, dimension.codes)
        reference[q] = pd.Series(_labels(dimension, code_labels, low, high)[group], dtype=object)
        costs.append(dimension.widths(low, high)[group])
    assert list(published.columns) == list(reference.columns)
    assert qi_codes is not None
    for q in ("age", "color"):
        assert isinstance(published[q].dtype, pd.CategoricalDtype)
        assert published[q].astype(object).tolist() == reference[q].tolist()
        codes, labels = qi_codes[q]
        assert codes.dtype == np.int8 and labels[codes].tolist() == reference[q].tolist()
    pd.testing.assert_frame_equal(published[["s", "note"]], reference[["s", "note"]])
    assert utility.ncp == ncp(costs, np.zeros(n, dtype=bool))  # the same float, not only close
    hashed = EquivalenceClasses.from_frame(reference, ["age", "color"])
    assert classes.n_classes == hashed.n_classes
    assert sorted(classes.sizes.tolist()) == sorted(hashed.sizes.tolist())


def test_codes_take_the_narrowest_type_that_holds_them() -> None:
    codes = np.array([0, 1, 2], dtype=np.int64)
    assert small_codes(codes, 3).dtype == np.int8
    assert small_codes(codes, 126).dtype == np.int8 and small_codes(codes, 127).dtype == np.int16
    assert small_codes(codes, 40_000).dtype == np.int32 and small_codes(codes, 2**31).dtype == np.int64
    # The Categorical keeps the very array (pandas picks the same type): no second copy of the codes.
    for n_values in (3, 126, 127, 40_000):
        small = small_codes(np.zeros(5, dtype=np.int64), n_values)
        values = pd.Categorical.from_codes(small, categories=pd.Index(range(n_values)), validate=False)
        assert np.shares_memory(values.codes, small)


def test_blocks_merge_their_codes_and_users_get_object_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clustering, "BLOCK", 80)
    frame = table(2, 300)
    settings_ = {"quasi_identifiers": ["age", "color"], "models": [KAnonymity(3), DistinctLDiversity("s", 2)],
                 "hierarchies": {"color": COLOR}, "identifiers": ["pid"], "insensitive": ["note"],
                 "seed": 5}  # fmt: skip
    request = anonymization_request(frame, **settings_)  # type: ignore[arg-type]
    output = run_in_blocks(get_anonymizer("k-member"), request, {}, workers=1)  # type: ignore[arg-type]
    assert output is not None and output.qi_codes is not None
    for q in ("age", "color"):
        codes, labels = output.qi_codes[q]
        assert isinstance(output.table[q].dtype, pd.CategoricalDtype)
        assert pd.Index(labels).is_unique  # the union of the blocks' labels, each once
        assert output.table[q].astype(object).tolist() == labels[codes].tolist()
    result = anonymize(frame, algorithm="k-member", **settings_)  # type: ignore[arg-type]
    assert result.passed and result.details.kind == "blocks"
    for q in ("age", "color"):
        assert result.table[q].dtype == object
        assert result.table[q].tolist() == output.table[q].astype(object).tolist()


def test_ileft_reads_the_leaf_counts_one_attribute_at_a_time() -> None:
    counts = [np.array([1.0, 2.0, 4.0]), np.array([3.0, 1.0, 1.0])]
    suppressed = np.array([False, True, False])
    listed = ileft(counts, [4, 5], suppressed, n_ungeneralized=1)
    assert ileft(iter(counts), [4, 5], suppressed, n_ungeneralized=1) == listed
