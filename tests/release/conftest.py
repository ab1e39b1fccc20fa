"""Fixtures of the release tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from privacy_plugins.release.workarea import MAX_AGE_ENV, WORKDIR_ENV


@pytest.fixture
def work_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the default per-run working folders go for this test (instead of the system temp dir)."""
    root = tmp_path / "work_root"
    monkeypatch.setenv(WORKDIR_ENV, str(root))
    monkeypatch.delenv(MAX_AGE_ENV, raising=False)
    return root
