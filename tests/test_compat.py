from __future__ import annotations

import pytest

from privacy_plugins.errors import MissingDependencyError
from privacy_plugins.integrations._compat import import_optional_dependency


def test_missing_optional_dependency_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError, match=r"pip install 'privacy-plugins\[gx\]'"):
        import_optional_dependency("surely_not_installed_module_xyz", extra="gx")
    with pytest.raises(ImportError):
        import_optional_dependency("surely_not_installed_module_xyz", extra="gx")


def test_present_dependency_is_returned() -> None:
    assert import_optional_dependency("json", extra="gx").dumps([1]) == "[1]"
