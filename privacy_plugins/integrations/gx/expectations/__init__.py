"""The privacy expectations, one per file (the file name is the GX snake_case type).

The four model families have their own; ``ExpectTableToSatisfyPrivacyModel`` takes any model by name;
``ExpectTableAttackRiskToBeBelow`` attacks the table (a release) with the original's records, and
``ExpectTableToComposeWithHistory`` intersects it with its release history.
"""

from privacy_plugins.integrations.gx.expectations.expect_table_attack_risk_to_be_below import (
    ExpectTableAttackRiskToBeBelow,
)
from privacy_plugins.integrations.gx.expectations.expect_table_to_be_k_anonymous import ExpectTableToBeKAnonymous
from privacy_plugins.integrations.gx.expectations.expect_table_to_be_l_diverse import ExpectTableToBeLDiverse
from privacy_plugins.integrations.gx.expectations.expect_table_to_be_t_close import ExpectTableToBeTClose
from privacy_plugins.integrations.gx.expectations.expect_table_to_compose_with_history import (
    ExpectTableToComposeWithHistory,
)
from privacy_plugins.integrations.gx.expectations.expect_table_to_have_no_direct_identifiers import (
    ExpectTableToHaveNoDirectIdentifiers,
)
from privacy_plugins.integrations.gx.expectations.expect_table_to_satisfy_personalized_leakage_bound import (
    ExpectTableToSatisfyPersonalizedLeakageBound,
)
from privacy_plugins.integrations.gx.expectations.expect_table_to_satisfy_privacy_model import (
    ExpectTableToSatisfyPrivacyModel,
)

__all__ = [
    "ExpectTableAttackRiskToBeBelow",
    "ExpectTableToBeKAnonymous",
    "ExpectTableToBeLDiverse",
    "ExpectTableToBeTClose",
    "ExpectTableToComposeWithHistory",
    "ExpectTableToHaveNoDirectIdentifiers",
    "ExpectTableToSatisfyPersonalizedLeakageBound",
    "ExpectTableToSatisfyPrivacyModel",
]
