#!/usr/bin/env python3
"""Coverage-guided fuzzing of the decoder with atheris (libFuzzer for Python).

Why: the property tests in tests/hostile/test_fuzz.py mutate the engine fixtures at
random; this target lets libFuzzer steer the mutations with branch coverage of
``godot_formats`` itself, so it reaches the odd corners (typed containers,
Object frames, NodePath flags ...) that random mutation rarely hits.

For every input, in every registered dialect, with and without
``allow_objects``, it asserts:

* only :class:`~godot_formats.DecodeError` comes out of decoding, with an
  offset inside the input, and a successful decode ends inside the input;
* the decoded value re-encodes (``full_objects`` = ``allow_objects``); the
  only EncodeErrors tolerated are the documented ones in ``TOLERATED_ENCODE_ERRORS``;
* re-encoding is a fixed point: decode(encode(v)) encodes to the same bytes;
* no single input takes longer than ``SLOW_SECONDS`` (saved to ``fuzz/crashes/slow-*``).

Anything else (IndexError, RecursionError, MemoryError, an assertion ...) is a
crash that libFuzzer saves under ``-artifact_prefix``.  See fuzz/README.md.

    python3 fuzz/fuzz_decode.py --write-seeds          # fixture blobs -> fuzz/corpus/
    python3 fuzz/fuzz_decode.py /tmp/work fuzz/corpus -artifact_prefix=fuzz/crashes/ ...
    python3 fuzz/fuzz_decode.py fuzz/crashes/crash-*   # replay
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SLOW_SECONDS = 1.0
MAX_SEED_BYTES = 16384

#: EncodeErrors a successfully decoded value may legitimately raise when written
#: back in the same dialect (message regex -> why).  Keep this list short and
#: documented: every entry is a value the decoder accepts but the writer refuses.
TOLERATED_ENCODE_ERRORS: dict[str, str] = {}


#: Findings already reported and not fixed yet, so that a long run looks for new
#: ones instead of rediscovering these: name -> predicate on (dialect, decoded
#: value) for a failed check, and name -> predicate on the exception for one out
#: of decode().  Each entry needs a failing regression test in tests/hostile/test_untrusted_bytes.py
#: and its input in fuzz/crashes/.  GF_FUZZ_STRICT=1 ignores them (to confirm a fix).
#: Empty: the three findings so far are fixed (fuzz/README.md).  The form of an entry
#: that was here until the fix:  "psa-trailing-nul-in-docs-dialects": lambda d, v:
#: not d.packed_string_nul and any(s.endswith("\0") for s in <PackedStringArrays in v>)
KNOWN_FINDINGS: dict[str, Callable[[Any, Any], bool]] = {}
KNOWN_DECODE_FAILURES: dict[str, Callable[[BaseException], bool]] = {}
KNOWN_HITS: dict[str, int] = {}
STRICT = os.environ.get("GF_FUZZ_STRICT") == "1"


def _known_failure(error: BaseException) -> bool:
    if STRICT:
        return False
    for name, predicate in KNOWN_DECODE_FAILURES.items():
        if predicate(error):
            KNOWN_HITS[name] = KNOWN_HITS.get(name, 0) + 1
            return True
    return False


def _known(dialect: Any, value: Any) -> bool:
    if STRICT:
        return False
    for name, predicate in KNOWN_FINDINGS.items():
        if predicate(dialect, value):
            KNOWN_HITS[name] = KNOWN_HITS.get(name, 0) + 1
            return True
    return False


def _import_package() -> Any:
    try:
        import atheris  # type: ignore[import-untyped]
    except ImportError:  # replaying without atheris still works
        import godot_formats
        return godot_formats
    with atheris.instrument_imports(include=["godot_formats"]):
        import godot_formats
    return godot_formats


gf = _import_package()
from godot_formats.core.codec import Decoder, Encoder  # noqa: E402  (already imported, instrumented)

PAIRS = [
    (name, allow, Decoder(gf.get_dialect(name), allow_objects=allow), Encoder(gf.get_dialect(name), full_objects=allow))
    for name in gf.dialect_names()
    for allow in (False, True)
]


def _tolerated(error: Exception) -> bool:
    return any(re.search(pattern, str(error)) for pattern in TOLERATED_ENCODE_ERRORS)


def check(data: bytes, _retimed: bool = False) -> None:
    """The fuzz target: raises AssertionError (or whatever leaked) on a finding."""
    started = time.perf_counter()
    for name, allow, decoder, encoder in PAIRS:
        where = f"{name} allow_objects={allow}"
        try:
            value, end = decoder.decode(data)
        except gf.DecodeError as e:
            assert isinstance(e.offset, int) and 0 <= e.offset <= len(data), f"{where}: offset {e.offset} ({e})"
            continue
        except Exception as e:
            if _known_failure(e):
                continue
            raise
        assert 4 <= end <= len(data), f"{where}: end {end} of {len(data)}"
        try:
            first = encoder.encode(value)
        except gf.EncodeError as e:
            if _tolerated(e) or _known(decoder.dialect, value):
                continue
            raise AssertionError(f"{where}: decoded value does not re-encode: {e}") from e
        again, end2 = decoder.decode(first)
        assert end2 == len(first), f"{where}: re-encoded bytes decode to {end2} of {len(first)}"
        second = encoder.encode(again)
        if first != second and not _known(decoder.dialect, value):
            raise AssertionError(f"{where}: not a fixed point\n{first.hex()}\n{second.hex()}")
    open_as_a_file(data)
    elapsed = time.perf_counter() - started
    if elapsed > SLOW_SECONDS and not _retimed:
        # Both cores are shared: only an input that is slow every time is a finding.
        elapsed = min([elapsed] + [_timed(data) for _ in range(2)])
        if elapsed > SLOW_SECONDS:
            _save("slow", data, f"{elapsed:.2f} s for {len(data)} bytes")


def open_as_a_file(data: bytes) -> None:
    """The same bytes as a save file (layers, framing, detection: ``gf.open``): a result or the
    library's error, within the decompression budget."""
    try:
        gf.open(data)
    except gf.GodotFormatsError:
        pass


def _timed(data: bytes) -> float:
    started = time.perf_counter()
    check(data, _retimed=True)
    return time.perf_counter() - started


def _save(kind: str, data: bytes, why: str) -> None:
    out = HERE / "crashes" / f"{kind}-{hashlib.sha1(data).hexdigest()}"
    if not out.exists():
        out.write_bytes(data)
        print(f"\n== {kind} input saved to {out}: {why}", file=sys.stderr, flush=True)


def test_one_input(data: bytes) -> None:
    check(bytes(data))


def seed_blobs() -> list[bytes]:
    """Every byte blob in the engine fixtures (both engines), up to MAX_SEED_BYTES each."""
    blobs: list[bytes] = []
    for path in sorted((ROOT / "fixtures").glob("godot*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            for key in ("hex", "hex_full_objects", "in_hex"):
                text = case.get(key)
                if isinstance(text, str) and text:
                    blob = bytes.fromhex(text)
                    if len(blob) <= MAX_SEED_BYTES:
                        blobs.append(blob)
    return blobs


def hostile_seeds() -> list[bytes]:
    """Small instances of the hostile file shapes (benchmarks/hostile.py, issue 26): compressed
    layers that declare more than they hold, Zstd blocks of empty frames, records of Nil."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import hostile

    return [shape(n) for shape in hostile.SHAPES.values() for n in (64, 1024, MAX_SEED_BYTES // 2)
            if len(shape(n)) <= MAX_SEED_BYTES]


def write_seeds(directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for blob in seed_blobs() + hostile_seeds():
        target = directory / hashlib.sha1(blob).hexdigest()
        if not target.exists():
            target.write_bytes(blob)
            written += 1
    return written


def main() -> None:
    if sys.argv[1:2] == ["--write-seeds"]:
        print(f"{write_seeds(HERE / 'corpus')} seed(s) written to {HERE / 'corpus'}")
        return
    import atheris

    print(f"fuzzing {gf.__file__} in {len(PAIRS) // 2} dialects", file=sys.stderr, flush=True)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
