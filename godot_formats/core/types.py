"""The value model: one set of Python types for every dialect.

Values are named after Godot 4 (a Godot 3 ``Quat`` decodes to
:class:`Quaternion`, ``PoolRealArray`` to :class:`PackedFloat32Array`) so that
a value read in one dialect can be written in another.  Python natives stand
for the Godot types they represent exactly: ``None`` (Nil), ``bool``, ``int``,
``float``, ``str`` (String), ``list`` (Array), ``dict`` (Dictionary) and
``bytes`` (PackedByteArray).  Everything else is defined here: the vectors,
Quaternion and Color are tuples of their components (:class:`Components`), the
other math types and the references are attrs classes, and the containers are
small classes of their own.

Math types keep their components as plain Python numbers; the dialect decides
their width on the wire (float32, or float64 in double-precision builds).
Packed arrays hold no Python object per element: the numeric and vector ones
keep one ``array.array``, and a decoded :class:`PackedStringArray` keeps the
bytes it was read from until its strings are asked for.
"""

from __future__ import annotations

import math
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, MutableSequence
from functools import cache
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, ClassVar, TypeVar, overload

import attrs

from godot_formats.core import accel
from godot_formats.core.keys import (
    GODOT3_KEYS,
    GODOT4_KEYS,
    KIND_COMPONENTS,
    KIND_NODE_PATH,
    KIND_OBJECT,
    KIND_PACKED,
    KIND_STRINGS,
    KIND_TEXT,
    KIND_TYPED_ARRAY,
    KIND_TYPED_DICTIONARY,
    SAME_CONTENT,
    KeyRules,
    Memo,
    godot_key,
    holds_no_float,
)

__all__ = [
    "Components", "Vector2", "Vector2i", "Rect2", "Rect2i", "Vector3", "Vector3i", "Transform2D",
    "Vector4", "Vector4i", "Plane", "Quaternion", "AABB", "Basis", "Transform3D",
    "Projection", "Color", "StringName", "NodePath", "RID", "Object",
    "EncodedObjectAsID", "Callable", "Signal", "ContainerType", "TypedArray",
    "Dictionary", "TypedDictionary", "PackedArray", "PackedInt32Array",
    "PackedInt64Array", "PackedFloat32Array", "PackedFloat64Array",
    "PackedStringArray", "PackedVector2Array", "PackedVector3Array",
    "PackedColorArray", "PackedVector4Array", "godot_key", "value_repr", "KeyRules", "GODOT3_KEYS",
    "GODOT4_KEYS", "InputEvent", "Image",
]

def _real(default: float = 0.0) -> Any:
    return attrs.field(converter=float, default=default)


def _int() -> Any:
    return attrs.field(converter=int, default=0)


# --- vectors -----------------------------------------------------------------

@cache
def _hash_struct(n: int, conv: Any) -> struct.Struct:
    """How a vector of ``n`` components is packed to be hashed (any ``n``: a new math type needs no entry)."""
    return struct.Struct("<" + ("d" if conv is float else "q") * n)

C = TypeVar("C", bound="Components")


class Components(tuple):  # type: ignore[type-arg]
    """Base of the vectors, :class:`Quaternion` and :class:`Color`: a tuple of components.

    A tuple because a decoder builds one in a single C call from the numbers it
    unpacked (an attrs class needs one call per field: 8.6 % of the instructions
    of decoding 20,000 records, measured with callgrind).  Otherwise they behave like the other math
    types: named, converted, immutable fields (``v.x``; ``v[0]`` and iteration
    too, like Godot's indexing); equal only to the same type, never to a plain
    tuple or another vector; no tuple arithmetic.
    """

    _key_kind: ClassVar[str] = KIND_COMPONENTS

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[tuple[Any, ...]] = ()
    _convert: ClassVar[Any] = float

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations = cls.__dict__.get("__annotations__", {})
        names = tuple(n for n in annotations if not n.startswith("_"))
        if not names:  # a subclass of a vector: its fields as they are
            return
        cls._fields = names
        cls.__match_args__ = names  # type: ignore[misc]  # case Vector2(x, y)
        cls._convert = int if annotations[names[0]] in ("int", int) else float
        cls._defaults = tuple(cls._convert(cls.__dict__.get(n, 0)) for n in names)
        for i, name in enumerate(names):
            setattr(cls, name, property(itemgetter(i), doc=f"component {i}"))

    def __new__(cls: type[C], *args: Any, **kwargs: Any) -> C:
        convert, names = cls._convert, cls._fields
        if not kwargs and len(args) == len(names):
            return tuple.__new__(cls, map(convert, args))
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} components, got {len(args)}")
        values = list(args) + list(cls._defaults[len(args):])
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {name!r}")
            i = names.index(name)
            if i < len(args):
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            values[i] = value
        return tuple.__new__(cls, map(convert, values))

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def replace(self: C, **changes: Any) -> C:
        """A copy with some components changed (``v.replace(y=0)``), like ``attrs.evolve``."""
        return type(self)(**{**dict(zip(self._fields, self)), **changes})

    __replace__ = replace  # copy.replace (Python 3.13)

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return tuple.__eq__(self, other)
        if isinstance(other, tuple):
            return False
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if type(other) is type(self):
            return tuple.__ne__(self, other)
        if isinstance(other, tuple):
            return True
        return NotImplemented

    def __hash__(self) -> int:
        # Hashed as bytes (SipHash, keyed per process), never from the components'
        # own hashes: floats with equal hashes are easy to find, and a tuple of
        # them multiplies the collisions (hash flooding of a Dictionary's keys).
        packer = _hash_struct(len(self), self._convert)
        try:
            return hash((type(self).__name__, packer.pack(*[c + 0 for c in self])))  # -0.0 hashes as 0.0
        except struct.error:  # an int past int64
            return hash(godot_key(self))

    def _no_tuple_operator(self, other: Any) -> Any:
        return NotImplemented

    __add__ = __radd__ = __mul__ = __rmul__ = _no_tuple_operator
    __lt__ = __le__ = __gt__ = __ge__ = _no_tuple_operator

    def __repr__(self) -> str:
        shown = map(str, self) if self._convert is int else map(repr, self)
        return f"{type(self).__name__}({', '.join(shown)})"


class Vector2(Components):
    __slots__ = ()
    x: float
    y: float


class Vector2i(Components):
    __slots__ = ()
    x: int
    y: int


class Vector3(Components):
    __slots__ = ()
    x: float
    y: float
    z: float


class Vector3i(Components):
    __slots__ = ()
    x: int
    y: int
    z: int


class Vector4(Components):
    __slots__ = ()
    x: float
    y: float
    z: float
    w: float


class Vector4i(Components):
    __slots__ = ()
    x: int
    y: int
    z: int
    w: int


@attrs.frozen
class Rect2:
    position: Vector2 = attrs.field(factory=Vector2)
    size: Vector2 = attrs.field(factory=Vector2)


@attrs.frozen
class Rect2i:
    position: Vector2i = attrs.field(factory=Vector2i)
    size: Vector2i = attrs.field(factory=Vector2i)


@attrs.frozen
class Transform2D:
    """Columns ``x``, ``y`` and ``origin``, as in Godot's API and on the wire."""

    x: Vector2 = attrs.field(factory=lambda: Vector2(1.0, 0.0))
    y: Vector2 = attrs.field(factory=lambda: Vector2(0.0, 1.0))
    origin: Vector2 = attrs.field(factory=Vector2)


@attrs.frozen
class Plane:
    normal: Vector3 = attrs.field(factory=Vector3)
    d: float = _real()


class Quaternion(Components):
    """Godot 3 calls this ``Quat``; the bytes are the same."""

    __slots__ = ()
    x: float
    y: float
    z: float
    w: float = 1.0


@attrs.frozen
class AABB:
    position: Vector3 = attrs.field(factory=Vector3)
    size: Vector3 = attrs.field(factory=Vector3)


@attrs.frozen
class Basis:
    """Columns ``x``, ``y``, ``z`` as in Godot's API.

    The engine stores and serialises *rows* (``rows[i][j]`` in 4.x,
    ``elements[i][j]`` in 3.x), so the wire order is x.x, y.x, z.x, x.y, ...;
    the table in :mod:`godot_formats.dialects` transposes, users never have to.
    """

    x: Vector3 = attrs.field(factory=lambda: Vector3(1.0, 0.0, 0.0))
    y: Vector3 = attrs.field(factory=lambda: Vector3(0.0, 1.0, 0.0))
    z: Vector3 = attrs.field(factory=lambda: Vector3(0.0, 0.0, 1.0))

    @classmethod
    def from_rows(cls, r0: Iterable[float], r1: Iterable[float], r2: Iterable[float]) -> Basis:
        rows = [list(r0), list(r1), list(r2)]
        return cls(*(Vector3(rows[0][c], rows[1][c], rows[2][c]) for c in range(3)))

    @property
    def rows(self) -> tuple[Vector3, Vector3, Vector3]:
        x, y, z = self.x, self.y, self.z
        return (Vector3(x.x, y.x, z.x), Vector3(x.y, y.y, z.y), Vector3(x.z, y.z, z.z))


@attrs.frozen
class Transform3D:
    """Godot 3 calls this ``Transform``; the bytes are the same."""

    basis: Basis = attrs.field(factory=Basis)
    origin: Vector3 = attrs.field(factory=Vector3)


@attrs.frozen
class Projection:
    """Four column vectors, serialised column by column."""

    x: Vector4 = attrs.field(factory=lambda: Vector4(1.0, 0.0, 0.0, 0.0))
    y: Vector4 = attrs.field(factory=lambda: Vector4(0.0, 1.0, 0.0, 0.0))
    z: Vector4 = attrs.field(factory=lambda: Vector4(0.0, 0.0, 1.0, 0.0))
    w: Vector4 = attrs.field(factory=lambda: Vector4(0.0, 0.0, 0.0, 1.0))


class Color(Components):
    """Always float32 on the wire, even in double-precision builds."""

    __slots__ = ()
    r: float
    g: float
    b: float
    a: float = 1.0


# --- names and references ----------------------------------------------------

class StringName(str):
    """Godot 4's interned string (``&"name"``).

    A ``str`` subclass, so it compares and hashes like the string it holds,
    which is also what Godot 4 does when both are used as Dictionary keys.
    """

    _key_kind: ClassVar[str] = KIND_TEXT

    __slots__ = ()

    def __repr__(self) -> str:
        return f"StringName({str.__repr__(self)})"


class NodePath:
    """A path of node names and property subnames.

    Kept as its parts (names, subnames, absolute flag) because that is what
    the bytes hold; ``NodePath("a/b:c")`` parses the text form like Godot does.
    """

    _key_kind: ClassVar[str] = KIND_NODE_PATH

    __slots__ = ("names", "subnames", "absolute")
    names: tuple[str, ...]
    subnames: tuple[str, ...]
    absolute: bool

    def __init__(
        self,
        path: str | None = None,
        *,
        names: Iterable[str] = (),
        subnames: Iterable[str] = (),
        absolute: bool = False,
    ) -> None:
        if path is not None:
            names, subnames, absolute = self._parse(path)
        names, subnames = tuple(names), tuple(subnames)
        for part in names + subnames:
            if not isinstance(part, str):  # caught here, not deep inside a writer
                raise TypeError(f"NodePath names and subnames are strings, not {type(part).__name__}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "subnames", subnames)
        object.__setattr__(self, "absolute", bool(absolute))

    @staticmethod
    def _parse(path: str) -> tuple[list[str], list[str], bool]:
        absolute = path.startswith("/")
        node_part, _, sub_part = path.partition(":")
        names = [n for n in node_part.split("/") if n]
        subnames = [s for s in sub_part.split(":") if s] if sub_part else []
        return names, subnames, absolute

    def __setattr__(self, name: str, value: Any) -> None:
        raise attrs.exceptions.FrozenInstanceError()

    def __str__(self) -> str:
        text = ("/" if self.absolute else "") + "/".join(self.names)
        if self.subnames:
            text += ":" + ":".join(self.subnames)
        return text

    def __repr__(self) -> str:
        return f"NodePath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodePath):
            return NotImplemented
        return (self.names, self.subnames, self.absolute) == (other.names, other.subnames, other.absolute)

    def __hash__(self) -> int:
        return hash((NodePath, self.names, self.subnames, self.absolute))

    def __reduce__(self) -> Any:
        return (_make_node_path, (self.names, self.subnames, self.absolute))


def _make_node_path(names: tuple[str, ...], subnames: tuple[str, ...], absolute: bool) -> NodePath:
    return NodePath(names=names, subnames=subnames, absolute=absolute)


@attrs.frozen
class RID:
    """A resource id.  Godot 3 writes no payload, so it always reads as ``RID(0)``."""

    id: int = _int()


@attrs.frozen
class EncodedObjectAsID:
    """An Object written as its instance id (the default, ``full_objects=False``).

    The id is only meaningful inside the process that wrote it.
    """

    object_id: int = _int()


@attrs.define(eq=True, repr=False)
class Object:
    """A full Object (``full_objects=True``): inert data, never instantiated.

    ``properties`` keeps the engine's order; values are ordinary values, so a
    Godot 3 ``script`` property holds a nested :class:`Object` and a Godot 4.3+
    one holds a ``res://`` path string.
    """

    _key_kind: ClassVar[str] = KIND_OBJECT

    class_name: str
    properties: dict[str, Any] = attrs.field(factory=dict)

    def __repr__(self) -> str:
        return value_repr(self)


@attrs.frozen
class Callable:
    """Godot writes only the type header for a Callable: nothing of it survives."""


@attrs.frozen
class Signal:
    name: str = ""
    object_id: int = _int()


# --- Godot 2 only ----------------------------------------------------------------

#: Godot 2 ``InputEvent::Type`` values, and the number of u32 payload words its
#: encoder writes after the 12-byte event header for each (the rest write none).
INPUT_EVENT_TYPES = ("NONE", "KEY", "MOUSE_MOTION", "MOUSE_BUTTON", "JOYSTICK_MOTION", "JOYSTICK_BUTTON",
                     "SCREEN_TOUCH", "SCREEN_DRAG", "ACTION")
INPUT_EVENT_PAYLOAD_WORDS = {1: 2, 3: 1, 4: 1, 5: 1, 6: 1}


def _u32_field() -> Any:
    return attrs.field(converter=int, default=0)


def _words(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


@attrs.frozen
class InputEvent:
    """A Godot 2 ``InputEvent`` Variant (type 19; Godot 3 made events Objects).

    Kept as the raw u32 fields the engine writes, not as a decoded event, so a
    value read from a file is written back byte for byte and nothing about the
    event is guessed: ``type`` (see :data:`INPUT_EVENT_TYPES`), ``device``, and
    ``payload``, the words for that type (KEY: modifier mask, scancode;
    MOUSE_BUTTON, JOYSTICK_BUTTON: button index; SCREEN_TOUCH: index;
    JOYSTICK_MOTION: axis).  ``size`` is the third header word, which the
    engine sets to 12 + 4 * len(payload) and never reads: None means exactly
    that; a file holding anything else keeps its number here.
    """

    type: int = _u32_field()
    device: int = _u32_field()
    payload: tuple[int, ...] = attrs.field(converter=_words, default=())
    size: int | None = None

    @property
    def type_name(self) -> str:
        return INPUT_EVENT_TYPES[self.type] if self.type < len(INPUT_EVENT_TYPES) else f"type {self.type}"


@attrs.frozen
class Image:
    """A Godot 2 ``Image`` Variant (type 15; an Image is a Resource from Godot 3 on).

    The raw fields as the engine writes them (``format`` is Godot 2's
    ``Image::Format`` number, kept as a number because nothing here decodes pixels),
    so the value is written back byte for byte.
    """

    format: int = _u32_field()
    mipmaps: int = _u32_field()
    width: int = _u32_field()
    height: int = _u32_field()
    data: bytes = attrs.field(converter=bytes, default=b"")


# --- typed containers ----------------------------------------------------------

@attrs.frozen
class ContainerType:
    """The element type of a typed Array, or a key/value type of a typed Dictionary.

    ``builtin`` is a Godot 4 type name (``"int"``, ``"String"``, ``"Object"`` ...).
    An Object type may carry a native ``class_name`` or a ``script`` path; which
    of the three is set decides the kind written in the header (builtin,
    class name or script).
    """

    builtin: str
    class_name: str | None = None
    script: str | None = None

    @property
    def kind(self) -> int:
        """The 2-bit container type kind of the header: 1 builtin, 2 class name, 3 script."""
        if self.script is not None:
            return 3
        if self.class_name is not None:
            return 2
        return 1

    @classmethod
    def of_class(cls, class_name: str) -> ContainerType:
        return cls("Object", class_name=class_name)

    @classmethod
    def of_script(cls, path: str) -> ContainerType:
        return cls("Object", script=path)


def _as_container_type(t: ContainerType | str) -> ContainerType:
    return t if isinstance(t, ContainerType) else ContainerType(t)


class TypedArray(list):  # type: ignore[type-arg]
    """``Array[T]`` (Godot 4.3+): a list that remembers its element type."""

    _key_kind: ClassVar[str] = KIND_TYPED_ARRAY

    __slots__ = ("element_type",)

    def __init__(self, element_type: ContainerType | str, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self.element_type = _as_container_type(element_type)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypedArray):
            return self.element_type == other.element_type and list.__eq__(self, other)
        if isinstance(other, list):
            return False
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    def __repr__(self) -> str:
        return value_repr(self)

    def copy(self) -> TypedArray:
        return TypedArray(self.element_type, self)

    def __reduce__(self) -> Any:
        return (TypedArray, (self.element_type, list(self)))


class Dictionary(MutableMapping):  # type: ignore[type-arg]
    """A Dictionary with Godot's key rules, for data a ``dict`` cannot hold.

    Decoding returns a plain ``dict`` whenever that is exact; it returns a
    Dictionary when a key is unhashable in Python (an Array, a Dictionary) or
    when Python would merge keys that Godot keeps apart (``1``, ``1.0``,
    ``true``).  Insertion order is kept, as the engine does.
    """

    __slots__ = ("_items", "key_rules")

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = (), *,
                 key_rules: KeyRules | None = None) -> None:
        self.key_rules = GODOT4_KEYS if key_rules is None else key_rules
        self._items: dict[bytes, tuple[Any, Any]] = {}
        self._fill(items.items() if isinstance(items, Mapping) else items, {})

    def _fill(self, pairs: Iterable[tuple[Any, Any]], memo: Memo) -> None:
        """Insert ``pairs``, sharing container identities through ``memo`` (see :mod:`godot_formats.keys`)."""
        entries, rules = self._items, self.key_rules
        for key, value in pairs:
            gk = godot_key(key, rules, memo)
            old = entries.get(gk)
            # Godot keeps the first key object and replaces the value.
            entries[gk] = (key if old is None else old[0], value)

    def _put(self, key: Any, value: Any, memo: Memo) -> bool:
        """``self[key] = value`` sharing ``memo``; whether the key was already there."""
        size = len(self._items)
        self._fill(((key, value),), memo)
        return len(self._items) == size

    def _key(self, key: Any) -> bytes:
        return godot_key(key, self.key_rules)

    def __getitem__(self, key: Any) -> Any:
        return self._items[self._key(key)][1]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._fill(((key, value),), {})

    def __delitem__(self, key: Any) -> None:
        del self._items[self._key(key)]

    def __iter__(self) -> Iterator[Any]:
        return (k for k, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return self._key(key) in self._items

    def items(self) -> Any:
        return list(self._items.values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypedDictionary) != isinstance(self, TypedDictionary):
            return False
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        # Equality is Python's question about the data, not the engine's about keys: two decodes of
        # the same Godot 3 file are equal although Godot 3 keeps its Dictionary keys by reference.
        memo: Memo = {}

        def by_content(pairs: Iterable[tuple[Any, Any]]) -> dict[bytes, list[Any]]:
            out: dict[bytes, list[Any]] = {}
            for k, v in pairs:
                out.setdefault(godot_key(k, SAME_CONTENT, memo), []).append(v)
            return out

        return by_content(self._items.values()) == by_content(other.items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return value_repr(self)

    def __reduce__(self) -> Any:
        if self.key_rules == GODOT4_KEYS:  # the form 0.2.0 wrote, which it can load
            return (type(self), (list(self._items.values()),))
        return (_rebuild_dictionary, (type(self), list(self._items.values()), self.key_rules))


def _rebuild_dictionary(cls: type[Dictionary], pairs: list[tuple[Any, Any]], rules: KeyRules) -> Dictionary:
    return cls(pairs, key_rules=rules)


class TypedDictionary(Dictionary):
    """``Dictionary[K, V]`` (Godot 4.4+); a side of ``None`` is untyped (Variant)."""

    _key_kind: ClassVar[str] = KIND_TYPED_DICTIONARY

    __slots__ = ("key_type", "value_type")

    def __init__(
        self,
        key_type: ContainerType | str | None,
        value_type: ContainerType | str | None,
        items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = (),
        *,
        key_rules: KeyRules | None = None,
    ) -> None:
        self.key_type = None if key_type is None else _as_container_type(key_type)
        self.value_type = None if value_type is None else _as_container_type(value_type)
        super().__init__(items, key_rules=key_rules)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypedDictionary) and (
            (self.key_type, self.value_type) != (other.key_type, other.value_type)
        ):
            return False
        return super().__eq__(other)

    def __repr__(self) -> str:
        return value_repr(self)

    def __reduce__(self) -> Any:
        return (_rebuild_typed_dictionary,
                (self.key_type, self.value_type, list(self._items.values()), self.key_rules))


def _rebuild_typed_dictionary(key_type: Any, value_type: Any, pairs: list[tuple[Any, Any]],
                              rules: KeyRules) -> TypedDictionary:
    return TypedDictionary(key_type, value_type, pairs, key_rules=rules)


# --- packed arrays ---------------------------------------------------------------

_BIG_ENDIAN = sys.byteorder == "big"
P = TypeVar("P", bound="PackedArray")


class PackedArray:
    """Base of the numeric and vector packed arrays.

    The elements live in one ``array.array`` (``data``), never as one Python
    object each, so decoding a 10-million-float array is a memory copy.
    Vector arrays keep their components flat in ``data`` and hand out
    :class:`Vector2` etc. only when indexed or iterated; their ``data`` may be
    float32 (``'f'``) or float64 (``'d'``, from a double-precision build).
    """

    _key_kind: ClassVar[str] = KIND_PACKED

    __slots__ = ("data",)
    typecode: ClassVar[str]
    itemsize: ClassVar[int]
    width: ClassVar[int] = 1  # numbers per element
    element: ClassVar[Any] = None  # element class for vector arrays

    def __init__(self, values: Iterable[Any] = (), *, typecode: str | None = None) -> None:
        tc = typecode or self.typecode
        if self.width == 1:
            self.data = array(tc, values)
        else:
            flat: array[Any] = array(tc)
            for v in values:
                flat.extend(v)  # a vector, a Color, or any sequence of its components
            self.data = flat
        if len(self.data) % self.width:
            raise ValueError(f"{type(self).__name__} needs a multiple of {self.width} numbers")

    @classmethod
    def from_bytes(cls: type[P], raw: bytes | memoryview, typecode: str | None = None) -> P:
        """Build from little-endian wire bytes with a single copy."""
        self = cls.__new__(cls)
        data = array(typecode or cls.typecode)
        data.frombytes(raw)
        if _BIG_ENDIAN:
            data.byteswap()
        self.data = data
        return self

    def to_bytes(self, typecode: str | None = None) -> bytes:
        """Little-endian wire bytes, converting the width when asked."""
        data = self.data
        if typecode is not None and typecode != data.typecode:
            data = array(typecode, data)
        if _BIG_ENDIAN:
            data = array(data.typecode, data)
            data.byteswap()
        return data.tobytes()

    def __len__(self) -> int:
        return len(self.data) // self.width

    def __iter__(self) -> Iterator[Any]:
        if self.width == 1:
            return iter(self.data)
        w, el, data = self.width, self.element, self.data
        return (el(*data[i:i + w]) for i in range(0, len(data), w))

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self: P, index: slice) -> P: ...
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return type(self)(list(self)[index], typecode=self.data.typecode)
        if self.width == 1:
            return self.data[index]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("packed array index out of range")
        w = self.width
        return self.element(*self.data[index * w:(index + 1) * w])

    def tolist(self) -> list[Any]:
        return list(self)

    def key(self) -> tuple[str, bytes]:
        return (self.data.typecode, self.data.tobytes())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.data == other.data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if len(self) > 8:
            shown = ", ".join(repr(v) for v in list(self[:8]))
            return f"{type(self).__name__}([{shown}, ...] {len(self)} items)"
        return f"{type(self).__name__}([{', '.join(repr(v) for v in self)}])"

    def __reduce__(self) -> Any:
        return (_unpickle_packed, (type(self), self.data.typecode, self.data.tobytes()))


def _unpickle_packed(cls: type[PackedArray], typecode: str, raw: bytes) -> PackedArray:
    self = cls.__new__(cls)
    self.data = array(typecode)
    self.data.frombytes(raw)
    return self


def _check_typecode(tc: str, size: int) -> str:
    if array(tc).itemsize != size:  # pragma: no cover - exotic platforms only
        raise ImportError(f"array typecode {tc!r} is not {size} bytes on this platform")
    return tc


class PackedInt32Array(PackedArray):
    __slots__ = ()
    typecode = _check_typecode("i", 4)
    itemsize = 4


class PackedInt64Array(PackedArray):
    __slots__ = ()
    typecode = _check_typecode("q", 8)
    itemsize = 8


class PackedFloat32Array(PackedArray):
    """Godot 3's ``PoolRealArray``; always float32, even in double builds."""

    __slots__ = ()
    typecode = "f"
    itemsize = 4


class PackedFloat64Array(PackedArray):
    __slots__ = ()
    typecode = "d"
    itemsize = 8


class PackedVector2Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    itemsize = 4
    width = 2
    element = Vector2


class PackedVector3Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    itemsize = 4
    width = 3
    element = Vector3


class PackedVector4Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    itemsize = 4
    width = 4
    element = Vector4


class PackedColorArray(PackedArray):
    __slots__ = ()
    typecode = "f"
    itemsize = 4
    width = 4
    element = Color


class PackedStringArray(MutableSequence[str]):
    """Strings written as a PackedStringArray, not an Array.

    Like the vector arrays, which keep their components flat and hand out a
    :class:`Vector3` only when indexed, a decoded PackedStringArray keeps the
    bytes it was read from -- each element a u32 length, UTF-8 and zero padding
    -- and makes its ``str`` objects only when an element is first read.  The
    decoder has already checked every length, the UTF-8 and the padding, so
    this can never fail; and writing the array back in the layout it was read
    in is one memory copy.  Any change turns it into a plain list of strings.

    It has the methods of a list; ``+``, ``*``, slices and :meth:`copy` give a
    PackedStringArray (as in Godot).  It is not a ``list`` (``isinstance``,
    ``json.dumps``): :meth:`tolist` gives one.

    Once its strings are made it keeps the bytes too, until a change, so that
    writing it back stays a copy: about a fifth more memory for short strings
    (``PackedStringArray(p)`` or ``p.copy()`` gives one without them).
    """

    _key_kind: ClassVar[str] = KIND_STRINGS

    __slots__ = ("_items", "_wire", "_count", "_nul")
    _items: list[str] | None  # the strings, once made
    _wire: bytes | None  # the elements as read, until a change
    _count: int  # how many there are in _wire
    _nul: bool  # whether _wire's lengths count a final NUL

    def __new__(cls, *args: Any, **kwargs: Any) -> PackedStringArray:
        self = super().__new__(cls)
        # Set here, not only in __init__, so that unpickling (which skips __init__) finds them.
        self._items = []
        self._wire = None
        self._count = 0
        self._nul = False
        return self

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._items = list(items)

    @classmethod
    def from_wire(cls, wire: bytes, count: int, nul: bool) -> PackedStringArray:
        """An array over ``count`` elements in wire form, already validated by the decoder.

        ``nul``: each length counts a terminating NUL (both engines write one); a
        final NUL is not part of the string.  The elements must be ASCII
        (the decoder makes str objects itself for anything else).
        """
        self = cls.__new__(cls)
        self._items, self._wire, self._count, self._nul = None, wire, count, nul
        return self

    def wire(self, nul: bool) -> bytes | None:
        """The elements' bytes as read, if there are any and their lengths count NULs as asked."""
        return self._wire if self._nul == nul else None

    def _strings(self) -> list[str]:
        items = self._items
        if items is None:
            items = self._items = _strings_from_wire(self._wire, self._count, self._nul)  # type: ignore[arg-type]
        return items

    def _changing(self) -> list[str]:
        items = self._strings()
        self._wire = None  # no longer what the elements are
        return items

    @staticmethod
    def _list(other: Any) -> list[str] | None:
        """The strings of another PackedStringArray or list, for comparing and concatenating."""
        if isinstance(other, PackedStringArray):
            return other._strings()
        return other if isinstance(other, list) else None

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count if self._items is None else len(self._items)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> PackedStringArray: ...
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return type(self)(self._strings()[index])
        return self._strings()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._strings())

    def __contains__(self, value: object) -> bool:
        return value in self._strings()

    def index(self, value: Any, start: int = 0, stop: int = sys.maxsize) -> int:
        return self._strings().index(value, start, stop)

    def count(self, value: Any) -> int:
        return self._strings().count(value)

    def copy(self) -> PackedStringArray:
        return type(self)(self._strings())

    def tolist(self) -> list[str]:
        # Strings not made yet: made straight into the list returned, not kept (a copy of a
        # kept list would cost as much again; the array stays in wire form).
        if self._items is None:
            return _strings_from_wire(self._wire, self._count, self._nul)  # type: ignore[arg-type]
        return list(self._items)

    def __add__(self, other: Iterable[str]) -> PackedStringArray:
        strings = self._list(other)
        if strings is None:
            return NotImplemented
        return type(self)(self._strings() + strings)

    def __radd__(self, other: Iterable[str]) -> PackedStringArray:
        strings = self._list(other)
        if strings is None:
            return NotImplemented
        return type(self)(strings + self._strings())

    def __mul__(self, times: int) -> PackedStringArray:
        return type(self)(self._strings() * times)

    __rmul__ = __mul__

    # -- changing ----------------------------------------------------------------------

    def __setitem__(self, index: Any, value: Any) -> None:
        self._changing()[index] = value

    def __delitem__(self, index: Any) -> None:
        del self._changing()[index]

    def insert(self, index: int, value: str) -> None:
        self._changing().insert(index, value)

    def append(self, value: str) -> None:
        self._changing().append(value)

    def extend(self, values: Iterable[str]) -> None:
        items = self._changing()
        items.extend(list(values) if values is self or values is items else values)

    def __iadd__(self, values: Iterable[str]) -> PackedStringArray:
        self.extend(values)
        return self

    def __imul__(self, times: int) -> PackedStringArray:
        self._changing()[:] = self._strings() * times
        return self

    def pop(self, index: int = -1) -> str:
        return self._changing().pop(index)

    def remove(self, value: Any) -> None:
        self._changing().remove(value)

    def clear(self) -> None:
        self._changing().clear()

    def reverse(self) -> None:
        self._changing().reverse()

    def sort(self, *, key: Any = None, reverse: bool = False) -> None:
        self._changing().sort(key=key, reverse=reverse)

    # -- comparing ---------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedStringArray):
            if self._wire is not None and self._wire == other._wire and self._nul == other._nul:
                return True
            return self._strings() == other._strings()
        if isinstance(other, list):
            return False  # an Array is another type, as in Godot
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other: Any) -> bool:
        strings = self._list(other)
        return NotImplemented if strings is None else self._strings() < strings

    def __le__(self, other: Any) -> bool:
        strings = self._list(other)
        return NotImplemented if strings is None else self._strings() <= strings

    def __gt__(self, other: Any) -> bool:
        strings = self._list(other)
        return NotImplemented if strings is None else self._strings() > strings

    def __ge__(self, other: Any) -> bool:
        strings = self._list(other)
        return NotImplemented if strings is None else self._strings() >= strings

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._strings()!r})"

    def __reduce__(self) -> Any:
        return (type(self), (self._strings(),))


def _strings_from_wire(wire: bytes, count: int, nul: bool) -> list[str]:
    """The strings of a PackedStringArray body the decoder has checked: ASCII, every
    length in range and, with ``nul``, counting a final NUL that is not part of the text.
    The compiled core makes them when it is built; this loop is the reference."""
    if accel.cdecode is not None:
        try:
            return accel.cdecode.strings_from_wire(wire, count, nul)  # type: ignore[no-any-return]
        except accel.cdecode.Fallback:
            pass  # not a checked body (from_wire is public): the loop below decides
    text = wire.decode("ascii")  # one str for all: each element is then one slice of it
    words: Any = memoryview(wire).cast("I")
    if _BIG_ENDIAN:  # pragma: no cover
        words = array("I", wire)
        words.byteswap()
    out: list[str] = []
    add = out.append
    cut = 1 if nul else 0
    a = 4  # where element j's text starts
    for _ in repeat(None, count):
        n = words[(a >> 2) - 1]
        add(text[a:a + n - cut])
        a += (n + 7) & ~3
    return out


# Key types that hold no float: a dict keyed by nothing else needs no NaN check (keys.python_keys_agree).
holds_no_float(StringName, NodePath, RID, EncodedObjectAsID, Signal, Callable)


def is_nan_equal(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN (handy in tests)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def float32(x: float) -> float:
    """``x`` rounded to the nearest float32, as an engine with 32-bit reals stores it (a value
    beyond float32's range becomes inf, as C's cast makes it).  The one float32 rounding of the
    library: the registry, the converter and the text writer use this."""
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


_F32 = struct.Struct("<f")


# --- repr without recursion ------------------------------------------------------

def _repr_frame(value: Any) -> tuple[str, str, Iterable[Any], bool] | None:
    """How a container is shown: opening, closing, its children (an iterable, walked only as far
    as the text goes), whether they come in key/value pairs."""
    tp = type(value)
    if tp is list:
        return "[", "]", value, False
    if tp is dict:
        return "{", "}", chain.from_iterable(value.items()), True
    if isinstance(value, TypedArray):
        return f"TypedArray({value.element_type!r}, [", "])", value, False
    if isinstance(value, TypedDictionary):
        return (f"TypedDictionary({value.key_type!r}, {value.value_type!r}, {{", "})",
                chain.from_iterable(value.items()), True)
    if isinstance(value, Dictionary):
        return "Dictionary({", "})", chain.from_iterable(value.items()), True
    if isinstance(value, Object):
        return (f"Object(class_name={value.class_name!r}, properties={{", "})",
                chain.from_iterable(value.properties.items()), True)
    if isinstance(value, list):
        return f"{tp.__name__}([", "])", value, False
    if isinstance(value, dict):
        return f"{tp.__name__}({{", "})", chain.from_iterable(value.items()), True
    if tp is tuple:
        return "(", ",)" if len(value) == 1 else ")", value, False
    return None


def _shown(children: Iterable[Any], pairs: bool, closing: str, ident: int) -> Iterator[tuple[int, Any]]:
    """What a container shows after its opening: its children and their separators, its closing,
    then leaving it (0: a value to show, 1: text, 2: leave a container)."""
    for i, child in enumerate(children):
        if i:
            yield 1, ": " if pairs and i % 2 else ", "
        yield 0, child
    yield 1, closing
    yield 2, ident


def value_repr(value: Any, limit: int | None = None) -> str:
    """``repr`` of a value of any depth, without Python recursion.

    Python's own ``repr`` of nested lists stops at the interpreter's recursion
    limit, and a decoded value may nest 1025 levels.  A container met again
    inside itself shows as ``[...]``, as ``repr`` does.  With ``limit``, the text
    stops after about that many characters and ends with ``...`` (error
    messages name a key without copying all of it), and the value is walked
    only that far: naming a key of a million elements costs what the limit does.
    """
    out: list[str] = []
    size = 0
    on_path: set[int] = set()
    stack: list[Iterator[tuple[int, Any]]] = [iter(((0, value),))]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        what, item = step
        if what == 1:
            text = item
        elif what == 2:
            on_path.discard(item)
            continue
        else:
            frame = _repr_frame(item)
            if frame is None:
                text = repr(item)
            elif id(item) in on_path:
                text = frame[0] + "..." + frame[1]
            else:
                opening, closing, children, pairs = frame
                on_path.add(id(item))
                stack.append(_shown(children, pairs, closing, id(item)))
                text = opening
        out.append(text)
        size += len(text)
        if limit is not None and size > limit:
            return "".join(out)[:limit] + "..."
    return "".join(out)
