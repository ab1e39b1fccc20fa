#!/usr/bin/env bash
# Create ./.venv with Python >= 3.11 and install privacy-plugins (editable) with the
# extras in $EXTRAS (default: test), pinned by constraints.txt. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${EXTRAS:-test}"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then PYTHON="$candidate"; break; fi
  done
fi
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "privacy-plugins needs Python >= 3.11, found " + sys.version.split()[0])'
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# uv resolves and installs in seconds: use the venv's own (installed on first run), or one
# already on PATH; fall back to plain pip when neither is available.
if [ ! -x .venv/bin/uv ] && .venv/bin/python -m pip --version >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q --disable-pip-version-check uv >/dev/null 2>&1 || true
fi
UV="$(command -v .venv/bin/uv || command -v uv || true)"
if [ -n "$UV" ]; then
  "$UV" pip install -q --python .venv/bin/python -c constraints.txt -e ".[${EXTRAS}]"
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[${EXTRAS}]"
fi
echo "privacy-plugins installed in $(pwd)/.venv (extras: ${EXTRAS})" >&2
