"""No code outside an algorithm's own file asks its name: callers read the anonymizer's tags (issue 25, item 1).

The rules, checked on the syntax tree (so a comment or a docstring never trips them):

1. **Names.** In ``privacy_plugins/`` a string constant equal to a registered algorithm
   name (``anonymizer_names()``) may appear only

   a. in an anonymizer's own module: the module that defines the class
      ``get_anonymizer(name)`` returns (``full_domain.py`` for the lattice searches …);
   b. inside a ``register_anonymizer(...)`` call (the registration lines);
   c. as the value of ``DEFAULT_ALGORITHM`` in ``core/anonymize/registry.py``, the one
      default every surface uses;
   d. in :data:`ELSEWHERE`: a search that labels its own results and two words that only
      spell like an algorithm, each with its reason.

   Anywhere else — a comparison, a lookup, a dict key, a list of names, another default —
   it is a question about an algorithm's identity that its tags should answer.
2. **Name-keyed tables.** Outside the anonymizer modules, nothing is imported from the core
   that is a mapping or collection of registered names (a table of searches by name is the
   same question asked by membership).
3. **Probes.** Outside ``core/anonymize/registry.py`` (whose ``tags_of`` is the one place
   that looks), neither the package nor the tests call ``getattr``/``hasattr`` with the name
   of a tag, of ``tags`` itself or of a method a tag promises.
4. **Tests.** A test module that runs every registered algorithm (it calls
   ``anonymizer_names()``) does not branch on a name: no ``if``, conditional expression or
   comprehension filter compares with a registered name, and no dict is keyed by one.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from privacy_plugins.core.anonymize import anonymizer_names, get_anonymizer

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "privacy_plugins"
NAMES = frozenset(anonymizer_names())
#: Modules (relative to the package) allowed to spell some names, and why.
ELSEWHERE: dict[str, tuple[frozenset[str], str]] = {
    "core/anonymize/generalization_lattice.py": (
        frozenset({"optimal", "samarati", "exhaustive"}),
        "the full-domain searches (optimal_search, samarati_search, exhaustive_search) label their own results",
    ),
    "core/diagnosis/result.py": (frozenset({"exhaustive"}), "the diagnosis's search mode, not an algorithm"),
    "distributed/wire.py": (frozenset({"dpp2ga"}), "PROTOCOL_NAME: the two-party wire protocol's name in a HELLO"),
}
REGISTRY = "core/anonymize/registry.py"
#: Attribute names a probe would ask instead of reading tags: ``tags``, every tag, the methods
#: a tag promises, and the attributes the tags replaced.
PROBED = frozenset(
    {
        "tags",
        "works_on_snapshot",
        "searches_lattice",
        "needs_hierarchies",
        "linked_tables",
        "supported_models",
        "partial_scope",
        "suppresses",
        "research_subset",
        "works_per_block",
        "block_limit",
        "block_admissible",
        "solve_snapshot",
        "snapshot_refusal",
        "protected_models",
        "capabilities",
        "model_families",
    }
)


def _own_modules() -> set[str]:
    """The package-relative paths of the modules defining the registered anonymizers' classes."""
    own = set()
    for name in NAMES:
        module = sys.modules[type(get_anonymizer(name)).__module__]
        own.add(Path(str(module.__file__)).resolve().relative_to(PACKAGE).as_posix())
    return own


def _sources(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _in_order(found: list[str]) -> list[str]:
    """``path:line: …`` entries by path and line (the walk is breadth-first)."""
    return sorted(found, key=lambda entry: (entry.split(":")[0], int(entry.split(":")[1])))


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES


def _allowed_constants(tree: ast.Module, relative: str) -> set[int]:
    """The ids of the name constants in the positions rule 1 allows (b, c)."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        registration = (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "register_anonymizer"
        )
        default = (
            relative == REGISTRY
            and isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == ["DEFAULT_ALGORITHM"]
        )
        if registration or default:
            allowed.update(id(inner) for inner in ast.walk(node))
    return allowed


def name_constants_outside_their_files(root: Path = PACKAGE) -> list[str]:
    """Rule 1's offenders, as ``path:line: 'name'``."""
    own = _own_modules()
    found = []
    for relative, tree in _sources(root):
        if relative in own:
            continue
        allowed = _allowed_constants(tree, relative)
        spelled = ELSEWHERE.get(relative, (frozenset(), ""))[0]
        for node in ast.walk(tree):
            if _is_name(node) and id(node) not in allowed and node.value not in spelled:  # type: ignore[attr-defined]
                found.append(f"{relative}:{node.lineno}: {node.value!r}")  # type: ignore[attr-defined]
    return _in_order(found)


def _holds_names(value: object) -> bool:
    if isinstance(value, Mapping):
        return bool(NAMES & {key for key in value if isinstance(key, str)})
    if isinstance(value, (set, frozenset, tuple, list)):
        return bool(NAMES & {item for item in value if isinstance(item, str)})
    return False


def name_keyed_imports(root: Path = PACKAGE) -> list[str]:
    """Rule 2's offenders: ``from privacy_plugins.core… import X`` where X is a table of names."""
    own = _own_modules()
    found = []
    for relative, tree in _sources(root):
        if relative in own:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("privacy_plugins.core")):
                continue
            module = importlib.import_module(str(node.module))
            found += [
                f"{relative}:{node.lineno}: {alias.name}"
                for alias in node.names
                if _holds_names(getattr(module, alias.name, None))
            ]
    return _in_order(found)


def probes(root: Path, *, skip: frozenset[str] = frozenset()) -> list[str]:
    """Rule 3's offenders: ``getattr``/``hasattr`` asking a tag, ``tags`` or a promised method by name."""
    found = []
    for relative, tree in _sources(root):
        if relative in skip:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in PROBED
            ):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    return _in_order(found)


def _compares_a_name(condition: ast.AST) -> bool:
    for node in ast.walk(condition):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                if any(_is_name(item) for item in items):
                    return True
    return False


def name_branches_in_every_algorithm_tests(root: Path = REPO / "tests") -> list[str]:
    """Rule 4's offenders in the test modules that call ``anonymizer_names()``."""
    found = []
    for relative, tree in _sources(root):
        calls = any(
            isinstance(node, ast.Call) and getattr(node.func, "id", None) == "anonymizer_names"
            for node in ast.walk(tree)
        )
        if not calls:
            continue
        for node in ast.walk(tree):
            conditions: list[ast.expr] = []
            if isinstance(node, (ast.If, ast.IfExp, ast.While)):
                conditions = [node.test]
            elif isinstance(node, ast.comprehension):
                conditions = list(node.ifs)
            elif isinstance(node, ast.Dict) and any(key is not None and _is_name(key) for key in node.keys):
                found.append(f"{relative}:{node.lineno}: a dict keyed by algorithm names")
            found += [f"{relative}:{c.lineno}: {ast.unparse(c)}" for c in conditions if _compares_a_name(c)]
    return _in_order(found)


def test_no_module_outside_an_algorithms_own_file_spells_its_name() -> None:
    found = name_constants_outside_their_files()
    assert not found, "read the anonymizer's tags instead of its name (tests/architecture rule 1):\n" + "\n".join(found)


def test_no_table_of_algorithm_names_is_imported() -> None:
    found = name_keyed_imports()
    assert not found, "a table keyed by algorithm names: declare a tag instead:\n" + "\n".join(found)


def test_tags_are_read_through_tags_of_only() -> None:
    found = probes(PACKAGE, skip=frozenset({REGISTRY})) + probes(REPO / "tests")
    assert not found, "read tags_of(anonymizer), never getattr/hasattr:\n" + "\n".join(found)


def test_every_algorithm_tests_do_not_branch_on_a_name() -> None:
    found = name_branches_in_every_algorithm_tests()
    assert not found, "branch on tags_of(get_anonymizer(name)), not on the name:\n" + "\n".join(found)


def test_the_rules_know_every_tag_and_every_exception_still_applies() -> None:
    from dataclasses import fields

    from privacy_plugins.core.anonymize import AnonymizerTags

    assert {field.name for field in fields(AnonymizerTags)} <= PROBED
    for relative, (names, _why) in ELSEWHERE.items():
        text = (PACKAGE / relative).read_text(encoding="utf-8")
        assert names <= NAMES and all(f'"{name}"' in text for name in names), relative  # no stale exception


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """Each rule flags a module that breaks it (outside any anonymizer's own file)."""
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "bad.py").write_text(
        "from privacy_plugins.core.anonymize import get_anonymizer\n"
        "from privacy_plugins.core.anonymize.full_domain import _SEARCHES\n"
        "def needs_rows(name):\n"
        '    if name in ("optimal", "samarati"):\n'
        "        return False\n"
        '    return getattr(get_anonymizer(name), "needs_hierarchies", False)\n',
        encoding="utf-8",
    )
    (tmp_path / "test_bad.py").write_text(
        "from privacy_plugins.core.anonymize import anonymizer_names\n"
        "OPTIONS = {'sensitive-values': {}}\n"
        "K = [n for n in anonymizer_names() if n != 'dpp2ga']\n",
        encoding="utf-8",
    )
    assert name_constants_outside_their_files(tmp_path) == [
        "release/bad.py:4: 'optimal'",
        "release/bad.py:4: 'samarati'",
        "test_bad.py:2: 'sensitive-values'",
        "test_bad.py:3: 'dpp2ga'",
    ]
    assert name_keyed_imports(tmp_path) == ["release/bad.py:2: _SEARCHES"]
    assert probes(tmp_path) == ["release/bad.py:6: getattr(get_anonymizer(name), 'needs_hierarchies', False)"]
    assert name_branches_in_every_algorithm_tests(tmp_path) == [
        "test_bad.py:2: a dict keyed by algorithm names",
        "test_bad.py:3: n != 'dpp2ga'",
    ]
