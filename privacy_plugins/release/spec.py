"""ReleaseSpec: one declarative description of a release, from YAML or Python, validated up front.

Everything a release needs — where the data comes from, the role of each
column, the hierarchies, the privacy requirements, the algorithm, where the
result goes and where the reports go — in one object. Unknown keys, bad numbers
and contradictory settings fail here, before any data is read; column checks
that need the data run in the first release step.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from privacy_plugins.core.anonymize import DEFAULT_ALGORITHM, get_anonymizer, tags_of
from privacy_plugins.core.hierarchies import (
    DATA_FREE_BUILDERS,
    HIERARCHY_BUILDERS,
    Hierarchy,
    build_hierarchy,
    check_config_shape,
    hierarchy_files,
    load_hierarchies,
    read_hierarchy,
)
from privacy_plugins.core.io import check_encoding
from privacy_plugins.core.models import (
    L_VARIANTS,
    T_DISTANCES,
    PrivacyModel,
    bind_hierarchies,
    check_model_roles,
    models_from_entries,
    requirement_models,
)
from privacy_plugins.core.parameters import check_fraction, check_integer, suppression_budget
from privacy_plugins.core.roles import AttributeRoles
from privacy_plugins.engines.spark_session import check_spark_settings, is_spark_path
from privacy_plugins.errors import ConfigurationError, HierarchyError, PopulationMismatchError
from privacy_plugins.release.connections import mask_password
from privacy_plugins.release.history_spec import HistorySpec
from privacy_plugins.release.population_spec import PopulationSpec
from privacy_plugins.release.pseudonym_keys import PseudonymizeSpec
from privacy_plugins.release.working_names import check_destination_table

__all__ = [
    "AlgorithmSpec",
    "DestinationSpec",
    "ReleaseSpec",
    "ReportSpec",
    "Requirements",
    "SourceSpec",
]


def _check_keys(section: str, given: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigurationError(f"unknown key {key!r} in {section}{hint} Allowed: {list(allowed)}")


def _mapping(section: str, value: object) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{section} must be a mapping, got {type(value).__name__}")
    return value


def _columns(section: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigurationError(f"{section} must be a list of column names, got {value!r}")
    return tuple(str(v) for v in value)


def merge_patch(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON Merge Patch (RFC 7396): mappings merge, ``None`` removes a key, anything else replaces.

    Example:
        >>> merge_patch({"requirements": {"k": 5, "l": 2}}, {"requirements": {"k": 10, "l": None}})
        {'requirements': {'k': 10}}
    """
    merged = dict(base)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged


def _path(base: Path, value: object) -> Path:
    path = Path(str(value)).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _unresolved_path(base: Path, value: object) -> Path:
    """Absolute, the parent resolved but not the last part: a Spark release's folder is a link to its version."""
    path = Path(str(value).rstrip("/") or "/").expanduser()
    path = path if path.is_absolute() else base / path
    return path.parent.resolve() / path.name


def _has_second_statement(query: str) -> bool:
    r"""Whether ``query`` holds a ``;`` outside quoted literals and names (in a comment too: erring on refusal).

    Read three ways — standard SQL quoting ('' and "" doubled inside); with backslash
    escapes and ``#`` comments (MySQL, PostgreSQL's ``E'…'``); with dollar quoting
    (PostgreSQL, DuckDB ``$$…$$``) — and refused when any reading finds one: a text that
    one dialect reads as a literal another may run as code.

    Example:
        >>> _has_second_statement("SELECT * FROM people WHERE note = 'a;b'")
        False
        >>> _has_second_statement("SELECT * FROM people; DROP TABLE people")
        True
        >>> _has_second_statement("-- it's\nSELECT 'a'; DROP TABLE t; --'")
        True
        >>> _has_second_statement("SELECT $$'$$; DROP TABLE t; SELECT $$'$$")
        True
    """
    return any(_semicolon_outside(query, dialect) for dialect in ("standard", "backslash", "dollar"))


_DOLLAR_TAG = re.compile(r"\$[A-Za-z_]*\$")


def _semicolon_outside(query: str, dialect: str) -> bool:
    """Whether ``query`` read with ``dialect``'s quoting has a ``;`` outside literals (see above)."""
    position = 0
    while position < len(query):
        char = query[position]
        tag = _DOLLAR_TAG.match(query, position) if dialect == "dollar" and char == "$" else None
        if tag is not None:
            end = query.find(tag.group(), tag.end())
            if end < 0:  # unterminated: the rest is read as code
                return ";" in query[position:]
            position = end + len(tag.group())
        elif char in "'\"":
            end = position + 1
            while True:
                end = query.find(char, end)
                if end < 0:  # unterminated: the rest is read as code
                    return ";" in query[position:]
                if dialect == "backslash" and _escaped(query, end):
                    end += 1
                    continue
                if query.startswith(char * 2, end):
                    end += 2
                    continue
                break
            position = end + 1
        elif (
            query.startswith("--", position)
            or query.startswith("/*", position)
            or (dialect == "backslash" and char == "#")
        ):
            closing = "*/" if query.startswith("/*", position) else "\n"
            found = query.find(closing, position + (1 if char == "#" else 2))
            end = len(query) if found < 0 else found + len(closing)
            if ";" in query[position:end]:
                return True
            position = end
        elif char == ";":
            return True
        else:
            position += 1
    return False


def _escaped(text: str, position: int) -> bool:
    """Whether the character at ``position`` follows an odd number of backslashes."""
    count = 0
    while position - count - 1 >= 0 and text[position - count - 1] == "\\":
        count += 1
    return count % 2 == 1


@dataclass(frozen=True)
class SourceSpec:
    """Where the raw table comes from: a file, a SQL table/query, or the generated demo census."""

    path: Path | None = None
    sep: str | None = None
    encoding: str = "utf-8"  # of a CSV file
    url: str | None = None
    table: str | None = None
    query: str | None = None
    generate: str | None = None
    rows: int = 5_000
    seed: int = 0
    conn_id: str | None = None  # a named connection, resolved when reading (release/connections.py)
    duckdb: Path | None = None
    max_rows_in_memory: int = 20_000_000
    out_of_core_bytes: int = 1_000_000_000
    spark: str | None = None
    spark_settings: Mapping[str, Any] | None = None

    KEYS = (
        "path", "sep", "encoding", "url", "table", "query", "generate", "rows", "seed", "conn_id",
        "duckdb", "max_rows_in_memory", "out_of_core_bytes", "spark", "spark_settings",
    )  # fmt: skip

    def __post_init__(self) -> None:
        kinds = [k for k in ("path", "url", "conn_id", "duckdb", "spark", "generate") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ConfigurationError(
                f"source needs exactly one of path, url, conn_id, duckdb, spark or generate; got {kinds or 'none'}"
            )
        if check_spark_settings(self.spark_settings, setting="source.spark_settings") and self.spark is None:
            raise ConfigurationError("source.spark_settings needs a spark: source")
        if kinds[0] in ("url", "conn_id", "duckdb") and (self.table is None) == (self.query is None):
            raise ConfigurationError(f"a {kinds[0]} source needs exactly one of table or query")
        if self.query is not None:
            if not isinstance(self.query, str) or not self.query.strip(" \t\r\n;"):
                raise ConfigurationError(f"source.query must be a SELECT statement, got {self.query!r}")
            query = self.query.strip().rstrip(";").rstrip()  # a trailing ';' is fine
            # A line comment on the last line would swallow the ')' of the subquery the query is run in.
            object.__setattr__(self, "query", query + "\n" if "--" in query.rsplit("\n", 1)[-1] else query)
            if _has_second_statement(self.query):
                raise ConfigurationError(
                    "source.query must be one SELECT statement, but it has a ';' followed by more; nothing was "
                    "sent to the database (put any other statement elsewhere)"
                )
        check_encoding(self.encoding, setting="source.encoding")
        check_integer(self.max_rows_in_memory, name="source.max_rows_in_memory", minimum=1)
        check_integer(self.out_of_core_bytes, name="source.out_of_core_bytes", minimum=0)
        if self.generate is not None and self.generate != "census":
            raise ConfigurationError(f"source.generate knows only 'census', got {self.generate!r}")
        check_integer(self.rows, name="source.rows")
        check_integer(self.seed, name="source.seed", minimum=0)


@dataclass(frozen=True)
class Requirements:
    """The privacy requirements every release must meet before anything is published.

    In YAML, ``requirements:`` is a list of models (each ``{name: {parameters}}``, a
    registered name or ``module:Class``), or a mapping with the keyword shorthands
    (``k``, ``l``, ``l_variant``, ``c``, ``t``, ``t_distance``, ``bound``, ``bound_column``),
    ``models:`` (that list) and ``suppression_limit``. The shorthands expand to models with
    :func:`~privacy_plugins.core.models.requirement_models` and the listed models follow
    them (two models with one check name are refused).
    """

    k: int | None = None
    l: float | None = None
    l_variant: str = "distinct"
    c: float | None = None
    t: float | None = None
    t_distance: str = "auto"
    bound: float | None = None
    bound_column: str | None = None
    suppression_limit: float = 0.0
    listed: tuple[PrivacyModel, ...] = ()  # the YAML ``models:`` list (or the whole list form)

    KEYS = ("k", "l", "l_variant", "c", "t", "t_distance", "bound", "bound_column", "suppression_limit", "models")

    def __post_init__(self) -> None:
        if self.l_variant not in L_VARIANTS:
            raise ConfigurationError(
                f"requirements.l_variant must be one of {list(L_VARIANTS)}, got {self.l_variant!r}"
            )
        if self.t_distance not in T_DISTANCES:
            raise ConfigurationError(
                f"requirements.t_distance must be one of {list(T_DISTANCES)}, got {self.t_distance!r}"
            )
        if self.l_variant == "recursive" and self.l is not None and self.c is None:
            raise ConfigurationError("requirements.l_variant 'recursive' needs requirements.c")
        try:  # the models' own constructors validate the shorthands' values: one set of rules
            self.models(("a sensitive attribute",))
        except (ConfigurationError, TypeError) as exc:
            message = str(exc).splitlines()[0]
            key = message.split(" ", 1)[0]
            if not message.startswith("requirements"):
                message = f"requirements.{message}" if key in self.KEYS else f"requirements: {message}"
            raise ConfigurationError(message) from None
        limit = check_fraction(self.suppression_limit, name="requirements.suppression_limit")
        if limit >= 1.0:
            raise ConfigurationError(f"requirements.suppression_limit must be in [0, 1), got {limit!r}")
        shorthands = (self.k, self.l, self.t, self.bound, self.bound_column)
        if all(value is None for value in shorthands) and not self.listed:
            raise ConfigurationError(
                "requirements must list a model or set at least one of k, l, t, bound or bound_column"
            )

    @classmethod
    def from_value(cls, value: object) -> Requirements:
        """From the YAML section: a list of models, or a mapping (shorthands, ``models:``, ``suppression_limit``)."""
        if isinstance(value, list):
            return cls(listed=tuple(models_from_entries(value, setting="requirements")))
        values = dict(_mapping("requirements", value))
        _check_keys("requirements", values, cls.KEYS)
        if "models" in values:
            values["listed"] = tuple(models_from_entries(values.pop("models"), setting="requirements.models"))
        return cls(**values)

    def models(self, sensitive_attributes: tuple[str, ...]) -> list[PrivacyModel]:
        """The privacy models: the shorthands expanded (l, t, bounds: each sensitive attribute), then the listed."""
        return requirement_models(
            sensitive_attributes=sensitive_attributes,
            k=self.k,
            l=self.l,
            l_variant=self.l_variant,
            c=self.c if self.l_variant == "recursive" else None,
            t=self.t,
            t_distance=self.t_distance,  # type: ignore[arg-type]  # validated in __post_init__
            bound=self.bound,
            bound_column=self.bound_column,
            models=self.listed,
        )


@dataclass(frozen=True)
class AlgorithmSpec:
    """The anonymization algorithm (any registered name) and its options, validated against its schema.

    In YAML the options sit beside the name, e.g. ``algorithm: {name: optimal, metric: lm}``
    or ``algorithm: {name: mondrian, mode: relaxed, seed: 7}``; ``seed`` seeds the
    randomized choices of the algorithms that make any (it is reported with the release).
    """

    name: str = DEFAULT_ALGORITHM
    options: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        try:
            anonymizer = get_anonymizer(self.name)
        except ConfigurationError as exc:
            raise ConfigurationError(f"algorithm.name {str(exc).removeprefix('algorithm ')}") from None
        schema = {option.name: option for option in anonymizer.options}
        for key, value in self.options.items():
            if key not in schema:
                close = difflib.get_close_matches(str(key), schema, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigurationError(
                    f"unknown key {key!r} in algorithm for {self.name!r}{hint} Allowed: {['name', 'seed', *schema]}"
                )
            try:
                schema[key].validate(value, algorithm=self.name)
            except (TypeError, ConfigurationError) as exc:
                raise ConfigurationError(f"algorithm.{key}: {exc}") from None
        check_integer(self.seed, name="algorithm.seed", minimum=0)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> AlgorithmSpec:
        """Build from the YAML section: ``name``, optional ``seed``, the rest are the algorithm's options."""
        options = dict(values)
        name = options.pop("name", DEFAULT_ALGORITHM)
        seed = options.pop("seed", 0)
        return cls(name=str(name), options=options, seed=seed)

    def option(self, name: str) -> Any:
        """An option's value as given, else the algorithm's default (``None`` when it has no such option)."""
        if name in self.options:
            return self.options[name]
        defaults = {option.name: option.default for option in get_anonymizer(self.name).options}
        return defaults.get(name)

    @property
    def needs_hierarchies(self) -> bool:
        """Whether every quasi-identifier needs a hierarchy (the algorithm's tags say) or only non-numeric ones."""
        return tags_of(get_anonymizer(self.name)).needs_hierarchies


_DESTINATION_KINDS = ("duckdb", "parquet", "url", "conn_id", "spark")
_SPARK_TABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")


def _spark_table_name(target: str) -> str:
    """The release's name for a ``spark:`` target: a table's last part, or a folder's name without ``.parquet``."""
    if not is_spark_path(target):
        if not _SPARK_TABLE.fullmatch(target):
            raise ConfigurationError(
                f"destination.spark: {target!r} is neither a table name ([catalog.][database.]table, letters, "
                "digits and '_') nor a folder path (with a '/')"
            )
        return target.rsplit(".", 1)[-1]
    if "://" in target:
        raise ConfigurationError(
            f"destination.spark: {target!r} is not a local path; a Parquet folder is published by swapping a "
            "symbolic link, which needs a local (or mounted) filesystem: publish to a catalog table instead"
        )
    if target.lower().endswith(".csv"):
        raise ConfigurationError(f"destination.spark: {target!r}: a Spark release is published as Parquet, not CSV")
    name = Path(target.rstrip("/")).name
    return re.sub(r"[^A-Za-z0-9_]", "_", name[: -len(".parquet")] if name.lower().endswith(".parquet") else name)


@dataclass(frozen=True)
class DestinationSpec:
    """Where the release is published: a DuckDB file (default), a Parquet folder, a SQL URL, a connection or Spark.

    ``conn_id`` names a connection (Airflow's, or ``AIRFLOW_CONN_<ID>``) resolved only when
    connecting, so its password is never part of the spec (see release/connections.py).
    ``spark`` is a catalog table name or a local Parquet folder path written by Spark
    (``spark_settings`` as for the source; :mod:`privacy_plugins.release.spark_destination`);
    its ``table`` defaults to the table's or folder's name.
    """

    table: str = ""
    duckdb: Path | None = None
    parquet: Path | None = None
    url: str | None = None
    conn_id: str | None = None
    spark: str | None = None
    spark_settings: Mapping[str, Any] | None = None

    KEYS = ("table", "duckdb", "parquet", "url", "conn_id", "spark", "spark_settings")

    def __post_init__(self) -> None:
        kinds = [k for k in _DESTINATION_KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ConfigurationError(
                f"destination needs exactly one of duckdb, parquet or url (or conn_id, or spark); got {kinds or 'none'}"
            )
        if check_spark_settings(self.spark_settings, setting="destination.spark_settings") and self.spark is None:
            raise ConfigurationError("destination.spark_settings needs a spark: destination")
        if self.spark is not None:
            name = _spark_table_name(str(self.spark))
            object.__setattr__(self, "table", self.table or name)
        if not self.table:  # only spark: derives it
            raise ConfigurationError("destination needs 'table'")
        if not self.table.replace("_", "").isalnum():
            raise ConfigurationError(f"destination.table must be letters, digits and '_', got {self.table!r}")
        check_destination_table(self.table)

    @property
    def kind(self) -> str:
        """``duckdb``, ``parquet``, ``url``, ``conn_id`` or ``spark``."""
        return next(k for k in _DESTINATION_KINDS if getattr(self, k) is not None)

    def sql_url(self) -> str:
        """The SQLAlchemy URL to connect to (a ``conn_id`` is resolved now; never log the result)."""
        if self.conn_id is not None:
            from privacy_plugins.release.connections import resolve_url

            return resolve_url(self.conn_id, setting="destination.conn_id")
        if self.url is None:
            raise ConfigurationError(f"destination {self.kind} is not a SQL database")
        return self.url

    def describe(self) -> str:
        """A readable location, e.g. ``duckdb:release.duckdb#census`` (a URL's password is masked)."""
        if self.conn_id is not None:
            return f"conn:{self.conn_id}#{self.table}"
        if self.spark is not None:
            return f"spark:{self.spark}"
        where: object = self.duckdb or self.parquet
        if self.url is not None:
            where = mask_password(self.url)
        return f"{self.kind}:{where}#{self.table}"

    def check_writable(self) -> None:
        """Fail now, naming the setting, if publishing here cannot work — without creating anything.

        A DuckDB file must be creatable or an existing DuckDB database; a Parquet
        folder creatable or a writable folder (an existing ``<table>.parquet`` must
        be Parquet); a URL's dialect and driver importable (a SQLite file as for
        DuckDB); Spark: PySpark, Java and a reachable master, a Parquet folder's parent
        writable and the folder absent or a release's link
        (:func:`privacy_plugins.release.spark_destination.check_target`).
        See :mod:`privacy_plugins.release.locations`.

        Raises:
            ConfigurationError: e.g. ``destination.duckdb: /x/file.txt/out.duckdb: a parent is a file``.
        """
        from privacy_plugins.release import locations

        if self.duckdb is not None:
            locations.check_writable_file(
                "destination.duckdb", self.duckdb, magic=locations.DUCKDB_MAGIC, kind="a DuckDB database"
            )
        elif self.spark is not None:
            from privacy_plugins.release.spark_destination import check_target

            check_target(self)
        elif self.parquet is not None:
            locations.check_writable_folder("destination.parquet", self.parquet)
            locations.check_writable_file(
                "destination.parquet",
                self.parquet / f"{self.table}.parquet",
                magic=locations.PARQUET_MAGIC,
                kind="a Parquet file",
            )
        else:
            setting = "destination.url" if self.url is not None else "destination.conn_id"
            url = self.sql_url()
            locations.check_database_url(setting, url)
            where = None if self.conn_id is None else f"connection {self.conn_id!r}"
            locations.probe_database(setting, url, where=where)


def _check_required(section: str, values: Mapping[str, Any], kind: type) -> None:
    """Name a missing required key (``destination needs 'table'``), not the dataclass's positional argument."""
    missing = [
        f.name
        for f in dataclasses.fields(kind)
        if f.init
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
        and f.name not in values
    ]
    if missing:
        raise ConfigurationError(f"{section} needs {', '.join(repr(m) for m in missing)}")


def _folder_name(name: str) -> str:
    """The spec's name as one path component, so two specs without a ``report:`` never share report files.

    A name that is already a plain component is kept as it is; any other gets its
    unsafe characters replaced and a short hash, so distinct names stay distinct.
    """
    if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}", name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)[:60].lstrip('.')}-{digest}"


@dataclass(frozen=True)
class ReportSpec:
    """Where the reports go (the diagnosis is kept even when a release fails)."""

    directory: Path

    KEYS = ("directory",)

    @property
    def diagnosis_html(self) -> Path:
        """The HTML diagnosis report."""
        return self.directory / "diagnosis.html"

    @property
    def diagnosis_json(self) -> Path:
        """The JSON diagnosis report."""
        return self.directory / "diagnosis.json"

    @property
    def release_json(self) -> Path:
        """The release summary (accounting, checks, publication)."""
        return self.directory / "release.json"

    def check_writable(self) -> None:
        """Fail now if the report folder cannot be created or written (nothing is created here).

        Raises:
            ConfigurationError: e.g. ``report.directory: /x/reports is a file, not a folder``.
        """
        from privacy_plugins.release import locations

        locations.check_writable_folder("report.directory", self.directory)
        for report in (self.diagnosis_html, self.diagnosis_json, self.release_json):
            locations.check_writable_file("report.directory", report, magic=None, kind="a report file")


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: where (1-based line and column, from ``problem_mark``) and what YAML could not parse."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    context = ""
    if exc.context:
        started = exc.context_mark
        since = f" started at line {started.line + 1}, column {started.column + 1}" if started is not None else ""
        context = f" ({exc.context}{since})"
    return f"{where}: {exc.problem}{context}"


@dataclass(frozen=True)
class ReleaseSpec:
    """A whole release, validated. Build it with :meth:`from_yaml`, :meth:`from_dict` or directly."""

    name: str
    source: SourceSpec
    quasi_identifiers: tuple[str, ...]
    requirements: Requirements
    destination: DestinationSpec
    report: ReportSpec
    workdir: Path | None = None
    identifiers: tuple[str, ...] = ()
    sensitive_attributes: tuple[str, ...] = ()
    hierarchies: Path | Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    algorithm: AlgorithmSpec = field(default_factory=AlgorithmSpec)
    history: HistorySpec = field(default_factory=HistorySpec)
    insensitive: tuple[str, ...] = ()  # published unchanged; a column with no role is refused (issue 27)
    unlisted_columns: str = "refuse"  # or "drop": unlisted source columns are dropped and reported by name
    pseudonymize: PseudonymizeSpec | None = None
    acknowledged_identifiers: tuple[str, ...] = ()  # detected identifiers the spec publishes unchanged on purpose
    population: PopulationSpec | None = None  # issue 30: one population model for the release

    KEYS = (
        "name",
        "source",
        "identifiers",
        "quasi_identifiers",
        "sensitive_attributes",
        "hierarchies",
        "requirements",
        "algorithm",
        "destination",
        "report",
        "workdir",
        "history",
        "insensitive",
        "unlisted_columns",
        "pseudonymize",
        "acknowledged_identifiers",
        "population",
    )

    def __post_init__(self) -> None:
        self.roles  # noqa: B018 - validates the roles
        self._check_history()
        self._check_column_roles()
        if self.workdir is not None and Path(self.workdir).resolve().is_relative_to(self.report.directory.resolve()):
            raise ConfigurationError(
                f"workdir {str(self.workdir)!r} is inside the report folder {str(self.report.directory)!r}, which "
                "people share; working files hold every quasi-identifier and sensitive value: put workdir elsewhere "
                "(or leave it out for a private temporary folder)"
            )
        self._check_spark_destination()
        if self.requirements.bound_column is not None and self.requirements.bound_column in self.roles.named_columns:
            raise ConfigurationError(f"bound_column {self.requirements.bound_column!r} already has another role")
        if (self.requirements.l is not None or self.requirements.t is not None) and not self.sensitive_attributes:
            raise ConfigurationError("requirements l and t need at least one sensitive attribute")
        try:
            check_model_roles(self.requirements.models(self.sensitive_attributes), self.roles)
        except ConfigurationError as exc:
            raise ConfigurationError(f"requirements: {exc}") from None
        self._check_population()
        # A release checks every requirement on the whole published table: refuse now what the algorithm
        # declares it can never promise, instead of failing the check after the whole pipeline ran.
        refusal = tags_of(get_anonymizer(self.algorithm.name)).supported_models.refusal(
            self.requirements.models(self.sensitive_attributes)
        )
        if refusal is not None:
            raise ConfigurationError(f"algorithm.name {self.algorithm.name!r} {refusal}")
        if isinstance(self.hierarchies, Mapping):
            missing = [q for q in self.quasi_identifiers if q not in self.hierarchies]
            if missing and self.algorithm.needs_hierarchies:
                raise HierarchyError(
                    f"no hierarchy for quasi-identifier(s) {missing!r} in the spec (algorithm "
                    f"{self.algorithm.name!r} generalizes every quasi-identifier along a hierarchy)"
                )
            for column, builder in self.hierarchies.items():
                if not isinstance(builder, Mapping):
                    raise HierarchyError(
                        f"hierarchies.{column} must be one of {{{', '.join(HIERARCHY_BUILDERS)}: ...}}, got {builder!r}"
                    )
                kind = check_config_shape(column, builder, setting=f"hierarchies.{column}")
                if column in self.sensitive_attributes and kind not in DATA_FREE_BUILDERS:
                    raise HierarchyError(
                        f"hierarchy for sensitive attribute {column!r} must be one of {list(DATA_FREE_BUILDERS)}, "
                        f"got {kind!r}: a published table (its sensitive column possibly "
                        "generalized) is re-measured without the raw values a data-built hierarchy needs"
                    )

    def _check_history(self) -> None:
        """A history is kept for releases to DuckDB, SQL, Parquet, Spark folders (else off by default).

        Two-table releases (Anatomy) keep one too: their signature is their QI tuples
        (:func:`~privacy_plugins.core.history.linked_signature`), swapped in with the pair.
        """
        if not self.history.enabled:
            return
        object.__setattr__(self, "history", self.history.resolve_protect(self._every_qi_has_hierarchy()))
        why = ""
        if self.destination.spark is not None and not is_spark_path(str(self.destination.spark)):
            why = "a spark: table keeps no release history (no transactional swap to write it); publish to a folder"
        if not why:
            return
        if self.history.explicit:
            raise ConfigurationError(f"history: {why}; set history: off")
        object.__setattr__(self, "history", HistorySpec(enabled=False))

    def _every_qi_has_hierarchy(self) -> bool:
        """Whether the spec names a hierarchy for every quasi-identifier (``history.protect: auto``)."""
        if isinstance(self.hierarchies, Path):
            try:
                found = hierarchy_files(self.hierarchies, columns=self.quasi_identifiers)
            except HierarchyError:
                return False  # the folder is missing: the run refuses it where it reads the hierarchies
            return all(q in found for q in self.quasi_identifiers)
        return all(q in self.hierarchies for q in self.quasi_identifiers)

    def _check_population(self) -> None:
        """Every population model gets a population (its own or the block's); the block fits the source."""
        setting = None if self.population is None else self.population.setting()
        for model in self.requirements.models(self.sensitive_attributes):
            try:
                model.with_release_population(setting)
            except ConfigurationError as exc:
                raise ConfigurationError(f"requirements: {exc}") from None
        if self.population is None:
            return
        source = self.source
        self.population.check_source(database=any(x is not None for x in (source.url, source.conn_id, source.duckdb)))
        weights = self.population.weights
        if weights is not None and weights in set(self.roles.named_columns) - set(self.insensitive):
            raise ConfigurationError(f"population.weights {weights!r} already has another role in the spec")

    def _check_column_roles(self) -> None:
        """``unlisted_columns`` is refuse or drop; a pseudonym column has no other role (issue 27)."""
        if self.unlisted_columns not in ("refuse", "drop"):
            raise ConfigurationError(f"unlisted_columns must be 'refuse' or 'drop', got {self.unlisted_columns!r}")
        named = set(self.roles.named_columns)
        taken = [c for c in (self.pseudonymize.columns if self.pseudonymize else ()) if c in named]
        if taken:
            raise ConfigurationError(f"pseudonymize.columns {taken} already have another role in the spec")
        shift = self.pseudonymize.shift_dates if self.pseudonymize else None
        shifted = [c for c in (shift.columns if shift else ()) if c in named]
        if shifted:
            raise ConfigurationError(
                f"pseudonymize.shift_dates.columns {shifted} already have another role in the spec"
            )

    def _check_spark_destination(self) -> None:
        """One SparkSession serves a Spark source and a Spark destination; a Spark release is one table."""
        destination = self.destination
        if destination.spark is None:
            return
        if self.source.spark is not None and destination.spark_settings not in (None, {}, self.source.spark_settings):
            raise ConfigurationError(
                "destination.spark_settings must be left out (or equal source.spark_settings) when the source is "
                "Spark too: one SparkSession reads and writes; put the settings in source.spark_settings"
            )
        if tags_of(get_anonymizer(self.algorithm.name)).linked_tables:
            raise ConfigurationError(
                f"algorithm {self.algorithm.name!r} publishes two linked tables, which a spark: destination does "
                "not take; publish to duckdb, parquet or url"
            )

    @property
    def roles(self) -> AttributeRoles:
        """The attribute roles (validated)."""
        return AttributeRoles(
            quasi_identifiers=self.quasi_identifiers,
            sensitive_attributes=self.sensitive_attributes,
            identifiers=self.identifiers,
            insensitive=self.insensitive,
        )

    @property
    def source_fingerprint(self) -> str:
        """SHA-256 of where the data comes from and the role of each column: names a run's artifacts.

        A step refuses an artifact whose fingerprint differs (an artifact of another
        release, or of this release before its source or roles changed).
        """
        described = {
            "name": self.name,
            "source": {k: str(getattr(self.source, k)) for k in SourceSpec.KEYS},
            "identifiers": list(self.identifiers),
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive_attributes": list(self.sensitive_attributes),
            "bound_column": self.requirements.bound_column,
        }
        listed_columns = sorted({str(c) for m in self.requirements.listed for c in m.columns})
        if listed_columns:  # a listed model's own columns (a bound column …) are read from the source too
            described["model_columns"] = listed_columns
        if self.population is not None and self.population.weights is not None:
            described["population_weights"] = self.population.weights
        if self.insensitive or self.unlisted_columns != "refuse" or self.pseudonymize is not None:
            described["insensitive"] = list(self.insensitive)
            described["unlisted_columns"] = self.unlisted_columns
            described["pseudonymize"] = self.pseudonymize.describe() if self.pseudonymize is not None else None
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).hexdigest()

    def models(self) -> list[PrivacyModel]:
        """The privacy models of the requirements, bound to the sensitive attributes' hierarchies.

        The one source of models for anonymizing, checking, publishing and re-measuring
        (``published``, Airflow, Dagster): a model that measures along a hierarchy
        (personalized leakage over a generalized sensitive column) gets it here, so none
        of them can under-count. t-closeness's ``auto`` distance is resolved on the data.
        """
        setting = None if self.population is None else self.population.setting()
        models = [m.with_release_population(setting) for m in self.requirements.models(self.sensitive_attributes)]
        return bind_hierarchies([self.population_bound(m) for m in models], self.sensitive_hierarchies())

    def population_bound(self, model: PrivacyModel) -> PrivacyModel:
        """``model`` binding itself, when it first reads its population, with :meth:`_bind_population`."""
        return model.bound_lazily(self._bind_population)

    def _bind_population(self, model: PrivacyModel) -> PrivacyModel:
        """An exact population model with its table at hand and the QIs' hierarchies built from its values.

        A population table of the source database is pulled summed per QI combination (aggregated
        counts, never records), once per spec; the hierarchies let the published labels be looked
        up after the run too (issue 30: exact k-map; the run binds the sample's own hierarchies).
        """
        cache: dict[tuple[str, object], Any] = self.__dict__.setdefault("_population_cache", {})
        in_engine = model.population_table_in_engine()
        if in_engine is not None and self.population is not None and isinstance(self.population.table, str):
            from privacy_plugins.release.population_spec import population_table

            name = in_engine[0]
            if ("table", name) not in cache:
                try:
                    cache["table", name] = population_table(self, name)
                except ConfigurationError as exc:
                    raise ConfigurationError(f"population.table {name!r}: {exc}") from None
            model = model.with_population_frame(cache["table", name])
        frame = model.population_frame()
        if frame is None or any(q not in frame.columns for q in self.quasi_identifiers):
            return model  # (a table lacking a QI is refused, naming it, where it is first read)
        key = ("hierarchies", id(frame))
        if key not in cache:
            try:
                cache[key] = (frame, self.build_hierarchies(frame))
            except HierarchyError as exc:  # (its message may show values: name the column only)
                named = [q for q in self.quasi_identifiers if repr(q) in str(exc)]
                where = f"column {named[0]!r}" if named else "a quasi-identifier column"
                raise PopulationMismatchError(
                    f"population.table: {where} holds values its hierarchy cannot generalize"
                ) from None
        return model.with_hierarchies(cache[key][1])

    def sensitive_hierarchies(self) -> dict[Hashable, Hierarchy]:
        """The hierarchy of every sensitive attribute the spec gives one (data-free builders only).

        From a ``hierarchies`` folder: the sensitive attribute's file if there is one.
        """
        if isinstance(self.hierarchies, Path):
            found = hierarchy_files(self.hierarchies, columns=[*self.quasi_identifiers, *self.sensitive_attributes])
            return {
                column: read_hierarchy(found[column], attribute=column)
                for column in self.sensitive_attributes
                if column in found
            }
        return {
            column: build_hierarchy(column, self.hierarchies[column])
            for column in self.sensitive_attributes
            if column in self.hierarchies
        }

    def build_hierarchies(self, frame: pd.DataFrame) -> dict[Hashable, Hierarchy]:
        """Read or build the hierarchy of every QI (builders need the data's values)."""
        if isinstance(self.hierarchies, Path):
            return load_hierarchies(self.hierarchies, columns=self.quasi_identifiers)
        built: dict[Hashable, Hierarchy] = {}
        for column in self.quasi_identifiers:
            if column not in self.hierarchies:
                continue  # allowed only for algorithms that publish numeric QIs as ranges (checked at load)
            built[column] = build_hierarchy(column, self.hierarchies[column], frame[column])
        return built

    @classmethod
    def from_yaml(cls, path: str | Path, *, overrides: Mapping[str, Any] | None = None) -> ReleaseSpec:
        """Load a spec from YAML; relative paths are relative to the spec file.

        ``overrides`` (same layout as the YAML) are merged in as a JSON Merge Patch
        before validation — how orchestrators change a threshold or a destination
        per run without editing the file.
        """
        source = Path(path)
        if not source.is_file():
            raise FileNotFoundError(f"release spec not found: {str(source)!r}")
        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"release spec {str(source)!r} is not valid YAML: {_yaml_problem(exc)}") from exc
        data = _mapping("the release spec", data)
        if overrides:
            data = merge_patch(data, _mapping("overrides", overrides))
        return cls.from_dict(data, base_dir=source.resolve().parent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | Path = ".") -> ReleaseSpec:
        """Build a spec from plain data (the parsed YAML)."""
        base = Path(base_dir)
        _check_keys("the release spec", data, cls.KEYS)
        for required in ("name", "source", "quasi_identifiers", "requirements", "destination"):
            if required not in data:
                raise ConfigurationError(f"the release spec needs {required!r}")
        sections = {}
        try:
            requirements = Requirements.from_value(data.get("requirements"))
        except TypeError as exc:
            raise ConfigurationError(f"bad value in the release spec: {exc}") from exc
        for name, kind in (
            ("source", SourceSpec),
            ("destination", DestinationSpec),
            ("report", ReportSpec),
        ):
            values = dict(_mapping(name, data.get(name)))
            _check_keys(name, values, kind.KEYS)
            for key in ("path", "duckdb", "parquet", "directory"):  # source.duckdb too
                if values.get(key) is not None:
                    values[key] = _path(base, values[key])
            spark = values.get("spark")
            if isinstance(spark, str) and is_spark_path(spark) and "://" not in spark:  # a local path, not a table
                values["spark"] = str(_unresolved_path(base, spark))
            sections[name] = values
        sections["report"].setdefault("directory", base / "release_output" / _folder_name(str(data["name"])))
        for name, kind in (("source", SourceSpec), ("destination", DestinationSpec)):
            _check_required(name, sections[name], kind)
        algorithm = AlgorithmSpec.from_mapping(_mapping("algorithm", data.get("algorithm")))
        hierarchies: Path | dict[str, Any]
        if isinstance(data.get("hierarchies"), str):
            hierarchies = _path(base, data["hierarchies"])
        else:
            hierarchies = {str(k): v for k, v in _mapping("hierarchies", data.get("hierarchies")).items()}
            for column, builder in list(hierarchies.items()):
                file = builder.get("file") if isinstance(builder, Mapping) else None
                if isinstance(file, Mapping) and file.get("path") is not None:  # no path: named in __post_init__
                    hierarchies[column] = {**builder, "file": {**file, "path": _path(base, file["path"])}}
        try:
            return cls(
                name=str(data["name"]),
                source=SourceSpec(**sections["source"]),
                identifiers=_columns("identifiers", data.get("identifiers")),
                quasi_identifiers=_columns("quasi_identifiers", data.get("quasi_identifiers")),
                sensitive_attributes=_columns("sensitive_attributes", data.get("sensitive_attributes")),
                hierarchies=hierarchies,
                requirements=requirements,
                algorithm=algorithm,
                destination=DestinationSpec(**sections["destination"]),
                report=ReportSpec(**sections["report"]),
                workdir=_path(base, data["workdir"]) if data.get("workdir") is not None else None,
                history=HistorySpec.from_value(data.get("history")),
                insensitive=_columns("insensitive", data.get("insensitive")),
                unlisted_columns=str(data.get("unlisted_columns", "refuse")),
                pseudonymize=PseudonymizeSpec.from_value(data.get("pseudonymize")),
                acknowledged_identifiers=_columns("acknowledged_identifiers", data.get("acknowledged_identifiers")),
                population=PopulationSpec.from_value(data.get("population"), base=base),
            )
        except TypeError as exc:
            raise ConfigurationError(f"bad value in the release spec: {exc}") from exc

    def suppression_budget(self, rows: int) -> int:
        """⌊suppression_limit · rows⌋, the records that may be suppressed."""
        return suppression_budget(self.requirements.suppression_limit, rows)
