"""The engine's own unit-test vectors and engine outputs quoted in Godot issues.

Sources (see docs/research/spec-and-peers.md §2): tests/core/io/test_marshalls.h
in godotengine/godot (4.x), and bytes the engines printed in godot#15383, #23354,
#44999, godot-docs#4945 and #10662.
"""

from __future__ import annotations

from typing import Any

import pytest

import godot_formats as gf
from godot_formats.core import types as t

X = -1070935975390360081  # u64 0xf123456789abcdef as int64

TEST_MARSHALLS = [
    ("nil", None, "00000000"),
    ("int32", 0x12345678, "0200000078563412"),
    ("int64", X, "02000100efcdab89674523f1"),
    ("float32", 0.15625, "030000000000203e"),
    ("float64", 0.3333333333333333, "03000100555555555555d53f"),
    ("typed_array", t.TypedArray("int", [X]), "1c000100" "02000000" "01000000" "02000100efcdab89674523f1"),
    ("typed_dictionary", t.TypedDictionary("int", "int", {X: X}),
     "1b000500" "02000000" "02000000" "01000000" "02000100efcdab89674523f1" "02000100efcdab89674523f1"),
]


@pytest.mark.parametrize("name, value, hexbytes", TEST_MARSHALLS, ids=[c[0] for c in TEST_MARSHALLS])
def test_godot4_unit_test_vectors(name: str, value: Any, hexbytes: str) -> None:
    blob = bytes.fromhex(hexbytes)
    assert gf.dumps(value, "godot4") == blob
    decoded, end = gf.decode(blob, "godot4")
    assert end == len(blob)
    assert decoded == value


def test_typed_containers_decode_with_their_types() -> None:
    arr = gf.loads(bytes.fromhex(TEST_MARSHALLS[5][2]))
    assert isinstance(arr, t.TypedArray) and arr.element_type == t.ContainerType("int") and len(arr) == 1
    d = gf.loads(bytes.fromhex(TEST_MARSHALLS[6][2]))
    assert isinstance(d, t.TypedDictionary)
    assert d.key_type == d.value_type == t.ContainerType("int") and X in d


@pytest.mark.parametrize("blob", ["00", "ff000000"])
def test_godot4_invalid_data_vectors(blob: str) -> None:
    with pytest.raises(gf.DecodeError):
        gf.loads(bytes.fromhex(blob))


ISSUE_OUTPUTS = [
    # (dialect, value, bytes printed by a real engine, source)
    ("godot3.0", 5, "020001000500000000000000", "godot#15383, 3.0 beta put_var(5) without its length"),
    ("godot3.0", [-1, 12], "130000000200000002000100ffffffffffffffff020001000c00000000000000", "godot#23354, 3.0.6"),
    ("godot3.0", ["test", "aze"], "1300000002000000040000000400000074657374040000000300000061 7a6500", "godot#23354"),
    ("godot3.0", 5.5, "030000000000b040", "godot#15383"),
    ("godot3.0", True, "0100000001000000", "godot#15383"),
    ("godot3", 42, "020000002a000000", "godot-docs#4945, 3.3 store_var(42) without its length"),
    ("godot3", None, "00000000", "godot-docs#4945"),
    ("godot3", t.NodePath("Path2D/PathFollow2D/Sprite:position:x"),
     "0f000000 03000080 02000000 00000000 06000000 50617468 32440000 0c000000 50617468 466f6c6c 6f773244"
     "06000000 53707269 74650000 08000000 706f7369 74696f6e 01000000 78000000",
     "godot#44999, 3.2.3 (with the pads zeroed)"),
    ("godot4", t.RID(13), "170000000d00000000000000", "godot-docs#10662, 4.4 rid_from_int64(13)"),
]


@pytest.mark.parametrize("dialect, value, hexbytes, source", ISSUE_OUTPUTS, ids=[c[3][:30] for c in ISSUE_OUTPUTS])
def test_engine_outputs_quoted_in_issues(dialect: str, value: Any, hexbytes: str, source: str) -> None:
    blob = bytes.fromhex(hexbytes.replace(" ", ""))
    assert gf.dumps(value, dialect) == blob
    assert gf.loads(blob, dialect) == value
