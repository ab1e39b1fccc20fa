"""The 12-record example of Jiang & Clifton's slides, split between two sites."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privacy_plugins.core.hierarchies import Hierarchy, write_hierarchy

ROWS = [
    (1, "Data Mining", "Associate Professor", 90_000),
    (2, "Intrusion Detection", "Assistant Professor", 91_000),
    (3, "Data Warehousing", "Associate Professor", 95_000),
    (4, "Intrusion Detection", "Assistant Professor", 78_000),
    (5, "Digital Forensics", "Professor", 150_000),
    (6, "Distributed Systems", "Research Assistant", 15_000),
    (7, "Handhold Systems", "Research Assistant", 17_000),
    (8, "Handhold Systems", "Research Assistant", 15_500),
    (9, "Query Processing", "Associate Professor", 100_000),
    (10, "Digital Forensics", "Assistant Professor", 78_000),
    (11, "Digital Forensics", "Professor", 135_000),
    (12, "Intrusion Detection", "Professor", 145_000),
]
AREAS = {
    "Database Systems": ["Data Mining", "Data Warehousing", "Query Processing"],
    "Information Security": ["Intrusion Detection", "Digital Forensics"],
    "Operating Systems": ["Distributed Systems", "Handhold Systems"],
}
POSITIONS = {
    "Professors": ["Assistant Professor", "Associate Professor", "Professor"],
    "Assistant": ["Research Assistant", "Teaching Assistant"],
}


def _salary_row(value: int) -> list[str]:
    # Level 1: 30k bands; level 2: [11k, 30k] stays, 61k–120k and 121k–180k merge (as on the slides).
    low = (value - 1_000) // 30_000 * 30 + 1
    band = f"[{low}k, {low + 29}k]"
    wide = band if low <= 11 else ("[61k, 120k]" if value <= 120_000 else "[121k, 180k]")
    return [str(value), band, wide, "*"]


@pytest.fixture
def slides() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]:
    """P1 holds AREA and POSITION, P2 holds SALARY; the reconstructed VGHs of the slides."""
    frame = pd.DataFrame(ROWS, columns=["ID", "AREA", "POSITION", "SALARY"])
    hierarchies = {
        "AREA": Hierarchy.from_rows(
            "AREA", [[leaf, parent, "Computer Science"] for parent, leaves in AREAS.items() for leaf in leaves]
        ),
        "POSITION": Hierarchy.from_rows(
            "POSITION", [[leaf, parent, "*"] for parent, leaves in POSITIONS.items() for leaf in leaves]
        ),
        "SALARY": Hierarchy.from_rows("SALARY", [_salary_row(v) for v in sorted({r[3] for r in ROWS})]),
    }
    return frame[["ID", "AREA", "POSITION"]], frame[["ID", "SALARY"]], hierarchies


@pytest.fixture
def slide_files(slides: tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]], tmp_path: Path) -> Path:
    """The slides' two parts as ``p1.csv`` / ``p2.csv`` in ``tmp_path``; returns the hierarchy folder beside them."""
    p1, p2, hierarchies = slides
    folder = tmp_path / "hierarchies"
    folder.mkdir()
    for column, hierarchy in hierarchies.items():
        write_hierarchy(hierarchy, folder / f"{column}.csv")
    p1.to_csv(tmp_path / "p1.csv", index=False)
    p2.to_csv(tmp_path / "p2.csv", index=False)
    return folder
