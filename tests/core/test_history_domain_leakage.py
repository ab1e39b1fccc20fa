"""Issue 26: repeated clustering releases with a leakage bound *and* ``history: {protect: domain}`` on Adult.

Before ``leakdom26`` the clustering's suppression path (pools of failing classes clustered again,
removals) judged its classes by their records only: its pools grew boxes that broke the domain
rule, more than the release's (c) could leave out within the limit, and release 2 was refused.
The oracle here is naive: every person of the sample (present, joining later or never) keeps at
least 2 values over the published releases, each release's covering classes found label by label.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies
from privacy_plugins.core.history import PublishedRelease, ReleaseHistory, class_signature
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.history_domain import domain_breaks
from privacy_plugins.core.history_release import domain_needs, release_with_history
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage
from privacy_plugins.core.partition import EquivalenceClasses

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult"
QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
MODELS = [KAnonymity(5), PersonalizedLeakage("occupation", bound=0.5)]
SIZES = (500, 600)
SEEDS = (1, 2, 3)  # shuffles of Adult
PEOPLE = 900  # the sample the oracle judges: the releases' sources and 300 people who never joined


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    if not (ADULT / "adult.csv").is_file():
        pytest.skip(f"Adult data not found at {ADULT} (expected ../shared/data/adult beside the repo)")
    return pp.read_table(ADULT / "adult.csv")[[*QIS, "occupation"]], load_hierarchies(ADULT, columns=QIS)


def _left_values(people: pd.DataFrame, published: list[pd.DataFrame], hierarchies: dict[str, Hierarchy]) -> list[int]:
    """Per person, the values left by intersecting, over the releases, the values of the classes covering her."""
    rows = {q: hierarchies[q].to_rows() for q in QIS}

    @functools.cache
    def covers(qi: str, label: str, value: str) -> bool:  # equal, "*", or an ancestor of the leaf
        return label in ("*", value) or any(row[0] == value and label in row for row in rows[qi])

    releases = []
    for table in published:
        labels = table[QIS].astype(str).agg("\x1f".join, axis=1)
        values = table["occupation"].astype(str).groupby(labels.to_numpy()).agg(set)
        releases.append([(key.split("\x1f"), held) for key, held in values.items()])
    left = []
    for person in people[QIS].astype(str).itertuples(index=False):
        held: set[str] | None = None
        for classes in releases:
            found = [v for box, v in classes if all(covers(q, b, p) for q, b, p in zip(QIS, box, person, strict=True))]
            if found:
                union = set().union(*found)
                held = union if held is None else held & union
        left.append(len(held) if held is not None else 99)
    return left


@pytest.mark.parametrize("algorithm", ["two-phase", "k-member"])
def test_releases_with_a_leakage_bound_keep_every_point_of_the_domain(
    adult: tuple[pd.DataFrame, dict[str, Hierarchy]], algorithm: str
) -> None:
    """Whatever is published keeps every person at 2 values; and the path does publish on most samples.

    Passing is a heuristic's outcome (the clustering does not know the history; (c) has 10-12 records),
    so it is asserted over three shuffles of Adult, not one: main (9df1025) refused release 2 on every one.
    """
    full, hierarchies = adult
    both_published = 0
    for seed in SEEDS:
        frame = full.sample(frac=1.0, random_state=seed).reset_index(drop=True)
        history = ReleaseHistory("adult", tuple(QIS), ("occupation",))
        published = []
        for size in SIZES:
            table = frame.iloc[:size]
            release = release_with_history(
                table, quasi_identifiers=QIS, models=MODELS, history=history, hierarchies=hierarchies,
                algorithm=algorithm, suppression_limit=0.02, sensitive_attributes=["occupation"], protect_domain=True,
            )  # fmt: skip
            if not release.passed:  # refused, as the gate would: nothing of it is published
                break
            assert release.suppressed == size - len(release.table) <= int(0.02 * size)
            # re-measured as the gate does: records over the intersection, the domain rule, the models on the table
            assert composition_check(table, release.table, history, MODELS, hierarchies=hierarchies).passed
            if len(history):
                needs = domain_needs(MODELS, history, hierarchies)
                assert not domain_breaks(history.signatures(), release.table, QIS, needs, hierarchies).any()
            classes = EquivalenceClasses.from_frame(release.table.reset_index(drop=True), QIS)
            assert not any(model.violating_classes(classes).any() for model in MODELS)
            published.append(release.table)
            signature = class_signature(release.table, QIS, ["occupation"])
            history = history.appended(PublishedRelease("r", "", "", dict(release.transformation), signature))
        both_published += len(published) == len(SIZES)
        assert min(_left_values(frame.iloc[:PEOPLE], published, hierarchies)) >= 2
    assert both_published >= 2, f"{both_published} of {len(SEEDS)} shuffles published both releases"
