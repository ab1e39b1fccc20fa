"""Run the attacks on a candidate release: the one entry point of :mod:`privacy_plugins.core.attacks`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privacy_plugins.core.attacks.encoding import encode_release
from privacy_plugins.core.attacks.nearest import inference_successes, linkability_successes
from privacy_plugins.core.attacks.singling_out import (
    baseline_predicates,
    count_matches,
    multivariate_predicates,
    size_correction,
    univariate_predicates,
)
from privacy_plugins.core.attacks.stats import AttackResult
from privacy_plugins.core.coverage import covering_matrix
from privacy_plugins.core.hierarchies import Hierarchy, as_labels
from privacy_plugins.errors import ConfigurationError, UnknownColumnError

__all__ = ["ATTACKS", "AttackReport", "control_surrogate", "run_attacks"]

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

    Raises:
        ConfigurationError: a setting that does not fit (the message names it).
        UnknownColumnError: a column missing from a table.
    """
    qis = list(quasi_identifiers)
    chosen = _validate(original, release, control, qis, secret, attacks, n_attacks, confidence, n_cols)
    rng = np.random.default_rng(seed)
    control_kind = "held-out" if control is not None else "column-permuted surrogate"
    columns = [*qis, *([secret] if secret is not None else [])]
    if control is None:
        control = control_surrogate(original[columns], int(rng.integers(2**31)))
    first, second = _split(qis, linkability_split, chosen)
    results: dict[str, AttackResult] = {}
    for name in chosen:
        key = name.replace("-", "_")
        if name.startswith("singling-out"):
            results[key] = _singling_out(
                original,
                release,
                control,
                columns,
                hierarchies,
                n_attacks,
                n_cols if name == "singling-out" else 1,
                rng,
                confidence,
                key,
            )
        elif name == "linkability":
            results[key] = _linkability(
                original, release, control, first, second, hierarchies, n_attacks, rng, confidence
            )
        else:
            assert secret is not None
            results[key] = _inference(original, release, control, qis, secret, hierarchies, n_attacks, rng, confidence)
    settings: dict[str, Any] = {"confidence": confidence, "attacks": list(chosen)}
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
) -> list[str]:
    chosen = list(dict.fromkeys(attacks))
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown or not chosen:
        raise ConfigurationError(f"attacks: unknown {unknown!r}; choose among {list(ATTACKS)}")
    if not qis:
        raise ConfigurationError("quasi_identifiers: name at least one column the attacker knows")
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
        if not len(table):
            raise ConfigurationError(f"{label} has no records")
    for label in ("original", "control"):
        table = tables.get(label)
        if table is not None and len(table) < n_attacks:
            raise ConfigurationError(
                f"n_attacks: {n_attacks} attacks need at least as many {label} records, it holds {len(table)}"
            )
    return chosen


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
    original: pd.DataFrame,
    release: pd.DataFrame,
    control: pd.DataFrame,
    columns: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    n_attacks: int,
    width: int,
    rng: np.random.Generator,
    confidence: float,
    key: str,
) -> AttackResult:
    """Predicates from the deduplicated release, scored on the deduplicated original and control."""
    ori = original[columns].drop_duplicates(ignore_index=True)
    ctrl = control[columns].drop_duplicates(ignore_index=True)
    encoded = encode_release(release[columns].drop_duplicates(ignore_index=True), original, columns, hierarchies)
    positions = np.arange(len(columns))
    baseline = baseline_predicates(encoded, positions, n_attacks, width, rng)
    if width == 1:
        predicates = univariate_predicates(encoded, positions, n_attacks, rng)
    else:
        predicates = multivariate_predicates(encoded, positions, n_attacks, width, rng, max_tries=200 * n_attacks)
    targets, controls = encoded.encode(ori), encoded.encode(ctrl)
    successes = int((count_matches(encoded, targets, predicates) == 1).sum())
    base = int((count_matches(encoded, targets, baseline) == 1).sum())
    in_control = float((count_matches(encoded, controls, predicates) == 1).sum())
    in_control *= size_correction(encoded, controls, predicates, len(ori), rng)
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
    original: pd.DataFrame,
    release: pd.DataFrame,
    control: pd.DataFrame,
    first: list[Hashable],
    second: list[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    n_attacks: int,
    rng: np.random.Generator,
    confidence: float,
) -> AttackResult:
    """Nearest rows on each half; the random linker picks the same row once in ``len(release)``."""
    columns = [*first, *second]
    encoded = encode_release(release, original, columns, hierarchies)
    a = list(range(len(first)))
    b = list(range(len(first), len(columns)))
    counts = []
    for table in (original, control):
        rows = rng.choice(len(table), size=n_attacks, replace=False)
        counts.append(linkability_successes(encoded, encoded.encode(table.iloc[rows]), np.arange(n_attacks), a, b))
    return AttackResult.from_counts(
        "linkability",
        n_attacks=n_attacks,
        successes=counts[0],
        baseline=n_attacks / len(release),
        control=counts[1],
        confidence=confidence,
    )


def _inference(
    original: pd.DataFrame,
    release: pd.DataFrame,
    control: pd.DataFrame,
    qis: list[Hashable],
    secret: Hashable,
    hierarchies: Mapping[Hashable, Hierarchy] | None,
    n_attacks: int,
    rng: np.random.Generator,
    confidence: float,
) -> AttackResult:
    """The most frequent secret among the nearest rows; the random guesser draws a release row's secret."""
    encoded = encode_release(release, original, qis, hierarchies)
    secrets = encode_release(release, original, [secret], hierarchies)
    column = secrets.columns[0]
    numeric = pd.api.types.is_numeric_dtype(original[secret].dtype) and not pd.api.types.is_bool_dtype(
        original[secret].dtype
    )
    frequency = np.bincount(column.codes, minlength=len(column.labels)) / len(release)
    counts = []
    base = 0.0
    for table in (original, control):
        rows = rng.choice(len(table), size=n_attacks, replace=False)
        truth, distinct = pd.factorize(table[secret].iloc[rows], use_na_sentinel=False)
        right = _right_guesses(pd.Series(distinct, dtype=table[secret].dtype), column, numeric, hierarchies, secret)
        counts.append(
            inference_successes(
                encoded,
                encoded.encode(table.iloc[rows]),
                np.arange(n_attacks),
                list(range(len(qis))),
                column.codes,
                right,
                truth,
            )
        )
        if table is original:
            base = float((right[truth] @ frequency).sum())
    return AttackResult.from_counts(
        "inference", n_attacks=n_attacks, successes=counts[0], baseline=base, control=counts[1], confidence=confidence
    )


def _right_guesses(
    truth: pd.Series, column: Any, numeric: bool, hierarchies: Mapping[Hashable, Hierarchy] | None, secret: Hashable
) -> np.ndarray:
    """Boolean (distinct true values × release secret labels): the guess is right.

    A label is right when it covers the value; a numeric secret also when the guessed
    number is within :data:`TOLERANCE` of the truth, relative to the guess (Anonymeter's rule).
    """
    labels: pd.Index = column.labels
    right = covering_matrix(truth, labels, (hierarchies or {}).get(secret))
    if numeric:
        guess = column.numbers
        if not column.numeric:
            guess = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy(dtype=float)
        value = truth.to_numpy(dtype=float, na_value=np.nan)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            close = np.abs(guess[None, :] - value) <= TOLERANCE * np.abs(guess[None, :])
        right |= close
    missing = truth.isna().to_numpy()[:, None] & pd.isna(as_labels(pd.Series(labels, dtype=object))).to_numpy()[None, :]
    return np.asarray(right | missing)
