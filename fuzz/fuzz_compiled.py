#!/usr/bin/env python3
"""Differential fuzzing of the compiled core against the reference, under AddressSanitizer.

Why: godot_formats/core/_cdecode.c and _cencode.c parse and write hostile bytes in C.  Run by
fuzz/run_compiled.sh, this target loads a copy of the package whose compiled core is built
with ``-fsanitize=address,undefined`` (no recovery: any report aborts), and Python allocating
with the system ``malloc`` (``PYTHONMALLOC=malloc``) so that an overread of an input buffer is
seen too.  For every input, in seven dialects, with ``allow_objects`` off and on, it requires:

* the compiled decoder and the reference give the same outcome: the same value (NaN-aware) and
  end offset, or the same error class, byte offset and message;
* the decoded value is written alike by the compiled writer and the reference: the same bytes
  or the same error;
* FastLZ (godot_formats/core/_cfastlz.c against layers/fastlz.py): the input, as a stream,
  decompresses alike at three caps; compressed at each level it gives the same bytes, which
  decompress alike whole, one byte short and damaged.

``GF_FUZZ_PART=codec`` or ``fastlz`` fuzzes one of the two (default: both).

Anything else -- a sanitizer report, a segfault, a mismatch, any other exception -- is a
finding that libFuzzer saves under ``-artifact_prefix``.  A finding becomes a regression test
in tests/core/test_backends_agree.py.  Replay one with: fuzz/run_compiled.sh replay FILE...
"""

from __future__ import annotations

import os
import random
import struct
import sys
import time
from pathlib import Path
from typing import Any

MUTATE = sys.argv[1:2] == ["--mutate"]
#: Runs that need no libFuzzer (nor atheris): random mutation, and writing the seeds.
NO_FUZZER = MUTATE or sys.argv[1:2] == ["--write-seeds"]
#: What each input goes through: "codec" (the Variant reader and writer), "fastlz", or both.
PART = os.environ.get("GF_FUZZ_PART", "all")
if PART not in ("all", "codec", "fastlz"):
    raise SystemExit(f"GF_FUZZ_PART must be all, codec or fastlz, not {PART!r}")
#: Guide by the Python reference's branches too.  Off by default: with the extensions built
#: by clang (run_compiled.sh), libFuzzer sees the C branches, which are what this target is
#: for, and instrumenting the Python side makes each input about 20 times slower.
PYTHON_COVERAGE = os.environ.get("GF_FUZZ_PYTHON_COVERAGE", "") not in ("", "0")
if NO_FUZZER or not PYTHON_COVERAGE:
    import godot_formats as gf
    from godot_formats.core.codec import Decoder, Encoder
    from godot_formats.layers.compression import read_gcpf
    from godot_formats.core.dialects import get_dialect
    from godot_formats.core.keys import same_value
    from godot_formats.layers import fastlz
if not NO_FUZZER:
    import atheris
if not NO_FUZZER and PYTHON_COVERAGE:
    with atheris.instrument_imports(include=["godot_formats"]):
        import godot_formats as gf
        from godot_formats.core.codec import Decoder, Encoder
        from godot_formats.core.dialects import get_dialect
        from godot_formats.core.keys import same_value
        from godot_formats.layers import fastlz

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
    """Decode alike, write the decoded value alike; then write a value built from the bytes alike;
    then FastLZ alike."""
    if PART != "fastlz":
        decode_alike(data)
        encode_alike(build_value(data))
    if PART != "codec":
        fastlz_alike(data)


def _fastlz_outcome(fn: Any, *args: Any, **options: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args, **options)
    except gf.GodotFormatsError as e:
        return type(e).__name__, (str(e), getattr(e, "offset", None))


def _decompress_alike(stream: bytes, cap: int) -> tuple[str, Any]:
    got = _fastlz_outcome(fastlz.decompress, stream, cap, backend="c")
    want = _fastlz_outcome(fastlz.decompress, stream, cap, backend="python")
    if got != want:
        raise AssertionError(f"FastLZ decompress cap={cap}: compiled {got!r:.300} reference {want!r:.300}")
    if got[0] == "ok" and len(got[1]) > cap:
        raise AssertionError(f"FastLZ decompress gave {len(got[1])} bytes, over the cap {cap}")
    return got


def fastlz_alike(data: bytes) -> None:
    """The compiled FastLZ and the reference on one input: as a stream, at a cap that fits most
    of what it can make, one from its last byte, and none; and as bytes to compress at each
    level, whose stream must then decompress to the input, refuse a cap one byte short alike,
    and, damaged where the input's first bytes say, decompress alike."""
    for cap in (len(data) * 4 + 16, data[-1] * 37 if data else 0, 1 << 40):
        _decompress_alike(data, cap)
    for level in (None, 1, 2):
        stream = fastlz.compress(data, level, backend="c")
        want = fastlz.compress(data, level, backend="python")
        if stream != want:
            raise AssertionError(f"FastLZ compress level={level}: {len(stream)} bytes, the reference {len(want)}")
        if not data:
            continue
        if _decompress_alike(stream, len(data)) != ("ok", data):
            raise AssertionError(f"FastLZ level={level}: the stream does not give the input back")
        _decompress_alike(stream, len(data) - 1)
        damaged = bytearray(stream)
        damaged[data[0] % len(damaged)] ^= data[1 % len(data)] | 1
        _decompress_alike(bytes(damaged[: len(damaged) - data[-1] % 3]), len(data))


def decode_alike(data: bytes) -> None:
    for (name, objects), (c_dec, py_dec, c_enc, py_enc) in PAIRS.items():
        got, want = _outcome(c_dec.decode, data), _outcome(py_dec.decode, data)
        if got[0] != want[0] or (got[0] != "ok" and got[1] != want[1]):
            raise AssertionError(f"{name} objects={objects}: compiled {got!r:.300} reference {want!r:.300}")
        loaded = _outcome(c_dec.loads, data)  # gf.loads' compiled entry: the same outcome as decode's
        if loaded[0] != got[0] or (got[0] != "ok" and loaded[1] != got[1]) or \
                (got[0] == "ok" and not same_value(loaded[1], want[1][0])):
            raise AssertionError(f"{name} objects={objects}: compiled loads {loaded!r:.300} decode {got!r:.300}")
        if got[0] != "ok":
            continue
        if got[1][1] != want[1][1] or not same_value(got[1][0], want[1][0]):
            raise AssertionError(f"{name} objects={objects}: decoded values differ")
        written, expected = _outcome(c_enc.encode, want[1][0]), _outcome(py_enc.encode, want[1][0])
        if written != expected:
            raise AssertionError(f"{name} objects={objects}: compiled writer {written!r:.300} "
                                 f"reference {expected!r:.300}")


# --- values no decode gives: the compiled writer's own inputs --------------------------------

_NAMES = ("int", "String", "float", "Array", "Dictionary", "Vector2", "StringName", "Object", "Nil")
_MAX_OPS = 300


class _Taker:
    """The input's bytes, taken a few at a time (zeros once they run out)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk.ljust(n, b"\0")

    def byte(self) -> int:
        return self.take(1)[0]

    def int(self) -> int:
        size = (1, 4, 8, 9)[self.byte() & 3]
        return int.from_bytes(self.take(size), "little", signed=True)

    def float(self) -> float:
        return struct.unpack("<d", self.take(8))[0]

    def text(self) -> str:
        raw = self.take(self.byte() & 15)
        return raw.decode("utf-8", "surrogatepass") if self.byte() & 1 and _utf8(raw) else raw.decode("latin-1")

    def done(self) -> bool:
        return self.pos >= len(self.data)


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8", "surrogatepass")
        return True
    except UnicodeDecodeError:
        return False


def _leaf(tk: _Taker, op: int) -> Any:
    t = gf.types
    makers = (
        tk.int, tk.float, tk.text, lambda: tk.take(tk.byte() % 40), lambda: bytearray(tk.take(tk.byte() & 7)),
        lambda: None, lambda: bool(tk.byte() & 1), lambda: gf.Vector2(tk.float(), tk.float()),
        lambda: gf.Vector3i(tk.int() % 2**31, 0, -1), lambda: gf.Color(tk.float(), 0.5, 1.0, tk.float()),
        lambda: gf.StringName(tk.text()), lambda: gf.NodePath(tk.text() or "a"),
        lambda: gf.PackedStringArray([tk.text() for _ in range(tk.byte() & 7)]),
        lambda: gf.PackedStringArray([tk.text(), tk.int()]),  # not all strings
        lambda: gf.PackedInt32Array([tk.int() % 2**31 for _ in range(tk.byte() & 7)]),
        lambda: gf.PackedFloat32Array([tk.float() for _ in range(tk.byte() & 3)]),
        lambda: t.EncodedObjectAsID(tk.int() % 2**63), lambda: type("S", (str,), {})(tk.text()),
        lambda: 2 ** (tk.byte() % 80) * (-1 if tk.byte() & 1 else 1), lambda: float("nan"),
    )
    return makers[op % len(makers)]()


def _close(kind: str, items: list[Any], name: str) -> Any:
    t = gf.types
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    if kind == "typed":
        return t.TypedArray(name, items)
    pairs = list(zip(items[::2], items[1::2]))
    if kind == "dict":
        return {k: v for k, v in pairs if isinstance(k, (str, int, float, bool, type(None), tuple))
                and not isinstance(k, tuple)}
    if kind == "object":
        return gf.Object(name, {str(k): v for k, v in pairs})
    try:
        return t.Dictionary(pairs) if kind == "Dictionary" else t.TypedDictionary(name, None, pairs)
    except gf.GodotFormatsError:
        return t.Dictionary()


def build_value(data: bytes) -> Any:
    """A value from the input's bytes: each byte an op -- a leaf, or open or close a
    container -- on an explicit stack (no recursion, however deep the bytes nest)."""
    tk = _Taker(data)
    kinds = ("list", "tuple", "typed", "dict", "Dictionary", "TypedDictionary", "object")
    stack: list[tuple[str, list[Any], str]] = [("list", [], "")]
    for _ in range(_MAX_OPS):
        if tk.done():
            break
        op = tk.byte()
        if op < 64:
            stack.append((kinds[op % len(kinds)], [], _NAMES[(op >> 3) % len(_NAMES)]))
        elif op < 96 and len(stack) > 1:
            kind, items, name = stack.pop()
            stack[-1][1].append(_close(kind, items, name))
        elif op < 100 and stack[-1][1]:
            stack[-1][1].append(stack[-1][1][-1])  # the same object twice (and, closed, a cycle-free DAG)
        else:
            stack[-1][1].append(_leaf(tk, op))
    while len(stack) > 1:
        kind, items, name = stack.pop()
        stack[-1][1].append(_close(kind, items, name))
    return stack[0][1]


def encode_alike(value: Any) -> None:
    """The compiled writer and the reference on one value: the same bytes, or the same error."""
    for (name, objects), (_, _, c_enc, py_enc) in PAIRS.items():
        written, expected = _outcome(c_enc.encode, value), _outcome(py_enc.encode, value)
        if written != expected or _outcome(c_enc.dumps, value) != expected:  # dumps: gf.dumps' compiled entry
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


def write_seeds() -> None:
    """``--write-seeds``: fuzz/corpus-fastlz, the FastLZ part's seeds.

    Each block of the engines' FastLZ files (fixtures/containers) as a stream and as its
    plaintext, and streams of the shapes the rules are about: a level 2 far match (a 9 KB
    block repeated), a level 2 length chain (a long run), a level 1 split match, and the
    sub-4-byte literal.
    """
    import hashlib
    import json
    import struct

    root = Path(__file__).resolve().parent.parent
    out = root / "fuzz" / "corpus-fastlz"
    out.mkdir(exist_ok=True)
    seeds: list[bytes] = []
    for name in ("godot3_containers.jsonl", "godot4_containers.jsonl"):
        for line in (root / "fixtures" / "containers" / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("container") not in ("compressed", "raw_compressed") or record["params"]["mode"] != 0:
                continue
            blob = bytes.fromhex(record["file_hex"])
            if record["container"] == "raw_compressed":
                seeds.append(blob)
                continue
            _, _, block, total = struct.unpack_from("<4sIII", blob)
            sizes = struct.unpack_from(f"<{total // block + 1}I", blob, 16)
            pos = 16 + 4 * len(sizes)
            for size in sizes:
                seeds.append(blob[pos : pos + size])
                pos += size
            seeds.append(read_gcpf(blob)[0])
    rng = random.Random(22)
    block = rng.randbytes(9000)
    seeds += [fastlz.reference_compress(block + block[:3000], 2), fastlz.reference_compress(bytes(3000), 2),
              fastlz.reference_compress(b"ab" * 400, 1), fastlz.reference_compress(b"abc"),
              block[:1000] + block[:1000]]
    for seed in seeds:
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    print(f"fuzz_compiled: {len(set(seeds))} FastLZ seeds in {out}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--write-seeds"]:
        write_seeds()
        return
    if gf.backend != "c":
        raise SystemExit("fuzz_compiled.py: the compiled core is not loaded (see fuzz/run_compiled.sh)")
    if MUTATE:
        mutate(float(sys.argv[2]), sys.argv[3:])
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
