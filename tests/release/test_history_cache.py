"""Publishing reuses the check's composition verdict only while the release history is unchanged (issue 26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.core.history import COUNT
from privacy_plugins.errors import ReleaseBlocked
from privacy_plugins.release import ReleaseSpec, composition_gate, read_published, run_release
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.history_store import appended_tables, history_from_tables
from privacy_plugins.release.steps import anonymize_step, check_step, load_step, publish_step


def _spec(tmp_path: Path) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=200)
    data["destination"] = {"duckdb": str(tmp_path / "r.duckdb"), "table": "t"}
    return ReleaseSpec.from_dict(data)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the composition measures the gate computes (check step and publish step)."""
    calls: list[int] = []
    measure = composition_gate.composition_check

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return measure(*args, **kwargs)

    monkeypatch.setattr(composition_gate, "composition_check", counting)
    return calls


def test_an_unchanged_history_is_not_checked_again_at_publish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path)
    assert run_release(spec).passed  # one earlier release: the history is not empty
    calls = _counted(monkeypatch)
    candidate = anonymize_step(spec, load_step(spec))
    check = check_step(spec, candidate)
    assert check.passed and len(calls) == 1 and check.composition_key
    publish_step(spec, candidate, check)
    assert len(calls) == 1  # the history read under the lock is the one the check used: its verdict stands
    assert len(read_history(spec, open_destination(spec.destination))) == 2


def test_a_release_published_between_check_and_publish_is_checked_and_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tmp_path)
    calls = _counted(monkeypatch)
    candidate = anonymize_step(spec, load_step(spec))
    check = check_step(spec, candidate)
    assert check.passed and len(calls) == 1
    # Meanwhile two releases of the same people are published (their tables and history): intersected,
    # they leave everyone "smallpox", which no class of the candidate holds (income hidden: it tells nothing).
    star = dict.fromkeys(spec.quasi_identifiers, "*")

    def classes(values: list[str]) -> pd.DataFrame:
        return pd.DataFrame([{**star, "disease": v, "income": "*"} for v in values]).assign(**{COUNT: 200})

    destination = open_destination(spec.destination)
    first = appended_tables(spec, read_history(spec, destination), run_id="r1", classes=classes(["smallpox", "asthma"]),
                            transformation={})  # fmt: skip
    tables = appended_tables(spec, history_from_tables(spec, first), run_id="r2",
                             classes=classes(["smallpox", "diabetes"]), transformation={})  # fmt: skip
    destination.write_companions(tables)
    with pytest.raises(ReleaseBlocked, match="composition"):
        publish_step(spec, candidate, check)
    assert len(calls) == 2  # the changed history was noticed under the lock and the candidate measured again
    assert read_published(spec.destination) is None
    assert [r.run_id for r in read_history(spec, open_destination(spec.destination)).releases] == ["r1", "r2"]


def test_a_forged_key_for_another_history_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path)  # a first release: its history is empty, and still keyed
    calls = _counted(monkeypatch)
    candidate = anonymize_step(spec, load_step(spec))
    check = check_step(spec, candidate)
    stale = type(check).from_dict({**check.to_dict(), "composition_key": "0" * 64})
    publish_step(spec, candidate, stale)
    assert len(calls) > 1  # a key that is not this history's + candidate's: measured again inside the swap
