"""Dialects: what differs between engine versions, written down as data.

Like ``pickle``'s protocols, a dialect is not code: it is a type table (wire
id -> Godot 4 type name), the names that version uses for its types, and a few
switches for the handful of byte-level rules that changed between versions
(or that a documentation page states differently).  The one reader and one
writer in :mod:`godot_formats.codec` consult it.

Engine dialects follow the engines (checked against Godot 3.2.3 and 4.6 and
the engine source for the versions we cannot run); documented dialects follow
the text of a documentation page to the letter, mistakes included, because
that is what other implementations were built from.
"""

from __future__ import annotations

from collections.abc import Callable as _Fn
from typing import Any

import attrs

from . import registry
from . import types as t
from .keys import GODOT3_KEYS, GODOT4_KEYS, KeyRules
from .switches import (  # noqa: F401  (re-exported: the switches are part of the dialect API)
    _TYPED_ARRAY_BITS,
    _TYPED_DICTIONARY_BITS,
    F32,
    FLAG_64,
    I32,
    REAL,
    BasisOrder,
    FloatFormat,
    IntFormat,
    ObjectFormat,
    ObjectScript,
    RidFormat,
    _Switch,
)

__all__ = [
    "Dialect", "MathType", "MATH_TYPES", "TYPE_NAMES", "KNOWN_TYPES", "UNSUPPORTED", "get_dialect", "dialect_names",
    "register", "unregister", "IntFormat", "FloatFormat", "RidFormat", "ObjectFormat", "ObjectScript", "BasisOrder",
]

# Every Godot 4 type name, in Godot 4.4's Variant::Type order.  The value model
# and the dialect tables are keyed by these names.
TYPE_NAMES: tuple[str, ...] = (
    "Nil", "bool", "int", "float", "String", "Vector2", "Vector2i", "Rect2", "Rect2i",
    "Vector3", "Vector3i", "Transform2D", "Vector4", "Vector4i", "Plane", "Quaternion",
    "AABB", "Basis", "Transform3D", "Projection", "Color", "StringName", "NodePath", "RID",
    "Object", "Callable", "Signal", "Dictionary", "Array", "PackedByteArray",
    "PackedInt32Array", "PackedInt64Array", "PackedFloat32Array", "PackedFloat64Array",
    "PackedStringArray", "PackedVector2Array", "PackedVector3Array", "PackedColorArray",
    "PackedVector4Array",
)

#: Every type name a dialect's table may hold: the value model's types (Godot 4's, Godot 2's
#: Image and InputEvent, and any added with ``registry.register_type``), each of which the
#: codec reads and writes.
KNOWN_TYPES: set[str] = set()
#: A slot of a type table that holds this instead of a name is an id the dialect
#: reserves but cannot read: decoding it is a DecodeError naming the id.
UNSUPPORTED = ""



@attrs.frozen
class MathType:
    """A fixed-size type made of ``count`` numbers of one kind.

    ``to_wire`` returns the numbers in the engine's byte order;
    ``from_wire`` builds the value back from them.
    """

    cls: type
    count: int
    component: str
    to_wire: _Fn[[Any], tuple[Any, ...]]
    from_wire: _Fn[[Any], Any]


def _math_row(spec: registry.TypeSpec, columns: bool = False) -> MathType:
    if columns:
        return MathType(spec.cls, spec.count, spec.component or "", spec.parts_by_columns, spec.build_from_columns)
    return MathType(spec.cls, spec.count, spec.component or "", spec.parts, spec.build)  # type: ignore[arg-type]


#: The math types, read from their registry rows, in the engines' component order ...
MATH_TYPES: dict[str, MathType] = {}
#: ... and in what the documentation pages say instead: Basis written column by column.
MATH_TYPES_BY_COLUMNS: dict[str, MathType] = {}
#: Packed arrays of numbers (PackedByteArray is ``bytes``): Godot 4 name -> (value class, element kind).
PACKED_TYPES: dict[str, tuple[type[t.PackedArray], str]] = {}


@registry.for_each_row
def _add_row(s: registry.TypeSpec) -> None:
    KNOWN_TYPES.add(s.name)
    if s.family is registry.Family.MATH:
        MATH_TYPES[s.name] = _math_row(s)
        if s.columns:
            MATH_TYPES_BY_COLUMNS[s.name] = _math_row(s, True)
    elif s.family is registry.Family.PACKED and s.component != "u8":
        PACKED_TYPES[s.name] = (s.cls, s.component or "")


GODOT3_TYPES = (
    "Nil", "bool", "int", "float", "String", "Vector2", "Rect2", "Vector3", "Transform2D",
    "Plane", "Quaternion", "AABB", "Basis", "Transform3D", "Color", "NodePath", "RID",
    "Object", "Dictionary", "Array", "PackedByteArray", "PackedInt32Array",
    "PackedFloat32Array", "PackedStringArray", "PackedVector2Array", "PackedVector3Array",
    "PackedColorArray",
)

# What Godot 3 calls the types it shares with Godot 4 under another name (from the registry's rows).
GODOT3_NAMES = registry.names_for_major(3)


@attrs.frozen(eq=False)
class Dialect:
    """One version of the format (or one documentation page's idea of it).

    ``types[i]`` is the Godot 4 name of wire id ``i``, or :data:`UNSUPPORTED`
    for an id the dialect reserves but cannot read.  The switches say which of
    the rules that changed over time apply; every one of them names the engine
    behaviour it stands for, and takes only the values of its enum (a plain
    string of one of them is accepted and converted).

    Everything is checked once, when the dialect is made (``Dialect(...)`` or
    ``attrs.evolve``): a bad table or switch is a ValueError naming it, so the
    codec never meets one in its per-value loops.
    """

    name: str
    description: str
    types: tuple[str, ...]
    #: Godot 4 name -> the name this version uses (for ``explain`` and text).
    native_names: dict[str, str] = attrs.field(factory=dict)
    #: Engine dialect (follows an engine) or documented (follows a page).
    engine: bool = True
    #: Mask applied to the header to get the type id (engines: 0xFF).
    type_mask: int = 0xFF
    #: real_t=double build: math types get the 64-bit flag and float64 parts.
    real_is_double: bool = False
    #: The decoder honours the 64-bit flag on math types and packed vectors (4.x).
    math_flag_64: bool = True
    #: How ints are written (:class:`IntFormat`; a plain string of its values is accepted).
    int_format: IntFormat = IntFormat.AUTO
    #: How floats are written (:class:`FloatFormat`).
    float_format: FloatFormat = FloatFormat.AUTO
    #: Typed Array headers (Godot 4.3+) and typed Dictionary headers (4.4+).
    typed_arrays: bool = False
    typed_dictionaries: bool = False
    #: RID payload (:class:`RidFormat`).
    rid_format: RidFormat = RidFormat.U64
    #: Object forms (:class:`ObjectFormat`).
    object_format: ObjectFormat = ObjectFormat.ENGINE
    #: How a full Object's ``script`` property is stored (:class:`ObjectScript`).
    object_script: ObjectScript = ObjectScript.PATH
    #: Basis rows (the engines) or columns (what the pages say): :class:`BasisOrder`.
    basis_order: BasisOrder = BasisOrder.ROWS
    #: PackedStringArray elements carry a trailing NUL inside their length.
    packed_string_nul: bool = True
    #: Width in bytes of the element count of PackedInt64Array (a page says 8).
    int64_array_count_size: int = 4
    #: NodePath's old format (a plain string, bit 31 of the first word clear) is read.
    node_path_old_format: bool = False
    #: UTF-8 encoded surrogates are accepted in strings (3.x parse_utf8 did).
    utf8_surrogates: bool = False
    #: Engine major version the bytes belong to (2, 3 or 4).
    major: int = 4
    #: What a documented dialect's page says that the engines do not.
    notes: tuple[str, ...] = ()
    #: The engine version whose text rules (``var_to_str``) ``to_text`` follows for this
    #: dialect unless told another ("3.2", "4.0", "4.4", "4.5"); None: no text form here.
    text_version: str | None = attrs.field(
        default=attrs.Factory(lambda self: {2: None, 3: "3.2"}.get(self.major, "4.5"), takes_self=True))
    #: ``detect()``: the weight of this dialect's reading among readings that fit equally
    #: well, and the commoner dialect it cannot be told from when its own marker is absent.
    prior: float = 1.0
    sibling: str | None = None
    #: ``detect()``: the dialect this one reads every byte exactly like (they differ only in how
    #: they write), so one decoding serves both; tests/saves/test_detection.py checks the claim.
    decodes_like: str | None = None
    #: ``detect()``: the dialect this one reads like whenever that one writes exactly those bytes
    #: for what it read (a double build reads what a single-precision build writes as that build
    #: does: they part only on math values with the 64-bit flag, which a single build never
    #: writes); tests/saves/test_detection.py checks the claim too.
    reads_what_it_writes: str | None = None
    #: Whose Object class and property names full Objects use (3: Godot 2 and 3's
    #: ``Reference``, ``scancode`` ...; 4: Godot 4's): a conversion between the two
    #: applies the class rules of :mod:`godot_formats.migration`.
    object_classes: int = attrs.field(default=attrs.Factory(lambda self: 4 if self.major >= 4 else 3, takes_self=True))
    _ids: dict[str, int] = attrs.field(init=False, repr=False, eq=False, hash=False)

    def __attrs_post_init__(self) -> None:
        # Checked once, here, so that the codec's per-value loops can trust the table.
        object.__setattr__(self, "types", tuple(self.types) if isinstance(self.types, (list, tuple)) else self.types)
        problems = []
        for field, switch in _SWITCHES.items():
            value = getattr(self, field)
            try:
                object.__setattr__(self, field, switch(value))
            except ValueError:
                problems.append(f"{field}={value!r} is not one of: {', '.join(m.value for m in switch)}")
        problems += _problems(self)
        if problems:
            raise ValueError(f"invalid dialect {self.name!r}: " + "; ".join(problems))
        object.__setattr__(self, "_ids", {name: i for i, name in enumerate(self.types) if name})

    @property
    def key_rules(self) -> KeyRules:
        """How this version's engine tells Dictionary keys apart (measured on 3.2.3 and 4.6)."""
        # Godot 2 shares Godot 3's Variant comparison lineage; no 2.x engine runs here to measure it.
        return GODOT3_KEYS if self.major <= 3 else GODOT4_KEYS

    def type_id(self, name: str) -> int | None:
        """The wire id of a Godot 4 type name, or None when this dialect lacks it."""
        return self._ids.get(name)

    def has(self, name: str) -> bool:
        return name in self._ids

    def math_type(self, name: str) -> MathType:
        """The row of a fixed-size math type, in this dialect's component order."""
        if self.basis_order == BasisOrder.COLUMNS and name in MATH_TYPES_BY_COLUMNS:
            return MATH_TYPES_BY_COLUMNS[name]
        return MATH_TYPES[name]

    def native_name(self, name: str) -> str:
        return self.native_names.get(name, name)

    @property
    def variant_max(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return f"<Dialect {self.name}>"


#: The switches, and the values each one takes.
_SWITCHES: dict[str, type[_Switch]] = {
    "int_format": IntFormat, "float_format": FloatFormat, "rid_format": RidFormat,
    "object_format": ObjectFormat, "object_script": ObjectScript, "basis_order": BasisOrder,
}


def _problems(d: Dialect) -> list[str]:
    """What is wrong with a dialect's table and switches: every invariant the codec relies on."""
    problems: list[str] = []
    if not isinstance(d.name, str) or not d.name:
        problems.append("the name must be a non-empty string")
    types = d.types
    if not isinstance(types, tuple) or not types or not all(isinstance(n, str) for n in types):
        return problems + [f"types must be a non-empty sequence of type names (or UNSUPPORTED), not {types!r}"]
    first_id = _first_ids(types, problems)
    _mask_problems(d, first_id, problems)
    _value_problems(d, problems)
    _name_problems(d, first_id, problems)
    return problems


def _first_ids(types: tuple[str, ...], problems: list[str]) -> dict[str, int]:
    """Each type's id, noting unknown names, names given twice and a trailing empty slot."""
    first_id: dict[str, int] = {}
    for type_id, name in enumerate(types):
        if name == UNSUPPORTED:
            continue
        if name not in KNOWN_TYPES:
            problems.append(f"types[{type_id}] = {name!r} is not a type the codec knows "
                            f"(one of godot_formats.dialects.KNOWN_TYPES, or UNSUPPORTED for an empty slot)")
        elif name in first_id:
            problems.append(f"{name!r} has two ids, {first_id[name]} and {type_id}")
        first_id.setdefault(name, type_id)
    if not types[-1]:
        problems.append(f"the last id ({len(types) - 1}) is an empty slot: the table should end at its last type")
    return first_id


def _mask_problems(d: Dialect, first_id: dict[str, int], problems: list[str]) -> None:
    """The type mask must cover every id and leave the header flag bits the dialect writes alone."""
    mask = d.type_mask
    if not isinstance(mask, int) or not 0 < mask <= 0xFFFFFFFF or mask & (mask + 1):
        problems.append(f"type_mask {mask!r} is not a mask of the low bits of a u32 (0xFF, 0xFFFF, 0xFFFFFFFF ...)")
        return
    if len(d.types) > mask + 1:
        problems.append(f"{len(d.types)} types need ids up to {len(d.types) - 1}, beyond type_mask 0x{mask:x}")
    written = [
        (f"int_format={d.int_format}", FLAG_64, d.int_format in (IntFormat.AUTO, IntFormat.FLAG64)),
        (f"float_format={d.float_format}", FLAG_64, d.float_format in (FloatFormat.AUTO, FloatFormat.FLAG64)),
        ("real_is_double", FLAG_64, d.real_is_double),
        ("object_format=engine", FLAG_64, d.object_format == ObjectFormat.ENGINE and "Object" in first_id),
        ("typed_arrays", _TYPED_ARRAY_BITS, d.typed_arrays),
        ("typed_dictionaries", _TYPED_DICTIONARY_BITS, d.typed_dictionaries),
    ]
    clashes = [switch for switch, bits, on in written if on and mask & bits]
    if clashes:
        problems.append(f"{', '.join(clashes)} set header flag bits that type_mask 0x{mask:x} reads as part "
                        "of the type id: the dialect could not read its own bytes")


def _value_problems(d: Dialect, problems: list[str]) -> None:
    """Fields that take a few values only."""
    if d.real_is_double and not d.math_flag_64:
        problems.append("real_is_double writes math types with the 64-bit flag, which math_flag_64=False ignores")
    if d.int64_array_count_size not in (4, 8):
        problems.append(f"int64_array_count_size is {d.int64_array_count_size!r}, not 4 or 8")
    if d.major not in (2, 3, 4):
        problems.append(f"major is {d.major!r}, not 2, 3 or 4")
    if d.object_classes not in (3, 4):
        problems.append(f"object_classes is {d.object_classes!r}, not 3 or 4")
    if not isinstance(d.prior, (int, float)) or not 0 < d.prior <= 1:
        problems.append(f"prior is {d.prior!r}, not a weight in (0, 1]")
    if d.text_version is not None and not (isinstance(d.text_version, str) and d.text_version[:2] in ("3.", "4.")):
        problems.append(f"text_version is {d.text_version!r}, not None or a 3.x/4.x version such as '4.5'")


def _name_problems(d: Dialect, first_id: dict[str, int], problems: list[str]) -> None:
    """Renames must be of the dialect's own types, and no two types may share a name."""
    for name, native in d.native_names.items():
        if name not in first_id:
            problems.append(f"native_names renames {name!r}, which is not in types")
        if not isinstance(native, str) or not native:
            problems.append(f"native_names[{name!r}] must be a non-empty string")
    named: dict[str, str] = {}
    for name in first_id:
        native = d.native_names.get(name, name)
        if native in named:
            problems.append(f"{named[native]!r} and {name!r} are both called {native!r}")
        named.setdefault(native, name)


_REGISTRY: dict[str, Dialect] = {}
#: Dialects found by name but left out of :func:`dialect_names` (see ``register``).
_UNLISTED: set[str] = set()


def register(dialect: Dialect, *aliases: str, listed: bool = True) -> Dialect:
    """Make a dialect available by name (``loads(data, dialect="name")``).

    ``listed=False`` keeps it out of :func:`dialect_names`, which is what
    ``detect`` tries and the command line offers: for a dialect whose bytes are,
    without its rare markers, identical to a listed one's, so that listing it
    would make every blob of the other ambiguous.
    """
    if not isinstance(dialect, Dialect):
        raise TypeError(f"register() takes a Dialect, not {type(dialect).__name__}")
    keys = (dialect.name, *aliases)
    for key in keys:
        if not isinstance(key, str) or not key:
            raise ValueError(f"dialect {dialect.name!r}: alias {key!r} is not a non-empty string")
        if keys.count(key) > 1:
            raise ValueError(f"dialect {dialect.name!r}: {key!r} is given twice")
        taken = _REGISTRY.get(key)
        if taken is not None and taken is not dialect:
            raise ValueError(f"dialect {dialect.name!r}: the name {key!r} is taken by {taken.name!r} "
                             "(unregister it first)")
    for key in keys:
        _REGISTRY[key] = dialect
    if not listed:
        _UNLISTED.add(dialect.name)
    return dialect


def unregister(dialect: str | Dialect) -> None:
    """Forget a dialect, under its name and every alias (the reverse of :func:`register`)."""
    d = get_dialect(dialect)
    if _REGISTRY.get(d.name) is not d:
        raise ValueError(f"dialect {d.name!r} is not registered")
    for key in [k for k, v in _REGISTRY.items() if v is d]:
        del _REGISTRY[key]
    _UNLISTED.discard(d.name)


def get_dialect(dialect: str | Dialect) -> Dialect:
    try:  # a name, the common case, first: one lookup (every loads/convert_value call makes it)
        found = _REGISTRY.get(dialect)  # type: ignore[arg-type]
    except TypeError:  # unhashable: no name
        found = None
    if found is not None:
        return found
    if isinstance(dialect, Dialect):  # no exception raised and caught on the way: that cost 0.4 us
        return dialect
    raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(dialect_names())}")


def dialect_names() -> list[str]:
    """The names of every listed dialect (aliases and ``listed=False`` ones excluded)."""
    return sorted({d.name for d in _REGISTRY.values()} - _UNLISTED)


def unlisted_engines() -> list[str]:
    """The engine dialects registered ``listed=False`` (Godot 2): left out of :func:`dialect_names`,
    tried by ``detect()`` all the same, after the listed ones."""
    return sorted(name for name in _UNLISTED if _REGISTRY[name].engine)


def registered() -> list[Dialect]:
    """Every registered dialect, listed or not, once each (aliases folded)."""
    return sorted({id(d): d for d in _REGISTRY.values()}.values(), key=lambda d: d.name)


GODOT4_TYPES = TYPE_NAMES

# Godot 2.x (2.0-2.1.6): ids 0-28, with IMAGE (15) and INPUT_EVENT (19), which Godot 3
# dropped before renumbering the rest.  Their names are not Godot 4 type names: no
# later version has them (the converter reports them as losses).
GODOT2_TYPES = (
    "Nil", "bool", "int", "float", "String", "Vector2", "Rect2", "Vector3", "Transform2D",
    "Plane", "Quaternion", "AABB", "Basis", "Transform3D", "Color", "Image", "NodePath", "RID",
    "Object", "InputEvent", "Dictionary", "Array", "PackedByteArray", "PackedInt32Array",
    "PackedFloat32Array", "PackedStringArray", "PackedVector2Array", "PackedVector3Array",
    "PackedColorArray",
)
GODOT2_NAMES = registry.names_for_major(2)
GODOT40_TYPES = tuple(name for name in TYPE_NAMES if name != "PackedVector4Array")  # added in 4.3, by name

GODOT3 = register(Dialect(
    "godot3", "Godot 3.1-3.6 (27 types, Pool arrays)", GODOT3_TYPES,
    native_names=GODOT3_NAMES, major=3, math_flag_64=False, rid_format=RidFormat.NONE, utf8_surrogates=True,
    object_script=ObjectScript.OBJECT, text_version="3.2", object_classes=3,
), "godot3.1", "godot3.2", "godot3.3", "godot3.4", "godot3.5", "godot3.6")
GODOT30 = register(attrs.evolve(
    GODOT3, name="godot3.0",
    description="Godot 3.0.x: as godot3, but every int is written 64-bit (fixed in 3.1)",
    int_format=IntFormat.FLAG64, prior=0.9, sibling="godot3", decodes_like="godot3",
))
GODOT2 = register(Dialect(
    # From the 2.x marshalls.cpp (decode_variant/encode_variant) and six engine.cfb files
    # exported by 2.1.1-2.1.6 (no 2.x engine runs here): the decoder compares the whole
    # header word with VARIANT_MAX (so no flag bits: INT and REAL are always 4 bytes),
    # Arrays/Dictionaries may carry the "shared" bit 31 (masked), NodePath has the old
    # string form and the property flag, RID and Object are the header alone.
    "godot2", "Godot 2.0-2.1 (29 types with Image and InputEvent; 32-bit int and float)", GODOT2_TYPES,
    native_names=GODOT2_NAMES, major=2, type_mask=0xFFFFFFFF, math_flag_64=False, int_format=IntFormat.I32,
    float_format=FloatFormat.F32, rid_format=RidFormat.NONE, object_format=ObjectFormat.HEADER,
    node_path_old_format=True, utf8_surrogates=True, object_script=ObjectScript.OBJECT, text_version=None,
    object_classes=3,
), "godot2.0", "godot2.1", listed=False)
# Unlisted: no Godot 2 engine runs here, so the conformance kit and the engine checks that
# go through dialect_names() cannot cover it.  detect() still tries it, after the listed
# versions (unlisted_engines()): a reading only Godot 2 makes wins, one it shares
# with Godot 3 (ids 0-14, no flags) is reported as ambiguous between them.
GODOT40 = register(Dialect(
    "godot4.0", "Godot 4.0-4.2 (38 types, no typed containers)", GODOT40_TYPES, object_script=ObjectScript.OBJECT,
    text_version="4.0", prior=0.96, sibling="godot4",
), "godot4.1", "godot4.2")
GODOT43 = register(attrs.evolve(
    GODOT40, name="godot4.3",
    description="Godot 4.3 (39 types with PackedVector4Array, typed Array, no typed Dictionary)",
    types=GODOT4_TYPES, typed_arrays=True, object_script=ObjectScript.PATH, text_version="4.3", prior=0.97,
))
GODOT4 = register(attrs.evolve(
    GODOT43, name="godot4",
    description="Godot 4.4 and later (39 types, typed Array and typed Dictionary)",
    typed_dictionaries=True, text_version="4.5", prior=1.0, sibling=None,
), "godot4.4", "godot4.5", "godot4.6")
GODOT4_DOUBLE = register(attrs.evolve(
    GODOT4, name="godot4-double",
    description="Godot 4.4+ built with precision=double (64-bit math types, header flag set)",
    real_is_double=True, prior=0.9, sibling="godot4", reads_what_it_writes="godot4",
))


# --- documented dialects: each page of the "Binary serialization API" docs, to the letter.
# See docs/documented-dialects.md for the page-by-page analysis and every reading chosen.

DOCS4_TYPES = (
    "Nil", "bool", "int", "float", "String", "Vector2", "Rect2", "Vector3", "Transform2D",
    "Plane", "Quaternion", "AABB", "Basis", "Transform3D", "Color", "NodePath", "RID",
    "Object", "Dictionary", "Array", "PackedByteArray", "PackedInt32Array", "PackedInt64Array",
    "PackedFloat32Array", "PackedFloat64Array", "PackedStringArray", "PackedVector2Array",
    "PackedVector3Array", "PackedColorArray",
)

_DOCS = dict(
    engine=False, object_script=ObjectScript.OBJECT, math_flag_64=False, packed_string_nul=False,
    basis_order=BasisOrder.COLUMNS, rid_format=RidFormat.UNSUPPORTED, object_format=ObjectFormat.UNSUPPORTED,
    node_path_old_format=True,
)

DOCS_GODOT30 = register(Dialect(
    "docs-godot3.0", "the Godot 3.0 documentation page: 27 types, no header flags, "
    "int always 64-bit, float always 32-bit", GODOT3_TYPES, native_names=GODOT3_NAMES, major=3,
    type_mask=0xFFFFFFFF, int_format=IntFormat.I64, float_format=FloatFormat.F32, **_DOCS,  # type: ignore[arg-type]
    text_version="3.2", object_classes=3,
    notes=("no header flags: ints are always 8 bytes, floats always 4 (the engine: 4 or 8 by value)",
           "PoolStringArray elements without the NUL the engine writes",
           "Basis and Transform listed by columns (the engine writes rows)",
           "RID and Object are not documented in this capture"),
))
DOCS_GODOT3 = register(Dialect(
    "docs-godot3", "the Godot 3.x documentation page: 27 types, type = header & 0xFFFF",
    GODOT3_TYPES, native_names=GODOT3_NAMES, major=3, type_mask=0xFFFF, float_format=FloatFormat.FLAG64,
    text_version="3.2", object_classes=3, **_DOCS,  # type: ignore[arg-type]
    notes=("type = header & 0xFFFF (the engine masks 0xFF)",
           "'float always uses double precision': every float written 64-bit with the flag",
           "PoolStringArray elements without the NUL the engine writes",
           "Basis and Transform listed by columns (the engine writes rows)",
           "RID and Object 'unsupported'"),
))
DOCS_GODOT4_FIXED64 = register(Dialect(
    "docs-godot4-fixed64", "the early Godot 4 documentation page: 29 types with fixed "
    "64-bit ints and floats, no header flags", DOCS4_TYPES,
    native_names={"Quaternion": "Quat", "Transform3D": "Transform"},
    type_mask=0xFFFFFFFF, int_format=IntFormat.I64, float_format=FloatFormat.F64, int64_array_count_size=8,
    **_DOCS,  # type: ignore[arg-type]
    notes=("the 3.x type table with two packed arrays spliced in: only ids 0-5 match Godot 4",
           "no header flags: ints always 8 bytes, floats always 8 bytes",
           "PackedInt64Array has an 8-byte length (the engine: 4)",
           "PackedStringArray elements without the NUL the engine writes",
           "Basis and Transform listed by columns (the engine writes rows)"),
))
DOCS_GODOT4 = register(attrs.evolve(
    DOCS_GODOT4_FIXED64, name="docs-godot4",
    description="the outdated Godot 4 documentation page (4.0-4.6 'stable'): 29 types, "
    "type = header & 0xFFFF",
    native_names={}, type_mask=0xFFFF, int_format=IntFormat.AUTO, float_format=FloatFormat.FLAG64,
    object_format=ObjectFormat.DOCS4,
    notes=("the 3.x type table with two packed arrays spliced in: only ids 0-5 match Godot 4",
           "type = header & 0xFFFF (the engine masks 0xFF)",
           "'float always uses double precision': every float written 64-bit with the flag",
           "PackedInt64Array has an 8-byte length (the engine: 4)",
           "Object id without the flag, null as OBJECT + 0, class and property names unpadded",
           "PackedStringArray elements without the NUL the engine writes",
           "Basis and Transform listed by columns (the engine writes rows)"),
))
