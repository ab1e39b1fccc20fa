"""Benchmark: special uniques (SUDA2) equal sdcMicro's ``suda2`` (its C++ code), timed in the same run.

sdcMicro's ``src/Suda2.h`` (the OECD/IHSN code behind R's ``sdcMicro::suda2``) is compiled
unchanged as a plain command against a small stand-in for the Rcpp names it uses
(``sdcmicro_suda2/``); R is not needed. Give a checkout of github.com/sdcTools/sdcMicro with
``--sdcmicro PATH`` (or ``$SDCMICRO_SRC``); without one the benchmark skips, saying why.

Cases: random integer tables (3–8 key variables, 20–400 rows, seeded) and Adult's seven QIs
(30,162 rows). Per case: the SUDA scores must be equal, the per-variable contributions equal
to 1e-9, the DIS-SUDA scores to 1e-5 relative (sdcMicro computes DIS in single precision).
sdcMicro's DIS counts a record unique on all keys only when it is alone in its 16-bit hash
bucket (``Suda2.h``: ``else if (k == g_NbPerHash[i])`` is never true in a bucket of several),
so on small tables with few values its U can miss uniques (U = 0 gives NaN). Such a case is
reported as a "hash quirk" when our DIS formula with sdcMicro's U reproduces its DIS exactly;
only a case that this does not explain counts as different.
Times: ours (``find_msus`` on the diagnosis lattice, grouping included) against the sdcMicro
command's wall time (reading the codes from a pipe included).

Run:  .venv/bin/python benchmarks/bench_suda2.py --sdcmicro ../sdcMicro [--random 200]
Exit status 1 when a case differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _adult import QIS, load_adult

from privacy_plugins.core.diagnosis.special_uniques import _dis_scores, find_msus
from privacy_plugins.core.diagnosis.subset_lattice import SubsetLattice

HERE = Path(__file__).resolve().parent / "sdcmicro_suda2"


def build(source: Path) -> Path | None:
    """Compile sdcMicro's Suda2.h with the stand-in; ``None`` (said why) when it cannot."""
    if not (source / "src" / "Suda2.h").exists() or shutil.which("g++") is None:
        print(f"skipped: no sdcMicro checkout at {source} (src/Suda2.h) or no g++")
        return None
    binary = Path(tempfile.mkdtemp(prefix="suda2-")) / "suda2"
    command = ["g++", "-O2", "-std=c++17", "-w", f"-I{HERE}", f"-I{source / 'src'}", "-o", str(binary)]
    subprocess.run([*command, str(HERE / "suda2_main.cpp")], check=True)
    return binary


def sdcmicro(binary: Path, frame: pd.DataFrame, fraction: float) -> tuple[np.ndarray, float]:
    """sdcMicro's result matrix (contributions…, score, DIS) and its wall seconds."""
    codes = codes_of(frame)
    text = f"{codes.shape[0]} {codes.shape[1]} {fraction!r}\n" + "\n".join(" ".join(map(str, r)) for r in codes)
    start = time.perf_counter()
    out = subprocess.run([str(binary)], input=text + "\n", capture_output=True, text=True, check=True).stdout
    seconds = time.perf_counter() - start
    return np.array([[float(x) for x in line.split()] for line in out.strip().splitlines()]), seconds


def codes_of(frame: pd.DataFrame) -> np.ndarray:
    """The integer codes both sides get (0-based, in order of appearance)."""
    return np.column_stack([pd.factorize(frame[c], use_na_sentinel=False)[0] for c in frame.columns])


def sdcmicro_uniques(codes: np.ndarray) -> int:
    """The U sdcMicro's DIS uses: unique records that are alone in their hash bucket.

    Suda2.h counts a record unique on all keys only when no other record shares its 16-bit
    hash (shift-and-add of the codes); a unique record whose bucket holds another combination
    is not counted. That makes its DIS depend on hash collisions (and on how values are coded):
    with U = 0 its DIS is NaN. Ours uses every unique record.
    """
    hashes = np.zeros(codes.shape[0], dtype=np.int64)
    for column in codes.T:
        carry = (hashes & (1 << 15)) != 0
        hashes = ((hashes << 1) + column + carry) & 0xFFFF
    keys, key_counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)[1:]
    bucket_counts = np.bincount(hashes, minlength=1 << 16)
    return int(((key_counts[keys.reshape(-1)] == 1) & (bucket_counts[hashes] == 1)).sum())


def compare(binary: Path, name: str, frame: pd.DataFrame, fraction: float = 0.01) -> str:
    """``"equal"``, ``"DIS: hash quirk …"`` (only sdcMicro's U differs and explains its DIS) or ``"DIFFERENT"``."""
    start = time.perf_counter()
    ours = find_msus(SubsetLattice(frame, list(frame.columns), k=2), dis_fraction=fraction)
    our_seconds = time.perf_counter() - start
    theirs, their_seconds = sdcmicro(binary, frame, fraction)
    d = frame.shape[1]
    scores_equal = np.array_equal(ours.scores, theirs[:, d]) and np.allclose(
        ours.contributions, theirs[:, :d], rtol=0, atol=1e-9
    )
    verdict = "DIFFERENT"
    if scores_equal and np.allclose(ours.dis_scores, theirs[:, d + 1], rtol=1e-5, atol=1e-12):
        verdict = "equal"
    elif scores_equal:
        their_u = sdcmicro_uniques(codes_of(frame))
        pairs = 2 * int((frame.value_counts() == 2).sum())
        if their_u == 0:  # 0/0 in sdcMicro: NaN for every scored record
            explained = np.where(ours.scores > 0, np.nan, 0.0)
        else:
            explained = _dis_scores(ours.scores, n_unique=their_u, pairs=pairs, fraction=fraction, m=d)
        if np.allclose(explained, theirs[:, d + 1], rtol=1e-5, atol=1e-12, equal_nan=True):
            verdict = f"DIS: hash quirk (sdcMicro's U {their_u} of {ours.records_unique} uniques)"
    print(
        f"{name:<28} rows {len(frame):>6,} d {d}  MSUs {ours.msus:>7,}  max score {ours.max_score:>7g}  "
        f"ours {our_seconds * 1000:>8.1f} ms  sdcMicro {their_seconds * 1000:>8.1f} ms  {verdict}"
    )
    return verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdcmicro", type=Path, default=Path(os.environ.get("SDCMICRO_SRC", "../sdcMicro")))
    parser.add_argument("--random", type=int, default=200, help="random tables")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    binary = build(args.sdcmicro)
    if binary is None:
        return 0
    rng = np.random.default_rng(args.seed)
    verdicts = []
    for case in range(args.random):
        d, rows = int(rng.integers(3, 9)), int(rng.integers(20, 401))
        cardinalities = rng.integers(2, 7, size=d)
        frame = pd.DataFrame({f"v{i}": rng.integers(0, c, size=rows) for i, c in enumerate(cardinalities)})
        fraction = float(rng.choice([0.01, 0.1, 0.5]))
        verdicts.append(compare(binary, f"random #{case} (f={fraction:g})", frame, fraction))
    loaded = load_adult()
    if loaded is not None:
        adult, _ = loaded
        verdicts.append(compare(binary, "Adult, 7 QIs", adult[QIS]))
    quirks = sum(v.startswith("DIS: hash quirk") for v in verdicts)
    failures = sum(v == "DIFFERENT" for v in verdicts)
    print(
        f"{len(verdicts)} cases: {verdicts.count('equal')} equal; {quirks} equal but for sdcMicro's DIS, whose U "
        f"misses uniques sharing a hash bucket (explained exactly by that U); {failures} different"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
