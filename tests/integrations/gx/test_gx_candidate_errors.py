"""A GX suite on a staged candidate: an error of GX or the driver never shows the destination's password."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("great_expectations")

from privacy_plugins.errors import DestinationError
from privacy_plugins.integrations import gx as privacy_gx
from privacy_plugins.integrations.gx import suites
from privacy_plugins.release import ReleaseSpec, anonymize_step, load_step
from privacy_plugins.release.destination.base import SqlLocation
from privacy_plugins.release.destination.parquet import ParquetDestination
from tests.release.release_fixtures import demo_spec_dict

REPO = Path(__file__).resolve().parents[3]
SECRET = "s3cr3t-Pa55"


def test_a_failed_sql_validation_names_the_destination_never_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = demo_spec_dict(tmp_path, rows=300)
    data["destination"] = {"parquet": str(tmp_path / "out"), "table": "census"}
    spec = ReleaseSpec.from_dict(data)
    candidate = anonymize_step(spec, load_step(spec, run_id="r"), run_id="r")
    url = f"postgresql://analyst:{SECRET}@db.internal:5432/warehouse"

    def refused(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"connection to {url} failed: password {SECRET} rejected")

    monkeypatch.setattr(ParquetDestination, "sql_location", lambda self, staged, run: SqlLocation(url, table="t"))
    monkeypatch.setattr(suites, "validate_sql", refused)
    suite = privacy_gx.load_suite(REPO / "expectations" / "demo_release.json")
    with pytest.raises(DestinationError) as raised:
        privacy_gx.validate_candidate(spec, candidate, suite)
    message = str(raised.value)
    assert SECRET not in message and "db.internal" in message and "***" in message
    assert raised.value.__suppress_context__  # the original message is not chained into the traceback
