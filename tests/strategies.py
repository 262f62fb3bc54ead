"""Hypothesis strategies for every value type, restricted to what a dialect can hold."""

from __future__ import annotations

import math
import struct
from typing import Any

from hypothesis import strategies as st

from godot_formats import dialect_names as gf_dialect_names
from godot_formats import get_dialect
from godot_formats.core import types as t
from godot_formats.core.dialects import Dialect
from godot_formats.core.registry import REGISTRY, Family, TypeSpec
from godot_formats.core.switches import F32 as F32_KIND
from godot_formats.core.switches import F64 as F64_KIND
from godot_formats.core.switches import I32, I64, REAL, U8
from godot_formats.core.types import INPUT_EVENT_PAYLOAD_WORDS, INPUT_EVENT_TYPES

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


def numbers(component: str | None, dialect: Dialect) -> st.SearchStrategy[Any]:
    """The numbers of a row's ``component`` kind (``registry`` rows name it), as ``dialect`` keeps them."""
    if component == REAL:
        return reals(dialect)
    return {U8: st.integers(0, 255), I32: INT32, I64: INT64, F32_KIND: F32, F64_KIND: F64}[component or ""]


#: Strategies for the fields of a record row (``RecordField.kind``), by kind.
_FIELD_KINDS: dict[str, st.SearchStrategy[Any]] = {
    "u32": st.integers(0, 2**32 - 1), "u64": st.integers(0, 2**64 - 1), "str": TEXT, "bytes": st.binary(max_size=9),
    "u32s": st.lists(st.integers(0, 2**32 - 1), max_size=2).map(tuple), "opt_u32": st.none(),
}


def _leaf(spec: TypeSpec, d: Dialect) -> st.SearchStrategy[Any]:
    """A strategy for a leaf row's values, from what the row says (its family, component, fields)."""
    family, cls = spec.family, spec.cls
    if family is Family.MATH:
        assert spec.build is not None
        return st.lists(numbers(spec.component, d), min_size=spec.count, max_size=spec.count).map(spec.build)
    if family is Family.PACKED:
        if spec.component == U8:
            return st.binary(max_size=9)
        element = numbers(spec.component, d) if spec.width == 1 else st.builds(
            cls.element, *[numbers(spec.component, d)] * spec.width)
        typecode = ("d" if d.real_is_double else "f") if spec.component == REAL else None
        return st.lists(element, max_size=5 if spec.width == 1 else 3).map(lambda xs: cls(xs, typecode=typecode))
    if family is Family.RECORD:
        return st.builds(cls, **{f.attr: _FIELD_KINDS[f.kind] for f in spec.record})
    return {
        Family.NIL: st.none(), Family.BOOL: st.booleans(),
        Family.INT: INT64 if d.int_format != "i32" else INT32,
        Family.FLOAT: F64 if d.float_format in ("auto", "flag64", "f64") else F32,
        Family.STRING: TEXT.map(cls), Family.STRINGS: st.lists(TEXT, max_size=4).map(cls),
        Family.NODE_PATH: st.builds(lambda n, s, a: t.NodePath(names=n, subnames=s, absolute=a),
                                    st.lists(TEXT, max_size=3), st.lists(TEXT, max_size=2), st.booleans()),
        Family.OBJECT: st.builds(t.EncodedObjectAsID, st.integers(1, 2**64 - 1)),
    }[family]


def scalar_options(dialect: Dialect) -> dict[str, st.SearchStrategy[Any]]:
    """A strategy per leaf type of every registry row (an Object as its id), generated from
    the rows, so that a new row is in every property test without an edit here; the few
    rules that are the dialect's rather than the row's follow."""
    d = dialect
    options = {spec.name: _leaf(spec, d) for spec in REGISTRY if spec.family not in (Family.ARRAY, Family.DICTIONARY)}
    options["InputEvent"] = st.builds(  # the engine sizes the payload by the event type
        lambda kind, device, words: t.InputEvent(kind, device, tuple(words[:INPUT_EVENT_PAYLOAD_WORDS.get(kind, 0)])),
        st.integers(0, len(INPUT_EVENT_TYPES) - 1), st.integers(0, 2**32 - 1),
        st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2))
    if d.rid_format != "u64":
        options["RID"] = st.just(t.RID())
    if d.rid_format == "unsupported":
        options.pop("RID")
    if d.object_format != "engine":
        options.pop("Object")
    return options


def shipped(spec: TypeSpec) -> bool:
    """Whether a row is one of the library's own (not one a program registered, as tests/synthetic does):
    the tests that compare the rows with the engines' own tables look at these only."""
    return spec.cls.__module__ in ("builtins", t.__name__)


def home_dialect(spec: TypeSpec) -> str:
    """An engine dialect that has the type: Godot 4 where it can, else the first that does."""
    names = ["godot4", "godot2", *gf_dialect_names()]
    return next(n for n in names if get_dialect(n).engine and get_dialect(n).has(spec.name))


def sample(spec: TypeSpec) -> Any:
    """One value of a row's type, made from the row (numbers 1, 2, 3 ..., exact in float32 and
    never NaN, so that every dialect keeps it and equality means sameness)."""
    family = spec.family
    if family is Family.MATH:
        assert spec.build is not None
        return spec.build(range(1, spec.count + 1))
    if family is Family.PACKED:
        if spec.component == U8:
            return b"\x00\x01\xfe\xff\x05"
        if spec.width == 1:
            return spec.cls([1, -2, 3] if spec.component in (I32, I64) else [0.5, -1.25])
        return spec.cls([spec.cls.element(*range(1, spec.width + 1)), spec.cls.element(*range(2, spec.width + 2))])
    if family is Family.RECORD:
        kinds = {"u32": 0, "u64": 0, "str": "", "bytes": b"\x01\x02", "u32s": (), "opt_u32": None}
        return spec.cls(**{f.attr: kinds[f.kind] for f in spec.record})
    fixed = {Family.NIL: None, Family.BOOL: True, Family.INT: -7, Family.FLOAT: 0.5,
             Family.NODE_PATH: t.NodePath("/root/Node:prop"), Family.OBJECT: t.EncodedObjectAsID(1234),
             Family.DICTIONARY: {"a": 1, 2: [3]}, Family.ARRAY: [1, "two", 3.5, None]}
    if family in fixed:
        return fixed[family]
    return spec.cls(["a", "bé", ""]) if family is Family.STRINGS else spec.cls("héllo")


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


# --- hostile shapes: keys that nest, keys chosen to collide, NaN keys -------------

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
