"""``history: {keep_signatures: true}``: a release that drops an earlier class's value is left out, or refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.history import COUNT
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.history_store import appended_tables


def _spec(tmp_path: Path, keep: bool) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=200, history={"keep_signatures": keep})
    data["destination"] = {"duckdb": str(tmp_path / "r.duckdb"), "table": "t"}
    spec = ReleaseSpec.from_dict(data)
    # One earlier release covering everyone, with every value held now and one nobody holds now (its
    # holders were deleted).
    source = generate_census(200, seed=0)
    star = dict.fromkeys(spec.quasi_identifiers, "*")
    rows = [{**star, "disease": d, "income": i} for d in source["disease"].unique() for i in source["income"].unique()]
    rows.append({**star, "disease": "deleted-only", "income": source["income"].iloc[0]})
    classes = pd.DataFrame(rows).astype(str).assign(**{COUNT: 1})
    destination = open_destination(spec.destination)
    destination.write_companions(
        appended_tables(spec, read_history(spec, destination), run_id="r1", classes=classes, transformation={})
    )
    return spec


def test_keeping_signatures_refuses_a_release_that_drops_an_earlier_value(tmp_path: Path) -> None:
    spec = _spec(tmp_path, keep=True)
    result = run_release(spec)
    assert not result.passed
    failed = {c.name: c for c in result.check.checks if not c.passed} if result.check else {}
    assert "keep_signatures" in failed["composition"].detail
    assert read_published(spec.destination) is None
    assert "deleted-only" not in failed["composition"].detail  # counts only


def test_without_it_the_same_release_publishes(tmp_path: Path) -> None:
    assert run_release(_spec(tmp_path, keep=False)).passed


def test_keep_signatures_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="history.keep_signatures must be true or false"):
        ReleaseSpec.from_dict(demo_spec_dict(tmp_path, history={"keep_signatures": "yes"}))
