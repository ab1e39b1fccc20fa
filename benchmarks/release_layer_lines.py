"""Lines of ``privacy_plugins/release`` + ``privacy_plugins/engines`` at a git revision (issue 25's size goal).

Prints all lines and code lines (no docstrings, comments or blank lines; counted with ``ast`` and
``tokenize``) of the Python files under both folders as they are at ``REV``.

Run:  .venv/bin/python benchmarks/release_layer_lines.py c24d5e0 HEAD
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize

FOLDERS = ("privacy_plugins/release", "privacy_plugins/engines")
_SKIPPED = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def code_lines(source: str) -> int:
    """Lines holding code: not blank, not a comment, not part of a string statement (docstrings)."""
    strings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            strings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _SKIPPED:
            lines.update(line for line in range(token.start[0], token.end[0] + 1) if line not in strings)
    return len(lines)


def count(revision: str) -> tuple[int, int]:
    """All lines and code lines of the two folders' Python files at ``revision``."""
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", revision, *FOLDERS], capture_output=True, text=True, check=True
    )
    total = code = 0
    for path in (p for p in listing.stdout.split() if p.endswith(".py")):
        source = subprocess.run(["git", "show", f"{revision}:{path}"], capture_output=True, text=True, check=True)
        total += source.stdout.count("\n")
        code += code_lines(source.stdout)
    return total, code


if __name__ == "__main__":
    for rev in sys.argv[1:] or ["HEAD"]:
        lines, code = count(rev)
        print(f"{rev}: {lines} lines, {code} code lines")
