"""The switches of a dialect: each byte-level rule that changed between engine versions, as an enum.

Shared by :mod:`godot_formats.dialects` (which sets them), the wire readers and writers of
:mod:`godot_formats.wire` and the type rows of :mod:`godot_formats.registry` (which read them),
so none of those imports another just for a constant.
"""

from __future__ import annotations

import enum

__all__ = [
    "FLAG_64", "IntFormat", "FloatFormat", "RidFormat", "ObjectFormat", "ObjectScript", "BasisOrder",
    "REAL", "F32", "I32", "I64", "F64", "U8",
]

#: Header bit 16: a 64-bit INT/FLOAT payload, math types of a real_t=double build,
#: an Object written as its id.  Bits 16-17 (Array) and 16-19 (Dictionary) hold the
#: typed-container kinds.  A dialect that writes them must mask them off its type ids.
FLAG_64 = 1 << 16
_TYPED_ARRAY_BITS = 3 << 16
_TYPED_DICTIONARY_BITS = 15 << 16


class _Switch(str, enum.Enum):
    """A dialect switch: a ``str`` (so ``d.int_format == "auto"`` holds) that only takes its listed values."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class IntFormat(_Switch):
    """How ints are written."""

    AUTO = "auto"      # int32, or int64 with the flag when it does not fit (the engines since 3.1)
    FLAG64 = "flag64"  # always int64 with the flag (Godot 3.0.x)
    I64 = "i64"        # always int64, no flag (a documentation page)
    I32 = "i32"        # never wider (Godot 2)


class FloatFormat(_Switch):
    """How floats are written."""

    AUTO = "auto"      # float32 when exact, else float64 with the flag
    FLAG64 = "flag64"  # always float64 with the flag
    F32 = "f32"        # always float32, no flag
    F64 = "f64"        # always float64, no flag


class RidFormat(_Switch):
    """What follows a RID header."""

    U64 = "u64"                  # its id (4.x)
    NONE = "none"                # nothing: the header alone (2.x, 3.x)
    UNSUPPORTED = "unsupported"  # no encoding (a documentation page)


class ObjectFormat(_Switch):
    """The forms of an Object."""

    ENGINE = "engine"            # NIL for null, flag + u64 for an id, padded class and property names
    DOCS4 = "docs4"              # the 4.x page: no flag, unpadded names, allow_objects decides the mode
    HEADER = "header"            # Godot 2: the type header alone, read as null
    UNSUPPORTED = "unsupported"  # no encoding


class ObjectScript(_Switch):
    """How a full Object's ``script`` property is stored."""

    OBJECT = "object"  # the Script itself, embedded (3.x, 4.0-4.2)
    PATH = "path"      # its res:// path (4.3+)


class BasisOrder(_Switch):
    """The order of a Basis's numbers."""

    ROWS = "rows"        # the engines
    COLUMNS = "columns"  # what the documentation pages say


# Component kinds of fixed-size math types.
REAL = "real"  # float32, or float64 with the header flag in real_t=double builds
F32 = "f32"    # float32 always (Color)
I32 = "i32"    # int32 always (Vector2i, Rect2i, ...)
I64 = "i64"   # int64 always (PackedInt64Array)
F64 = "f64"   # float64 always (PackedFloat64Array)
U8 = "u8"     # bytes (PackedByteArray)
