"""The public API: names, file helpers, errors and value-model behaviour."""

from __future__ import annotations

import io
import math

import pytest

import godot_formats as gf
from godot_formats.core import types as t

B = bytes.fromhex


def test_loads_dumps_default_to_godot4() -> None:
    assert gf.dumps([1]) == B("1c000000010000000200000001000000")
    assert gf.loads(B("1c000000010000000200000001000000")) == [1]


def test_load_and_dump_files() -> None:
    buf = io.BytesIO()
    gf.dump({"a": t.Vector2(1, 2)}, buf, "godot3")
    buf.seek(0)
    assert gf.load(buf, "godot3") == {"a": t.Vector2(1, 2)}


def test_decode_reports_consumed_bytes() -> None:
    value, end = gf.decode(B("0200000005000000efbeadde"), "godot3")
    assert (value, end) == (5, 8)
    value, end = gf.decode(B("ffff0200000005000000"), "godot4", offset=2)
    assert (value, end) == (5, 10)
    # An offset outside the data is a DecodeError, never a read from the end (Python's -1).
    for offset in (-1, -4):
        with pytest.raises(gf.DecodeError, match="negative"):
            gf.decode(B("0200000005000000"), "godot3", offset=offset)
    with pytest.raises(gf.DecodeError, match="0 byte"):
        gf.decode(B("0200000005000000"), "godot3", offset=100)


def test_errors_are_value_errors_with_offsets() -> None:
    with pytest.raises(ValueError) as info:
        gf.loads(B("04000000100000006162"))
    err = info.value
    assert isinstance(err, gf.DecodeError)
    assert err.offset == 4 and "String length 16" in str(err) and "at byte 4" in str(err)
    assert issubclass(gf.EncodeError, ValueError) and issubclass(gf.ConversionError, ValueError)


def test_encode_error_names_the_path() -> None:
    with pytest.raises(gf.EncodeError) as info:
        gf.dumps({"player": {"inventory": [1, 2, object()]}})
    assert "['player']['inventory'][2]" in str(info.value)
    with pytest.raises(gf.EncodeError, match="64 bits"):
        gf.dumps(2**63)


def test_self_containing_list_is_an_encode_error() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(gf.EncodeError, match="nested deeper"):
        gf.dumps(loop)


def test_deep_nesting_limits_without_recursion_error() -> None:
    deep: list[object] = []
    for _ in range(1024):
        deep = [deep]
    blob = gf.dumps(deep)  # 1025 arrays: the engine's limit, accepted
    assert gf.dumps(gf.loads(blob)) == blob
    with pytest.raises(gf.EncodeError):
        gf.dumps([deep])
    hostile = B("1c00000001000000") * 200_000
    with pytest.raises(gf.DecodeError, match="deeper than 1024"):
        gf.loads(hostile)


def test_dictionary_keys_python_would_merge() -> None:
    value = gf.loads(gf.dumps(t.Dictionary([(1, "int"), (1.0, "float"), (True, "bool"), ([1], "array")])))
    assert isinstance(value, t.Dictionary) and len(value) == 4
    assert value[1] == "int" and value[1.0] == "float" and value[True] == "bool" and value[[1]] == "array"
    assert type(gf.loads(gf.dumps({"a": 1, 2: "b"}))) is dict


def test_int_and_float_widths() -> None:
    assert gf.dumps(2**31 - 1) == B("02000000ffffff7f")
    assert gf.dumps(2**31) == B("020001000000008000000000")
    assert gf.dumps(0.5) == B("030000000000003f")
    assert gf.dumps(0.1) == B("030001009a9999999999b93f")
    assert gf.dumps(math.nan)[:4] == B("03000100")
    assert gf.dumps(-0.0) == B("0300000000000080")


def test_packed_arrays_are_not_python_lists() -> None:
    arr = gf.loads(gf.dumps(t.PackedFloat32Array([0.5, 1.5])))
    assert isinstance(arr, t.PackedFloat32Array) and arr.data.typecode == "f"
    assert list(arr) == [0.5, 1.5]
    vecs = gf.loads(gf.dumps(t.PackedVector3Array([t.Vector3(1, 2, 3)])))
    assert vecs[0] == t.Vector3(1, 2, 3) and len(vecs) == 1
    assert gf.loads(gf.dumps(b"\x01\x02\x03")) == b"\x01\x02\x03"


def test_objects_are_inert_and_gated() -> None:
    obj = t.Object("Node", {"name": "n"})
    blob = gf.dumps(obj, allow_objects=True)
    with pytest.raises(gf.DecodeError, match="allow_objects"):
        gf.loads(blob)
    assert gf.loads(blob, allow_objects=True) == obj
    with pytest.raises(gf.EncodeError, match="full_objects"):
        gf.dumps(obj)
    assert gf.loads(gf.dumps(t.EncodedObjectAsID(42))) == t.EncodedObjectAsID(42)


def test_node_path_text_form() -> None:
    p = t.NodePath("/root/a:b:c")
    assert (p.names, p.subnames, p.absolute) == (("root", "a"), ("b", "c"), True)
    assert str(p) == "/root/a:b:c"
    assert t.NodePath("") == t.NodePath(names=())


def test_decode_end_bounds_a_value_inside_a_larger_buffer() -> None:
    frames = B("04000000" "04000000 02000000 68690000".replace(" ", ""))
    assert gf.decode(frames, "godot4", offset=4) == ("hi", 16)
    with pytest.raises(gf.DecodeError, match="runs past the end"):
        gf.decode(frames, "godot4", offset=4, end=12)


def test_deeply_nested_dictionary_keys() -> None:
    key: list[object] = []
    for _ in range(5000):
        key = [key]
    d = t.Dictionary([(key, 1)])
    assert d[key] == 1
    assert t.godot_key([[1], 2]) != t.godot_key([[1, 2]])
    assert t.godot_key("k") == t.godot_key(t.StringName("k"))
    assert len({t.godot_key(1), t.godot_key(1.0), t.godot_key(True)}) == 3


def test_size_and_element_limits() -> None:
    blob = gf.dumps([[1, 2], {"a": 3}, "x"])
    assert gf.loads(blob, max_elements=6) == [[1, 2], {"a": 3}, "x"]  # 3 elements + 2 elements + 1 entry
    with pytest.raises(gf.DecodeError, match="max_elements=5"):
        gf.loads(blob, max_elements=5)
    with pytest.raises(gf.DecodeError, match="max_size=16") as info:
        gf.loads(blob, max_size=16)
    assert info.value.offset == 0
    assert gf.loads(gf.dumps(t.PackedInt32Array(range(100))), max_elements=0) == t.PackedInt32Array(range(100))


def test_the_environment_forces_the_pure_python_reference() -> None:
    """GODOT_FORMATS_PURE=1 turns the compiled core off for the process (docs/architecture.md)."""
    import os
    import subprocess
    import sys

    script = "import godot_formats as gf; print(gf.backend, gf.Decoder(gf.get_dialect('godot4')).backend)"
    env = {**os.environ, "GODOT_FORMATS_PURE": "1"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["python", "python"]


@pytest.mark.parametrize("max_size", [2**64, float("inf")])
def test_a_max_size_past_what_c_holds_is_no_limit_not_an_error(max_size: object) -> None:
    """A huge max_size is a limit never reached, under both backends (the compiled core's size
    type cannot hold it: the reference's check runs instead); a negative one refuses every input
    with the library's own error."""
    assert gf.loads(b"\x00\x00\x00\x00", "godot4", max_size=max_size) is None  # type: ignore[arg-type]
    with pytest.raises(gf.DecodeError, match="max_size=-1"):
        gf.loads(b"\x00\x00\x00\x00", "godot4", max_size=-1)
