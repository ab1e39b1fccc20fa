"""No module of the release layer reaches into another module's private names (issue 25, item 2).

Each destination kind keeps its swap to itself (``release/destination/``); the rest of the
release layer calls their public methods. A private name (``_x``) imported from, or read
off, another ``privacy_plugins`` module is a seam someone forgot to make public.
"""

from __future__ import annotations

import ast
from pathlib import Path

RELEASE = Path(__file__).resolve().parents[2] / "privacy_plugins" / "release"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def crossings(path: Path) -> list[str]:
    """``module: name`` for every private name of another privacy_plugins module used in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()  # local names bound to privacy_plugins modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("privacy_plugins"):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.module}.{alias.name}")
                modules.add(alias.asname or alias.name)  # a submodule or a name; attributes checked below
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("privacy_plugins"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _private(node.attr)
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_release_modules_use_no_other_modules_private_names() -> None:
    violations = {
        str(path.relative_to(RELEASE)): found for path in sorted(RELEASE.rglob("*.py")) if (found := crossings(path))
    }
    assert violations == {}


def test_the_check_sees_a_crossing(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from privacy_plugins.release import destinations\n"
        "from privacy_plugins.release.steps import _accept\n"
        "destinations._swap_hook()\n"
    )
    assert crossings(module) == ["privacy_plugins.release.steps._accept", "destinations._swap_hook"]
