"""Data Docs sentences: "Table is 5-anonymous on age, zip, sex (observed k = 7)".

A mixin, so every expectation renders the same way from two class methods it
defines: ``sentence(params)`` (the template) and ``observed_label(params)``.
Only parameters, column names and measured numbers are rendered, never data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from great_expectations.render.components import (
    LegacyDiagnosticRendererType,
    LegacyRendererType,
    RenderedStringTemplateContent,
)
from great_expectations.render.renderer.renderer import renderer
from great_expectations.render.renderer_configuration import RendererConfiguration, RendererValueType

if TYPE_CHECKING:
    from great_expectations.core import ExpectationValidationResult
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

__all__ = ["DataDocsSentences", "number_text"]


def number_text(value: Any) -> str:
    """A measured value as people read it: ``7``, ``0.1532``, ``inf`` when no finite value exists."""
    if value is None:
        return "inf"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class DataDocsSentences:
    """Prescriptive (with and without a result) and observed-value renderers."""

    @classmethod
    def sentence(cls, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """A template with ``$name`` placeholders and its parameters."""
        raise NotImplementedError

    @classmethod
    def observed_label(cls, params: Mapping[str, Any]) -> str:
        """Name of the measured value ("k")."""
        raise NotImplementedError

    @classmethod
    def _sentence(
        cls, kwargs: Mapping[str, Any], result: ExpectationValidationResult | None
    ) -> tuple[str, dict[str, Any]]:
        template, params = cls.sentence(kwargs)
        params["quasi_identifiers"] = ", ".join(kwargs.get("quasi_identifiers") or [])
        measured = (result.result or {}) if result is not None else {}
        if "observed_value" in measured:
            template += f" (observed {cls.observed_label(kwargs)} = $observed_value)"
            params["observed_value"] = number_text(measured["observed_value"])
        return template + ".", params

    @classmethod
    def _prescriptive_template(cls, renderer_configuration: RendererConfiguration[Any]) -> RendererConfiguration[Any]:
        template, params = cls._sentence(renderer_configuration.kwargs, renderer_configuration.result)
        for name, value in params.items():
            renderer_configuration.add_param(name=name, param_type=RendererValueType.STRING, value=str(value))
        renderer_configuration.template_str = template
        return renderer_configuration

    @classmethod
    @renderer(renderer_type=LegacyRendererType.PRESCRIPTIVE)
    def _prescriptive_renderer(
        cls,
        configuration: ExpectationConfiguration | None = None,
        result: ExpectationValidationResult | None = None,
        runtime_configuration: dict[str, Any] | None = None,
    ) -> list[RenderedStringTemplateContent]:
        configuration = configuration or (result.expectation_config if result is not None else None)
        if configuration is None:
            return []
        template, params = cls._sentence(configuration.kwargs, result)
        styling = (runtime_configuration or {}).get("styling", {})
        string_template = {"template": template, "params": params, "styling": styling}
        return [RenderedStringTemplateContent(content_block_type="string_template", string_template=string_template)]

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.OBSERVED_VALUE)
    def _diagnostic_observed_value_renderer(
        cls,
        configuration: ExpectationConfiguration | None = None,
        result: ExpectationValidationResult | None = None,
        runtime_configuration: dict[str, Any] | None = None,
    ) -> str:
        measured = (result.result or {}) if result is not None else {}
        if result is None or "observed_value" not in measured:
            return "--"
        kwargs = result.expectation_config.kwargs if result.expectation_config is not None else {}
        text = f"{cls.observed_label(kwargs)} = {number_text(measured['observed_value'])}"
        violations = (measured.get("details") or {}).get("violations") or {}
        if violations.get("classes"):
            text += f"; {violations['classes']} classes / {violations['records']} records in violation"
        return text
