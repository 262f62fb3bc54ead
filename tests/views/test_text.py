"""Godot's text format (var2str / var_to_str) against what the real engines printed.

Every expected string comes from an engine run: fixtures/godot3 (Godot 3.2.3) and
fixtures/godot4 (Godot 4.6) encode, malformed and roundtrip records, plus
text_extra.jsonl (float formatting, escapes, key order, typed containers, depth),
produced from text_extra_catalog.json with tests/oracles.py::

    cat = json.load(open("fixtures/godot4/text_extra_catalog.json"))
    records = oracles.godot4_encode(cat["cases"], cat["prelude"], cat["files"])  # godot3_encode(cases, prelude)
    # one json.dumps(record, ensure_ascii=False, separators=(",", ":")) per line -> text_extra.jsonl

The live tests at the end send fresh random values through the installed engines.
"""

from __future__ import annotations

import json
import math
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, budget, engine_cases, node_path_pad_mask, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import home_dialect, shipped

import godot_formats as gf
from godot_formats.core import registry
from godot_formats.core import types as t
from godot_formats.core.registry import REGISTRY, Family
from godot_formats.views.text import TextDecodeError, from_text, to_text
from godot_formats.views.text.floats import grisu2_text, printf_g
from godot_formats.views.text.order import _all_less_order, _IntroSort, _Order
from godot_formats.views.text.parser import _CONSTRUCTORS, _PACKED_NAMES
from godot_formats.views.text.style import GODOT3_STYLE, GODOT44_STYLE, text_style
from godot_formats.views.text.writer import _WRITERS, _Writer

TEXT_KEY = {"godot3": "var2str", "godot4": "var_to_str"}


def _extra(engine: str) -> list[dict[str, Any]]:
    return read_jsonl(FIXTURES / engine / "text_extra.jsonl")


def _records(engine: str) -> list[tuple[str, dict[str, Any]]]:
    """Every encode record of an engine that the engine itself produced without error."""
    out = []
    for kind, cases in (("encode", engine_cases(engine)), ("text_extra", _extra(engine))):
        for case in cases:
            if case.get("ok"):
                out.append((kind, case))
    return out


def _same_bytes(ours: bytes, engine_bytes: bytes, value: Any, dialect: str, objects: bool) -> bool:
    """Equal bytes, ignoring only NodePath name padding (uninitialised in those engine builds)."""
    if ours == engine_bytes:
        return True
    if len(ours) != len(engine_bytes):
        return False
    mask = node_path_pad_mask(value, dialect, objects)
    return all(a == b or i in mask for i, (a, b) in enumerate(zip(ours, engine_bytes)))


def _named_object_types(value: Any) -> bool:
    """Whether a typed container of the value names a class or a script."""
    stack = [value]
    while stack:
        v = stack.pop()
        for ct in (getattr(v, "element_type", None), getattr(v, "key_type", None), getattr(v, "value_type", None)):
            if ct is not None and ct.kind != 1:
                return True
        if isinstance(v, (dict, t.Dictionary)):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _value(engine: str, case: dict[str, Any]) -> Any:
    """The value the engine printed: raw captures are PackedByteArrays; objects come in full."""
    if case.get("raw"):
        return bytes.fromhex(case["hex"])
    return gf.loads(bytes.fromhex(case.get("hex_full_objects") or case["hex"]), engine, allow_objects=True)


# var_to_str / var2str walk the live object, so they also print script variables without
# storage usage ("hidden" in the catalogs), which var_to_bytes does not write.
SCRIPT_VARIABLES = {
    ("godot3", "object_scripted"), ("godot4", "object_scripted_resource"),
    ("godot4", "dict_typed_script_value_nonempty"), ("godot4", "array_typed_script_res_path_nonempty"),
}
_HIDDEN = re.compile(r',"hidden":\d+')


def _same_text(engine: str, name: str, ours: str, engine_text: str) -> bool:
    if (engine, name) in SCRIPT_VARIABLES:
        return ours == _HIDDEN.sub("", engine_text) and ours != engine_text
    return ours == engine_text


# --- to_text: character for character ------------------------------------------------------------------

TEXT_CASES = [pytest.param(engine, case, id=f"{engine}-{kind}-{case['name']}")
              for engine in ("godot3", "godot4") for kind, case in _records(engine)]


@pytest.mark.parametrize("engine, case", TEXT_CASES)
def test_to_text_matches_the_engine(engine: str, case: dict[str, Any]) -> None:
    ours = to_text(_value(engine, case), engine)
    assert _same_text(engine, case["name"], ours, case[TEXT_KEY[engine]]), (ours, case[TEXT_KEY[engine]])


def test_every_fixture_record_is_covered() -> None:
    # Only the cases the engine itself failed to write are left out (inner classes without a path).
    skipped = {(e, c["name"]) for e in ("godot3", "godot4") for c in engine_cases(e) if not c.get("ok")}
    assert skipped == {("godot4", "object_inner_class_no_path"), ("godot4", "dict_typed_inner_class_key"),
                       ("godot4", "array_typed_inner_class"), ("godot4", "array_nesting_1026")}
    assert len(TEXT_CASES) >= 126 + 170 + 37 + 74


def _decoded_records(engine: str) -> list[Any]:
    params = []
    for kind in ("malformed", "roundtrip"):
        path = FIXTURES / engine / f"{kind}.jsonl"
        if not path.exists():
            continue
        for rec in read_jsonl(path):
            if rec.get("ok") and TEXT_KEY[engine] in rec:
                params.append(pytest.param(engine, rec, id=f"{engine}-{kind}-{rec['name']}"))
    return params


DECODED = _decoded_records("godot3") + _decoded_records("godot4")
OUTPUT_ARTIFACTS = {
    ("godot3", "bad_utf8_surrogate"): "the engine's String holds a lone surrogate, which the oracle can only print "
                                      "as replacement characters",
}


@pytest.mark.parametrize("engine, rec", DECODED)
def test_to_text_of_what_the_engine_decoded(engine: str, rec: dict[str, Any]) -> None:
    """The engine's text of the values it decoded itself, wherever its value is ours.

    The engine's decoder differs from ours on purpose in a few places (it instantiates
    objects with their defaults, cuts strings at NUL, checks typed elements); the
    re-encoded bytes in each record say whether both hold the same value.
    """
    objects = rec.get("allow_objects", False)
    value = gf.loads(bytes.fromhex(rec["in_hex"]), engine, allow_objects=objects, max_depth=20_000)
    ours_bytes = gf.dumps(value, engine, allow_objects=objects, max_depth=20_000)
    if not _same_bytes(ours_bytes, bytes.fromhex(rec["hex"]), value, engine, objects):
        pytest.skip("the engine decoded another value than we do (see test_engine_fixtures)")
    if not objects and _named_object_types(value):
        pytest.skip("without objects the engine's decoder renames class and script container types "
                    "EncodedObjectAsID; ours keeps the name (the re-encoded bytes cannot tell)")
    name = rec["name"].split("/")[0]
    if (engine, name) in OUTPUT_ARTIFACTS:
        pytest.skip(OUTPUT_ARTIFACTS[(engine, name)])
    assert _same_text(engine, name, to_text(value, engine), rec[TEXT_KEY[engine]])


def test_decoded_records_mostly_compare() -> None:
    # Guard against the skip above swallowing everything.
    compared = 0
    for param in DECODED:
        engine, rec = param.values
        objects = rec.get("allow_objects", False)
        value = gf.loads(bytes.fromhex(rec["in_hex"]), engine, allow_objects=objects, max_depth=20_000)
        if len(gf.dumps(value, engine, allow_objects=objects, max_depth=20_000)) == len(bytes.fromhex(rec["hex"])):
            compared += 1
    assert compared >= 230


# --- from_text: engine text back to the engine's bytes ----------------------------------------------------

FLOAT6 = "var2str prints 6 significant digits (of the value cast to float32)"
NEG_ZERO = "-0.0 is printed as 0"
F32_CAST = "var2str casts a float to float32 first: 1e39 prints inf"
F32_DIGITS = "a float32-exact double prints its float32 digits, which read back as a nearby double"
NAN_SIGN = "every NaN prints as nan"
OBJECT_ID = "a live object prints its properties; without full objects the bytes hold its instance id"
SCRIPT_VARS = "the text also holds script variables that the bytes do not"
ENCODED_ID = "an EncodedObjectAsID object prints as the instance id it holds and reads back as that id"
SIGNAL = "Signal() keeps neither the name nor the object"
DICT_ORDER = "keys are printed sorted; the bytes keep insertion order"
OBJECT_TYPE = "Array[Object] reads back as the builtin Object type (as str_to_var does); GDScript wrote class Object"
DEPTH = "var_to_str stops nesting at 100 levels and writes [] / {} / null below"

_LOSSY_GROUPS: dict[str, dict[str, list[str]]] = {
    "godot3": {
        FLOAT6: ["real_2pow24_plus1", "real_flt_max", "real_flt_max_exact", "real_f32_min_subnormal", "real_1e-45",
                 "real_pi", "transform2d_rot", "color8", "real_123456789", "real_tie_1234565", "real_999999_5",
                 "real_1e_40_subnormal_f32", "real_0_3", "real_many", "vector3_fractions", "quat_normalized",
                 "basis_rotated", "transform_rotated", "pool_real_fractions",
                 "dict_vector_keys_approx"],  # (and its key order)
        NEG_ZERO: ["real_neg0", "vector3_neg0_1e39", "pra_special"],
        F32_CAST: ["real_1e39_overflows_f32"],
        OBJECT_ID: ["object_plain/hex", "object_reference/hex", "object_resource/hex", "object_reference_meta/hex",
                    "object_inputeventkey/hex", "object_node/hex", "object_scripted/hex", "object_in_array/hex",
                    "dict_object_value/hex", "object_reference_meta_nested/hex"],
        SCRIPT_VARS: ["object_scripted/hex_full_objects"],
        ENCODED_ID: ["encoded_object_as_id"],
        DICT_ORDER: ["dict_insertion_order", "dict_mixed_keys", "dict_array_keys", "dict_vector_keys_approx",
                     "dict_bool_keys", "dict_nan_keys", "dict_40_int_keys_scrambled", "dict_30_dict_keys_ties",
                     "dict_25_float_keys_with_arrays", "dict_pool_and_nodepath_ties", "dict_nested_sorted",
                     "rid_in_array_and_dict", "object_reference_meta_nested/hex_full_objects"],
    },
    "godot4": {
        NEG_ZERO: ["float_neg0", "packed_float32", "packed_float64"],
        F32_DIGITS: ["float_f32_min_subnormal", "float_f32_0_1_as_double", "float_f32_third_as_double"],
        NAN_SIGN: ["float_neg_nan"],
        OBJECT_ID: ["object_refcounted/hex", "object_plain_object/hex", "object_resource_with_name/hex",
                    "object_scripted_resource/hex", "object_node/hex", "array_with_object_refcounted/hex",
                    "array_typed_classname_resource/hex", "array_typed_script_res_path_nonempty/hex",
                    "dict_typed_script_value_nonempty/hex", "object_resource_meta/hex", "object_nested_in_dict/hex"],
        SCRIPT_VARS: ["object_scripted_resource/hex_full_objects", "dict_typed_script_value_nonempty/hex_full_objects",
                      "array_typed_script_res_path_nonempty/hex_full_objects"],
        ENCODED_ID: ["object_encoded_object_as_id", "object_encoded_object_as_id_42", "object_encoded_as_id_big"],
        SIGNAL: ["signal_ready", "signal_custom"],
        DICT_ORDER: ["dict_order", "dict_nonstring_keys", "dict_string_and_stringname_keys", "dict_array_keys",
                     "dict_vector_keys", "dict_bool_int_float_keys", "dict_nan_keys", "dict_40_int_keys_scrambled",
                     "dict_30_dict_keys_ties", "dict_25_float_keys_with_nans", "dict_mixed_ties_20",
                     "dict_nested_sorted", "typed_dict_in_array", "object_nested_in_dict/hex_full_objects"],
        OBJECT_TYPE: ["array_typed_classname_object"],
        DEPTH: ["array_nesting_1025", "dict_nesting_105", "typed_array_nesting_103", "object_at_depth_102"],
    },
}


def _lossy(engine: str, name: str, key: str) -> str | None:
    for reason, names in _LOSSY_GROUPS[engine].items():
        if name in names or f"{name}/{key}" in names:
            return reason
    return None


ROUND_TRIPS = [pytest.param(engine, case, key, id=f"{engine}-{kind}-{case['name']}-{key}")
               for engine in ("godot3", "godot4") for kind, case in _records(engine)
               for key in ("hex", "hex_full_objects") if case.get(key) and not (case.get("raw") and key != "hex")]


def _canonical(v: Any) -> Any:
    """A comparable form that ignores dictionary order (and treats NaN as NaN)."""
    if isinstance(v, (dict, t.Dictionary)):
        types = (repr(getattr(v, "key_type", None)), repr(getattr(v, "value_type", None)))
        return ("d", types, tuple(sorted((repr(_canonical(k)), repr(_canonical(x))) for k, x in v.items())))
    if isinstance(v, list) and not isinstance(v, t.PackedStringArray):
        return ("a", repr(getattr(v, "element_type", None)), tuple(_canonical(x) for x in v))
    if isinstance(v, t.Object):
        return ("o", v.class_name, tuple((k, _canonical(x)) for k, x in v.properties.items()))
    return t.godot_key(v)


@pytest.mark.parametrize("engine, case, key", ROUND_TRIPS)
def test_engine_text_reads_back_to_the_engine_bytes(engine: str, case: dict[str, Any], key: str) -> None:
    objects = key == "hex_full_objects"
    value = from_text(case[TEXT_KEY[engine]], engine)
    engine_bytes = bytes.fromhex(case[key])
    if case.get("raw"):
        engine_bytes = gf.dumps(engine_bytes, engine)  # the capture itself is the PackedByteArray printed
    try:
        ours = gf.dumps(value, engine, allow_objects=objects)
    except gf.EncodeError:
        ours = b""
    same = _same_bytes(ours, engine_bytes, value, engine, objects)
    reason = _lossy(engine, case["name"], key)
    if reason is None:
        assert same, f"ours   {ours.hex()}\nengine {engine_bytes.hex()}"
        return
    assert not same, f"listed as lossy ({reason}) but the text read back exactly"
    if reason == DICT_ORDER:
        assert _canonical(value) == _canonical(gf.loads(engine_bytes, engine, allow_objects=objects))


def test_lossy_table_names_exist() -> None:
    for engine, groups in _LOSSY_GROUPS.items():
        names = {c["name"] for _, c in _records(engine)}
        for listed in groups.values():
            for item in listed:
                assert item.split("/")[0] in names, item


# --- floats -----------------------------------------------------------------------------------------------

_DOUBLES = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0)


@given(_DOUBLES)
def test_grisu2_reads_back_exactly(x: float) -> None:
    s = grisu2_text(x)
    assert float(s) == x
    assert re.fullmatch(r"-?(\d+(\.\d+)?|0\.0{0,3}\d+)(e[+-]\d{2,3})?", s), s


@given(st.floats(width=32, allow_nan=False, allow_infinity=False).filter(lambda x: x != 0))
def test_grisu2_float32_reads_back_exactly(x: float) -> None:
    s = grisu2_text(x, single=True)
    assert struct.unpack("<f", struct.pack("<f", float(s)))[0] == x


def test_grisu2_is_not_always_the_shortest() -> None:
    # Why repr() cannot stand in for the engine: Grisu2 gives up shortness in rare cases (~0.4%).
    rng = random.Random(7)
    xs = [rng.random() * 10.0 ** rng.randint(-20, 20) for _ in range(3000)]
    longer = [x for x in xs if len(grisu2_text(x)) > len(repr(x).replace("e-0", "e-").replace("e+", "e+0"))]
    assert longer and all(float(grisu2_text(x)) == x for x in longer)


def test_float_layout_boundaries() -> None:
    assert [grisu2_text(x) for x in (1e-5, 0.0001, 1e15, 1e14, 123456789012345.0, 5e-324, 1e100)] == [
        "1e-05", "0.0001", "1e+15", "100000000000000", "123456789012345", "5e-324", "1e+100"]
    assert printf_g(-math.nan) == "-nan" and printf_g(1234565.0) == "1.23456e+06"


def test_version_picks_the_float_rules() -> None:
    # Godot 4.0-4.4 printed 6 digits like Godot 3 (engine source; 4.5 switched to Grisu2, godot#98750).
    assert to_text(16777217.0, "godot4") == "16777217.0"
    assert to_text(16777217.0, "godot4", version="4.4") == "1.67772e+07"
    assert to_text(16777217.0, "godot4.0") == "1.67772e+07"
    assert to_text(-math.inf, "godot4.3") == "inf_neg"
    assert to_text(16777217.0, "godot3") == "1.67772e+07"
    assert text_style("godot4", "3.2.3") is GODOT3_STYLE
    with pytest.raises(ValueError):
        text_style("godot4", "five")


# --- the introsort port -------------------------------------------------------------------------------------

@given(st.lists(st.integers(-50, 50), max_size=80))
def test_introsort_sorts_like_sorted_for_a_total_order(xs: list[int]) -> None:
    ys = list(xs)
    _IntroSort(lambda a, b: a < b).sort(ys)
    assert ys == sorted(xs)


# --- from_text: the forms people write -------------------------------------------------------------------------

@pytest.mark.parametrize("text, dialect, value", [
    ("Vector2( 1, 2 )", "godot4", t.Vector2(1, 2)),
    ("Vector2(1,2)", "godot3", t.Vector2(1, 2)),
    ("PoolIntArray(1, 2)", "godot4", t.PackedInt32Array([1, 2])),
    ("PoolIntArray( 4294967297 )", "godot3", t.PackedInt32Array([1])),
    ("PackedInt64Array(-9223372036854775808)", "godot4", t.PackedInt64Array([-(2 ** 63)])),
    ("Quat( 0, 0, 0, 1 )", "godot4", t.Quaternion()),
    ("Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 5, 6, 7 )", "godot4", t.Transform3D(origin=t.Vector3(5, 6, 7))),
    ("Basis(1, 2, 3, 4, 5, 6, 7, 8, 9)", "godot4", t.Basis.from_rows((1, 2, 3), (4, 5, 6), (7, 8, 9))),
    ("Matrix32(1, 0, 0, 1, 3, 4)", "godot3", t.Transform2D(origin=t.Vector2(3, 4))),
    ("Rect3(1, 2, 3, 4, 5, 6)", "godot3", t.AABB(t.Vector3(1, 2, 3), t.Vector3(4, 5, 6))),
    ("Color(1, 0, 0, 0.5)", "godot4", t.Color(1, 0, 0, 0.5)),
    ("inf", "godot4", math.inf), ("inf_neg", "godot4", -math.inf), ("-inf", "godot4", -math.inf),
    ("-inf.0", "godot3", -math.inf), ("Vector2(inf, -inf)", "godot4", t.Vector2(math.inf, -math.inf)),
    ("1e5", "godot4", 100000.0), ("5.", "godot4", 5.0), ("-0", "godot4", 0),
    ("[1, 2, ]", "godot4", [1, 2]), ("{1: 2, }", "godot4", {1: 2}),
    ("[ 1 ; a comment\n, 2 ]", "godot3", [1, 2]),
    ("#ff000080", "godot4", t.Color(1, 0, 0, 128 / 255)), ("#80ff0000", "godot3", t.Color(1, 0, 0, 128 / 255)),
    ("#f00", "godot4", t.Color(1, 0, 0, 1)),
    ('PackedByteArray("AAEC")', "godot4", b"\x00\x01\x02"), ("PackedByteArray(256, -1)", "godot4", b"\x00\xff"),
    ('"\\u00e9\\U01F600\\uD83D\\uDE00\\t\\q"', "godot4", "é😀😀\tq"),
    ('&"a"', "godot4", t.StringName("a")), ('@"a"', "godot4", t.StringName("a")),
    ('NodePath("/root/a:b")', "godot4", t.NodePath("/root/a:b")),
    ("RID()", "godot4", t.RID()), ("RID(7)", "godot4", t.RID(7)), ("Callable()", "godot4", t.Callable()),
    ("nil", "godot4", None), ("Dictionary[Variant, Variant]({1: 2})", "godot4", {1: 2}),
    ('{1: "a", 1.0: "b", true: "c"}', "godot4", t.Dictionary([(1, "a"), (1.0, "b"), (True, "c")])),
    ('{[1]: 2}', "godot4", t.Dictionary([([1], 2)])),
    ('Array[float]([1, 2.5])', "godot4", t.TypedArray("float", [1.0, 2.5])),
    ('Array[Node]([])', "godot4", t.TypedArray(t.ContainerType.of_class("Node"))),
    ('Dictionary[int, Resource("res://a.gd")]({})', "godot4",
     t.TypedDictionary("int", t.ContainerType.of_script("res://a.gd"))),
    ('Object(Resource,"script":Resource("res://a.gd"))', "godot4", t.Object("Resource", {"script": "res://a.gd"})),
    ('Object(EncodedObjectAsID,"object_id":-5,"script":null)', "godot4", t.EncodedObjectAsID(2 ** 64 - 5)),
    ("", "godot3", t.RID()), ("[ , 1 ]", "godot3", [t.RID(), 1]), ("[  ]", "godot3", []),
    ("{\n: \n}", "godot3", {t.RID(): t.RID()}),
])
def test_from_text_accepts(text: str, dialect: str, value: Any) -> None:
    got = from_text(text, dialect)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text, dialect, offset, words", [
    ("Vector2(1,", "godot4", 10, "end of the text"),
    ("[1 2]", "godot4", 3, "expected ','"),
    ('{"a" 1}', "godot4", 5, "':'"),
    ('"abc', "godot4", 0, "unterminated"),
    ("Vector3(1, 2)", "godot4", 0, "3 numbers"),
    ("foo", "godot4", 0, "identifier 'foo'"),
    ("1 2", "godot4", 2, "end of the text after the value"),
    ('Resource("res://a.gd")', "godot4", 0, "resource file"),
    ('&"x"', "godot3", 0, "StringName"),
    ("Vector2i(1, 2)", "godot3", 0, "no Vector2i"),
    ("Array[int]([])", "godot4.0", 0, "typed Arrays"),
    ('"\\uD800"', "godot4", 7, "lead surrogate"),
    ('"\\uDC00"', "godot4", 1, "trail surrogate"),
    ('"\\u12"', "godot4", 1, "hex constant"),
    ("99999999999999999999", "godot4", 0, "64 bits"),
    ("Vector2i(inf, 1)", "godot4", 0, "integers"),
    ("PackedVector2Array(1, 2, 3)", "godot4", 0, "multiple of 2"),
    ('PackedByteArray("!!")', "godot4", 16, "base64"),
    ("Object(Node,1:2)", "godot4", 12, "property name"),
    ("[\n  1,\n  $]", "godot4", 9, "unexpected character"),
    ("", "godot4", 0, "expected a value"),
    ("#12345", "godot4", 0, "color"),
    ("Callable(1)", "godot4", 9, "')'"),
])
def test_from_text_errors_name_the_character(text: str, dialect: str, offset: int, words: str) -> None:
    with pytest.raises(TextDecodeError) as info:
        from_text(text, dialect)
    err: TextDecodeError = info.value
    assert isinstance(err, gf.DecodeError) and isinstance(err, ValueError)
    assert err.offset == offset and words in str(err), str(err)
    assert str(err).startswith(f"at character {offset} (line {err.line}, column {err.column})")


def test_error_line_and_column() -> None:
    with pytest.raises(TextDecodeError) as info:
        from_text("[\n  1,\n  $]")
    err: TextDecodeError = info.value
    assert (err.line, err.column) == (3, 3)


def test_deep_text_needs_no_recursion() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    text = to_text(deep, "godot3")  # Godot 3 has no depth limit in its writer
    assert text.count("[") == 10_001
    back = from_text(text, "godot3", max_depth=20_000)
    assert gf.dumps(back, "godot3", max_depth=20_000) == gf.dumps(deep, "godot3", max_depth=20_000)
    with pytest.raises(TextDecodeError, match="nested deeper than 1024"):
        from_text(text, "godot3")
    assert to_text(deep, "godot4").count("[") == 102  # Godot 4 writes [] past 100 levels


def test_deep_dictionary_keys_are_refused_cleanly() -> None:
    # Comparing and hashing nested keys recurses (in the engine too): deep ones are refused, not crashed on.
    key: Any = []
    for _ in range(300):
        key = [key]
    with pytest.raises(TextDecodeError, match="deeper than 200") as info:
        from_text("{" + "[" * 300 + "]" * 300 + ": 1}")
    assert info.value.offset == 1
    with pytest.raises(gf.EncodeError, match="deeper than 200"):
        to_text(t.Dictionary([(key, 1), ([1], 2)]))
    shallow: Any = [1]
    for _ in range(150):
        shallow = [shallow]
    assert to_text(t.Dictionary([(shallow, 1), ([0], 2)])).startswith("{\n[0]: 2,\n[[[[")  # fine below the limit


@given(st.text(alphabet='[]{}(),:"&#;-.0123456789eEinfatrulVcor2 \n\\u', max_size=40))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_garbage_raises_only_our_error(text: str) -> None:
    for dialect in ("godot3", "godot4"):
        try:
            from_text(text, dialect)
        except TextDecodeError:
            pass


def test_to_text_refuses_what_the_dialect_cannot_hold() -> None:
    with pytest.raises(gf.EncodeError, match="no Vector2i"):
        to_text(t.Vector2i(1, 2), "godot3")
    with pytest.raises(gf.EncodeError, match="typed Arrays"):
        to_text(t.TypedArray("int", [1]), "godot4.0")
    with pytest.raises(gf.EncodeError, match="64 bits"):
        to_text([2 ** 63], "godot4")
    with pytest.raises(gf.EncodeError, match="cannot write"):
        to_text(object(), "godot4")
    with pytest.raises(TypeError):
        from_text(b"1")  # type: ignore[arg-type]


def test_godot3_rid_is_written_as_nothing() -> None:
    assert to_text([t.RID(), 1, {"k": t.RID()}], "godot3") == '[ , 1, {\n"k": \n} ]'
    assert from_text('[ , 1, {\n"k": \n} ]', "godot3") == [t.RID(), 1, {"k": t.RID()}]
    assert to_text(t.RID(5), "godot4") == "RID(5)"


def test_control_escapes_read_back() -> None:
    # c_escape writes \a and \v; the engine's reader turns them into 'a' and 'v', ours back into BEL and VT.
    sn = t.StringName("\a\v\b\f'?\"\\")
    assert to_text(sn) == '&"\\a\\v\\b\\f\\\'?\\"\\\\"'
    assert from_text(to_text(sn)) == sn
    assert to_text(t.PackedStringArray(["?"]), "godot3") == 'PoolStringArray( "\\?" )'


# --- property: Godot 4 text is lossless for everything it keeps -----------------------------------------------

def _f32(x: float) -> float:
    """The nearest float32 (+-inf past its range), as C's (float) cast."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]  # type: ignore[no-any-return]
    except OverflowError:
        return math.copysign(math.inf, x)


_F32 = st.floats(width=32, allow_nan=False).filter(lambda x: x != 0 or math.copysign(1, x) > 0)
# Doubles whose text is exact: -0.0 prints 0, a NaN prints nan, and a double that happens to be a
# float32 prints its float32 digits; small integers and short binary fractions are such floats but exact.
_F64 = (st.floats(allow_nan=False).filter(lambda x: _f32(x) != x)
        | st.integers(-(2 ** 24), 2 ** 24).map(float) | st.sampled_from([0.5, -0.25, 1.5, math.inf, -math.inf]))
_NAME = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/:"), min_size=1,
                max_size=6)
_TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=8)
_I32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
_I64 = st.integers(-(2 ** 63), 2 ** 63 - 1)


def _scalars4() -> st.SearchStrategy[Any]:
    v2, v3 = st.builds(t.Vector2, _F32, _F32), st.builds(t.Vector3, _F32, _F32, _F32)
    v4 = st.builds(t.Vector4, _F32, _F32, _F32, _F32)
    return st.one_of(
        st.none(), st.booleans(), _I64, _F64, _TEXT, _TEXT.map(t.StringName),
        v2, v3, v4, st.builds(t.Vector2i, _I32, _I32), st.builds(t.Vector3i, _I32, _I32, _I32),
        st.builds(t.Vector4i, _I32, _I32, _I32, _I32), st.builds(t.Rect2, v2, v2),
        st.builds(t.Rect2i, st.builds(t.Vector2i, _I32, _I32), st.builds(t.Vector2i, _I32, _I32)),
        st.builds(t.Transform2D, v2, v2, v2), st.builds(t.Plane, v3, _F32),
        st.builds(t.Quaternion, _F32, _F32, _F32, _F32), st.builds(t.AABB, v3, v3),
        st.builds(t.Basis, v3, v3, v3), st.builds(t.Transform3D, st.builds(t.Basis, v3, v3, v3), v3),
        st.builds(t.Projection, v4, v4, v4, v4), st.builds(t.Color, _F32, _F32, _F32, _F32),
        st.builds(lambda n, s, a: t.NodePath(names=n, subnames=s, absolute=a),
                  st.lists(_NAME, max_size=3), st.lists(_NAME, max_size=2), st.booleans()),
        st.builds(t.RID, st.integers(0, 2 ** 64 - 1)), st.builds(t.EncodedObjectAsID, st.integers(1, 2 ** 64 - 1)),
        st.just(t.Callable()), st.binary(max_size=6),
        st.lists(_I32, max_size=4).map(t.PackedInt32Array), st.lists(_I64, max_size=4).map(t.PackedInt64Array),
        st.lists(_F32, max_size=4).map(t.PackedFloat32Array), st.lists(_F64, max_size=4).map(t.PackedFloat64Array),
        st.lists(_TEXT, max_size=3).map(t.PackedStringArray),
        st.lists(v2, max_size=2).map(t.PackedVector2Array), st.lists(v3, max_size=2).map(t.PackedVector3Array),
        st.lists(v4, max_size=2).map(t.PackedVector4Array),
        st.lists(st.builds(t.Color, _F32, _F32, _F32, _F32), max_size=2).map(t.PackedColorArray),
        st.builds(t.Object, st.sampled_from(["RefCounted", "Resource"]),
                  st.dictionaries(st.sampled_from(["a", "b_c", "script"]), st.integers(0, 9) | _TEXT, max_size=3)),
    )


def _sorted_dict(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    # Insert in the order the engine prints: ints (type 2) before Strings (type 4), each by value.
    return dict(sorted(pairs, key=lambda kv: (isinstance(kv[0], str), kv[0])))


def _values4() -> st.SearchStrategy[Any]:
    keys = st.one_of(_I32, st.text(max_size=4, alphabet="abcXYZé0_ "))

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(st.tuples(keys, children), max_size=4).map(_sorted_dict),
            st.lists(_I32, max_size=3).map(lambda xs: t.TypedArray("int", xs)),
            st.lists(children, max_size=3).map(lambda xs: t.TypedArray("Array", [[x] for x in xs])),
            st.lists(st.tuples(st.text(max_size=3), _I32), max_size=3).map(
                lambda kv: t.TypedDictionary("String", "int", _sorted_dict(kv))),
        )

    return st.recursive(_scalars4(), extend, max_leaves=10)


@given(_values4())
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_godot4_text_round_trips_to_the_same_bytes(value: Any) -> None:
    text = to_text(value, "godot4")
    back = from_text(text, "godot4")
    assert gf.dumps(back, "godot4", allow_objects=True) == gf.dumps(value, "godot4", allow_objects=True), text
    assert to_text(back, "godot4") == text


_G3_FLOATS = st.integers(-99999, 99999).map(float) | st.sampled_from([0.5, -0.25, 1.5, math.inf, -math.inf])


@given(st.recursive(
    st.one_of(st.none(), st.booleans(), _I64, _G3_FLOATS, _TEXT,
              st.builds(t.Vector2, _G3_FLOATS, _G3_FLOATS), st.builds(t.Color, _G3_FLOATS, _G3_FLOATS, _G3_FLOATS,
                                                                        _G3_FLOATS),
              st.lists(_I32, max_size=3).map(t.PackedInt32Array), st.lists(_TEXT, max_size=3).map(t.PackedStringArray),
              st.builds(lambda n: t.NodePath(names=n), st.lists(_NAME, max_size=2))),
    lambda c: st.lists(c, max_size=3) | st.lists(st.tuples(st.one_of(_I32, _TEXT), c), max_size=3).map(_sorted_dict),
    max_leaves=8))
@settings(deadline=None)
def test_godot3_text_round_trips_where_six_digits_suffice(value: Any) -> None:
    text = to_text(value, "godot3")
    assert gf.dumps(from_text(text, "godot3"), "godot3") == gf.dumps(value, "godot3"), text


# --- live engines: random values, the engine's own text ----------------------------------------------------------

def _oracles() -> Any:
    import oracles

    return oracles


class _RandomValues:
    """Values for the live-engine comparison, aimed at where text forms differ: float edges, escapes, key order.

    One method per kind of value, all drawing from the same ``rng`` in a fixed
    order, so a seed always gives the same values.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def real(self) -> float:
        rng = self.rng
        kind = rng.randrange(5)
        if kind == 0:
            return rng.uniform(-1, 1) * 10.0 ** rng.randint(-45, 38)
        if kind == 1:
            return float(rng.randint(-10 ** 9, 10 ** 9)) / rng.choice([1, 3, 7, 1000, 2 ** 20])
        if kind == 2:
            return _f32(rng.uniform(-1e6, 1e6))
        if kind == 3:
            return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-5, 1e15, 1e16, 0.0001, 5e-324])
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 300)

    def f32(self) -> float:
        x = self.real()
        return _f32(x) if abs(x) < 3.4e38 or math.isinf(x) or x != x else 1.0

    def string(self) -> str:
        rng = self.rng
        return "".join(rng.choice("ab\t\n\r\a\v\"'?\\é😀\x01 ") for _ in range(rng.randint(0, 6)))

    def key(self) -> Any:
        rng = self.rng
        kind = rng.randrange(6)
        if kind == 0:
            return rng.randint(-5, 5)
        if kind == 1:
            return rng.choice([0.5, -1.0, 2.0, math.nan, 1e-5])
        if kind == 2:
            return rng.choice(["a", "b", "B", "é", ""])
        if kind == 3:
            return t.Vector2(rng.choice([1.0, 1.000001, -1.0]), rng.randint(0, 3))
        if kind == 4:
            return [rng.randint(0, 2) for _ in range(rng.randint(0, 2))]
        return rng.choice([None, True, False])

    def leaf(self) -> Any:
        rng, f32, string = self.rng, self.f32, self.string
        kind = rng.randrange(8)
        if kind == 0:
            return self.real()
        if kind == 1:
            return t.Vector3(f32(), f32(), f32())
        if kind == 2:
            return string()
        if kind == 3:
            return t.Color(f32(), f32(), f32(), f32())
        if kind == 4:
            return t.PackedFloat32Array([f32() for _ in range(3)])
        if kind == 5:
            return t.NodePath(names=[string() or "n"], subnames=[string() or "s"])
        if kind == 6:
            return t.PackedStringArray([string() for _ in range(2)])
        return t.Dictionary([(self.key(), rng.randint(0, 9)) for _ in range(rng.randint(0, 20))])


def _random_values(rng: random.Random, godot3: bool, n: int) -> list[Any]:
    make = _RandomValues(rng)
    values = []
    for _ in range(n):
        v: Any = [make.leaf() for _ in range(rng.randint(1, 4))]
        if not godot3 and rng.random() < 0.3:
            v = t.TypedArray("float", [make.real() for _ in range(3)])
        values.append(v)
    return values


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_random_values_print_like_the_live_engine(engine: str) -> None:
    oracles = _oracles()
    reason = oracles.godot3_available() if engine == "godot3" else oracles.godot4_available()
    if reason is not None:
        pytest.skip(reason)
    rng = random.Random(20240612)
    values = _random_values(rng, engine == "godot3", 120)
    cases = [{"name": f"v{i}", "hex": gf.dumps(v, engine).hex()} for i, v in enumerate(values)]
    decode = oracles.godot3_decode if engine == "godot3" else oracles.godot4_decode
    records = decode(cases)
    compared = 0
    for value, rec in zip(values, records):
        assert rec["ok"], rec
        if not _same_bytes(gf.dumps(value, engine), bytes.fromhex(rec["hex"]), value, engine, False):
            continue  # the engine decoded another value
        assert to_text(value, engine) == rec[TEXT_KEY[engine]], rec["name"]
        compared += 1
    assert compared >= 100


def test_catalogs_match_their_fixtures() -> None:
    for engine in ("godot3", "godot4"):
        catalog = json.loads((FIXTURES / engine / "text_extra_catalog.json").read_text(encoding="utf-8"))
        assert [c["name"] for c in catalog["cases"]] == [c["name"] for c in _extra(engine)]
    assert Path(__file__).name == "test_text.py"


# --- hostile values and text -------------------------------------------------------------------------

def _hostile(engine: str) -> dict[str, dict[str, Any]]:
    """Engine runs for this section: fixtures/*/text_hostile.jsonl, made by fixtures/make_text_hostile.py."""
    return {r["name"]: r for r in read_jsonl(FIXTURES / engine / "text_hostile.jsonl")}


def test_keys_of_types_the_dialect_lacks_are_refused_not_type_errors() -> None:
    keys = {t.Rect2i(t.Vector2i(1, 2), t.Vector2i(3, 4)): 0, t.Vector2i(1, 2): 0}
    with pytest.raises(gf.EncodeError, match="godot3 has no (Rect2i|Vector2i) type"):
        to_text(keys, "godot3")
    # Godot 4 type ids: Vector2i is 6, Rect2i 8.
    assert to_text(keys, "godot4") == "{\nVector2i(1, 2): 0,\nRect2i(1, 2, 3, 4): 0\n}"
    with pytest.raises(gf.EncodeError, match="godot3 has no StringName type"):
        to_text(t.Dictionary([([t.StringName("a")], 0), ([t.Vector2i(0, 0)], 1)]), "godot3")


def _keyed_values(dialect: str) -> st.SearchStrategy[Any]:
    import strategies

    leaves = strategies.values(dialect, max_leaves=6)
    return st.recursive(leaves, lambda c: st.lists(st.tuples(c, c), max_size=4).map(t.Dictionary)
                        | st.lists(c, max_size=3), max_leaves=10)


@pytest.mark.parametrize("dialect", gf.dialect_names())
@pytest.mark.parametrize("source", ["godot3", "godot4"])
def test_any_value_prints_or_raises_encode_error(dialect: str, source: str) -> None:
    # Values of every type, as keys too, written in every dialect: only EncodeError, and the text reads back.
    @given(_keyed_values(source))
    # run once per dialect and source (20 cases): a share of the profile's examples each
    @settings(max_examples=budget(15), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(value: Any) -> None:
        try:
            text = to_text(value, dialect)
        except gf.EncodeError:
            return
        from_text(text, dialect)

    check()


@pytest.mark.parametrize("dialect", ["godot3", "godot4", "godot4.0"])
def test_a_value_that_contains_itself_is_refused_with_its_path(dialect: str) -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(gf.EncodeError, match="contains itself") as info:
        to_text(loop, dialect)
    assert info.value.path == "[1]"
    d: dict[str, Any] = {"a": [1, {"b": None}]}
    d["a"][1]["b"] = d
    with pytest.raises(gf.EncodeError, match="contains itself") as info:
        to_text(d, dialect)
    assert info.value.path == "['a'][1]['b']"
    inner: list[Any] = []
    obj = t.Object("Node", {"x": inner})
    inner.append(obj)
    with pytest.raises(gf.EncodeError, match=r"contains itself.*\(it is \['k'\]\[0\]\)") as info:
        to_text({"k": [obj]}, dialect)
    assert info.value.path == "['k'][0].x[0]"
    key: list[Any] = [1]
    cyclic_key = t.Dictionary([(key, 1)])
    key.append(key)
    with pytest.raises(gf.EncodeError, match="deeper than 200"):
        to_text(cyclic_key, dialect)
    shared = [1, 2]
    assert to_text([shared, shared], dialect).count("1") == 2  # shared, not cyclic: fine


def _count_comparisons(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"less": 0, "leaf": 0}
    less, leaf = _Order.less, _Order.leaf

    def counting_less(self: Any, a: Any, b: Any) -> bool:
        counts["less"] += 1
        return less(self, a, b)

    def counting_leaf(self: Any, value: Any) -> Any:
        counts["leaf"] += 1
        return leaf(self, value)

    monkeypatch.setattr(_Order, "less", counting_less)
    monkeypatch.setattr(_Order, "leaf", counting_leaf)
    return counts


def test_pool_keys_sort_without_per_comparison_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    # Godot 3 pool keys are "less" whenever they differ; the engine's insertion pass then does n*n/2
    # comparisons.  Each key is now one number, and that order is computed directly (184 KB of such
    # keys took 22.6 s before).
    rng = random.Random(5)
    keys = list({bytes(rng.getrandbits(8) for _ in range(8)) for _ in range(3000)})
    counts = _count_comparisons(monkeypatch)
    to_text(dict.fromkeys(keys, 0), "godot3")
    assert counts["less"] == 0 and counts["leaf"] == len(keys)
    small = keys[:40]
    pairs = [(k, 0) for k in small]
    _IntroSort(lambda a, b: a[0] != b[0]).sort(pairs)  # the port, comparison by comparison
    assert to_text(dict.fromkeys(small, 0), "godot3") == "{\n" + ",\n".join(
        f"{_Writer(gf.get_dialect('godot3'), GODOT3_STYLE).write(k)}: 0" for k, _ in pairs) + "\n}"


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 18, 33, 100, 257])
def test_all_less_order_is_the_introsort(n: int) -> None:
    items = [object() for _ in range(n)]
    ported = list(items)
    _IntroSort(lambda a, b: a is not b).sort(ported)
    assert _all_less_order(items) == ported


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_nested_keys_are_compiled_once_and_compared_linearly(dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Godot 4 compares Arrays with x < y and then y < x per element: exponential in the depth (the old
    # port took 9 s at depth 20).  Keys 150 levels deep that differ only at the bottom:
    def nest(depth: int, leaf: Any) -> Any:
        v: Any = [leaf]
        for _ in range(depth):
            v = [v]
        return v

    keys = t.Dictionary([(nest(90, (i * 7) % 40), i) for i in range(40)])
    counts = _count_comparisons(monkeypatch)
    text = to_text({"outer": keys, "again": [keys]}, dialect)
    assert counts["leaf"] == 40  # every key's sort key computed once ("outer" and "again", plain Strings, need none)
    assert counts["less"] < 40 * 40 * 100 * 2
    if dialect == "godot4":  # lexicographic: by the innermost int
        firsts = [int(line.lstrip("[").split("]")[0]) for line in text.split("\n") if line.startswith("[" * 91)]
        assert firsts[:40] == list(range(40))


def test_object_class_names_must_be_identifiers() -> None:
    hostile = 'Node,"a":1)\n,\n"admin": true,\n"x": Object(Node'
    with pytest.raises(gf.EncodeError, match="not an identifier") as info:
        to_text({"v": t.Object(hostile, {})}, "godot4")
    assert info.value.path == "['v']"
    for bad in ("", "1Node", "Node Node", "Nöde", 5):
        with pytest.raises(gf.EncodeError, match="not an identifier"):
            to_text(t.Object(bad, {}), "godot3")  # type: ignore[arg-type]
    with pytest.raises(gf.EncodeError, match="not an identifier"):
        to_text(t.TypedArray(t.ContainerType.of_class("Node]([1])"), []), "godot4")
    with pytest.raises(gf.EncodeError, match="has no Nope type"):
        to_text(t.TypedArray("Nope", []), "godot4")
    with pytest.raises(gf.EncodeError, match="property names are strings"):
        to_text(t.Object("Node", {5: 1}), "godot4")  # type: ignore[dict-item]


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_object_property_names_are_escaped_where_the_engine_text_breaks(engine: str) -> None:
    # Both engines write property names raw (fixture): "a"b" ends the string early.  We escape the
    # backslash and the quote, the only two characters that change a string token; the engines'
    # parsers read such an escaped name (str_to_var_obj_quoted_prop parsed without error).
    rec = _hostile(engine)["prop_names_with_quotes"]
    engine_text = rec[TEXT_KEY[engine]]
    assert engine_text.endswith(',"a"b":1,"c\\d":1,"e\nf":1)\n')
    parsed = [r for name, r in _hostile(engine).items() if name.endswith("obj_quoted_prop")]
    assert parsed and all(r["ok"] and not r["errors"] for r in parsed)
    obj = t.Object("RefCounted" if engine == "godot4" else "Reference", {'a"b': 1, "c\\d": 1, "e\nf": 1})
    ours = to_text(obj, engine)
    assert ours == f'Object({obj.class_name},"a\\"b":1,"c\\\\d":1,"e\nf":1)\n'
    assert from_text(ours, engine) == obj
    sneaky = t.Object("Node", {'a":1,"admin":true,"x': 1})
    back = from_text(to_text({"v": sneaky}, engine), engine)
    assert back == {"v": sneaky} and list(back["v"].properties) == ['a":1,"admin":true,"x']


def test_script_paths_are_escaped_in_every_version() -> None:
    obj = t.Object("RefCounted", {"script": 'res://a")\n,"admin":true,"x":Resource("b'})
    for version in ("4.3", "4.4", "4.6"):
        text = to_text(obj, "godot4", version=version)
        assert text == 'Object(RefCounted,"script":Resource("res://a\\")\n,\\"admin\\":true,\\"x\\":Resource(\\"b"))\n'
        assert from_text(text, "godot4") == obj
    typed = t.TypedArray(t.ContainerType.of_script('res://a"b.gd'), [])
    assert to_text(typed, "godot4.3") == 'Array[Resource("res://a\\"b.gd")]([])'
    assert from_text(to_text(typed, "godot4.3"), "godot4.3") == typed


def test_model_values_that_cannot_exist_in_the_engine_raise_encode_error() -> None:
    for value, words in [(t.PackedStringArray([1]), "holds a int"),  # type: ignore[list-item]
                         (t.Vector2i(2 ** 40, 1), "out of range"), (t.RID(-5), "64-bit unsigned"),
                         (t.EncodedObjectAsID(2 ** 64), "64-bit unsigned")]:
        with pytest.raises(gf.EncodeError, match=words) as info:
            to_text({"k": [value]}, "godot4")
        assert info.value.path == "['k'][0]"


def test_text_output_is_linear_in_the_nesting_depth() -> None:
    # var2str / var_to_str do not indent (every engine fixture above); a level costs a few characters.
    for depth in (1_000, 4_000):
        arrays: Any = 1
        dicts: Any = 1
        for _ in range(depth):
            arrays = [arrays]
            dicts = {"k": dicts}
        assert len(to_text(arrays, "godot3")) == 4 * depth + 1  # "[ " ... " ]"
        assert len(to_text(dicts, "godot3")) == 9 * depth + 1  # '{\n"k": ' ... '\n}'
        assert len(to_text(dicts, "godot4")) == 9 * 101 + 2  # {} below 100 levels


def test_hostile_numbers_in_text() -> None:
    for engine in ("godot3", "godot4"):
        by_name = _hostile(engine)
        prefix = "str2var" if engine == "godot3" else "str_to_var"
        assert by_name[f"{prefix}_huge_exp"][TEXT_KEY[engine]] == "inf"
        assert from_text("1e999999", engine) == math.inf and from_text("-1e999999", engine) == -math.inf
        # The engines clamp and print an error; we refuse.  Python's int() would raise its own
        # ValueError past 4300 digits: the length is checked first.
        assert by_name[f"{prefix}_long_int"][TEXT_KEY[engine]] == "9223372036854775807"
        for digits in (30, 4301, 100_000):
            for sign in ("", "-"):
                with pytest.raises(TextDecodeError, match="does not fit in 64 bits") as info:
                    from_text(f"[{sign}{'7' * digits}]", engine)
                assert info.value.offset == 1 and len(str(info.value)) < 200
    assert from_text("0" * 30 + "42") == 42
    assert from_text("-" + "0" * 5000 + "9223372036854775808") == -(2 ** 63)
    assert from_text("1" * 100_000 + ".5") == math.inf
    with pytest.raises(TextDecodeError, match="nested deeper than 1024"):
        from_text("[" * 200_000)
    with pytest.raises(TextDecodeError, match="nested deeper than 1024"):
        from_text("{" * 200_000)
    with pytest.raises(TextDecodeError, match="expected a value"):
        from_text("]" * 200_000)


def test_key_depth_counts_empty_containers() -> None:
    for text_key, ok in (("[" * 200 + "]" * 200, True), ("[" * 201 + "]" * 201, False),
                         ("{" + "[" * 199 + "]" * 199 + ": 1}", True), ("{" + "[" * 200 + "]" * 200 + ": 1}", False)):
        source = "{" + text_key + ": 1}"
        if ok:
            from_text(source)
        else:
            with pytest.raises(TextDecodeError, match="deeper than 200"):
                from_text(source)


# --- the text package reads the registry's rows ---------------------------------------------------------------

#: The identifiers the parser read when it kept its own tables (every name and compatibility alias
#: the engines' VariantParser reads): what it builds from the rows must be exactly these.
ENGINE_CONSTRUCTORS: dict[str, tuple[str, int]] = {
    "Vector2": ("Vector2", 2), "Vector2i": ("Vector2i", 2), "Rect2": ("Rect2", 4), "Rect2i": ("Rect2i", 4),
    "Vector3": ("Vector3", 3), "Vector3i": ("Vector3i", 3), "Vector4": ("Vector4", 4),
    "Vector4i": ("Vector4i", 4), "Transform2D": ("Transform2D", 6), "Matrix32": ("Transform2D", 6),
    "Plane": ("Plane", 4), "Quaternion": ("Quaternion", 4), "Quat": ("Quaternion", 4),
    "AABB": ("AABB", 6), "Rect3": ("AABB", 6), "Basis": ("Basis", 9), "Matrix3": ("Basis", 9),
    "Transform3D": ("Transform3D", 12), "Transform": ("Transform3D", 12), "Projection": ("Projection", 16),
    "Color": ("Color", 4),
}
ENGINE_PACKED_NAMES: dict[str, str] = {
    **{n: "PackedByteArray" for n in ("PackedByteArray", "PoolByteArray", "ByteArray")},
    **{n: "PackedInt32Array" for n in ("PackedInt32Array", "PackedIntArray", "PoolIntArray", "IntArray")},
    "PackedInt64Array": "PackedInt64Array",
    **{n: "PackedFloat32Array" for n in ("PackedFloat32Array", "PackedRealArray", "PoolRealArray", "FloatArray")},
    "PackedFloat64Array": "PackedFloat64Array",
    **{n: "PackedStringArray" for n in ("PackedStringArray", "PoolStringArray", "StringArray")},
    **{n: "PackedVector2Array" for n in ("PackedVector2Array", "PoolVector2Array", "Vector2Array")},
    **{n: "PackedVector3Array" for n in ("PackedVector3Array", "PoolVector3Array", "Vector3Array")},
    **{n: "PackedVector4Array" for n in ("PackedVector4Array", "PoolVector4Array", "Vector4Array")},
    **{n: "PackedColorArray" for n in ("PackedColorArray", "PoolColorArray", "ColorArray")},
}


def test_the_parsers_names_come_from_the_rows_and_are_the_engines() -> None:
    assert {name: (spec.name, count) for name, (spec, count) in _CONSTRUCTORS.items()
            if shipped(spec)} == ENGINE_CONSTRUCTORS
    assert {name: spec.name for name, spec in _PACKED_NAMES.items() if shipped(spec)} == ENGINE_PACKED_NAMES
    assert all(count == len(spec.fields) for spec, count in _CONSTRUCTORS.values())
    # Godot 2's own type names for these two, which no engine's text parser reads (its text wrote ByteArray/FloatArray).
    for name in ("RawArray", "RealArray"):
        with pytest.raises(TextDecodeError, match="unexpected identifier"):
            from_text(f"{name}(1)")


def test_every_row_has_a_writer() -> None:
    assert set(_WRITERS) == set(REGISTRY)
    assert _WRITERS[registry.BY_NAME["StringName"]] is not _WRITERS[registry.BY_NAME["String"]]


@pytest.mark.parametrize("spec", [s for s in REGISTRY if s.family in (Family.MATH, Family.PACKED)],
                         ids=lambda s: s.name)
def test_math_and_packed_types_read_back_through_every_name(spec: Any) -> None:
    """Each name the parser reads for a type builds that type, from the numbers the writer printed."""
    value = {"Vector2i": t.Vector2i(-3, 2 ** 31 - 1), "Rect2i": t.Rect2i(t.Vector2i(1, -2), t.Vector2i(3, 4))}.get(
        spec.name, spec.build(list(range(1, spec.count + 1))) if spec.family is Family.MATH else None)
    if value is None and spec.cls is bytes:
        value = bytes([1, 255])
    elif value is None:
        value = spec.cls()
        value.data.extend(range(1, 1 + 2 * spec.width))  # two elements, flat
    dialect = home_dialect(spec)
    text = to_text(value, dialect)
    arguments = text[text.index("("):]
    names = [n for n, s in _CONSTRUCTORS.items() if s[0] is spec] + [n for n, s in _PACKED_NAMES.items() if s is spec]
    assert spec.name in names
    for name in names:
        assert from_text(name + arguments, dialect) == value, name


def test_a_subclass_writes_as_its_type() -> None:
    class Position(t.Vector2):
        pass

    class Tag(t.StringName):
        pass

    class Row(list):  # type: ignore[type-arg]
        pass

    value = Row([Position(1.5, -2), {"k": Position(0, 0)}])
    plain = [t.Vector2(1.5, -2), {"k": t.Vector2(0, 0)}]
    assert to_text(value, "godot3") == to_text(plain, "godot3") == '[ Vector2( 1.5, -2 ), {\n"k": Vector2( 0, 0 )\n} ]'
    assert to_text([Tag("a"), value], "godot4") == to_text([t.StringName("a"), plain], "godot4")


def test_the_dialects_text_version_picks_the_rules() -> None:
    import attrs

    d = attrs.evolve(gf.get_dialect("godot4"), name="godot4-text44", text_version="4.4")
    assert text_style(d) is GODOT44_STYLE
    assert to_text(16777217.0, d) == "1.67772e+07"
    assert to_text(16777217.0, d, version="4.5") == "16777217.0"
    # Godot 2 has no text form here (no 2.x engine runs to check one): refused, not guessed.
    with pytest.raises(gf.EncodeError, match="godot2 has no text form"):
        to_text(1, "godot2")
    with pytest.raises(gf.EncodeError, match="no text form"):
        text_style("godot2")


@pytest.mark.parametrize("value", [t.Image(0, 0, 1, 1, b"\x01"), t.InputEvent(1, 0, (65,))], ids=repr)
def test_godot2_records_say_why_they_have_no_text(value: Any) -> None:
    spec = registry.spec_for(value)
    assert spec is not None and spec.no_text
    for version in ("3.2", "4.5"):
        with pytest.raises(gf.EncodeError) as info:
            to_text({"k": [value]}, "godot4", version=version)
        assert info.value.reason == spec.no_text and info.value.path == "['k'][0]"
