"""What differs between engine versions, pinned to engine source and engine output."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

import godot_formats as gf
from godot_formats.core import dialects as D
from godot_formats.core import registry
from godot_formats.core import types as t
from godot_formats.core.codec import Decoder
from godot_formats.views.explain import explain

B = bytes.fromhex


def test_engine_dialect_names() -> None:
    names = gf.dialect_names()
    for name in ("godot3", "godot3.0", "godot4.0", "godot4.3", "godot4", "godot4-double"):
        assert name in names
    assert gf.get_dialect("godot4.6") is gf.get_dialect("godot4")
    assert gf.get_dialect("godot3.5") is gf.get_dialect("godot3")
    assert gf.get_dialect(gf.get_dialect("godot3")).name == "godot3"
    with pytest.raises(ValueError, match="unknown dialect"):
        gf.get_dialect("godot5")
    unlisted = attrs.evolve(gf.get_dialect("godot3"), name="not-registered")
    assert gf.get_dialect(unlisted) is unlisted  # a dialect object is itself, registered or not
    for wrong in ([1], {"godot3": 1}, None, 3):  # unhashable or not a dialect: the same clear error
        with pytest.raises(ValueError, match="unknown dialect"):
            gf.get_dialect(wrong)  # type: ignore[arg-type]


def test_type_table_sizes() -> None:
    # Variant::VARIANT_MAX per version (research §1.2).
    assert gf.get_dialect("godot3").variant_max == 27
    assert gf.get_dialect("godot4.0").variant_max == 38
    assert gf.get_dialect("godot4.3").variant_max == 39
    assert gf.get_dialect("godot4").variant_max == 39


def test_godot3_0_flags_every_int_64_bit() -> None:
    # godot#15383: 3.0.x put_var(5) -> 02 00 01 00 05 00 00 00 00 00 00 00; 3.1 fixed it (godot#22223).
    assert gf.dumps(5, "godot3.0") == B("020001000500000000000000")
    assert gf.dumps(5, "godot3") == B("0200000005000000")
    # Every version reads both widths.
    assert gf.loads(B("020001000500000000000000"), "godot3") == 5


def test_godot4_double_vectors() -> None:
    # encode_variant under REAL_T_IS_DOUBLE sets HEADER_DATA_FLAG_64 and writes doubles (godot#58205).
    assert gf.dumps(t.Vector2(1, 2), "godot4-double") == B("05000100" "000000000000f03f" "0000000000000040")
    # Color stays float32 ("Colors should always be in single-precision"), ints stay int32.
    assert gf.dumps(t.Color(1, 0, 0, 1), "godot4-double") == gf.dumps(t.Color(1, 0, 0, 1), "godot4")
    assert gf.dumps(t.Vector2i(1, 2), "godot4-double") == gf.dumps(t.Vector2i(1, 2), "godot4")
    assert gf.dumps(t.PackedFloat32Array([0.5]), "godot4-double") == gf.dumps(t.PackedFloat32Array([0.5]), "godot4")
    pv = t.PackedVector2Array([t.Vector2(1, 2)])
    assert gf.dumps(pv, "godot4-double") == B("23000100" "01000000" "000000000000f03f" "0000000000000040")


def test_single_build_reads_double_build_math() -> None:
    # fixtures/godot4/malformed.jsonl vector2_64bit_flag: the 4.6 engine reads two doubles.
    # It stores them in its 32-bit real_t: 0.1 comes back as float32(0.1) (re-encoded cdcccc3d).
    v = gf.loads(B("05000100000000000000f83f9a9999999999b93f"), "godot4")
    assert v == t.Vector2(1.5, t.float32(0.1))
    assert gf.loads(B("05000100000000000000f83f9a9999999999b93f"), "godot4-double") == t.Vector2(1.5, 0.1)
    # Godot 3 ignores the flag on math types and reads float32s.
    v3 = gf.loads(B("05000100000000000000f83f9a9999999999b93f"), "godot3")
    assert v3 == t.Vector2(0.0, 1.9375)


def test_rid_payload_by_version() -> None:
    assert gf.dumps(t.RID(13), "godot4") == B("170000000d00000000000000")
    assert gf.dumps(t.RID(), "godot3") == B("10000000")
    assert gf.loads(B("10000000"), "godot3") == t.RID()


def test_typed_containers_need_their_version() -> None:
    typed = t.TypedArray("int", [1])
    with pytest.raises(gf.EncodeError, match="typed Arrays"):
        gf.dumps(typed, "godot4.0")
    assert gf.dumps(typed, "godot4.3") == gf.dumps(typed, "godot4")
    typed_dict = t.TypedDictionary("String", "int", {"a": 1})
    with pytest.raises(gf.EncodeError, match="typed Dictionaries"):
        gf.dumps(typed_dict, "godot4.3")
    with pytest.raises(gf.EncodeError, match="godot3 has no Vector2i"):
        gf.dumps(t.Vector2i(1, 2), "godot3")


def test_packed_vector4_array_is_4_3_and_later() -> None:
    blob = gf.dumps(t.PackedVector4Array([t.Vector4(1, 2, 3, 4)]), "godot4")
    assert blob[0] == 38
    with pytest.raises(gf.DecodeError, match="unknown type id 38"):
        gf.loads(blob, "godot4.0")


def test_4_0_ignores_typed_header_bits() -> None:
    # Before 4.3, bits 16-17 of an Array header meant nothing: the u32 after the header is the count.
    assert gf.loads(B("1c00010000000000"), "godot4.0") == []
    # 4.3+ reads a builtin element type (here Nil: untyped) and then wants the count.
    with pytest.raises(gf.DecodeError, match="Array count"):
        gf.loads(B("1c00010000000000"), "godot4")
    assert gf.loads(B("1c0001000000000000000000"), "godot4") == []


def test_godot3_accepts_encoded_surrogates_godot4_does_not() -> None:
    # fixtures: 3.2.3 decodes ED A0 80; 4.6 rejects it (append_utf8).
    blob = B("0400000003000000eda08000")
    assert gf.loads(blob, "godot3") == "\ud800"
    assert gf.dumps("\ud800", "godot3") == blob
    with pytest.raises(gf.DecodeError, match="UTF-8"):
        gf.loads(blob, "godot4")
    with pytest.raises(gf.EncodeError, match="surrogate"):
        gf.dumps("\ud800", "godot4")


def test_basis_is_written_by_rows() -> None:
    basis = t.Basis(t.Vector3(1, 2, 3), t.Vector3(4, 5, 6), t.Vector3(7, 8, 9))
    floats = [float(x) for x in (1, 4, 7, 2, 5, 8, 3, 6, 9)]
    assert gf.dumps(basis, "godot4")[4:] == struct.pack("<9f", *floats)
    assert basis.rows[0] == t.Vector3(1, 4, 7)
    assert t.Basis.from_rows(*basis.rows) == basis


# --- dialects are data, checked once when made -----------------------------

SWITCHES = {
    "int_format": D.IntFormat, "float_format": D.FloatFormat, "rid_format": D.RidFormat,
    "object_format": D.ObjectFormat, "object_script": D.ObjectScript, "basis_order": D.BasisOrder,
}


def _dialects() -> list[D.Dialect]:
    return [gf.get_dialect(n) for n in ("godot2", *gf.dialect_names())]


@pytest.mark.parametrize("field", sorted(SWITCHES))
def test_every_switch_is_its_enum_in_every_dialect(field: str) -> None:
    for d in _dialects():
        value = getattr(d, field)
        assert type(value) is SWITCHES[field], (d.name, field)
        # str-valued: code and users comparing with the old strings keep working.
        assert value == value.value and f"{value}" == str(value) == value.value


def test_a_switch_given_as_its_string_becomes_the_enum() -> None:
    d = attrs.evolve(gf.get_dialect("godot3"), name="t", int_format="flag64")
    assert d.int_format is D.IntFormat.FLAG64
    assert gf.dumps(5, d) == gf.dumps(5, "godot3.0")


@pytest.mark.parametrize("field", sorted(SWITCHES))
def test_a_switch_value_outside_its_enum_is_refused(field: str) -> None:
    allowed = ", ".join(m.value for m in SWITCHES[field])
    with pytest.raises(ValueError, match=f"invalid dialect 't': {field}='flag_64' is not one of: {allowed}"):
        attrs.evolve(gf.get_dialect("godot4"), name="t", **{field: "flag_64"})
    with pytest.raises(ValueError, match=field):
        D.Dialect("t", "", ("Nil",), **{field: "flag_64"})


G4 = D.GODOT4_TYPES


@pytest.mark.parametrize(("changes", "message"), [
    ({"name": ""}, "the name must be a non-empty string"),
    ({"types": ()}, "types must be a non-empty sequence"),
    ({"types": ("Nil", 7)}, "types must be a non-empty sequence"),
    ({"types": ("Nil", "NoSuchType")}, r"types\[1\] = 'NoSuchType' is not a type the codec knows"),
    ({"types": ("Nil", "int", "bool", "int")}, "'int' has two ids, 1 and 3"),
    ({"types": ("Nil", "int", D.UNSUPPORTED)}, r"the last id \(2\) is an empty slot"),
    ({"type_mask": 0xF}, "39 types need ids up to 38, beyond type_mask 0xf"),
    ({"type_mask": 0x1F0}, "type_mask 496 is not a mask of the low bits"),
    ({"type_mask": 0}, "type_mask 0 is not a mask"),
    ({"type_mask": 0xFFFFFFFF}, "int_format=auto, float_format=auto, object_format=engine, typed_arrays, "
                                "typed_dictionaries set header flag bits that type_mask 0xffffffff reads"),
    ({"real_is_double": True, "math_flag_64": False}, "math_flag_64=False ignores"),
    ({"int64_array_count_size": 6}, "int64_array_count_size is 6, not 4 or 8"),
    ({"major": 5}, "major is 5, not 2, 3 or 4"),
    ({"native_names": {"Image": "Picture"}}, "native_names renames 'Image', which is not in types"),
    ({"native_names": {"Quaternion": ""}}, r"native_names\['Quaternion'\] must be a non-empty string"),
    ({"native_names": {"Quaternion": "Quat", "Basis": "Quat"}}, "'Quaternion' and 'Basis' are both called 'Quat'"),
    ({"native_names": {"Quaternion": "Basis"}}, "'Quaternion' and 'Basis' are both called 'Basis'"),
])
def test_a_table_the_codec_cannot_trust_is_refused_when_made(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        attrs.evolve(gf.get_dialect("godot4"), **changes)


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(ValueError, match="int_format='x'.*'int' has two ids.*major is 9"):
        D.Dialect("t", "", ("Nil", "int", "int"), int_format="x", major=9)  # type: ignore[arg-type]


def test_the_shipped_dialects_pass_their_own_checks() -> None:
    for d in _dialects():
        assert attrs.evolve(d).types == d.types  # evolve makes it again, through the checks


def test_every_known_type_has_a_reader_and_a_writer() -> None:
    """What the registration check promises: any name it lets into a table, the codec serves."""
    every = D.Dialect("every", "every known type", tuple(sorted(D.KNOWN_TYPES)))
    decoder = Decoder(every, allow_objects=True)
    for type_id, name in enumerate(every.types):
        assert decoder._readers[type_id] is not None or type_id in decoder._containers, name
    for name in D.KNOWN_TYPES:
        spec = registry.BY_NAME[name]
        assert spec.write is not None and (spec.read is not None or spec.is_container), name
    # The rows the codec takes math and packed types from are rows of known types, under their names.
    for rows in (D.MATH_TYPES, D.MATH_TYPES_BY_COLUMNS):
        for name, row in rows.items():
            assert registry.GODOT_TYPE_NAMES[row.cls] == name
    for name, (cls, _) in D.PACKED_TYPES.items():
        assert registry.GODOT_TYPE_NAMES[cls] == name


def test_register_refuses_a_name_or_alias_already_taken() -> None:
    other = attrs.evolve(gf.get_dialect("godot4"), name="t-taken")
    with pytest.raises(ValueError, match="the name 'godot4.6' is taken by 'godot4'"):
        D.register(other, "godot4.6")
    with pytest.raises(ValueError, match="'t-a' is given twice"):
        D.register(other, "t-a", "t-a")
    with pytest.raises(ValueError, match="alias '' is not a non-empty string"):
        D.register(other, "")
    assert "t-taken" not in gf.dialect_names()  # a refused registration registers nothing
    with pytest.raises(ValueError, match="unknown dialect 't-taken'"):
        gf.get_dialect("t-taken")
    with pytest.raises(ValueError, match="'godot4' is not registered"):
        D.unregister(attrs.evolve(gf.get_dialect("godot4")))  # same name, another object


def test_unregister_forgets_the_name_and_every_alias() -> None:
    d = D.register(attrs.evolve(gf.get_dialect("godot4"), name="t-gone"), "t-gone.1", listed=False)
    assert D.register(d, "t-gone.1", listed=False) is d  # registering it again is harmless
    assert gf.get_dialect("t-gone.1") is d
    D.unregister("t-gone.1")
    for name in ("t-gone", "t-gone.1"):
        with pytest.raises(ValueError, match="unknown dialect"):
            gf.get_dialect(name)


# A copy of godot4 whose Vector2 id (5) is an empty slot: reserved, unreadable.
@pytest.fixture
def holey() -> Iterator[D.Dialect]:
    types = list(G4)
    types[5] = D.UNSUPPORTED
    d = D.register(attrs.evolve(gf.get_dialect("godot4"), name="t-holey", types=tuple(types)))
    try:
        yield d
    finally:
        D.unregister(d)


def test_an_empty_slot_is_a_clear_error_and_only_there(holey: D.Dialect) -> None:
    assert not holey.has("Vector2") and holey.variant_max == 39
    vector = gf.dumps(t.Vector2(1, 2), "godot4")
    with pytest.raises(gf.DecodeError, match=r"at byte 16: type id 5 \(header 0x00000005\) is not supported by "
                                             r"t-holey \(an empty slot in its type table\)"):
        gf.loads(gf.dumps([1, t.Vector2(1, 2)], "godot4"), holey)
    with pytest.raises(gf.DecodeError, match="container element type id 5 is not supported by t-holey"):
        gf.loads(gf.dumps(t.TypedArray("Vector2", []), "godot4"), holey)
    with pytest.raises(gf.EncodeError, match="t-holey has no Vector2 type"):
        gf.dumps(t.Vector2(1, 2), holey)
    value = {"a": [1, 2.5, None, t.Vector3(1, 2, 3)], "b": t.PackedVector2Array([t.Vector2(1, 2)])}
    assert gf.loads(gf.dumps(value, holey), holey) == value
    assert gf.dumps(value, holey) == gf.dumps(value, "godot4")
    # explain lists the bytes as far as they go, then the decoder's error.
    assert "error: at byte 0: type id 5 (header 0x00000005) is not supported by t-holey" in explain(vector, holey)


@pytest.mark.parametrize("value", [1, "text", t.Vector2(1, 2), [None, t.Vector3i(1, 2, 3)], {"k": 0.5}])
def test_detect_keeps_working_with_a_dialect_that_has_an_empty_slot(holey: D.Dialect, value: Any) -> None:
    blob = gf.dumps(value, "godot4")
    ranked = gf.detect(blob)
    by_name = {c.dialect: c for c in ranked if not c.framed}
    assert ranked[0].confidence > 0 and ranked[0].dialect != "t-holey"
    assert by_name["godot4"].complete
    if isinstance(value, t.Vector2):
        assert by_name["t-holey"].confidence == 0 and "not supported by t-holey" in by_name["t-holey"].reason
    else:
        assert by_name["t-holey"].complete


def _swapped(*pairs: tuple[str, str]) -> D.Dialect:
    types = list(G4)
    for a, b in pairs:
        i, j = types.index(a), types.index(b)
        types[i], types[j] = types[j], types[i]
    return attrs.evolve(gf.get_dialect("godot4"), name="t-swapped", types=tuple(types))


# godot4 with Nil <-> String and int <-> float: every id the codec's fast paths know.
SWAPPED = _swapped(("Nil", "String"), ("int", "float"))
u32s = struct.Struct("<I").pack


def test_nil_and_the_fast_path_types_are_written_through_the_table() -> None:
    s = SWAPPED
    assert (s.type_id("Nil"), s.type_id("String"), s.type_id("int"), s.type_id("float")) == (4, 0, 3, 2)
    assert gf.dumps(None, s) == u32s(4)
    assert gf.dumps("ab", s) == u32s(0) + u32s(2) + b"ab\0\0"
    assert gf.dumps(7, s) == u32s(3) + struct.pack("<i", 7)
    assert gf.dumps(0.5, s) == u32s(2) + struct.pack("<f", 0.5)
    assert gf.dumps(2**40, s) == u32s(3 | D.FLAG_64) + struct.pack("<q", 2**40)
    assert gf.dumps([None, "a"], s) == u32s(28) + u32s(2) + u32s(4) + u32s(0) + u32s(1) + b"a\0\0\0"
    ints = list(range(20))  # long enough for the one-go writer and reader
    assert gf.dumps(ints, s) == u32s(28) + u32s(20) + b"".join(u32s(3) + struct.pack("<i", i) for i in ints)
    floats = [0.5] * 20
    assert gf.dumps(floats, s) == u32s(28) + u32s(20) + (u32s(2) + struct.pack("<f", 0.5)) * 20
    typed = t.TypedArray("String", ["x"])
    assert gf.dumps(typed, s) == u32s(28 | 1 << 16) + u32s(0) + u32s(1) + u32s(0) + u32s(1) + b"x\0\0\0"
    for value in (None, "ab", 7, 0.5, 2**40, [None, "a"], ints, floats, typed, {"k": None, None: "v"}):
        assert gf.loads(gf.dumps(value, s), s) == value
    # The godot4 reading of the swapped bytes is another value: the table decides.
    assert gf.loads(gf.dumps([None, "a"], s), "godot4") != [None, "a"]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_values_round_trip_through_a_permuted_table(data: Any) -> None:
    value = data.draw(values(SWAPPED))
    blob = gf.dumps(value, SWAPPED)
    decoded, end = gf.decode(blob, SWAPPED)
    assert end == len(blob)
    # Compared through godot4's encoding, which NaN does not upset.
    assert gf.dumps(decoded, "godot4") == gf.dumps(value, "godot4")
