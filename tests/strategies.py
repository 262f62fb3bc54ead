"""Hypothesis strategies for every value type, restricted to what a dialect can hold."""

from __future__ import annotations

import math
import struct
from typing import Any

from hypothesis import strategies as st

from godot_formats import get_dialect
from godot_formats import types as t
from godot_formats.dialects import Dialect

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
F64 = st.floats(allow_nan=True, allow_infinity=True)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]  # type: ignore[no-any-return]


F32 = st.floats(width=32, allow_nan=False) | st.sampled_from([math.inf, -math.inf, -0.0])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def reals(dialect: Dialect) -> st.SearchStrategy[float]:
    """Components of math types: exact in this dialect's real_t."""
    return F64.filter(lambda x: not math.isnan(x)) if dialect.real_is_double else F32


def scalars(dialect: Dialect) -> st.SearchStrategy[Any]:
    """Any leaf value of the dialect (every type it has but the containers)."""
    options = scalar_options(dialect)
    return st.one_of(*(s for name, s in options.items() if dialect.has(name)))


def scalar_options(dialect: Dialect) -> dict[str, st.SearchStrategy[Any]]:
    """A strategy per leaf type (tests/test_registry.py checks that every row's type has one)."""
    d = dialect
    r = reals(d)
    v2, v3, v4 = st.builds(t.Vector2, r, r), st.builds(t.Vector3, r, r, r), st.builds(t.Vector4, r, r, r, r)
    floats = F64 if d.float_format in ("auto", "flag64", "f64") else F32
    ints = INT64 if d.int_format != "i32" else INT32
    options: dict[str, st.SearchStrategy[Any]] = {
        "Nil": st.none(),
        "bool": st.booleans(),
        "int": ints,
        "float": floats,
        "String": TEXT,
        "Vector2": v2,
        "Vector2i": st.builds(t.Vector2i, INT32, INT32),
        "Rect2": st.builds(t.Rect2, v2, v2),
        "Rect2i": st.builds(t.Rect2i, st.builds(t.Vector2i, INT32, INT32), st.builds(t.Vector2i, INT32, INT32)),
        "Vector3": v3,
        "Vector3i": st.builds(t.Vector3i, INT32, INT32, INT32),
        "Transform2D": st.builds(t.Transform2D, v2, v2, v2),
        "Vector4": v4,
        "Vector4i": st.builds(t.Vector4i, INT32, INT32, INT32, INT32),
        "Plane": st.builds(t.Plane, v3, r),
        "Quaternion": st.builds(t.Quaternion, r, r, r, r),
        "AABB": st.builds(t.AABB, v3, v3),
        "Basis": st.builds(t.Basis, v3, v3, v3),
        "Transform3D": st.builds(t.Transform3D, st.builds(t.Basis, v3, v3, v3), v3),
        "Projection": st.builds(t.Projection, v4, v4, v4, v4),
        "Color": st.builds(t.Color, F32, F32, F32, F32),
        "StringName": TEXT.map(t.StringName),
        "NodePath": st.builds(lambda n, s, a: t.NodePath(names=n, subnames=s, absolute=a),
                              st.lists(TEXT, max_size=3), st.lists(TEXT, max_size=2), st.booleans()),
        "RID": st.builds(t.RID, st.integers(0, 2**64 - 1)) if d.rid_format == "u64" else st.just(t.RID()),
        "Object": st.builds(t.EncodedObjectAsID, st.integers(1, 2**64 - 1)),
        "Callable": st.just(t.Callable()),
        "Signal": st.builds(t.Signal, TEXT, st.integers(0, 2**64 - 1)),
        "PackedByteArray": st.binary(max_size=9),
        "PackedInt32Array": st.lists(INT32, max_size=5).map(t.PackedInt32Array),
        "PackedInt64Array": st.lists(INT64, max_size=5).map(t.PackedInt64Array),
        "PackedFloat32Array": st.lists(F32, max_size=5).map(t.PackedFloat32Array),
        "PackedFloat64Array": st.lists(F64, max_size=5).map(t.PackedFloat64Array),
        "PackedStringArray": st.lists(TEXT, max_size=4).map(t.PackedStringArray),
        "PackedVector2Array": st.lists(v2, max_size=3).map(
            lambda xs: t.PackedVector2Array(xs, typecode="d" if d.real_is_double else "f")),
        "PackedVector3Array": st.lists(v3, max_size=3).map(
            lambda xs: t.PackedVector3Array(xs, typecode="d" if d.real_is_double else "f")),
        "PackedVector4Array": st.lists(v4, max_size=3).map(
            lambda xs: t.PackedVector4Array(xs, typecode="d" if d.real_is_double else "f")),
        "PackedColorArray": st.lists(st.builds(t.Color, F32, F32, F32, F32), max_size=3).map(t.PackedColorArray),
    }
    if d.rid_format == "unsupported":
        options.pop("RID")
    if d.object_format != "engine":
        options.pop("Object")
    return options


BUILTIN_ELEMENT = {"int": INT32, "String": TEXT, "bool": st.booleans()}


def values(dialect: str | Dialect, max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any value the dialect can write, nested in Arrays and Dictionaries (and typed ones where it has them)."""
    d = get_dialect(dialect)
    leaf = scalars(d)

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        options = [
            st.lists(children, max_size=4),
            st.dictionaries(st.one_of(TEXT, INT32), children, max_size=4),
            # keys Python cannot hold in a dict, or would merge: Godot keeps them apart
            st.lists(st.tuples(st.one_of(st.lists(INT32, max_size=2), st.sampled_from([1, 1.0, True]), TEXT),
                               children), max_size=4).map(t.Dictionary),
        ]
        if d.typed_arrays:
            options.append(st.sampled_from(sorted(BUILTIN_ELEMENT)).flatmap(
                lambda name: st.lists(BUILTIN_ELEMENT[name], max_size=3).map(lambda xs: t.TypedArray(name, xs))))
        if d.typed_dictionaries:
            options.append(
                st.dictionaries(TEXT, INT32, max_size=3).map(lambda m: t.TypedDictionary("String", "int", m)))
        return st.one_of(*options)

    return st.recursive(leaf, extend, max_leaves=max_leaves)


# --- hostile shapes (issue 13): keys that nest, keys chosen to collide, NaN keys -------------

def floats_sharing_a_hash(h: int) -> list[float]:
    """Distinct floats x with hash(x) == h: Python hashes numbers without a random seed
    (hash(a * 2**e) == a * 2**(e mod 61) mod 2**61-1), so an attacker can pick them."""
    p = (1 << 61) - 1
    found = set()
    for e in range(-1074, 972):
        a = h * pow(2, -e % 61, p) % p
        if 0 < a < 1 << 53:
            x = math.ldexp(a, e)
            if x and not math.isinf(x) and hash(x) == h:
                found.add(x)
    return sorted(found)


#: Floats x with hash(x) == 1 (Python hashes numbers without a random seed): 2**(61*j).
COLLIDING_FLOATS = [2.0 ** (61 * j) for j in range(-17, 17)]
NANS = [struct.unpack("<d", struct.pack("<Q", bits))[0]
        for bits in (0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001)]


def nested_key(depth: int, leaf: Any) -> Any:
    """A Dictionary that is the only key of a Dictionary ... ``depth`` times, around ``leaf``."""
    v = leaf
    for _ in range(depth):
        v = t.Dictionary([(v, None)])
    return v


def hostile_keys() -> st.SearchStrategy[Any]:
    """Dictionaries whose keys nest, collide under Python's number hashes, or are NaN (in any place)."""
    collide = st.sampled_from(COLLIDING_FLOATS)
    nan = st.sampled_from(NANS)
    key = st.one_of(
        st.builds(nested_key, st.integers(1, 40), st.one_of(INT32, TEXT, st.lists(INT32, max_size=2))),
        st.lists(collide, min_size=1, max_size=3),
        nan,
        st.lists(nan, min_size=1, max_size=2),
        st.builds(t.Vector2, st.one_of(nan, collide), st.one_of(nan, collide)),
        st.dictionaries(TEXT, nan, max_size=1),
        collide,
    )
    return st.lists(st.tuples(key, INT32), max_size=12).map(t.Dictionary)
