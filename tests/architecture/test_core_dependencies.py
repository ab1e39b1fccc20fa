"""What the package opens without an extra is a core dependency (issue 24, item 22).

The release and the engines open ``duckdb://`` URLs through SQLAlchemy (DuckDB is the embedded
default destination), whose dialect comes from ``duckdb-engine``: declared only in an extra, a
plain ``pip install privacy-plugins`` fails with "Can't load plugin: sqlalchemy.dialects:duckdb".
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
#: SQLAlchemy URL scheme → the distribution that provides its dialect (the others ship with SQLAlchemy).
DIALECTS = {"duckdb": "duckdb-engine"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _sources_outside_the_extras() -> dict[Path, str]:
    """Package modules that work on the core install: not the framework adapters nor the two-party protocol."""
    skip = ("integrations", "distributed")
    return {
        path: path.read_text(encoding="utf-8")
        for path in (REPO / "privacy_plugins").rglob("*.py")
        if not any(part in skip for part in path.relative_to(REPO / "privacy_plugins").parts[:1])
    }


def test_every_sqlalchemy_dialect_the_core_install_opens_is_a_core_dependency() -> None:
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    used = {
        scheme
        for text in _sources_outside_the_extras().values()
        for scheme in DIALECTS
        if re.search(rf"['\"]{scheme}(\+\w+)?://", text)
    }
    assert used, "the release opens duckdb:// URLs; this test must see them"
    missing = sorted(DIALECTS[scheme] for scheme in used if DIALECTS[scheme] not in core)
    assert not missing, f"declare in [project] dependencies, not only in an extra: {missing}"


def test_the_constraints_pin_every_core_dependency() -> None:
    pinned = {_name(line) for line in (REPO / "constraints.txt").read_text().splitlines() if "==" in line}
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert core <= pinned, sorted(core - pinned)
