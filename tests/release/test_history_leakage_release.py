"""Issue 26: the release layer's anonymize step keeps a leakage bound over the history with the clustering algorithms.

``history_anonymize.choose`` is the one body of both release paths (snapshot and in-memory) on
distinct combinations with counts: the history model with the share bound, the clustering's
suppression path, then (c) on weighted units (``docs/composition.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.hierarchies.builders import interval_hierarchy, masking_hierarchy
from privacy_plugins.core.history import COUNT, PublishedRelease, ReleaseHistory
from privacy_plugins.core.history_check import composition_check
from privacy_plugins.core.models import KAnonymity, PersonalizedLeakage, PrivacyModel
from privacy_plugins.release.history_anonymize import UNIT, anonymize_history, choose

QIS = ["age", "zip"]
ZIPS = ["47906", "47907", "47610", "47611"]
HIERARCHIES = {
    "age": interval_hierarchy("age", range(0, 100), widths=(5, 10, 20)),
    "zip": masking_hierarchy("zip", ZIPS),
}
MODELS = [KAnonymity(4), PersonalizedLeakage("disease", bound=0.5)]


def _source(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(["flu", "hiv", "cold", "cancer"], n, p=[0.4, 0.25, 0.2, 0.15]),
        }
    )


@pytest.mark.parametrize("algorithm", ["k-member", "two-phase"])
def test_the_release_layers_anonymize_step_takes_the_same_three_ways_on_units(algorithm: str) -> None:
    """``history_anonymize.choose`` (both release paths): the share-bound model, the clustering's suppression, (c)."""
    source = _source(10, 180)
    history = ReleaseHistory("w", tuple(QIS), ("disease",))
    for size in (120, 150, 180):
        units = source.iloc[:size].groupby([*QIS, "disease"], as_index=False).size().rename(columns={"size": COUNT})
        rows = units.loc[units.index.repeat(units[COUNT])].drop(columns=[COUNT]).assign(**{UNIT: lambda f: f.index})
        kept = anonymize_history(history, quasi_identifiers=QIS, models=MODELS, hierarchies=HIERARCHIES,
                                 algorithm=algorithm, suppression_limit=0.05, reapply_levels=True)  # fmt: skip

        def solve(extra: Sequence[PrivacyModel]) -> pd.DataFrame:
            result = anonymize(rows.reset_index(drop=True), algorithm=algorithm, quasi_identifiers=QIS,  # noqa: B023
                               models=[*MODELS, *extra], hierarchies=HIERARCHIES, sensitive_attributes=["disease"],
                               insensitive=[UNIT], suppression_limit=0.05)  # fmt: skip
            grouped = result.table.groupby([UNIT, *QIS], as_index=False).size()
            return grouped.rename(columns={"size": COUNT})

        chosen = choose(kept, units, solve, lambda candidate: candidate)
        assert chosen.outcome.records_at_risk == 0, chosen.outcome.to_dict()
        published = chosen.solution if chosen.published is None else chosen.published.loc[chosen.kept]
        assert published is not None
        published = published.assign(disease=units["disease"].to_numpy()[published[UNIT].to_numpy()])
        signature = published.drop(columns=[UNIT])
        assert int(units[COUNT].sum()) - int(signature[COUNT].sum()) <= int(0.05 * size)
        check = composition_check(units, signature, history, MODELS, hierarchies=HIERARCHIES, count_column=COUNT)
        assert check.passed
        classes = signature.groupby([*QIS, "disease"], as_index=False)[COUNT].sum()
        history = history.appended(PublishedRelease("r", "2026-11-26T00:00:00Z", "f", {}, classes))
