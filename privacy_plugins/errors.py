"""Every exception and warning the package raises, in one place.

Each error subclasses the matching built-in (``ValueError``, ``ImportError`` …) so
callers that already catch the built-in keep working, and messages name the
parameter or column, repeat the bad value and state what was expected.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "DestinationBusy",
    "DestinationError",
    "EmptyTableError",
    "ForeignArtifactError",
    "HierarchyError",
    "HistoryError",
    "InfeasibleAnonymizationError",
    "MissingDependencyError",
    "PeerError",
    "PopulationColumnError",
    "PopulationMismatchError",
    "PrivacyPluginsError",
    "PrivacyRiskWarning",
    "ProtocolError",
    "PublishError",
    "ReleaseBlocked",
    "RoleConflictError",
    "UnknownColumnError",
    "VerificationError",
]


class PrivacyPluginsError(Exception):
    """Base class of every error raised by privacy_plugins."""


class ConfigurationError(PrivacyPluginsError, ValueError):
    """A parameter, a role assignment or the input table is not acceptable."""


class UnknownColumnError(ConfigurationError):
    """A named column does not exist in the table."""


class PopulationMismatchError(ConfigurationError):
    """The population does not cover the sample: a combination, people or a column missing, or a size below it.

    A release names its ``population:`` setting in front of the message (the user's data, not a bug).
    """


class PopulationColumnError(PopulationMismatchError, UnknownColumnError):
    """The population table lacks a quasi-identifier or count column."""


class RoleConflictError(ConfigurationError):
    """A column is given twice, or in two roles (e.g. quasi-identifier and sensitive)."""


class EmptyTableError(ConfigurationError):
    """The table has no rows, so no privacy statement can be made about it."""


class HierarchyError(ConfigurationError):
    """A generalization hierarchy is malformed or does not cover the data."""


class InfeasibleAnonymizationError(PrivacyPluginsError):
    """No anonymization satisfies the requested models within the limits given."""


class VerificationError(PrivacyPluginsError):
    """The anonymized table failed the re-measurement of a requested model: nothing may be published."""


class ReleaseBlocked(PrivacyPluginsError):
    """A requirement failed on the anonymized table: nothing is published."""


class DestinationError(PrivacyPluginsError):
    """A destination cannot be read or written (an environment problem, not a privacy failure)."""


class PublishError(DestinationError):
    """Publishing failed; the destination was left as it was."""


class DestinationBusy(PrivacyPluginsError):
    """Another release is publishing to the same destination right now; nothing was published."""


class ForeignArtifactError(ConfigurationError):
    """An artifact of another run or release, or one pointing outside its run's working folder."""


class HistoryError(ConfigurationError):
    """A release history is missing, changed outside privacy-plugins, or does not fit the spec."""


class ProtocolError(ConfigurationError):
    """The peer broke the protocol: wrong parameters, malformed, replayed or missing messages."""


class PeerError(ProtocolError):
    """The peer disconnected, stalled, sent garbage, replayed a message or aborted."""


class MissingDependencyError(PrivacyPluginsError, ImportError):
    """An optional integration was used without its extra installed."""


class PrivacyRiskWarning(RuntimeWarning):
    """Something the caller asked for weakens privacy (e.g. printing raw values)."""
