"""Nothing was dropped when the tests were grouped into tiers and folders: every test function the
suite had runs still, with at least as many cases, at its new path.

tests_before_the_tiers.json lists each function of the suite before (its cases counted from
``pytest --collect-only`` then, under each backend).  Under the compiled core every one runs in the
full tier; under the pure-Python reference, which then ran the whole suite a second time, every one
runs again unless its folder's tests do not depend on the backend (the command line, batch,
conformance, engine and project folders: ``backend`` is not theirs), which the compiled core's run
covers.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from godot_formats.core import accel

pytestmark = pytest.mark.slow  # two collections of the whole suite, in processes of their own

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BEFORE = json.loads((HERE / "tests_before_the_tiers.json").read_text(encoding="utf-8"))


def _collected(*args: str, env: dict[str, str] | None = None) -> collections.Counter[str]:
    """The cases of each test function that ``pytest --collect-only ARGS`` selects (all tiers: no ``--sample``)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    return collections.Counter(re.sub(r"\[.*", "", line) for line in p.stdout.splitlines() if "::" in line)


def _missing(before: dict[str, int], now: collections.Counter[str]) -> list[str]:
    return [f"{name}: {count} case(s) before, {now.get(name, 0)} now" for name, count in before.items()
            if now.get(name, 0) < count]


@pytest.mark.skipif(accel.BACKEND != "c", reason="the compiled core is not built: its cases are not collected")
def test_every_test_runs_under_the_compiled_core() -> None:
    assert _missing(BEFORE["compiled"], _collected()) == []


def test_every_backend_test_runs_again_under_the_pure_reference() -> None:
    now = _collected("-m", "backend", env={"GODOT_FORMATS_PURE": "1"})
    compiled_only = ("tests/cli/", "tests/batch/", "tests/conformance/", "tests/engine/", "tests/project/")
    again = {name: n for name, n in BEFORE["pure"].items() if not name.startswith(compiled_only)}
    assert _missing(again, now) == []
    # the cases left to the compiled run alone are the few the command line, batch and engine folders hold
    assert sum(again.values()) > 0.85 * sum(BEFORE["pure"].values())
