"""The release reads an algorithm's tags, whoever registered it: hierarchies, promises, snapshots, the lattice cap."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.core.anonymize import (
    AnonymizedTable,
    AnonymizerTags,
    FullDomainAnonymizer,
    ModelSupport,
    register_anonymizer,
)
from privacy_plugins.core.anonymize.registry import _REGISTRY
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.errors import ConfigurationError, HierarchyError
from privacy_plugins.release import ReleaseSpec
from privacy_plugins.release.snapshot_path import pushdown_reason
from privacy_plugins.release.validation import check_lattice

QIS = ("age", "sex", "zip", "education", "marital_status")


@dataclass(frozen=True)
class Untagged:
    """A third-party anonymizer that declares nothing (every QI published as ``*``)."""

    name: str = "untagged"
    options: tuple = ()

    def run(self, request, **options):  # type: ignore[no-untyped-def]
        table = request.table.drop(columns=list(request.roles.identifiers))
        table = table.assign(**{str(q): "*" for q in request.quasi_identifiers})
        utility = UtilityMetrics(ncp=1.0, lm=1.0, discernibility=0.0, c_avg=1.0, height=0, precision=0.0, ileft=0.0)
        return AnonymizedTable(table, np.ones(len(table), dtype=bool), 0, utility)


@dataclass(frozen=True)
class HierarchyBound(Untagged):
    """Declares that it generalizes every quasi-identifier along a hierarchy, and needs the rows."""

    name: str = "hierarchy-bound"
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(works_on_snapshot=False, needs_hierarchies=True)


@dataclass(frozen=True)
class SizesOnly(Untagged):
    """Declares it can promise k-anonymity alone."""

    name: str = "sizes-only"
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(
        supported_models=ModelSupport(promises=frozenset({"k_anonymity"}), why="it only counts class sizes")
    )


@dataclass(frozen=True)
class OwnLattice(FullDomainAnonymizer):
    """A lattice search registered under a name no module knows: its tags make it run inside a database."""

    search: str = "exhaustive"

    @property
    def name(self) -> str:
        return "own-lattice"


CUSTOM = {"untagged": Untagged, "hierarchy-bound": HierarchyBound, "sizes-only": SizesOnly, "own-lattice": OwnLattice}


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    for name, factory in CUSTOM.items():
        register_anonymizer(name, factory)
    try:
        yield
    finally:
        for name in CUSTOM:
            del _REGISTRY[name]


def _spec(tmp_path: Path, algorithm: dict[str, Any], **overrides: Any) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, **overrides)
    data["algorithm"] = algorithm  # replaced, not merged with the demo's optimal options
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def _without_age_hierarchy(tmp_path: Path) -> dict[str, Any]:
    hierarchies = demo_spec_dict(tmp_path)["hierarchies"]
    return {column: builder for column, builder in hierarchies.items() if column != "age"}


def test_a_custom_algorithm_tagged_needs_hierarchies_requires_one_per_quasi_identifier(tmp_path: Path) -> None:
    hierarchies = _without_age_hierarchy(tmp_path)
    with pytest.raises(HierarchyError, match=r"no hierarchy for quasi-identifier\(s\) \['age'\].*'hierarchy-bound'"):
        _spec(tmp_path, {"name": "hierarchy-bound"}, hierarchies=hierarchies)
    spec = _spec(tmp_path, {"name": "untagged"}, hierarchies=hierarchies)  # no tags: numeric age may go without
    assert not spec.algorithm.needs_hierarchies


def test_a_custom_algorithm_with_restricted_supported_models_is_refused_at_load(tmp_path: Path) -> None:
    message = r"^algorithm.name 'sizes-only' cannot promise distinct_l_diversity \(.*\): it only counts class sizes$"
    with pytest.raises(ConfigurationError, match=message):
        _spec(tmp_path, {"name": "sizes-only"})
    spec = _spec(tmp_path, {"name": "sizes-only"}, requirements={"k": 5, "l": None})
    assert [model.config_name for model in spec.models()] == ["k_anonymity"]


@pytest.mark.parametrize(
    "where", ["duckdb", "generated", "small_csv"]
)  # the tags decide, not the source: a small file or generated table takes the snapshot path too
def test_the_snapshot_path_is_chosen_by_the_works_on_snapshot_tag(tmp_path: Path, where: str) -> None:
    small = tmp_path / "small.csv"
    small.write_text("age\n1\n")
    source = {
        "duckdb": {"source": {"duckdb": str(tmp_path / "source.duckdb"), "table": "census"}},
        "generated": {"source": {"generate": "census", "rows": 100}},
        "small_csv": {"source": {"path": str(small)}},
    }[where]
    assert pushdown_reason(_spec(tmp_path, {"name": "own-lattice"}, **source)) is None
    assert pushdown_reason(_spec(tmp_path, {"name": "own-lattice", "suppressed_rows": "mark"}, **source)) == (
        "suppressed_rows: mark needs the rows"
    )
    for name in ("untagged", "hierarchy-bound"):
        reason = pushdown_reason(_spec(tmp_path, {"name": name}, **source))
        assert reason == f"algorithm {name!r} recodes locally and needs the rows"


def test_the_lattice_cap_applies_to_what_is_tagged_searches_lattice(tmp_path: Path) -> None:
    deep = {q: Hierarchy.from_rows(q, [["v", *(f"v{i}" for i in range(1, 20)), "*"]]) for q in QIS}  # 21^5 nodes
    with pytest.raises(ConfigurationError, match="the generalization lattice has 4,084,101 nodes"):
        check_lattice(_spec(tmp_path, {"name": "own-lattice"}), deep)
    check_lattice(_spec(tmp_path, {"name": "untagged"}), deep)  # no lattice: nothing to cap
