"""One entry point for every anonymization algorithm, and the name → algorithm registry.

An algorithm is a class with a ``name``, an ``options`` schema (typed names,
defaults and allowed values, so the CLI and the release spec can build their
flags and keys from it) and ``run(request, **options)``. Registering it is one
line, ``register_anonymizer("mondrian", Mondrian)``; :func:`anonymize` then
validates the problem once, runs the algorithm and hands its output to
:func:`~privacy_plugins.core.anonymize.base.verify`, which re-measures every
model on the published rows — no algorithm can skip that.

An algorithm declares what it can do in its ``tags``, an :class:`AnonymizerTags`
(a frozen dataclass with defaults, like scikit-learn's estimator tags):
``works_on_snapshot`` (it solves a weighted snapshot, so a release can run inside
the database; it then offers ``solve_snapshot``), ``searches_lattice`` (the lattice
size is capped before any work), ``needs_hierarchies`` (every QI, not only the
non-numeric ones), ``linked_tables`` (a QIT and an ST), ``supported_models`` (a
:class:`ModelSupport`: the model kinds it can promise; a release spec asking others
is refused at load), ``partial_scope`` (it anonymizes part of the table and offers
``protected_models``), ``suppresses`` (it may suppress records) and ``works_per_block``
(it can anonymize Mondrian-style blocks of the table one by one: a
:class:`BlockAnonymizer`, run through :mod:`.block_path` in memory, in a process pool or on
an engine). Every caller
reads them through :func:`tags_of` — an algorithm without ``tags`` gets the
defaults — and nothing outside an algorithm's own file asks its name.

Example:
    >>> import pandas as pd
    >>> from privacy_plugins.core.hierarchies import Hierarchy
    >>> from privacy_plugins.core.models import KAnonymity
    >>> df = pd.DataFrame({"zip": ["47906", "47907", "47611", "47612"]})
    >>> h = Hierarchy.from_rows("zip", [[z, z[:4] + "*", "*"] for z in df["zip"]])
    >>> result = anonymize(df, quasi_identifiers=["zip"], hierarchies={"zip": h}, models=[KAnonymity(2)])
    >>> result.algorithm, result.details.levels, result.table["zip"].tolist()
    ('optimal', {'zip': 1}, ['4790*', '4790*', '4761*', '4761*'])
    >>> {"exhaustive", "mondrian", "optimal", "samarati"} <= set(anonymizer_names())
    True
"""

from __future__ import annotations

import difflib
import numbers
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import pandas as pd

from privacy_plugins.core.anonymize.base import AnonymizationRequest, AnonymizationResult, AnonymizedTable, verify
from privacy_plugins.core.anonymize.research_scope import published_subset, research_subset_request
from privacy_plugins.core.frame import validate_frame
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.core.models import EVERY_MODEL_KIND, PrivacyModel, bind_hierarchies
from privacy_plugins.core.parameters import check_integer, check_real, suppression_budget
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np

    from privacy_plugins.core.anonymize.snapshot import Snapshot
    from privacy_plugins.core.anonymize.snapshot_search import SnapshotSolution

__all__ = [
    "ALL_MODEL_KINDS",
    "DEFAULT_ALGORITHM",
    "Anonymizer",
    "AnonymizerOption",
    "AnonymizerTags",
    "BlockAnonymizer",
    "ModelSupport",
    "PartialScopeAnonymizer",
    "SnapshotAnonymizer",
    "anonymization_request",
    "anonymize",
    "anonymizer_names",
    "anonymizer_options",
    "get_anonymizer",
    "register_anonymizer",
    "snapshot_anonymizer",
    "tags_of",
]

#: The algorithm a release, the CLI and :func:`anonymize` use when none is named.
DEFAULT_ALGORITHM = "optimal"


@dataclass(frozen=True)
class AnonymizerOption:
    """One algorithm option: its name, type, default and (optionally) allowed values.

    ``flag`` is the option's command-line spelling without the dashes when it
    differs from the name (``"mondrian-mode"`` for Mondrian's ``mode``, a word
    too generic to stand alone among every algorithm's flags); by default the
    name with dashes (``suppressed_rows`` → ``--suppressed-rows``).

    Example:
        >>> AnonymizerOption("metric", str, "ncp", choices=("ncp", "lm")).validate("lm", algorithm="optimal")
        'lm'
        >>> AnonymizerOption("suppressed_rows", str, "remove").cli_flag
        '--suppressed-rows'
    """

    name: str
    type: type
    default: Any
    choices: tuple[Any, ...] = ()
    help: str = ""
    flag: str = ""

    @property
    def cli_flag(self) -> str:
        """The command-line flag, e.g. ``"--metric"``."""
        return "--" + (self.flag or self.name.replace("_", "-"))

    def validate(self, value: Any, *, algorithm: str) -> Any:
        """The value, checked against the type and choices (bools are not numbers)."""
        numeric = self.type in (int, float) and isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not (isinstance(value, self.type) or numeric):
            raise TypeError(
                f"{algorithm} option {self.name} must be {self.type.__name__}, got {type(value).__name__} {value!r}"
            )
        if self.choices and value not in self.choices:
            raise ConfigurationError(
                f"{self.name} must be one of {list(self.choices)} for algorithm {algorithm!r}, got {value!r}"
            )
        return value


#: Every model kind (the registry names of :data:`~privacy_plugins.core.models.MODEL_REGISTRY`).
ALL_MODEL_KINDS: frozenset[str] = EVERY_MODEL_KIND  # custom models registered later included


@dataclass(frozen=True)
class ModelSupport:
    """What an anonymizer can promise about the whole table it publishes (its tags' ``supported_models``).

    The release spec reads it when it is loaded, so a requirement the algorithm can never
    meet is refused before any data is read (no code asks an algorithm's name for that).

    Attributes:
        promises: the model kinds (registry names, ``PrivacyModel.config_name``) whose every
            threshold the published table meets — or the algorithm raises
            :class:`~privacy_plugins.errors.InfeasibleAnonymizationError`.
        needs_one_of: kinds of which at least one model must be asked (empty: none needed).
        one_sensitive_attribute: every model reading a sensitive attribute must read the same one.
        why: the reason, for the refusal message (what the algorithm does instead).

    Example:
        >>> from privacy_plugins.core.models import KAnonymity, TCloseness
        >>> ModelSupport(promises=frozenset({"k_anonymity"}), why="it compares class sizes").refusal(
        ...     [KAnonymity(5), TCloseness("disease", 0.2)]
        ... )
        "cannot promise t_closeness (0.2-closeness (auto distance) for 'disease'): it compares class sizes"
    """

    promises: frozenset[str] = ALL_MODEL_KINDS
    needs_one_of: frozenset[str] = frozenset()
    one_sensitive_attribute: bool = False
    why: str = ""
    research_subset: bool = False  # set from the tags' ``research_subset`` (AnonymizerTags does it)

    def refusal(self, models: Sequence[PrivacyModel]) -> str | None:
        """Why these models cannot be promised together (``None`` when they can)."""
        because = f": {self.why}" if self.why else ""
        for model in models:
            if model.judged_on_tables:  # never a promise: the release judges it on the candidate table
                continue
            if model.config_name not in self.promises:
                return f"cannot promise {model.config_name or type(model).__name__} ({model}){because}"
            if model.research_subset_column is not None and not self.research_subset:
                return (
                    f"cannot promise {model.config_name} ({model}): it does not publish a research subset alone "
                    "(its tags do not declare research_subset; the full-domain searches do)"
                )
        if self.needs_one_of and not any(model.config_name in self.needs_one_of for model in models):
            *others, last = sorted(self.needs_one_of)
            return f"needs a {', '.join(others) + ' or ' if others else ''}{last} model{because}"
        attributes = {model.sensitive_attribute for model in models if model.sensitive_attribute is not None}
        if self.one_sensitive_attribute and len(attributes) > 1:
            return f"protects one sensitive attribute, got models on {sorted(map(str, attributes))}{because}"
        return None


@dataclass(frozen=True)
class AnonymizerTags:
    """What an anonymizer declares about itself; every caller reads these instead of asking its name.

    In the manner of scikit-learn's estimator tags: a frozen dataclass with defaults, set
    on the anonymizer as ``tags`` (an anonymizer without one gets ``AnonymizerTags()``,
    through :func:`tags_of`, the only place that looks).

    Attributes:
        works_on_snapshot: it can solve a weighted snapshot (counts per distinct QI and model
            values) without the rows, so a release runs inside the database; the anonymizer
            is then a :class:`SnapshotAnonymizer` (``solve_snapshot``, ``snapshot_refusal``).
        searches_lattice: it enumerates the generalization lattice of the QIs' hierarchies
            (Π (height + 1) nodes), which is refused above the cap before any work.
        needs_hierarchies: every quasi-identifier needs a hierarchy (otherwise only the
            non-numeric ones do: numeric ones may be published as ranges).
        linked_tables: it publishes two tables joined by a group id (a QIT and an ST); the release history signs
            it by its QI tuples (``history.linked_signature``) and (c) does not leave records out of it.
        supported_models: the model kinds it can promise on the whole published table
            (:class:`ModelSupport`); a release spec asking others is refused at load.
        partial_scope: it anonymizes part of the table by design (sensitive-values) and
            says which models its output meets: the anonymizer is then a
            :class:`PartialScopeAnonymizer` (``protected_models``), and the re-check measures those.
        suppresses: it may suppress records (within ``suppression_limit``); ``False``: never.
        research_subset: it honours a model's research subset (δ-presence's ``subset_column``,
            :attr:`PrivacyModel.research_subset_column`): it searches the whole table (the
            population), judges every other model on the subset's rows only, and
            :func:`anonymize` publishes the subset alone, without the flag (issue 30). An
            anonymizer without it refuses such a model.
        works_per_block: blocks of the table, cut by :func:`~.cluster_blocks.split_blocks`, can be
            anonymized independently and their outputs published together (each block valid as one
            class of its own; the whole output is re-checked as always): the anonymizer is then a
            :class:`BlockAnonymizer` (``block_limit``, ``block_admissible``), and tables above its
            limit run block by block (:mod:`.block_path`) — locally or on an engine, each block a task.

    Raises:
        ValueError: ``works_on_snapshot`` or ``searches_lattice`` without ``needs_hierarchies``
            (a snapshot and a lattice are built from every quasi-identifier's hierarchy).

    Example:
        >>> AnonymizerTags().works_on_snapshot, AnonymizerTags().supported_models.promises == ALL_MODEL_KINDS
        (False, True)
    """

    works_on_snapshot: bool = False
    searches_lattice: bool = False
    needs_hierarchies: bool = False
    linked_tables: bool = False
    supported_models: ModelSupport = ModelSupport()
    partial_scope: bool = False
    suppresses: bool = True
    research_subset: bool = False
    works_per_block: bool = False

    def __post_init__(self) -> None:
        if self.research_subset != self.supported_models.research_subset:  # one declaration: the tag
            object.__setattr__(
                self, "supported_models", replace(self.supported_models, research_subset=self.research_subset)
            )
        if (self.works_on_snapshot or self.searches_lattice) and not self.needs_hierarchies:
            raise ValueError(
                "works_on_snapshot and searches_lattice need needs_hierarchies=True: a snapshot and a "
                "lattice are built from every quasi-identifier's hierarchy"
            )


class Anonymizer(Protocol):
    """An anonymization algorithm: a name, an options schema and ``run``.

    It may also carry ``tags`` (:class:`AnonymizerTags`); without them it gets the defaults.
    """

    @property
    def name(self) -> str:
        """The registered name (``"optimal"``, ``"mondrian"`` …)."""
        ...

    @property
    def options(self) -> tuple[AnonymizerOption, ...]:
        """The options ``run`` accepts besides the request."""
        ...

    @property
    def run(self) -> Callable[..., AnonymizedTable]:
        """``run(request, **options) -> AnonymizedTable`` with the schema's options as keywords.

        Raises :class:`~privacy_plugins.errors.InfeasibleAnonymizationError` when the
        models cannot be met.
        """
        ...


@runtime_checkable
class SnapshotAnonymizer(Anonymizer, Protocol):
    """An anonymizer tagged ``works_on_snapshot``: it solves a weighted snapshot without the rows."""

    def snapshot_refusal(self, options: Mapping[str, Any]) -> str | None:
        """Why these options need the rows (``None``: the snapshot suffices)."""
        ...

    def solve_snapshot(
        self,
        snapshot: Snapshot,
        models: Sequence[PrivacyModel],
        *,
        suppression_limit: float,
        n_sensitive: int,
        progress: Callable[[int, int], None] | None,
        **options: Any,
    ) -> SnapshotSolution:
        """The solution over the snapshot's units, equal to what ``run`` publishes from the records."""
        ...


@runtime_checkable
class PartialScopeAnonymizer(Anonymizer, Protocol):
    """An anonymizer tagged ``partial_scope``: it says which models its output must meet."""

    def protected_models(self, request: AnonymizationRequest, **options: Any) -> Sequence[PrivacyModel]:
        """The models the re-check measures instead of the request's."""
        ...


@runtime_checkable
class BlockAnonymizer(Anonymizer, Protocol):
    """An anonymizer tagged ``works_per_block``: it says how large a block is and which blocks it accepts."""

    def block_limit(self) -> int:
        """Most records per block; a larger table is cut (where an admissible cut exists)."""
        ...

    def block_admissible(self, units: AnonymizationRequest, weights: np.ndarray) -> Callable[[np.ndarray], bool]:
        """A test of whether some units (indices into ``units.table``) may form a block of their own.

        ``units.table`` holds the distinct combinations of QIs and model columns, ``weights`` the
        records of each; a block must be anonymizable alone (e.g. satisfy every model as one class).
        """
        ...


_DEFAULT_TAGS = AnonymizerTags()


def tags_of(anonymizer: object) -> AnonymizerTags:
    """The anonymizer's declared tags, or the defaults when it declares none (the one place that looks).

    Raises:
        TypeError: ``tags`` is not an :class:`AnonymizerTags`.
    """
    tags = getattr(anonymizer, "tags", _DEFAULT_TAGS)
    if not isinstance(tags, AnonymizerTags):
        raise TypeError(f"an anonymizer's tags must be an AnonymizerTags, got {type(tags).__name__} {tags!r}")
    return tags


_REGISTRY: dict[str, Callable[[], Anonymizer]] = {}


def register_anonymizer(name: str, factory: Callable[[], Anonymizer], *, replace: bool = False) -> None:
    """Make ``anonymize(..., algorithm=name)`` run ``factory()``'s anonymizer."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"an anonymizer name must be a non-empty string, got {name!r}")
    if name in _REGISTRY and not replace:
        raise ConfigurationError(f"an anonymizer named {name!r} is already registered")
    _REGISTRY[name] = factory


def anonymizer_names() -> tuple[str, ...]:
    """Every registered algorithm name, sorted."""
    return tuple(sorted(_REGISTRY))


def get_anonymizer(name: str) -> Anonymizer:
    """The anonymizer registered under ``name``.

    Raises:
        ConfigurationError: unknown name (the message lists the known names and the closest one).
        TypeError: its tags promise a method it does not have (``solve_snapshot``, ``protected_models``).
    """
    factory = _REGISTRY.get(name) if isinstance(name, str) else None
    if factory is None:
        close = difflib.get_close_matches(str(name), _REGISTRY, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(f"algorithm must be one of {list(anonymizer_names())}, got {name!r}{hint}")
    anonymizer = factory()
    tags = tags_of(anonymizer)
    missing = ""
    if tags.works_on_snapshot and not isinstance(anonymizer, SnapshotAnonymizer):
        missing = "SnapshotAnonymizer (works_on_snapshot)"
    elif tags.partial_scope and not isinstance(anonymizer, PartialScopeAnonymizer):
        missing = "PartialScopeAnonymizer (partial_scope)"
    elif tags.works_per_block and not isinstance(anonymizer, BlockAnonymizer):
        missing = "BlockAnonymizer (works_per_block)"
    if missing:
        raise TypeError(f"anonymizer {name!r} is tagged as a {missing} but does not implement it")
    return anonymizer


def snapshot_anonymizer(name: str) -> SnapshotAnonymizer | None:
    """The anonymizer registered under ``name`` when its tags say ``works_on_snapshot``, else ``None``."""
    anonymizer = get_anonymizer(name)
    return cast(SnapshotAnonymizer, anonymizer) if tags_of(anonymizer).works_on_snapshot else None


def _options(anonymizer: Anonymizer, given: Mapping[str, Any]) -> dict[str, Any]:
    schema = {option.name: option for option in anonymizer.options}
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise ConfigurationError(
            f"algorithm {anonymizer.name!r} has no option(s) {unknown}; its options: {sorted(schema)}"
        )
    return {name: option.validate(given.get(name, option.default), algorithm=anonymizer.name)
            for name, option in schema.items()}  # fmt: skip


def anonymizer_options(anonymizer: Anonymizer, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every option of ``anonymizer``: ``given`` checked against its schema, defaults for the rest.

    Raises:
        ConfigurationError: an unknown option or a value outside its choices.
    """
    return _options(anonymizer, given)


def account_for_columns(
    frame: pd.DataFrame, roles: AttributeRoles, models: Sequence[PrivacyModel], unlisted_columns: str
) -> pd.DataFrame:
    """Refuse (or drop, ``unlisted_columns="drop"``) the columns named in no role: none is published silently."""
    if unlisted_columns not in ("refuse", "drop"):
        raise ConfigurationError(f"unlisted_columns must be 'refuse' or 'drop', got {unlisted_columns!r}")
    unlisted = roles.unlisted(list(frame.columns), also=[c for m in models for c in m.columns])
    if not unlisted:
        return frame
    if unlisted_columns == "drop":
        return frame.drop(columns=unlisted)
    raise ConfigurationError(
        f"column(s) {unlisted!r} have no role; every column needs one (columns named nowhere used to be "
        "published unchanged): pass them in insensitive= (published unchanged), identifiers= (dropped), "
        "quasi_identifiers= or sensitive_attributes=, or pass unlisted_columns='drop'"
    )


def anonymization_request(
    table: object,
    *,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    suppression_limit: float = 0.0,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    insensitive: Sequence[Hashable] | None = None,
    unlisted_columns: str = "refuse",
) -> AnonymizationRequest:
    """The validated request :func:`anonymize` builds (its keywords but ``algorithm`` and the options).

    Also for callers that run an anonymizer another way, e.g. block by block on an engine
    (:mod:`~privacy_plugins.engines.blocks_in_engine`), so they validate exactly as :func:`anonymize`.
    """
    if not models:
        raise ConfigurationError("models must name at least one privacy model (e.g. KAnonymity(5))")
    for model in models:
        if not isinstance(model, PrivacyModel):
            raise TypeError(f"models must be PrivacyModel instances, got {type(model).__name__} {model!r}")
    # A model that measures along a hierarchy (personalized leakage over a generalized
    # sensitive column) takes it from ``hierarchies``, so the re-check uses it too.
    models = bind_hierarchies(models, hierarchies)
    named = [m.sensitive_attribute for m in models if m.sensitive_attribute is not None]
    sensitive = list(dict.fromkeys([*(sensitive_attributes or ()), *named]))
    roles = AttributeRoles(
        quasi_identifiers=quasi_identifiers,
        sensitive_attributes=sensitive,
        identifiers=identifiers,
        insensitive=() if insensitive is None else insensitive,
    )
    frame: pd.DataFrame = validate_frame(table)
    roles.check_columns(list(frame.columns))
    frame = with_derived_columns(frame, models)
    limit = check_real(suppression_limit, name="suppression_limit")
    if not 0.0 <= limit < 1.0:
        raise ConfigurationError(f"suppression_limit must be in [0, 1), got {suppression_limit!r}")
    for model in models:
        model.validate_against(frame)
        for column in model.columns:
            if column != model.sensitive_attribute and column in roles.named_columns:
                raise ConfigurationError(f"column {column!r} read by {model} already has another role")
    frame = account_for_columns(frame, roles, models, unlisted_columns)  # after the typos: those come first
    return AnonymizationRequest(
        table=frame,
        roles=roles,
        models=tuple(models),
        hierarchies=dict(hierarchies or {}),
        suppression_limit=limit,
        max_suppressed=suppression_budget(limit, len(frame)),
        seed=check_integer(seed, name="seed", minimum=0),
        progress=progress,
    )


def anonymize(
    table: pd.DataFrame,
    *,
    algorithm: str = DEFAULT_ALGORITHM,
    quasi_identifiers: Sequence[Hashable],
    models: Sequence[PrivacyModel],
    suppression_limit: float = 0.0,
    hierarchies: Mapping[Hashable, Hierarchy] | None = None,
    sensitive_attributes: Sequence[Hashable] | None = None,
    identifiers: Sequence[Hashable] = (),
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    insensitive: Sequence[Hashable] | None = None,
    unlisted_columns: str = "refuse",
    **options: Any,
) -> AnonymizationResult:
    """Anonymize ``table`` with a registered algorithm so that every model holds, then re-check it.

    Args:
        table: the raw table.
        algorithm: a registered name (:func:`anonymizer_names`): ``"optimal"``,
            ``"samarati"`` and ``"exhaustive"`` are the full-domain lattice searches.
        quasi_identifiers: the columns to anonymize.
        models: the privacy models to satisfy (e.g. ``[KAnonymity(5), DistinctLDiversity("disease", 2)]``).
        suppression_limit: fraction of records that may be suppressed, in [0, 1).
        hierarchies: column → :class:`Hierarchy` (full-domain recoding needs one per QI).
        sensitive_attributes: sensitive columns besides those the models name.
        identifiers: direct identifiers, dropped from the output.
        seed: integer ≥ 0 for randomized algorithms; reported with the result.
        progress: called as ``progress(done, total)`` by algorithms that report progress.
        insensitive: columns published unchanged. Every column of ``table`` must have a
            role (QI, sensitive, identifier, insensitive, or read by a model).
        unlisted_columns: ``"refuse"`` (default): a column with no role is a
            ``ConfigurationError`` naming it; ``"drop"``: such columns are left out of the output.
        **options: the algorithm's own options (``get_anonymizer(name).options``), e.g.
            ``metric="lm"`` or ``suppressed_rows="mark"`` for the lattice searches.

    Returns:
        An :class:`AnonymizationResult` whose models were re-measured on the output.

    Raises:
        ConfigurationError: unknown algorithm or option, bad parameters or roles (before any work).
        HierarchyError: a QI without the hierarchy the algorithm needs.
        InfeasibleAnonymizationError: the algorithm cannot satisfy the models within the limit.
        VerificationError: the output failed the independent re-check (nothing must be published).
    """
    started = time.perf_counter()
    anonymizer = get_anonymizer(algorithm)
    request = anonymization_request(
        table,
        quasi_identifiers=quasi_identifiers,
        models=models,
        suppression_limit=suppression_limit,
        hierarchies=hierarchies,
        sensitive_attributes=sensitive_attributes,
        identifiers=identifiers,
        seed=seed,
        progress=progress,
        insensitive=insensitive,
        unlisted_columns=unlisted_columns,
    )
    chosen = _options(anonymizer, options)
    request, subset_column = research_subset_request(request, anonymizer.name, tags_of(anonymizer).research_subset)
    output = None
    if tags_of(anonymizer).works_per_block:  # a large table is cut into blocks, each anonymized alone
        from privacy_plugins.core.anonymize.block_path import run_in_blocks

        output = run_in_blocks(cast(BlockAnonymizer, anonymizer), request, chosen)
    if output is None:
        output = anonymizer.run(request, **chosen)
    # An algorithm that protects only part of the table by design (sensitive-values) says
    # which models its output must meet instead; the re-check measures those.
    if tags_of(anonymizer).partial_scope:
        protected = cast(PartialScopeAnonymizer, anonymizer).protected_models(request, **chosen)
        request = replace(request, models=tuple(protected))
    result = verify(request, output, algorithm=anonymizer.name, seconds=time.perf_counter() - started)
    derived = [column for model in request.models for column in model.derived_columns(request.table.iloc[:0])]
    if derived:  # computed from the raw QIs for the models: never published
        result = replace(result, table=result.table.drop(columns=[c for c in derived if c in result.table.columns]))
    if subset_column is not None:
        result = published_subset(result, output.released, request.table, subset_column)
    return result


def with_derived_columns(frame: pd.DataFrame, models: Sequence[PrivacyModel]) -> pd.DataFrame:
    """``frame`` with the columns the models derive from the raw table (:meth:`PrivacyModel.derived_columns`).

    Raises:
        ConfigurationError: a derived column's name is already a column of the table.
    """
    derived: dict[Hashable, np.ndarray] = {}
    for model in models:
        derived.update(model.derived_columns(frame))
    if not derived:
        return frame
    taken = [column for column in derived if column in frame.columns]
    if taken:
        raise ConfigurationError(f"column(s) {taken!r} are reserved for the models' derived data; rename them")
    extended = frame.copy(deep=False)
    for column, values in derived.items():
        extended[column] = values
    return extended
