"""One row per Godot type: everything the library knows about a type, in one place.

Like ``pickletools.opcodes``, the rows are data that every part of the library reads
instead of restating: the codec builds its dispatch tables from them, and the text
writer and parser, the JSON form, ``explain``, the ``dump`` tree and the converter look a
value's row up with :func:`spec_for` (by its class, then its base classes) and go by
what the row says.  A row holds:

- ``name``: the Godot 4 name (Godot 2's Image and InputEvent keep theirs), ``names``: what
  each engine version calls it where that differs, ``aliases``: other names the engines'
  text parsers accept, ``majors``: the engine versions that have it;
- ``classes``: the Python classes that stand for it (the first one builds values);
- ``family``: how the views treat it as a whole (a math type is a fixed list of numbers,
  a packed array a run of them, a record a few named fields ...);
- ``read`` and ``write``: its payload reader and writer (:mod:`godot_formats.wire`);
- ``fields`` (math types: the component paths in wire order) and ``build``, ``columns``
  (the column-by-column order JSON and the documentation pages use for a Basis);
  ``component`` and ``width`` (the kind of number, and numbers per packed element);
- ``record``: the named fields of a record type, which JSON, the tree and ``explain`` show;
  ``layout``: those fields as ``explain`` finds them on the wire;
- ``text``: its text printer, or ``no_text``: why it has none;
- ``downgrade``: what a conversion writes for it where the target version lacks it.

Adding a type is its class, one row here (or ``register_type`` from a program) and its id in
the dialects that have it: every table built from the rows is filled through
:func:`for_each_row`, so the new row reaches all of them (docs/architecture.md, "Recipe: add a
type"; tests/core/test_new_type_and_dialect.py proves it with a Vector5 no engine has).
"""

from __future__ import annotations

import enum
import operator
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from . import types as t
from . import wire as w
from .errors import EncodeError
from .switches import F32, F64, I32, I64, REAL, U8

__all__ = [
    "Family", "RecordField", "Downgrade", "TypeSpec", "REGISTRY", "BY_NAME", "spec_for", "spec_named", "type_name_of",
    "godot_type_name", "GODOT_TYPE_NAMES", "register_type", "for_each_row", "math_row", "names_for_major",
    "is_array", "is_dictionary", "float32", "is_float32", "pad4", "nesting_error", "INT32_MIN", "INT32_MAX",
]

INT32_MIN, INT32_MAX = -0x80000000, 0x7FFFFFFF


class Family(enum.Enum):
    """How the views treat a type as a whole; what is particular to one type is in its row."""

    NIL = "nil"
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    STRING = "string"        # String and StringName: text
    NODE_PATH = "node_path"  # text with a structure of its own
    MATH = "math"            # a fixed list of numbers (vectors, Color, Basis ...)
    PACKED = "packed"        # a run of numbers (PackedByteArray ... PackedVector4Array)
    STRINGS = "strings"      # PackedStringArray
    RECORD = "record"        # a few named fields (RID, Callable, Signal, Image, InputEvent)
    ARRAY = "array"
    DICTIONARY = "dictionary"
    OBJECT = "object"


#: The families whose values hold other values (the views walk them with explicit stacks).
CONTAINER_FAMILIES = frozenset({Family.ARRAY, Family.DICTIONARY, Family.OBJECT})


@attrs.frozen
class RecordField:
    """One named field of a record type: the attribute, the kind of number or text it holds,
    the key JSON uses for it, and the value JSON leaves out (``omit``)."""

    attr: str
    kind: str  # "u32", "u64", "str", "bytes" (base64 in JSON), "u32s" (a list of u32), "opt_u32" (u32 or None)
    key: str = ""
    omit: Any = ...  # what JSON leaves out; Ellipsis: never left out

    @property
    def optional(self) -> bool:
        """Whether JSON may leave this field out (it then holds ``omit``)."""
        return self.omit is not ...

    @property
    def json_key(self) -> str:
        return self.key or self.attr


@attrs.frozen
class Downgrade:
    """What ``policy="lossy"`` writes for a type the target version does not have.

    ``writes`` documents the replacement (and is the loss message); ``apply(value,
    target_dialect)`` builds it, from types the target has.
    """

    writes: str
    apply: Callable[[Any, Any], Any]


ReadFn = Callable[..., "tuple[Any, int]"]
WriteFn = Callable[..., Any]


@attrs.frozen(eq=False)
class TypeSpec:
    """One Godot type, as every part of the library sees it (see the module docstring)."""

    name: str
    family: Family
    classes: tuple[type, ...]
    read: ReadFn | None
    write: WriteFn
    majors: frozenset[int] = frozenset({2, 3, 4})
    names: Mapping[int, str] = attrs.field(factory=dict)
    aliases: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None
    build: Callable[[Sequence[Any]], Any] | None = None
    build_columns: Callable[[Sequence[Any]], Any] | None = None
    component: str | None = None
    width: int = 1
    record: tuple[RecordField, ...] = ()
    layout: tuple[tuple[str, str], ...] = ()
    text: Callable[[Any, int], str] | None = None
    no_text: str = ""
    downgrade: Downgrade | None = None
    #: Godot's ``<`` compares two values component by component (the vectors): how the text
    #: writer orders Dictionary keys of this type.
    ordered: bool = False
    doc: str = ""
    _parts: Callable[[Any], tuple[Any, ...]] = attrs.field(init=False, repr=False)
    _parts_by_columns: Callable[[Any], tuple[Any, ...]] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # The getters of a math value's numbers, made once per row (not per value).
        if self.fields:
            object.__setattr__(self, "_parts", _getter(self.fields))
            object.__setattr__(self, "_parts_by_columns", _getter(self.columns or self.fields))

    @property
    def cls(self) -> type:
        """The class that builds values of this type."""
        return self.classes[0]

    @property
    def is_container(self) -> bool:
        return self.family in CONTAINER_FAMILIES

    def native_name(self, major: int) -> str:
        """What engine version ``major`` calls this type."""
        return self.names.get(major, self.name)

    def parts(self, value: Any) -> tuple[Any, ...]:
        """A math value's numbers, in wire order."""
        return self._parts(value)

    def parts_by_columns(self, value: Any) -> tuple[Any, ...]:
        """A math value's numbers column by column (JSON's and the documentation pages' order)."""
        return self._parts_by_columns(value)

    def build_from_columns(self, numbers: Sequence[Any]) -> Any:
        """The math value whose numbers, column by column, are ``numbers``."""
        assert self.build is not None
        if self.columns is None:
            return self.build(numbers)
        if self.build_columns is not None:
            return self.build_columns(numbers)
        return self.build([numbers[i] for i in _permutation(self.fields, self.columns)])

    @property
    def count(self) -> int:
        """Numbers in a math value."""
        return len(self.fields)


#: wire.py's payload functions see a row through the role it declares (it cannot import this
#: module): the type checker proves here that a TypeSpec plays it.
_ROW: type[w.Row] = TypeSpec


def _getter(paths: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The numbers at ``paths`` (every math type has at least two), as one C-level call."""
    return operator.attrgetter(*paths)


_PERMUTATIONS: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[int, ...]] = {}


def _permutation(fields: tuple[str, ...], columns: tuple[str, ...]) -> tuple[int, ...]:
    key = (fields, columns)
    if key not in _PERMUTATIONS:
        _PERMUTATIONS[key] = tuple(columns.index(f) for f in fields)
    return _PERMUTATIONS[key]


# --- the shared small rules ---------------------------------------------------------------

pad4 = w.pad4

float32 = t.float32


def is_float32(x: float) -> bool:
    """Whether ``x`` survives float32 exactly (NaN does, whatever its payload bits' fate)."""
    y = float32(x)
    return y == x or (x != x and y != y)


def is_array(value: Any) -> bool:
    """An Array: a list or tuple, but not one of the math types that are tuples of numbers."""
    return isinstance(value, (list, tuple)) and not isinstance(value, t.Components)


def is_dictionary(value: Any) -> bool:
    """A Dictionary: a plain ``dict`` or the model's :class:`~godot_formats.types.Dictionary`."""
    return isinstance(value, (dict, t.Dictionary))


def nesting_error(max_depth: int, writing: bool = True) -> str:
    """The one wording of "too deep", for every reader and writer.  A value being written
    that is this deep most likely contains itself, so the writers say so."""
    hint = " (a container that contains itself?)" if writing else ""
    return f"value nested deeper than {max_depth} levels{hint}"


# --- builders and printers the rows share ---------------------------------------------------

V2, V2i, V3, V4 = t.Vector2, t.Vector2i, t.Vector3, t.Vector4
_BASIS_ROWS = ("x.x", "y.x", "z.x", "x.y", "y.y", "z.y", "x.z", "y.z", "z.z")
_BASIS_COLUMNS = ("x.x", "x.y", "x.z", "y.x", "y.y", "y.z", "z.x", "z.y", "z.z")


def _paths(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _flat(cls: type) -> Callable[[Sequence[Any]], Any]:
    return lambda c: cls(*c)


def _rid_text(value: t.RID, major: int) -> str:
    if major == 3:
        return ""  # Godot 3's VariantWriter has no case for RID: it writes nothing
    if not 0 <= value.id <= 0xFFFFFFFFFFFFFFFF:
        raise EncodeError(f"RID id {value.id} is not a 64-bit unsigned int")
    n = value.id - (1 << 64) if value.id >> 63 else value.id  # itos() of the uint64 id
    return f"RID({n})" if value.id else "RID()"


def _projection_columns(v: t.Projection, d: Any) -> Any:
    return [[c.x, c.y, c.z, c.w] for c in (v.x, v.y, v.z, v.w)]


def _int64_array(v: t.PackedInt64Array, d: Any) -> Any:
    values = v.data
    if all(INT32_MIN <= x <= INT32_MAX for x in values):
        return t.PackedInt32Array(values)
    return list(values)


def _float64_array(v: t.PackedFloat64Array, d: Any) -> Any:
    values = v.data
    if all(is_float32(x) for x in values):
        return t.PackedFloat32Array(array("f", values))
    return list(values)


def _vector4_array(v: t.PackedVector4Array, d: Any) -> Any:
    if d.has("Vector4"):
        return list(v)
    return [[e.x, e.y, e.z, e.w] for e in v]


def _numbers(*fields: str) -> Callable[[Any, Any], Any]:
    return lambda v, d: [getattr(v, f) for f in fields]


def _math(name: str, cls: type, component: str, fields: str, build: Callable[[Sequence[Any]], Any] | None = None,
          **extra: Any) -> TypeSpec:
    return TypeSpec(name, Family.MATH, (cls,), w.read_math, w.write_math, fields=_paths(fields),
                    build=build or _flat(cls), component=component, **extra)


def _packed(name: str, cls: type, component: str, width: int = 1, **extra: Any) -> TypeSpec:
    return TypeSpec(name, Family.PACKED, (cls,), w.read_packed, w.write_packed, component=component, width=width,
                    **extra)


_G4 = frozenset({4})
_G2 = frozenset({2})
_G34 = frozenset({3, 4})

#: Every type, in Godot 4's Variant::Type order, then Godot 2's two of its own, then any a
#: program added with :func:`register_type`.
REGISTRY: list[TypeSpec] = [
    TypeSpec("Nil", Family.NIL, (type(None),), w.read_nil, w.write_nil),
    TypeSpec("bool", Family.BOOL, (bool,), w.read_bool, w.write_bool),
    TypeSpec("int", Family.INT, (int,), w.read_int, w.write_int),
    TypeSpec("float", Family.FLOAT, (float,), w.read_float, w.write_float),
    TypeSpec("String", Family.STRING, (str,), w.read_string, w.write_string),
    _math("Vector2", t.Vector2, REAL, "x y", ordered=True),
    _math("Vector2i", t.Vector2i, I32, "x y", majors=_G4,
          downgrade=Downgrade("a Vector2 with the same components", lambda v, d: t.Vector2(v.x, v.y)), ordered=True),
    _math("Rect2", t.Rect2, REAL, "position.x position.y size.x size.y",
          lambda c: t.Rect2(V2(c[0], c[1]), V2(c[2], c[3]))),
    _math("Rect2i", t.Rect2i, I32, "position.x position.y size.x size.y",
          lambda c: t.Rect2i(V2i(c[0], c[1]), V2i(c[2], c[3])), majors=_G4,
          downgrade=Downgrade("a Rect2 with the same components", lambda v, d: t.Rect2(
              t.Vector2(v.position.x, v.position.y), t.Vector2(v.size.x, v.size.y)))),
    _math("Vector3", t.Vector3, REAL, "x y z", ordered=True),
    _math("Vector3i", t.Vector3i, I32, "x y z", majors=_G4, ordered=True,
          downgrade=Downgrade("a Vector3 with the same components", lambda v, d: t.Vector3(v.x, v.y, v.z))),
    # Transform2D and Projection are written column by column ...
    _math("Transform2D", t.Transform2D, REAL, "x.x x.y y.x y.y origin.x origin.y",
          lambda c: t.Transform2D(V2(c[0], c[1]), V2(c[2], c[3]), V2(c[4], c[5])), names={2: "Matrix32"},
          aliases=("Matrix32",)),
    _math("Vector4", t.Vector4, REAL, "x y z w", majors=_G4,
          downgrade=Downgrade("an Array of its 4 floats [x, y, z, w]", _numbers("x", "y", "z", "w")), ordered=True),
    _math("Vector4i", t.Vector4i, I32, "x y z w", majors=_G4,
          downgrade=Downgrade("an Array of its 4 ints [x, y, z, w]", _numbers("x", "y", "z", "w")), ordered=True),
    _math("Plane", t.Plane, REAL, "normal.x normal.y normal.z d", lambda c: t.Plane(V3(c[0], c[1], c[2]), c[3])),
    _math("Quaternion", t.Quaternion, REAL, "x y z w", names={2: "Quat", 3: "Quat"}, aliases=("Quat",)),
    _math("AABB", t.AABB, REAL, "position.x position.y position.z size.x size.y size.z",
          lambda c: t.AABB(V3(c[0], c[1], c[2]), V3(c[3], c[4], c[5])), aliases=("Rect3",)),
    # ... but Basis (and the basis of Transform3D) row by row.
    _math("Basis", t.Basis, REAL, " ".join(_BASIS_ROWS), lambda c: t.Basis.from_rows(c[0:3], c[3:6], c[6:9]),
          columns=_BASIS_COLUMNS, build_columns=lambda c: t.Basis(V3(c[0], c[1], c[2]), V3(c[3], c[4], c[5]),
                                                                  V3(c[6], c[7], c[8])),
          names={2: "Matrix3"}, aliases=("Matrix3",)),
    _math("Transform3D", t.Transform3D, REAL,
          " ".join("basis." + p for p in _BASIS_ROWS) + " origin.x origin.y origin.z",
          lambda c: t.Transform3D(t.Basis.from_rows(c[0:3], c[3:6], c[6:9]), V3(c[9], c[10], c[11])),
          columns=tuple("basis." + p for p in _BASIS_COLUMNS) + ("origin.x", "origin.y", "origin.z"),
          build_columns=lambda c: t.Transform3D(t.Basis(V3(c[0], c[1], c[2]), V3(c[3], c[4], c[5]),
                                                        V3(c[6], c[7], c[8])), V3(c[9], c[10], c[11])),
          names={2: "Transform", 3: "Transform"}, aliases=("Transform",)),
    _math("Projection", t.Projection, REAL, " ".join(f"{c}.{k}" for c in "xyzw" for k in "xyzw"),
          lambda c: t.Projection(V4(*c[0:4]), V4(*c[4:8]), V4(*c[8:12]), V4(*c[12:16])), majors=_G4,
          downgrade=Downgrade("an Array of its 4 columns, each an Array of 4 floats", _projection_columns)),
    _math("Color", t.Color, F32, "r g b a"),
    TypeSpec("StringName", Family.STRING, (t.StringName,), w.read_string_name, w.write_string_name, majors=_G4,
             downgrade=Downgrade("a String with the same text", lambda v, d: str(v))),
    TypeSpec("NodePath", Family.NODE_PATH, (t.NodePath,), w.read_node_path, w.write_node_path),
    TypeSpec("RID", Family.RECORD, (t.RID,), w.read_rid, w.write_rid, record=(RecordField("id", "u64", omit=0),),
             layout=(("id", "u64"),), text=_rid_text),
    TypeSpec("Object", Family.OBJECT, (t.Object, t.EncodedObjectAsID), w.read_object_header, w.write_object),
    TypeSpec("Callable", Family.RECORD, (t.Callable,), w.read_callable, w.write_callable, majors=_G4,
             text=lambda v, major: "Callable()",
             downgrade=Downgrade("null (a Callable carries no data on the wire)", lambda v, d: None)),
    TypeSpec("Signal", Family.RECORD, (t.Signal,), w.read_signal, w.write_signal, majors=_G4,
             record=(RecordField("name", "str", omit=""), RecordField("object_id", "u64", omit=0)),
             layout=(("name", "str"), ("object id", "u64")), text=lambda v, major: "Signal()",
             downgrade=Downgrade("null (its object id means nothing in another process)", lambda v, d: None)),
    TypeSpec("Dictionary", Family.DICTIONARY, (dict, t.Dictionary, t.TypedDictionary), None, w.write_dictionary),
    TypeSpec("Array", Family.ARRAY, (list, tuple, t.TypedArray), None, w.write_array),
    TypeSpec("PackedByteArray", Family.PACKED, (bytes, bytearray, memoryview), w.read_packed_bytes,
             w.write_packed_bytes, component=U8, names={2: "RawArray", 3: "PoolByteArray"},
             aliases=("PoolByteArray", "ByteArray")),
    _packed("PackedInt32Array", t.PackedInt32Array, I32, names={2: "IntArray", 3: "PoolIntArray"},
            aliases=("PackedIntArray", "PoolIntArray", "IntArray")),
    _packed("PackedInt64Array", t.PackedInt64Array, I64, majors=_G4, downgrade=Downgrade(
        "a PackedInt32Array when every value fits in 32 bits, else an Array of ints", _int64_array)),
    _packed("PackedFloat32Array", t.PackedFloat32Array, F32, names={2: "RealArray", 3: "PoolRealArray"},
            aliases=("PackedRealArray", "PoolRealArray", "FloatArray")),
    _packed("PackedFloat64Array", t.PackedFloat64Array, F64, majors=_G4, downgrade=Downgrade(
        "a PackedFloat32Array when every value is exact in float32, else an Array of floats", _float64_array)),
    TypeSpec("PackedStringArray", Family.STRINGS, (t.PackedStringArray,), w.read_packed_strings,
             w.write_packed_strings, names={2: "StringArray", 3: "PoolStringArray"},
             aliases=("PoolStringArray", "StringArray")),
    _packed("PackedVector2Array", t.PackedVector2Array, REAL, 2, names={2: "Vector2Array", 3: "PoolVector2Array"},
            aliases=("PoolVector2Array", "Vector2Array")),
    _packed("PackedVector3Array", t.PackedVector3Array, REAL, 3, names={2: "Vector3Array", 3: "PoolVector3Array"},
            aliases=("PoolVector3Array", "Vector3Array")),
    _packed("PackedColorArray", t.PackedColorArray, F32, 4, names={2: "ColorArray", 3: "PoolColorArray"},
            aliases=("PoolColorArray", "ColorArray")),
    _packed("PackedVector4Array", t.PackedVector4Array, REAL, 4, majors=_G4,
            aliases=("PoolVector4Array", "Vector4Array"), downgrade=Downgrade(
                "an Array of Vector4 (or, without Vector4, of [x, y, z, w] Arrays)", _vector4_array)),
    # Godot 2 only.  Godot 3 made input events Objects (InputEventKey ...) and Image a
    # Resource, neither of which a value can become: a conversion reports them as losses.
    TypeSpec("Image", Family.RECORD, (t.Image,), w.read_image, w.write_image, majors=_G2,
             record=(RecordField("format", "u32"), RecordField("mipmaps", "u32"), RecordField("width", "u32"),
                     RecordField("height", "u32"), RecordField("data", "bytes")),
             layout=(("format", "u32"), ("mipmaps", "u32"), ("width", "u32"), ("height", "u32"),
                     ("data", "bytes")),
             no_text="Godot 2's Image has no text form in this library (its engine cannot be run to check one); "
                     "the JSON form keeps it exactly",
             downgrade=Downgrade("null (Godot 3 and later have no Image Variant: an Image is a Resource)",
                                 lambda v, d: None)),
    TypeSpec("InputEvent", Family.RECORD, (t.InputEvent,), w.read_input_event, w.write_input_event, majors=_G2,
             record=(RecordField("type", "u32", key="event"), RecordField("device", "u32"),
                     RecordField("payload", "u32s"), RecordField("size", "opt_u32", omit=None)),
             layout=(("event type", "u32"), ("device", "u32"), ("size", "u32"), ("payload", "u32s")),
             no_text="Godot 2's InputEvent has no text form in this library (its engine cannot be run to check "
                     "one); the JSON form keeps it exactly",
             downgrade=Downgrade("null (Godot 3 and later have no InputEvent Variant: events are Objects)",
                                 lambda v, d: None)),
]

BY_NAME: dict[str, TypeSpec] = {spec.name: spec for spec in REGISTRY}
_BY_CLASS: dict[type, TypeSpec] = {cls: spec for spec in REGISTRY for cls in spec.classes}
#: Class -> Godot 4 type name, for every class a row stands for.
GODOT_TYPE_NAMES: dict[type, str] = {cls: spec.name for cls, spec in _BY_CLASS.items()}

#: What each table built from the rows does with one more row (see :func:`for_each_row`).
_ROW_HOOKS: list[Callable[[TypeSpec], None]] = []


def for_each_row(add: Callable[[TypeSpec], None]) -> Callable[[TypeSpec], None]:
    """Call ``add`` with every row now, and with every row :func:`register_type` adds later.

    Every table the library derives from the rows (the codec's, the text parser's, JSON's,
    the converter's ...) is filled this way, so one new row reaches all of them; used as a
    decorator on the function that adds one row to a table.
    """
    for spec in REGISTRY:
        add(spec)
    _ROW_HOOKS.append(add)
    return add


def register_type(spec: TypeSpec) -> TypeSpec:
    """Add a type: its row reaches the codecs (both backends), text, JSON, ``explain``, the
    tree, conversion and detection.  Dialects then give it an id in their ``types`` table.

    The row is checked first (a ValueError names what is wrong) so that no table ever holds
    half of it.  A row cannot be removed: a dialect or a value may hold it.
    """
    problems = _row_problems(spec)
    if problems:
        raise ValueError(f"cannot register type {getattr(spec, 'name', spec)!r}: " + "; ".join(problems))
    REGISTRY.append(spec)
    BY_NAME[spec.name] = spec
    for cls in spec.classes:
        _BY_CLASS[cls] = spec
        GODOT_TYPE_NAMES[cls] = spec.name
    for add in _ROW_HOOKS:
        add(spec)
    return spec


#: What a row of each family must say for the views to handle it without a hand edit.
_FAMILY_NEEDS: dict[Family, tuple[str, ...]] = {
    Family.MATH: ("fields", "build", "component"),
    Family.PACKED: ("component",),
    Family.RECORD: ("record",),
}


def _row_problems(spec: Any) -> list[str]:
    if not isinstance(spec, TypeSpec):
        return [f"register_type() takes a TypeSpec, not {type(spec).__name__}"]
    problems = []
    if not spec.name or not spec.name.isidentifier():
        problems.append("its name must be an identifier")
    if spec.name in BY_NAME:
        problems.append(f"the name {spec.name!r} is taken")
    for cls in spec.classes:
        if not isinstance(cls, type):
            problems.append(f"{cls!r} is not a class")
        elif cls in _BY_CLASS and _BY_CLASS[cls] in REGISTRY:
            problems.append(f"the class {cls.__name__} already stands for {_BY_CLASS[cls].name}")
    if not spec.classes:
        problems.append("it needs at least one class")
    if spec.read is None and not spec.is_container:
        problems.append("it needs a reader")
    problems += [f"a {spec.family.value} row needs {need}" for need in _FAMILY_NEEDS.get(spec.family, ())
                 if not getattr(spec, need)]
    return problems


def math_row(name: str, cls: type, component: str, fields: str, build: Callable[[Sequence[Any]], Any] | None = None,
             **extra: Any) -> TypeSpec:
    """The row of a math type: ``fields`` are the component paths in wire order, space-separated
    (``"x y z"``, ``"position.x position.y size.x size.y"``); ``build`` makes the value from
    the numbers (default: the class called with them)."""
    return _math(name, cls, component, fields, build, **extra)


def spec_named(name: str) -> TypeSpec:
    """The row of a type by its Godot 4 name (KeyError for a name no row has)."""
    return BY_NAME[name]


def spec_for(value: Any) -> TypeSpec | None:
    """The row of ``value``'s type: by its class, then by its base classes (a subclass of
    Vector2 is a Vector2 in every view), or None for a value no Godot type stands for.

    The answer for a class is remembered, so this is one dict lookup after the first time.
    """
    cls = type(value)
    try:
        return _BY_CLASS[cls]
    except KeyError:
        pass
    for base in cls.__mro__[1:]:
        spec = _BY_CLASS.get(base)
        if spec is not None:
            break
    else:
        return None
    if len(_BY_CLASS) < 4096:  # a program making classes on the fly must not grow this without end
        _BY_CLASS[cls] = spec
    return spec


def type_name_of(value: Any) -> str | None:
    """The Godot 4 type name of ``value`` (see :func:`spec_for`), or None."""
    spec = spec_for(value)
    return None if spec is None else spec.name


def godot_type_name(value: Any, names: Mapping[type, str] | None = None) -> str | None:
    """The Godot 4 type name of ``value`` (by its class, then its base classes), or None.

    The rows say which classes stand for which type; ``names`` looks a value up in another
    table instead, the same way.
    """
    if names is None:
        return type_name_of(value)
    name = names.get(type(value))
    if name is None:
        for cls in type(value).__mro__[1:]:
            name = names.get(cls)
            if name is not None:
                break
    return name


def names_for_major(major: int) -> dict[str, str]:
    """Godot 4 name -> what engine version ``major`` calls it, for the types it renamed."""
    return {spec.name: spec.names[major] for spec in REGISTRY if major in spec.names and major in spec.majors}
