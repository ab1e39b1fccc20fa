"""Issue 31: the attacks on distinct rows with their counts (what an engine's GROUP BY returns) score
exactly as on the expanded records — same seed, same sampled targets, same report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.attacks import ATTACKS, run_attacks
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.errors import ConfigurationError

ZIPS = ["47906", "47907", "47610", "47611"]
HIERARCHY = Hierarchy.from_rows("zip", [[z, z[:4] + "*", z[:3] + "**", "*"] for z in ZIPS])
# roles: age, zip, sex quasi-identifiers; disease the secret (sensitive)


def _people(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(20, 30, n),
            "zip": rng.choice(ZIPS, n),
            "sex": rng.choice(["F", "M"], n),
            "disease": rng.choice(["flu", "cold", "hiv"], n),
        }
    )


def _grouped(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Distinct rows in first-occurrence order with their counts (the expanded frame is their repeat)."""
    grouped = frame.groupby(list(frame.columns), sort=False).size().reset_index(name="n")
    return grouped.drop(columns="n"), grouped["n"].to_numpy(dtype=np.int64)


def _expanded(distinct: pd.DataFrame, counts: np.ndarray) -> pd.DataFrame:
    return distinct.loc[distinct.index.repeat(counts)].reset_index(drop=True)


def _generalized(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    low = out["age"] // 5 * 5
    out["age"] = "[" + low.astype(str) + "-" + (low + 4).astype(str) + "]"
    out["zip"] = out["zip"].str[:3] + "**"
    return out


@pytest.mark.parametrize("release_kind", ["copy", "generalized"])
@pytest.mark.parametrize("held_out", [False, True])
def test_counted_rows_give_the_report_of_the_expanded_records(release_kind: str, held_out: bool) -> None:
    rng = np.random.default_rng(7)
    original, original_counts = _grouped(_people(rng, 400))
    control, control_counts = _grouped(_people(rng, 300))
    records = _expanded(original, original_counts)
    release_records = records if release_kind == "copy" else _generalized(records)
    release, release_counts = _grouped(release_records)
    assert len(release) < len(release_records)  # duplicates: the counts matter
    settings = {
        "quasi_identifiers": ["age", "zip", "sex"],
        "secret": "disease",
        "attacks": ATTACKS,
        "n_attacks": 60,
        "seed": 3,
        "hierarchies": {"zip": HIERARCHY},
    }
    expanded = run_attacks(
        records, release_records, _expanded(control, control_counts) if held_out else None, **settings
    ).to_dict()
    counted = run_attacks(
        original,
        release,
        control if held_out else None,
        original_counts=original_counts,
        release_counts=release_counts,
        control_counts=control_counts if held_out else None,
        **settings,
    ).to_dict()
    assert counted["settings"].pop("records") == len(records)
    assert counted == expanded
    assert expanded["singling_out"]["n_attacks"] == 60  # the sample size is stated


def test_counts_are_checked_and_count_as_records() -> None:
    rng = np.random.default_rng(1)
    original, counts = _grouped(_people(rng, 200))
    settings = {"quasi_identifiers": ["age", "zip"], "secret": "disease", "attacks": ["inference"]}
    with pytest.raises(ConfigurationError, match="original_counts: one non-negative integer per original row"):
        run_attacks(original, original, None, original_counts=counts[:-1], **settings)
    with pytest.raises(
        ConfigurationError, match="n_attacks: 201 attacks need at least as many original records, it holds 200"
    ):
        run_attacks(original, original, None, original_counts=counts, n_attacks=201, **settings)
    assert run_attacks(original, original, None, original_counts=counts, n_attacks=200, **settings)


def test_size_correction_in_row_blocks_equals_one_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A control too large for one (predicates × rows) matrix is counted in row blocks, to the same factor."""
    from privacy_plugins.core.attacks import singling_out
    from privacy_plugins.core.attacks.encoding import encode_release

    rng = np.random.default_rng(5)
    original, control = _people(rng, 300), _people(rng, 1500)
    for frame in (original, control):  # ages from a wide range: most records are unique
        frame["age"] = rng.integers(0, 3000, len(frame))
    columns = ["age", "zip", "sex", "disease"]
    release = encode_release(original, original, columns, {"zip": HIERARCHY}).distinct()
    table = release.encode(control).distinct()
    predicates = singling_out.multivariate_predicates(
        release, np.arange(4), 40, 3, np.random.default_rng(0), max_tries=4000
    )
    assert len(predicates) > 5
    whole = singling_out.size_correction(release, table, predicates, 300, np.random.default_rng(1))
    monkeypatch.setattr(singling_out, "_BLOCK", 1000)  # blocks of 1000 // len(predicates) rows
    blocks = singling_out.size_correction(release, table, predicates, 300, np.random.default_rng(1))
    assert blocks == whole and whole != 1.0
