"""Run the attacks on a candidate release: the one entry point of :mod:`privacy_plugins.core.attacks`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from privacy_plugins.core.attacks.encoding import EncodedRelease, EncodedTable, encode_release
from privacy_plugins.core.attacks.nearest import inference_successes, linkability_successes
from privacy_plugins.core.attacks.singling_out import (
    baseline_predicates,
    count_matches,
    multivariate_predicates,
    size_correction,
    univariate_predicates,
)
from privacy_plugins.core.attacks.stats import AttackResult
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["ATTACKS", "AttackReport", "control_surrogate", "run_attacks"]

EncodedTableOrRelease = TypeVar("EncodedTableOrRelease", EncodedTable, EncodedRelease)

#: The attacks by their CLI name, in report order.
ATTACKS = ("singling-out", "singling-out-univariate", "linkability", "inference")
#: The attacks run unless told otherwise.
DEFAULT_ATTACKS = ("singling-out", "linkability", "inference")
#: A numeric secret guessed within this relative distance counts as right (Anonymeter's tolerance).
TOLERANCE = 0.05


@dataclass(frozen=True)
class AttackReport:
    """The attacks' results by report key (``singling_out``, ``linkability``, ``inference`` …), counts only."""

    results: dict[str, AttackResult]
    n_attacks: int
    seed: int
    control: str
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON in the shape of ``privacy-plugins attack --format json``."""
        out: dict[str, Any] = {key: result.to_dict() for key, result in self.results.items()}
        out["settings"] = {"n_attacks": self.n_attacks, "seed": self.seed, "control": self.control, **self.settings}
        return out


def control_surrogate(original: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Without a held-out control: each column of ``original`` permuted on its own.

    Its records keep every column's distribution but are nobody (their combinations are
    broken), so an attack on them measures what the marginals alone give. A held-out control
    also keeps the correlations a population model reveals, so it scores higher: the risk
    against this surrogate is an *over*-estimate, on the safe side for a gate. (A bootstrap
    of the original cannot serve: it redraws the released records themselves.)
    """
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {column: original[column].to_numpy()[rng.permutation(len(original))] for column in original.columns}
    )


def run_attacks(
    original: pd.DataFrame,
    release: pd.DataFrame,
    control: pd.DataFrame | None,
    *,
    quasi_identifiers: Sequence[Hashable],
    secret: Hashable | None,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
    n_attacks: int = 500,
    seed: int = 0,
    confidence: float = 0.95,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    linkability_split: tuple[Sequence[Hashable], Sequence[Hashable]] | None = None,
    n_cols: int = 3,
    original_counts: np.ndarray | None = None,
    release_counts: np.ndarray | None = None,
    control_counts: np.ndarray | None = None,
) -> AttackReport:
    """Attack ``release`` with ``original``'s records as targets and ``control``'s as the control.

    Args:
        original: the records the release was made from (the attacker's targets).
        release: the candidate (raw, generalized or suppressed values).
        control: records of the same population the release does not hold; ``None``: a
            per-column permutation of the original (:func:`control_surrogate`).
        quasi_identifiers: what the attacker knows of a target.
        secret: the column the inference attack guesses (not a QI); needed for ``inference``.
        attacks: names from :data:`ATTACKS`.
        n_attacks: targets (linkability, inference) and predicates (singling out) per attack.
        seed: every random choice derives from it (same seed, same report).
        confidence: of the risk's interval, in (0, 1).
        hierarchies: per column, the hierarchy the release generalizes along.
        linkability_split: the attacker's two column sets; default the QIs' two halves.
        n_cols: columns per multivariate singling-out predicate.
        original_counts: per original row, how many records it stands for (distinct rows with
            their counts, as an engine's ``GROUP BY`` returns them): only the distinct rows are
            read as values, the records are their integer codes repeated, so the report is the
            one of the expanded table, in its order (the same seed draws the same targets).
        release_counts: the same for the release.
        control_counts: the same for the control.

    Raises:
        ConfigurationError: a setting that does not fit (the message names it).
        UnknownColumnError: a column missing from a table.
    """
    qis = list(quasi_identifiers)
    counts = {
        "original": _counts(original_counts, original, "original"),
        "release": _counts(release_counts, release, "release"),
        "control": _counts(control_counts, control, "control"),
    }
    sizes = {
        label: _records(table, counts[label])
        for label, table in (("original", original), ("release", release), ("control", control))
    }
    chosen = _validate(original, release, control, qis, secret, attacks, n_attacks, confidence, n_cols, sizes)
    rng = np.random.default_rng(seed)
    control_kind = "held-out" if control is not None else "column-permuted surrogate"
    columns = [*qis, *([secret] if secret is not None else [])]
    first, second = _split(qis, linkability_split, chosen)
    encoded = _expanded(encode_release(release[columns], original, columns, hierarchies), counts["release"])
    targets = _expanded(encoded.encode(original[columns]), counts["original"])
    if control is None:
        controls = _permuted(targets, int(rng.integers(2**31)))
    else:
        controls = _expanded(encoded.encode(control[columns]), counts["control"])
    position = {column: i for i, column in enumerate(columns)}
    results: dict[str, AttackResult] = {}
    for name in chosen:
        key = name.replace("-", "_")
        if name.startswith("singling-out"):
            width = n_cols if name == "singling-out" else 1
            results[key] = _singling_out(encoded, targets, controls, n_attacks, width, rng, confidence, key)
        elif name == "linkability":
            halves = ([position[c] for c in first], [position[c] for c in second])
            results[key] = _linkability(encoded, targets, controls, halves, n_attacks, rng, confidence)
        else:
            known = [position[c] for c in qis]
            numeric = _is_number(original[secret])
            results[key] = _inference(
                encoded, targets, controls, known, position[secret], numeric, n_attacks, rng, confidence
            )
    settings: dict[str, Any] = {"confidence": confidence, "attacks": list(chosen)}
    if any(count is not None for count in counts.values()):  # read as distinct rows with their counts
        settings["records"] = sizes["original"]
    if "linkability" in chosen:
        settings["linkability_columns"] = [[str(c) for c in first], [str(c) for c in second]]
    return AttackReport(results, n_attacks, seed, control_kind, settings)


def _validate(
    original: pd.DataFrame,
    release: pd.DataFrame,
    control: pd.DataFrame | None,
    qis: list[Hashable],
    secret: Hashable | None,
    attacks: Sequence[str],
    n_attacks: int,
    confidence: float,
    n_cols: int,
    sizes: Mapping[str, int],
) -> list[str]:
    chosen = list(dict.fromkeys(attacks))
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown or not chosen:
        raise ConfigurationError(f"attacks: unknown {unknown!r}; choose among {list(ATTACKS)}")
    if not qis:
        raise ConfigurationError("quasi_identifiers: name at least one column the attacker knows")
    if len(set(qis)) < len(qis):
        raise ConfigurationError(f"quasi_identifiers: a column is named twice in {qis!r}")
    if secret is not None and secret in qis:
        raise ConfigurationError(
            f"secret: {secret!r} is a quasi-identifier; the secret must be a column the attacker does not know"
        )
    if "inference" in chosen and secret is None:
        raise ConfigurationError("secret: the inference attack needs the secret column")
    if "linkability" in chosen and len(qis) < 2:
        raise ConfigurationError(
            "quasi_identifiers: linkability needs at least two, to split between two attackers' tables"
        )
    if isinstance(n_attacks, bool) or not isinstance(n_attacks, (int, np.integer)) or n_attacks < 1:
        raise ConfigurationError(f"n_attacks must be an integer >= 1, got {n_attacks!r}")
    if not 0 < confidence < 1:
        raise ConfigurationError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(n_cols, bool) or not isinstance(n_cols, (int, np.integer)) or n_cols < 1:
        raise ConfigurationError(f"n_cols must be an integer >= 1, got {n_cols!r}")
    columns = [*qis, *([secret] if secret is not None else [])]
    tables = {"original": original, "release": release, **({} if control is None else {"control": control})}
    for label, table in tables.items():
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"{label} must be a pandas DataFrame, got {type(table).__name__}")
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise UnknownColumnError(f"{label} lacks column(s) {missing!r}")
        if not sizes[label]:
            raise ConfigurationError(f"{label} has no records")
    for label in ("original", "control"):
        if label in tables and sizes[label] < n_attacks:
            raise ConfigurationError(
                f"n_attacks: {n_attacks} attacks need at least as many {label} records, it holds {sizes[label]}"
            )
    return chosen


def _counts(counts: np.ndarray | None, table: pd.DataFrame | None, label: str) -> np.ndarray | None:
    """``counts`` checked against ``table``: one non-negative integer per row."""
    if counts is None:
        return None
    if table is None:
        raise ConfigurationError(f"{label}_counts: given without a {label} table")
    values = np.asarray(counts)
    if values.shape != (len(table),) or not np.issubdtype(values.dtype, np.integer) or (values < 0).any():
        raise ConfigurationError(f"{label}_counts: one non-negative integer per {label} row ({len(table)} rows)")
    return values.astype(np.int64)


def _records(table: pd.DataFrame | None, counts: np.ndarray | None) -> int:
    """The records ``table`` stands for: its rows, or the sum of their counts."""
    if counts is not None:
        return int(counts.sum())
    return 0 if table is None else len(table)


def _expanded(table: EncodedTableOrRelease, counts: np.ndarray | None) -> EncodedTableOrRelease:
    """The encoded distinct rows repeated by their counts (codes only: the values were read once)."""
    return table if counts is None else table.take(np.repeat(np.arange(len(counts)), counts))


def _permuted(targets: EncodedTable, seed: int) -> EncodedTable:
    """:func:`control_surrogate` on the encoded targets: each column's codes permuted on its own.

    The same permutations as :func:`control_surrogate` with the same seed, so the attacks score
    the same records; the codes keep pointing at the targets' distinct values.
    """
    rng = np.random.default_rng(seed)
    codes = tuple(code[rng.permutation(targets.n_rows)] for code in targets.codes)
    return EncodedTable(targets.n_rows, codes, targets.numbers, targets.covered)


def _split(
    qis: list[Hashable], given: tuple[Sequence[Hashable], Sequence[Hashable]] | None, chosen: list[str]
) -> tuple[list[Hashable], list[Hashable]]:
    if given is None:
        half = (len(qis) + 1) // 2
        return qis[:half], qis[half:]
    first, second = list(given[0]), list(given[1])
    if "linkability" in chosen:
        if not first or not second or set(first) & set(second):
            raise ConfigurationError("linkability_split: two non-empty, disjoint column sets")
        outside = [c for c in [*first, *second] if c not in qis]
        if outside:
            raise ConfigurationError(f"linkability_split: {outside!r} are not quasi-identifiers")
    return first, second


def _singling_out(
    encoded: EncodedRelease,
    targets: EncodedTable,
    controls: EncodedTable,
    n_attacks: int,
    width: int,
    rng: np.random.Generator,
    confidence: float,
    key: str,
) -> AttackResult:
    """Predicates from the deduplicated release, scored on the deduplicated original and control."""
    release, ori, ctrl = encoded.distinct(), targets.distinct(), controls.distinct()
    positions = np.arange(len(release.columns))
    baseline = baseline_predicates(release, positions, n_attacks, width, rng)
    if width == 1:
        predicates = univariate_predicates(release, positions, n_attacks, rng)
    else:
        predicates = multivariate_predicates(release, positions, n_attacks, width, rng, max_tries=200 * n_attacks)
    successes = int((count_matches(release, ori, predicates) == 1).sum())
    base = int((count_matches(release, ori, baseline) == 1).sum())
    in_control = float((count_matches(release, ctrl, predicates) == 1).sum())
    in_control *= size_correction(release, ctrl, predicates, ori.n_rows, rng)
    note = (
        f"only {len(predicates)} of {n_attacks} predicates single out a release record"
        if len(predicates) < n_attacks
        else ""
    )
    return AttackResult.from_counts(
        key,
        n_attacks=n_attacks,
        successes=successes,
        baseline=base,
        control=min(in_control, float(n_attacks)),
        confidence=confidence,
        note=note,
    )


def _linkability(
    encoded: EncodedRelease,
    targets: EncodedTable,
    controls: EncodedTable,
    halves: tuple[list[int], list[int]],
    n_attacks: int,
    rng: np.random.Generator,
    confidence: float,
) -> AttackResult:
    """Nearest rows on each half; the random linker picks the same row once in ``len(release)``."""
    counts = []
    for table in (targets, controls):
        rows = rng.choice(table.n_rows, size=n_attacks, replace=False)
        counts.append(linkability_successes(encoded, table, rows, *halves))
    return AttackResult.from_counts(
        "linkability",
        n_attacks=n_attacks,
        successes=counts[0],
        baseline=n_attacks / encoded.n_rows,
        control=counts[1],
        confidence=confidence,
    )


def _inference(
    encoded: EncodedRelease,
    targets: EncodedTable,
    controls: EncodedTable,
    known: list[int],
    secret: int,
    numeric: bool,
    n_attacks: int,
    rng: np.random.Generator,
    confidence: float,
) -> AttackResult:
    """The most frequent secret among the nearest rows; the random guesser draws a release row's secret."""
    column = encoded.columns[secret]
    frequency = np.bincount(column.codes, minlength=len(column.labels)) / encoded.n_rows
    counts = []
    base = 0.0
    for table in (targets, controls):
        rows = rng.choice(table.n_rows, size=n_attacks, replace=False)
        right = _right_guesses(encoded, table, secret, numeric)
        truth = table.codes[secret][rows]
        counts.append(inference_successes(encoded, table, rows, known, column.codes, right, truth))
        if table is targets:
            base = float((right[truth] @ frequency).sum())
    return AttackResult.from_counts(
        "inference", n_attacks=n_attacks, successes=counts[0], baseline=base, control=counts[1], confidence=confidence
    )


def _right_guesses(encoded: EncodedRelease, table: EncodedTable, secret: int, numeric: bool) -> np.ndarray:
    """Boolean (the table's distinct secrets × release secret labels): guessing the label is right.

    A label is right when it covers the value (a numeric secret compares numbers); a numeric
    secret also when the guessed number is within :data:`TOLERANCE` of the truth, relative to
    the guess (Anonymeter's rule). A missing secret is guessed right by a missing one.
    """
    column = encoded.columns[secret]
    value = table.numbers[secret][:, None]
    if column.numeric:
        guess = column.numbers[None, :]
        right = (value == guess) | (np.isnan(value) & np.isnan(guess))
    else:
        covered = table.covered[secret]
        assert covered is not None
        right = covered.copy()
        guess = np.where(column.low == column.high, column.low, np.nan)[None, :]
    if numeric:
        with np.errstate(invalid="ignore"):
            right |= np.abs(guess - value) <= TOLERANCE * np.abs(guess)
    return np.asarray(right)


def _is_number(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype))
