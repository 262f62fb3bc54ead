"""A child process under a memory cap and a hang guard: how the hostile tests run what they feed the
library (tests/hostile/test_probes.py, test_special_files.py, tests/batch/test_hostile_batch.py).

The cap is on the address space (``RLIMIT_AS``): a probe that allocates what its input declares
instead of what it holds dies with ``MemoryError`` there, whatever the machine has.  The guard is
only that: a bound far above any honest run, never a measure of speed.  The child leads a session
of its own, so a hung one is killed with everything it started."""

from __future__ import annotations

import dataclasses
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class Ended:
    """How a capped child ended: its exit status, its output, and its process id (the leader of its
    session, for a test that looks for what it left behind)."""

    returncode: int
    stdout: str
    stderr: str
    pid: int


def run_capped(code: str, *args: str, cap: int, guard: float, env: dict[str, str] | None = None,
               what: str = "") -> Ended:
    """``python -c code args...`` under ``cap`` bytes of address space; a child that has not ended
    after ``guard`` seconds fails the test (``what`` says what hanging means)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=limit, start_new_session=True, cwd=ROOT,
                            env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=guard)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        pytest.fail(f"hung: no outcome within {guard} s{what}")
    return Ended(proc.returncode, out, err, proc.pid)
