"""A type and a dialect the library has never seen, added the way docs/architecture.md says, reach
every part of it without a hand edit.

tests/synthetic/vector5.py registers a five-component Vector5 (its class, its registry row, an
id in a dialect) and a dialect ``godot4.9`` (one ``register`` call).  In a process of its own,
with that module loaded as a pytest plugin, this runs:

- tests/synthetic/check_vector5.py: Vector5 through both codecs, streams, text, JSON, ``explain``,
  the tree, conversion, detection, ``gf.open`` and the command line;
- the suites that walk every row or every dialect (the rows x views matrix, the dialect checks,
  detection's sibling rules, the compiled core's tables, text, JSON, keys, conversion and the
  Hypothesis round trips), which pick the new row and dialect up themselves: the cases the new
  row and dialect add to their parametrizations, and their tests that walk every row inside
  (the plugin deselects the rest, which the main suite runs as they would run there).

A place that still needs a hand edit fails one of them, and the failure names it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROW_AND_DIALECT_SUITES = (
    "synthetic/check_vector5.py", "core/test_registry_views.py", "core/test_dialects.py", "saves/test_detection.py",
    "core/test_compiled_writer.py", "core/test_compiled_reader.py", "views/test_text.py", "views/test_json.py",
    "core/test_dictionary_keys.py", "views/test_explain.py", "saves/test_conversion.py", "core/test_roundtrip.py",
)


@pytest.mark.slow
def test_a_new_type_and_dialect_need_no_hand_edit() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "synthetic"), str(TESTS)])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "vector5", "-p", "no:warnings",
         "-m", "not engine",  # no engine knows the new type: their runs say nothing of it
         *(str(TESTS / name) for name in ROW_AND_DIALECT_SUITES)],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=1800)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", run.stdout, re.MULTILINE)
    assert run.returncode == 0 and not failed, "\n".join(failed) or run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout), run.stdout[-2000:]
