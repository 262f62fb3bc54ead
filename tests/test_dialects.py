"""What differs between engine versions, pinned to engine source and engine output."""

from __future__ import annotations

import pytest

import godot_formats as gf
from godot_formats import types as t

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
    import struct
    assert gf.dumps(basis, "godot4")[4:] == struct.pack("<9f", *floats)
    assert basis.rows[0] == t.Vector3(1, 4, 7)
    assert t.Basis.from_rows(*basis.rows) == basis
