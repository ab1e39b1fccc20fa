"""The registered ``dpp2ga`` anonymizer: the split option, k-anonymity only, and the same result as the protocol."""

from __future__ import annotations

import importlib.util
import secrets
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from privacy_plugins.cli import main
from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.distributed import Dpp2gaSession, LocalParty, trusted_third_party
from privacy_plugins.core.hierarchies import Hierarchy, write_hierarchy
from privacy_plugins.core.measure import measure
from privacy_plugins.core.models import DistinctLDiversity, KAnonymity
from privacy_plugins.distributed import make_cipher
from privacy_plugins.errors import ConfigurationError
from tests.unnamed_columns import other_columns

Slides = tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]
#: The x25519 group (the default) needs the ``distributed`` extra; without it these tests skip.
needs_cryptography = pytest.mark.skipif(
    importlib.util.find_spec("cryptography") is None, reason="needs the 'distributed' extra (cryptography)"
)


COLUMNS = ["q0", "q1", "q2", "q3"]


def _hierarchy(column: str) -> Hierarchy:
    """Values 0..7 → pairs → quads → *."""
    rows = [[str(v), f"{v // 2 * 2}-{v // 2 * 2 + 1}", f"{v // 4 * 4}+", "*"] for v in range(8)]
    return Hierarchy.from_rows(column, rows)


HIERARCHIES = {c: _hierarchy(c) for c in COLUMNS}


def _slides_table(slides: Slides) -> pd.DataFrame:
    p1, p2, _ = slides
    return pd.concat([p1, p2[["SALARY"]]], axis=1)


def test_the_slides_through_anonymize(slides: Slides) -> None:
    _, _, hierarchies = slides
    table = _slides_table(slides)
    qis = ["AREA", "POSITION", "SALARY"]
    plain = anonymize(table, algorithm="dpp2ga", quasi_identifiers=qis, identifiers=["ID"], hierarchies=hierarchies,
                      models=[KAnonymity(3)], initiator_columns="AREA,POSITION")  # fmt: skip
    encrypted = anonymize(table, algorithm="dpp2ga", quasi_identifiers=qis, identifiers=["ID"],
                          hierarchies=hierarchies, models=[KAnonymity(3)], initiator_columns="AREA,POSITION",
                          cipher="modp2048")  # fmt: skip
    assert plain.details.levels == {"AREA": 1, "POSITION": 1, "SALARY": 2}  # type: ignore[attr-defined]
    assert plain.details.rounds == encrypted.details.rounds == 2  # type: ignore[attr-defined]
    assert plain.table.equals(encrypted.table) and "ID" not in plain.table.columns
    assert measure(plain.table, quasi_identifiers=qis).k >= 3 and plain.rows_out == 12


def test_default_split_and_bad_splits(slides: Slides) -> None:
    _, _, hierarchies = slides
    table = _slides_table(slides)
    qis = ["AREA", "POSITION", "SALARY"]
    result = anonymize(table, algorithm="dpp2ga", quasi_identifiers=qis, identifiers=["ID"], hierarchies=hierarchies,
                       models=[KAnonymity(3)])  # fmt: skip
    assert result.details.initiator_columns == ("AREA", "POSITION")  # type: ignore[attr-defined]
    assert result.details.responder_columns == ("SALARY",)  # type: ignore[attr-defined]
    for split, message in [("AREA,ZIP", "not quasi-identifiers"), ("AREA,POSITION,SALARY", "responder needs")]:
        with pytest.raises(ConfigurationError, match=message):
            anonymize(table, algorithm="dpp2ga", quasi_identifiers=qis, identifiers=["ID"], hierarchies=hierarchies,
                      models=[KAnonymity(3)], initiator_columns=split)  # fmt: skip
    with pytest.raises(ConfigurationError, match="at least 2"):
        anonymize(table, algorithm="dpp2ga", quasi_identifiers=["AREA"], hierarchies=hierarchies,
                  models=[KAnonymity(3)], insensitive=other_columns(table, [], ["AREA"]))  # fmt: skip


def test_k_anonymity_only(slides: Slides) -> None:
    _, _, hierarchies = slides
    with pytest.raises(ConfigurationError, match=r"k-anonymity only.*distinct-2-diversity|k-anonymity only"):
        table = _slides_table(slides)
        models = [KAnonymity(2), DistinctLDiversity("SALARY", 2)]
        anonymize(table, algorithm="dpp2ga", quasi_identifiers=["AREA", "POSITION"], hierarchies=hierarchies,
                  models=models, insensitive=other_columns(table, models, ["AREA", "POSITION"]))  # fmt: skip


def _sessions(a: LocalParty, b: LocalParty) -> int:
    """Both parties' encrypted sessions in memory with X25519 keys; the rounds."""
    first, second = Dpp2gaSession(a, make_cipher("x25519")), Dpp2gaSession(b, make_cipher("x25519"))
    salt = secrets.token_bytes(16)
    to_second, to_first = first.encrypted_classes(salt), second.encrypted_classes(salt)
    first_answer, second_answer = first.answer(to_first), second.answer(to_second)
    first.accept_answer(second_answer)
    second.accept_answer(first_answer)
    while True:
        mine, theirs = first.grouping(), second.grouping()
        done = first.satisfied(mine, theirs)
        assert done == second.satisfied(theirs, mine)
        if done:
            return first.rounds
        first.step(50)
        second.step(50)


@needs_cryptography
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(st.tuples(*[st.integers(0, 7)] * 4), min_size=4, max_size=60),
    k=st.integers(1, 6),
    n_first=st.integers(1, 3),
)
def test_anonymizer_equals_the_encrypted_protocol_and_the_trusted_party(
    data: list[tuple[int, ...]], k: int, n_first: int
) -> None:
    if len(data) < k:
        k = len(data)
    table = pd.DataFrame(data, columns=COLUMNS).astype(str)
    table.insert(0, "id", [f"r{i}" for i in range(len(table))])
    qis_a, qis_b = COLUMNS[:n_first], COLUMNS[n_first:]
    result = anonymize(table, algorithm="dpp2ga", quasi_identifiers=COLUMNS, identifiers=["id"],
                       hierarchies=HIERARCHIES, models=[KAnonymity(k)], initiator_columns=",".join(qis_a))  # fmt: skip
    # Re-measured by the core; nothing lost; identifiers gone.
    assert measure(result.table, quasi_identifiers=COLUMNS).k >= k
    assert result.rows_in == result.rows_out == len(table) and result.suppressed == 0
    assert "id" not in result.table.columns
    # The same node and table as a trusted third party that sees both halves.
    reference = trusted_third_party(table, quasi_identifiers_a=qis_a, quasi_identifiers_b=qis_b,
                                    hierarchies=HIERARCHIES, k=k, id_column="id")  # fmt: skip
    levels = result.details.levels  # type: ignore[attr-defined]
    assert {**reference.levels_a, **reference.levels_b} == levels
    assert result.table[COLUMNS].astype(str).equals(reference.table[COLUMNS].astype(str).reset_index(drop=True))
    # The same rounds and node as the encrypted protocol (shuffled row order at party B).
    order = np.random.default_rng(k).permutation(len(table))
    a = LocalParty.start(table, id_column="id", quasi_identifiers=qis_a, hierarchies=HIERARCHIES, k=k)
    b = LocalParty.start(table.iloc[order], id_column="id", quasi_identifiers=qis_b, hierarchies=HIERARCHIES, k=k)
    assert _sessions(a, b) == result.details.rounds == reference.rounds  # type: ignore[attr-defined]
    assert {**a.levels, **b.levels} == levels


def test_the_anonymize_command(slides: Slides, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, hierarchies = slides
    _slides_table(slides).to_csv(tmp_path / "all.csv", index=False)
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    for column, hierarchy in hierarchies.items():
        write_hierarchy(hierarchy, folder / f"{column}.csv")
    argv = ["anonymize", str(tmp_path / "all.csv"), "--quasi-identifiers", "AREA,POSITION,SALARY",
            "--identifiers", "ID", "--hierarchies", str(folder), "--k", "3", "--algorithm", "dpp2ga",
            "--initiator-columns", "SALARY", "--dpp2ga-cipher", "modp2048",
            "--out", str(tmp_path / "out.csv")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    published = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert measure(published, quasi_identifiers=["AREA", "POSITION", "SALARY"]).k >= 3
    assert "ID" not in published.columns and len(published) == 12
    (tmp_path / "out.csv").unlink()
    argv = ["anonymize", str(tmp_path / "all.csv"), "--quasi-identifiers", "AREA,POSITION", "--identifiers", "ID",
            "--sensitive-attributes", "SALARY", "--hierarchies", str(folder), "--k", "3", "--l", "2",
            "--algorithm", "dpp2ga", "--out", str(tmp_path / "out.csv")]  # fmt: skip
    assert main(argv) == 2
    assert "dpp2ga enforces k-anonymity only" in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


def test_a_release_spec_needs_every_hierarchy_for_dpp2ga() -> None:
    import yaml

    from privacy_plugins.errors import HierarchyError
    from privacy_plugins.release import ReleaseSpec

    specs = Path(__file__).resolve().parents[2] / "specs"
    data = yaml.safe_load((specs / "demo_census.yaml").read_text(encoding="utf-8"))
    data["algorithm"] = {"name": "dpp2ga", "initiator_columns": "age,sex"}
    data["requirements"] = {"k": 4}
    assert ReleaseSpec.from_dict(data, base_dir=specs).algorithm.option("initiator_columns") == "age,sex"
    del data["hierarchies"]["age"]
    with pytest.raises(HierarchyError, match=r"\['age'\].*'dpp2ga'"):
        ReleaseSpec.from_dict(data, base_dir=specs)
