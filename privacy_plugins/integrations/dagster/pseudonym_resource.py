"""PseudonymKeyResource: the pseudonym key of a release from a Dagster resource, set with ``dg.EnvVar``.

A spec says ``pseudonymize: {key: {resource: pseudonym_key}}``; the release assets then
require the resource ``pseudonym_key`` and resolve the key from it in the load step only.
Set the field with ``dg.EnvVar("NAME")``: Dagster stores and shows the variable's name, and
the value is read when the run starts; the assets put the key in no metadata, log or event.

No ``from __future__ import annotations`` here: it breaks Dagster's ``ConfigurableResource``.
"""

import dagster as dg
from pydantic import Field

__all__ = ["PseudonymKeyResource"]


class PseudonymKeyResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The secret key for ``pseudonymize:`` (at least 32 bytes); set ``key`` with ``dg.EnvVar``, never a literal.

    Example:
        >>> import dagster as dg
        >>> resource = PseudonymKeyResource(key=dg.EnvVar("PRIVACY_PLUGINS_PSEUDONYM_KEY"))
    """

    key: str = Field(description="The pseudonym key: set it with dg.EnvVar('NAME'), never as a literal.")

    def secret(self) -> str:
        """The key's text (read by the load step only)."""
        return self.key
