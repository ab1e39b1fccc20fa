"""Two-party distributed k-anonymity (DPP2GA, Jiang & Clifton): the pure protocol logic.

Partitions and local generalization (:mod:`.party`), the commutative cipher
(:mod:`.cipher`) and the rounds (:mod:`.protocol`). No sockets here: the TCP
transport is :mod:`privacy_plugins.distributed`.
"""

from privacy_plugins.core.distributed.cipher import MODP_2048_PRIME, CommutativeCipher, ModpCipher
from privacy_plugins.core.distributed.party import LocalParty, canonical_labels
from privacy_plugins.core.distributed.protocol import (
    TOKEN_DIGEST_SIZE,
    Dpp2gaSession,
    TrustedRun,
    join_is_k_anonymous,
    trusted_third_party,
)
from privacy_plugins.errors import ProtocolError

__all__ = [
    "MODP_2048_PRIME",
    "TOKEN_DIGEST_SIZE",
    "CommutativeCipher",
    "Dpp2gaSession",
    "LocalParty",
    "ModpCipher",
    "ProtocolError",
    "TrustedRun",
    "canonical_labels",
    "join_is_k_anonymous",
    "trusted_third_party",
]
