"""A release gated by hierarchical-distance t-closeness (YAML shorthand and list form)."""

from __future__ import annotations

from pathlib import Path

import pytest
from release_fixtures import demo_spec_dict

import privacy_plugins as pp
from privacy_plugins.core.hierarchies import build_hierarchy
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published, run_release

DISEASES = {"*": {"infectious": ["flu", "HIV", "bronchitis"], "chronic": ["diabetes", "hypertension", "asthma",
                                                                        "cancer"], "healthy": ["none"]}}  # fmt: skip


def spec_with(tmp_path: Path, requirements: object, *, with_hierarchy: bool = True) -> ReleaseSpec:
    data = demo_spec_dict(tmp_path, rows=600, sensitive_attributes=["disease"], requirements=requirements)
    if with_hierarchy:
        data["hierarchies"] = {**data["hierarchies"], "disease": {"taxonomy": DISEASES}}
    return ReleaseSpec.from_dict(data, base_dir=tmp_path)


def test_release_meets_the_hierarchical_t_it_was_gated_by(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, {"k": 2, "t": 0.25, "t_distance": "hierarchical", "suppression_limit": 0.05})
    result = run_release(spec)
    assert result.passed, result.failure
    published = read_published(spec.destination)
    assert published is not None
    t = pp.t_closeness(
        published,
        quasi_identifiers=list(spec.quasi_identifiers),
        sensitive_attribute="disease",
        t_distance="hierarchical",
        sensitive_hierarchy=build_hierarchy("disease", {"taxonomy": DISEASES}),
    )
    assert t <= 0.25 + 1e-9


def test_the_list_form_binds_the_spec_hierarchy(tmp_path: Path) -> None:
    listed = [{"t_closeness": {"sensitive_attribute": "disease", "t": 0.25, "t_distance": "hierarchical"}}]
    (model,) = spec_with(tmp_path, listed).models()
    hierarchy = model.with_hierarchies({}).sensitive_hierarchy  # type: ignore[attr-defined]
    assert hierarchy is not None and hierarchy.height == 2
    assert str(model) == "0.25-closeness (hierarchical distance) for 'disease'"


def test_hierarchical_t_without_a_hierarchy_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, {"k": 2, "t": 0.25, "t_distance": "hierarchical"}, with_hierarchy=False)
    with pytest.raises(ConfigurationError, match="needs a hierarchy of the sensitive attribute 'disease'"):
        run_release(spec)
    assert read_published(spec.destination) is None
