"""The compiled writer (godot_formats/core/_cencode.c) against the reference Encoder.

The compiled writer either raises ``Fallback`` (or ``LeafError``: the reference's row writer
refused a value, which the caller names) or returns exactly the reference's bytes; the common
values (plain ints, floats, strings, lists, dicts, vectors) must never fall back.
The writers are built here the way the Python side builds them (``Encoder._c_writer``), from
a reference ``Encoder``, so these tests do not depend on which backend the process uses.
"""

from __future__ import annotations

import enum
import gc
import math
import os
import pickle
import struct
import sys
import weakref
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import INT32, INT64, TEXT, values

from godot_formats.core import types as t
from godot_formats.core.codec import Decoder, Encoder
from godot_formats.core.dialects import get_dialect
from godot_formats.core.errors import DecodeError, EncodeError, GodotFormatsError
from godot_formats.core.registry import REGISTRY, Family

if os.environ.get("GODOT_FORMATS_PURE", "") not in ("", "0"):
    pytest.skip("GODOT_FORMATS_PURE is set: the compiled core is off", allow_module_level=True)
_cencode = pytest.importorskip("godot_formats.core._cencode", reason="the compiled writer is not built")
Fallback = _cencode.Fallback
#: What the compiled writer does instead of writing: leave the value to the reference (Fallback), or
#: say that the reference's row writer refused it (LeafError(value, error): the caller names the path).
REFUSED = (_cencode.Fallback, _cencode.LeafError)

DIALECTS = ["godot4", "godot3", "godot3.0", "godot4-double"]
HEADER_NAMES = ("Nil", "bool", "int", "float", "String", "Array", "Dictionary")
INT_MODES = ("auto", "flag64", "i64", "i32")
FLOAT_MODES = ("auto", "flag64", "f32", "f64")


def make_writer(enc: Encoder) -> Any:
    """The compiled writer for ``enc``'s dialect, built as the Python side builds it."""

    def header(name: str) -> int:
        try:
            return enc.header(name)
        except EncodeError:
            return -1

    math_types: dict[type, tuple[bytes, int, int]] = {}
    for spec in REGISTRY:
        if (spec.family is Family.MATH and issubclass(spec.cls, t.Components) and enc.dialect.has(spec.name)
                and spec.count == len(spec.cls._fields)):
            header_bytes, fmt, _ = enc.math_plan(spec)
            math_types[spec.cls] = (header_bytes, spec.count, "fid".index(fmt.format[-1]))

    def leaf(value: Any) -> bytes:
        out = bytearray()
        if enc.writer(value)(out, value) is not None:
            raise Fallback("a container: the reference writes it")
        return bytes(out)

    return _cencode.Writer(tuple(header(n) for n in HEADER_NAMES), INT_MODES.index(enc.dialect.int_format),
                           FLOAT_MODES.index(enc.dialect.float_format), math_types, leaf, enc.max_depth)


_PAIRS: dict[tuple[str, bool], tuple[Any, Encoder]] = {}


def pair(dialect: str, full_objects: bool = False) -> tuple[Any, Encoder]:
    """(compiled writer, reference encoder) of one dialect, made once."""
    key = (dialect, full_objects)
    if key not in _PAIRS:
        ref = Encoder(get_dialect(dialect), full_objects=full_objects, backend="python")
        _PAIRS[key] = (make_writer(ref), ref)
    return _PAIRS[key]


def check(dialect: str, value: Any, must_encode: bool = False, full_objects: bool = False) -> bytes | None:
    """The compiled bytes (None after a Fallback), asserted equal to the reference's."""
    writer, ref = pair(dialect, full_objects)
    try:
        ours = writer.encode(value)
    except REFUSED:
        assert not must_encode, f"fell back on {value!r}"
        return None
    try:
        expected = ref.encode(value)
    except GodotFormatsError as e:  # pragma: no cover - a bug: C wrote what the reference refuses
        raise AssertionError(f"C wrote {ours.hex()} where the reference raises {e!r}") from None
    assert ours == expected, f"{value!r}\nC   {ours.hex()}\nref {expected.hex()}"
    return ours


def falls_back(dialect: str, value: Any) -> bool:
    try:
        pair(dialect)[0].encode(value)
    except REFUSED:
        return True
    return False


def nest(depth: int) -> list[Any]:
    """``depth`` non-empty lists around an empty one."""
    v: list[Any] = []
    for _ in range(depth):
        v = [v]
    return v


def ids(values_: list[Any]) -> list[str]:
    """Test ids: a value's repr may be megabytes (or recurse 1024 deep)."""
    return [f"{i}-{type(v).__name__}" for i, v in enumerate(values_)]


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]  # type: ignore[no-any-return]


class Small(enum.IntEnum):
    A = 5
    BIG = 2**40


class MyFloat(float):
    pass


class MyStr(str):
    pass


FLT_MAX = f32(0x7F7FFFFF)

# Values the compiled writer must handle itself (in every dialect tested here).
COMMON: list[Any] = [
    None, True, False, 0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63),
    0.0, -0.0, 0.5, 0.1, 1e300, -1e-300, math.inf, -math.inf, math.nan, FLT_MAX, -FLT_MAX,
    3.4028235e38, 1e39, -1e39, f32(1), f32(0x00800000), 5e-324, 1e-45, 2.0**-149, 2.0**-150, 16777217.0,
    "", "a", "ab", "abc", "abcd", "abcde", "héllo", "日本語", "\U0001F600", "\x00", "x" * 5000, "é" * 3001,
    [], {}, (), [[]], [{}], {"a": []}, ([], ()), [1, 2.5, "x", None, True],
    list(range(100)), [0.5] * 40, [0.1] * 40, list(range(2**31 - 20, 2**31 + 20)),
    {"k": 1, "l": {"m": [1, {"n": ()}]}}, {1: 2, 1.5: None, None: True, (1, 2): [3], False: "f", "": ""},
    {("a", ("b",)): {"c": {}}},
    t.Vector2(1.5, 2.5), t.Vector3(1, 2, 3), t.Quaternion(0, 0, 0, 1), t.Color(1, 0, 0, 1),
    t.Color(0.1, 0.2, 0.3, 0.4), t.Vector2(math.inf, -math.inf), t.Vector2(-0.0, FLT_MAX),
    [t.Vector2(1, 2), {"pos": t.Vector3(0.5, -1, 2)}],
    nest(1024), [nest(1023)], {"a": nest(1023)},
]
GODOT4_COMMON = [t.Vector2i(-(2**31), 2**31 - 1), t.Vector3i(1, 2, 3), t.Vector4(1, 2, 3, 4), t.Vector4i(1, 2, 3, 4)]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("value", COMMON + GODOT4_COMMON, ids=ids(COMMON + GODOT4_COMMON))
def test_common_values_never_fall_back(dialect: str, value: Any) -> None:
    must = not any(value is v for v in GODOT4_COMMON) or dialect.startswith("godot4")
    check(dialect, value, must_encode=must)


def _self_list() -> list[Any]:
    a: list[Any] = [1]
    a.append(a)
    return a


def _self_dict() -> dict[str, Any]:
    d: dict[str, Any] = {"x": 1}
    d["self"] = d
    return d


# Values the compiled writer does not write itself (the reference raises, or does what C does not).
FALLS_BACK: list[Any] = [
    2**63, -(2**63) - 1, 10**40, -(10**40),  # beyond int64: the reference raises
    nest(1025), [nest(1024)], {"a": nest(1024)}, (nest(1024),),  # deeper than max_depth
    _self_list(), _self_dict(),
    [1, 2, 2**64],  # fails late: nothing of the earlier elements escapes
    t.Vector2(1e39, 0.0), t.Vector2(math.nan, 0.0),  # float32 components C does not narrow
    tuple.__new__(t.Vector2, (1, 2)),  # int components of a float vector
    tuple.__new__(t.Vector3, (1.0, 2.0)),  # the wrong number of components
    t.Dictionary([(1, 2)]), t.TypedArray("int", [1, 2]),  # containers of the model's own classes
    t.Object("Node", {}), object(),  # refused by the reference
]


@pytest.mark.parametrize("dialect", ["godot4", "godot3"])
@pytest.mark.parametrize("value", FALLS_BACK, ids=ids(FALLS_BACK))
def test_the_hard_cases_are_the_references(dialect: str, value: Any) -> None:
    """Refused (the reference decides, or names the refusal's path) or, through the reference's row
    writer (a value C does not write itself goes to it, not back to the start), the
    reference's very bytes."""
    writer, ref = pair(dialect)
    try:
        ref_bytes: bytes | None = ref.encode(value)
    except EncodeError:
        ref_bytes = None
    if ref_bytes is None:
        assert falls_back(dialect, value)
    else:
        assert check(dialect, value) in (None, ref_bytes)


def test_float32_components_beyond_range_are_float64_in_a_double_build() -> None:
    check("godot4-double", t.Vector2(1e39, math.nan), must_encode=True)


def test_vector2i_beyond_int32_falls_back_and_the_reference_raises() -> None:
    v = tuple.__new__(t.Vector2i, (2**31, 0))
    assert falls_back("godot4", v)
    with pytest.raises(EncodeError):
        pair("godot4")[1].encode(v)


def test_depth_limit_matches_the_reference() -> None:
    writer, ref = pair("godot4")
    assert writer.encode(nest(1024)) == ref.encode(nest(1024))
    for value in (nest(1025), _self_list(), _self_dict()):
        with pytest.raises(Fallback):
            writer.encode(value)
        with pytest.raises(EncodeError, match="nest|deep"):
            ref.encode(value)
    # Empty containers open nothing: they do not count.
    check("godot4", [nest(1023)], must_encode=True)
    check("godot4", [[[]] * 3] * 3, must_encode=True)
    # A deep value with a small max_depth.
    ref2 = Encoder(get_dialect("godot4"), max_depth=3, backend="python")
    w2 = make_writer(ref2)
    assert w2.encode(nest(3)) == ref2.encode(nest(3))
    with pytest.raises(Fallback):
        w2.encode(nest(4))
    with pytest.raises(EncodeError):
        ref2.encode(nest(4))


# Values the leaf callback writes (subclasses, the other Godot types): same bytes, or Fallback.
LEAVES: list[Any] = [
    Small.A, Small.BIG, MyFloat(0.1), MyStr("x"), t.StringName("name"), t.NodePath("a/b:c"),
    b"\x01\x02\x03", bytearray(b"xy"), t.PackedInt32Array([1, 2]), t.PackedStringArray(["a", "bc"]),
    t.Rect2(t.Vector2(1, 2), t.Vector2(3, 4)), t.Basis(t.Vector3(1, 0, 0), t.Vector3(0, 1, 0), t.Vector3(0, 0, 1)),
    t.RID(), t.Callable(), t.Signal("s", 3), t.EncodedObjectAsID(7), t.TypedArray("int", []),
    [Small.A, t.StringName("n"), {"k": t.NodePath("x")}], {t.StringName("k"): MyFloat(1.5)},
    "\ud800", "a\udc00b", ["\udfff"], {"\ud800": 1},  # unpaired surrogates: godot3 writes them, godot4 refuses
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("value", LEAVES, ids=ids(LEAVES))
def test_leaf_values(dialect: str, value: Any) -> None:
    surrogate = "\ud800" in repr(value) or "\udc00" in repr(value) or "\udfff" in repr(value)
    if not surrogate:
        check(dialect, value)
    else:
        out = check(dialect, value)
        assert (out is not None) == dialect.startswith("godot3")


def test_a_bool_is_not_an_int() -> None:
    out = check("godot4", [True, 1, False, 0], must_encode=True)
    assert out == bytes.fromhex("1c000000 04000000 01000000 01000000 02000000 01000000"
                                "01000000 00000000 02000000 00000000")  # bool 1, int 1, bool 0, int 0


# --- Hypothesis ------------------------------------------------------------------------------

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("dialect", DIALECTS)
@SETTINGS
@given(data=st.data())
def test_any_value_same_bytes_or_fallback(dialect: str, data: st.DataObject) -> None:
    check(dialect, data.draw(values(dialect)))


def _common(dialect: str) -> st.SearchStrategy[Any]:
    """Values the compiled writer must always write itself in this dialect."""
    d = get_dialect(dialect)
    single = st.floats(width=32, allow_nan=False) | st.sampled_from([math.inf, -math.inf, -0.0, FLT_MAX])
    real = st.floats(allow_nan=False) if d.real_is_double else single  # Color is float32 in every build
    leaf = st.one_of(
        st.none(), st.booleans(), INT64, INT32, st.floats(), st.floats(width=32), TEXT,
        st.text(max_size=40).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
        st.builds(t.Vector2, real, real), st.builds(t.Vector3, real, real, real),
        st.builds(t.Color, single, single, single, single), st.builds(t.Quaternion, real, real, real, real),
        *([st.builds(t.Vector2i, INT32, INT32), st.builds(t.Vector4, real, real, real, real)]
          if d.has("Vector4") else []),
    )
    keys = st.one_of(TEXT, INT32, st.none())
    return st.recursive(leaf, lambda c: st.one_of(
        st.lists(c, max_size=6), st.tuples(c, c), st.dictionaries(keys, c, max_size=5)), max_leaves=30)


@pytest.mark.parametrize("dialect", DIALECTS)
@SETTINGS
@given(data=st.data())
def test_common_hypothesis_values_never_fall_back(dialect: str, data: st.DataObject) -> None:
    check(dialect, data.draw(_common(dialect)), must_encode=True)


@pytest.mark.parametrize("dialect", ["godot4", "godot3.0"])
@SETTINGS
@given(x=st.integers(min_value=-(2**64), max_value=2**64) | st.integers())
def test_any_int(dialect: str, x: int) -> None:
    check(dialect, x, must_encode=-(2**63) <= x < 2**63)


@pytest.mark.parametrize("dialect", DIALECTS)
@SETTINGS
@given(bits=st.integers(min_value=0, max_value=2**64 - 1))
def test_any_double_bit_pattern(dialect: str, bits: int) -> None:
    x = struct.unpack("<d", struct.pack("<Q", bits))[0]
    check(dialect, [x, t.Vector2(x, 0.0) if not math.isnan(x) else x], must_encode=dialect == "godot4-double")
    check(dialect, x, must_encode=True)


# --- other dialects' number formats ----------------------------------------------------------------

OTHER_FORMATS = COMMON[:40] + [[1, 0.5, "x"], 2**40, FLT_MAX, 1e39, math.nan, math.inf]


@pytest.mark.parametrize("dialect", ["godot2", "docs-godot3.0"])
@pytest.mark.parametrize("value", OTHER_FORMATS, ids=ids(OTHER_FORMATS))
def test_other_number_formats(dialect: str, value: Any) -> None:
    check(dialect, value)  # i32/f32 (godot2) and i64/f32 (docs): same bytes or Fallback


def test_f32_dialect_leaves_to_the_reference_what_it_cannot_narrow() -> None:
    """What C does not narrow itself goes through the reference's row writer: its bytes, or its refusal."""
    for value in (1e39, -1e39, math.nan, 3.4028235e38, 2**31):
        try:
            expected: bytes | None = pair("godot2")[1].encode(value)
        except EncodeError:
            expected = None
        assert check("godot2", value) == expected
    assert check("godot2", 0.1) is not None  # rounded to float32, as the reference does
    assert check("docs-godot3.0", 2**40) is not None


# --- the engine fixtures ---------------------------------------------------------------------------

def _fixture_blobs() -> list[Any]:
    blobs: dict[tuple[str, str], None] = {}
    for engine in ("godot3", "godot4"):
        for path in sorted((FIXTURES / engine).glob("*.jsonl")):
            for case in read_jsonl(path):
                for key in ("hex", "in_hex", "hex_full_objects", "hex_to_native"):
                    if isinstance(case.get(key), str) and case[key]:
                        blobs[(engine, case[key])] = None
    return list(blobs)


FIXTURE_BLOBS = _fixture_blobs()


@pytest.mark.parametrize("full_objects", [False, True])
def test_engine_fixtures_reencode_identically(full_objects: bool) -> None:
    decoders = {e: Decoder(get_dialect(e), allow_objects=True, backend="python", max_elements=None)
                for e in ("godot3", "godot4")}
    encoded = fell_back = 0
    for engine, blob in FIXTURE_BLOBS:
        try:
            value, _ = decoders[engine].decode(bytes.fromhex(blob))
        except DecodeError:
            continue
        writer, ref = pair(engine, full_objects)
        try:
            ours = writer.encode(value)
        except REFUSED:
            fell_back += 1
            continue
        assert ours == ref.encode(value), f"{engine} {blob[:80]}"
        encoded += 1
    assert encoded > 500 and fell_back < encoded, (encoded, fell_back)


def test_fixture_blob_count() -> None:
    assert len(FIXTURE_BLOBS) > 800


# --- robustness: references, the callback, construction ----------------------------------------------

def test_no_reference_leaks() -> None:
    writer, _ = pair("godot4")
    key, item, inner = "key-" + "x" * 10, t.StringName("sn"), [1.5, "é"]
    values_ = [
        {key: [item, inner, (inner, inner)], "v": t.Vector2(1, 2)},
        [inner, {key: inner}, 2**64],  # falls back half-way
        {key: inner, "d": t.Dictionary([(1, 2)])},  # falls back in the leaf callback
        _self_list(),
    ]
    tracked = [key, item, inner, *values_]
    before = [sys.getrefcount(o) for o in tracked]
    for _ in range(200):
        for v in values_:
            try:
                writer.encode(v)
            except REFUSED:
                pass
    del v
    assert [sys.getrefcount(o) for o in tracked] == before


def _writer_with_leaf(leaf: Any, max_depth: int = 1024) -> Any:
    return _cencode.Writer((0, 1, 2, 3, 4, 28, 27), 0, 0, {}, leaf, max_depth)


def test_leaf_mutating_the_containers_is_an_encode_error() -> None:
    """Never bytes whose count is no longer true, nor a second run of the caller's code."""
    for shape in ([1, t.StringName("a"), 2, 3], {"a": t.StringName("a"), "b": 2}, {t.StringName("a"): [1], "b": 2}):

        def leaf(value: Any, data: Any = shape) -> bytes:
            data.clear()  # the container being written, under the writer's feet
            return b"\0\0\0\0"

        with pytest.raises(_cencode.LeafError) as info:
            _writer_with_leaf(leaf).encode(shape)
        container, error = info.value.args
        assert container is shape and isinstance(error, EncodeError) and "changed size" in str(error)


def test_leaf_results() -> None:
    with pytest.raises(Fallback):
        _writer_with_leaf(lambda v: "not bytes").encode([object()])
    with pytest.raises(ZeroDivisionError):  # the caller's own exception: passed on, once
        _writer_with_leaf(lambda v: 1 / 0).encode({"a": object()})
    thing = object()

    def refuse(v: Any) -> bytes:
        raise EncodeError("no such type here")

    with pytest.raises(_cencode.LeafError) as info:  # the reference's refusal: the caller names the path
        _writer_with_leaf(refuse).encode({"a": [thing]})
    assert info.value.args[0] is thing and str(info.value.args[1]) == "no such type here"

    def interrupt(v: Any) -> bytes:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # passed on: Ctrl-C is not retried by the reference
        _writer_with_leaf(interrupt).encode([object()])
    assert _writer_with_leaf(lambda v: b"\1\2\3").encode([object()]) == bytes.fromhex("1c00000001000000010203")


def test_leaf_heads_with_children() -> None:
    """A leaf result (head, [children]): the head's bytes, then the children walked like a
    list's, counted by the depth limit; anything else shaped like it is a fallback."""
    head = b"\xaa\xbb\xcc\xdd"
    w = _writer_with_leaf(lambda v: (head, [1, "x", [2]]))
    assert w.encode([object()]) == bytes.fromhex("1c00000001000000") + head + bytes.fromhex(
        "0200000001000000" "040000000100000078000000" "1c000000010000000200000002000000")
    assert _writer_with_leaf(lambda v: (head, [])).encode(object()) == head
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(Fallback):  # children nested past max_depth
        _writer_with_leaf(lambda v: (head, loop), max_depth=50).encode(object())
    for bad in [("x", [1]), (head, (1,)), (head, [1], 2), [head, [1]], (head, None)]:
        with pytest.raises(Fallback):
            _writer_with_leaf(lambda v, bad=bad: bad).encode([object()])
    # A str strict UTF-8 refuses goes to the leaf alone: a head with children there is refused.
    with pytest.raises(Fallback):
        _writer_with_leaf(lambda v: (head, [1])).encode("\ud800")


def test_missing_headers_go_to_the_reference() -> None:
    """A type the dialect has no id for: a scalar goes to the reference's row writer (which says why
    not, and the caller names the path); a container, back to the reference."""
    def refuse(v: Any) -> bytes:
        raise EncodeError("no such type in this dialect")

    w = _cencode.Writer((-1,) * 7, 0, 0, {}, refuse, 8)
    for value in (None, True, 1, 1.0, "s"):
        with pytest.raises(_cencode.LeafError) as info:
            w.encode(value)
        assert info.value.args[0] is value
    for container in ([], {}):
        with pytest.raises(Fallback):
            w.encode(container)


def test_big_output_grows_the_buffer() -> None:
    value = {f"k{i}": ["v" * (i % 50), i, i * 0.5] for i in range(20000)}
    check("godot4", value, must_encode=True)


def test_construction_is_checked() -> None:
    leaf = lambda v: b""  # noqa: E731
    good = ((0,) * 7, 0, 0, {}, leaf, 4)
    _cencode.Writer(*good)
    for bad, exc in [
        (((0,) * 6, 0, 0, {}, leaf, 4), ValueError),
        (((0,) * 7, 4, 0, {}, leaf, 4), ValueError),
        (((0,) * 7, 0, -1, {}, leaf, 4), ValueError),
        (((0,) * 7, 0, 0, {}, 5, 4), TypeError),
        (((2**40,) * 7, 0, 0, {}, leaf, 4), ValueError),
        ((("x",) * 7, 0, 0, {}, leaf, 4), TypeError),
        (((0,) * 7, 0, 0, [], leaf, 4), TypeError),
        (((0,) * 7, 0, 0, {int: (b"", 1, 0)}, leaf, 4), TypeError),  # not a tuple subclass
        (((0,) * 7, 0, 0, {t.Vector2: (b"", 2, 3)}, leaf, 4), ValueError),
        (((0,) * 7, 0, 0, {t.Vector2: ("x", 2, 0)}, leaf, 4), TypeError),
    ]:
        with pytest.raises(exc):
            _cencode.Writer(*bad)
    assert _cencode.Writer(*good).max_depth == 4
    strings = (t.PackedStringArray, 34, True, lambda v: [])
    _cencode.Writer(*good, bytes_header=29, strings=strings)
    for kwargs, exc in [
        ({"bytes_header": 2**40}, ValueError),
        ({"strings": (t.PackedStringArray, 34, True)}, TypeError),
        ({"strings": ("not a class", 34, True, len)}, TypeError),
        ({"strings": (t.PackedStringArray, 34, True, 5)}, TypeError),
        ({"strings": (t.PackedStringArray, -1, True, len)}, ValueError),
        ({"strings": (t.PackedStringArray, 2**40, True, len)}, ValueError),
        ({"strings": (t.PackedStringArray, "x", True, len)}, TypeError),
    ]:
        with pytest.raises(exc):
            _cencode.Writer(*good, **kwargs)
    assert issubclass(Fallback, Exception)


def test_writer_and_encoder_cycle_is_collected() -> None:
    ref = Encoder(get_dialect("godot4"), backend="python")
    ref.c_writer_for_test = make_writer(ref)  # type: ignore[attr-defined]  # Encoder -> Writer -> leaf -> Encoder
    alive = weakref.ref(ref)
    del ref
    gc.collect()
    assert alive() is None


# benchmarks/bench.py's container workloads (copied: the benchmark imports its peers' libraries).
_SMALL: tuple[Any, ...] = (1, -7, 2147483648, 0.5, 0.1, "ab", "héllo", True, None,
                           t.Vector2(1, 2), t.Color(1, 0, 0, 1))


def bench_dict(n: int) -> dict[str, Any]:
    return {f"k{i}": _SMALL[i % len(_SMALL)] for i in range(n)}


def bench_records(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "pos": t.Vector3(i, i * 0.5, -i), "tags": ["a", "b"], "hp": 0.75} for i in range(n)]


BENCH_MESSAGE = {"type": "move", "id": 12345, "pos": t.Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_benchmark_workloads_never_fall_back(dialect: str) -> None:
    check(dialect, bench_dict(5000), must_encode=True)
    check(dialect, bench_records(2000), must_encode=True)
    check(dialect, BENCH_MESSAGE, must_encode=True)


# Containers whose scalar runs (the compiled writer's loop without the stack) end at every kind
# of element: a container, a value the reference writes (a subclass, an unpaired surrogate, a
# type of the library's), an int past one 30-bit digit or past the dialect's width, a float
# the dialect cannot narrow; in lists, tuples, dict keys and dict values, at the start, middle
# and end of the container.
RUN_EDGES: list[Any] = [
    {"a": 1, "b": [1], "c": 2.5, "d": None, "e": True, "f": {"g": "h"}},
    {1: "x", 2.5: [1, 2], None: {"k": "v"}, False: True, "": ()},
    {"a": "\ud800", "b": 1}, {"\ud800": 1, "b": 2}, {"b": 2, "c": "\udfff"},
    {"a": t.StringName("x"), "b": 1, "c": t.Vector2(1, 2), "d": 3},
    {t.StringName("k"): 1, "b": 2}, {(1, 2): 3, "b": 4, t.Vector2(0, 1): 5},
    {"a": Small.A, "b": MyStr("x"), "c": MyFloat(0.5), "d": 1},
    [1, 2, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**31), -(2**31) - 1, -(2**63), -(2**63) - 1, 3],
    [0, 1, -1, 2**30 - 1, 2**30, -(2**30) + 1, -(2**30), 2**30 + 1, -(2**30) - 1, 2**60, -(2**60)],
    [1, "a", 2.5, None, False, [3], "é", Small.A, MyStr("x"), 4, (5,), {"x": 6}, 7],
    (1, "a", (2, 3), 4.0, "\ud800", 5), ([1], 2), (1, [2]),
    [0.1, 1e300, math.nan, math.inf, -0.0, FLT_MAX, 1e39, 5e-324, 0.5],
    {f"k{i}": (i if i % 3 else [i]) for i in range(100)},
    {f"k{i}": ("\ud800" if i == 50 else i) for i in range(100)},
    [[i, str(i), float(i)] for i in range(50)],
]


@pytest.mark.parametrize("dialect", DIALECTS + ["godot2", "docs-godot3.0"])
@pytest.mark.parametrize("value", RUN_EDGES, ids=ids(RUN_EDGES))
def test_scalar_runs_end_where_the_reference_takes_over(dialect: str, value: Any) -> None:
    """Each run's bytes are the reference's, and a dict entry whose value ends a run is
    written whole once (its key not twice)."""
    check(dialect, value)


def test_scalar_runs_are_written_by_the_compiled_writer() -> None:
    """The runs cover what they are for: none of these falls back in any dialect here."""
    for dialect in DIALECTS:
        for value in (RUN_EDGES[0], RUN_EDGES[1], RUN_EDGES[14], RUN_EDGES[16],
                      [0, 1, -1, 2**30 - 1, 2**30, -(2**30) + 1, -(2**30), 2**31 - 1, -(2**31)]):
            check(dialect, value, must_encode=True)


class _Bomb:
    """Cyclic garbage whose finalizer empties ``target``: it runs at the next collection."""

    def __init__(self, target: Any) -> None:
        self.target, self.me = target, self

    def __del__(self) -> None:
        self.target.clear()


def _run_shape(shape: str, odd: Any) -> Any:
    """A container with scalars around ``odd`` (an element the compiled runs cannot write)."""
    if shape == "list":
        return ["a", "b", odd, "c"] + [str(i) + "é" for i in range(20)]
    return {"a": 1, "b": odd, "c": 2} | {str(i) + "é": str(i) + "é" for i in range(20)}


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["list", "dict"])
def test_a_finalizer_that_empties_the_container_mid_write_is_an_encode_error(shape: str) -> None:
    """The element that ends a run goes to the leaf, where Python code runs: here a collection,
    whose finalizer empties the container being written.  The runs had read the list's old item
    array and a dict's borrowed value after that (a use-after-free): every element is held while
    it is written now, and the emptied container is reported."""
    def leaf(value: Any) -> bytes:
        gc.collect()
        return b"\0\0\0\0"

    for _ in range(5):
        value = _run_shape(shape, object())
        _Bomb(value)
        with pytest.raises(_cencode.LeafError) as info:
            _writer_with_leaf(leaf).encode(value)
        assert info.value.args[0] is value and "changed size" in str(info.value.args[1])


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["list", "dict"])
def test_an_unpaired_surrogate_in_a_run_runs_no_python_code(shape: str) -> None:
    """A run meeting an unpaired surrogate made a UnicodeEncodeError of it, an allocation that
    can run a collection and its finalizers (a crash under PYTHONMALLOC=debug, with
    the GC's threshold at 1).  The runs find surrogates without making an exception now; the
    reference's leaf refuses the str in Godot 4, whatever a finalizer did meanwhile."""
    writer, ref = pair("godot4")
    for trial in range(50):
        value = _run_shape(shape, "x\udc80" + str(trial))
        gc.collect()
        _Bomb(value)
        old = gc.get_threshold()
        gc.set_threshold(1)
        try:
            written = writer.encode(value)
        except _cencode.LeafError as e:
            reason = str(e.args[1])
            assert "unpaired surrogate" in reason or "changed size" in reason
        else:  # the finalizer ran before the walk began: the empty container's bytes
            assert not value and written == ref.encode(value)
        finally:
            gc.set_threshold(*old)


def _byte_arrays(blocks: list[bytes]) -> bytes:
    """Godot 3's bytes for an Array of PoolByteArrays (marshalls.cpp: ARRAY 19 and a count, then
    each POOL_BYTE_ARRAY 20, its length, its bytes, zero padding to 4), made here with struct."""
    out = [struct.pack("<II", 19, len(blocks))]
    for block in blocks:
        out += [struct.pack("<II", 20, len(block)), block, bytes(-len(block) % 4)]
    return b"".join(out)


def _leftover(value: Any) -> tuple[bytes, int]:
    """``gf.dumps(value, "godot3")`` and the bytes its result holds beyond its length (traced
    allocation minus ``sys.getsizeof``): a leftover kept in the buffer, or 0 for an exact object."""
    import tracemalloc

    import godot_formats as gf

    gf.dumps(value, "godot3")  # the codec and its caches made before tracing
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = gf.dumps(value, "godot3")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return got, held - sys.getsizeof(got)


@pytest.mark.parametrize(("blocks", "kept"), [
    ([b"ab"], False),  # the stack buffer
    ([bytes(range(256)) * 20], False),  # grown to the size of its one block: nothing left over
    *(([bytes(range(100))] * m, False) for m in range(2900, 3700, 37)),  # over an eighth left: copied
    *(([bytes(range(100)) * 10] * m, True) for m in (8, 15, 29, 57, 64, 120)),  # at most an eighth: kept
    ([bytes([7]) * (12 << 20)] * 3, False),  # a 48 MiB buffer with 36 MiB used: shrunk in place
])
def test_every_way_the_output_buffer_finishes_gives_the_same_bytes(blocks: list[bytes], kept: bool) -> None:
    # out_finish keeps a small leftover (its size set), copies into an object of the exact size
    # (up to 32 MiB), or shrinks a larger buffer in place: each result is an ordinary bytes object.
    expected = _byte_arrays(blocks)
    got, leftover = _leftover(blocks)
    assert type(got) is bytes and len(got) == len(expected)
    assert got == expected and hash(got) == hash(expected)
    assert bytes(memoryview(got)) == expected and (got + b"!")[-1:] == b"!"
    assert pickle.loads(pickle.dumps(got, 5)) == expected
    if kept:
        assert 0 < leftover <= (len(got) + leftover) // 8 + 64
    else:
        assert leftover == 0
