"""Declared capabilities ("tags"): every anonymizer has them, callers read them, a third party gets the defaults."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.anonymize import (
    AnonymizedTable,
    AnonymizerTags,
    FullDomainAnonymizer,
    ModelSupport,
    anonymize,
    anonymizer_names,
    get_anonymizer,
    register_anonymizer,
    tags_of,
)
from privacy_plugins.core.anonymize.registry import (
    _REGISTRY,
    BlockAnonymizer,
    PartialScopeAnonymizer,
    SnapshotAnonymizer,
)
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.core.anonymize.snapshot_search import solve_snapshot
from privacy_plugins.core.hierarchies import Hierarchy
from privacy_plugins.core.metrics.information_loss import UtilityMetrics
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.errors import ConfigurationError

TAG_FIELDS = {
    "works_on_snapshot",
    "searches_lattice",
    "needs_hierarchies",
    "linked_tables",
    "supported_models",
    "partial_scope",
    "suppresses",
    "research_subset",  # issue 30: δ-presence's research subset published alone
    "works_per_block",  # issue 28: blocks anonymized alone (in memory, a pool or an engine)
}


@dataclass(frozen=True)
class Blanket:
    """A third-party anonymizer without tags: every QI becomes ``*`` (one class, so k = n holds)."""

    name: str = "blanket"
    options: tuple = ()

    def run(self, request, **options):  # type: ignore[no-untyped-def]
        table = request.table.drop(columns=list(request.roles.identifiers)).assign(
            **{str(q): "*" for q in request.quasi_identifiers}
        )
        utility = UtilityMetrics(ncp=1.0, lm=1.0, discernibility=0.0, c_avg=1.0, height=0, precision=0.0, ileft=0.0)
        return AnonymizedTable(table, np.ones(len(table), dtype=bool), 0, utility)


@dataclass(frozen=True)
class MyLattice(FullDomainAnonymizer):
    """A third-party lattice search under its own name: its tags, not its name, make it solve snapshots."""

    search: str = "exhaustive"

    @property
    def name(self) -> str:
        return "my-lattice"


@dataclass(frozen=True)
class Boasting(Blanket):
    """Tagged as solving snapshots and scoping its models, without the methods those tags promise."""

    name: str = "boasting"
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(works_on_snapshot=True, needs_hierarchies=True)


@pytest.fixture
def registered() -> Iterator[None]:
    register_anonymizer("blanket", Blanket)
    register_anonymizer("my-lattice", MyLattice)
    register_anonymizer("boasting", Boasting)
    try:
        yield
    finally:
        for name in ("blanket", "my-lattice", "boasting"):
            del _REGISTRY[name]


@pytest.mark.parametrize("name", anonymizer_names())
def test_every_registered_anonymizer_declares_frozen_tags(name: str) -> None:
    anonymizer = get_anonymizer(name)
    tags = tags_of(anonymizer)
    assert type(tags) is AnonymizerTags and dataclasses.is_dataclass(tags)
    assert {field.name for field in dataclasses.fields(tags)} == TAG_FIELDS
    assert all(isinstance(getattr(tags, f), bool) for f in TAG_FIELDS - {"supported_models"})
    assert isinstance(tags.supported_models, ModelSupport)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tags.works_on_snapshot = not tags.works_on_snapshot  # type: ignore[misc]
    # What a tag promises, the anonymizer offers.
    assert not tags.works_on_snapshot or isinstance(anonymizer, SnapshotAnonymizer)
    assert not tags.partial_scope or isinstance(anonymizer, PartialScopeAnonymizer)
    assert not tags.works_per_block or isinstance(anonymizer, BlockAnonymizer)


def test_an_anonymizer_without_tags_gets_the_defaults_and_runs(registered: None) -> None:
    tags = tags_of(get_anonymizer("blanket"))
    assert tags == AnonymizerTags()
    assert not (tags.works_on_snapshot or tags.searches_lattice or tags.needs_hierarchies or tags.linked_tables)
    assert not tags.partial_scope and tags.suppresses and tags.supported_models.refusal([KAnonymity(3)]) is None
    frame = pd.DataFrame({"age": [30, 31, 40, 41], "disease": ["a", "b", "a", "b"]})
    result = anonymize(
        frame, algorithm="blanket", quasi_identifiers=["age"], models=[KAnonymity(4)], insensitive=["disease"]
    )
    assert result.passed and result.details.recoding_levels() == {} and result.details.summary_rows(1.0) == []


def test_tags_that_are_not_tags_and_promises_without_methods_are_refused(registered: None) -> None:
    with pytest.raises(TypeError, match="must be an AnonymizerTags"):
        tags_of(type("Odd", (), {"tags": {"works_on_snapshot": True}})())
    with pytest.raises(TypeError, match=r"'boasting' is tagged as a SnapshotAnonymizer \(works_on_snapshot\) but"):
        get_anonymizer("boasting")


@pytest.mark.parametrize("tag", ["works_on_snapshot", "searches_lattice"])
def test_a_snapshot_or_a_lattice_without_hierarchies_is_not_a_valid_declaration(tag: str) -> None:
    with pytest.raises(ValueError, match="need needs_hierarchies=True"):
        AnonymizerTags(**{tag: True})
    assert getattr(AnonymizerTags(**{tag: True, "needs_hierarchies": True}), tag)


def _snapshot() -> tuple[Snapshot, pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"zip": rng.choice(["47906", "47907", "47611", "47612"], 60), "s": rng.choice(list("ab"), 60)})
    hierarchies = {"zip": Hierarchy.from_rows("zip", [[z, z[:4] + "*", "*"] for z in sorted(set(frame["zip"]))])}
    snapshot = Snapshot.build(frame, quasi_identifiers=["zip"], hierarchies=hierarchies, model_columns=["s"])
    return snapshot, frame, hierarchies


def test_a_snapshot_is_solved_by_whichever_anonymizer_is_tagged_for_it(registered: None) -> None:
    snapshot, frame, hierarchies = _snapshot()
    models = [KAnonymity(5), DistinctLDiversity("s", 2)]
    solution = solve_snapshot(snapshot, models, algorithm="my-lattice", suppression_limit=0.1, metric="lm")
    in_memory = anonymize(frame, algorithm="my-lattice", quasi_identifiers=["zip"], hierarchies=hierarchies,
                          models=models, suppression_limit=0.1, metric="lm")  # fmt: skip
    assert in_memory.algorithm == "my-lattice"
    assert solution.details.recoding_levels() == in_memory.details.recoding_levels()
    assert solution.suppressed == in_memory.suppressed
    with pytest.raises(ConfigurationError, match="'blanket' does not work on a snapshot"):
        solve_snapshot(snapshot, models, algorithm="blanket")
    with pytest.raises(ConfigurationError, match="suppressed_rows: mark needs the rows"):
        solve_snapshot(snapshot, models, algorithm="my-lattice", suppressed_rows="mark")
    with pytest.raises(ConfigurationError, match="has no option"):
        solve_snapshot(snapshot, models, algorithm="my-lattice", mode="strict")


def test_the_supported_models_refusal_keeps_its_messages() -> None:
    support = ModelSupport(
        promises=frozenset({"k_anonymity", "distinct_l_diversity"}),
        needs_one_of=frozenset({"distinct_l_diversity"}),
        one_sensitive_attribute=True,
        why="it buckets",
    )
    assert support.refusal([KAnonymity(2)]) == "needs a distinct_l_diversity model: it buckets"
    assert support.refusal([DistinctLDiversity("a", 2), DistinctLDiversity("b", 2)]) == (
        "protects one sensitive attribute, got models on ['a', 'b']: it buckets"
    )
    assert support.refusal([KAnonymity(2), DistinctLDiversity("a", 2)]) is None
