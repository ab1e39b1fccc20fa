"""Issue 31: the attacks against a naive loop oracle, the control logic, the estimators and bad input."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.attacks import AttackResult, control_surrogate, run_attacks
from privacy_plugins.core.attacks.encoding import encode_release
from privacy_plugins.core.attacks.nearest import inference_successes, linkability_successes
from privacy_plugins.core.attacks.run import _right_guesses
from privacy_plugins.core.attacks.singling_out import (
    IN,
    baseline_predicates,
    count_matches,
    multivariate_predicates,
    release_as_table,
    univariate_predicates,
)
from privacy_plugins.core.attacks.stats import Rate, residual, wilson
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

ZIPS = ["47906", "47907", "47610", "47611"]
HIERARCHY = Hierarchy.from_rows("zip", [[z, z[:4] + "*", z[:3] + "**", "*"] for z in ZIPS])


# ---------------------------------------------------------------- the naive oracle (loops, no numpy)


def _label(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _interval(label: str) -> tuple[float, float, bool] | None:
    """(low, high, half_open) of a plain number or a range label; None otherwise."""
    text = label
    half_open = text.endswith(")")
    if text.startswith("["):
        text = text[1:-1]
    parts = text.split("-")
    try:
        if len(parts) == 2:
            return float(parts[0]), float(parts[1]), half_open
        if len(parts) == 1:
            return float(parts[0]), float(parts[0]), False
    except ValueError:
        return None
    return None


#: Each zip's labels at every level of the hierarchy.
ANCESTORS = {z: {z, z[:4] + "*", z[:3] + "**", "*"} for z in ZIPS}


def naive_covers(label: str, value: object, hierarchy: Hierarchy | None) -> bool:
    if label in ("*", _label(value)):
        return True
    if hierarchy is not None and label in ANCESTORS.get(_label(value), ()):
        return True
    if (isinstance(value, (int, float)) and label.startswith("[")) or re.fullmatch(r"\d+-\d+", label):
        bounds = _interval(label)
        if bounds is not None and isinstance(value, (int, float)):
            low, high, half_open = bounds
            return low <= value < high if half_open else low <= value <= high
    return False


def naive_distance(value: object, entry: object, numeric: bool, span: float, hierarchy: Hierarchy | None) -> float:
    if numeric:
        if pd.isna(value) and pd.isna(entry):
            return 0.0
        if pd.isna(value) or pd.isna(entry):
            return 1.0
        return min(abs(float(value) - float(entry)) / span, 1.0)  # type: ignore[arg-type]
    label = _label(entry)
    if naive_covers(label, value, hierarchy):
        return 0.0
    bounds = _interval(label)
    if bounds is not None and isinstance(value, (int, float)) and not pd.isna(value):
        low, high, _ = bounds
        return min(max((max(low - value, 0) + max(value - high, 0)) / span, 1e-6), 1.0)
    return 1.0


def naive_spans(original: pd.DataFrame, release: pd.DataFrame, columns: list[str]) -> dict[str, float]:
    spans = {}
    for column in columns:
        numbers = [float(v) for v in original[column] if isinstance(v, (int, float, np.number)) and not pd.isna(v)]
        for entry in release[column]:
            bounds = _interval(_label(entry))
            if bounds is not None and not pd.isna(entry):
                numbers += [bounds[0], bounds[1]]
        spread = max(numbers) - min(numbers) if numbers else 0.0
        spans[column] = spread if spread > 0 else 1.0
    return spans


def naive_nearest(target: dict, release: list[dict], columns: list[str], numeric: dict, spans: dict) -> list[int]:
    distances = []
    for row in release:
        total = 0.0
        for column in columns:
            hierarchy = HIERARCHY if column == "zip" else None
            total += naive_distance(target[column], row[column], numeric[column], spans[column], hierarchy)
        distances.append(total)
    least = min(distances)
    return [i for i, d in enumerate(distances) if d <= least + 1e-6]


# ---------------------------------------------------------------- tables


def tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """An original, a control, and a partly generalized release of the original (ranges, labels, *)."""
    rng = np.random.default_rng(seed)

    def draw(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(20, 60, n),
                "zip": rng.choice(ZIPS, n),
                "sex": rng.choice(["f", "m"], n),
                "disease": rng.choice(["flu", "cold", "hiv"], n),
            }
        )

    original, control = draw(24), draw(24)
    decade = (original["age"] // 10) * 10
    ranges = "[" + decade.astype(str) + "-" + (decade + 9).astype(str) + "]"
    generalize = rng.random(24) < 0.6
    release = pd.DataFrame(
        {
            "age": np.where(generalize, ranges, original["age"].astype(str)),
            "zip": np.where(generalize, original["zip"].str[:4] + "*", original["zip"]),
            "sex": np.where(rng.random(24) < 0.2, "*", original["sex"]),
            "disease": original["disease"],
        }
    )
    return original, control, release


QIS = ["age", "zip", "sex"]


# ---------------------------------------------------------------- oracle tests


@pytest.mark.parametrize(("seed", "generalized"), [(0, True), (1, True), (2, False)])
def test_nearest_attacks_match_the_naive_oracle(seed: int, generalized: bool) -> None:
    original, control, release = tables(seed)
    if not generalized:  # numbers on both sides: distances are numeric gaps
        release = release.assign(age=original["age"] + np.random.default_rng(seed).integers(-3, 4, len(original)))
    columns = [*QIS, "disease"]
    encoded = encode_release(release, original, columns, {"zip": HIERARCHY})
    numeric = {c: c == "age" and not generalized for c in columns}  # a generalized age is text: labels
    spans = naive_spans(original, release, columns)
    published = release.to_dict("records")
    for table in (original, control):
        encoded_table = encoded.encode(table)
        rows = np.arange(len(table))
        # linkability: halves [age, zip] and [sex]
        expected = 0.0
        for target in table.to_dict("records"):
            a = set(naive_nearest(target, published, ["age", "zip"], numeric, spans))
            b = set(naive_nearest(target, published, ["sex"], numeric, spans))
            expected += len(a & b) / (len(a) * len(b))
        got = linkability_successes(encoded, encoded_table, rows, [0, 1], [2])
        assert got == pytest.approx(expected)
        # inference of disease from the three QIs: the most frequent value among the nearest rows
        expected = 0.0
        for target in table.to_dict("records"):
            near = naive_nearest(target, published, QIS, numeric, spans)
            votes: dict[str, int] = {}
            for i in near:
                votes[published[i]["disease"]] = votes.get(published[i]["disease"], 0) + 1
            best = [v for v, n in votes.items() if n == max(votes.values())]
            expected += sum(v == target["disease"] for v in best) / len(best)
        right = _right_guesses(encoded, encoded_table, 3, numeric=False)
        truth = encoded_table.codes[3]
        got = inference_successes(encoded, encoded_table, rows, [0, 1, 2], encoded.columns[3].codes, right, truth)
        assert got == pytest.approx(expected)


def test_blocks_of_targets_give_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Halves with different numbers of groups are walked in the same blocks of targets."""
    from privacy_plugins.core.attacks import nearest

    original, control, release = tables(4)
    encoded = encode_release(release, original, [*QIS, "disease"], {"zip": HIERARCHY})
    table, rows = encoded.encode(control), np.arange(len(control))
    right = _right_guesses(encoded, table, 3, numeric=False)
    whole = (
        linkability_successes(encoded, table, rows, [0, 1], [2]),
        inference_successes(encoded, table, rows, [0, 1, 2], encoded.columns[3].codes, right, table.codes[3]),
    )
    one, two = nearest.Groups(encoded, [0, 1]), nearest.Groups(encoded, [2])
    assert one.n > 2 * two.n
    monkeypatch.setattr(nearest, "_BLOCK", one.n * two.n)  # joint counts kept; halves' blocks would differ
    blocked = (
        linkability_successes(encoded, table, rows, [0, 1], [2]),
        inference_successes(encoded, table, rows, [0, 1, 2], encoded.columns[3].codes, right, table.codes[3]),
    )
    assert blocked == pytest.approx(whole)


def naive_matches(predicate: tuple, labels: dict, records: list[dict], columns: list[str], numeric: dict) -> int:
    cols, ops, operands = predicate
    count = 0
    for row in records:
        ok = True
        for c, op, v in zip(cols, ops, operands, strict=True):
            if c < 0:
                continue
            name = columns[c]
            if numeric[name]:
                x = row[name]
                ok &= {0: x <= v, 1: x >= v, 2: x == v, 3: x != v, 4: x < v, 5: x > v}[int(op)]
            else:
                covers = naive_covers(labels[name][int(v)], row[name], HIERARCHY if name == "zip" else None)
                ok &= covers if op == IN else not covers
        count += ok
    return count


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("generalized", [True, False])
def test_singling_out_counts_match_the_naive_oracle(seed: int, generalized: bool) -> None:
    original, control, release = tables(seed)
    if not generalized:
        release = original.copy()
    columns = [*QIS, "disease"]
    deduplicated = release.drop_duplicates(ignore_index=True)
    encoded = encode_release(deduplicated, original, columns, {"zip": HIERARCHY})
    numeric = {c.name: c.numeric for c in encoded.columns}
    labels = {c.name: list(c.labels) for c in encoded.columns}
    rng = np.random.default_rng(seed)
    positions = np.arange(len(columns))
    sets = [
        multivariate_predicates(encoded, positions, 15, 2, rng, max_tries=5000),
        univariate_predicates(encoded, positions, 15, rng),
        baseline_predicates(encoded, positions, 15, 2, rng),
    ]
    assert len(sets[0]) > 0
    for kind, predicates in enumerate(sets):
        for table in (deduplicated, original.drop_duplicates(ignore_index=True), control):
            source = release_as_table(encoded) if table is deduplicated else encoded.encode(table)
            got = count_matches(encoded, source, predicates)
            records = table.to_dict("records")
            expected = []
            for i in range(len(predicates)):
                p = (predicates.columns[i], predicates.ops[i], predicates.operands[i])
                if table is deduplicated and not numeric["age"]:
                    # in the release a label matches only itself
                    expected.append(
                        sum(
                            all(
                                c < 0 or ((_label(row[columns[c]]) == labels[columns[c]][int(v)]) == (op == IN))
                                for c, op, v in zip(*p, strict=True)
                            )
                            for row in records
                        )
                    )
                else:
                    expected.append(naive_matches(p, labels, records, columns, numeric))
            assert got.tolist() == expected
            if kind < 2 and table is deduplicated:
                assert (got == 1).all()  # every attack predicate singles out one release row


# ---------------------------------------------------------------- control logic and estimators


def unique_population(n: int, seed: int) -> pd.DataFrame:
    """People unique on each QI half (two high-cardinality QIs per half) with a secret tied to nothing."""
    rng = np.random.default_rng(seed)
    offset = seed * 10 * n  # each population's values are its own
    return pd.DataFrame(
        {
            "a": rng.permutation(n) * 3 + offset,
            "b": rng.choice([f"b{seed}_{i}" for i in range(n)], n, replace=False),
            "c": rng.permutation(n) * 7 + offset,
            "d": rng.choice([f"d{seed}_{i}" for i in range(n)], n, replace=False),
            "secret": rng.choice([f"s{i}" for i in range(50)], n),
        }
    )


def test_a_copy_of_the_original_scores_about_one_and_an_independent_table_about_zero() -> None:
    original, control = unique_population(400, 0), unique_population(400, 1)
    independent = unique_population(400, 2)
    kwargs = dict(quasi_identifiers=["a", "b", "c", "d"], secret="secret", n_attacks=200, seed=0)
    attacks = ["singling-out", "singling-out-univariate", "linkability", "inference"]
    copy = run_attacks(original, original.copy(), control, attacks=attacks, **kwargs)
    for key in ("singling_out", "singling_out_univariate", "linkability", "inference"):
        assert copy.results[key].risk > 0.9, key
    other = run_attacks(original, independent, control, attacks=attacks, **kwargs)
    for key in ("singling_out", "singling_out_univariate", "linkability", "inference"):
        result = other.results[key]
        assert result.ci[0] == 0.0 and result.risk < 0.1, key


def test_wilson_and_the_residual_risk_follow_anonymeter() -> None:
    # Anonymeter's own test values (tests/test_confidence.py): 1000 trials at 95%.
    for successes, value, error in [(850, 0.849, 0.022), (0, 0.002, 0.002), (1000, 0.998, 0.002)]:
        rate = wilson(1000, successes, 0.95)
        assert round(rate.value, 3) == value and round(rate.error, 3) == error
    risk = residual(Rate(0.9, 0.02), Rate(0.85, 0.02))
    assert round(risk.value, 3) == 0.333 and round(risk.error, 2) == 0.16
    assert residual(Rate(0.9, 0.0), Rate(1.0, 0.0)) == Rate(0.0, 1.0)
    result = AttackResult.from_counts(
        "inference", n_attacks=100, successes=90, baseline=10, control=20, confidence=0.95
    )
    assert result.ci[0] <= result.risk <= result.ci[1] and result.upper == result.ci[1]
    alone = AttackResult.from_counts(
        "inference", n_attacks=100, successes=90, baseline=10, control=None, confidence=0.95
    )
    assert alone.risk == pytest.approx(wilson(100, 90, 0.95).value)


def test_same_seed_same_report_and_no_value_in_it() -> None:
    original, control, release = tables(5)
    kwargs = dict(quasi_identifiers=QIS, secret="disease", n_attacks=20, seed=7, hierarchies={"zip": HIERARCHY})
    first = run_attacks(original, release, control, **kwargs).to_dict()
    assert first == run_attacks(original, release, control, **kwargs).to_dict()
    text = json.dumps(first)
    for value in [*ZIPS, "flu", "cold", "hiv", *[str(a) for a in original["age"]]]:
        assert f'"{value}"' not in text


def test_without_a_control_a_column_permuted_surrogate_is_used() -> None:
    original = unique_population(100, 3)
    surrogate = control_surrogate(original, 0)
    assert sorted(surrogate["a"]) == sorted(original["a"]) and not surrogate["a"].equals(original["a"])
    report = run_attacks(original, original, None, quasi_identifiers=["a", "b"], secret="secret", n_attacks=50)
    assert report.control == "column-permuted surrogate"
    assert report.results["linkability"].risk > 0.9


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        (dict(secret="zip"), ConfigurationError, "secret"),
        (dict(n_attacks=25), ConfigurationError, "n_attacks"),
        (dict(quasi_identifiers=["age", "nope"]), UnknownColumnError, "nope"),
        (dict(attacks=["guessing"]), ConfigurationError, "attacks"),
        (dict(confidence=1.5), ConfigurationError, "confidence"),
        (dict(quasi_identifiers=["age", "zip", "age"]), ConfigurationError, "named twice"),
        (dict(quasi_identifiers=["age"], attacks=["linkability"]), ConfigurationError, "linkability"),
    ],
)
def test_bad_input_names_the_setting(change: dict, error: type, words: str) -> None:
    original, control, release = tables(0)
    kwargs = {"quasi_identifiers": QIS, "secret": "disease", "n_attacks": 10, **change}
    with pytest.raises(error, match=words):
        run_attacks(original, release, control, **kwargs)


def test_numeric_secret_guess_within_tolerance_counts() -> None:
    original = pd.DataFrame({"q": ["x", "y"], "income": [100.0, 200.0]})
    release = pd.DataFrame({"q": ["x", "y"], "income": [103.0, 260.0]})
    encoded = encode_release(release, original, ["q", "income"])
    table = encoded.encode(original)
    right = _right_guesses(encoded, table, 1, numeric=True)
    assert right.tolist() == [[True, False], [False, False]]
    assert math.isclose(
        inference_successes(encoded, table, np.arange(2), [0], encoded.columns[1].codes, right, table.codes[1]), 1.0
    )
