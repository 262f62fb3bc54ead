"""The compiled reader (godot_formats/core/_cdecode.c) on its own, against the reference decoder.

The compiled reader must, for any bytes, either raise ``_cdecode.Fallback`` (the reference
then decides) or return exactly what the reference returns: the same value, type for
type, and the same end offset.  It must never crash, never raise anything else and never
leak.  Here it is driven directly, with tables built from a reference Decoder the way
``codec._CReader`` builds them, so that what is tested is the C code and not the glue.
"""

from __future__ import annotations

import gc
import math
import random
import resource
import struct
import sys
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

import godot_formats as gf
from godot_formats.core import codec
from godot_formats.core import types as t
from godot_formats.core.codec import Decoder
from godot_formats.core.dialects import get_dialect
from godot_formats.core.errors import DecodeError
from godot_formats.core.keys import same_value

_cdecode = pytest.importorskip("godot_formats.core._cdecode", reason="the compiled reader is not built")
Fallback = _cdecode.Fallback

ROOT = Path(__file__).resolve().parents[2]
DIALECTS = [*gf.dialect_names(), "godot2"]

# The table kinds, by name: the compiled core's own list (codec._CReader builds its tables from it).
KIND = {name: i for i, name in enumerate(_cdecode.KINDS)}
PY, MATH, PACKED = KIND["PY"], KIND["MATH"], KIND["PACKED"]


class Pair:
    """A compiled Reader and the reference Decoder it was built from (same dialect and limits)."""

    def __init__(self, dialect: str, allow_objects: bool = False, **limits: Any) -> None:
        dec = self.dec = Decoder(get_dialect(dialect), allow_objects=allow_objects, backend="python", **limits)
        built = codec._CReader(dec, _cdecode)  # the production tables, as the codec builds them
        self.table = built.table
        self.reader = built.reader
        # the typed heads are the production ones too (the reference's rules, read for the C core)
        self._array_head, self._dict_head = built.typed_array_head, built.typed_dict_head

    def c(self, data: Any, offset: int = 0, end: int | None = None) -> tuple[Any, int]:
        buf = data if isinstance(data, bytes) else memoryview(data).cast("B")
        end = len(buf) if end is None else end
        return self.reader.decode(buf, offset, end,  # type: ignore[no-any-return]
                                  lambda: partial(codec._dictionary, rules=self.dec._key_rules, memo={}))

    def ref(self, data: Any, offset: int = 0, end: int | None = None) -> tuple[Any, int] | None:
        try:
            return self.dec.decode(data, offset, end)
        except DecodeError:
            return None

    def check(self, data: Any, offset: int = 0, end: int | None = None) -> bool:
        """C falls back or agrees with the reference; True when C decoded it itself."""
        want = self.ref(data, offset, end)
        try:
            got = self.c(data, offset, end)
        except Fallback:
            return False
        assert want is not None, f"C decoded what the reference refuses: {bytes(data).hex()[:200]}"
        assert got[1] == want[1], (got[1], want[1], bytes(data).hex()[:200])
        assert_identical(got[0], want[0])
        return True


_PAIRS: dict[tuple[Any, ...], Pair] = {}


def pair(dialect: str, allow_objects: bool = False, **limits: Any) -> Pair:
    key = (dialect, allow_objects, tuple(sorted(limits.items())))
    if key not in _PAIRS:
        _PAIRS[key] = Pair(dialect, allow_objects, **limits)
    return _PAIRS[key]


def assert_identical(got: Any, want: Any) -> None:
    """The same value, type for type at every level (NaN equal to NaN, -0.0 apart from 0.0)."""
    todo = [(got, want, "")]
    while todo:
        a, b, path = todo.pop()
        assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
        if isinstance(a, float):
            assert (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b)), (path, a, b)
        elif isinstance(a, (list, tuple)):
            assert len(a) == len(b), path
            if isinstance(a, t.TypedArray):
                assert a.element_type == b.element_type, path
            todo.extend((x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
        elif isinstance(a, (dict, t.Dictionary)):
            assert len(a) == len(b), path
            if isinstance(a, t.Dictionary):
                assert a.key_rules == b.key_rules, path
            if isinstance(a, t.TypedDictionary):
                assert (a.key_type, a.value_type) == (b.key_type, b.value_type), path
            for i, ((ka, va), (kb, vb)) in enumerate(zip(a.items(), b.items())):
                todo.append((ka, kb, f"{path}<key {i}>"))
                todo.append((va, vb, f"{path}[{i}]"))
        else:
            assert same_value(a, b), (path, a, b)


# --- the engines' own bytes -------------------------------------------------------------------

def _fixture_blobs() -> list[tuple[str, str, bytes, bool]]:
    """(dialect, case name, bytes, allow_objects) for every hex field of every fixture."""
    import json

    blobs = []
    for engine in ("godot3", "godot4"):
        for path in sorted((ROOT / "fixtures" / engine).glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                case = json.loads(line)
                for key, text in case.items():
                    if "hex" not in key or not isinstance(text, str):
                        continue
                    try:
                        blob = bytes.fromhex(text)
                    except ValueError:
                        continue
                    objects = bool(case.get("allow_objects")) or "full_objects" in key
                    blobs.append((engine, f"{path.stem}:{case.get('name')}:{key}", blob, objects))
    return blobs


FIXTURES = _fixture_blobs()


def _left_to_reference(value: Any) -> bool:
    """Whether a value holds what the compiled reader leaves to the reference although it is
    valid: a full Object (its rules are the reference's), or a String with a lone surrogate
    (Godot 3 accepts them; strict UTF-8 does not)."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, t.Object):
            return True
        if isinstance(v, str) and any("\ud800" <= ch <= "\udfff" for ch in v):
            return True
        if isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, (dict, t.Dictionary)):
            todo.extend(v.keys())
            todo.extend(v.values())
    return False


def test_fixtures_agree_and_common_types_do_not_fall_back() -> None:
    assert len(FIXTURES) > 1500
    decoded = fell_back = refused = 0
    unexpected = []
    for dialect, name, blob, objects in FIXTURES:
        p = pair(dialect, objects)
        if p.check(blob):
            decoded += 1
        elif p.ref(blob) is None:
            refused += 1
        else:
            fell_back += 1
            # Fall-backs on values the reference reads must be the few kinds left to it.
            value = p.ref(blob)[0]  # type: ignore[index]
            header = int.from_bytes(blob[:4], "little")
            full_null_object = value is None and header == p.dec.dialect.type_id("Object")
            if not (_left_to_reference(value) or full_null_object):
                unexpected.append(name)
    assert not unexpected, unexpected
    assert decoded > 10 * fell_back, (decoded, fell_back, refused)


@pytest.mark.slow
@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d not in ("godot3", "godot4")])
def test_fixtures_in_every_dialect(dialect: str) -> None:
    """Every dialect's table, fed the engines' bytes (mostly meaningless to it): agree or fall back."""
    for _, _, blob, objects in FIXTURES:
        pair(dialect, objects).check(blob)


def test_common_engine_values_are_read_by_c() -> None:
    """The types of save data and messages never fall back (the point of the compiled reader)."""
    for dialect in ("godot3", "godot4"):
        p = pair(dialect)
        value = {
            "nil": None, "t": True, "f": False, "i": 7, "big": 2**40, "neg": -2**31, "x": 0.5, "y": 0.1,
            "s": "héllo wörld", "e": "", "v2": t.Vector2(1, 2), "v3": t.Vector3(1, 2, 3), "c": t.Color(1, 0, 0, 1),
            "r": t.Rect2(t.Vector2(1, 2), t.Vector2(3, 4)), "q": t.Quaternion(0, 0, 0, 1),
            "b": t.Basis(t.Vector3(1, 0, 0), t.Vector3(0, 1, 0), t.Vector3(0, 0, 1)),
            "list": [1, "a", [2.5, None], {"k": [True]}], "empty": [], "ed": {}, "bytes": b"abcde",
            "ints": t.PackedInt32Array([1, 2, 3]), "floats": t.PackedFloat32Array([0.5, 1.5]),
            "v3s": t.PackedVector3Array([t.Vector3(1, 2, 3)]), "colors": t.PackedColorArray([t.Color(1, 1, 1, 1)]),
            "intkeys": {1: "a", 2: "b", -5: "c"}, "mixed": {"1": 1, 1: 2},
            "obj": t.EncodedObjectAsID(1234), "null_obj_id": None,
        }
        if dialect == "godot4":
            value.update({"sn": t.StringName("name"), "v2i": t.Vector2i(1, -2), "v4": t.Vector4(1, 2, 3, 4),
                          "p": t.Projection(*(t.Vector4(1, 2, 3, 4),) * 4), "i64s": t.PackedInt64Array([2**40]),
                          "f64s": t.PackedFloat64Array([0.1]), "ta": t.TypedArray("int", [1, 2]),
                          "ta_empty": t.TypedArray("String"),
                          "td": t.TypedDictionary("String", "int", {"a": 1}),
                          "td_empty": t.TypedDictionary("String", "int")})
        blob = gf.dumps(value, dialect)
        assert p.check(blob), dialect
        assert p.check(gf.dumps([value] * 3, dialect))


def test_dictionaries_python_would_merge_go_to_the_reference_function() -> None:
    p = pair("godot4")
    for value in ({1: "int", "1": "str"}, t.Dictionary([(1, "a"), (1.0, "b"), (True, "c")]),
                  t.Dictionary([([1], "list key")]), {gf.StringName("a"): 1}, {None: 1, 2.5: 2},
                  t.Dictionary([(float("nan"), 1)])):
        assert p.check(gf.dumps(value, "godot4"))
    # A key repeated in the bytes: the engine's merge (last value wins), made by the reference.
    dup = bytes.fromhex("1b00000002000000" "0400000001000000610000000200000001000000"
                        "0400000001000000610000000200000002000000")
    assert p.check(dup)
    assert list(p.c(dup)[0].items()) == [("a", 2)]


def test_offsets_ends_and_buffers() -> None:
    p = pair("godot4")
    blob = gf.dumps({"c": b"xyz", "a": [1, 2.5, "x"], "b": t.Vector3(1, 2, 3)}, "godot4")
    framed = b"\xee" * 12 + blob + b"\xdd" * 9
    want = p.dec.decode(framed, 12, 12 + len(blob))
    for buf in (framed, memoryview(framed), bytearray(framed), memoryview(bytearray(framed))):
        got = p.c(buf, 12, 12 + len(blob))
        assert got[1] == want[1] == 12 + len(blob)
        assert_identical(got[0], want[0])
    # A value cut short by `end`, offsets outside the buffer, non-buffers: the reference decides.
    for offset, end in ((12, 12 + len(blob) - 1), (-1, len(framed)), (0, len(framed) + 1), (len(framed), len(framed)),
                        (12 + len(blob), 12)):
        with pytest.raises(Fallback):
            p.reader.decode(framed, offset, end, None)
    for bad in ("text", 12, None, memoryview(framed)[::2]):
        with pytest.raises(Fallback):
            p.reader.decode(bad, 0, 4, None)
    with pytest.raises(Fallback):
        p.reader.decode(framed, 2**80, 0, None)


# --- limits -----------------------------------------------------------------------------------

def _nested_arrays(depth: int, header: str = "1c000000") -> bytes:
    return bytes.fromhex(header + "01000000") * depth + bytes.fromhex("02000000" "07000000")


def test_depth_limit_is_the_references() -> None:
    for limit in (0, 1, 2, 5, 64):
        p = pair("godot4", max_depth=limit)
        for depth in range(0, 8):
            blob = _nested_arrays(depth)
            decoded = p.check(blob)
            assert decoded == (depth <= limit), (limit, depth)
        # Empty containers are not open containers: [[]] is one level.
        assert p.check(gf.dumps([[]] if limit else [], "godot4"))


def test_element_limit_is_the_references() -> None:
    blob = gf.dumps([[1, 2], {"a": 3, "b": [4]}, t.TypedArray("int", [5, 6])], "godot4")
    total = 3 + 2 + 2 + 1 + 2
    for limit in range(0, total + 3):
        p = pair("godot4", max_elements=limit)
        assert p.check(blob) == (limit >= total), limit


def test_200000_levels_fall_back_without_recursion() -> None:
    for dialect, header in (("godot4", "1c000000"), ("godot3", "13000000")):
        hostile = _nested_arrays(200_000, header)
        with pytest.raises(Fallback):
            pair(dialect).c(hostile)
    # {"a": {"a": ...}} 200,000 deep
    deep = bytes.fromhex("1b00000001000000" "0400000001000000" "61000000") * 200_000 + bytes.fromhex("00000000")
    with pytest.raises(Fallback):
        pair("godot4").c(deep)


def test_200000_levels_decode_when_allowed() -> None:
    """With the depth limit out of the way the walk still uses no C stack per level."""
    p = pair("godot4", max_depth=10**9)
    value, end = p.c(_nested_arrays(200_000))
    depth = 0
    while isinstance(value, list):
        assert len(value) == 1
        value = value[0]
        depth += 1
    assert (depth, value, end) == (200_000, 7, 200_000 * 8 + 8)
    deep = bytes.fromhex("1b00000001000000" "0400000001000000" "61000000") * 200_000 + bytes.fromhex("00000000")
    value, end = p.c(deep)
    assert end == len(deep)


@pytest.mark.parametrize("hex_blob", [
    "1c000000ffffff7f",                      # Array of 2**31 - 1 elements, none there
    "1c000000ffffffff",                      # the same with the old shared bit
    "1b000000ffffff7f" + "00000000" * 64,    # Dictionary of 2**31 - 1 entries
    "1b00000000000040" + "00000000" * 64,    # 2**30 entries: count * 8 overflows 32 bits
    "1c00000000000040" + "00000000" * 64,    # 2**30 elements: count * 4 overflows 32 bits
    "04000000ffffff7f",                      # String of 2**31 - 1 bytes
    "04000000ffffffff",                      # String of length -1
    "1d000000ffffff7f",                      # PackedByteArray of 2**31 - 1 bytes
    "1d000000ffffffff" + "00" * 64,          # PackedByteArray of length -1
    "1e000000ffffff7f" + "00" * 64,          # PackedInt32Array
    "1e00000000000040" + "00" * 64,          # PackedInt32Array: count * 4 overflows 32 bits
    "2600000000000010" + "00" * 64,          # PackedVector4Array: count * 16 overflows 32 bits
    "2600000001000000" + "00" * 15,          # PackedVector4Array one byte short
    "1c0001000200000002000000ffffff7f",      # typed Array[int] of 2**31 - 1 elements
    "1b00050002000000040000000200000001000000",  # typed Dictionary[int, String] of 1 entry, nothing there
])
def test_huge_counts_fall_back_without_allocating(hex_blob: str) -> None:
    blob = bytes.fromhex(hex_blob)
    p = pair("godot4")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(Fallback):
        p.c(blob)
    assert p.ref(blob) is None
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


def test_truncations_of_every_kind_fall_back() -> None:
    value = [None, True, 7, 2**40, 0.5, 0.1, "abcde", t.StringName("sn"), t.Vector3(1, 2, 3), t.Vector2i(1, 2),
             {"k": [1]}, t.EncodedObjectAsID(99), b"abcdef", t.PackedFloat32Array([1.5, 2.5]),
             t.TypedArray("int", [1]), t.TypedDictionary("String", "int", {"a": 1}), t.NodePath("a/b")]
    blob = gf.dumps(value, "godot4")
    p = pair("godot4")
    assert p.check(blob)
    for n in range(len(blob)):
        p.check(blob[:n])
        p.check(blob, 0, n)


# --- the Python callables --------------------------------------------------------------------

def _reader_with(dialect: str, **changes: Any) -> Any:
    p = pair(dialect)
    readers = list(p.dec._readers)
    table = list(p.table)
    heads = [p._array_head, p._dict_head]
    for key, value in changes.items():
        if key == "array_head":
            heads[0] = value
        elif key == "dict_head":
            heads[1] = value
        else:
            type_id = p.dec.dialect.type_id(key)
            readers[type_id] = value
            table[type_id] = (PY, None)
    return _cdecode.Reader(p.dec.dialect.type_mask, tuple(table), tuple(readers), heads[0], heads[1],
                           p.dec.max_depth, -1)


def _dictionary(pairs: list[Any], types: Any) -> Any:
    return codec._dictionary(pairs, types, get_dialect("godot4").key_rules, {})


def _dictionary_for() -> Callable[[list[Any], Any], Any]:
    return _dictionary


@pytest.mark.parametrize("bad", [
    lambda buf, pos, header, end: 1 / 0,                     # raises
    lambda buf, pos, header, end: (7, pos),                  # does not move
    lambda buf, pos, header, end: (7, end + 4),              # runs past the end
    lambda buf, pos, header, end: (7, -1),
    lambda buf, pos, header, end: (7, 2**70),
    lambda buf, pos, header, end: (7, "8"),
    lambda buf, pos, header, end: [7, pos + 8],              # not a tuple
    lambda buf, pos, header, end: (7, pos + 8, 0),
    lambda buf, pos, header, end: None,
])
def test_misbehaving_readers_fall_back(bad: Callable[..., Any]) -> None:
    reader = _reader_with("godot4", int=bad)
    blob = gf.dumps([1, "x", {"a": 2}], "godot4")
    with pytest.raises(Fallback):
        reader.decode(blob, 0, len(blob), _dictionary_for)
    # The leaves the C code reads itself still need no reader.
    blob = gf.dumps(["x"], "godot4")
    assert reader.decode(blob, 0, len(blob), _dictionary_for) == (["x"], len(blob))


@pytest.mark.parametrize("bad", [
    lambda buf, pos, header, end: 1 / 0,
    lambda buf, pos, header, end: ([], 1, end + 1),
    lambda buf, pos, header, end: ([], -1, pos + 12),
    lambda buf, pos, header, end: ([], 10**6, pos + 12),       # more elements than bytes
    lambda buf, pos, header, end: ((), 1, pos + 12),           # not a list
    lambda buf, pos, header, end: ([5], 1, pos + 12),          # not empty
    lambda buf, pos, header, end: ([], 1),
])
def test_misbehaving_heads_fall_back(bad: Callable[..., Any]) -> None:
    blob = gf.dumps(t.TypedArray("int", [1]), "godot4")
    reader = _reader_with("godot4", array_head=bad)
    with pytest.raises(Fallback):
        reader.decode(blob, 0, len(blob), _dictionary_for)
    blob = gf.dumps(t.TypedDictionary("String", "int", {"a": 1}), "godot4")
    reader = _reader_with("godot4", dict_head=lambda *a: 1 / 0)
    with pytest.raises(Fallback):
        reader.decode(blob, 0, len(blob), _dictionary_for)


def test_dictionary_callable_errors_fall_back() -> None:
    p = pair("godot4")
    blob = gf.dumps([t.Dictionary([(1, 2), (1.0, 3)])], "godot4")

    def broken(pairs: list[Any], types: Any) -> Any:
        raise ValueError("no")

    def no_dictionary() -> Any:
        raise ValueError("no")

    with pytest.raises(Fallback):
        p.reader.decode(blob, 0, len(blob), lambda: broken)
    for dictionary_for in (None, no_dictionary, lambda: None):
        with pytest.raises(Fallback):
            p.reader.decode(blob, 0, len(blob), dictionary_for)


def test_dictionary_for_is_called_once_and_only_when_needed() -> None:
    p = pair("godot4")
    made: list[int] = []

    def dictionary_for() -> Any:
        made.append(1)
        return partial(codec._dictionary, rules=p.dec._key_rules, memo={})

    plain = gf.dumps([{"a": 1}, {2: [3]}], "godot4")
    assert p.reader.decode(plain, 0, len(plain), dictionary_for)[0] == [{"a": 1}, {2: [3]}]
    assert made == []
    odd = gf.dumps([t.Dictionary([(1.5, 2)]), t.Dictionary([(gf.Vector2(1, 2), 3)]), {}], "godot4")
    value, _ = p.reader.decode(odd, 0, len(odd), dictionary_for)
    assert same_value(value, p.dec.decode(odd)[0])
    assert made == [1]


def test_interrupts_are_not_fallbacks() -> None:
    """KeyboardInterrupt in a callback is not an error of the bytes: it goes on to the caller."""
    def interrupted(buf: Any, pos: int, header: int, end: int) -> Any:
        raise KeyboardInterrupt

    reader = _reader_with("godot4", int=interrupted)
    blob = gf.dumps([1], "godot4")
    with pytest.raises(KeyboardInterrupt):
        reader.decode(blob, 0, len(blob), _dictionary_for)


def test_bad_tables_are_refused_when_made() -> None:
    p = pair("godot4")
    good = (p.dec.dialect.type_mask, p.table, tuple(p.dec._readers), p._array_head, p._dict_head, 10, -1)
    for i, bad in ((0, -1), (0, 2**32), (1, ((99, None),) * len(p.table)), (1, ((MATH, (len, None, 99, 0)),) *
                   len(p.table)), (1, p.table[:-1]), (2, (None,) * (len(p.table) - 1)), (3, None), (5, -1), (6, -2),
                   (1, ((PACKED, (len, "f", 0, 1)),) * len(p.table)), (1, (("x",),) * len(p.table))):
        args = list(good)
        args[i] = bad
        with pytest.raises((TypeError, ValueError)):
            _cdecode.Reader(*args)
    reader = _cdecode.Reader(*good)
    with pytest.raises(TypeError):
        reader.__init__(*good)  # the tables are fixed once made
    with pytest.raises(Fallback):  # never initialised: nothing is read
        _cdecode.Reader.__new__(_cdecode.Reader).decode(b"\0\0\0\0", 0, 4, None)


# --- Hypothesis: values, and hostile variations of their bytes --------------------------------

HYPOTHESIS_DIALECTS = ["godot4", "godot3", "godot4.0", "godot4.3", "godot4-double", "godot3.0", "docs-godot4",
                       "docs-godot3", "godot2"]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), dialect=st.sampled_from(HYPOTHESIS_DIALECTS))
def test_values_decode_identically(data: st.DataObject, dialect: str) -> None:
    value = data.draw(values(dialect))
    try:
        blob = gf.dumps(value, dialect)
    except gf.EncodeError:
        return
    # Everything a dialect writes from these values is read by C (or its Python readers).
    assert pair(dialect).check(blob), value
    # Inputs of 256 bytes and more share short strings through a cache: the same again there.
    assert pair(dialect).check(gf.dumps([value, "-" * 300, value], dialect)), value


def test_short_strings_shared_within_a_decode_are_the_right_ones() -> None:
    """Many distinct short strings (colliding in the cache's 1024 slots), repeats, lengths
    around the cache's limit, non-ASCII and empty ones."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)] + ["", "a", "é", "ab", "x" * 23, "x" * 24, "x" * 25, "\x7f" * 3, "héllo"]
    value = [rng.choice(words) for _ in range(20_000)]
    value.append({w: i for i, w in enumerate(words)})
    for dialect in ("godot4", "godot3"):
        p = pair(dialect)
        blob = gf.dumps(value, dialect)
        assert p.check(blob)
        got = p.c(blob)[0]
        assert got == value and all(type(s) is str for s in got[:-1])
        # Shared strs are plain, valid strs: hashing and comparing them is as usual.
        assert {s: 1 for s in got[:-1]}.keys() == set(value[:-1])


_WORDS = [0, 1, 2, 3, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x10000, 0x1001C, 0x1001B, 0x30000, 0xF0000, 0x1C, 0x1B,
          0x04, 0x02, 0x10002, 0x03, 0x10003, 0x18, 0x11, 0x10018, 0x80000001]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), dialect=st.sampled_from(HYPOTHESIS_DIALECTS))
def test_mutated_bytes_fall_back_or_agree(data: st.DataObject, dialect: str) -> None:
    value = data.draw(values(dialect))
    try:
        blob = bytearray(gf.dumps(value, dialect))
    except gf.EncodeError:
        return
    for _ in range(data.draw(st.integers(1, 4))):
        how = data.draw(st.sampled_from(["byte", "word", "cut", "insert", "delete"]))
        if how == "byte" and blob:
            blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
        elif how == "word" and len(blob) >= 4:
            at = data.draw(st.integers(0, (len(blob) - 4) // 4)) * 4
            blob[at:at + 4] = struct.pack("<I", data.draw(st.sampled_from(_WORDS)))
        elif how == "cut":
            del blob[data.draw(st.integers(0, len(blob))):]
        elif how == "insert":
            at = data.draw(st.integers(0, len(blob)))
            blob[at:at] = struct.pack("<I", data.draw(st.sampled_from(_WORDS)))
        elif how == "delete" and blob:
            at = data.draw(st.integers(0, len(blob) - 1))
            del blob[at:at + data.draw(st.integers(1, 4))]
    for objects in (False, True):
        pair(dialect, objects).check(bytes(blob))


@pytest.mark.parametrize("seed", range(8))
def test_random_and_corpus_bytes_fall_back_or_agree(seed: int) -> None:
    rng = random.Random(seed)
    corpus = sorted((ROOT / "fuzz" / "corpus").glob("*"))
    for _ in range(300):
        if corpus and rng.random() < 0.7:
            blob = bytearray(rng.choice(corpus).read_bytes())
            for _ in range(rng.randint(0, 3)):
                if blob:
                    blob[rng.randrange(len(blob))] = rng.randrange(256)
        else:
            blob = bytearray(rng.randbytes(rng.randint(0, 64)))
            for i in range(0, len(blob) - 3, 4):  # plausible headers
                if rng.random() < 0.5:
                    blob[i:i + 4] = struct.pack("<I", rng.choice(_WORDS))
        dialect = rng.choice(DIALECTS)
        pair(dialect, rng.random() < 0.3).check(bytes(blob))


# --- no leaks --------------------------------------------------------------------------------

@pytest.mark.slow
def test_no_leaks_over_100000_decodes() -> None:
    p = pair("godot4")
    blobs = [
        gf.dumps({"id": 1, "pos": t.Vector3(1, 2, 3), "tags": ["a", "b"], "hp": 0.75}, "godot4"),
        gf.dumps([t.Dictionary([(1, 2), (1.0, 3)]), t.TypedArray("int", [1]), b"xy", t.NodePath("a")], "godot4"),
        gf.dumps(t.TypedDictionary("String", "int", {"a": 1}), "godot4"),
        gf.dumps({"a": 1, "b": [t.PackedInt32Array([1, 2]), t.StringName("x")]}, "godot4"),
        bytes.fromhex("1b00000002000000" + "0400000001000000610000000200000001000000" * 2),  # repeated key
        gf.dumps([1, [2, [3, "x" * 9]]], "godot4")[:-3],  # cut short: falls back mid-container
        bytes.fromhex("1c000000030000000200000001000000" "04000000020000" "00ff00"),  # bad UTF-8 inside
        _nested_arrays(2000),  # too deep
    ]

    def run(n: int) -> None:
        def dictionary() -> Any:
            return partial(codec._dictionary, rules=p.dec._key_rules, memo={})
        for i in range(n):
            blob = blobs[i % len(blobs)]
            try:
                p.reader.decode(blob, 0, len(blob), dictionary)
            except Fallback:
                pass

    run(20_000)  # warm up: caches, free lists
    gc.collect()
    objects = len(gc.get_objects())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(100_000)
    gc.collect()
    assert len(gc.get_objects()) - objects < 100
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 5_000  # KiB


def test_readers_are_collected() -> None:
    """A Reader holds bound methods of the object that holds it: the cycle must be collectable."""
    import weakref

    p = Pair("godot4")
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None


# --- strings_from_wire: a PackedStringArray's strings made from its wire form

def _wire(texts: list[bytes], nul: bool) -> bytes:
    out = b""
    for raw in texts:
        n = len(raw) + nul
        out += n.to_bytes(4, "little") + raw + b"\0" * nul + b"\0" * (-n & 3)
    return out


@settings(deadline=None)
@given(texts=st.lists(st.binary(max_size=9).map(lambda b: bytes(c & 0x7F for c in b)), max_size=10),
       nul=st.booleans())
def test_strings_from_wire_is_the_reference_loop(texts: list[bytes], nul: bool) -> None:
    wire = _wire(texts, nul)
    got = _cdecode.strings_from_wire(wire, len(texts), nul)
    assert got == [raw.decode("ascii") for raw in texts]
    assert all(type(s) is str for s in got)
    assert got == t.PackedStringArray.from_wire(wire, len(texts), nul).tolist()


@pytest.mark.parametrize("wire, count, nul", [
    (b"\x05\0\0\0ab", 1, True),                # a length past the end
    (b"\x03\0\0\0a\xe9\0\0", 1, True),         # not ASCII (from_wire's contract)
    (b"\0\0\0\0", 1, True),                    # a NUL counted that is not there
    (b"\x01\0\0\0a\0\0\0", 2, True),           # a count past the elements
    (b"\x01\0\0\0a\0\0\0", -1, False),
    (b"\x01\0\0", 1, False),
])
def test_strings_from_wire_refuses_what_is_not_a_checked_body(wire: bytes, count: int, nul: bool) -> None:
    """from_wire is public: bytes the decoder never checked fall back, never read outside."""
    with pytest.raises(Fallback):
        _cdecode.strings_from_wire(wire, count, nul)
    with pytest.raises(Fallback):
        _cdecode.strings_from_wire(bytearray(wire), count, nul)


# -- the cyclic GC: containers built untracked, every one tracked again when the decode ends ----------


def _containers(value: Any) -> list[Any]:
    out, todo = [], [value]
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            out.append(v)
            todo.extend(v)
        elif isinstance(v, dict):
            out.append(v)
            todo.extend(v.values())
    return out


def test_every_list_and_every_dict_of_containers_ends_tracked() -> None:
    """The user may make cycles out of a decoded value: the GC must see every list (CPython never
    tracks a list again on its own) and every dict that holds a container, as Python-built ones."""
    p = pair("godot3")
    value = {"records": [{"id": i, "pos": [i, i + 1], "tags": [], "deep": {"k": [[i]]}} for i in range(50)],
             "flat": {"a": 1, "b": "x"}}
    got, _ = p.c(gf.dumps(value, "godot3"))
    assert got == value
    for c in _containers(got):
        assert gc.is_tracked(c) == gc.is_tracked(eval(repr(c))), repr(c)[:80]  # as Python builds it
        if isinstance(c, list):
            assert gc.is_tracked(c)


def test_a_cycle_made_out_of_a_decoded_value_is_collected() -> None:
    import weakref

    class Marker:
        pass

    p = pair("godot3")
    got, _ = p.c(gf.dumps([{"pos": [1, 2]}, [3, [4]]], "godot3"))
    marker = Marker()
    marker.back = got  # type: ignore[attr-defined]
    got[0]["pos"].append(marker)
    got[1][1].append(got)
    alive = weakref.ref(marker)
    del got, marker
    gc.collect()
    assert alive() is None


def test_a_decode_that_falls_back_leaves_nothing_untracked_or_alive() -> None:
    """A fallback after many containers were built: each is tracked again and released."""
    p = pair("godot3")
    data = gf.dumps([[i, [i]] for i in range(2000)], "godot3")
    before = len(gc.get_objects())
    for _ in range(20):
        with pytest.raises(Fallback):
            p.c(data[:-3])
    gc.collect()
    assert len(gc.get_objects()) - before < 100


def test_a_vector_holds_only_numbers_and_is_left_untracked() -> None:
    """A Vector3 (a tuple of floats with no __dict__) can never be part of a cycle: the core leaves it
    untracked, as CPython's collector leaves an exact tuple of numbers, so a save's one vector per
    record is not walked by every collection.  A dict of numbers and such vectors stays untracked as
    Python keeps a dict of atomic values; a list stored in it later tracks it (CPython's own rule)."""
    p = pair("godot3")
    got, _ = p.c(gf.dumps([{"pos": t.Vector3(1, 2, 3), "hp": 0.5}, t.Color(1, 0, 0, 1)], "godot3"))
    record, color = got
    assert record == {"pos": t.Vector3(1, 2, 3), "hp": 0.5} and color == t.Color(1, 0, 0, 1)
    assert not gc.is_tracked(record["pos"]) and not gc.is_tracked(color)
    if sys.version_info >= (3, 14):  # every dict tracked from its start, never again later (gh-127010)
        assert gc.is_tracked(record)
        return
    assert not gc.is_tracked(record)
    record["back"] = [got]  # a cycle through the dict: CPython tracks the dict as the list goes in
    assert gc.is_tracked(record) and gc.is_tracked(got)


class _Tagged(t.Vector3):
    """A Vector3 subclass whose instances have a __dict__ (no __slots__): they can hold anything."""


def _vector3_with(cls: type, lasting: bool) -> Any:
    """A Vector3 decoded by a compiled reader whose table makes it ``cls`` (``lasting``: the table's
    word that the class lives as long as the library)."""
    built = codec._CReader(Decoder(get_dialect("godot3"), backend="python"), _cdecode)
    index = get_dialect("godot3").types.index("Vector3")
    kind, (make, _cls, count, is_int, wide, _lasting) = built.table[index]
    table = built.table[:index] + ((kind, (make, cls, count, is_int, wide, lasting)),) + built.table[index + 1:]
    dec = built.dec
    reader = _cdecode.Reader(get_dialect("godot3").type_mask, table, tuple(dec._readers), built.typed_array_head,
                             built.typed_dict_head, dec.max_depth, -1, dec._flag_marks)
    data = gf.dumps(t.Vector3(1, 2, 3), "godot3")
    v, _ = reader.decode(data, 0, len(data), lambda: partial(codec._dictionary, rules=dec._key_rules, memo={}))
    assert type(v) is cls and tuple(v) == (1.0, 2.0, 3.0)
    return v


def test_only_the_librarys_own_vector_classes_are_left_untracked() -> None:
    """An instance holds its class: a class made at run time (``class MyVec(Vector3): __slots__ = ()``)
    can be collected, and ``MyVec.ORIGIN = decoded`` is a cycle through the instance, which the GC
    must see.  So only the classes the library's table calls lasting (its own, held by their module)
    have untracked instances."""
    import weakref

    class MyVec(t.Vector3):
        __slots__ = ()

    assert not gc.is_tracked(_vector3_with(t.Vector3, True))
    v = _vector3_with(MyVec, False)
    assert gc.is_tracked(v)
    MyVec.ORIGIN = v  # type: ignore[attr-defined]
    alive = weakref.ref(MyVec)
    del v, MyVec
    gc.collect()
    assert alive() is None
    built = codec._CReader(Decoder(get_dialect("godot3"), backend="python"), _cdecode)
    math = [arg for kind, arg in built.table if isinstance(arg, tuple) and len(arg) == 6]
    own = [arg for arg in math if isinstance(arg[1], type)]
    assert own and all(arg[5] for arg in own)  # the vectors, Color, Quaternion ...: the library's own classes
    assert not any(arg[5] for arg in math if not isinstance(arg[1], type))  # built by a row's function


def test_a_vector_class_that_can_hold_more_than_numbers_stays_tracked() -> None:
    """A table whose Vector3 is a subclass with a __dict__: its instances can hold a cycle
    (``v.back = v``), so the core leaves them tracked, even called lasting, and the GC collects it."""
    import weakref

    v = _vector3_with(_Tagged, True)
    assert gc.is_tracked(v)

    class Marker:
        pass

    marker = Marker()
    marker.v, v.back = v, marker  # type: ignore[attr-defined]
    alive = weakref.ref(marker)
    del v, marker
    gc.collect()
    assert alive() is None
