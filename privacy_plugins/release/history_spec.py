"""The ``history:`` setting of a release spec: which release history a release is checked against and appended to.

Default: on, named after the spec, every release kept. ``history: off`` turns it off (a
release is then checked alone — say why in the spec); ``history: {name: N}`` lets several
specs share one history; ``history: {keep_releases: N}`` keeps only the newest N releases;
``history: {reapply: false}`` stops the anonymize step from trying the last release's
transformation first (default: it does, so consumers see the same generalization as last time).
Deleting old releases does not protect anyone who kept a copy of them: the adversary of
repeated releases (docs/composition.md) holds every table ever exposed, so bound the
history only when the old releases were never exposed to the people you defend against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from privacy_plugins.errors import ConfigurationError

__all__ = ["HistorySpec"]

_NAME = re.compile(r"^[A-Za-z0-9_]{1,40}$")


@dataclass(frozen=True)
class HistorySpec:
    """``history: {name, keep_releases, reapply, keep_signatures, protect}``, or ``history: off``."""

    enabled: bool = True
    name: str | None = None
    keep_releases: int | None = None
    #: Try the last release's transformation before anonymizing anew (``docs/release-history.md``).
    reapply: bool = True
    #: Rows may be deleted between releases: every class keeps the values of the last release's classes it
    #: overlaps (m-invariance without counterfeits: ``privacy_plugins/core/history_signatures.py``).
    keep_signatures: bool = False
    #: What the composition check protects: ``records`` (the current source's) or ``domain`` (every point of the
    #: QI domain: newcomers pinned before they joined, deleted people: ``core/history_domain.py``). ``auto``
    #: (default) is resolved by the spec: ``domain`` when every quasi-identifier has a hierarchy (the domain's
    #: points are the hierarchies' leaves), else ``records``.
    protect: str = "auto"
    #: Set in the spec (not the default): a destination that cannot keep one refuses it instead of turning it off.
    explicit: bool = False

    KEYS = ("name", "keep_releases", "reapply", "keep_signatures", "protect")
    PROTECT = ("auto", "records", "domain")

    def __post_init__(self) -> None:
        if self.name is not None and not _NAME.match(self.name):
            raise ConfigurationError(
                f"history.name must be 1-40 letters, digits or '_' (it names tables), got {self.name!r}"
            )
        keep = self.keep_releases
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise ConfigurationError(f"history.keep_releases must be an integer >= 1, got {keep!r}")
        if not isinstance(self.reapply, bool):
            raise ConfigurationError(f"history.reapply must be true or false, got {self.reapply!r}")
        if not isinstance(self.keep_signatures, bool):
            raise ConfigurationError(f"history.keep_signatures must be true or false, got {self.keep_signatures!r}")
        if self.protect not in self.PROTECT:
            raise ConfigurationError(f"history.protect must be one of {list(self.PROTECT)}, got {self.protect!r}")

    def resolve_protect(self, every_qi_has_hierarchy: bool) -> HistorySpec:
        """``auto`` made ``domain`` or ``records``; a setting the spec states is kept (checked where it is used)."""
        if self.protect != "auto":
            return self
        return replace(self, protect="domain" if every_qi_has_hierarchy else "records")

    @property
    def protect_domain(self) -> bool:
        """The composition check judges points of the QI domain, not only present records."""
        return self.protect == "domain"

    @classmethod
    def from_value(cls, value: Any) -> HistorySpec:
        """``None`` (default: on), ``true``/``false`` (``off`` in YAML), or a mapping of :attr:`KEYS`."""
        if value is None:
            return cls()
        if value is True:
            return cls(explicit=True)
        if value is False:
            return cls(enabled=False)
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"history must be off, on or a mapping with {list(cls.KEYS)}, got {value!r}")
        unknown = sorted(str(key) for key in value if key not in cls.KEYS)
        if unknown:
            raise ConfigurationError(f"history: unknown setting(s) {unknown}; known: {list(cls.KEYS)}")
        name = value.get("name")
        return cls(
            name=None if name is None else str(name),
            keep_releases=value.get("keep_releases"),
            reapply=True if value.get("reapply") is None else value["reapply"],
            keep_signatures=False if value.get("keep_signatures") is None else value["keep_signatures"],
            protect="auto" if value.get("protect") is None else value["protect"],
            explicit=True,
        )

    def history_name(self, spec_name: str) -> str:
        """The history's name: the setting, else the spec's name made a table-name fragment."""
        if self.name is not None:
            return self.name
        return re.sub(r"[^A-Za-z0-9_]", "_", spec_name)[:40] or "release"
