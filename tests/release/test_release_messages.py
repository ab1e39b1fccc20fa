"""Messages that name the file or the setting: CSV encoding, the shape of ``hierarchies``, plain numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.cli import main
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.io import read_table
from privacy_plugins.core.parameters import check_fraction
from privacy_plugins.errors import ConfigurationError
from privacy_plugins.release import ReleaseSpec, read_published


def _census_csv(path: Path, encoding: str) -> Path:
    frame = generate_census(300, seed=4)
    frame["disease"] = frame["disease"].replace({"flu": "fièvre"})  # è is one byte 0xe8 in latin-1
    frame.to_csv(path, index=False, encoding=encoding)
    return path


def _release(tmp_path: Path, capsys: pytest.CaptureFixture[str], **overrides: Any) -> tuple[int, str]:
    data = demo_spec_dict(tmp_path, **overrides)
    data["sensitive_attributes"] = ["disease", "income"]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    code = main(["release", str(path), "--quiet"])
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize("out_of_core", [False, True], ids=["pandas", "duckdb"])
def test_a_latin1_csv_is_named_with_its_line_and_read_with_source_encoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], out_of_core: bool
) -> None:
    csv = _census_csv(tmp_path / "people.csv", "latin-1")
    line = 1 + next(i for i, row in enumerate(pd.read_csv(csv, encoding="latin-1")["disease"], 1) if row == "fièvre")
    source: dict[str, Any] = {"path": str(csv)} | ({"out_of_core_bytes": 0} if out_of_core else {})
    code, err = _release(tmp_path, capsys, source=source)
    assert code == 2 and len(err.splitlines()) == 1
    assert str(csv) in err and "source.encoding" in err and "0xe8" in err and "codec" not in err
    assert f"line {line}:" in err
    assert not (tmp_path / "reports").exists()
    code, err = _release(tmp_path, capsys, source={**source, "encoding": "latin-1"})
    assert code == 0, err
    spec = ReleaseSpec.from_dict(demo_spec_dict(tmp_path))
    published = read_published(spec.destination)
    assert published is not None and "fièvre" in set(published["disease"])


def test_an_unknown_encoding_is_refused_on_load(tmp_path: Path) -> None:
    data = demo_spec_dict(tmp_path, source={"path": str(tmp_path / "people.csv"), "encoding": "klingon"})
    with pytest.raises(ConfigurationError, match=r"^source.encoding must be a text encoding"):
        ReleaseSpec.from_dict(data)


def test_read_table_names_the_file_and_line_and_takes_an_encoding(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes("age;city\n30;Paris\n41;Montr\xe9al\n".encode("latin-1"))
    with pytest.raises(ConfigurationError, match=r"t.csv' is not utf-8 text: line 3: byte 0xe9"):
        read_table(path)
    assert read_table(path, encoding="latin-1")["city"].tolist() == ["Paris", "Montréal"]
    assert read_table(path, encoding="cp1252")["city"].tolist() == ["Paris", "Montréal"]


@pytest.mark.parametrize(
    ("hierarchy", "message"),
    [
        ({"file": "age.csv"}, r"hierarchies.age.file must be a mapping \{path: ..., sep: ';'\}"),
        ({"file": {"sep": ";"}}, r"hierarchies.age.file must be a mapping"),
        ({"interval": {"width": [5]}}, r"hierarchies.age.interval has unknown option\(s\) \['width'\]"),
        ({"interval": [5, 10]}, r"hierarchies.age.interval must be a mapping of its options"),
        ({"taxonomy": ["a", "b"]}, r"hierarchies.age.taxonomy must be a non-empty mapping"),
        ({"interval": None}, r"hierarchies.age.interval needs exactly one of widths or cuts"),
        ({"intervals": {}}, r"hierarchies.age must be one of \{file, interval"),
        ("age.csv", r"hierarchies.age must be one of"),
    ],
)
def test_the_shape_of_a_hierarchy_is_checked_before_reading_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hierarchy: object, message: str
) -> None:
    data = demo_spec_dict(tmp_path, source={"path": str(tmp_path / "never-read.csv")})
    data["hierarchies"]["age"] = hierarchy
    with pytest.raises(ConfigurationError, match=message):
        ReleaseSpec.from_dict(data)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "hierarchies.age" in err and "never-read" not in err


def test_a_negative_bound_is_printed_as_a_plain_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = generate_census(200, seed=4)
    frame["bound"] = np.where(np.arange(200) == 7, -1.0, 0.9)
    frame.to_csv(tmp_path / "people.csv", index=False)
    code, err = _release(
        tmp_path,
        capsys,
        source={"path": str(tmp_path / "people.csv")},
        requirements={"k": 2, "l": None, "bound_column": "bound"},
    )
    assert code == 2 and "bounds outside (0, 1], e.g. -1" in err and "np." not in err
    with pytest.raises(ConfigurationError, match=r"^bound must be in \[0, 1\], got -1.0$"):
        check_fraction(np.float64(-1.0), name="bound")


def test_error_messages_quote_table_values_only_with_include_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = generate_census(200, seed=4)
    frame.loc[17, "sex"] = "Xq7"  # one person's value, missing from the sex taxonomy
    frame.to_csv(tmp_path / "people.csv", index=False)
    data = demo_spec_dict(tmp_path, source={"path": str(tmp_path / "people.csv")})
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["release", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Xq7" not in err
    assert "column 'sex' has 1 value(s) that are not leaves of its hierarchy (values hidden" in err
    assert main(["release", str(path), "--quiet", "--include-values"]) == 2
    err = capsys.readouterr().err
    assert "e.g. ['Xq7']" in err and "warning: --include-values" in err


def test_a_scoped_requirement_names_how_many_sensitive_values_not_which() -> None:
    from privacy_plugins.core.disclosure import values_shown
    from privacy_plugins.core.models import KAnonymity, SensitiveValueScope

    scoped = SensitiveValueScope(KAnonymity(4), "disease", ("HIV", "cancer"))
    assert str(scoped) == "4-anonymity for the records whose 'disease' is one of the 2 sensitive_values"
    with values_shown():
        assert "['HIV', 'cancer']" in str(scoped)


@pytest.mark.parametrize(
    "opt_in", [[], ["--include-values"], ["--algorithm", "bucket", "--l", "2", "--show-values", "yes"]]
)
def test_the_anonymize_command_quotes_a_value_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], opt_in: list[str]
) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "zip.csv").write_text("47906;4790*;*\n47907;4790*;*\n")
    (tmp_path / "d.csv").write_text("zip,s\n47906,a\n47907,b\n47999,a\n47906,b\n")
    argv = ["anonymize", str(tmp_path / "d.csv"), "--quasi-identifiers", "zip", "--sensitive-attributes", "s"]
    argv += ["--hierarchies", str(tmp_path / "h"), "--k", "2", "--out", str(tmp_path / "o.csv"), "--quiet", *opt_in]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "column 'zip' has 1 value(s) that are not leaves" in err
    assert ("47999" in err) == bool(opt_in)
