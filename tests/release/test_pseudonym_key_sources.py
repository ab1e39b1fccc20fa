"""pseudonymize.key: {resource: NAME} resolves only through a resolver (Dagster's); never echoes the key."""

from __future__ import annotations

import pytest

from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release.pseudonym_keys import PseudonymizeSpec, resource_resolver

SECRET = "a-resource-key-that-is-long-enough-0123456789"


def test_a_resource_key_outside_dagster_is_a_clear_error() -> None:
    spec = PseudonymizeSpec.from_value({"columns": ["id"], "key": {"resource": "pseudonym_key"}})
    assert spec is not None and spec.describe()["key"] == {"resource": "pseudonym_key"}
    with pytest.raises(ConfigurationError, match="resolved only in a Dagster run.*'pseudonym_key'"):
        spec.key()
    with resource_resolver(lambda name: SECRET if name == "pseudonym_key" else None):
        assert "hidden" in repr(spec.key())


def test_two_key_sources_or_a_literal_key_are_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigurationError, match="never goes into a spec file") as error:
        PseudonymizeSpec.from_value({"columns": ["id"], "key": {"resource": "r", "env": "E"}})
    with pytest.raises(ConfigurationError, match="never goes into a spec file") as error:
        PseudonymizeSpec.from_value({"columns": ["id"], "key": SECRET})
    assert SECRET not in str(error.value)
