"""``VariantWriter::write``: a value of the model as the text the engine prints for it."""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable as _Fn
from collections.abc import Iterator
from typing import Any, Optional, Union

from ...core import types as t
from ...core.accel import ctextw as _ctextw
from ...core.dialects import Dialect, get_dialect
from ...core.errors import EncodeError
from ...core.registry import INT32_MAX, INT32_MIN, Family, TypeSpec, for_each_row, spec_for
from ...core.switches import I32, I64, U8
from .common import CONTAINER_ELEMENT_TYPES, MASK64, _wrap
from .floats import _float_3, _float_40, _float_45, _rtos_fix_3, _rtos_fix_40, _rtos_fix_45
from .order import _Order
from .style import TextStyle, text_style

_Pieces = Iterator[Union[str, tuple[Any, int]]]

#: What a caller gives the writer to write what only a resource file (``.tres``) can hold: called
#: with a value no type row stands for (a resource of the file: the caller's own classes), and
#: with the :class:`~godot_formats.types.ContainerType` of a typed container whose elements are
#: of a script class (the engine writes that script as a resource of the file too).  Returns the
#: text that stands there (``ExtResource("1")``, ``SubResource( 2 )``), or None for "not mine":
#: the writer's own behaviour then (an error for a value, ``Resource("path")`` for a script).
#: It may raise :class:`~godot_formats.errors.EncodeError`.  The engine's ``p_encode_res_func``.
ResourceEncoder = _Fn[[Any], Optional[str]]

_END = object()  # "no value is being started", for the path in an error

_C_ESCAPES = {
    "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    "\v": "\\v", "'": "\\'", '"': '\\"',
}
_C_ESCAPE_4 = str.maketrans(_C_ESCAPES)
_C_ESCAPE_3 = str.maketrans({**_C_ESCAPES, "?": "\\?"})  # Godot 3 also escapes '?' (trigraphs)
_C_ESCAPE_MULTILINE = str.maketrans({"\\": "\\\\", '"': '\\"'})


def c_escape(s: str, major: int = 4) -> str:
    """``String::c_escape`` (StringName, NodePath and packed string elements) of Godot ``major``."""
    return s.translate(_C_ESCAPE_3 if major == 3 else _C_ESCAPE_4)


def c_escape_multiline(s: str) -> str:
    """``String::c_escape_multiline`` (String values keep their raw newlines and tabs)."""
    return s.translate(_C_ESCAPE_MULTILINE)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _class_name(name: Any) -> str:
    """A class name as the text holds it: an identifier, or the text would read back differently.

    The engines write ``obj->get_class()`` (always an identifier: ClassDB names are) and their
    parsers read an identifier there, so a class name that is not one has no text form.
    """
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise EncodeError(f"class name {name!r:.60} is not an identifier: Godot's text cannot hold it")
    return name


def _short(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _step(parent: Any, child: Any) -> str:
    """Where ``child`` sits in ``parent``: ``[2]``, ``['k']``, ``<key 'k'>`` or ``.prop``."""
    if isinstance(parent, (dict, t.Dictionary)):
        for k, v in parent.items():
            if v is child:
                return f"[{_short(k)}]"
            if k is child:
                return f"<key {_short(k)}>"
    elif isinstance(parent, t.Object):
        for k, v in parent.properties.items():
            if v is child:
                return f".{k}"
    elif isinstance(parent, (list, tuple)):
        for i, v in enumerate(parent):
            if v is child:
                return f"[{i}]"
    return "[?]"


def _path(containers: list[Any], current: Any) -> str:
    """The path of ``current`` (or of the innermost container) from the writer's stack.

    ``containers[0]`` is a placeholder for the root's parent.  Only used for an error, so
    searching each container for the next one (linear in their sizes) is fine.
    """
    chain_ = containers[1:] + ([current] if current is not _END else [])
    return "".join(_step(parent, child) for parent, child in zip(chain_, chain_[1:]))


class _Writer:
    """Writes one value as text, without recursion (any nesting depth is fine).

    Container writers are generators that yield literal text (``str``) and the
    children to write (``(value, recursion_count)``); the loop in :meth:`write`
    keeps a stack of them.
    """

    def __init__(self, dialect: Dialect, style: TextStyle, resources: ResourceEncoder | None = None,
                 base64_bytes: bool = False) -> None:
        self.dialect = dialect
        self.style = style
        self.resources = resources
        self.base64_bytes = base64_bytes  # PackedByteArray("AQID"): a format 4 resource file's form
        self.order = _Order(dialect, style)
        self.open, self.close = ("( ", " )") if style.spaced else ("(", ")")
        self.names: dict[TypeSpec, str] = {}  # row -> what this text calls it (see name())

    def write(self, root: Any) -> str:
        out: list[str] = []
        stack: list[Iterator[Any]] = [iter(((root, 0),))]
        containers: list[Any] = [None]  # the value each generator on the stack writes
        open_ids: set[int] = set()  # their ids: meeting one again is a value that contains itself
        current: Any = _END  # the value being started, for the path of an error
        try:
            while stack:
                for item in stack[-1]:
                    if type(item) is str:
                        out.append(item)
                        continue
                    current = item[0]
                    piece = self.piece(*item)
                    if isinstance(piece, str):
                        out.append(piece)
                        continue
                    if id(current) in open_ids:
                        outer = next(i for i, c in enumerate(containers) if c is current)
                        raise EncodeError("a container that contains itself: its text would never end "
                                          f"(it is {_path(containers[:outer + 1], _END) or 'the root'})")
                    open_ids.add(id(current))
                    containers.append(current)
                    stack.append(piece)
                    current = _END
                    break
                else:
                    stack.pop()
                    open_ids.discard(id(containers.pop()))
                    current = _END
        except EncodeError as e:
            if e.path:
                raise
            raise EncodeError(path=_path(containers, current), **e.reason_in()) from None
        except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as e:
            # A value of the model built with something it cannot hold (no engine type would).
            raise EncodeError(f"cannot write {type(current).__name__ if current is not _END else 'this value'} "
                              f"as text ({type(e).__name__}: {e})", _path(containers, current)) from e
        return "".join(out)

    def name(self, spec: TypeSpec) -> str:
        """What this text calls the type; a type the dialect lacks has no text in it.

        Godot 3 text uses the dialect's own names (``Quat``, ``PoolIntArray`` ...); Godot 4
        text the engine's, whatever a documented dialect's page calls the type.
        """
        try:
            return self.names[spec]
        except KeyError:
            pass
        if not self.dialect.has(spec.name):
            raise EncodeError(f"{self.dialect.name} has no {spec.name} type")
        major = self.style.major
        name = self.dialect.native_name(spec.name) if major == 3 else spec.native_name(major)
        self.names[spec] = name
        return name

    def piece(self, value: Any, depth: int) -> str | _Pieces:
        spec = spec_for(value)
        if spec is None:
            return self.foreign(value)
        return _WRITERS[spec](self, spec, value, depth)

    def foreign(self, value: Any) -> str:
        """A value no row stands for: the caller's resource encoder may know it, else it has no text."""
        text = self.resources(value) if self.resources is not None else None
        if text is None:
            raise EncodeError(f"cannot write a {type(value).__name__} as text ({value!r:.60})")
        return text

    # -- scalars

    def write_nil(self, spec: TypeSpec, value: None, depth: int) -> str:
        return "null"

    def write_bool(self, spec: TypeSpec, value: bool, depth: int) -> str:
        return "true" if value else "false"

    def write_int(self, spec: TypeSpec, value: int, depth: int) -> str:
        if not -(1 << 63) <= value < 1 << 63:
            raise EncodeError(f"int {value} does not fit in 64 bits")
        return str(value)

    def write_float(self, spec: TypeSpec, value: float, depth: int) -> str:
        return self.style.scalar(value)

    def write_string(self, spec: TypeSpec, value: str, depth: int) -> str:
        return '"' + c_escape_multiline(value) + '"'

    def write_string_name(self, spec: TypeSpec, value: str, depth: int) -> str:
        self.name(spec)
        return '&"' + c_escape(value, 4) + '"'

    def write_node_path(self, spec: TypeSpec, value: t.NodePath, depth: int) -> str:
        return 'NodePath("' + c_escape(str(value), self.style.major) + '")'

    def write_record(self, spec: TypeSpec, value: Any, depth: int) -> str:
        """A record's text is what its row's printer says; Godot 2's records have none that an
        engine could confirm, so none is made up (the JSON form and the tree hold every field)."""
        if spec.no_text or spec.text is None:
            raise EncodeError(spec.no_text or f"{spec.name} has no text form")
        self.name(spec)
        return spec.text(value, self.style.major)

    # -- math and packed types

    def write_math(self, spec: TypeSpec, value: Any, depth: int) -> str:
        numbers = spec.parts(value)
        if spec.component == I32:
            if not all(INT32_MIN <= n <= INT32_MAX for n in numbers):
                raise EncodeError(f"{spec.name} component out of range: {value!r:.80}")
            parts = ", ".join(map(str, numbers))
        else:
            parts = ", ".join(map(self.style.real, numbers))
        return self.name(spec) + self.open + parts + self.close

    def write_packed(self, spec: TypeSpec, value: Any, depth: int) -> str:
        name = self.name(spec)
        component = spec.component
        if component == U8 and self.base64_bytes:  # empty: PackedByteArray(), as the engine writes it
            data = bytes(value)
            return name + ('("' + base64.b64encode(data).decode("ascii") + '")' if data else "()")
        if component == U8:
            body = ", ".join(map(str, bytes(value)))  # bytes, bytearray or any memoryview: its raw bytes
        elif component in _INT_COMPONENTS:
            body = ", ".join(map(str, value))
        else:  # the floats, vectors and colors, flat, as the engine prints them
            body = ", ".join(map(self.style.real, value.data))
        return name + self.open + body + self.close

    def write_strings(self, spec: TypeSpec, value: t.PackedStringArray, depth: int) -> str:
        major = self.style.major
        for s in value:
            if not isinstance(s, str):
                raise EncodeError(f"PackedStringArray holds a {type(s).__name__}, not a String")
        body = ", ".join('"' + c_escape(s, major) + '"' for s in value)
        return self.name(spec) + self.open + body + self.close

    # -- containers

    def container_type(self, ct: t.ContainerType | None) -> str:
        if ct is None:
            return "Variant"
        if ct.script is not None:
            text = self.resources(ct) if self.resources is not None else None
            return text if text is not None else self.resource(ct.script)
        if ct.class_name is not None:
            return _class_name(ct.class_name)
        if ct.builtin not in CONTAINER_ELEMENT_TYPES or not self.dialect.has(ct.builtin):
            raise EncodeError(f"{self.dialect.name} has no {ct.builtin} type")
        return ct.builtin

    def resource(self, path: Any) -> str:
        """``Resource("path")``.  Godot 4.5+ C-escapes the path; earlier engines wrote it raw, which
        differs only for a path holding a backslash or a quote, and there the raw text would not
        read back (or would read as more than a path), so it is escaped for every version."""
        if not isinstance(path, str):
            raise EncodeError(f"a script path must be a str, not {type(path).__name__}")
        return 'Resource("' + c_escape_multiline(path) + '")'

    def truncated(self, depth: int) -> bool:
        limit = self.style.max_recursion
        return limit is not None and depth > limit

    def write_array(self, spec: TypeSpec, value: Any, depth: int) -> _Pieces:
        typed = isinstance(value, t.TypedArray)
        if typed:
            if not self.dialect.typed_arrays:
                raise EncodeError(f"{self.dialect.name} has no typed Arrays (Godot 4.3+)")
            yield "Array[" + self.container_type(value.element_type) + "]("
        if self.truncated(depth):
            yield "[]"
        elif self.style.spaced:
            yield "[ "
            for i, item in enumerate(value):
                if i:
                    yield ", "
                yield item, depth + 1
            yield " ]"
        else:
            yield "["
            for i, item in enumerate(value):
                if i:
                    yield ", "
                yield item, depth + 1
            yield "]"
        if typed:
            yield ")"

    def write_dictionary(self, spec: TypeSpec, value: Any, depth: int) -> _Pieces:
        typed = isinstance(value, t.TypedDictionary) and (value.key_type, value.value_type) != (None, None)
        if typed:
            if not self.dialect.typed_dictionaries:
                raise EncodeError(f"{self.dialect.name} has no typed Dictionaries (Godot 4.4+)")
            yield f"Dictionary[{self.container_type(value.key_type)}, {self.container_type(value.value_type)}]("
        pairs = list(value.items())
        if self.truncated(depth):
            yield "{}"
        elif self.style.spaced:
            yield "{\n"
            for i, (k, v) in enumerate(self.sorted_pairs(pairs)):
                if i:
                    yield ",\n"
                yield k, depth
                yield ": "
                yield v, depth
            yield "\n}"
        elif not pairs:
            yield "{}"
        else:
            yield "{\n"
            for i, (k, v) in enumerate(self.sorted_pairs(pairs)):
                if i:
                    yield ",\n"
                yield k, depth + 1
                yield ": "
                yield v, depth + 1
            yield "\n}"
        if typed:
            yield ")"

    def sorted_pairs(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        return self.order.sort(pairs)

    def write_object(self, spec: TypeSpec, value: Any, depth: int) -> str | _Pieces:
        if self.style.max_recursion is not None and depth > self.style.max_recursion:
            return "null"
        if isinstance(value, t.EncodedObjectAsID):
            if not 0 <= value.object_id <= MASK64:
                raise EncodeError(f"object id {value.object_id} is not a 64-bit unsigned int")
            # What the engine prints for the EncodedObjectAsID it decodes an instance id into.
            # ObjectID is a uint64; as an int Variant it prints as the int64 it wraps to.
            value = t.Object("EncodedObjectAsID", {"object_id": _wrap(value.object_id, 64), "script": None})
        class_name = _class_name(value.class_name)
        for name in value.properties:
            if not isinstance(name, str):
                raise EncodeError(f"Object property names are strings, not {type(name).__name__} ({name!r:.40})")
        return self.object_pieces(class_name, value, depth + 1)

    def object_pieces(self, class_name: str, value: t.Object, depth: int) -> _Pieces:
        # The engine writes the class name and the property names as they are: a class name is an
        # identifier (_class_name refuses anything else), and a property name gets its backslashes
        # and quotes escaped, which changes nothing for any name the engine's text can read back.
        yield "Object(" + class_name + ","
        for i, (name, prop) in enumerate(value.properties.items()):
            if i:
                yield ","
            yield '"' + c_escape_multiline(name) + '":'
            if name == "script" and isinstance(prop, str) and self.style.major == 4:
                # Godot 4.3+ bytes carry the script as its path; the live object prints the Script.
                yield self.resource(prop)
            else:
                yield prop, depth
        yield ")\n"


_Write = _Fn[[_Writer, TypeSpec, Any, int], Union[str, _Pieces]]
_INT_COMPONENTS = frozenset({U8, I32, I64})

#: How each family of types is written; the row then says the rest (names, fields, numbers).
_BY_FAMILY: dict[Family, _Write] = {
    Family.NIL: _Writer.write_nil, Family.BOOL: _Writer.write_bool, Family.INT: _Writer.write_int,
    Family.FLOAT: _Writer.write_float, Family.STRING: _Writer.write_string, Family.NODE_PATH: _Writer.write_node_path,
    Family.MATH: _Writer.write_math, Family.PACKED: _Writer.write_packed, Family.STRINGS: _Writer.write_strings,
    Family.RECORD: _Writer.write_record, Family.ARRAY: _Writer.write_array, Family.DICTIONARY: _Writer.write_dictionary,
    Family.OBJECT: _Writer.write_object,
}
#: The one type whose text its family does not decide: a StringName is a String in every view
#: but text, which marks it ``&"..."``.  (Its row has no ``text`` printer to say so yet.)
_OWN_WRITERS: dict[str, _Write] = {"StringName": _Writer.write_string_name}
#: Every row's writer, looked up once per value (``spec_for`` maps a subclass to its row).
_WRITERS: dict[TypeSpec, _Write] = {}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    _WRITERS[spec] = _OWN_WRITERS.get(spec.name) or _BY_FAMILY[spec.family]


#: Whether values are written by the compiled fast path (``godot_formats.core._ctextw``) where it is
#: built: it writes the common values and gives the text :class:`_Writer` would, or hands the value
#: back.  False: :class:`_Writer` writes everything (tests compare the two this way).
COMPILED = _ctextw is not None

#: The kinds of the fast path's type table (``_ctextw.c`` says what each one writes).
_K_MATH_REAL, _K_MATH_I32, _K_BYTES, _K_PACKED_INT, _K_PACKED_REAL, _K_STRINGS, _K_OBJECT, _K_DICTIONARY = range(1, 9)
#: A style's float rules, as the fast path names them: (scalar, real) -> its port of them.
_C_FLOATS: dict[tuple[_Fn[[float], str], _Fn[[float], str]], int] = {
    (_float_3, _rtos_fix_3): 3, (_float_40, _rtos_fix_40): 40, (_float_45, _rtos_fix_45): 45}


def _parts_getter(spec: TypeSpec) -> Any:
    """How many numbers a math value holds when it is the tuple of them in wire order (the fast path
    reads it as it is, if it holds that many), else the row's getter (the fast path calls it)."""
    cls = spec.cls
    if issubclass(cls, tuple):
        try:
            sample = cls(*range(1, len(spec.fields) + 1))
            if tuple(sample) == spec.parts(sample):
                return len(spec.fields)
        except Exception:  # noqa: BLE001 - any doubt: the row's own getter
            pass
    return spec.parts


@functools.lru_cache(maxsize=64)
def _compiled_table(dialect: Dialect, style: TextStyle) -> tuple[int, dict[type, tuple[int, str, Any]]] | None:
    """The fast path's facts of one dialect and style: its float rules, and the exact classes it
    writes with their kind, the name this text calls their type and their numbers' getter.  None:
    the fast path does not know the style's float rules (the writer serves)."""
    floats = _C_FLOATS.get((style.scalar, style.real))
    if floats is None:
        return None
    namer = _Writer(dialect, style)
    types: dict[type, tuple[int, str, Any]] = {}
    for spec in list(_WRITERS):
        family = spec.family
        if family is Family.OBJECT:
            types[t.Object] = (_K_OBJECT, "Object", None)
        elif family is Family.DICTIONARY:
            types[t.Dictionary] = (_K_DICTIONARY, "Dictionary", None)
        elif family in (Family.MATH, Family.PACKED, Family.STRINGS) and _WRITERS[spec] is _BY_FAMILY[family]:
            try:
                name = namer.name(spec)
            except EncodeError:
                continue  # a type the dialect lacks: the writer's error
            if family is Family.STRINGS:
                types.update((cls, (_K_STRINGS, name, None)) for cls in spec.classes)
            elif family is Family.MATH:
                kind = _K_MATH_I32 if spec.component == I32 else _K_MATH_REAL
                types[spec.cls] = (kind, name, _parts_getter(spec))
            elif spec.component == U8:
                types.update((cls, (_K_BYTES, name, None)) for cls in spec.classes if cls in (bytes, bytearray))
            else:
                for cls in spec.classes:
                    if issubclass(cls, t.PackedArray) and spec.component in _INT_COMPONENTS and cls.width == 1:
                        types[cls] = (_K_PACKED_INT, name, None)
                    elif issubclass(cls, t.PackedArray) and spec.component not in _INT_COMPONENTS:
                        types[cls] = (_K_PACKED_REAL, name, None)
    return floats, types


def _compiled(writer: _Writer) -> Any:
    """The fast path in front of ``writer`` (its ``write`` writes what the fast path hands back), or
    None: not built, switched off, or a writer of a resource file (its encoder and base64 bytes
    are the writer's alone)."""
    if not COMPILED or _ctextw is None or writer.resources is not None or writer.base64_bytes:
        return None
    table = _compiled_table(writer.dialect, writer.style)
    if table is None:
        return None
    style = writer.style
    return _ctextw.Writer(spaced=style.spaced, major=style.major, floats=table[0],
                          max_recursion=-1 if style.max_recursion is None else style.max_recursion,
                          types=table[1], fallback=writer.write)


def to_text(value: Any, dialect: str | Dialect = "godot4", *, version: str | None = None,
            resources: ResourceEncoder | None = None, base64_bytes: bool = False) -> str:
    """The text ``var2str`` (Godot 3 dialects) or ``var_to_str`` (Godot 4) returns for ``value``.

    ``version`` picks the text rules of one engine version (``"4.4"`` still
    printed 6-digit floats; 4.5 switched to Grisu2); by default the newest
    engine of the dialect.  Values the dialect cannot hold raise
    :class:`~godot_formats.errors.EncodeError`, as :func:`godot_formats.dumps` does.

    A resource file's writer (``VariantWriter`` called by the ``.tres`` saver) differs in two
    ways, which its caller asks for: ``resources`` writes its resource references (see
    :data:`ResourceEncoder`), and ``base64_bytes`` writes a PackedByteArray as base64, as
    Godot 4.3+ does in a ``format=4`` file (``var_to_str`` never does).
    """
    d = get_dialect(dialect)
    writer = _Writer(d, text_style(d, version), resources, base64_bytes)
    fast = _compiled(writer)
    return writer.write(value) if fast is None else fast.write(value)  # type: ignore[no-any-return]


def text_writer(dialect: str | Dialect = "godot4", *, version: str | None = None) -> _Fn[[Any], str]:
    """:func:`to_text` for many values of one dialect: the writer made once (a ConfigFile of 100,000
    entries spent a third of its writing making one per value)."""
    d = get_dialect(dialect)
    writer = _Writer(d, text_style(d, version))
    fast = _compiled(writer)
    return writer.write if fast is None else fast.write  # type: ignore[no-any-return]
