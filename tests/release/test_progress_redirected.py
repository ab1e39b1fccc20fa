"""Progress without a terminal (issue 24, item 14): redirected runs print a line with the phase and a percentage.

The commands run as real subprocesses with stderr redirected to a pipe (no TTY), the interval
set to 0 s through ``PRIVACY_PLUGINS_PROGRESS_INTERVAL`` so the test does not wait 10 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from release_fixtures import demo_spec_dict

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.demo import generate_census
from privacy_plugins.core.models import FrequencyLDiversity, KAnonymity
from privacy_plugins.release import progress as release_progress
from privacy_plugins.release.progress import ProgressLines, StepProgress, progress_interval
from tests.unnamed_columns import other_columns

OTHERS = "sex,zip,education,marital_status,occupation,disease"  # published unchanged: every column has a role
QIS = ["age", "income"]  # numeric: the clustering algorithms publish them as ranges, no hierarchy needed
LINE = re.compile(r"^privacy-plugins: (?P<what>.+) (?P<percent>\d+)% \([\d,]+ of [\d,]+\), \d+ s$")


def _cli(*argv: str, interval: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, release_progress.PROGRESS_INTERVAL_ENV: interval}
    return subprocess.run(
        [sys.executable, "-m", "privacy_plugins.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _census_csv(tmp_path: Path, rows: int = 400) -> Path:
    path = tmp_path / "people.csv"
    generate_census(rows, seed=1).to_csv(path, index=False)
    return path


def _progress_lines(stderr: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.match, stderr.splitlines()) if m is not None]


@pytest.mark.parametrize(
    ("algorithm", "phases"),
    [
        ("k-member", ["k-member: building clusters"]),
        (
            "two-phase",
            [
                "two-phase: merging clusters",
                "two-phase: splitting big clusters",
                "two-phase: refining (moving records between clusters)",
            ],
        ),
    ],
)
def test_redirected_anonymize_prints_each_phase_with_a_percentage(
    algorithm: str, phases: list[str], tmp_path: Path
) -> None:
    done = _cli(
        "anonymize", str(_census_csv(tmp_path)), "--quasi-identifiers", ",".join(QIS), "--identifiers",
        "person_id", "--insensitive", OTHERS, "--k", "5", "--algorithm", algorithm, "--out", str(tmp_path / "out.csv"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = _progress_lines(done.stderr)
    assert lines, done.stderr
    seen = list(dict.fromkeys(m["what"] for m in lines))
    assert seen == phases  # in order, each named as the algorithm names it
    assert "checking nodes" not in done.stderr
    assert int(lines[-1]["percent"]) == 100
    assert "\r" not in done.stderr  # no terminal bar written into a file


def test_redirected_anonymize_is_silent_with_quiet_and_throttled_by_default(tmp_path: Path) -> None:
    data = str(_census_csv(tmp_path))
    base = ["anonymize", data, "--quasi-identifiers", ",".join(QIS), "--identifiers", "person_id", "--k", "5",
            "--insensitive", OTHERS]  # fmt: skip
    quiet = _cli(*base, "--algorithm", "k-member", "--out", str(tmp_path / "a.csv"), "--quiet")
    assert quiet.returncode == 0 and _progress_lines(quiet.stderr) == []
    # The default interval (10 s) is far longer than this run: no line at all.
    default = _cli(*base, "--algorithm", "k-member", "--out", str(tmp_path / "b.csv"), interval="")
    assert default.returncode == 0 and _progress_lines(default.stderr) == []


def test_redirected_release_prints_steps_and_the_algorithms_phase(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    data = demo_spec_dict(tmp_path, rows=400)
    data["algorithm"] = {"name": "two-phase"}
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    done = _cli("release", str(spec))
    assert done.returncode in (0, 1), done.stderr
    assert "privacy-plugins: release step 1/" in done.stderr
    anonymize_lines = [m for m in _progress_lines(done.stderr) if m["what"].startswith("anonymize: ")]
    phases = list(dict.fromkeys(m["what"].removeprefix("anonymize: ") for m in anonymize_lines))
    assert phases[0] == "two-phase: merging clusters" and "two-phase: splitting big clusters" in phases
    assert any(m["what"].startswith("diagnose: subsets measured") for m in _progress_lines(done.stderr))


def test_optimistic_reports_progress_under_its_phase_name() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.events: list[tuple[str, int, int]] = []
            self.what = ""

        def phase(self, name: str) -> None:
            self.what = name

        def __call__(self, done: int, total: int) -> None:
            self.events.append((self.what, done, total))

    recorder = Recorder()
    frame = generate_census(300, seed=2)
    anonymize(
        frame,
        algorithm="optimistic",
        quasi_identifiers=QIS,
        identifiers=["person_id"],
        sensitive_attributes=["disease"],
        insensitive=other_columns(frame, [], QIS, ["person_id", "disease"]),
        models=[KAnonymity(3), FrequencyLDiversity("disease", 2)],
        suppression_limit=0.1,
        progress=recorder,
    )
    assert recorder.events and {what for what, _, _ in recorder.events} == {"optimistic: growing clusters"}
    _, done, total = recorder.events[-1]
    assert done == total > 0


def test_progress_lines_are_throttled_by_the_interval() -> None:
    now = [0.0]
    written: list[str] = []
    lines = ProgressLines(written.append, "nodes checked", prefix="anonymize: ", interval=10.0, clock=lambda: now[0])
    for done in range(1, 61):
        now[0] = float(done)  # one update a second for a minute
        if done == 30:
            lines.phase("two-phase: refining")
        lines(done, 60)
    assert written == [
        "anonymize: nodes checked 16% (10 of 60), 10 s",
        "anonymize: nodes checked 33% (20 of 60), 20 s",
        "anonymize: two-phase: refining 50% (30 of 60), 30 s",
        "anonymize: two-phase: refining 66% (40 of 60), 40 s",
        "anonymize: two-phase: refining 83% (50 of 60), 50 s",
        "anonymize: two-phase: refining 100% (60 of 60), 60 s",
    ]


@pytest.mark.parametrize(("text", "seconds"), [("", 10.0), ("0", 0.0), ("2.5", 2.5), ("-1", 10.0), ("x", 10.0)])
def test_the_interval_comes_from_the_environment(text: str, seconds: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(release_progress.PROGRESS_INTERVAL_ENV, text)
    assert progress_interval() == seconds


def test_step_progress_passes_the_phase_to_a_listening_callback() -> None:
    class Listener:
        def __init__(self) -> None:
            self.phases: list[str] = []

        def phase(self, name: str) -> None:
            self.phases.append(name)

        def __call__(self, step: str, done: int, total: int | None) -> None:
            pass

    listener = Listener()
    step = StepProgress("anonymize", "nodes checked", listener)
    step.phase("k-member: building clusters")
    assert listener.phases == ["k-member: building clusters"] and step.unit == "k-member: building clusters"
