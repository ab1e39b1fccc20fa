"""The block path (issue 28): units cut as their records, blocks independent of row order and of where they run."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacy_plugins.core.anonymize import anonymize, bucket_clustering, clustering, get_anonymizer
from privacy_plugins.core.anonymize.block_path import run_in_blocks
from privacy_plugins.core.anonymize.cluster_blocks import split_blocks
from privacy_plugins.core.anonymize.cluster_greedy import CostSpace
from privacy_plugins.core.anonymize.mondrian import _dimension
from privacy_plugins.core.anonymize.registry import anonymization_request
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, FrequencyLDiversity, KAnonymity, TCloseness

COLOR = Hierarchy.from_rows(
    "color",
    [["red", "warm", "*"], ["blue", "cold", "*"], ["orange", "warm", "*"], ["green", "cold", "*"]],
)
PROBLEMS = {
    "k-member": [KAnonymity(3), DistinctLDiversity("s", 2)],
    "bucket": [FrequencyLDiversity("s", 2), KAnonymity(2)],
}


def table(seed: int, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": np.arange(n), "age": rng.integers(17, 90, n),
                         "color": rng.choice(["red", "blue", "orange", "green"], n),
                         "s": rng.choice(list("abcde"), n), "note": rng.integers(0, 3, n)})  # fmt: skip


def settings_of(algorithm: str) -> dict[str, object]:
    return {"quasi_identifiers": ["age", "color"], "models": PROBLEMS[algorithm], "hierarchies": {"color": COLOR},
            "identifiers": ["pid"], "insensitive": ["note"], "seed": 5}  # fmt: skip


def multiset(frame: pd.DataFrame) -> list[tuple[str, ...]]:
    return sorted(map(tuple, frame.astype(str).to_numpy().tolist()))


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clustering, "BLOCK", 80)
    monkeypatch.setattr(bucket_clustering, "BLOCK", 80)


@settings(max_examples=25, deadline=None)
@given(
    codes=st.lists(st.integers(0, 12), min_size=1, max_size=40),
    counts=st.lists(st.integers(1, 6), min_size=40, max_size=40),
    limit=st.integers(1, 30),
    least=st.integers(1, 8),
)
def test_units_are_cut_as_the_records_they_stand_for(
    codes: list[int], counts: list[int], limit: int, least: int
) -> None:
    units = np.unique(codes)
    weights = np.array(counts[: units.shape[0]], dtype=np.int64)
    records = np.repeat(units, weights)
    unit_space = CostSpace([_dimension(pd.Series(units), None)[0]])
    record_space = CostSpace([_dimension(pd.Series(records), None)[0]])
    by_units = split_blocks(unit_space, np.arange(units.shape[0]), lambda u: int(weights[u].sum()) >= least,
                            limit=limit, weights=weights)  # fmt: skip
    by_records = split_blocks(record_space, np.arange(records.shape[0]), lambda r: r.shape[0] >= least, limit=limit)
    assert [np.repeat(units[b], weights[b]).tolist() for b in by_units] == [records[b].tolist() for b in by_records]


@pytest.mark.parametrize("algorithm", sorted(PROBLEMS))
def test_blocks_do_not_depend_on_the_order_of_the_rows(small_blocks: None, algorithm: str) -> None:
    frame = table(1)
    result = anonymize(frame, algorithm=algorithm, **settings_of(algorithm))
    shuffled = anonymize(frame.sample(frac=1.0, random_state=3), algorithm=algorithm, **settings_of(algorithm))
    assert result.details.kind == "blocks" and result.details.to_dict()["n_blocks"] > 2
    assert multiset(result.table) == multiset(shuffled.table)
    assert result.rows_in == result.rows_out + result.suppressed == 300
    report = measure(result.table, quasi_identifiers=["age", "color"], sensitive_attributes=["s"])
    assert report.k >= 2 and report.for_attribute("s").distinct_l >= 2


def test_a_process_pool_publishes_what_one_process_does(small_blocks: None) -> None:
    frame = table(2)
    anonymizer = get_anonymizer("k-member")
    request = anonymization_request(frame, **{k: v for k, v in settings_of("k-member").items()})
    alone = run_in_blocks(anonymizer, request, {}, workers=1)  # type: ignore[arg-type]
    seen: list[tuple[int, int]] = []
    started = time.perf_counter()
    # A progress callback cannot be pickled: it stays here while the workers run the blocks.
    pooled = run_in_blocks(anonymizer, replace(request, progress=lambda done, total: seen.append((done, total))), {},
                           workers=2)  # type: ignore[arg-type]  # fmt: skip
    assert alone is not None and pooled is not None and time.perf_counter() - started < 60
    assert seen[-1] == (300, 300)
    pd.testing.assert_frame_equal(alone.table, pooled.table)
    assert alone.utility == pooled.utility


def test_a_model_reading_the_whole_table_keeps_one_block(small_blocks: None) -> None:
    frame = table(3)
    models = [KAnonymity(4), TCloseness("note", 0.6)]
    result = anonymize(frame.drop(columns=["s"]), algorithm="k-member", quasi_identifiers=["age", "color"],
                       models=models, hierarchies={"color": COLOR}, identifiers=["pid"], seed=1)  # fmt: skip
    assert result.details.kind == "clusters" and result.passed


def test_a_blocks_ranges_cost_their_share_of_the_whole_tables_range(small_blocks: None) -> None:
    """NCP of a numeric QI in blocks is normalized by the whole table's range, as without blocks."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"age": np.concatenate([rng.integers(0, 20, 150), rng.integers(80, 100, 150)])})
    result = anonymize(frame, algorithm="k-member", quasi_identifiers=["age"], models=[KAnonymity(3)], seed=2)
    assert result.details.kind == "blocks"
    bounds = result.table["age"].astype(str).str.strip("[]").str.split("-", expand=True).astype(float)
    low, high = bounds[0], bounds[1].fillna(bounds[0])
    assert result.utility.ncp == pytest.approx(float(((high - low) / (frame["age"].max() - frame["age"].min())).mean()))
