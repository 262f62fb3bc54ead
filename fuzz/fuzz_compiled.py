#!/usr/bin/env python3
"""Differential fuzzing of the compiled core against the reference, under AddressSanitizer.

Why: godot_formats/_cdecode.c and _cencode.c parse and write hostile bytes in C.  Run by
fuzz/run_compiled.sh, this target loads a copy of the package whose compiled core is built
with ``-fsanitize=address,undefined`` (no recovery: any report aborts), and Python allocating
with the system ``malloc`` (``PYTHONMALLOC=malloc``) so that an overread of an input buffer is
seen too.  For every input, in seven dialects, with ``allow_objects`` off and on, it requires:

* the compiled decoder and the reference give the same outcome: the same value (NaN-aware) and
  end offset, or the same error class, byte offset and message;
* the decoded value is written alike by the compiled writer and the reference: the same bytes
  or the same error.

Anything else -- a sanitizer report, a segfault, a mismatch, any other exception -- is a
finding that libFuzzer saves under ``-artifact_prefix``.  A finding becomes a regression test
in tests/test_backends.py.  Replay one with: fuzz/run_compiled.sh replay FILE...
"""

from __future__ import annotations

import sys
from typing import Any

import atheris

with atheris.instrument_imports(include=["godot_formats"]):
    import godot_formats as gf
    from godot_formats.codec import Decoder, Encoder
    from godot_formats.dialects import get_dialect
    from godot_formats.keys import same_value

DIALECTS = ("godot4", "godot3", "godot4.0", "godot4-double", "godot3.0", "docs-godot4", "godot2")
PAIRS = {(name, objects): (Decoder(get_dialect(name), allow_objects=objects, backend="c"),
                           Decoder(get_dialect(name), allow_objects=objects, backend="python"),
                           Encoder(get_dialect(name), full_objects=objects, backend="c"),
                           Encoder(get_dialect(name), full_objects=objects, backend="python"))
         for name in DIALECTS for objects in (False, True)}


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except gf.GodotFormatsError as e:
        return type(e).__name__, str(e)


def test_one_input(data: bytes) -> None:
    for (name, objects), (c_dec, py_dec, c_enc, py_enc) in PAIRS.items():
        got, want = _outcome(c_dec.decode, data), _outcome(py_dec.decode, data)
        if got[0] != want[0] or (got[0] != "ok" and got[1] != want[1]):
            raise AssertionError(f"{name} objects={objects}: compiled {got!r:.300} reference {want!r:.300}")
        if got[0] != "ok":
            continue
        if got[1][1] != want[1][1] or not same_value(got[1][0], want[1][0]):
            raise AssertionError(f"{name} objects={objects}: decoded values differ")
        written, expected = _outcome(c_enc.encode, want[1][0]), _outcome(py_enc.encode, want[1][0])
        if written != expected:
            raise AssertionError(f"{name} objects={objects}: compiled writer {written!r:.300} "
                                 f"reference {expected!r:.300}")


def main() -> None:
    if gf.backend != "c":
        raise SystemExit("fuzz_compiled.py: the compiled core is not loaded (see fuzz/run_compiled.sh)")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
