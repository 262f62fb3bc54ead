"""Untrusted bytes never crash, hang, blow memory or run code.

Only :class:`~godot_formats.DecodeError` may come out of decoding (a ``ValueError``, with the
offset of the field that was wrong); never IndexError, struct.error or RecursionError; a
hostile count is refused before anything is allocated; nesting stops at ``max_depth``
(1024, like the engines) without using the Python stack; full Objects need
``allow_objects=True`` and even then are inert data.  See docs/security.md.

The fuzz findings replayed at the end come from fuzz/fuzz_decode.py (fuzz/crashes/).
"""

from __future__ import annotations

import collections
import functools
import struct
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from measure import calls_made
from strategies import floats_sharing_a_hash

import godot_formats as gf
from godot_formats.core.dialects import PACKED_TYPES, Dialect

ROOT = Path(__file__).resolve().parents[2]
CRASHES = ROOT / "fuzz" / "crashes"
DIALECTS = gf.dialect_names()
ENGINE_DIALECTS = [n for n in DIALECTS if gf.get_dialect(n).engine]
#: The engine dialects that can hold full Objects (the documented pages differ, see below).
OBJECT_DIALECTS = [n for n in ENGINE_DIALECTS if gf.get_dialect(n).object_format == "engine"]
TYPED_ARRAY_DIALECTS = [n for n in DIALECTS if gf.get_dialect(n).typed_arrays]
TYPED_DICT_DIALECTS = [n for n in DIALECTS if gf.get_dialect(n).typed_dictionaries]

FLAG_64 = 1 << 16
DEEP = 200_000


def u32(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def tid(dialect: str, name: str) -> int:
    type_id = gf.get_dialect(dialect).type_id(name)
    assert type_id is not None, (dialect, name)
    return type_id


def text(raw: bytes) -> bytes:
    """A length-prefixed, zero-padded string field (the engines' layout)."""
    return u32(len(raw)) + raw + b"\0" * (-len(raw) % 4)


def decode_or_refuse(data: bytes, dialect: str, **options: Any) -> tuple[Any, int] | gf.DecodeError:
    """Decode; a DecodeError is returned (and checked), anything else propagates to fail the test."""
    try:
        value, end = gf.decode(data, dialect, **options)
    except gf.DecodeError as e:
        assert isinstance(e, ValueError)
        assert isinstance(e.offset, int) and 0 <= e.offset <= len(data), e
        return e
    assert 0 < end <= len(data)
    return value, end


def check_blob(data: bytes) -> None:
    """The decoding contract for any bytes, in every dialect, with and without objects.

    Only DecodeError (offset inside the input) comes out; a value that came out writes back
    without error in the same dialect; decoding twice gives the same bytes back.
    """
    for dialect in DIALECTS:
        for objects in (False, True):
            first = decode_or_refuse(data, dialect, allow_objects=objects)
            if isinstance(first, gf.DecodeError):
                again = decode_or_refuse(data, dialect, allow_objects=objects)
                assert isinstance(again, gf.DecodeError) and again.offset == first.offset
                continue
            value, end = first
            written = gf.dumps(value, dialect, allow_objects=objects)
            second = decode_or_refuse(data, dialect, allow_objects=objects)
            assert not isinstance(second, gf.DecodeError) and second[1] == end
            assert gf.dumps(second[0], dialect, allow_objects=objects) == written


def walk(value: Any) -> Iterator[Any]:
    """Every value inside ``value``, without recursion."""
    todo = [value]
    while todo:
        v = todo.pop()
        yield v
        if isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, (dict, gf.Dictionary)):
            for k, item in v.items():
                todo.extend((k, item))
        elif isinstance(v, gf.Object):
            todo.extend(v.properties.values())


# --- nesting: 200,000 levels end at the depth limit, quickly, with no RecursionError --------

def _levels(dialect: str, kind: str) -> tuple[bytes, int, int]:
    """(one nesting level, offset of the value that goes too deep, options)."""
    array, dictionary = tid(dialect, "Array"), tid(dialect, "Dictionary")
    key = u32(tid(dialect, "String")) + text(b"a")
    if kind == "array":
        return u32(array, 1), 1025 * 8, 0
    if kind == "dictionary value":  # {"a": {"a": ...}}: the 1025th Dictionary's key is too deep
        return u32(dictionary, 1) + key, 1024 * 20 + 8, 0
    if kind == "dictionary key":  # {{{...}: null}: null}
        return u32(dictionary, 1), 1025 * 8, 0
    if kind == "typed array":  # Array[Array]
        return u32(array | 1 << 16, array, 1), 1025 * 12, 0
    if kind == "typed dictionary":  # Dictionary[String, Dictionary]
        return u32(dictionary | 1 << 16 | 1 << 18, tid(dialect, "String"), dictionary, 1) + key, 1024 * 28 + 16, 0
    if kind == "object":  # Object("A", {"p": Object("A", {"p": ...})})
        return u32(tid(dialect, "Object")) + text(b"A") + u32(1) + text(b"p"), 1025 * 24, 1
    raise AssertionError(kind)


NESTING = [(d, "array") for d in DIALECTS] + [(d, "dictionary value") for d in DIALECTS] \
    + [(d, "dictionary key") for d in DIALECTS] + [(d, "typed array") for d in TYPED_ARRAY_DIALECTS] \
    + [(d, "typed dictionary") for d in TYPED_DICT_DIALECTS] + [(d, "object") for d in OBJECT_DIALECTS]


@pytest.mark.parametrize("dialect, kind", NESTING)
def test_200000_levels_stop_at_the_depth_limit(dialect: str, kind: str) -> None:
    level, offset, objects = _levels(dialect, kind)
    data = level * DEEP + u32(0)
    def refuse() -> None:
        with pytest.raises(gf.DecodeError, match="nested deeper than 1024") as info:
            gf.loads(data, dialect, allow_objects=bool(objects))
        assert info.value.offset == offset

    # Work is counted, not timed: the walk stops at the limit, whatever follows it.
    assert calls_made(refuse) < 40 * 1025


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["array", "dictionary value", "typed array", "object"])
def test_50000_levels_decode_and_encode_when_allowed(kind: str) -> None:
    """With the limit raised, neither side recurses: the walk is iterative on both."""
    level, _, objects = _levels("godot4", kind)
    levels = 50_000  # far past CPython's recursion limit (1000) and the C stack of a recursive walk
    data = level * levels + u32(0)
    value = gf.loads(data, "godot4", allow_objects=bool(objects), max_depth=levels + 10)
    assert gf.dumps(value, "godot4", allow_objects=bool(objects), max_depth=levels + 10) == data


@pytest.mark.parametrize("max_depth", [0, 1, 5, 1024])
def test_max_depth_counts_levels_like_the_engine(max_depth: int) -> None:
    # Godot 4.6 accepts 1025 nested Arrays and refuses 1026 (fixtures array_nested_1025/1026).
    def nested(levels: int) -> bytes:
        return u32(28, 1) * (levels - 1) + u32(28, 0)
    gf.loads(nested(max_depth + 1), max_depth=max_depth)
    with pytest.raises(gf.DecodeError) as info:
        gf.loads(nested(max_depth + 2), max_depth=max_depth)
    assert info.value.offset == (max_depth + 1) * 8


# --- counts: refused before allocating --------------------------------------------------------

def _huge_count_inputs() -> list[Any]:
    cases = []
    for count in (0x7FFF_FFFF, 0xFFFF_FFFF):
        for dialect in ("godot3", "godot4"):
            t = functools.partial(tid, dialect)
            cases += [
                pytest.param(dialect, u32(t("Array"), count, 0, 0), False, id=f"{dialect}-Array-{count:x}"),
                pytest.param(dialect, u32(t("Dictionary"), count, 0, 0), False, id=f"{dialect}-Dictionary-{count:x}"),
                pytest.param(dialect, u32(t("NodePath"), count | 0x8000_0000, 0, 0), False,
                             id=f"{dialect}-NodePath-names-{count:x}"),
                pytest.param(dialect, u32(t("NodePath"), 0x8000_0000, count, 0), False,
                             id=f"{dialect}-NodePath-subnames-{count:x}"),
                pytest.param(dialect, u32(t("String"), count, 0, 0), False, id=f"{dialect}-String-{count:x}"),
                pytest.param(dialect, u32(t("PackedByteArray"), count, 0, 0), False, id=f"{dialect}-PBA-{count:x}"),
            ]
            if count == 0x7FFF_FFFF:
                # As int32 the engines read 0xffffffff as -1: an empty PackedStringArray (tested
                # below) and an Object with no properties (tests/hostile/test_malformed.py, hostile_counts).
                cases += [
                    pytest.param(dialect, u32(t("PackedStringArray"), count, 0, 0), False,
                                 id=f"{dialect}-PackedStringArray-{count:x}"),
                    pytest.param(dialect, u32(t("Object"), 1) + b"A\0\0\0" + u32(count), True,
                                 id=f"{dialect}-Object-{count:x}"),
                ]
        cases += [
            pytest.param("godot4", u32(28 | 2 << 16, count, 0, 0), True, id=f"typed-Array-class-name-{count:x}"),
            pytest.param("godot4", u32(21, count, 0, 0), False, id=f"StringName-{count:x}"),
            pytest.param("godot4", u32(26, count, 0, 0), False, id=f"Signal-name-{count:x}"),
            pytest.param("docs-godot4", u32(tid("docs-godot4", "PackedInt64Array"), count, count, 0), False,
                         id=f"docs-godot4-PackedInt64Array-u64-count-{count:x}"),
        ]
    return cases


@pytest.mark.parametrize("dialect, data, objects", _huge_count_inputs())
def test_huge_counts_are_refused_before_allocating(dialect: str, data: bytes, objects: bool) -> None:
    assert len(data) == 16
    gf.loads(b"\0\0\0\0", dialect, allow_objects=objects)  # build the cached decoder first
    tracemalloc.start()
    try:
        with pytest.raises(gf.DecodeError) as info:
            gf.loads(data, dialect, allow_objects=objects)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The field that announced the count: the property count of the Object, else the first field.
    assert info.value.offset == (12 if data[8:12] == b"A\0\0\0" else 4), info.value
    assert peak < 64 * 1024, f"{peak} bytes allocated to refuse a 16-byte input"


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_negative_packed_string_array_count_is_empty(dialect: str) -> None:
    # Godot's loop runs `for (int32_t i = 0; i < count; i++)`: -1 reads as empty
    # (fixture godot3 odd_psa_negative_count: re-encoded as an empty PoolStringArray).
    data = u32(tid(dialect, "PackedStringArray"), 0xFFFF_FFFF, 0, 0)
    assert gf.decode(data, dialect) == (gf.PackedStringArray(), 8)


def _packed_cases() -> list[Any]:
    cases = []
    for dialect in DIALECTS:
        d = gf.get_dialect(dialect)
        for name, (cls, _) in PACKED_TYPES.items():
            if d.has(name):
                cases.append(pytest.param(dialect, name, cls, id=f"{dialect}-{name}"))
        cases.append(pytest.param(dialect, "PackedByteArray", bytes, id=f"{dialect}-PackedByteArray"))
    return cases


def _two_elements(cls: Any) -> Any:
    if cls is bytes:
        return b"\x01\x02\x03\x04\x05\x06\x07\x08"
    if cls.width == 1:
        return cls([1, 2])
    return cls([tuple(range(cls.width)), tuple(range(cls.width))])


@pytest.mark.parametrize("dialect, name, cls", _packed_cases())
def test_packed_array_count_larger_than_the_data(dialect: str, name: str, cls: Any) -> None:
    good = gf.dumps(_two_elements(cls), dialect)
    wide = name in ("PackedInt64Array", "PackedFloat64Array") and gf.get_dialect(dialect).int64_array_count_size == 8
    count_size = 8 if wide else 4
    count = int.from_bytes(good[4:4 + count_size], "little")
    for bad_count in (count + 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, *([2**64 - 1] if wide else [])):
        bad = good[:4] + bad_count.to_bytes(count_size, "little") + good[4 + count_size:]
        with pytest.raises(gf.DecodeError) as info:
            gf.loads(bad, dialect)
        assert info.value.offset == 4, (bad_count, info.value)
    if cls is not bytes:  # the byte array's final padding is optional to the engines
        with pytest.raises(gf.DecodeError) as info:
            gf.loads(good[:-1], dialect)
        assert info.value.offset == 4


@pytest.mark.parametrize("dialect, name", [
    (d, name) for d in ENGINE_DIALECTS if gf.get_dialect(d).math_flag_64
    for name in ("PackedVector2Array", "PackedVector3Array", "PackedVector4Array") if gf.get_dialect(d).has(name)])
def test_packed_vectors_flagged_64_bit_need_twice_the_data(dialect: str, name: str) -> None:
    width = {"PackedVector2Array": 2, "PackedVector3Array": 3, "PackedVector4Array": 4}[name]
    data = u32(tid(dialect, name) | FLAG_64, 1) + b"\0" * (4 * width)  # float32-sized data only
    with pytest.raises(gf.DecodeError) as info:
        gf.loads(data, dialect)
    assert info.value.offset == 4


# --- strings: invalid UTF-8 points at the bad sequence --------------------------------------

#: kind -> (bytes, index of the first byte of the invalid sequence).  Every kind the engine
#: fixtures refuse (godot3/godot4 malformed.jsonl), plus a few neighbours.
BAD_UTF8 = {
    "lone_continuation": (b"a\x80", 1),
    "invalid_start_ff_fe": (b"a\xff\xfeb", 1),
    "bad_continuation_c3_28": (b"\xc3\x28", 0),
    "overlong_c0_af": (b"\xc0\xaf", 0),
    "overlong_e0_80_af": (b"\xe0\x80\xaf", 0),
    "surrogate_ed_a0_80": (b"\xed\xa0\x80", 0),
    "above_10ffff": (b"\xf4\x90\x80\x80", 0),
    "f5_start": (b"\xf5\x80\x80\x80", 0),
    "truncated_e6_97": (b"a\xe6\x97", 1),
    "truncated_at_end": (b"ab\xe6", 2),
}

MARK = "\x07"


def _string_places(dialect: str) -> dict[str, tuple[Any, bool]]:
    """Where a String can sit: place -> (value holding MARK strings, needs objects)."""
    d = gf.get_dialect(dialect)
    places: dict[str, tuple[Any, bool]] = {
        "String": (MARK, False),
        "Array element": ([1, MARK], False),
        "Dictionary key": ({MARK: 1}, False),
        "Dictionary value": ({"k": MARK}, False),
        "PackedStringArray element": (gf.PackedStringArray(["ok", MARK]), False),
    }
    if not d.node_path_old_format:
        places["NodePath name"] = (gf.NodePath(names=["a", MARK]), False)
        places["NodePath subname"] = (gf.NodePath(names=["a"], subnames=[MARK]), False)
    if d.has("StringName"):
        places["StringName"] = (gf.StringName(MARK), False)
    if d.has("Signal"):
        places["Signal name"] = (gf.Signal(MARK, 1), False)
    if d.object_format == "engine":
        places["Object class name"] = (gf.Object(MARK), True)
        places["Object property name"] = (gf.Object("A", {MARK: 1}), True)
    if d.typed_arrays:
        places["typed Array class name"] = (gf.TypedArray(gf.ContainerType.of_class(MARK), []), True)
    return places


def _utf8_cases() -> list[Any]:
    return [pytest.param(dialect, place, kind, id=f"{dialect}-{place}-{kind}")
            for dialect in DIALECTS for place in _string_places(dialect) for kind in BAD_UTF8]


@pytest.mark.parametrize("dialect, place, kind", _utf8_cases())
def test_invalid_utf8_points_at_the_bad_sequence(dialect: str, place: str, kind: str) -> None:
    bad, index = BAD_UTF8[kind]
    value, objects = _string_places(dialect)[place]
    template = gf.dumps(_replace_mark(value, MARK * len(bad)), dialect, allow_objects=objects)
    marker = (MARK * len(bad)).encode()
    at = template.index(marker)
    data = template[:at] + bad + template[at + len(bad):]
    d = gf.get_dialect(dialect)
    if kind == "surrogate_ed_a0_80" and d.utf8_surrogates:
        # Godot 3's parser lets encoded surrogates through (fixture bad_utf8_surrogate): so do we.
        value = gf.loads(data, dialect, allow_objects=objects)
        assert gf.dumps(value, dialect, allow_objects=objects) == data
        return
    with pytest.raises(gf.DecodeError, match="UTF-8") as info:
        gf.loads(data, dialect, allow_objects=objects)
    assert info.value.offset == at + index, info.value


def _replace_mark(value: Any, mark: str) -> Any:
    if isinstance(value, str):
        return type(value)(mark) if value == MARK else value
    if isinstance(value, gf.TypedArray):
        return gf.TypedArray(gf.ContainerType.of_class(mark), [])
    if isinstance(value, gf.PackedStringArray):
        return gf.PackedStringArray(mark if s == MARK else s for s in value)
    if isinstance(value, list):
        return [_replace_mark(v, mark) for v in value]
    if isinstance(value, dict):
        return {_replace_mark(k, mark): _replace_mark(v, mark) for k, v in value.items()}
    if isinstance(value, gf.NodePath):
        return gf.NodePath(names=[_replace_mark(n, mark) for n in value.names],
                           subnames=[_replace_mark(n, mark) for n in value.subnames], absolute=value.absolute)
    if isinstance(value, gf.Signal):
        return gf.Signal(_replace_mark(value.name, mark), value.object_id)
    if isinstance(value, gf.Object):
        return gf.Object(_replace_mark(value.class_name, mark),
                         {_replace_mark(k, mark): v for k, v in value.properties.items()})
    return value


# --- unknown type ids ---------------------------------------------------------------------------

def _unknown_ids(d: Dialect) -> list[int]:
    ids = list(range(d.variant_max, 256))
    if d.type_mask > 0xFF:  # the pages' wider masks: ids past 255 are unknown too, not aliases
        ids += [0x100, 0x1000 | 2, d.type_mask]
    return ids


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unknown_type_ids(dialect: str) -> None:
    d = gf.get_dialect(dialect)
    for type_id in _unknown_ids(d):
        for prefix in (b"", u32(tid(dialect, "Array"), 1)):
            data = prefix + u32(type_id, 0, 0)
            with pytest.raises(gf.DecodeError, match="type") as info:
                gf.loads(data, dialect)
            assert info.value.offset == len(prefix), (type_id, info.value)


# --- truncation at every byte -----------------------------------------------------------------

def _fixture_blobs() -> list[Any]:
    """Every distinct blob in the fixtures of both engines (written, fed or re-encoded by the
    engine), decoded in that engine's dialect; with objects allowed, so Object paths are cut too."""
    params = []
    for engine in ("godot3", "godot4"):
        seen: set[bytes] = set()
        for path in sorted((FIXTURES / engine).glob("*.jsonl")):
            for case in read_jsonl(path):
                for key in ("hex", "hex_full_objects", "in_hex"):
                    text = case.get(key)
                    if not isinstance(text, str) or not text or len(text) > 2 * 16384:
                        continue
                    blob = bytes.fromhex(text)
                    if blob not in seen:
                        seen.add(blob)
                        params.append(pytest.param(engine, blob, True, id=f"{engine}-{path.stem}-{case['name']}-{key}"))
    return params


def _cuts(n: int) -> list[int]:
    """Every cut of a blob, except in the middle of the few blobs over 2 KiB (1000 nested Arrays,
    the same 8 bytes over and over): there every 97th, which still meets every field offset mod 8."""
    if n <= 2048:
        return list(range(n))
    return [i for i in range(n) if i < 512 or i >= n - 256 or i % 97 == 0]


@pytest.mark.slow
@pytest.mark.parametrize("dialect, blob, objects", _fixture_blobs())
def test_truncated_at_every_byte(dialect: str, blob: bytes, objects: bool) -> None:
    for i in _cuts(len(blob)):
        result = decode_or_refuse(blob[:i], dialect, allow_objects=objects)
        if not isinstance(result, gf.DecodeError):
            assert result[1] <= i  # a complete value that happens to end early


# --- objects --------------------------------------------------------------------------------------

CLASS = "HostileClass"


def _object_nests() -> dict[str, Any]:
    obj = gf.Object(CLASS, {"script": "res://evil.gd", "p": 1})
    nests: dict[str, Any] = {
        "top level": obj,
        "in an Array": [1, obj],
        "500 Arrays deep": _deep_list(obj, 500),
        "1023 Arrays deep": _deep_list(obj, 1023),
        "Dictionary value": {"k": obj},
        "Dictionary key": gf.Dictionary([(obj, 1)]),
        "property of an Object": gf.Object("Outer", {"child": obj}),
    }
    return nests


def _deep_list(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("dialect", OBJECT_DIALECTS)
@pytest.mark.parametrize("where", list(_object_nests()))
def test_full_objects_refused_at_any_depth(dialect: str, where: str) -> None:
    value = _object_nests()[where]
    data = gf.dumps(value, dialect, allow_objects=True, max_depth=2048)
    first_object = data.index(text(b"Outer") if where == "property of an Object" else text(CLASS.encode())) - 4
    with pytest.raises(gf.DecodeError, match="allow_objects") as info:
        gf.loads(data, dialect)
    assert info.value.offset == first_object
    # Allowed, they are data: nothing is instantiated, loaded or run.
    decoded = gf.loads(data, dialect, allow_objects=True)
    objects = [v for v in walk(decoded) if isinstance(v, gf.Object)]
    assert objects and all(type(o) is gf.Object for o in objects)
    assert {o.class_name for o in objects} <= {CLASS, "Outer"}


def test_docs_godot4_never_yields_an_object_without_allow_objects() -> None:
    """The outdated 4.x page has no flag to tell an id from a full Object, so without
    allow_objects the bytes are read as an id: no Object can come out of them."""
    data = gf.dumps([gf.Object(CLASS, {"p": 1})], "docs-godot4", allow_objects=True)
    result = decode_or_refuse(data, "docs-godot4")
    if not isinstance(result, gf.DecodeError):
        assert not any(isinstance(v, gf.Object) for v in walk(result[0]))


@pytest.mark.parametrize("dialect", [d for d in TYPED_ARRAY_DIALECTS if gf.get_dialect(d).engine])
def test_typed_array_script_path_is_data(dialect: str) -> None:
    """An Array typed with a script: the engine loads the res:// script; we keep its path as a string."""
    data = u32(28 | 3 << 16) + text(b"res://evil.gd") + u32(0)
    value = gf.loads(data, dialect, allow_objects=True)
    assert value.element_type == gf.ContainerType.of_script("res://evil.gd")
    with pytest.raises(gf.DecodeError) as info:  # engine: "Invalid script path" outside res://
        gf.loads(u32(28 | 3 << 16) + text(b"/etc/x.gd") + u32(0), dialect, allow_objects=True)
    assert info.value.offset == 4


# --- the encoder ------------------------------------------------------------------------------------

def _self_referencing() -> dict[str, Any]:
    lst: list[Any] = [1]
    lst.append(lst)
    dct: dict[str, Any] = {}
    dct["self"] = dct
    a: list[Any] = []
    b: list[Any] = [a]
    a.append(b)
    obj = gf.Object("Node")
    obj.properties["me"] = obj
    typed = gf.TypedArray("Array", [])
    typed.append(typed)
    return {"list": lst, "dict": dct, "mutual lists": a, "object": obj, "typed array": typed}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", list(_self_referencing()))
def test_self_referencing_values_are_refused(dialect: str, name: str) -> None:
    value = _self_referencing()[name]
    def refuse() -> None:
        with pytest.raises(gf.EncodeError):
            gf.dumps(value, dialect, allow_objects=True)

    assert calls_made(refuse) < 200_000  # stops at the depth limit


@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
def test_deep_values_stop_at_the_depth_limit(dialect: str) -> None:
    with pytest.raises(gf.EncodeError, match="nested deeper"):
        gf.dumps(_deep_list(1, DEEP), dialect)
    gf.dumps(_deep_list(1, 1024), dialect)  # the engines write 1025 levels


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("number", [2**63, -(2**63) - 1, 2**64, 2**100, -(2**1000)])
def test_ints_beyond_int64_are_refused(dialect: str, number: int) -> None:
    with pytest.raises(gf.EncodeError, match="64 bits"):
        gf.dumps(number, dialect)
    with pytest.raises(gf.EncodeError) as info:
        gf.dumps({"k": [0, number]}, dialect)
    assert info.value.path == "['k'][1]"


@pytest.mark.parametrize("value", [gf.Vector2i(2**31, 0), gf.Vector3i(0, -(2**31) - 1, 0),
                                   gf.Rect2i(gf.Vector2i(2**40))])
def test_int32_components_out_of_range_are_refused(value: Any) -> None:
    with pytest.raises(gf.EncodeError):
        gf.dumps(value, "godot4")


# --- memory and time are linear in the input ----------------------------------------------------

#: One element of a 96 KiB Array, chosen for the most Python memory per input byte we found
#: (Dictionaries keyed by empty Arrays: ~27x; plain values 1-16x).
AMPLIFIERS = {
    "Nil": u32(0),
    "empty Array": u32(28, 0),
    "empty Dictionary": u32(27, 0),
    "Callable": u32(25),
    "StringName": u32(21, 0),
    "Vector2": u32(5, 0, 0),
    "empty typed Array": u32(28 | 1 << 16, 2, 0),
    "empty typed Dictionary": u32(27 | 1 << 16 | 1 << 18, 2, 2, 0),
    "empty PackedVector2Array": u32(35, 0),
    "empty PackedStringArray": u32(34, 0),
    "Dictionary keyed by an empty Array": u32(27, 1, 28, 0, 0),
    "Object": u32(24, 1) + b"A\0\0\0" + u32(0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(AMPLIFIERS))
def test_memory_is_linear_in_the_input(name: str) -> None:
    item = AMPLIFIERS[name]
    n = (96 * 1024) // len(item)
    data = u32(28, n) + item * n
    gf.loads(b"\0\0\0\0", allow_objects=True)
    tracemalloc.start()
    try:
        value = gf.loads(data, allow_objects=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(value) == n
    assert peak < 40 * len(data), f"{peak / len(data):.1f} bytes of Python memory per input byte"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AMPLIFIERS))
def test_work_is_linear_in_the_input(name: str) -> None:
    """Counted in Python function calls (deterministic), never timed: 8x the input, at most 8x the work."""
    item = AMPLIFIERS[name]
    counts = [calls_made(lambda n=n: gf.loads(u32(28, n) + item * n, allow_objects=True)) for n in (1_000, 8_000)]
    assert counts[1] <= 8 * counts[0] + 100, counts


@pytest.mark.slow
def test_number_keys_chosen_to_collide_do_not_go_quadratic() -> None:
    """Hash flooding: only small groups of distinct floats share a hash (ints: at most 4 in
    int64), and every other key type mixes in a per-process random string hash (attrs' class
    hash, godot_key's tags), so a 1 MiB Dictionary of chosen keys stays linear."""
    keys: list[float] = []
    h = 1
    while len(keys) < 20_000:
        keys += floats_sharing_a_hash(h)
        h += 1
    chosen = keys[:20_000]
    data = u32(27, len(chosen)) + b"".join(struct.pack("<Id", 3 | FLAG_64, k) + u32(0) for k in chosen)
    decoded = gf.loads(data)
    assert len(decoded) == len(chosen)
    # A dict probe costs at most the number of keys sharing its hash: for floats Python's
    # fixed hash allows at most 67 per hash value (checked over 3,000 targets in
    # benchmarks/hostile.py), so inserting n keys is at most 67n comparisons: linear.
    assert max(collections.Counter(map(hash, decoded)).values()) <= 67


# --- regressions from the coverage-guided fuzzer (fuzz/fuzz_decode.py) ----------------------------

def _nested_array_key(depth: int) -> bytes:
    """{[[[...]]]: 1} with the key nested ``depth`` Arrays deep (well inside the 1024 limit)."""
    return u32(27, 1) + u32(28, 1) * (depth - 1) + u32(28, 0) + u32(2, 1)


@pytest.mark.parametrize("depth", [500, 1000])
def test_fuzz_finding_deep_dictionary_key_decodes(depth: int) -> None:
    """Found in 90 s of fuzzing (fuzz/crashes/godot-key-recursion-*, fixed in 96050ca): ``types.godot_key``
    recursed, so a Dictionary keyed by an Array ~500 deep raised RecursionError.  Godot 4.6 and 3.2.3 decode
    it and write it back unchanged (fixtures deep_dictionary_keys.jsonl)."""
    data = _nested_array_key(depth)
    value = gf.loads(data)
    assert gf.dumps(value) == data


def test_fuzz_finding_packed_string_nul_in_documented_dialects() -> None:
    """fuzz/crashes/psa-trailing-nul-*: the documented pages write PackedStringArray elements
    without a NUL, yet the decoder stripped a trailing one: ["a\\0"] came back as ["a"] (fixed in 97f33a3)."""
    for dialect in [d for d in DIALECTS if not gf.get_dialect(d).packed_string_nul]:
        value = gf.PackedStringArray(["a\0", "\0", ""])
        assert gf.loads(gf.dumps(value, dialect), dialect) == value, dialect


def test_fuzz_finding_float64_keys_in_a_float32_dialect() -> None:
    """fuzz/crashes/float64-key-narrowed-*: Vector2 keys flagged 64-bit that are equal once
    narrowed to float32 were written as two equal keys (fixed in 97f33a3).  Godot 4.6 (a float build) narrows as it
    reads and keeps one key, the first, with the last value (fixture double_flag_in_float_build)."""
    [case] = [c for c in read_jsonl(FIXTURES / "godot4" / "double_flag_in_float_build.jsonl")
              if c["name"] == "dict_vector2_keys_equal_as_float32"]
    value = gf.loads(bytes.fromhex(case["in_hex"]), "godot4")
    assert gf.dumps(value, "godot4") == bytes.fromhex(case["hex"])


def _saved_findings() -> list[Any]:
    return [pytest.param(p, id=p.name) for p in sorted(CRASHES.glob("*")) if p.is_file() and p.name != "README.md"]


@pytest.mark.slow
@pytest.mark.parametrize("path", _saved_findings())
def test_saved_fuzz_inputs_obey_the_contract(path: Path) -> None:
    """What fuzz_decode.py checks: the contract, plus decode(encode(v)) writing the same bytes."""
    data = path.read_bytes()
    # 20 decodes and re-encodes of an input of at most 16 KiB: work linear in its size.
    assert calls_made(lambda: check_blob(data)) < 2_000 * len(data) + 200_000
    for dialect in DIALECTS:
        for objects in (False, True):
            result = decode_or_refuse(data, dialect, allow_objects=objects)
            if not isinstance(result, gf.DecodeError):
                written = gf.dumps(result[0], dialect, allow_objects=objects)
                again = gf.loads(written, dialect, allow_objects=objects)
                assert gf.dumps(again, dialect, allow_objects=objects) == written, dialect


def test_fuzz_corpus_replays_with_only_decode_errors() -> None:
    """Every input in fuzz/corpus (the fuzzer's finds and the hostile-shape seeds), in every dialect:
    a value that re-encodes, or a DecodeError."""
    corpus = sorted((Path(__file__).resolve().parents[2] / "fuzz" / "corpus").iterdir())
    assert len(corpus) > 700
    for path in corpus:
        blob = path.read_bytes()
        for dialect in ("godot3", "godot4", "godot4-double", "docs-godot4"):
            try:
                value = gf.loads(blob, dialect, allow_objects=True)
            except gf.DecodeError:
                continue
            try:
                gf.dumps(value, dialect, allow_objects=True)
            except gf.EncodeError:
                pass


def test_fuzz_corpus_opens_as_files_with_only_library_errors() -> None:
    """Every input in fuzz/corpus as a save file (layers, framing, detection), as the fuzz target
    opens it too: a result or the library's error.  The corpus holds the hostile file shapes
    (compressed layers that declare more than they hold, blocks of empty Zstd frames)."""
    corpus = sorted((Path(__file__).resolve().parents[2] / "fuzz" / "corpus").iterdir())
    layered = 0
    for path in corpus:
        blob = path.read_bytes()
        layered += blob[:4] == b"GCPF"
        try:
            gf.open(blob)
        except gf.GodotFormatsError:
            pass
    assert layered >= 6


def test_loss_paths_under_a_deep_path_cost_each_level_once() -> None:
    """N losses under a path M levels deep render in about N + M steps, not N x M (288 KB once took 16 s)."""
    from godot_formats.migration import losses, values

    depth, wide = 300, 500
    value: list[Any] = []
    cur = value
    for _ in range(depth):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    cur.extend(gf.Vector2i(i, 2) for i in range(wide))
    converter = values._Converter(gf.get_dialect("godot4"), gf.get_dialect("godot3"))
    converter.run(value)
    assert len(converter.losses) == wide
    # every node of the paths is known once: the depth and the leaves, nothing walked twice
    assert len(converter.known_paths) <= depth + wide + 1
    hidden = depth + 1 - losses.PATH_HEAD - losses.PATH_TAIL
    assert converter.losses[7].path == "[0]" * losses.PATH_HEAD + f"...({hidden} levels)..." + \
        "[0]" * (losses.PATH_TAIL - 1) + "[7]"
    # the same text as the walk without the memory of known nodes
    assert [loss.path for loss in converter.losses[:20]] == [
        losses.render(_path(depth, i)) for i in range(20)]


def _path(depth: int, leaf: int) -> Any:
    path: Any = ""
    for _ in range(depth):
        path = (path, "[]", 0)
    return (path, "[]", leaf)
