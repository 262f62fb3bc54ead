"""explain(): one line per field of engine-written bytes, and never a traceback on bad bytes.

The blobs are the engines' own (fixtures/godot3 from Godot 3.2.3, fixtures/godot4 from 4.6,
fixtures/*/malformed.jsonl: the bad inputs the engines were fed); the listing is checked
against what those bytes are, field by field.  On malformed input the last line must carry
the decoder's own DecodeError message, and explain must agree with the decoder on every
input: it lists a complete value exactly when the decoder reads one.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from conftest import engine_cases
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.views.explain import MAX_INDENT_DEPTH, Field, explain, explain_fields

CASES = {engine: {c["name"]: c for c in engine_cases(engine)} for engine in ("godot3", "godot4")}


def blob(engine: str, name: str, key: str = "hex") -> bytes:
    return bytes.fromhex(CASES[engine][name][key])


def lines(data: bytes, dialect: str = "godot4", **options: Any) -> list[str]:
    """The listing without its column heading, each line stripped of the offset/hex columns' padding."""
    return [" ".join(line.split()) for line in explain(data, dialect, **options).splitlines()[1:]]


def meanings(data: bytes, dialect: str = "godot4", **options: Any) -> list[str]:
    return [f.text for f in explain_fields(data, dialect, **options)]


def test_dictionary_listing() -> None:
    # {"a": 1} as Godot 4.6 wrote it
    assert lines(blob("godot4", "dict_str_int")) == [
        "0 1b000000 Dictionary (type 27)",
        "4 01000000 count: 1",
        "8 04000000 key 0: String (type 4)",
        "12 01000000 length: 1 byte",
        '16 61 "a"',
        "17 000000 padding: 3 bytes, zero",
        "20 02000000 value 0: int (type 2)",
        "24 01000000 int32: 1",
        "28 end: the value is 28 bytes; no trailing bytes",
    ]


def test_nesting_is_indented() -> None:
    fields = list(explain_fields(blob("godot4", "dict_nested")))
    depth = {f.text: f.depth for f in fields}
    assert depth["Dictionary (type 27)"] == 0
    assert depth["value 0: Dictionary (type 27)"] == 1
    assert depth["value 0: Array (type 28)"] == 2
    assert depth["[1] Dictionary (type 27)"] == 3
    text = explain(blob("godot4", "dict_nested"))
    assert "\n    56  1b000000                  [1] Dictionary (type 27)\n" in text


def test_odd_length_byte_array_and_its_padding() -> None:
    assert lines(blob("godot4", "packed_byte_len3_odd")) == [
        "0 1d000000 PackedByteArray (type 29)",
        "4 03000000 count: 3",
        "8 010203 bytes 0-2",
        "11 00 padding: 1 byte, zero",
        "12 end: the value is 12 bytes; no trailing bytes",
    ]
    # The engine does not require the last padding: a blob that stops after the data still reads.
    cut = blob("godot4", "packed_byte_len3_odd")[:11]
    assert gf.loads(cut) == b"\x01\x02\x03"
    assert "padding: missing (1 bytes; the engine does not require it at the end)" in meanings(cut)


def test_node_path_fields_and_uninitialised_padding() -> None:
    # ^"/root/a:position:x": Godot 4.6 left garbage in the padding after "a" (godot#44999)
    out = lines(blob("godot4", "nodepath_absolute_subname"))
    assert out[:4] == [
        "0 16000000 NodePath (type 22)",
        "4 02000080 name count: 2 (| 0x80000000, the new format)",
        "8 02000000 subname count: 2",
        "12 01000000 flags: 1 (absolute)",
    ]
    assert '20 726f6f74 "root"' in out
    assert "29 290000 padding: 3 bytes, NOT zero (engines before 4.6.3 leave it uninitialised: godot#44999)" in out
    assert '36 706f7369 74696f6e "position"' in out
    assert "49 000000 padding: 3 bytes, zero" in out


def test_typed_containers() -> None:
    assert lines(blob("godot4", "array_typed_int"))[:4] == [
        "0 1c000100 Array (type 28), typed: element builtin type",
        "4 02000000 element type: int (type 2)",
        "8 03000000 count: 3",
        "12 02000000 [0] int (type 2)",
    ]
    full = meanings(blob("godot4", "dict_typed_script_value_nonempty", "hex_full_objects"), allow_objects=True)
    assert full[:5] == [
        "Dictionary (type 27), typed: key builtin type, value script path",
        "key type: int (type 2)",
        "value script path length: 19 bytes",
        '"res://oracle_res.gd"',
        "padding: 1 byte, zero",
    ]
    assert "value 0: Object (type 24), full object" in full
    assert 'property "script": String (type 4)' in full
    # without objects the engine names the class EncodedObjectAsID (godot#94379)
    plain = meanings(blob("godot4", "array_typed_classname_resource"))
    assert plain[:3] == ["Array (type 28), typed: element class name", "element class name length: 17 bytes",
                         '"EncodedObjectAsID"']
    assert "[0] Object (type 24), as id" in plain


def test_godot3_vocabulary() -> None:
    # Every Godot 3.2.3 blob is headed by its type in Godot 3's own names (Quat, PoolIntArray ...)
    d = gf.get_dialect("godot3")
    for name, value in CASES["godot3"].items():
        if not value.get("hex") or value.get("raw"):
            continue
        first = meanings(bytes.fromhex(value["hex"]), "godot3", allow_objects=True)[0]
        type_id = int.from_bytes(bytes.fromhex(value["hex"])[:4], "little") & 0xFF
        assert first.startswith(f"{d.native_name(d.types[type_id])} (type {type_id})"), name
    assert meanings(blob("godot3", "quat"), "godot3")[:2] == ["Quat (type 10)",
                                                              "Quat(1.0, 2.0, 3.0, 4.0) [4 × float32]"]
    assert meanings(blob("godot3", "pia"), "godot3")[0] == "PoolIntArray (type 21)"
    assert meanings(blob("godot3", "transform"), "godot3")[0] == "Transform (type 13)"


def test_flags_in_headers() -> None:
    assert meanings(blob("godot4", "int_i64_max"))[:2] == ["int (type 2), 64-bit", "int64: 9223372036854775807"]
    assert meanings(blob("godot4", "float_0_1"))[:2] == ["float (type 3), 64-bit", "float64: 0.1"]
    assert meanings(blob("godot4", "float_half"))[:2] == ["float (type 3)", "float32: 0.5"]
    assert meanings(blob("godot4", "object_refcounted"))[0] == "Object (type 24), as id"
    assert meanings(blob("godot4", "object_refcounted", "hex_full_objects"), allow_objects=True)[0] == \
        "Object (type 24), full object"
    double = gf.dumps(t.Vector2(1, 2), "godot4-double")
    assert meanings(double, "godot4-double")[:2] == [
        "Vector2 (type 5), 64-bit components (double-precision build)", "Vector2(1.0, 2.0) [2 × float64]"]
    assert meanings(bytes.fromhex("0200fe00") + bytes(4))[0] == \
        "int (type 2), unused header bits 0x00fe0000 set (ignored)"


def test_math_types_in_wire_order() -> None:
    # Basis rows on the wire (the engine's rows[i][j]), as Godot's own text prints them
    assert meanings(blob("godot4", "basis"))[1] == "Basis(1.0, 4.0, 7.0, 2.0, 5.0, 8.0, 3.0, 6.0, 9.0) [9 × float32]"
    assert meanings(blob("godot4", "vector2i_extremes"))[1] == "Vector2i(2147483647, -2147483648) [2 × int32]"


def test_strings() -> None:
    out = meanings(blob("godot4", "packed_string"))
    assert out[:5] == ["PackedStringArray (type 34)", "count: 4", "[0] length: 1 byte", '"" + NUL',
                       "padding: 3 bytes, zero"]
    assert '"héllo" + NUL' in out
    long = meanings(blob("godot4", "string_len300"))
    assert long[2].endswith("… (300 characters)")
    assert meanings(blob("godot4", "string_len4"))[1:3] == ["length: 4 bytes", '"abcd"']  # no padding line


def test_packed_arrays_are_capped() -> None:
    value = t.PackedInt64Array(range(100))
    out = meanings(gf.dumps(value), max_elements=3)
    assert out == ["PackedInt64Array (type 31)", "count: 100 (8 bytes each)", "[0] 0", "[1] 1", "[2] 2",
                   "… 97 more elements (776 bytes)", "end: the value is 808 bytes; no trailing bytes"]
    assert len(meanings(gf.dumps(value), max_elements=None)) == 103
    big = meanings(bytes(range(256)) and gf.dumps(bytes(range(200))), max_elements=2)
    assert big[2:5] == ["bytes 0-7", "bytes 8-15", "… 184 more bytes"]


def test_trailing_bytes_and_offset() -> None:
    data = b"\xee" * 4 + gf.dumps(7) + b"\x01\x02\x03"
    assert meanings(data, offset=4) == ["int (type 2)", "int32: 7",
                                         "end: the value is 8 bytes; 3 trailing bytes (ignored by the engine)"]
    assert explain(data, offset=4).splitlines()[1].startswith("     4  02000000")


def test_godot3_rid_and_documented_dialects() -> None:
    assert meanings(blob("godot3", "rid_live"), "godot3")[:2] == ["RID (type 16)", "end: the value is 4 bytes; "
                                                                                    "no trailing bytes"]
    # docs-godot4-fixed64: ints are always 8 bytes, no flag
    assert meanings(gf.dumps(5, "docs-godot4-fixed64"), "docs-godot4-fixed64")[:2] == ["int (type 2)", "int64: 5"]


def test_records_list_one_field_a_line() -> None:
    """RID, Signal, Image and InputEvent are walked by their registry row's layout."""
    assert meanings(gf.dumps(t.RID(5)))[:2] == ["RID (type 23)", "id: 5"]
    assert meanings(gf.dumps(t.Signal("x", 5)))[:5] == [
        "Signal (type 26)", "name length: 1 byte", '"x"', "padding: 3 bytes, zero", "object id: 5"]
    assert meanings(gf.dumps(t.Image(4, 0, 2, 1, b"\x01\x02\x03"), "godot2"), "godot2") == [
        "Image (type 15)", "format: 4", "mipmaps: 0", "width: 2", "height: 1", "data length: 3 bytes",
        "data: 3 bytes", "padding: 1 byte, zero", "end: the value is 28 bytes; no trailing bytes"]
    assert meanings(gf.dumps(t.InputEvent(1, 2, (65, 3)), "godot2"), "godot2") == [
        "InputEvent (type 19)", "event type: 1", "device: 2", "size: 20", "payload [0]: 65", "payload [1]: 3",
        "end: the value is 24 bytes; no trailing bytes"]
    # a truncated Image lists what is there, then the decoder's error
    cut = meanings(gf.dumps(t.Image(4, 0, 2, 1, b"\x01\x02\x03"), "godot2")[:25], "godot2")
    assert cut[-2:] == ["data length: 3 bytes", "error: at byte 20: Image data length 3 runs past the end: "
                                                "1 byte(s) left"]


RECORD_BLOBS = [(gf.dumps(v, d), d) for v, d in [
    (t.Image(4, 1, 2, 1, b"\x01\x02\x03\x04\x05"), "godot2"), (t.Image(), "godot2"),
    (t.InputEvent(1, 2, (65, 3)), "godot2"), (t.InputEvent(3, 0, (1,), 99), "godot2"),
    ([t.InputEvent(8), t.Image(1, 0, 1, 1, b"\x07"), t.EncodedObjectAsID(1)], "godot2"),
    (t.Signal("name", 9), "godot4"), ([t.RID(3), t.Callable()], "godot4")]]


@settings(deadline=None)
@given(index=st.integers(0, len(RECORD_BLOBS) - 1), at=st.integers(0, 10_000), byte=st.integers(0, 255),
       cut=st.booleans(), objects=st.booleans())
def test_mutated_records_agree_with_the_decoder(index: int, at: int, byte: int, cut: bool, objects: bool) -> None:
    blob_, dialect = RECORD_BLOBS[index]
    data = bytearray(blob_)
    i = at % len(data)
    if cut:
        del data[i:]
    else:
        data[i] = byte
    _check_agrees_with_decoder(bytes(data), dialect, objects)


def test_godot2_object_is_its_header_alone() -> None:
    data = gf.dumps(t.EncodedObjectAsID(5), "godot2")
    for objects in (False, True):
        assert meanings(data, "godot2", allow_objects=objects) == [
            "Object (type 18)", "no payload: Godot 2 writes an Object as its type header alone (read as null)",
            "end: the value is 4 bytes; no trailing bytes"]


# -- malformed input never raises --------------------------------------------------------------------------


def _malformed() -> list[Any]:
    params = []
    for engine in ("godot3", "godot4"):
        for case in engine_cases(engine, "malformed"):
            params.append(pytest.param(engine, case, id=f"{engine}-{case['name']}"))
    return params


def _check_agrees_with_decoder(data: bytes, dialect: str, allow_objects: bool) -> list[Field]:
    fields = list(explain_fields(data, dialect, allow_objects=allow_objects))
    explain(data, dialect, allow_objects=allow_objects)  # the text form too
    last = fields[-1]
    try:
        _, end = gf.decode(data, dialect, allow_objects=allow_objects)
    except gf.DecodeError as e:
        assert last.kind == "error" and last.text == f"error: {e}" and last.offset == e.offset
    else:
        assert last.kind == "end" and last.offset == end
    assert sum(f.kind in ("end", "error") for f in fields) == 1
    pos = 0
    for f in fields[:-1]:
        assert f.offset >= pos and f.offset + f.size <= len(data), f
        pos = f.offset + f.size
    return fields


@pytest.mark.slow
@pytest.mark.parametrize("engine, case", _malformed())
def test_malformed_engine_inputs(engine: str, case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["in_hex"])
    for dialect in gf.dialect_names():
        for objects in (False, True):
            _check_agrees_with_decoder(data, dialect, objects)
    fields = _check_agrees_with_decoder(data, engine, bool(case.get("allow_objects")))
    if case["ok"] and engine == "godot4":  # Godot 4.6 read it: so does explain, to the end
        # (Godot 3.2.3 had no nesting limit: we keep 4.x's 1024 levels for every dialect)
        assert fields[-1].kind == "end", fields[-1]


def test_error_lines_name_offset_and_problem() -> None:
    assert meanings(b"") == ["error: at byte 0: expected a 4-byte type header, 0 byte(s) left"]
    cut = blob("godot4", "dict_str_int")[:18]
    out = lines(cut)
    assert out[-2:] == ["12 01000000 length: 1 byte",
                        "12 01000000 6100 error: at byte 12: String length 1 (+3 padding) runs past the end: "
                        "2 byte(s) left"]
    refused = meanings(blob("godot4", "object_refcounted", "hex_full_objects"))
    assert refused == ["Object (type 24), full object",
                       "error: at byte 0: a full Object is only decoded with allow_objects=True"]
    bad_utf8 = meanings(bytes.fromhex("04000000 02000000 c328 0000".replace(" ", "")))
    assert bad_utf8[-1].startswith("error: at byte 8: invalid UTF-8 in String")


def test_deep_nesting() -> None:
    deep = blob("godot4", "array_nesting_1025")
    fields = list(explain_fields(deep))
    assert fields[-1].kind == "end" and max(f.depth for f in fields) == 1025
    too_deep = b"\x1c\x00\x00\x00\x01\x00\x00\x00" * 1100 + b"\x00" * 4
    last = list(explain_fields(too_deep))[-1]
    assert last.kind == "error" and "deeper than 1024" in last.text


@settings(deadline=None)
@given(data=st.binary(max_size=64), dialect=st.sampled_from(gf.dialect_names()), objects=st.booleans())
def test_random_bytes_never_raise(data: bytes, dialect: str, objects: bool) -> None:
    _check_agrees_with_decoder(data, dialect, objects)


FIXTURE_BLOBS = [bytes.fromhex(c[k]) for e in CASES.values() for c in e.values()
                 for k in ("hex", "hex_full_objects") if c.get(k)]


@settings(deadline=None)
@given(index=st.integers(0, len(FIXTURE_BLOBS) - 1), at=st.integers(0, 10_000), byte=st.integers(0, 255),
       cut=st.booleans(), dialect=st.sampled_from(gf.dialect_names()), objects=st.booleans())
def test_mutated_engine_blobs_never_raise(index: int, at: int, byte: int, cut: bool, dialect: str,
                                          objects: bool) -> None:
    data = bytearray(FIXTURE_BLOBS[index])
    if data:
        i = at % len(data)
        if cut:
            del data[i:]
        else:
            data[i] = byte
    _check_agrees_with_decoder(bytes(data), dialect, objects)


# -- output bounded by the input, any depth -----------------------------------------

def _u32(x: int) -> bytes:
    return struct.pack("<I", x)


def _chain(depth: int) -> bytes:
    return (_u32(28) + _u32(1)) * depth


#: The worst shapes of benchmarks/amplification.py, small (Godot 4 bytes).
HOSTILE = {
    "deep_1025": _chain(1024) + _u32(0),
    "nils_at_the_cap": _chain(31) + _u32(28) + _u32(1000) + _u32(0) * 1000,
    "nils_past_the_cap": _chain(1000) + _u32(28) + _u32(1000) + _u32(0) * 1000,
    "one_char_strings_at_the_cap": _chain(31) + _u32(34) + _u32(500) + (_u32(1) + b"a\0\0\0") * 500,
    "one_char_strings_past_the_cap": _chain(1000) + _u32(34) + _u32(500) + (_u32(1) + b"a\0\0\0") * 500,
    "empty_names_at_the_cap": _chain(31) + _u32(22) + _u32(0x80000000 | 1000) + _u32(0) * 2 + _u32(0) * 1000,
}
#: Output bytes per input byte, measured by benchmarks/amplification.py (docs/cli.md): 45.1.
EXPLAIN_BOUND = 48


@pytest.mark.parametrize("name", list(HOSTILE))
def test_output_is_bounded_by_the_input(name: str) -> None:
    data = HOSTILE[name]
    text = explain(data, max_elements=None)
    assert len(text.encode("utf-8")) <= EXPLAIN_BOUND * len(data), len(text) / len(data)
    assert text.splitlines()[-1].split()[1:3] == ["end:", "the"]
    fields = list(explain_fields(data))
    deepest = max(f.depth for f in fields)
    assert deepest == {"deep_1025": 1024}.get(name, deepest)  # Field.depth stays exact (the Nil is at 1024)
    for line in text.splitlines()[1:]:
        meaning = line[29:]  # after "offset  bytes (19 columns)  "
        assert len(meaning) - len(meaning.lstrip(" ")) <= 2 * MAX_INDENT_DEPTH


def test_indentation_stops_at_the_cap_and_deeper_lines_say_their_depth() -> None:
    shallow = explain(_chain(32) + _u32(0)).splitlines()
    assert shallow[-4].endswith(" " * 62 + "[0] Array (type 28)")  # depth 31: as it always was
    assert shallow[-2].endswith(" " * 64 + "[0] Nil (type 0)")  # depth 32, the last indented level
    deep = explain(_chain(34) + _u32(0)).splitlines()
    assert deep[-4].endswith(" " * 64 + "(depth 33) [0] Array (type 28)")
    assert deep[-3].endswith(" " * 64 + "(depth 34) count: 1")
    assert deep[-2].endswith(" " * 64 + "(depth 34) [0] Nil (type 0)")


def test_end_bounds_the_value_without_a_copy() -> None:
    data = _u32(4) + _u32(0) + _u32(99) + _u32(2) + _u32(7)  # String "" then junk, then an int
    assert list(explain_fields(data, end=8)) == list(explain_fields(data[:8]))
    assert list(explain_fields(data, offset=12, end=20))[-1].text == "end: the value is 8 bytes; no trailing bytes"
    assert list(explain_fields(data, end=6))[-1].kind == "error"
