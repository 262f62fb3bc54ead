"""The batch acceptance run at a small size: the command line on a pool of 2, ``kill -9`` of its
process group in the middle, then ``--resume`` (benchmarks/batch_acceptance.py, which docs/batch.md
runs at full size).  Behaviour only: the script's CPU-per-wall figure is printed there, never
asserted here (the machine is shared)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_kill_9_in_the_middle_then_resume(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "batch_acceptance.py"), "--files", "400", "--large", "1",
         "--kill-at", "0.2", "--workdir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout, proc.stderr
    figures = json.loads(proc.stdout.splitlines()[-1])
    assert figures["failures"] == [], figures["failures"]
    assert proc.returncode == 0, proc.stderr
    kinds = figures["kinds"]
    assert set(kinds) == {"ok", "lossy", "bad", "godot4"}  # every kind of input is in the run
    assert figures["killed_run"]["killed"] and figures["killed_run"]["exit"] == -9
    assert 0 < figures["killed_run"]["journal_rows"] < figures["inputs"]  # killed in the middle
    assert figures["resumed_run"]["journal_rows"] == figures["inputs"]
    assert figures["ended"] == {"converted": kinds["ok"], "unchanged": kinds["godot4"],
                                "failed": kinds["lossy"] + kinds["bad"]}
