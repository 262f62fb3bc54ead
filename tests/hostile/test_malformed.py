"""Every malformed blob the real engines were fed: we refuse what they refuse, accept what they accept.

Fixtures (all produced by the engines through ``godot_formats.oracle``, see fixtures/README.md):

* ``godot3/malformed.jsonl`` - Godot 3.2.3 ``bytes2var``;
* ``godot4/malformed.jsonl`` - Godot 4.6 ``bytes_to_var`` (``_with_objects`` when ``allow_objects``);
* ``godot4/typed_array_elements.jsonl`` - Godot 4.6 decoding typed Arrays/Dictionaries whose
  elements have another type (what ``ContainerTypeValidate`` converts, and what it drops);
* ``godot3/deep_dictionary_keys.jsonl``, ``godot4/deep_dictionary_keys.jsonl`` - Dictionary keys
  nested up to the depth limit;
* ``godot4/double_flag_in_float_build.jsonl`` - math types flagged 64-bit (a double build wrote
  them) read by the float build: the engine narrows them to float32 as it reads;
* ``godot3/hostile_counts.jsonl``, ``godot4/hostile_counts.jsonl`` - counts and lengths with bit 31
  set: which the engines read as negative (nothing to read) and which they refuse.

Each case falls in one class, decided from the engine's own record:

* **refused**: the engine printed a decode ERROR and returned nothing.  We raise
  :class:`~godot_formats.DecodeError` whose offset is the field the engine complained about
  (``REFUSED_AT``: every refused case has an entry, with the field named).
* **crashed**: Godot 3.2.3 overflowed its stack.  We raise DecodeError, fast.
* **accepted**: the engine returned a value (possibly printing errors on the way).  Our decode,
  written again in the same dialect, is the engine's re-encoding byte for byte (NodePath padding
  masked).
* **deliberate difference**: listed in ``DIFFERENCES`` with the reason; the test asserts what
  *we* do, so a change in either direction is noticed.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import pytest
from conftest import FIXTURES, assert_same_bytes, node_path_pad_mask, read_jsonl
from measure import calls_made

import godot_formats as gf
from godot_formats.core.types import ContainerType, Object, TypedArray, TypedDictionary

#: (engine folder, fixture file) -> every case in it is replayed in the dialect of that engine.
SOURCES = (
    ("godot3", "malformed"),
    ("godot4", "malformed"),
    ("godot4", "typed_array_elements"),
    ("godot3", "deep_dictionary_keys"),
    ("godot4", "deep_dictionary_keys"),
    ("godot4", "double_flag_in_float_build"),
    ("godot3", "hostile_counts"),
    ("godot4", "hostile_counts"),
)

REFUSED, CRASHED, ACCEPTED = "refused", "crashed", "accepted"


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    return [(engine, f"{kind}:{case['name']}", case)
            for engine, kind in SOURCES for case in read_jsonl(FIXTURES / engine / f"{kind}.jsonl")]


CASES = _cases()


def engine_verdict(engine: str, case: dict[str, Any]) -> str:
    """What the engine did with the bytes, read from its record only."""
    if case.get("engine_exit") is not None or case.get("crashed"):
        return CRASHED
    if case["ok"]:
        return ACCEPTED
    if engine == "godot3":
        errors = case.get("errors") or []
        # 3.2.3's oracle records no value when bytes2var failed.
        return REFUSED if "hex" not in case and any("ERROR" in line for line in errors) else ACCEPTED
    decode_errors = (case.get("errors") or {}).get("decode", [])
    # A failed bytes_to_var returns null; a value with errors printed on the way is still a value.
    if case["type_name"] == "Nil" and any("ERROR" in line for line in decode_errors):
        return REFUSED
    return ACCEPTED


def _data(case: dict[str, Any]) -> bytes:
    return bytes.fromhex(case["in_hex"])


# --- refused: where each error must point ---------------------------------------------------

_HEADER = "the type header"
_PAYLOAD = "the first payload field (value, length or count)"
_END = "the end of the data, where the next field was due"
_DEPTH = "the header of the first value nested deeper than 1024"
_UTF8 = "the first byte of the invalid UTF-8 sequence"

#: (engine, case) -> (offset of the field, which field).  Derived from the case's byte layout and
#: the check the engine's error names (marshalls.cpp line in the record).
REFUSED_AT: dict[tuple[str, str], tuple[int, str]] = {
    **{("godot3", f"malformed:{n}"): (0, _HEADER) for n in (
        "bad_empty_input", "bad_truncated_header", "bad_type_27", "bad_type_27_with_payload",
        "bad_type_99", "bad_type_255", "bad_object_full_not_allowed")},
    **{("godot4", f"malformed:{n}"): (0, _HEADER) for n in (
        "empty_input", "header_2_bytes", "type_39_variant_max", "type_255", "object_full_refcounted_no_objects")},
    **{("godot3", f"malformed:{n}"): (4, _PAYLOAD) for n in (
        "bad_truncated_int32", "bad_truncated_int64", "bad_truncated_real64", "bad_truncated_vector3",
        "bad_truncated_transform", "bad_string_len_gt_data", "bad_string_missing_padding",
        "bad_string_negative_len", "bad_string_len_int_max", "bad_nodepath_old_format",
        "bad_nodepath_namecount_gt_data", "bad_nodepath_truncated_header", "bad_object_id_truncated",
        "bad_dict_count_gt_data", "bad_array_count_int_max", "bad_array_count_u32_max", "bad_pba_len_gt_data",
        "bad_pba_negative_len", "bad_pia_count_overflow", "bad_pia_count_gt_data", "bad_pra_count_gt_data",
        "bad_psa_count_int_max", "bad_pv2a_count_gt_data", "bad_pv2a_count_overflow", "bad_pv3a_count_gt_data",
        "bad_pca_count_gt_data", "bad_pca_negative_count")},
    **{("godot4", f"malformed:{n}"): (4, _PAYLOAD) for n in (
        "int_no_payload", "int64_flag_4_byte_payload", "float64_flag_4_byte_payload", "bool_no_payload",
        "string_len5_data3", "string_len5_unpadded", "string_len_negative", "string_len_2pow31_minus1",
        "vector2_4_bytes", "transform3d_truncated", "projection_truncated", "nodepath_names_missing",
        "nodepath_old_format", "packed_byte_count10_data3", "packed_byte_count_negative",
        "packed_int32_count3_data2", "packed_float64_count_2pow31_minus1", "packed_vector4_count1_8_bytes",
        "object_as_id_truncated", "rid_truncated", "vector2_64bit_flag_truncated",
        "array_count_2pow31_minus1_empty", "array_count_2pow31_minus1_one", "array_count_ffffffff",
        "dict_count_2pow31_minus1", "packed_string_count_2pow31_minus1", "packed_byte_count_2pow31_minus1",
        "typed_array_builtin_type_99", "typed_array_script_not_res_path", "typed_dict_key_type_99")},
    ("godot3", "malformed:bad_array_count_gt_data"): (24, _END),
    ("godot3", "malformed:bad_nested_arrays_1000_truncated"): (8004, _END),
    ("godot3", "malformed:bad_psa_count_gt_data"): (16, _END + " (the second element's length)"),
    ("godot4", "malformed:array_count2_one_element"): (16, _END),
    ("godot4", "malformed:dict_count1_key_only"): (20, _END + " (the value of the only key)"),
    ("godot4", "malformed:packed_string_count2_one"): (16, _END + " (the second element's length)"),
    ("godot3", "malformed:bad_object_prop_count_gt_data"): (20, "the property count"),
    ("godot3", "malformed:bad_object_nested_not_allowed"): (8, "the header of the Object inside the Array"),
    ("godot4", "malformed:signal_truncated"): (16, "the Signal's object id"),
    ("godot4", "malformed:object_full_prop_count_too_big"): (20, "the property count"),
    ("godot3", "malformed:bad_utf8_bad_continuation"): (8, _UTF8 + " (c3 28)"),
    ("godot3", "malformed:bad_utf8_lone_ff"): (8, _UTF8),
    ("godot3", "malformed:bad_utf8_overlong"): (8, _UTF8 + " (c0 af)"),
    ("godot3", "malformed:bad_utf8_truncated_seq"): (9, _UTF8 + " (e6 cut by the length)"),
    ("godot4", "malformed:string_bad_utf8_ff_fe"): (9, _UTF8 + " (ff after 'a')"),
    ("godot4", "malformed:string_overlong_c0af"): (8, _UTF8),
    ("godot4", "malformed:string_surrogate_eda080"): (8, _UTF8 + " (ed a0 80 = U+D800)"),
    ("godot4", "malformed:string_truncated_sequence"): (9, _UTF8 + " (e6 97 without its last byte)"),
    ("godot4", "malformed:string_above_u10ffff"): (8, _UTF8 + " (f4 90 80 80)"),
    ("godot4", "malformed:stringname_bad_utf8"): (8, _UTF8),
    ("godot4", "malformed:nodepath_bad_utf8"): (20, _UTF8 + " (in the first name)"),
    ("godot4", "malformed:dict_key_bad_utf8"): (16, _UTF8 + " (in the key)"),
    ("godot4", "malformed:packed_string_bad_utf8"): (12, _UTF8 + " (in the element)"),
    ("godot4", "malformed:array_nested_1026"): (8200, _DEPTH),
    ("godot4", "malformed:array_nested_1100"): (8200, _DEPTH),
    ("godot4", "malformed:array_nested_5000"): (8200, _DEPTH),
    ("godot4", "malformed:dict_nested_1026"): (20488, _DEPTH + " (the key of the 1025th Dictionary)"),
    ("godot4", "malformed:typed_array_nested_1026"): (12300, _DEPTH),
    ("godot4", "deep_dictionary_keys:dict_key_nested_array_1025"): (8200, _DEPTH),
    **{("godot3", f"hostile_counts:{n}"): (4, _PAYLOAD) for n in (
        "dict_count_ffffffff", "nodepath_subname_count_ffffffff")},
    **{("godot4", f"hostile_counts:{n}"): (4, _PAYLOAD) for n in (
        "dict_count_ffffffff", "nodepath_subname_count_ffffffff", "nodepath_name_count_7fffffff",
        "typed_array_class_name_len_7fffffff", "stringname_len_ffffffff", "signal_name_len_7fffffff",
        "packed_vector2_flag64_count_1_float_data")},
}

#: Godot 3.2.3 overflowing its 8 MiB stack: (offset of our DecodeError, what the engine did).
CRASHED_AT: dict[tuple[str, str], int] = {
    ("godot3", "malformed:crash_nested_arrays_20000"): 8200,
    ("godot3", "malformed:crash_nested_arrays_30000"): 8200,
}


# --- deliberate differences ------------------------------------------------------------------

class Difference(NamedTuple):
    reason: str
    check: Callable[[str, dict[str, Any]], None]
    #: What the lead should change in the decoder, when we think the engine is right.
    recommend: str = ""


def keeps_the_bytes(engine: str, case: dict[str, Any]) -> None:
    """We decode the value as written and write back exactly the input bytes."""
    data, objects = _data(case), case["allow_objects"]
    value, end = gf.decode(data, engine, allow_objects=objects)
    assert gf.dumps(value, engine, allow_objects=objects) == data[:end]


def inert_object(engine: str, case: dict[str, Any]) -> None:
    """A full Object stays inert data: same class and properties, written back byte for byte,
    and refused outright without allow_objects."""
    keeps_the_bytes(engine, case)
    value = gf.loads(_data(case), engine, allow_objects=True)
    objects = [value] if isinstance(value, Object) else [v for v in value if isinstance(v, Object)]
    assert objects and all(isinstance(o.class_name, str) for o in objects)
    with pytest.raises(gf.DecodeError, match="allow_objects"):
        gf.loads(_data(case), engine)


def object_id_kept(engine: str, case: dict[str, Any]) -> None:
    value = gf.loads(_data(case), engine, allow_objects=case["allow_objects"])
    assert isinstance(value, gf.EncodedObjectAsID)
    assert value.object_id == int.from_bytes(_data(case)[4:12], "little")
    keeps_the_bytes(engine, case)


def nul_kept(engine: str, case: dict[str, Any]) -> None:
    value = gf.loads(_data(case), engine)
    assert "\0" in value
    keeps_the_bytes(engine, case)


def deeper_than_default_depth(offset: int) -> Callable[[str, dict[str, Any]], None]:
    def check(engine: str, case: dict[str, Any]) -> None:
        data = _data(case)
        with pytest.raises(gf.DecodeError) as info:
            gf.loads(data, engine)
        assert info.value.offset == offset
        # Raising the limit reads what 3.2.3 read, exactly.
        value = gf.loads(data, engine, max_depth=len(data) // 8)
        assert_same_bytes(gf.dumps(value, engine, max_depth=len(data) // 8), bytes.fromhex(case["hex"]))
    return check


def negative_property_count(engine: str, case: dict[str, Any]) -> None:
    """The engines read an Object's property count as an int32: 2^31 or more is negative, so the
    loop reads no property and the rest is trailing (unlike Array/Dictionary counts, whose bit 31
    is masked off).  Until 97f33a3 we masked it like an Array count."""
    data = _data(case)
    value, end = gf.decode(data, engine, allow_objects=True)
    name_field = 4 + (len(value.class_name.encode()) + 3) // 4 * 4
    assert value == Object(value.class_name)
    assert end == 4 + name_field + 4  # header, class name, count: what follows is trailing


def both_keys_kept(engine: str, case: dict[str, Any]) -> None:
    value = gf.loads(_data(case), engine)
    assert len(value) == 2
    keeps_the_bytes(engine, case)


def typed_element_kept(engine: str, case: dict[str, Any]) -> None:
    """No element is converted or dropped: the container holds as many as the bytes announce,
    and writing it back and reading it again changes nothing."""
    data, objects = _data(case), case["allow_objects"]
    value = gf.loads(data, engine, allow_objects=objects)
    assert isinstance(value, (TypedArray, TypedDictionary))
    header = int.from_bytes(data[:4], "little")
    kinds = [(header >> 16) & 3] + ([(header >> 18) & 3] if isinstance(value, TypedDictionary) else [])
    pos = 4
    for kind in kinds:  # skip the container type fields: a builtin id, or a string
        pos += 4 if kind == 1 else 4 + (int.from_bytes(data[pos:pos + 4], "little") + 3) // 4 * 4
    assert len(value) == int.from_bytes(data[pos:pos + 4], "little")
    written = gf.dumps(value, engine, allow_objects=objects)
    assert gf.dumps(gf.loads(written, engine, allow_objects=objects), engine, allow_objects=objects) == written


_INERT = ("we never instantiate classes: an Object is inert data, so the engine's ClassDB/script "
          "checks cannot run and its re-encoding (the live object's full property list) cannot be ours")
_TYPED_CONVERT = ("the engine converts an element to the container's type when Variant::can_convert_strict "
                  "allows it, silently")
_TYPED_DROP = "the engine prints an ERROR and drops the element that does not fit, returning a shorter container"
_RECOMMEND_CONVERT = ("implement: convert builtin-typed elements as Godot 4.4+ does (table in "
                      "fixtures/godot4/typed_array_elements.jsonl), Godot 4.3 has the same rule")
_RECOMMEND_REFUSE = ("implement: raise DecodeError at the element's offset (the engine loses data with only an "
                     "ERROR print; we never drop data silently)")

DIFFERENCES: dict[tuple[str, str], Difference] = {
    ("godot3", "malformed:odd_string_embedded_nul"): Difference(
        "the engine cuts a String at an embedded NUL; we keep it, so engine-written bytes round-trip", nul_kept),
    ("godot4", "malformed:string_with_nul"): Difference(
        "the engine cuts a String at an embedded NUL; we keep it, so engine-written bytes round-trip", nul_kept),
    ("godot3", "malformed:odd_object_id_1234"): Difference(
        "the engine re-encodes the EncodedObjectAsID object it made, under its own fresh id; we keep the id",
        object_id_kept),
    ("godot4", "malformed:object_as_id_42"): Difference(
        "the engine re-encodes the EncodedObjectAsID object it made, under its own fresh id; we keep the id",
        object_id_kept),
    ("godot4", "malformed:object_as_id_42_allowed"): Difference(
        "with objects the engine writes its EncodedObjectAsID object in full (class + object_id + script); "
        "we keep the id form", object_id_kept),
    ("godot3", "malformed:ok_nested_arrays_10000"): Difference(
        "Godot 3.2.3 has no depth limit (added in 3.3.5/3.4.3/3.5 and 4.x); we apply 1024 in every dialect "
        "(max_depth raises it)", deeper_than_default_depth(8200)),
    ("godot3", "deep_dictionary_keys:dict_key_nested_array_1025"): Difference(
        "Godot 3.2.3 has no depth limit; we apply 1024 in every dialect", deeper_than_default_depth(8200)),
    ("godot4", "deep_dictionary_keys:dict_two_keys_differ_at_depth_150"): Difference(
        "Godot 4.6 hashes and compares Arrays only 100 levels deep, so two different keys merge; we keep both",
        both_keys_kept),
    ("godot4", "malformed:typed_array_classname_node_holding_refcounted"): Difference(
        "the engine checks the element's class against ClassDB and drops it; " + _INERT, typed_element_kept),
    ("godot4", "malformed:typed_array_script_missing"): Difference(
        "the engine loads res:// scripts named by a typed Array; we never load scripts (the path is data)",
        typed_element_kept),
    ("godot4", "malformed:typed_array_int_holding_string"): Difference(_TYPED_DROP, typed_element_kept,
                                                                        _RECOMMEND_REFUSE),
    ("godot4", "malformed:typed_array_int_holding_float"): Difference(_TYPED_CONVERT, typed_element_kept,
                                                                       _RECOMMEND_CONVERT),
    **{(engine, f"hostile_counts:{n}"): Difference(
        _INERT + "; what we can match is the engine reading a negative property count as none",
        negative_property_count)
       for engine in ("godot3", "godot4") for n in ("object_prop_count_ffffffff", "object_prop_count_80000001")},
    **{("godot3", f"malformed:{n}"): Difference(_INERT, inert_object) for n in (
        "bad_object_unknown_class", "odd_object_unknown_property", "odd_object_node_allowed")},
    **{("godot4", f"malformed:{n}"): Difference(_INERT, inert_object) for n in (
        "object_full_refcounted", "object_full_resource_name", "object_full_node", "object_full_unknown_property",
        "object_full_unknown_class", "object_full_abstract_class", "object_full_script_missing",
        "object_full_script_wrong_base")},
    **{("godot4", f"typed_array_elements:{n}"): Difference(_TYPED_CONVERT, typed_element_kept, _RECOMMEND_CONVERT)
       for n in ("int_holding_true", "int_holding_float_neg", "int_holding_float_huge", "int_holding_float_nan",
                 "float_holding_int", "float_holding_bool", "bool_holding_int_2", "bool_holding_float",
                 "string_holding_stringname", "string_holding_nodepath", "stringname_holding_string",
                 "nodepath_holding_string", "vector2i_holding_vector2", "vector2_holding_vector2i",
                 "array_holding_packed_int32", "packed_int32_holding_array")},
    **{("godot4", f"typed_array_elements:{n}"): Difference(_TYPED_DROP, typed_element_kept, _RECOMMEND_REFUSE)
       for n in ("int_holding_string_digit", "int_holding_nil", "int_holding_vector2", "int_holding_string_then_int",
                 "string_holding_int", "packed_byte_holding_packed_int32", "object_holding_int",
                 "typed_dict_key_mismatch")},
}


def _params(verdict: str, table: dict[tuple[str, str], Any] | None = None) -> list[Any]:
    out = []
    for engine, key, case in CASES:
        if (engine, key) in DIFFERENCES:
            continue
        if engine_verdict(engine, case) == verdict:
            out.append(pytest.param(engine, key, case, id=f"{engine}-{key}"))
    return out


# --- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("engine, key, case", _params(REFUSED))
def test_engine_refused(engine: str, key: str, case: dict[str, Any]) -> None:
    data = _data(case)
    with pytest.raises(gf.DecodeError) as info:
        gf.decode(data, engine, allow_objects=case["allow_objects"])
    err = info.value
    assert isinstance(err, ValueError)
    assert 0 <= err.offset <= len(data), err
    assert (engine, key) in REFUSED_AT, f"no expected offset recorded for {key}: we said {err}"
    offset, field = REFUSED_AT[engine, key]
    assert err.offset == offset, f"{err} should point at {field} (byte {offset})"


@pytest.mark.parametrize("engine, key, case", _params(CRASHED))
def test_engine_crashed(engine: str, key: str, case: dict[str, Any]) -> None:
    data = _data(case)
    info: Any = None

    def refuse() -> None:
        nonlocal info
        with pytest.raises(gf.DecodeError) as info:
            gf.decode(data, engine, allow_objects=case["allow_objects"])

    assert calls_made(refuse) < 100 * len(data) + 10_000  # where the engine crashed: a bounded refusal
    assert info.value.offset == CRASHED_AT[engine, key]


@pytest.mark.parametrize("engine, key, case", _params(ACCEPTED))
def test_engine_accepted(engine: str, key: str, case: dict[str, Any]) -> None:
    data, objects = _data(case), case["allow_objects"]
    value, end = gf.decode(data, engine, allow_objects=objects)
    assert 4 <= end <= len(data)
    ours = gf.dumps(value, engine, allow_objects=objects)
    assert_same_bytes(ours, bytes.fromhex(case["hex"]), node_path_pad_mask(value, engine, objects))


@pytest.mark.parametrize("engine, key", sorted(DIFFERENCES))
def test_deliberate_difference(engine: str, key: str) -> None:
    case = next(c for e, k, c in CASES if (e, k) == (engine, key))
    difference = DIFFERENCES[engine, key]
    assert difference.reason
    difference.check(engine, case)


def test_tables_name_real_cases() -> None:
    known = {(e, k) for e, k, _ in CASES}
    for table in (REFUSED_AT, CRASHED_AT, DIFFERENCES):
        assert set(table) <= known, set(table) - known
    refused = {(e, k) for e, k, c in CASES if engine_verdict(e, c) == REFUSED}
    # Every refusal has its expected offset; nothing else does.
    assert set(REFUSED_AT) == refused - set(DIFFERENCES)
    assert set(CRASHED_AT) == {(e, k) for e, k, c in CASES if engine_verdict(e, c) == CRASHED}


def test_fixture_sizes() -> None:
    # Guards against a truncated fixture file silently shrinking the suite.
    counts = {(e, kind): 0 for e, kind in SOURCES}
    for engine, key, _ in CASES:
        counts[engine, key.split(":")[0]] += 1
    assert counts[("godot3", "malformed")] >= 80 and counts[("godot4", "malformed")] >= 100
    assert counts[("godot4", "typed_array_elements")] >= 26


def test_typed_array_of_builtin_object_without_objects() -> None:
    """Godot 4.6 reads ``Array[Object]`` (builtin kind) without objects as ``Array[EncodedObjectAsID]``
    (marshalls.cpp ``_decode_container_type``: OBJECT and !allow_objects forces the class), and
    re-encodes it with the class name kind (fixed in 97f33a3; we kept the builtin kind)."""
    case = next(c for e, k, c in CASES if k == "malformed:typed_array_builtin_type_object")
    value = gf.loads(_data(case), "godot4")
    assert value.element_type == ContainerType.of_class("EncodedObjectAsID")
