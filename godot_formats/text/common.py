"""What the text writer, the key order and the text parser have to agree on.

Both directions print or read a Vector2i as integers, a PackedVector2Array as pairs and
an ObjectID or RID as a C ``uint64``; keeping those facts once keeps the two in step.
"""

from __future__ import annotations

from typing import Any

from .. import types as t
from ..dialects import TYPE_NAMES
from ..errors import EncodeError

MASK64 = (1 << 64) - 1

#: Keys nested deeper than this are refused: comparing (and hashing) them recurses, in the
#: engine as in Python, and a key that deep is a hostile input rather than data.
MAX_KEY_DEPTH = 200

_INT_MATH = frozenset({"Vector2i", "Vector3i", "Vector4i", "Rect2i"})
_PACKED_WIDTH = {"PackedVector2Array": 2, "PackedVector3Array": 3, "PackedVector4Array": 4, "PackedColorArray": 4}
_INT_PACKED = frozenset({"PackedByteArray", "PackedInt32Array", "PackedInt64Array"})
_BUILTIN_TYPES = frozenset(TYPE_NAMES[1:])


def type_name_of(value: Any) -> str:
    """The Godot 4 type name of a value of the model (``"Vector2"``, ``"Array"`` ...)."""
    name = t.godot_type_name(value)
    if name is None:
        raise EncodeError(f"cannot write a {type(value).__name__} as text ({value!r:.60})")
    return name


def _wrap(value: int | float, bits: int) -> int:
    """C's conversion to an intN_t: truncate a float, keep the low ``bits`` bits, signed."""
    n = int(value) & ((1 << bits) - 1)
    return n - (1 << bits) if n >> (bits - 1) else n
