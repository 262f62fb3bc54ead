"""Growth under hostile input: time and memory per input byte, for every operation and shape.

Each shape is built at two sizes (the second 8x the first); for each operation the script
prints microseconds per input byte and peak Python memory (tracemalloc) per input byte at
both sizes, and the growth ratio of time (8.0 is linear; quadratic would be 64).  Nothing
here is asserted: the test-suite counts work instead (tests/hostile/test_untrusted_bytes.py, test_keys.py).

    python3 benchmarks/hostile.py            # every shape and operation
    python3 benchmarks/hostile.py --quick    # smaller sizes

The shapes are the ones of issue 13 ("Hostile input, second round"): nested Dictionary keys,
keys chosen to collide under Python's fixed number hashes, deep nesting, many tiny values.
"""

from __future__ import annotations

import argparse
import gc
import json
import struct
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from strategies import floats_sharing_a_hash  # noqa: E402

import godot_formats as gf  # noqa: E402
from godot_formats import jsonform  # noqa: E402
from godot_formats.views import explain as explain_mod  # noqa: E402

u = struct.Struct("<I").pack
FLOAT64 = 3 | 1 << 16


def nested_keys(n: int) -> bytes:
    """Finding 1: d Dictionaries, each the only key of the next, around an Array of n // 2 ints."""
    d = min(1000, max(10, n // 20))
    width = n // 2
    return (u(27) + u(1)) * d + u(28) + u(width) + (u(2) + u(7)) * width + u(0) * d


def colliding_float_arrays(n: int) -> bytes:
    """Finding 2: keys that are 3-float Arrays of floats hashing to 1."""
    xs = floats_sharing_a_hash(1)
    keys = [(a, b, c) for a in xs for b in xs for c in xs][: n // 12]
    body = b"".join(u(28) + u(3) + b"".join(u(FLOAT64) + struct.pack("<d", x) for x in k) + u(0) for k in keys)
    return u(27) + u(len(keys)) + body


def colliding_floats(n: int) -> bytes:
    """Plain float keys chosen in groups that share a hash."""
    keys: list[float] = []
    h = 1
    while len(keys) < n // 4:
        keys += floats_sharing_a_hash(h)
        h += 1
    keys = keys[: n // 4]
    return u(27) + u(len(keys)) + b"".join(u(FLOAT64) + struct.pack("<d", k) + u(0) for k in keys)


def random_floats(n: int) -> bytes:
    import random
    rng = random.Random(1)
    keys = [rng.random() for _ in range(n // 4)]
    return u(27) + u(len(keys)) + b"".join(u(FLOAT64) + struct.pack("<d", k) + u(0) for k in keys)


def colliding_vectors(n: int) -> bytes:
    """Vector2 keys of a double build, their components hashing to 1."""
    xs = floats_sharing_a_hash(1) + floats_sharing_a_hash(2)
    keys = [(a, b) for a in xs for b in xs][: n // 24]
    return u(27) + u(len(keys)) + b"".join(
        u(5 | 1 << 16) + struct.pack("<dd", a, b) + u(0) for a, b in keys)


def deep_arrays(n: int) -> bytes:
    """1024 nested Arrays (the limit), repeated side by side inside one Array."""
    one = (u(28) + u(1)) * 1000 + u(0)
    count = max(1, n // len(one))
    return u(28) + u(count) + one * count


def tiny_values(n: int) -> bytes:
    return u(28) + u(n // 4) + u(0) * (n // 4)


def empty_dictionaries(n: int) -> bytes:
    return u(28) + u(n // 8) + (u(27) + u(0)) * (n // 8)


def tiny_records(n: int) -> bytes:
    """A store_var file of Nils: a record every 8 bytes (issue 26: 3-6 us and 81 B per byte to open)."""
    return (u(4) + u(0)) * (n // 8)


def empty_zstd_frames(n: int) -> bytes:
    """An open_compressed Zstd file whose one block is empty Zstd frames back to back (quadratic before)."""
    from godot_formats.layers.compression import ZSTD
    frame = bytes.fromhex("28b52ffd2000010000")  # an empty frame with its content size
    block = frame * max(1, (n - 24) // len(frame))
    return b"GCPF" + u(ZSTD) + u(4096) + u(0) + u(len(block)) + block + b"GCPF"


def fastlz_bomb(n: int) -> bytes:
    """An open_compressed FastLZ file that declares 4 KiB blocks of zeros, as many as its bytes allow."""
    from godot_formats.layers.compression import FASTLZ, compress
    block = compress(bytes(4096), FASTLZ)
    count = max(1, (n - 20) // (len(block) + 4))
    sizes = b"".join(u(len(block)) for _ in range(count + 1))
    last = compress(b"", FASTLZ)
    return b"GCPF" + u(FASTLZ) + u(4096) + u(4096 * count) + sizes[:-4] + u(len(last)) + block * count + last + \
        b"GCPF"


SHAPES: dict[str, Callable[[int], bytes]] = {
    "nested Dictionary keys": nested_keys,
    "Array keys of colliding floats": colliding_float_arrays,
    "float keys chosen to collide": colliding_floats,
    "float keys, random": random_floats,
    "Vector2 keys of colliding floats (godot4-double)": colliding_vectors,
    "1000-deep Arrays side by side": deep_arrays,
    "Nils": tiny_values,
    "empty Dictionaries": empty_dictionaries,
    "store_var records of Nil": tiny_records,
    "Zstd block of empty frames": empty_zstd_frames,
    "FastLZ bomb (4 KiB of zeros per block)": fastlz_bomb,
}


def dialect_of(shape: str) -> str:
    return "godot4-double" if "double" in shape else "godot4"


def operations(dialect: str) -> dict[str, Callable[[bytes], Any]]:
    def text(data: bytes) -> Any:
        return gf.from_text(gf.to_text(gf.loads(data, dialect), dialect), dialect)

    def as_json(data: bytes) -> Any:
        return jsonform.from_json(jsonform.to_json(gf.loads(data, dialect)))

    def explain(data: bytes) -> Any:
        return explain_mod.explain(data, dialect, max_elements=None)

    return {
        "decode": lambda data: gf.loads(data, dialect),
        "encode": lambda data, v=None: gf.dumps(gf.loads(data, dialect), dialect),
        "text": text,
        "json": as_json,
        "explain": explain,
        "convert to godot3": lambda data: gf.convert(data, dialect, "godot3", policy="lossy"),
        "detect": lambda data: gf.detect(data),
        "open": lambda data: gf.open(data),
    }


def measure(fn: Callable[[bytes], Any], data: bytes) -> tuple[float, int]:
    """Seconds (best of two, without tracing) and peak traced bytes (one more run, traced)."""
    def run() -> None:
        try:
            fn(data)
        except gf.GodotFormatsError:
            pass

    best = float("inf")
    for _ in range(2):
        gc.collect()
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    gc.collect()
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes of 16 KB and 128 KB instead of 32 KB and 256 KB")
    ap.add_argument("--json", action="store_true", help="one JSON object per measurement")
    ap.add_argument("--only", action="append", metavar="OPERATION",
                    help="measure only this operation (repeat for more): decode, encode, text, json, explain, "
                         "'convert to godot3', detect, open")
    args = ap.parse_args(argv)
    small = 16_384 if args.quick else 32_768
    print(f"Python {sys.version.split()[0]}; sizes {small} and {8 * small} bytes; growth 8.0 is linear")
    print(f"{'shape':50} {'operation':18} {'us/B small':>10} {'us/B big':>9} {'growth':>7} {'mem B/B':>8}")
    for shape, build in SHAPES.items():
        dialect = dialect_of(shape)
        blobs = build(small), build(8 * small)
        for op, fn in operations(dialect).items():
            if args.only and op not in args.only:
                continue
            (t1, _), (t2, m2) = measure(fn, blobs[0]), measure(fn, blobs[1])
            row = {"shape": shape, "operation": op, "bytes": [len(blobs[0]), len(blobs[1])],
                   "us_per_byte": [1e6 * t1 / len(blobs[0]), 1e6 * t2 / len(blobs[1])],
                   "growth": t2 / t1 if t1 else float("nan"), "peak_bytes_per_byte": m2 / len(blobs[1])}
            if args.json:
                print(json.dumps(row))
            else:
                print(f"{shape[:50]:50} {op:18} {row['us_per_byte'][0]:10.3f} {row['us_per_byte'][1]:9.3f} "
                      f"{row['growth']:7.1f} {row['peak_bytes_per_byte']:8.1f}", flush=True)


if __name__ == "__main__":
    main()
