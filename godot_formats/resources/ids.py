"""The Variant ids of binary resource files (``.res``): their own table, as data.

``ResourceFormatSaverBinary`` does not use the marshalls ids (``var_to_bytes``): it numbers the
types again (``VARIANT_VECTOR2 = 10`` ...), splits int and float by width (``VARIANT_INT`` /
``VARIANT_INT64``, ``VARIANT_FLOAT`` / ``VARIANT_DOUBLE``), stores Objects as references to the
file's resources, and writes no flags.  Each row names the value model's type (a registry row)
and the kind of payload; the numbers inside come from that row (its component and width), so
this table holds no type knowledge the registry already has.  From
``core/io/resource_format_binary.cpp`` (3.x and 4.x, ``parse_variant``/``write_variant``).
"""

from __future__ import annotations

import enum

import attrs

__all__ = ["Payload", "RsrcId", "RSRC_IDS", "BY_ID", "FORMAT_VERSIONS", "FLAG_NAMED_SCENE_IDS", "FLAG_UIDS",
           "FLAG_REAL_T_IS_DOUBLE", "FLAG_HAS_SCRIPT_CLASS", "OBJECT_EMPTY", "OBJECT_EXTERNAL_RESOURCE",
           "OBJECT_INTERNAL_RESOURCE", "OBJECT_EXTERNAL_RESOURCE_INDEX"]


class Payload(enum.Enum):
    """How a value's bytes follow its id."""

    NONE = "none"          # Nil, Callable, Signal: the id alone
    BOOL = "bool"          # u32
    INT32 = "int32"        # i32
    INT64 = "int64"        # i64
    REAL = "real"          # f32, or f64 in a file with the real64 flag
    DOUBLE = "double"      # f64
    STRING = "string"      # u32 length (with the NUL), UTF-8, NUL; no padding
    MATH = "math"          # the row's numbers, in its wire order
    NODE_PATH = "node_path"
    RID = "rid"            # u32
    OBJECT = "object"      # u32 kind, then a reference
    DICTIONARY = "dictionary"
    ARRAY = "array"
    BYTES = "bytes"        # u32 length, the bytes, padding to 4
    PACKED = "packed"      # u32 count, the elements
    STRINGS = "strings"    # u32 count, strings
    IMAGE = "image"        # Godot 2: u32 encoding, then (raw) width, height, mipmaps, format, bytes
    INPUT_EVENT = "input_event"  # Godot 2: u32 event type (the savers wrote 0, "none", only)


@attrs.frozen
class RsrcId:
    """One id: the value model's type (a registry row name) and its payload; ``formats``: the
    binary format versions that have it."""

    id: int
    type: str
    payload: Payload
    formats: range = range(1, 7)


_G4 = range(4, 7)  # Godot 4's ids (format 4 and later)

RSRC_IDS: tuple[RsrcId, ...] = (
    RsrcId(1, "Nil", Payload.NONE),
    RsrcId(2, "bool", Payload.BOOL),
    RsrcId(3, "int", Payload.INT32),
    RsrcId(4, "float", Payload.REAL),
    RsrcId(5, "String", Payload.STRING),
    RsrcId(10, "Vector2", Payload.MATH),
    RsrcId(11, "Rect2", Payload.MATH),
    RsrcId(12, "Vector3", Payload.MATH),
    RsrcId(13, "Plane", Payload.MATH),
    RsrcId(14, "Quaternion", Payload.MATH),
    RsrcId(15, "AABB", Payload.MATH),
    RsrcId(16, "Basis", Payload.MATH),
    RsrcId(17, "Transform3D", Payload.MATH),
    RsrcId(18, "Transform2D", Payload.MATH),
    RsrcId(20, "Color", Payload.MATH),
    RsrcId(21, "Image", Payload.IMAGE, range(1, 3)),
    RsrcId(22, "NodePath", Payload.NODE_PATH),
    RsrcId(23, "RID", Payload.RID),
    RsrcId(24, "Object", Payload.OBJECT),
    RsrcId(25, "InputEvent", Payload.INPUT_EVENT, range(1, 3)),
    RsrcId(26, "Dictionary", Payload.DICTIONARY),
    RsrcId(30, "Array", Payload.ARRAY),
    RsrcId(31, "PackedByteArray", Payload.BYTES),
    RsrcId(32, "PackedInt32Array", Payload.PACKED),
    RsrcId(33, "PackedFloat32Array", Payload.PACKED),
    RsrcId(34, "PackedStringArray", Payload.STRINGS),
    RsrcId(35, "PackedVector3Array", Payload.PACKED),
    RsrcId(36, "PackedColorArray", Payload.PACKED),
    RsrcId(37, "PackedVector2Array", Payload.PACKED),
    RsrcId(40, "int", Payload.INT64, range(2, 7)),
    RsrcId(41, "float", Payload.DOUBLE, range(2, 7)),
    RsrcId(42, "Callable", Payload.NONE, _G4),
    RsrcId(43, "Signal", Payload.NONE, _G4),
    RsrcId(44, "StringName", Payload.STRING, _G4),
    RsrcId(45, "Vector2i", Payload.MATH, _G4),
    RsrcId(46, "Rect2i", Payload.MATH, _G4),
    RsrcId(47, "Vector3i", Payload.MATH, _G4),
    RsrcId(48, "PackedInt64Array", Payload.PACKED, _G4),
    RsrcId(49, "PackedFloat64Array", Payload.PACKED, _G4),
    RsrcId(50, "Vector4", Payload.MATH, _G4),
    RsrcId(51, "Vector4i", Payload.MATH, _G4),
    RsrcId(52, "Projection", Payload.MATH, _G4),
    RsrcId(53, "PackedVector4Array", Payload.PACKED, range(6, 7)),
)
BY_ID: dict[int, RsrcId] = {row.id: row for row in RSRC_IDS}

#: Binary format version -> (the engine major that writes it, what changed).
FORMAT_VERSIONS: dict[int, tuple[int, str]] = {
    1: (2, "Godot 2.x"),
    2: (2, "64-bit int and float"),
    3: (3, "Godot 3.x: NodePath without the property part"),
    4: (4, "Godot 4.0-4.1: string ids of external and internal resources"),
    5: (4, "Godot 4.2: the script class in the header"),
    6: (4, "Godot 4.3+: PackedVector4Array"),
}

FLAG_NAMED_SCENE_IDS, FLAG_UIDS, FLAG_REAL_T_IS_DOUBLE, FLAG_HAS_SCRIPT_CLASS = 1, 2, 4, 8
OBJECT_EMPTY, OBJECT_EXTERNAL_RESOURCE, OBJECT_INTERNAL_RESOURCE, OBJECT_EXTERNAL_RESOURCE_INDEX = 0, 1, 2, 3
