"""The test tree's own layout: pytest imports test files by basename (rootdir mode, no packages)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_unique_basename() -> None:
    """Two ``test_x.py`` in different folders stop the whole run at collection ("import file mismatch")."""
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert not [name for name, count in names.items() if count > 1]
