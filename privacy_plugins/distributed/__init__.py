"""The DPP2GA transport: framed messages over TCP (asyncio streams), one party per process.

The protocol's logic is :mod:`privacy_plugins.core.distributed`; this package
moves its messages (:mod:`.wire`), runs a party (:mod:`.runner`) and adds the
X25519 cipher (:mod:`.x25519`, through ``cryptography``).
"""

from privacy_plugins.distributed.runner import GROUPS, PartyResult, make_cipher, run_party, run_two_parties
from privacy_plugins.errors import PeerError

__all__ = ["GROUPS", "PartyResult", "PeerError", "make_cipher", "run_party", "run_two_parties"]
