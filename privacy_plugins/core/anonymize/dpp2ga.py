"""DPP2GA (Jiang & Clifton) as a registered anonymizer: both parties of the protocol in one process.

The two-party protocol (:mod:`privacy_plugins.core.distributed`) lets two sites
that hold vertical parts of one table publish a k-anonymous join. When one
operator holds both parts (the demo case, ``--algorithm dpp2ga``), this
anonymizer splits the quasi-identifiers between an *initiator* and a
*responder*, runs both parties' rounds in this process and publishes the
full-domain node they agree on, in the input's row order, with the other
columns kept (identifiers dropped).

**The split** is the option ``initiator_columns``: comma-separated
quasi-identifiers the initiator holds; the responder holds the rest. Default
(empty): the first ⌈n/2⌉ quasi-identifiers, in the order given.

**The cipher** is the option ``cipher``: ``"none"`` (default) runs the rounds on
the plain partitions — one operator already sees both halves, so encrypting
record ids from itself protects nothing, and the result is the one the
encrypted protocol reaches (tests compare them); ``"modp2048"`` runs the
complete encrypted exchange (tokens, answers, groupings) with the stdlib MODP
cipher, 4·n 2048-bit exponentiations (~4 ms each with CPython's ``pow``): a
demonstration, not a protection. Two real sites run one party each over TCP:
``privacy-plugins distributed-party``.

**Models:** k-anonymity only (the protocol's condition is on class sizes); any
other model is a :class:`ConfigurationError`. **Suppression:** none; the
suppression limit is validated and not used. DPP2GA generalizes until the join
is k-anonymous, so it always ends (at worst at the top of every hierarchy).

References:
    Jiang W., Clifton C. Privacy-preserving distributed k-anonymity. DBSec 2005.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from privacy_plugins.core.anonymize.base import AnonymizationDetails, AnonymizationRequest, AnonymizedTable, levels_text
from privacy_plugins.core.anonymize.full_domain import _publish, _utility
from privacy_plugins.core.anonymize.registry import AnonymizerOption, AnonymizerTags, ModelSupport
from privacy_plugins.core.anonymize.snapshot import Snapshot
from privacy_plugins.errors import ConfigurationError

if TYPE_CHECKING:  # the protocol imports the anonymizers (local k-anonymity): imported when run
    from privacy_plugins.core.distributed.party import LocalParty

__all__ = ["CIPHERS", "Dpp2gaAnonymizer", "Dpp2gaDetails", "split_quasi_identifiers"]

#: ``none``: plain rounds (one operator holds both parts); ``modp2048``: the full encrypted exchange.
CIPHERS = ("none", "modp2048")


def split_quasi_identifiers(
    quasi_identifiers: Sequence[Hashable], initiator_columns: str
) -> tuple[list[Hashable], list[Hashable]]:
    """The initiator's and the responder's quasi-identifiers.

    ``initiator_columns`` is comma-separated QI names (empty: the first ⌈n/2⌉).

    Example:
        >>> split_quasi_identifiers(["age", "sex", "zip"], "")
        (['age', 'sex'], ['zip'])
        >>> split_quasi_identifiers(["age", "sex", "zip"], "zip, age")
        (['age', 'zip'], ['sex'])

    Raises:
        ConfigurationError: fewer than two QIs, a name that is not a QI, or a split
            that leaves one party without any.
    """
    qis = list(quasi_identifiers)
    if len(qis) < 2:
        raise ConfigurationError(
            f"dpp2ga splits the quasi-identifiers between two parties and needs at least 2, got {len(qis)}"
        )
    by_name = {str(q): q for q in qis}
    if not initiator_columns.strip():
        half = (len(qis) + 1) // 2
        return qis[:half], qis[half:]
    named = [part.strip() for part in initiator_columns.split(",") if part.strip()]
    unknown = [name for name in named if name not in by_name]
    if unknown:
        raise ConfigurationError(
            f"initiator_columns names {unknown!r}, which are not quasi-identifiers; choose among {list(by_name)}"
        )
    chosen = {by_name[name] for name in named}
    first = [q for q in qis if q in chosen]
    second = [q for q in qis if q not in chosen]
    if not second:
        raise ConfigurationError(
            "initiator_columns gives every quasi-identifier to the initiator; the responder needs at least one"
        )
    return first, second


@dataclass(frozen=True)
class Dpp2gaDetails(AnonymizationDetails):
    """What the two parties agreed on.

    Attributes:
        levels: the hierarchy level of each QI (the published full-domain node).
        heights: the height of each QI's hierarchy.
        initiator_columns: the initiator's quasi-identifiers.
        responder_columns: the responder's quasi-identifiers.
        start_levels: each party's locally k-anonymous node (round 1).
        rounds: rounds until the join was k-anonymous (1: the local nodes sufficed).
        cipher: ``"none"`` or ``"modp2048"``.
    """

    kind: ClassVar[str] = "dpp2ga"

    levels: Mapping[Hashable, int]
    heights: Mapping[Hashable, int]
    initiator_columns: tuple[Hashable, ...]
    responder_columns: tuple[Hashable, ...]
    start_levels: Mapping[Hashable, int]
    rounds: int
    cipher: str

    def headline(self) -> str:
        """The joint node and the rounds the two parties needed."""
        return f"node {levels_text(self.levels)}; {self.rounds:,} rounds ({self.cipher} cipher)"

    def recoding_levels(self) -> dict[str, int]:
        """The node the two parties agreed on, QI → level."""
        return {str(column): int(level) for column, level in self.levels.items()}


def _plain_rounds(a: LocalParty, b: LocalParty, k: int) -> int:
    """The rounds on the plain partitions (what a trusted third party would compute)."""
    from privacy_plugins.core.distributed.protocol import join_is_k_anonymous

    rounds = 1
    while not join_is_k_anonymous(a.record_classes(), b.record_classes(), k):
        a.step()
        b.step()
        rounds += 1
    return rounds


def _encrypted_rounds(a: LocalParty, b: LocalParty) -> int:
    """Both parties' sessions exchanging their messages in memory (each with its own MODP key)."""
    from privacy_plugins.core.distributed import Dpp2gaSession, ModpCipher

    first, second = Dpp2gaSession(a, ModpCipher()), Dpp2gaSession(b, ModpCipher())
    salt = secrets.token_bytes(16)
    to_second, to_first = first.encrypted_classes(salt), second.encrypted_classes(salt)
    answer_to_second, answer_to_first = first.answer(to_first), second.answer(to_second)
    first.accept_answer(answer_to_first)
    second.accept_answer(answer_to_second)
    limit = sum(a.snapshot.heights) + sum(b.snapshot.heights) + 1
    while True:
        mine, theirs = first.grouping(), second.grouping()
        done = first.satisfied(mine, theirs)
        if done != second.satisfied(theirs, mine):  # pragma: no cover - both test the same join
            raise AssertionError("the two parties disagree on whether the join is k-anonymous")
        if done:
            return first.rounds
        first.step(limit)
        second.step(limit)


@dataclass(frozen=True)
class Dpp2gaAnonymizer:
    """Two-party DPP2GA with both parties in this process, registered as ``"dpp2ga"``."""

    #: Every quasi-identifier is generalized along its hierarchy (the release spec checks it on load);
    #: k-anonymity only: the protocol's condition is on class sizes; nothing is suppressed.
    tags: ClassVar[AnonymizerTags] = AnonymizerTags(
        needs_hierarchies=True,
        supported_models=ModelSupport(
            promises=frozenset({"k_anonymity"}),
            why="dpp2ga enforces k-anonymity only (the protocol compares class sizes)",
        ),
        suppresses=False,
    )
    name: str = "dpp2ga"
    options: tuple[AnonymizerOption, ...] = (
        AnonymizerOption(
            "initiator_columns",
            str,
            "",
            help="comma-separated quasi-identifiers of the initiator party; the responder holds the rest "
            "(empty: the first half)",
        ),
        AnonymizerOption(
            "cipher",
            str,
            "none",
            choices=CIPHERS,
            help="none: plain rounds (one operator holds both parts); modp2048: the full encrypted exchange",
            flag="dpp2ga-cipher",
        ),
    )

    def run(
        self, request: AnonymizationRequest, *, initiator_columns: str = "", cipher: str = "none"
    ) -> AnonymizedTable:
        """Split the QIs, run both parties' rounds, publish the agreed node in input order."""
        from privacy_plugins.core.distributed import LocalParty

        refusal = self.tags.supported_models.refusal(request.models)
        if refusal is not None:
            raise ConfigurationError(f"dpp2ga {refusal}; remove it or choose another algorithm")
        k = request.minimum_class_size
        qis_a, qis_b = split_quasi_identifiers(request.quasi_identifiers, initiator_columns)
        table = request.table.reset_index(drop=True)
        ids = np.arange(len(table))
        party_a, party_b = (
            LocalParty.start(
                table[qis].assign(_dpp2ga_row=ids),
                id_column="_dpp2ga_row",
                quasi_identifiers=qis,
                hierarchies=request.hierarchies,
                k=k,
            )
            for qis in (qis_a, qis_b)
        )
        start = {**party_a.levels, **party_b.levels}
        rounds = _encrypted_rounds(party_a, party_b) if cipher == "modp2048" else _plain_rounds(party_a, party_b, k)
        levels = {**party_a.levels, **party_b.levels}
        snapshot = Snapshot.build(table, quasi_identifiers=request.quasi_identifiers, hierarchies=request.hierarchies)
        node = tuple(levels[q] for q in request.quasi_identifiers)
        nothing = np.zeros(len(table), dtype=bool)
        published, qi_codes = _publish(table, snapshot, node, nothing, roles=request.roles, suppressed_rows="remove")
        no_unit = np.zeros(snapshot.weights.shape[0], dtype=bool)  # _utility reads units, not rows
        utility = _utility(snapshot, node, no_unit, k=k, n_sensitive=len(request.roles.sensitive_attributes))
        return AnonymizedTable(
            table=published,
            released=np.ones(len(published), dtype=bool),
            suppressed=0,
            utility=utility,
            qi_codes=qi_codes,
            details=Dpp2gaDetails(
                levels={q: levels[q] for q in request.quasi_identifiers},
                heights=dict(zip(request.quasi_identifiers, snapshot.heights, strict=True)),
                initiator_columns=tuple(qis_a),
                responder_columns=tuple(qis_b),
                start_levels={q: start[q] for q in request.quasi_identifiers},
                rounds=rounds,
                cipher=cipher,
            ),
        )
