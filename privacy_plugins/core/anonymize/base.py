"""What every anonymizer receives and returns, and the verification no anonymizer can skip.

An anonymizer (:class:`~privacy_plugins.core.anonymize.registry.Anonymizer`)
gets a validated :class:`AnonymizationRequest` and returns an
:class:`AnonymizedTable`: the table to publish, which of its rows are released,
what was suppressed, the utility and its own :class:`AnonymizationDetails`. Only
:func:`verify` turns that into an :class:`AnonymizationResult`: it re-measures
every requested model on the table exactly as published (marked rows included) with the core's
:class:`EquivalenceClasses` and checks the row accounting, and
:func:`~privacy_plugins.core.anonymize.registry.anonymize` calls it after every
run, so a result that has not been re-checked does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privacy_plugins.core.anonymize.linked_cover import covering_classes, record_models
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import ModelResult, PrivacyModel
from privacy_plugins.core.partition import EquivalenceClasses
from privacy_plugins.core.results import to_jsonable
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import VerificationError

__all__ = [
    "AnonymizationDetails",
    "AnonymizationRequest",
    "AnonymizationResult",
    "AnonymizedTable",
    "LatticeDetails",
    "LinkedTable",
    "VerificationError",
    "levels_text",
    "linked_classes",
    "summary_measures",
    "verify",
]


def summary_measures(models: tuple[PrivacyModel, ...], results: tuple[ModelResult, ...]) -> dict[str, float]:
    """The re-measured k / l / c / t / leakage of the output, keyed by each model's ``report_key``."""
    return {model.report_key: result.observed for model, result in zip(models, results, strict=True)}


@dataclass(frozen=True)
class AnonymizationRequest:
    """The validated problem every anonymizer receives from :func:`anonymize`.

    Attributes:
        table: the raw table (validated; identifiers still present: anonymizers drop them).
        roles: quasi-identifiers, sensitive attributes (those the models name included)
            and identifiers.
        models: the privacy models to satisfy (at least one).
        hierarchies: column → hierarchy (may be empty for algorithms that need none).
        suppression_limit: fraction of records that may be suppressed, in [0, 1).
        max_suppressed: ⌊suppression_limit · rows⌋ (:func:`~privacy_plugins.core.parameters.suppression_budget`).
        seed: seed for randomized algorithms (reported with the result).
        progress: called as ``progress(done, total)`` by algorithms that report progress.
        numeric_domains: when ``table`` is one block of a larger table (:mod:`.block_path`), each
            numeric QI's (min, max) over that table, so NCP is normalized as for the whole table.
    """

    table: pd.DataFrame
    roles: AttributeRoles
    models: tuple[PrivacyModel, ...]
    hierarchies: Mapping[Hashable, Hierarchy]
    suppression_limit: float
    max_suppressed: int
    seed: int = 0
    progress: Callable[[int, int], None] | None = None
    numeric_domains: Mapping[Hashable, tuple[float, float]] = field(default_factory=dict)

    @property
    def quasi_identifiers(self) -> tuple[Hashable, ...]:
        """The columns to anonymize."""
        return tuple(self.roles.quasi_identifiers)

    @property
    def model_columns(self) -> tuple[Hashable, ...]:
        """Every column some model reads besides the QIs, once each."""
        return tuple(dict.fromkeys(column for model in self.models for column in model.columns))

    @property
    def minimum_class_size(self) -> int:
        """The smallest class every model accepts (the k of C_AVG)."""
        return max(model.minimum_class_size for model in self.models)


@dataclass(frozen=True)
class AnonymizationDetails:
    """Algorithm-specific facts of a result (lattice levels, partitions, clusters …)."""

    kind: ClassVar[str] = ""

    def headline(self) -> str:
        """One line for summaries: what this algorithm produced (its node, partitions, clusters, rounds …).

        Each details class says it in its own terms, so a summary never asks which algorithm ran.
        """
        return ""

    def summary_rows(self, seconds: float) -> list[tuple[str, str]]:
        """Label / value rows of a text summary (the CLI's): this algorithm's own facts, none by default.

        ``seconds`` is the run's wall time, for a row that says how long the work took.
        """
        return []

    def recoding_levels(self) -> dict[str, int]:
        """The hierarchy level of each QI when the whole table was recoded one level per QI (full-domain).

        Empty for local recoding (partitions, clusters, buckets …); a release's ``Candidate.levels``.
        """
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, with the ``kind`` first."""
        return to_jsonable({"kind": self.kind, **to_jsonable(self)})


def levels_text(levels: Mapping[Hashable, int]) -> str:
    """A full-domain node as ``age=1, zipcode=2``."""
    return ", ".join(f"{name}={level}" for name, level in levels.items())


@dataclass(frozen=True)
class LatticeDetails(AnonymizationDetails):
    """Full-domain recoding: the chosen lattice node and how the search got there.

    Attributes:
        levels: the hierarchy level of each QI (the node).
        heights: the height of each QI's hierarchy.
        nodes_checked: lattice nodes evaluated.
        lattice_size: nodes in the lattice.
    """

    kind: ClassVar[str] = "lattice"

    levels: Mapping[Hashable, int]
    heights: Mapping[Hashable, int]
    nodes_checked: int
    lattice_size: int

    def headline(self) -> str:
        """The node and how much of the lattice was checked."""
        return f"node {levels_text(self.levels)}; {self.nodes_checked:,} of {self.lattice_size:,} lattice nodes checked"

    def summary_rows(self, seconds: float) -> list[tuple[str, str]]:
        """How much of the lattice was searched, and how long it took."""
        return [("nodes checked", f"{self.nodes_checked:,} of {self.lattice_size:,} in {seconds:.2f} s")]

    def recoding_levels(self) -> dict[str, int]:
        """The chosen node, QI → level."""
        return {str(column): int(level) for column, level in self.levels.items()}


@dataclass(frozen=True, eq=False)
class AnonymizedTable:
    """An anonymizer's output before verification.

    Attributes:
        table: the table to publish: identifiers dropped, QIs anonymized; suppressed
            rows removed, or kept and marked.
        released: boolean mask over ``table``'s rows: the records actually published
            (all true unless suppressed rows are kept marked).
        suppressed: records suppressed.
        utility: information-loss metrics of the output.
        details: what only this algorithm knows.
        qi_codes: optionally, per QI column, ``(codes, labels)`` with ``labels[codes]``
            equal to the published column: :func:`verify` then groups by the codes
            (after checking that they spell the published values) instead of hashing
            every published value again.
        linked: bucketization (Anatomy) only: the sensitive table (ST) published beside
            ``table`` (the QIT), and the group-id column that links them.
    """

    table: pd.DataFrame
    released: np.ndarray
    suppressed: int
    utility: UtilityMetrics
    details: AnonymizationDetails = field(default_factory=AnonymizationDetails)
    qi_codes: Mapping[Hashable, tuple[np.ndarray, np.ndarray]] | None = None
    linked: LinkedTable | None = None


@dataclass(frozen=True, eq=False)
class LinkedTable:
    """A second published table joined to the first by a group id (Anatomy's sensitive table, ST).

    Attributes:
        table: one row per (group, sensitive value) with the number of records, ``count``.
        group_column: the column, in both tables, holding the group id.
    """

    table: pd.DataFrame
    group_column: str


@dataclass(frozen=True)
class AnonymizationResult:
    """An anonymized table that has been re-checked by the core measures.

    Attributes:
        algorithm: the registered name of the algorithm that produced it.
        table: the published table: identifiers dropped, QIs generalized, suppressed
            rows removed (or marked with ``*`` when asked).
        quasi_identifiers: the anonymized columns.
        rows_in: records in the input.
        rows_out: records published (not suppressed).
        suppressed: records suppressed; ``rows_in == rows_out + suppressed + out_of_scope``.
        dropped_identifiers: identifier columns removed from the output.
        utility: information-loss metrics of the output.
        models: every requested model re-measured on the published rows.
        measures: the re-measured values keyed by report key (``k``, ``l``, ``c``, ``t``, ``max_leakage``).
        seed: the seed the algorithm ran with.
        seconds: wall time of the anonymization.
        details: algorithm-specific facts, e.g. :class:`LatticeDetails`.
        linked: Anatomy: the sensitive table linked to ``table`` by a group id (``None`` otherwise).
        out_of_scope: input records outside the research subset a δ-presence release publishes
            (never published; 0 without one; issue 30).
    """

    algorithm: str
    table: pd.DataFrame
    quasi_identifiers: tuple[Hashable, ...]
    rows_in: int
    rows_out: int
    suppressed: int
    dropped_identifiers: tuple[Hashable, ...]
    utility: UtilityMetrics
    models: tuple[ModelResult, ...]
    measures: Mapping[str, float]
    seed: int = 0
    seconds: float = 0.0
    details: AnonymizationDetails = field(default_factory=AnonymizationDetails)
    linked: LinkedTable | None = None
    out_of_scope: int = 0

    @property
    def passed(self) -> bool:
        """True when every requested model holds on the published rows."""
        return all(result.passed for result in self.models)

    def to_dict(self) -> dict[str, Any]:
        """The report (everything but the table itself) as plain JSON; algorithm facts under ``details``."""
        report: dict[str, Any] = {
            "algorithm": self.algorithm,
            "passed": self.passed,
            "quasi_identifiers": list(self.quasi_identifiers),
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "suppressed": self.suppressed,
            "out_of_scope": self.out_of_scope,
            "dropped_identifiers": list(self.dropped_identifiers),
            **{name: getattr(self.utility, name) for name in ("ncp", "lm", "discernibility", "c_avg")},
            "height": self.utility.height,
            "precision": self.utility.precision,
            "ileft": self.utility.ileft,
            "seed": self.seed,
            "seconds": self.seconds,
            **self.measures,
            "models": list(self.models),
            "details": self.details.to_dict(),
        }
        return to_jsonable(report)


def _spells(column: pd.Series, codes: np.ndarray, labels: np.ndarray) -> bool:
    """Whether ``labels[codes]`` is ``column``, value for value (``labels`` distinct).

    A Categorical column is compared through its categories and codes (no string is
    touched per row); any other column value by value.
    """
    if codes.shape != (len(column),) or not pd.Index(labels, dtype=object).is_unique:
        return False
    values = column.array
    if isinstance(values, pd.Categorical):
        categories = values.categories.to_numpy(dtype=object)
        return (
            categories.shape == labels.shape
            and bool((categories == labels).all())
            and bool((values.codes >= 0).all())
            and np.array_equal(values.codes, codes)
        )
    return bool((labels[codes] == column.to_numpy(dtype=object)).all())


def _published_classes(
    output: AnonymizedTable, quasi_identifiers: tuple[Hashable, ...], *, algorithm: str
) -> EquivalenceClasses:
    """The classes of the published table, from the anonymizer's codes once they are shown to spell it."""
    table = output.table.reset_index(drop=True)
    if output.qi_codes is None:
        return EquivalenceClasses.from_frame(table, list(quasi_identifiers))
    parts = []
    for column in quasi_identifiers:
        codes, labels = output.qi_codes[column]
        # Distinct labels and labels[codes] == the column: grouping by codes is grouping by values.
        if not _spells(table[column], codes, labels):
            raise VerificationError(
                f"{algorithm}: the codes given for {column!r} do not match its published values; "
                "nothing may be published"
            )
        parts.append((codes, len(labels)))
    return EquivalenceClasses.from_codes(table, tuple(quasi_identifiers), parts)


def _as_labels(table: pd.DataFrame, columns: Sequence[Hashable]) -> pd.DataFrame:
    """``table`` with its Categorical ``columns`` as plain object labels.

    An anonymizer may publish QIs as Categoricals, cheap to build from its codes and
    to re-check; users get the labels as every algorithm gives them (and as CSV and
    Parquet writers store text), converted once the re-check has passed.
    """
    categorical = {c for c in columns if isinstance(table[c].dtype, pd.CategoricalDtype)}
    if not categorical:
        return table
    # One constructor over Series (copy=False: no copy, no consolidation) instead of a
    # shallow copy and a setitem per column.
    published: dict[Hashable, pd.Series] = {}
    for column in table.columns:
        series = table[column]
        if column in categorical:
            values = series.array  # a Categorical; codes ≥ 0, as verify checked
            # A numpy take with intp indices: about 2x faster than Categorical.astype or int8 indices.
            labels = values.categories.to_numpy(dtype=object).take(values.codes.astype(np.intp))
            series = pd.Series(labels, index=table.index, dtype=object, copy=False)  # fresh: no copy needed
        published[column] = series
    labelled = pd.DataFrame(published, index=table.index, copy=False)
    labelled.columns = table.columns
    return labelled


def verify_classes(
    classes: EquivalenceClasses | None,
    models: Sequence[PrivacyModel],
    *,
    rows_in: int,
    rows_out: int,
    suppressed: int,
    max_suppressed: int,
    algorithm: str,
) -> tuple[ModelResult, ...]:
    """The core's re-check of an anonymizer's output, over the classes measured on it as published.

    One form for every path: :func:`verify` measures the classes of a table in memory; a
    release on the weighted snapshot measures them from the snapshot generalized to the chosen
    node (``engines.full_domain_in_engine``). ``classes`` is ``None`` only when the accounting
    already fails (nothing is measured then).

    Raises:
        VerificationError: rows in ≠ rows out + suppressed, more suppressed than allowed, or a
            model fails on the published classes (a bug in the anonymizer; nothing may be published).
    """
    if rows_in != rows_out + suppressed or suppressed < 0 or classes is None:
        raise VerificationError(
            f"{algorithm}: {rows_in} rows in but {rows_out} published + {suppressed} suppressed; "
            "nothing may be published"
        )
    if suppressed > max_suppressed:
        raise VerificationError(
            f"{algorithm}: suppressed {suppressed} records, more than the limit allows ({max_suppressed})"
        )
    checked = tuple(model.evaluate(classes) for model in models)
    failed = [result.model for result in checked if not result.passed]
    if failed:
        raise VerificationError(f"the anonymized table failed the re-check of {failed}; nothing may be published")
    return checked


def verify(
    request: AnonymizationRequest, output: AnonymizedTable, *, algorithm: str, seconds: float
) -> AnonymizationResult:
    """Re-measure every model on the table as published and check the accounting; the only way to a result.

    Raises:
        VerificationError: rows in ≠ rows out + suppressed, an identifier or QI column is
            wrong in the output, or a model fails on the published table (a bug in the
            anonymizer; nothing may be published).
    """
    rows_in = len(request.table)
    released_mask = np.asarray(output.released, dtype=bool)
    if released_mask.shape != (len(output.table),):
        raise VerificationError(f"{algorithm}: the released mask does not cover the {len(output.table)} output rows")
    rows_out = int(released_mask.sum())
    leaked = [column for column in request.roles.identifiers if column in output.table.columns]
    missing = [column for column in request.quasi_identifiers if column not in output.table.columns]
    if leaked or missing:
        raise VerificationError(f"{algorithm}: identifier columns {leaked} in the output, QIs {missing} missing")
    # Measure the table exactly as published: rows kept but marked as suppressed (all QIs ``*``)
    # are published too, so they form one more class that must satisfy every model.
    recheck: EquivalenceClasses | None = None
    # A pair's models reading a per-record QIT column (the release history's set H(t)) are judged on what
    # covers each exact QI tuple (every group holding it), the others on the groups.
    per_record = record_models(request.models, list(output.table.columns)) if output.linked is not None else []
    covered: EquivalenceClasses | None = None
    if rows_in == rows_out + output.suppressed:  # (else verify_classes says so before anything is measured)
        if output.linked is not None:
            try:
                recheck = linked_classes(
                    output.table,
                    output.linked.table,
                    output.linked.group_column,
                    request.quasi_identifiers,
                    request.roles.sensitive_attributes,
                )
                if per_record:
                    columns = {c for m in per_record for c in m.columns if c in output.table.columns}
                    covered = covering_classes(
                        output.table, output.linked.table, output.linked.group_column,
                        request.quasi_identifiers, sorted(columns, key=str),
                    )  # fmt: skip
            except VerificationError as exc:
                raise VerificationError(f"{algorithm}: {exc}") from None
        else:
            recheck = _published_classes(output, request.quasi_identifiers, algorithm=algorithm)
    accounting: dict[str, Any] = {
        "rows_in": rows_in,
        "rows_out": rows_out,
        "suppressed": output.suppressed,
        "max_suppressed": request.max_suppressed,
        "algorithm": algorithm,
    }
    on_groups = [m for m in request.models if all(m is not r for r in per_record)]
    measured = dict(zip(map(id, on_groups), verify_classes(recheck, on_groups, **accounting), strict=True))
    if per_record:
        measured.update(zip(map(id, per_record), verify_classes(covered, per_record, **accounting), strict=True))
    checked = tuple(measured[id(m)] for m in request.models)
    assert recheck is not None
    return AnonymizationResult(
        algorithm=algorithm,
        table=output.table if output.qi_codes is None else _as_labels(output.table, list(output.qi_codes)),
        quasi_identifiers=request.quasi_identifiers,
        rows_in=rows_in,
        rows_out=rows_out,
        suppressed=output.suppressed,
        dropped_identifiers=tuple(request.roles.identifiers),
        utility=output.utility,
        models=checked,
        measures={"k": float(recheck.sizes.min()), **summary_measures(request.models, checked)},
        seed=request.seed,
        seconds=seconds,
        details=output.details,
        linked=output.linked,
    )


def linked_classes(
    qit: pd.DataFrame,
    st: pd.DataFrame,
    group_column: str,
    quasi_identifiers: Sequence[Hashable],
    sensitive_attributes: Sequence[Hashable],
) -> EquivalenceClasses:
    """The classes an attacker sees in a QIT + ST pair: one per group, with the group's sensitive values.

    Checks that every QIT row joins exactly one group and that each group's ST counts add
    up to its QIT rows; then every QI is replaced by the group id, so the models measure
    each group (k: group size; l: the group's values), whatever the exact QIs.

    Raises:
        VerificationError: the pair does not join (or the QIT holds a sensitive column).
    """
    sensitive = [c for c in sensitive_attributes if c in st.columns]
    leaked = [c for c in sensitive_attributes if c in qit.columns]
    if group_column not in qit.columns or group_column not in st.columns or "count" not in st.columns or leaked:
        raise VerificationError(
            f"the QIT and ST must both hold {group_column!r} (ST also 'count') and the QIT no sensitive "
            f"column (found {leaked}); nothing may be published"
        )
    qit_groups = qit[group_column].to_numpy()
    rows_per_group = {g: int(c) for g, c in pd.Series(qit_groups).value_counts().items()}
    counted = {g: int(c) for g, c in st.groupby(group_column, sort=False)["count"].sum().items()}
    if rows_per_group != counted or pd.isna(qit_groups).any():
        raise VerificationError(
            "QIT rows and ST counts disagree per group (each QIT row must join exactly one "
            "group of the ST); nothing may be published"
        )
    repeats = st["count"].to_numpy(dtype=np.int64)
    view = pd.DataFrame({c: np.repeat(st[c].to_numpy(), repeats) for c in sensitive})
    groups = np.repeat(st[group_column].to_numpy(), repeats)
    for q in quasi_identifiers:
        view[q] = groups
    return EquivalenceClasses.from_frame(view, list(quasi_identifiers))
