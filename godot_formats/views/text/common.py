"""What the text writer, the key order and the text parser have to agree on.

Which type a value is, and what is true of that type, comes from its registry row
(:mod:`godot_formats.registry`); what stays here are the few C facts both directions
need (an ObjectID or RID is a ``uint64``; a component is an ``intN_t``).
"""

from __future__ import annotations

from typing import Any

from ...core.errors import EncodeError
from ...core.registry import Family, TypeSpec, for_each_row, spec_for

MASK64 = (1 << 64) - 1

#: Keys nested deeper than this are refused: comparing (and hashing) them recurses, in the
#: engine as in Python, and a key that deep is a hostile input rather than data.
MAX_KEY_DEPTH = 200

#: The names a typed container may give as its element type: Godot 4's types, Nil
#: excepted (a container of anything says ``Variant``), since typed containers are Godot 4's.
CONTAINER_ELEMENT_TYPES: set[str] = set()


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if 4 in spec.majors and spec.family is not Family.NIL:
        CONTAINER_ELEMENT_TYPES.add(spec.name)


def spec_of(value: Any) -> TypeSpec:
    """The row of ``value``'s type; a value no Godot type stands for has no text, which is the
    caller's :class:`~godot_formats.errors.EncodeError` rather than a KeyError deep inside."""
    spec = spec_for(value)
    if spec is None:
        raise EncodeError(f"cannot write a {type(value).__name__} as text ({value!r:.60})")
    return spec


def _wrap(value: int | float, bits: int) -> int:
    """C's conversion to an intN_t: truncate a float, keep the low ``bits`` bits, signed."""
    n = int(value) & ((1 << bits) - 1)
    return n - (1 << bits) if n >> (bits - 1) else n
