"""The rounds of DPP2GA (Jiang & Clifton) as a transport-free state machine.

What is encrypted. Every record id x is hashed into the cipher's group, h(x),
and each party encrypts it under its own key of a commutative cipher, so the
*token* t(x) = E_A(E_B(h(x))) = E_B(E_A(h(x))) is the same at both parties and
neither can compute it alone. Tokens are made once, at the start, for the
party's first (locally k-anonymous) partition γ¹:

1. each party sends its classes of γ¹ as lists of E_own(h(x)) — classes in a
   random order, ids shuffled within each class;
2. each encrypts the other's lists under its own key, keeps the 16-byte digests
   of the tokens (so it knows the other's γ¹ as a set of sets of tokens) and
   sends the digests back, class order kept, shuffled within each class (so the
   owner learns which token set is each of its own classes, and nothing finer).

Later partitions only coarsen γ¹ (full-domain generalization along hierarchy
trees merges classes), so each round a party sends only its *grouping*: the
current class of each of its γ¹ classes, canonically numbered. With both γ¹ as
token sets and both groupings, each party forms the join partition over tokens
and tests the paper's condition: no classes p, q with 0 < |γ_A[p] ∩ γ_B[q]| < k
(the slides' "γ₁ = γ₂"; literal set equality would over-generalize, as the
slides' round 2 shows). It holds exactly when the join is k-anonymous. While it
fails both parties generalize one more step (:meth:`LocalParty.step`). At the
end each sends the generalized values of its current classes and both build
the same join: one row per token (sorted by token, an order unrelated to ids)
with no id column.

What each party learns. About the other's data: its class sizes and, per
round, the intersection sizes |γ_A[p] ∩ γ_B[q]| between its own classes and the
other's (tokens are linked to its own classes, each of at least k records,
never to a single id: that is the inference the paper discusses and bounds by
k-anonymity), the number of rounds and finally the published join. It learns
no other value, no id↔token link of the other party, and no key. The cipher is
secure for semi-honest parties (DDH in the group); a malicious peer can lie
about its partition, which the protocol cannot detect.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privacy_plugins.core.distributed.cipher import CommutativeCipher
from privacy_plugins.core.distributed.party import LocalParty, canonical_labels
from privacy_plugins.core.hierarchies.hierarchy import Hierarchy
from privacy_plugins.errors import ConfigurationError, ProtocolError

__all__ = [
    "TOKEN_DIGEST_SIZE",
    "Dpp2gaSession",
    "TrustedRun",
    "join_is_k_anonymous",
    "trusted_third_party",
]

#: Bytes of the digest of a doubly encrypted id (collisions: ~n²/2¹²⁹).
TOKEN_DIGEST_SIZE = 16


def join_is_k_anonymous(first: np.ndarray, second: np.ndarray, k: int) -> bool:
    """True when every non-empty intersection of a class of ``first`` and one of ``second`` has ≥ k records.

    Example:
        >>> join_is_k_anonymous(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0]), 2)
        True
        >>> join_is_k_anonymous(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), 2)
        False
    """
    pairs = first.astype(np.int64) * (int(second.max(initial=0)) + 1) + second.astype(np.int64)
    _, counts = np.unique(pairs, return_counts=True)
    return bool((counts >= k).all())


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()[:TOKEN_DIGEST_SIZE]


@dataclass(eq=False)
class Dpp2gaSession:
    """One party's protocol state; the transport moves the values its methods return.

    Call order: :meth:`encrypted_classes` → (exchange) → :meth:`answer` → (exchange)
    → :meth:`accept_answer`; then per round :meth:`grouping` → (exchange) →
    :meth:`satisfied`, and :meth:`step` while it is false; finally
    :meth:`class_labels` → (exchange) → :meth:`join`.
    """

    party: LocalParty
    cipher: CommutativeCipher
    rounds: int = 0
    _order: list[int] = field(default_factory=list)  # γ¹ class sent at each position
    _own_class: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # per sorted token
    _their_class: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    _their_classes: list[list[bytes]] = field(default_factory=list)
    _first: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # γ¹ of every record
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)

    def encrypted_classes(self, salt: bytes) -> list[list[bytes]]:
        """The first partition, each id hashed and encrypted under our key; classes and ids shuffled."""
        self._first = self.party.record_classes()
        n_classes = int(self._first.max()) + 1
        self._order = list(range(n_classes))
        self._rng.shuffle(self._order)
        encrypted = self.cipher.encrypt(self.cipher.hash_to_group(self.party.record_ids, salt))
        members: list[list[bytes]] = [[] for _ in range(n_classes)]
        for record, cls in enumerate(self._first.tolist()):
            members[cls].append(encrypted[record])
        out = []
        for cls in self._order:
            self._rng.shuffle(members[cls])
            out.append(members[cls])
        return out

    def answer(self, theirs: Sequence[Sequence[bytes]]) -> list[list[bytes]]:
        """Encrypt the other's classes under our key: keep the token digests, return them shuffled per class.

        Raises:
            ProtocolError: the classes do not cover the agreed number of records, a class is
                smaller than k, or an element is not in the group.
        """
        sizes = [len(c) for c in theirs]
        if sum(sizes) != self.party.n_records:
            raise ProtocolError(f"the peer's partition covers {sum(sizes)} records, not {self.party.n_records}")
        if sizes and min(sizes) < self.party.k:
            raise ProtocolError(f"the peer's partition has a class of {min(sizes)} < k = {self.party.k} records")
        flat = self.cipher.encrypt([element for cls in theirs for element in cls])
        digests = [_digest(token) for token in flat]
        out, start = [], 0
        for size in sizes:
            cls = digests[start : start + size]
            start += size
            self._rng.shuffle(cls)
            out.append(cls)
        self._their_classes = [list(c) for c in out]
        return out

    def accept_answer(self, answer: Sequence[Sequence[bytes]]) -> None:
        """Take our classes back as token digests and index both partitions by token.

        Raises:
            ProtocolError: the answer does not match what we sent, or the two parties'
                record ids differ.
        """
        sent = np.bincount(self._first, minlength=len(self._order))[self._order]
        if [len(c) for c in answer] != sent.tolist():
            raise ProtocolError("the peer's answer does not have the shape of the partition we sent")
        mine = {d: position for position, cls in enumerate(answer) for d in cls}
        theirs = {d: position for position, cls in enumerate(self._their_classes) for d in cls}
        n = self.party.n_records
        if len(mine) != n or len(theirs) != n:
            raise ProtocolError("duplicate tokens: the peer's answer is malformed")
        if mine.keys() != theirs.keys():
            unmatched = len(mine.keys() - theirs.keys())
            raise ProtocolError(f"the two parties' record ids differ ({unmatched} of {n} have no match)")
        tokens = sorted(mine)
        self._own_class = np.fromiter((mine[t] for t in tokens), dtype=np.int64, count=n)
        self._their_class = np.fromiter((theirs[t] for t in tokens), dtype=np.int64, count=n)
        self.rounds = 1

    def grouping(self) -> list[int]:
        """The current class of each γ¹ class (in the order sent), canonically numbered."""
        current = self.party.record_classes()
        first_record = np.full(len(self._order), -1, dtype=np.int64)
        first_record[self._first[::-1]] = np.arange(len(self._first))[::-1]
        of_first = current[first_record]
        return canonical_labels(of_first[self._order]).tolist()

    def satisfied(self, mine: Sequence[int], theirs: Sequence[int]) -> bool:
        """The paper's equality test: the join of the two current partitions is k-anonymous.

        Raises:
            ProtocolError: the peer's grouping is not a canonical grouping of its γ¹ classes.
        """
        n_theirs = len(self._their_classes)
        groups = np.asarray(theirs, dtype=np.int64)
        if groups.shape != (n_theirs,) or (n_theirs and not np.array_equal(canonical_labels(groups), groups)):
            raise ProtocolError(f"the peer's grouping of round {self.rounds} is malformed")
        return join_is_k_anonymous(np.asarray(mine)[self._own_class], groups[self._their_class], self.party.k)

    def step(self, max_rounds: int) -> None:
        """Generalize one step (a party at the top of every hierarchy stays) and count the round."""
        self.party.step()
        self.rounds += 1
        if self.rounds > max_rounds:
            raise ProtocolError(f"no agreement after {max_rounds} rounds; the peer does not follow the protocol")

    def class_labels(self) -> list[list[str]]:
        """The generalized values of each current class (numbered as in :meth:`grouping`)."""
        groups = self.grouping()
        values = self.party.generalized()
        first_record = np.full(len(self._order), -1, dtype=np.int64)
        first_record[self._first[::-1]] = np.arange(len(self._first))[::-1]
        labels: dict[int, list[str]] = {}
        for position, cls in enumerate(self._order):
            labels.setdefault(groups[position], [str(v) for v in values.iloc[int(first_record[cls])]])
        return [labels[g] for g in range(len(labels))]

    def join(
        self,
        theirs: Sequence[Sequence[str]],
        *,
        their_columns: Sequence[Hashable],
        ours_first: bool,
        their_grouping: Sequence[int],
    ) -> pd.DataFrame:
        """The published join: one row per token (sorted by token), both parties' generalized values, no ids."""
        mine = self.class_labels()
        own_groups = np.asarray(self.grouping())[self._own_class]
        their_groups = np.asarray(their_grouping, dtype=np.int64)[self._their_class]
        if len(theirs) != int(their_groups.max(initial=-1)) + 1 or any(len(r) != len(their_columns) for r in theirs):
            raise ProtocolError("the peer's published values do not match its partition")
        left = pd.DataFrame(np.asarray(mine, dtype=object)[own_groups], columns=list(self.party.quasi_identifiers))
        right = pd.DataFrame(np.asarray(theirs, dtype=object)[their_groups], columns=list(their_columns))
        return pd.concat([left, right] if ours_first else [right, left], axis=1)


@dataclass(frozen=True)
class TrustedRun:
    """The protocol's rounds run by a trusted third party that sees both halves.

    Attributes:
        levels_a: the final level of each of party A's quasi-identifiers.
        levels_b: the same for party B.
        rounds: rounds until the join was k-anonymous (1: the local nodes already sufficed).
        table: the published join, one row per record in input order, A's columns then B's.
    """

    levels_a: Mapping[Hashable, int]
    levels_b: Mapping[Hashable, int]
    rounds: int
    table: pd.DataFrame


def trusted_third_party(
    frame: pd.DataFrame,
    *,
    quasi_identifiers_a: Sequence[Hashable],
    quasi_identifiers_b: Sequence[Hashable],
    hierarchies: Mapping[Hashable, Hierarchy],
    k: int,
    id_column: Hashable | None = None,
) -> TrustedRun:
    """What DPP2GA computes, without encryption: the reference for tests and the one-operator case.

    Example:
        >>> df = pd.DataFrame({"a": ["1", "1", "2", "2"], "b": ["x", "y", "x", "y"]})
        >>> h = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(df[c]))]) for c in "ab"}
        >>> run = trusted_third_party(df, quasi_identifiers_a=["a"], quasi_identifiers_b=["b"], hierarchies=h, k=2)
        >>> dict(run.levels_a), dict(run.levels_b), run.rounds
        ({'a': 1}, {'b': 1}, 2)
    """
    overlap = set(quasi_identifiers_a) & set(quasi_identifiers_b)
    if overlap:
        shared = sorted(map(str, overlap))
        raise ConfigurationError(f"the parties' quasi-identifiers must be disjoint; both have {shared!r}")
    ids = frame[id_column] if id_column is not None else pd.Series(range(len(frame)))
    part = frame.assign(_dpp2ga_id=ids.to_numpy())
    a = LocalParty.start(
        part, id_column="_dpp2ga_id", quasi_identifiers=quasi_identifiers_a, hierarchies=hierarchies, k=k
    )
    b = LocalParty.start(
        part, id_column="_dpp2ga_id", quasi_identifiers=quasi_identifiers_b, hierarchies=hierarchies, k=k
    )
    rounds = 1
    while not join_is_k_anonymous(a.record_classes(), b.record_classes(), k):
        a.step()
        b.step()
        rounds += 1
    table = pd.concat([a.generalized(), b.generalized()], axis=1)
    table.index = frame.index
    return TrustedRun(levels_a=a.levels, levels_b=b.levels, rounds=rounds, table=table)
