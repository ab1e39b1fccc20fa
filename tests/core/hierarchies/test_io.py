"""ARX CSV hierarchies: read/write round trips, line ends, folder loading and the real ARX data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privacy_plugins import read_table
from privacy_plugins.core.hierarchies import Hierarchy, load_hierarchies, read_hierarchy, write_hierarchy
from privacy_plugins.errors import HierarchyError

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
ADULT = DATA / "adult"
ARX_TOY = DATA / "arx_toy"
ADULT_HEIGHTS = {
    "age": 4,
    "education": 3,
    "marital-status": 2,
    "native-country": 2,
    "occupation": 2,
    "race": 1,
    "salary-class": 1,
    "sex": 1,
    "workclass": 2,
}

needs_adult = pytest.mark.skipif(not ADULT.is_dir(), reason=f"ARX Adult data not found at {ADULT}")
needs_arx_toy = pytest.mark.skipif(not ARX_TOY.is_dir(), reason=f"ARX toy data not found at {ARX_TOY}")

ZIP_ROWS = [["47906", "4790*", "479**", "*"], ["47907", "4790*", "479**", "*"], ["47961", "4796*", "479**", "*"]]


def same(a: Hierarchy, b: Hierarchy) -> bool:
    return (
        a.attribute == b.attribute
        and len(a.labels) == len(b.labels)
        and all(np.array_equal(x, y) for x, y in zip(a.labels, b.labels))
        and np.array_equal(a.codes, b.codes)
    )


# --- read / write -------------------------------------------------------------------


@pytest.mark.parametrize("sep", [";", ","])
def test_write_then_read_round_trips(tmp_path: Path, sep: str) -> None:
    h = Hierarchy.from_rows("zip", ZIP_ROWS)
    path = write_hierarchy(h, tmp_path / "zip.csv", sep=sep)
    assert path == tmp_path / "zip.csv"
    assert path.read_text(encoding="utf-8").splitlines()[0] == sep.join(ZIP_ROWS[0])
    assert same(read_hierarchy(path, sep=sep), h)


def test_cells_containing_the_delimiter_are_quoted(tmp_path: Path) -> None:
    h = Hierarchy.from_rows("age", [["20", "[20,30[", "*"], ["25", "[20,30[", "*"]])
    path = write_hierarchy(h, tmp_path / "age.csv", sep=",")
    assert '"[20,30["' in path.read_text(encoding="utf-8")
    assert same(read_hierarchy(path, sep=","), h)


def test_wrong_delimiter_is_caught(tmp_path: Path) -> None:
    path = write_hierarchy(Hierarchy.from_rows("zip", ZIP_ROWS), tmp_path / "zip.csv", sep=",")
    with pytest.raises(HierarchyError, match="is the delimiter right"):
        read_hierarchy(path, sep=";")


def test_crlf_line_ends_blank_lines_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "zip.csv"
    path.write_bytes(b"\xef\xbb\xbf" + b"47906;4790*;*\r\n\r\n47907;4790*;*\r\n47961;4796*;*\r\n")
    h = read_hierarchy(path)
    assert h.leaves.tolist() == ["47906", "47907", "47961"]
    assert h.to_rows()[2] == ["47961", "4796*", "*"]


def test_attribute_comes_from_the_arx_file_name(tmp_path: Path) -> None:
    h = Hierarchy.from_rows("x", ZIP_ROWS)
    assert read_hierarchy(write_hierarchy(h, tmp_path / "adult_hierarchy_native-country.csv")).attribute == (
        "native-country"
    )
    assert read_hierarchy(write_hierarchy(h, tmp_path / "zip.csv")).attribute == "zip"
    assert read_hierarchy(tmp_path / "zip.csv", attribute="postcode").attribute == "postcode"


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError, match=r"hierarchy file not found: .*nope\.csv"):
        read_hierarchy(tmp_path / "nope.csv")


def test_malformed_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "zip.csv"
    path.write_text("47906;4790*;*\n47907;*\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"'zip' has rows of different lengths.*zip\.csv"):
        read_hierarchy(path)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "zip.csv"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match="no rows"):
        read_hierarchy(path)


# --- load_hierarchies ------------------------------------------------------------------


def write_folder(folder: Path) -> Path:
    write_hierarchy(Hierarchy.from_rows("zip", ZIP_ROWS), folder / "toy_hierarchy_zip.csv")
    write_hierarchy(Hierarchy.from_rows("sex", [["m", "*"], ["f", "*"]]), folder / "toy_hierarchy_sex.csv")
    (folder / "toy.csv").write_text("zip;sex\n47906;m\n", encoding="utf-8")
    return folder


def test_folder_with_arx_names_ignores_the_data_file(tmp_path: Path) -> None:
    loaded = load_hierarchies(write_folder(tmp_path))
    assert sorted(loaded) == ["sex", "zip"]
    assert loaded["zip"].attribute == "zip"


def test_plain_column_names(tmp_path: Path) -> None:
    write_hierarchy(Hierarchy.from_rows("zip", ZIP_ROWS), tmp_path / "zip.csv")
    assert list(load_hierarchies(tmp_path)) == ["zip"]


def test_columns_select_and_keep_their_order(tmp_path: Path) -> None:
    loaded = load_hierarchies(write_folder(tmp_path), columns=["zip", "sex"])
    assert list(loaded) == ["zip", "sex"]
    assert list(load_hierarchies(tmp_path, columns=["sex"])) == ["sex"]


def test_missing_requested_column_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError) as info:
        load_hierarchies(write_folder(tmp_path), columns=["zip", "age"])
    message = str(info.value)
    assert "no hierarchy for ['age']" in message
    assert "'sex'" in message
    assert "'zip'" in message


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError, match="hierarchy folder not found"):
        load_hierarchies(tmp_path / "nope")


def test_folder_load_with_comma_delimiter(tmp_path: Path) -> None:
    write_hierarchy(Hierarchy.from_rows("zip", ZIP_ROWS), tmp_path / "zip.csv", sep=",")
    assert load_hierarchies(tmp_path, sep=",")["zip"].height == 3


# --- the real ARX folders ----------------------------------------------------------------


@needs_adult
def test_adult_heights_and_data_files_are_not_hierarchies() -> None:
    loaded = load_hierarchies(ADULT)
    assert {column: h.height for column, h in loaded.items()} == ADULT_HEIGHTS
    assert "adult" not in loaded
    assert "adult_subset" not in loaded


@needs_adult
def test_adult_age_hierarchy() -> None:
    age = read_hierarchy(ADULT / "adult_hierarchy_age.csv")
    assert age.attribute == "age"
    assert age.n_leaves == 100  # ages 1..100 (the data README says 1..99)
    assert age.generalize([39], 1).tolist() == ["35-39"]
    assert age.labels[-1].tolist() == ["*"]


@needs_adult
@pytest.mark.parametrize("table", ["adult.csv", "adult_subset.csv"])
def test_every_adult_value_is_a_leaf(table: str) -> None:
    hierarchies = load_hierarchies(ADULT)
    frame = read_table(ADULT / table)
    assert sorted(frame.columns) == sorted(ADULT_HEIGHTS)
    for column in frame.columns:
        codes = hierarchies[column].leaf_codes(frame[column])
        assert codes.shape == (len(frame),)
        assert (codes >= 0).all()
        assert (hierarchies[column].generalize(frame[column], hierarchies[column].height) == "*").all()


@needs_adult
def test_adult_missing_requested_column_is_named() -> None:
    with pytest.raises(HierarchyError, match=r"no hierarchy for \['zip'\]"):
        load_hierarchies(ADULT, columns=["age", "zip"])


@needs_arx_toy
def test_arx_toy_folder() -> None:
    loaded = load_hierarchies(ARX_TOY)
    heights = {column: h.height for column, h in loaded.items()}
    assert heights == {"Age": 2, "Disease": 3, "ZIPCode": 5, "age": 2, "gender": 1, "zipcode": 5}
    assert "test" not in loaded
    assert "test2" not in loaded


@needs_arx_toy
@pytest.mark.parametrize("table", ["test.csv", "test2.csv"])
def test_arx_toy_values_are_leaves(table: str) -> None:
    frame = read_table(ARX_TOY / table)
    columns = [column for column in frame.columns if column != "Salary"]
    hierarchies = load_hierarchies(ARX_TOY, columns=columns)
    for column in columns:
        assert (hierarchies[column].leaf_codes(frame[column]) >= 0).all()


@needs_arx_toy
def test_arx_toy_column_without_hierarchy_is_named() -> None:
    with pytest.raises(HierarchyError, match=r"no hierarchy for \['Salary'\]"):
        load_hierarchies(ARX_TOY, columns=["ZIPCode", "Age", "Salary", "Disease"])
