"""The engine oracles for the test-suite: a re-export of :mod:`godot_formats.oracle`.

The drivers live in the package (``godot_formats/oracle/``), so that the installed
``godot-formats engine`` command can use them too; this module keeps the tests'
``import oracles`` / ``from tests import oracles`` working. Install the engines with
``bash scripts/install-oracles.sh``. Typical use in a test::

    import pytest
    from tests import oracles          # or `import oracles` with tests/ on sys.path

    @pytest.mark.skipif(oracles.godot3_available() is not None,
                        reason=str(oracles.godot3_available()))
    def test_int():
        [rec] = oracles.godot3_encode([{"name": "one", "expr": "1"}])
        assert rec["ok"] and rec["hex"] == "0200000001000000"

Record formats: see the docstring of :mod:`godot_formats.oracle`.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import godot_formats.oracle  # noqa: F401  (installed, or the repository root on sys.path)
except ImportError:  # run as a script from tests/ without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from godot_formats.oracle import (  # noqa: E402
    GODOT3_TIMEOUT,
    GODOT4_TIMEOUT,
    OracleError,
    godot3_available,
    godot3_decode,
    godot3_encode,
    godot3_run,
    godot4_available,
    godot4_decode,
    godot4_encode,
    godot4_run,
    oracle_home,
)

__all__ = [
    "GODOT3_TIMEOUT",
    "GODOT4_TIMEOUT",
    "OracleError",
    "godot3_available",
    "godot3_decode",
    "godot3_encode",
    "godot3_run",
    "godot4_available",
    "godot4_decode",
    "godot4_encode",
    "godot4_run",
    "oracle_home",
]
