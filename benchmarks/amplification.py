"""Output amplification: how many bytes each view prints per input byte, on the worst shapes found.

``godot-formats dump --json``, ``dump --tree`` and ``explain`` print a value for people to
read; this script measures, for each of them, the output size and the peak Python memory
(``tracemalloc``: the decoded value, the view's own structures and the text) divided by the
input size, on inputs built to make the output as large as possible: deep nesting, wide
containers at the depth where indentation stops growing, many tiny values, many empty
containers, long and escaped strings, floats whose shortest text is long.

    python3 benchmarks/amplification.py                  # every shape, 64 KiB each
    python3 benchmarks/amplification.py --size 1048576   # 1 MiB each
    python3 benchmarks/amplification.py --only deep_chains,wide_at_cap_nils --no-memory
    python3 benchmarks/amplification.py --json           # the numbers as JSON

It times nothing and asserts nothing (tests/views/test_json.py, tests/views/test_explain.py and
tests/cli/test_dump_load_explain.py hold the bounds as tests).  The sizes are deterministic; the memory
figure depends a little on the Python version.  Run it with ``PYTHONPATH`` pointing at
another checkout to compare versions (the views it calls exist in every version).
"""

from __future__ import annotations

import argparse
import gc
import json
import struct
import sys
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import godot_formats as gf  # noqa: E402
from godot_formats.views.explain import explain_fields, format_fields  # noqa: E402
from godot_formats.views.jsonform import dumps_json  # noqa: E402
from godot_formats.views.tree import tree_lines  # noqa: E402

try:  # streams its lines (newer versions); the CLI writes them as they come
    from godot_formats.views.explain import format_lines
except ImportError:  # pragma: no cover - an older checkout
    def format_lines(fields: Iterable[Any], data: bytes, *, header: bool = True) -> Iterator[str]:
        yield format_fields(list(fields), data, header=header)

DIALECT = "godot4"
CAP = 32  # the depth where indentation stops growing (MAX_INDENT_DEPTH); JSON: 64 columns

# -- Godot 4 wire pieces ---------------------------------------------------------------------------------


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


NIL = u32(0)
ARRAY, DICT, STRING = u32(28), u32(27), u32(4)
EMPTY_ARRAY = ARRAY + u32(0)
EMPTY_DICT = DICT + u32(0)
TYPED_EMPTY_DICT = u32(27 | 1 << 16 | 1 << 18) + u32(2) + u32(2) + u32(0)  # Dictionary[int, int]
F32_LONG = struct.pack("<f", -1.1754942e-38)  # shortest repr of the double is 24 characters


def string(text: bytes) -> bytes:
    return STRING + u32(len(text)) + text + b"\0" * (-len(text) & 3)


def chain(depth: int) -> bytes:
    """``depth`` nested one-item Arrays: what follows is their innermost item."""
    return (ARRAY + u32(1)) * depth


def array_of(items: list[bytes]) -> bytes:
    return ARRAY + u32(len(items)) + b"".join(items)


def fill(size: int, prefix_len: int, unit: int) -> int:
    """How many ``unit``-byte items bring a value with ``prefix_len`` bytes of framing to ``size``."""
    return max(1, (size - prefix_len) // unit)


# -- shapes -------------------------------------------------------------------------------------------------


def deep_chains(size: int) -> bytes:
    """An Array of chains of 1000 nested Arrays: every line as deep as the decoder allows."""
    one = chain(1000) + NIL
    return array_of([one] * fill(size, 8, len(one)))


def wide_at(depth: int, item: bytes, size: int) -> bytes:
    """An Array of tiny ``item``s, ``depth`` levels down (one line each, at that indentation)."""
    n = fill(size, 8 * depth + 8, len(item))
    return chain(depth) + array_of([item] * n)


def int_(i: int) -> bytes:
    return u32(2) + u32(i)


def wide_dict_at(depth: int, size: int) -> bytes:
    """A Dictionary of ``i: null`` entries (distinct int keys), ``depth`` levels down."""
    n = fill(size, 8 * depth + 8, 12)
    return chain(depth) + DICT + u32(n) + b"".join(int_(i) + NIL for i in range(n))


def packed_f32_at(depth: int, size: int) -> bytes:
    n = fill(size, 8 * depth + 8, 4)
    return chain(depth) + u32(32) + u32(n) + F32_LONG * n  # PackedFloat32Array


def packed_strings_at(depth: int, size: int) -> bytes:
    """A PackedStringArray of one-character strings (three explain lines per 8 bytes)."""
    n = fill(size, 8 * depth + 8, 8)
    return chain(depth) + u32(34) + u32(n) + (u32(1) + b"a\0\0\0") * n


def node_path_at(depth: int, size: int) -> bytes:
    """A NodePath of empty names (one explain line per 4 bytes)."""
    n = fill(size, 8 * depth + 16, 4)
    return chain(depth) + u32(22) + u32(0x80000000 | n) + u32(0) + u32(0) + u32(0) * n


def control_string(size: int) -> bytes:
    """One String of U+0001 characters (JSON escapes each as \\u0001)."""
    return string(b"\x01" * (size - 8))


def long_keys(size: int) -> bytes:
    """A Dictionary of distinct 1000-character String keys of control characters."""
    n = fill(size, 8, 1012)
    return DICT + u32(n) + b"".join(string(b"%08d" % i + b"\x01" * 992) + NIL for i in range(n))


def container_keys_at(depth: int, size: int) -> bytes:
    """A Dictionary keyed by distinct one-int Arrays (a "key i:" and a "value i:" line per entry)."""
    n = fill(size, 8 * depth + 8, 20)
    return chain(depth) + DICT + u32(n) + b"".join(ARRAY + u32(1) + int_(i) + NIL for i in range(n))


SHAPES: dict[str, Callable[[int], bytes]] = {
    "deep_chains": deep_chains,
    "tiny_nils": lambda size: wide_at(0, NIL, size),
    "wide_at_cap_nils": lambda size: wide_at(CAP - 1, NIL, size),
    "wide_past_cap_nils": lambda size: wide_at(1000, NIL, size),
    "wide_at_cap_empty_arrays": lambda size: wide_at(CAP - 1, EMPTY_ARRAY, size),
    "wide_at_cap_empty_dicts": lambda size: wide_at(CAP - 1, EMPTY_DICT, size),
    "wide_at_cap_typed_empty_dicts": lambda size: wide_at(CAP - 1, TYPED_EMPTY_DICT, size),
    "json_cap_dict_entries": lambda size: wide_dict_at(CAP // 2 - 1, size),
    "wide_at_cap_dict_entries": lambda size: wide_dict_at(CAP - 1, size),
    "wide_at_cap_container_keys": lambda size: container_keys_at(CAP - 1, size),
    "json_cap_floats": lambda size: packed_f32_at(CAP // 2 - 1, size),
    "wide_at_cap_floats": lambda size: packed_f32_at(CAP - 1, size),
    "wide_at_cap_packed_strings": lambda size: packed_strings_at(CAP - 1, size),
    "wide_past_cap_packed_strings": lambda size: packed_strings_at(1000, size),
    "wide_at_cap_node_path": lambda size: node_path_at(CAP - 1, size),
    "control_string": control_string,
    "long_keys": long_keys,
}


# -- views (what the CLI prints) ----------------------------------------------------------------------------


def _size(pieces: Iterable[str]) -> int:
    """UTF-8 bytes of the pieces, one line each, as the CLI writes them (nothing kept)."""
    return sum(len(p.encode("utf-8", "surrogatepass")) + 1 for p in pieces)


VIEWS: dict[str, Callable[[bytes], int]] = {
    "json": lambda data: _size([dumps_json(gf.loads(data, DIALECT), 2)]),
    "json --compact": lambda data: _size([dumps_json(gf.loads(data, DIALECT), None)]),
    "tree": lambda data: _size(tree_lines(gf.loads(data, DIALECT), DIALECT, max_elements=16)),
    "tree --max-elements 0": lambda data: _size(tree_lines(gf.loads(data, DIALECT), DIALECT, max_elements=None)),
    "explain": lambda data: _size(format_lines(explain_fields(data, DIALECT, max_elements=16), data)),
    "explain --max-elements 0": lambda data: _size(format_lines(explain_fields(data, DIALECT, max_elements=None),
                                                                data)),
}


def measure(data: bytes, view: Callable[[bytes], int], memory: bool) -> tuple[int, int | None]:
    """(output bytes, peak traced bytes) of one view of ``data``."""
    gc.collect()
    if not memory:
        return view(data), None
    tracemalloc.start()
    try:
        out = view(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=64 * 1024, help="input bytes per shape (default: %(default)s)")
    parser.add_argument("--only", help="comma-separated shape names")
    parser.add_argument("--views", help="comma-separated view names")
    parser.add_argument("--no-memory", action="store_true", help="skip tracemalloc (faster)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    shapes = args.only.split(",") if args.only else list(SHAPES)
    views = args.views.split(",") if args.views else list(VIEWS)
    results: list[dict[str, Any]] = []
    worst: dict[str, tuple[float, str]] = {}
    if not args.json:
        print(f"{'shape':<32} {'input':>8}  " + "  ".join(f"{v:>24}" for v in views))
        print(f"{'':<32} {'bytes':>8}  " + "  ".join(f"{'out/in  peak mem/in':>24}" for _ in views))
    for name in shapes:
        data = SHAPES[name](args.size)
        row = [f"{name:<32} {len(data):>8}"]
        for view_name in views:
            try:
                out, peak = measure(data, VIEWS[view_name], not args.no_memory)
            except (RecursionError, gf.GodotFormatsError) as e:  # what an older version may do
                results.append({"shape": name, "view": view_name, "input": len(data), "error": type(e).__name__})
                row.append(f"{type(e).__name__:>24}")
                continue
            ratio = out / len(data)
            mem = None if peak is None else peak / len(data)
            results.append({"shape": name, "view": view_name, "input": len(data), "output": out,
                            "output_per_input": round(ratio, 2), "peak_memory_per_input": mem and round(mem, 1)})
            if ratio > worst.get(view_name, (0.0, ""))[0]:
                worst[view_name] = (ratio, name)
            row.append(f"{ratio:>9.2f}  {'-' if mem is None else f'{mem:.1f}':>12}")
        if not args.json:
            print("  ".join(row), flush=True)
    if args.json:
        print(json.dumps({"size": args.size, "results": results,
                          "worst": {v: {"output_per_input": round(r, 2), "shape": s} for v, (r, s) in worst.items()}},
                         indent=1))
    else:
        print("\nworst output bytes per input byte:")
        for v, (r, s) in worst.items():
            print(f"  {v:<26} {r:7.2f}  ({s})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
