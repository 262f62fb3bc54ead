"""A type and a dialect the library has never seen, added the way docs/architecture.md says, reach
every part of it without a hand edit (issue "A house that shows its layers").

tests/synthetic/vector5.py registers a five-component Vector5 (its class, its registry row, an
id in a dialect) and a dialect ``godot4.9`` (one ``register`` call).  In a process of its own,
with that module loaded as a pytest plugin, this runs:

- tests/synthetic/check_vector5.py: Vector5 through both codecs, streams, text, JSON, ``explain``,
  the tree, conversion, detection, ``gf.open`` and the command line;
- the suites that walk every row or every dialect (the rows x views matrix, the dialect checks,
  detection's sibling rules, the compiled core's tables, text, JSON, keys, conversion and the
  Hypothesis round trips), which pick the new row and dialect up themselves.

A place that still needs a hand edit fails one of them, and the failure names it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
ROW_AND_DIALECT_SUITES = (
    "synthetic/check_vector5.py", "test_registry.py", "test_dialects.py", "test_detect.py", "test_cencode.py",
    "test_cdecode.py", "test_text.py", "test_json.py", "test_keys.py", "test_explain.py", "test_convert.py",
    "test_roundtrip.py",
)


def test_a_new_type_and_dialect_need_no_hand_edit() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "synthetic"), str(TESTS)])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "vector5", "-p", "no:warnings",
         *(str(TESTS / name) for name in ROW_AND_DIALECT_SUITES)],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=1800)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", run.stdout, re.MULTILINE)
    assert run.returncode == 0 and not failed, "\n".join(failed) or run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout), run.stdout[-2000:]
