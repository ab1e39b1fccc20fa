"""Direct-identifier detection over column names and sampled values (HIPAA Safe Harbor categories)."""

from __future__ import annotations

from privacy_plugins.core.identifiers.detector import CATEGORIES, IdentifierFinding, detect_identifiers

__all__ = ["CATEGORIES", "IdentifierFinding", "detect_identifiers"]
