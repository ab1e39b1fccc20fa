"""``privacy-plugins anonymize``: the report contract, atomic output, nothing written on failure."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import privacy_plugins as pp
from privacy_plugins.cli import main


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    frame = pd.DataFrame(
        {
            "name": [f"p{i}" for i in range(12)],
            "age": [21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36],
            "zip": ["47906", "47907", "47906", "47907", "47906", "47907"] * 2,
            "disease": ["flu", "hiv", "cancer", "flu", "hiv", "cancer"] * 2,
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    hierarchies = tmp_path / "hierarchies"
    hierarchies.mkdir()
    (hierarchies / "age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in frame["age"]))
    (hierarchies / "people_hierarchy_zip.csv").write_text("47906;4790*;*\n47907;4790*;*\n")
    return tmp_path


#: Roles of the fixture's columns that are neither quasi-identifiers nor sensitive in a test (every column has one).
OTHER_ROLES = ("--identifiers", "name", "--insensitive", "disease")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_contract_and_output(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "out" / "released.csv"
    code, stdout, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip",
        "--sensitive-attributes", "disease",
        "--identifiers", "name", "--hierarchies", str(workspace / "hierarchies"), "--k", "3", "--l", "2",
        "--out", str(out), "--report", str(workspace / "report.json"), "--format", "json",
    )  # fmt: skip
    assert code == 0
    report = json.loads(stdout)
    for key in ("algorithm", "suppressed", "rows_in", "rows_out", "ncp", "discernibility", "seconds", "k", "l"):
        assert key in report, key
    for key in ("levels", "nodes_checked", "lattice_size"):
        assert key in report["details"], key
    assert report == json.loads((workspace / "report.json").read_text()) | {"seconds": report["seconds"]}
    assert report["rows_in"] == report["rows_out"] + report["suppressed"] == 12
    assert report["details"]["heights"] == {"age": 2, "zip": 2}
    released = pp.read_table(out)
    assert "name" not in released.columns
    assert pp.k_anonymity(released, quasi_identifiers=["age", "zip"]) == report["k"] >= 3
    assert pp.l_diversity(released, quasi_identifiers=["age", "zip"], sensitive_attribute="disease") >= 2
    assert [p.name for p in out.parent.iterdir()] == ["released.csv"]  # no temporary file left


def test_parquet_output(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "released.parquet"
    code, _, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(out), "--algorithm", "samarati", *OTHER_ROLES,
    )  # fmt: skip
    assert code == 0
    assert len(pd.read_parquet(out)) == 12


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--k", "13"], 2, "larger than the table"),
        (["--k", "2", "--suppression-limit", "1.5"], 2, "suppression_limit"),
        (["--l", "2"], 2, "need at least one sensitive attribute"),
        ([], 2, "at least one requirement"),
        (["--sensitive-attributes", "disease", "--l", "4"], 1, "cannot be met"),
        (["--sensitive-attributes", "disease", "--l", "2", "--l-variant", "recursive"], 2, "needs c"),
    ],
)
def test_failures_write_nothing(
    workspace: Path, capsys: pytest.CaptureFixture[str], extra: list[str], code: int, message: str
) -> None:
    out = workspace / "released.csv"
    result, stdout, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--out", str(out), *extra,
        "--identifiers", "name", *([] if "disease" in extra else ["--insensitive", "disease"]),
    )  # fmt: skip
    assert result == code
    assert message in stderr and stdout == ""
    assert not out.exists()


def test_missing_hierarchy_is_named(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "hierarchies" / "age.csv").unlink()
    code, _, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(workspace / "x.csv"), *OTHER_ROLES,
    )  # fmt: skip
    assert code == 2 and "no hierarchy for quasi-identifier(s) ['age']" in stderr


@pytest.mark.parametrize("name", ["released.xlsx", "released", "released.json"])
def test_unknown_output_extension_is_an_error_before_any_work(
    name: str, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("anonymized before checking --out")

    monkeypatch.setattr("privacy_plugins.cli.anonymize.anonymize", must_not_run)
    out = workspace / "out" / name
    code, stdout, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(out),
    )  # fmt: skip
    assert code == 2 and stdout == ""
    assert stderr.count("\n") == 1 and "unsupported output extension" in stderr
    assert ".csv, .parquet" in stderr
    assert not out.parent.exists()


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize("name", ["released.csv", "released.parquet"])
def test_output_and_report_get_the_umask_mode(
    name: str, workspace: Path, capsys: pytest.CaptureFixture[str], umask_022: None
) -> None:
    out, report = workspace / name, workspace / "report.json"
    code, _, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(out), "--report", str(report), *OTHER_ROLES,
    )  # fmt: skip
    assert code == 0
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(report.stat().st_mode) == 0o644


def test_atomic_file_follows_the_umask(tmp_path: Path) -> None:
    from privacy_plugins.release.destinations import atomic_file

    previous = os.umask(0o027)
    try:
        with atomic_file(tmp_path / "t.csv") as temporary:
            temporary.write_text("a\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "t.csv").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_readme_documents_the_file_mode_rule() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "**File modes.**" in readme and "umask" in readme and "0644" in readme


def test_misspelled_column_is_named_before_hierarchies(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "agee,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "2", "--out", str(workspace / "x.csv"), *OTHER_ROLES,
    )  # fmt: skip
    assert code == 2 and stdout == ""
    assert stderr.count("\n") == 1
    assert "quasi_identifiers not found in table: ['agee'] (did you mean 'age'?)" in stderr
    assert "available columns: ['name', 'age', 'zip', 'disease']" in stderr
    assert "hierarch" not in stderr


def test_misspelled_sensitive_attribute_is_named(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip",
        "--sensitive-attributes", "diseas",
        "--hierarchies", str(workspace / "hierarchies"), "--l", "2", "--out", str(workspace / "x.csv"),
    )  # fmt: skip
    assert code == 2 and "sensitive_attributes not found in table: ['diseas'] (did you mean 'disease'?)" in stderr


def test_data_files_are_not_listed_as_hierarchies(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = workspace / "hierarchies"
    (folder / "age.csv").rename(folder / "people_hierarchy_age.csv")
    (folder / "people.csv").write_text((workspace / "people.csv").read_text())  # ARX keeps the data beside
    (folder / "people_subset.csv").write_text((workspace / "people.csv").read_text())
    (folder / "people_hierarchy_zip.csv").unlink()
    code, _, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(folder),
        "--k", "2", "--out", str(workspace / "x.csv"), *OTHER_ROLES,
    )  # fmt: skip
    assert code == 2 and "no hierarchy for quasi-identifier(s) ['zip']" in stderr
    assert "hierarchies given for ['age']" in stderr and "people_subset" not in stderr


def test_summary_prints_integers_as_integers_and_rounds_t(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip",
        "--sensitive-attributes", "disease",
        "--hierarchies", str(workspace / "hierarchies"), "--k", "3", "--l", "2", "--t", "0.5", "--identifiers", "name",
        "--out", str(workspace / "x.csv"),
    )  # fmt: skip
    assert code == 0
    assert "observed 3.0" not in out and ".0\n" not in out
    observed = re.findall(r"observed (\S+)", out)
    assert len(observed) == 3 and all(len(value.replace(".", "").lstrip("0")) <= 4 for value in observed)
    labelled = [line for line in out.splitlines()[1:-1]]
    starts = {len(line) - len(line[2:].split("  ", 1)[-1].lstrip()) for line in labelled}
    assert len(starts) == 1, out


def test_mondrian_runs_end_to_end_without_hierarchies(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "mondrian.csv"
    code, stdout, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--algorithm", "mondrian", "--quasi-identifiers", "age",
        "--sensitive-attributes", "disease", "--identifiers", "name,zip", "--k", "3", "--l", "2",
        "--mondrian-mode", "relaxed", "--seed", "7", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stdout
    assert "anonymized with mondrian" in stdout
    assert "relaxed / 7" in stdout and "partitions / classes" in stdout and "precision" not in stdout
    released = pp.read_table(out)
    assert pp.k_anonymity(released, quasi_identifiers=["age"]) >= 3
    assert released["age"].astype(str).str.startswith("[").all()


def test_mondrian_uses_the_hierarchies_it_finds(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "hierarchies" / "age.csv").unlink()  # age is numeric: a range; zip has a hierarchy
    code, stdout, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--algorithm", "mondrian", "--quasi-identifiers", "age,zip",
        "--identifiers", "name", "--hierarchies", str(workspace / "hierarchies"), "--k", "4",
        "--out", str(workspace / "m.csv"), "--format", "json", "--insensitive", "disease",
    )  # fmt: skip
    assert code == 0
    assert json.loads(stdout)["details"]["encodings"] == {"age": "range", "zip": "hierarchy"}


@pytest.mark.parametrize(
    ("algorithm", "flag", "value"),
    [
        ("optimal", "--mondrian-mode", "strict"),
        ("mondrian", "--metric", "lm"),
        ("mondrian", "--suppressed-rows", "mark"),
    ],
)
def test_an_option_of_another_algorithm_exits_2(
    workspace: Path, capsys: pytest.CaptureFixture[str], algorithm: str, flag: str, value: str
) -> None:
    out = workspace / "never.csv"
    code, stdout, stderr = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--algorithm", algorithm, "--quasi-identifiers", "age",
        "--k", "2", flag, value, "--out", str(out),
    )  # fmt: skip
    assert code == 2 and stdout == "" and not out.exists()
    assert f"{flag} is not an option of algorithm {algorithm!r}" in stderr


def test_every_registered_option_is_a_flag_and_every_algorithm_a_choice() -> None:
    from privacy_plugins.cli import build_parser
    from privacy_plugins.core.anonymize import anonymizer_names, get_anonymizer

    anonymize_parser = build_parser()._subparsers._group_actions[0].choices["anonymize"]  # type: ignore[union-attr]
    flags = {flag: action for action in anonymize_parser._actions for flag in action.option_strings}
    assert tuple(flags["--algorithm"].choices) == anonymizer_names()
    for name in anonymizer_names():
        for option in get_anonymizer(name).options:
            assert option.cli_flag in flags, option
            assert set(option.choices) <= set(flags[option.cli_flag].choices or ())


def test_suppressed_rows_mark_keeps_every_row(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = workspace / "marked.csv"
    code, _, _ = run(
        capsys, "anonymize", str(workspace / "people.csv"), "--quasi-identifiers", "age,zip", "--hierarchies",
        str(workspace / "hierarchies"), "--k", "5", "--suppression-limit", "0.5", "--suppressed-rows", "mark",
        "--out", str(out), "--format", "json", *OTHER_ROLES,
    )  # fmt: skip
    assert code == 0
    assert len(pd.read_csv(out)) == 12


def test_personalized_takes_the_sensitive_hierarchy_and_reports_theorem1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privacy_plugins.core.hierarchies import read_hierarchy
    from privacy_plugins.core.metrics.leakage import leakage_per_record
    from privacy_plugins.core.partition import EquivalenceClasses

    table1 = pd.DataFrame(
        {
            "age": [5, 9, 8, 12, 19],
            "zipcode": [12000, 14000, 19000, 22000, 24000],
            "disease": ["gastric ulcer", "dyspepsia", "bronchitis", "pneumonia", "pneumonia"],
            "pleak": [0.5, 0.5, 0.1, 0.5, 0.5],
        }
    )
    table1.to_csv(tmp_path / "t1.csv", index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "disease.csv").write_text(
        "gastric ulcer;stomach disease;*\ndyspepsia;stomach disease;*\n"
        "bronchitis;respiratory infection;*\npneumonia;respiratory infection;*\n"
    )
    out = tmp_path / "out.csv"
    argv = [
        "anonymize", str(tmp_path / "t1.csv"), "--quasi-identifiers", "age,zipcode", "--sensitive-attributes",
        "disease", "--bound-column", "pleak", "--k", "2", "--algorithm", "personalized",
        "--hierarchies", str(tmp_path / "h"), "--out", str(out),
    ]  # fmt: skip
    code, _, err = run(capsys, *argv)
    assert code == 1 and "1 records have a leakage bound below 1/5" in err and not out.exists()
    code, text, _ = run(capsys, *argv, "--suppression-limit", "0.2")
    assert code == 0
    assert re.search(r"Theorem 1: regrouped / unsatisfiable\s+0 / 1 records", text)
    published = pd.read_csv(out)
    assert len(published) == 4 and "respiratory infection" in set(published["disease"])
    classes = EquivalenceClasses.from_frame(published, ["age", "zipcode"])
    hierarchy = read_hierarchy(tmp_path / "h" / "disease.csv", attribute="disease")
    assert (leakage_per_record(classes, classes.sensitive("disease"), hierarchy) <= 0.5 + 1e-9).all()
    # measure: --hierarchies gives the sensitive hierarchy (without it "respiratory infection" twice looks like 1.0)
    measured = ["measure", str(out), "--quasi-identifiers", "age,zipcode", "--sensitive-attributes", "disease"]
    measured += ["--bound", "0.5", "--bound-column", "pleak", "--format", "json"]
    code, text, _ = run(capsys, *measured, "--hierarchies", str(tmp_path / "h"))
    assert code == 0 and json.loads(text)["max_leakage"] == pytest.approx(0.5)
    code, text, _ = run(capsys, *measured)
    assert json.loads(text)["max_leakage"] == pytest.approx(1.0)
