"""``history: {protect: domain}``: points of the QI domain nobody of this source holds are protected too (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from release_fixtures import demo_spec_dict

from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.history import COUNT
from privacy_plugins.core.history_domain import domain_breaks
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published, run_release
from privacy_plugins.release.composition_gate import read_history
from privacy_plugins.release.destination import open_destination
from privacy_plugins.release.history_store import appended_tables


def _spec(tmp_path: Path, protect: str | None, suppression: float = 0.2) -> ReleaseSpec:
    """A spec whose history holds one earlier class at a point nobody of the source holds now (people since
    deleted, with values nobody holds now): every later class covering that point narrows it.

    ``protect=None`` leaves ``history.protect`` unset (its default)."""
    data = demo_spec_dict(tmp_path, rows=200, history={} if protect is None else {"protect": protect})
    data["destination"] = {"duckdb": str(tmp_path / "r.duckdb"), "table": "t"}
    data["requirements"] = {**data["requirements"], "suppression_limit": suppression}
    spec = ReleaseSpec.from_dict(data)
    source = generate_census(200, seed=0)
    qis = list(spec.quasi_identifiers)
    point = source.iloc[0][qis].to_dict()
    point["sex"] = "Female" if point["sex"] == "Male" else "Male"
    assert not (source[qis].astype(str) == pd.Series(point).astype(str)).all(axis=1).any()  # nobody lives there
    rows = [{**point, "disease": d, "income": i} for d, i in (("gone-a", "1"), ("gone-b", "2"))]
    classes = pd.DataFrame(rows).astype(str).assign(**{COUNT: 5})
    destination = open_destination(spec.destination)
    destination.write_companions(
        appended_tables(spec, read_history(spec, destination), run_id="r1", classes=classes, transformation={})
    )
    return spec


def _narrowing(spec: ReleaseSpec) -> int:
    """Published rows in a class that leaves the earlier point fewer than 2 values."""
    published = read_published(spec.destination)
    assert published is not None
    history = read_history(spec, open_destination(spec.destination))
    earlier = history.releases[:-1]
    hierarchies = spec.build_hierarchies(generate_census(200, seed=0))
    needs = dict.fromkeys(spec.sensitive_attributes, 2)
    broken = domain_breaks([r.classes for r in earlier], published, spec.quasi_identifiers, needs, hierarchies)
    return int(broken.sum())


@pytest.mark.parametrize("protect", ["domain", None])
def test_protecting_the_domain_leaves_out_the_classes_that_narrow_a_point(tmp_path: Path, protect: str | None) -> None:
    spec = _spec(tmp_path, protect)
    assert spec.history.protect == "domain"  # the default (auto): every QI of the demo spec has a hierarchy
    result = run_release(spec)
    assert result.passed and result.check is not None
    assert _narrowing(spec) == 0
    composition = next(c for c in result.check.checks if c.name == "composition")
    assert "judged: every point of the QI domain" in composition.detail  # the report says what was protected


def test_protecting_records_only_lets_the_same_release_narrow_the_point(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "records")
    result = run_release(spec)
    assert result.passed and result.check is not None  # nobody of this source is at risk...
    composition = next(c for c in result.check.checks if c.name == "composition")
    assert "judged: this source's records (history.protect: records)" in composition.detail
    assert _narrowing(spec) > 0  # ...but the people of the earlier class's point are narrowed


def test_auto_protects_records_only_when_a_quasi_identifier_has_no_hierarchy(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path, rows=200)
    data["algorithm"] = {"name": "mondrian"}  # it needs no hierarchy
    data["hierarchies"] = {q: h for q, h in data["hierarchies"].items() if q != "age"}
    assert ReleaseSpec.from_dict(data).history.protect == "records"  # age's points are not a hierarchy's leaves
    data["history"] = {"protect": "domain"}
    assert ReleaseSpec.from_dict(data).history.protect == "domain"  # a stated setting is kept as stated
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    census = generate_census(50, seed=0)
    for column in ("sex", "zip", "education", "marital_status"):
        census[[column]].drop_duplicates().assign(star="*").to_csv(
            folder / f"{column}.csv", sep=";", header=False, index=False
        )
    for with_age in (False, True):
        if with_age:
            census[["age"]].drop_duplicates().assign(star="*").to_csv(
                folder / "age.csv", sep=";", header=False, index=False
            )
        data = demo_spec_dict(tmp_path, rows=200, hierarchies=str(folder))
        assert ReleaseSpec.from_dict(data).history.protect == ("domain" if with_age else "records")


def test_the_gate_refuses_what_suppression_cannot_fix(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "domain", suppression=0.0)
    result = run_release(spec)
    assert not result.passed
    failed = {c.name: c for c in result.check.checks if not c.passed} if result.check else {}
    assert "history.protect: domain" in failed["composition"].detail
    assert "gone-a" not in failed["composition"].detail  # counts only
    assert read_published(spec.destination) is None


def test_protect_must_be_auto_records_or_domain(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="history.protect must be one of"):
        ReleaseSpec.from_dict(demo_spec_dict(tmp_path, history={"protect": "everyone"}))
