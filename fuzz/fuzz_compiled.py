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

import os
import random
import sys
import time
from pathlib import Path
from typing import Any

MUTATE = sys.argv[1:2] == ["--mutate"]
#: Guide by the Python reference's branches too.  Off by default: with the extensions built
#: by clang (run_compiled.sh), libFuzzer sees the C branches, which are what this target is
#: for, and instrumenting the Python side makes each input about 20 times slower.
PYTHON_COVERAGE = os.environ.get("GF_FUZZ_PYTHON_COVERAGE", "") not in ("", "0")
if MUTATE or not PYTHON_COVERAGE:
    import godot_formats as gf
    from godot_formats.codec import Decoder, Encoder
    from godot_formats.dialects import get_dialect
    from godot_formats.keys import same_value
if not MUTATE:
    import atheris
if not MUTATE and PYTHON_COVERAGE:
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


#: Words the mutations splice in: type headers with flags, hostile counts.
_WORDS = (0x1B, 0x1C, 0x1D, 0x10002, 0x10003, 0x3001C, 0xF001B, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000001, 0x4, 0x18, 0x10018)


def _mutate(rng: random.Random, blobs: list[bytes]) -> bytes:
    data = bytearray(rng.choice(blobs))
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        if r < 0.35 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif r < 0.6 and len(data) > 4:
            at = rng.randrange(len(data) - 3)
            data[at:at + 4] = rng.choice(_WORDS).to_bytes(4, "little")
        elif r < 0.75:
            del data[rng.randrange(len(data) + 1):]
        else:
            other = rng.choice(blobs)
            at = rng.randrange(len(data) + 1)
            data[at:at] = other[:rng.randrange(len(other) + 1)]
    return bytes(data)


def mutate(seconds: float, dirs: list[str]) -> None:
    """``--mutate SECONDS DIR...``: every file of DIRs, then random mutations of them for SECONDS."""
    blobs = [p.read_bytes() for d in dirs for p in sorted(Path(d).iterdir()) if p.is_file()]
    for blob in blobs:
        test_one_input(blob)
    rng = random.Random(int(os.environ.get("SEED", "1")))
    stop, n = time.monotonic() + seconds, 0
    while time.monotonic() < stop:
        data = _mutate(rng, blobs)
        try:
            test_one_input(data)
        except AssertionError:
            Path("finding-" + str(abs(hash(data)))).write_bytes(data)
            raise
        n += 1
    print(f"fuzz_compiled: {len(blobs)} inputs replayed, {n} mutations, no finding", flush=True)


def main() -> None:
    if gf.backend != "c":
        raise SystemExit("fuzz_compiled.py: the compiled core is not loaded (see fuzz/run_compiled.sh)")
    if MUTATE:
        mutate(float(sys.argv[2]), sys.argv[3:])
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
