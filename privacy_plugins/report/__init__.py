"""Human-readable reports of the core's results: HTML with matplotlib plots.

Kept outside :mod:`privacy_plugins.core` because it needs matplotlib; the core
never imports this package. Callers render a diagnosis with :func:`render`.

Example:
    >>> import pandas as pd
    >>> from privacy_plugins.core.diagnosis import diagnose
    >>> df = pd.DataFrame({"age": [30, 30, 40, 40], "sex": ["F", "M", "F", "M"]})
    >>> html = render(diagnose(df, quasi_identifiers=["age", "sex"], k=2))
    >>> html.startswith("<!DOCTYPE html>"), "<svg" in html
    (True, True)
"""

from __future__ import annotations

from pathlib import Path

from privacy_plugins.core.diagnosis import PrivacyDiagnosis
from privacy_plugins.report.html import render_diagnosis_html

__all__ = ["render", "render_diagnosis_html", "write_diagnosis_html"]


def render(diagnosis: PrivacyDiagnosis) -> str:
    """The diagnosis as a self-contained HTML page with plots (never a raw value of the table)."""
    return render_diagnosis_html(diagnosis)


def write_diagnosis_html(diagnosis: PrivacyDiagnosis, path: str | Path) -> Path:
    """Write the report to ``path`` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(render_diagnosis_html(diagnosis), encoding="utf-8")
    return target
