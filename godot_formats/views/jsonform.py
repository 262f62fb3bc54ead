"""A lossless JSON form of every value, in the shape of Godot 4's ``JSON.from_native``.

Godot 4.4+ maps Variants to JSON with ``JSON.from_native`` / ``JSON.to_native``:
``"i:3"``, ``"f:0.5"``, ``"s:text"``, ``"sn:name"``, ``"np:path"`` for scalars,
``{"type": "Vector2", "args": [1.5, -2.0]}`` for math types and packed arrays,
``{"type": "Dictionary", "args": [key, value, ...]}``, ``{"type": "Array",
"elem_type": "int", "args": [...]}`` for typed containers and
``{"type": "Node", "props": [name, value, ...]}`` for full Objects.  We write
the same shapes, so a file made here is read by the engine and the other way
round, and deviate only where the engine's mapping loses what a byte-exact
round trip must keep (docs/json.md lists each deviation and why):

* floats are written with the shortest text that reads back to the same
  double (the engine rounds to 15 digits and turns ``-0.0`` into ``0.0``);
  non-finite numbers inside ``args`` are the strings ``"inf"``, ``"-inf"``
  and ``"nan"`` (the engine writes ``1e99999`` and ``null``, and reads
  ``null`` as ``0``, which we do too);
* a NaN whose bits are not the canonical quiet NaN is ``"nan(0x...)"``;
* RID, Signal and Object ids (the engine keeps none of them) are kept in
  extra keys the engine ignores: ``{"type": "RID", "id": 5}``;
* an Object written as an id is ``{"type": "EncodedObjectAsID", "object_id": N}``
  (no ``props``: the engine has no JSON for it);
* a NodePath whose text form would not read back to the same names is
  ``{"type": "NodePath", "names": [...], "subnames": [...], "absolute": false}``;
* ``packed_base64=True`` writes packed number arrays as little-endian bytes in
  base64 (``{"type": "PackedByteArray", "base64": "AQID"}``) instead of number
  lists: four times smaller for bytes, and bit-exact for every NaN.

Numbers in ``args`` are plain JSON numbers, read exactly by :func:`loads_json`;
tools that read every number as a double (the engine, JavaScript) round
integers beyond 2**53 in packed int64 arrays.

Both directions walk containers with an explicit stack, like the codec, so a
value nested 1024 levels deep converts without ``RecursionError``.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import math
import re
import reprlib
import struct
from array import array
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Final, Literal, Union

from ..core import types as t
from ..core.codec import DEFAULT_MAX_DEPTH
from ..core.dialects import TYPE_NAMES
from ..core.errors import EncodeError, JSONFormatError
from ..core.keys import Memo, python_keys_agree
from ..core.registry import BY_NAME, Family, TypeSpec, nesting_error, spec_for
from ..core.switches import F32, F64, I32, I64, REAL, U8

__all__ = ["to_json", "from_json", "dumps_json", "loads_json", "loads_json_documents", "JSONFormatError"]

JSONValue = Union[None, bool, int, float, str, list[Any], dict[str, Any]]


# -- numbers ------------------------------------------------------------------------

_CANONICAL_NAN = 0x7FF8000000000000
_f64 = struct.Struct("<d")
_u64 = struct.Struct("<Q")
_NAN_TEXT = re.compile(r"nan\(0x([0-9a-fA-F]{1,16})\)\Z")
# What "f:" may hold: a JSON-like decimal (sign, digits, fraction, exponent) or inf/nan.
_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_INT_TEXT = re.compile(r"[+-]?\d+\Z")


def _nonfinite_text(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    bits = _u64.unpack(_f64.pack(x))[0]
    return "nan" if bits == _CANONICAL_NAN else f"nan(0x{bits:016x})"


def _float_text(x: float) -> str:
    """The shortest text that reads back to exactly ``x`` (``repr``), or inf/-inf/nan."""
    return repr(x) if math.isfinite(x) else _nonfinite_text(x)


def _json_number(x: float) -> float | str:
    """A float inside ``args``: a JSON number when JSON can hold it, else its text."""
    return x if math.isfinite(x) else _nonfinite_text(x)


def _parse_nonfinite(text: str) -> float | None:
    if text in ("inf", "+inf"):
        return math.inf
    if text == "-inf":
        return -math.inf
    if text == "nan":
        return math.nan
    m = _NAN_TEXT.match(text)
    if m:
        value: float = _f64.unpack(_u64.pack(int(m.group(1), 16)))[0]
        if value != value:
            return value
    return None


def _parse_float_text(text: str, path: str) -> float:
    if _FLOAT_TEXT.match(text):
        return float(text)
    special = _parse_nonfinite(text)
    if special is None:
        raise JSONFormatError(f"{text!r} is not a float (write digits, inf, -inf or nan)", path)
    return special


def _arg_float(x: Any, path: str) -> float:
    """A float component: a JSON number, inf/-inf/nan text, or null (0.0, as the engine reads it)."""
    if type(x) is float or type(x) is int:
        return float(x)
    if x is None:
        return 0.0
    if isinstance(x, str):
        special = _parse_nonfinite(x)
        if special is not None:
            return special
    raise JSONFormatError(f"expected a number, got {_kind(x)}", path)


def _floats(args: list[Any], path: str) -> list[float]:
    """Float components (see :func:`_arg_float`); the path of each is only made for a bad one."""
    return [float(x) if type(x) is float or type(x) is int else _arg_float(x, f"{path}[{i}]")
            for i, x in enumerate(args)]


def _arg_int(x: Any, path: str, bits: int) -> int:
    """An int component: a JSON integer (or an integral float) that fits ``bits`` signed bits."""
    if type(x) is float and x.is_integer():
        x = int(x)
    if type(x) is not int:
        raise JSONFormatError(f"expected an integer, got {_kind(x)}", path)
    limit = 1 << (bits - 1)
    if not -limit <= x < limit:
        raise JSONFormatError(f"{x} does not fit in {bits} bits", path)
    return x


def _kind(x: Any) -> str:
    if x is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(x), type(x).__name__)


# -- what the JSON form adds to the registry's rows --------------------------------------------

#: array typecode of a packed array's component at its natural width (what base64 holds).
_BASE64_TYPECODE = {I32: "i", I64: "q", F32: "f", F64: "d", REAL: "f"}
_INT_BITS = {I32: 32, I64: 64}
#: The prefix of each text type's string form (the engine's ``JSON.from_native``).
_TEXT_PREFIX = {"String": "s:", "StringName": "sn:"}
#: An Object in its id form: the Object row's second class, which the engine's JSON has no form for.
_OBJECT_ID = t.EncodedObjectAsID.__name__


# -- container types -------------------------------------------------------------------

_BUILTIN_NAMES = frozenset(TYPE_NAMES) - {"Object", "Nil"}


def _container_type_json(ct: t.ContainerType | None) -> JSONValue:
    """The engine's string for a container type, or an object when a string would be misread."""
    if ct is None:
        return "Nil"
    kind = ct.kind
    if kind == 1 and ct.builtin in _BUILTIN_NAMES:
        return ct.builtin
    if ct.builtin == "Object":
        if kind == 2 and ct.class_name and ct.class_name not in _BUILTIN_NAMES \
                and not ct.class_name.startswith("res://"):
            return ct.class_name
        if kind == 3 and ct.script and ct.script.startswith("res://"):
            return ct.script
    out: dict[str, Any] = {"builtin": ct.builtin}
    if ct.class_name is not None:
        out["class_name"] = ct.class_name
    if ct.script is not None:
        out["script"] = ct.script
    return out


def _container_type_value(obj: Any, path: str) -> t.ContainerType | None:
    """Read an ``elem_type``/``key_type``/``value_type`` as the engine's ``_decode_container_type`` does."""
    if isinstance(obj, str):
        if obj == "Nil":
            return None
        if obj in _BUILTIN_NAMES:
            return t.ContainerType(obj)
        if obj.startswith("res://"):
            return t.ContainerType.of_script(obj)
        if not obj:
            raise JSONFormatError("empty container type", path)
        return t.ContainerType.of_class(obj)
    if isinstance(obj, dict) and isinstance(obj.get("builtin"), str):
        extra = set(obj) - {"builtin", "class_name", "script"}
        cls, script = obj.get("class_name"), obj.get("script")
        if extra or not isinstance(cls, (str, type(None))) or not isinstance(script, (str, type(None))):
            raise JSONFormatError("a container type object holds builtin, class_name and script strings", path)
        if obj["builtin"] not in TYPE_NAMES:
            raise JSONFormatError(f"unknown builtin type {obj['builtin']!r}", path)
        return t.ContainerType(obj["builtin"], cls, script)
    raise JSONFormatError(f"a container type is a type name, class name or res:// path, not {_kind(obj)}", path)


# -- value -> JSON -------------------------------------------------------------------------

class _Shell(enum.Enum):
    """What a leaf writer returns for a value with children (None is Nil's JSON)."""

    CONTAINER = "container"


_CONTAINER: Final = _Shell.CONTAINER
_LeafJSON = Union[JSONValue, Literal[_Shell.CONTAINER]]
_LeafWriter = Callable[[Any, TypeSpec, bool], _LeafJSON]


def _packed_args(value: Any, component: str, packed_base64: bool) -> dict[str, Any]:
    if component == U8:
        raw = bytes(value)
        if packed_base64:
            return {"base64": base64.b64encode(raw).decode("ascii")}
        return {"args": list(raw)}
    data: array[Any] = value.data
    if packed_base64 and (component != REAL or data.typecode == "f"):
        return {"base64": base64.b64encode(value.to_bytes(_BASE64_TYPECODE[component])).decode("ascii")}
    if component in _INT_BITS:
        return {"args": data.tolist()}
    return {"args": [x if math.isfinite(x) else _nonfinite_text(x) for x in data.tolist()]}


def _node_path_json(p: t.NodePath, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    text = str(p)
    if t.NodePath(text) == p:
        return "np:" + text
    return {"type": "NodePath", "names": list(p.names), "subnames": list(p.subnames), "absolute": p.absolute}


def _nil_json(value: None, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    return None


def _bool_json(value: bool, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    return value  # bool cannot be subclassed: this is True or False


def _int_json(value: int, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    return f"i:{int(value)}"  # int(): an int mixed into an Enum formats as its member name


def _float_json(value: float, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    return "f:" + _float_text(float(value))


def _text_json(value: str, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    return _TEXT_PREFIX[spec.name] + str.__str__(value)  # str.__str__: a subclass's __str__ is not its text


def _math_json(value: Any, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    parts = spec.parts_by_columns(value)
    if spec.component == I32:
        return {"type": spec.name, "args": list(parts)}
    return {"type": spec.name, "args": [_json_number(float(x)) for x in parts]}


def _packed_json(value: Any, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    assert spec.component is not None
    return {"type": spec.name, **_packed_args(value, spec.component, packed_base64)}


def _strings_json(value: t.PackedStringArray, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    for s in value:
        if not isinstance(s, str):
            raise EncodeError(f"PackedStringArray holds a {type(s).__name__}, not a String")
    return {"type": spec.name, "args": [str.__str__(s) for s in value]}


def _base64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


#: Record field kind -> its JSON (numbers and text are JSON as they are).
_RECORD_JSON: dict[str, Callable[[Any], Any]] = {
    "u32": int, "u64": int, "opt_u32": lambda x: x, "str": lambda x: x, "bytes": _base64_text, "u32s": list,
}


def _record_json(value: Any, spec: TypeSpec, packed_base64: bool) -> JSONValue:
    """A record's named fields under their keys; a field holding its ``omit`` value is left out,
    so an empty RID or Signal is the engine's JSON exactly (docs/json.md, deviation 3)."""
    out: dict[str, Any] = {"type": spec.name}
    for field in spec.record:
        x = getattr(value, field.attr)
        if field.optional and x == field.omit:
            continue
        out[field.json_key] = _RECORD_JSON[field.kind](x)
    return out


def _object_json(value: Any, spec: TypeSpec, packed_base64: bool) -> _LeafJSON:
    if isinstance(value, t.EncodedObjectAsID):
        return {"type": _OBJECT_ID, "object_id": value.object_id}
    return _CONTAINER


def _container_json(value: Any, spec: TypeSpec, packed_base64: bool) -> _LeafJSON:
    return _CONTAINER


#: Family -> the JSON of a value of that family, or :data:`_CONTAINER`.
_LEAF_WRITERS: dict[Family, _LeafWriter] = {
    Family.NIL: _nil_json,
    Family.BOOL: _bool_json,
    Family.INT: _int_json,
    Family.FLOAT: _float_json,
    Family.STRING: _text_json,
    Family.NODE_PATH: _node_path_json,
    Family.MATH: _math_json,
    Family.PACKED: _packed_json,
    Family.STRINGS: _strings_json,
    Family.RECORD: _record_json,
    Family.ARRAY: _container_json,
    Family.DICTIONARY: _container_json,
    Family.OBJECT: _object_json,
}


def _unregistered_json(value: Any, spec: Any, packed_base64: bool) -> _LeafJSON:
    if isinstance(value, Mapping):  # a mapping that is no dict (MappingProxyType ...) is a Dictionary
        return _CONTAINER
    raise EncodeError(f"cannot represent a {type(value).__name__} in JSON ({reprlib.repr(value)})")


#: Class -> its leaf writer and registry row, remembered on first sight (a value's
#: family is then one dict lookup away: hashing an Enum member runs Python code).
_WRITER_OF: dict[type, tuple[_LeafWriter, Any]] = {}


def _writer_for(value: Any) -> tuple[_LeafWriter, Any]:
    """The writer of ``value``'s class: by its registry row, found through its base classes
    too, so a subclass of Vector2 (or of str, or an IntEnum) is written as its Godot type."""
    spec = spec_for(value)
    if spec is None:
        return _unregistered_json, None
    entry = _WRITER_OF[type(value)] = (_LEAF_WRITERS[spec.family], spec)
    if len(_WRITER_OF) > 4096:  # a program making classes on the fly must not grow this without end
        _WRITER_OF.clear()
    return entry


def _leaf_to_json(value: Any, packed_base64: bool) -> _LeafJSON:
    """The JSON of a value without children, or :data:`_CONTAINER` for a container."""
    writer, spec = _WRITER_OF.get(type(value)) or _writer_for(value)
    return writer(value, spec, packed_base64)


def _open_container(value: Any) -> tuple[JSONValue, list[Any], Iterator[Any]]:
    """The JSON shell of a container, the list its children go into, and the children."""
    if isinstance(value, t.Object):
        props: list[Any] = []
        shell = {"type": value.class_name, "props": props}
        return shell, props, _object_children(value.properties)
    if isinstance(value, Mapping):
        args: list[Any] = []
        d: dict[str, Any] = {"type": "Dictionary"}
        if isinstance(value, t.TypedDictionary):
            if value.key_type is not None or value.value_type is None:
                d["key_type"] = _container_type_json(value.key_type)
            if value.value_type is not None or value.key_type is None:
                d["value_type"] = _container_type_json(value.value_type)
        d["args"] = args
        return d, args, (x for pair in value.items() for x in pair)
    if isinstance(value, t.TypedArray):
        args = []
        return {"type": "Array", "elem_type": _container_type_json(value.element_type), "args": args}, args, iter(value)
    items: list[Any] = []
    return items, items, iter(value)


class _Name(str):
    """An Object property name: written as a raw JSON string, as the engine does."""

    __slots__ = ()


def _object_children(properties: Mapping[str, Any]) -> Iterator[Any]:
    for name, value in properties.items():
        if not isinstance(name, str):
            raise EncodeError(f"Object property name {name!r} is not a string")
        yield _Name(name)
        yield value


def to_json(value: Any, *, packed_base64: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> JSONValue:
    """The JSON form of ``value``: plain dicts, lists, strings, numbers, booleans and None.

    ``json.dumps`` can write the result as is (it never holds NaN or infinity);
    :func:`dumps_json` writes it laid out for editing.  ``packed_base64`` writes
    packed number arrays as base64 instead of number lists.
    """
    out = _leaf_to_json(value, packed_base64)
    if out is not _CONTAINER:
        return out
    writer_of = _WRITER_OF
    root, sink, children = _open_container(value)
    stack: list[tuple[list[Any], Iterator[Any]]] = [(sink, children)]
    while stack:
        sink, children = stack[-1]
        for child in children:
            if type(child) is _Name:
                sink.append(str.__str__(child))
                continue
            writer, spec = writer_of.get(type(child)) or _writer_for(child)  # _leaf_to_json, inlined
            out = writer(child, spec, packed_base64)
            if out is not _CONTAINER:
                sink.append(out)
                continue
            if len(stack) > max_depth:
                raise EncodeError(nesting_error(max_depth))
            shell, child_sink, grandchildren = _open_container(child)
            sink.append(shell)
            stack.append((child_sink, grandchildren))
            break
        else:
            stack.pop()
    return root


# -- JSON -> value ---------------------------------------------------------------------------


def _scalar_from_text(text: str, path: str) -> Any:
    prefix, sep, rest = text.partition(":")
    if sep:
        if prefix == "s":
            return rest
        if prefix == "i":
            if not _INT_TEXT.match(rest) or len(rest) > _MAX_INT_DIGITS:
                shown = text if len(text) <= 40 else text[:40] + "..."
                raise JSONFormatError(f"{shown!r} is not an integer (at most {_MAX_INT_DIGITS} digits)", path)
            return int(rest)
        if prefix == "f":
            return _parse_float_text(rest, path)
        if prefix == "sn":
            return t.StringName(rest)
        if prefix == "np":
            return t.NodePath(rest)
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise JSONFormatError(f"string {shown!r} has no type prefix (i:, f:, s:, sn: or np:); "
                          f"a String is written \"s:{shown}\"", path)


def _packed_from_base64(spec: TypeSpec, text: Any, path: str) -> Any:
    if not isinstance(text, str):
        raise JSONFormatError("base64 must be a string", path)
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise JSONFormatError(f"invalid base64: {e}", path) from None
    if spec.component == U8:
        return raw
    typecode = _BASE64_TYPECODE[spec.component or ""]
    size = array(typecode).itemsize * spec.width
    if len(raw) % size:
        raise JSONFormatError(f"{len(raw)} bytes is not a whole number of {size}-byte elements", path)
    return spec.cls.from_bytes(raw, typecode)  # type: ignore[attr-defined]


def _bytes_from_args(args: list[Any], path: str) -> bytes:
    for i, x in enumerate(args):
        if type(x) is float and x.is_integer():
            x = int(x)
        if type(x) is not int or not 0 <= x <= 255:
            raise JSONFormatError(f"a byte is an integer 0-255, got {x!r}", f"{path}[{i}]")
    return bytes(int(x) for x in args)


def _packed_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    component = spec.component
    if "base64" in obj:
        return _packed_from_base64(spec, obj["base64"], path + ".base64")
    args = _args_list(obj, path)
    apath = path + ".args"
    if len(args) % spec.width:
        raise JSONFormatError(f"{spec.name} needs a multiple of {spec.width} numbers, got {len(args)}", apath)
    if component == U8:
        return _bytes_from_args(args, apath)
    if component in _INT_BITS:
        bits = _INT_BITS[component]
        ints = [_arg_int(x, f"{apath}[{i}]", bits) for i, x in enumerate(args)]
        return _packed(spec.cls, array(_BASE64_TYPECODE[component], ints))
    numbers = _floats(args, apath)
    if component == F64:
        return _packed(spec.cls, array("d", numbers))
    # float32 storage unless a number needs a double (a double-precision build's vectors).
    narrow = array("f", numbers)
    exact = all(a == b or (a != a and b != b) for a, b in zip(narrow, numbers))
    return _packed(spec.cls, narrow if exact else array("d", numbers))


def _packed(cls: type[Any], data: array[Any]) -> Any:
    """A packed array holding ``data`` (flat numbers) as it is."""
    result = cls.from_bytes(b"", data.typecode)
    result.data = data
    return result


def _args_list(obj: dict[str, Any], path: str) -> list[Any]:
    args = obj.get("args")
    if not isinstance(args, list):
        raise JSONFormatError(f"{obj.get('type')} needs an \"args\" list", path)
    return args


def _uint(x: Any, bits: int, key: str, path: str) -> int:
    if type(x) is not int or not 0 <= x < 1 << bits:
        raise JSONFormatError(f"{key} must be an integer 0 <= n < 2**{bits}", path)
    return x


def _math_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    args = _args_list(obj, path)
    if len(args) != spec.count:
        raise JSONFormatError(f"{spec.name} needs {spec.count} args, got {len(args)}", path + ".args")
    parts: list[Any]
    if spec.component == I32:
        parts = [_arg_int(x, f"{path}.args[{i}]", 32) for i, x in enumerate(args)]
    else:
        parts = _floats(args, path + ".args")
    return spec.build_from_columns(parts)


def _strings_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    args = _args_list(obj, path)
    for i, s in enumerate(args):
        if not isinstance(s, str):
            raise JSONFormatError(f"a {spec.name} holds strings, got {_kind(s)}", f"{path}.args[{i}]")
    return t.PackedStringArray(args)


def _node_path_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    names, subnames, absolute = obj.get("names", []), obj.get("subnames", []), obj.get("absolute", False)
    if not (isinstance(names, list) and isinstance(subnames, list) and all(isinstance(n, str) for n in names)
            and all(isinstance(n, str) for n in subnames) and isinstance(absolute, bool)):
        raise JSONFormatError("a NodePath object holds lists of strings names and subnames, and a boolean "
                              "absolute", path)
    return t.NodePath(names=names, subnames=subnames, absolute=absolute)


def _str_field(x: Any, type_name: str, key: str, path: str) -> str:
    if not isinstance(x, str):
        raise JSONFormatError(f"{type_name} {key} must be a string", path)
    return x


def _bytes_field(x: Any, type_name: str, key: str, path: str) -> bytes:
    if isinstance(x, str):
        try:
            return base64.b64decode(x, validate=True)
        except (binascii.Error, ValueError):  # ValueError: text that is not ASCII
            pass
    raise JSONFormatError(f"{type_name} {key} is base64 text", path)


def _words_field(x: Any, type_name: str, key: str, path: str) -> tuple[int, ...]:
    if not isinstance(x, list) or not all(type(w) is int and 0 <= w < 1 << 32 for w in x):
        raise JSONFormatError(f"{type_name} {key} is a list of u32 words", path)
    return tuple(x)


def _opt_u32_field(x: Any, type_name: str, key: str, path: str) -> int | None:
    return None if x is None else _uint(x, 32, key, path)


#: Record field kind -> its value from JSON: (JSON value, type name, key, path).
_RECORD_FIELDS: dict[str, Callable[[Any, str, str, str], Any]] = {
    "u32": lambda x, name, key, path: _uint(x, 32, key, path),
    "u64": lambda x, name, key, path: _uint(x, 64, key, path),
    "opt_u32": _opt_u32_field,
    "str": _str_field,
    "bytes": _bytes_field,
    "u32s": _words_field,
}


def _record_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    """A record from its keys; a key left out holds the field's ``omit`` (what :func:`to_json` leaves out)."""
    values: dict[str, Any] = {}
    for field in spec.record:
        key = field.json_key
        if key in obj:
            values[field.attr] = _RECORD_FIELDS[field.kind](obj[key], spec.name, key, f"{path}.{key}")
        elif field.optional:
            values[field.attr] = field.omit
        else:
            raise JSONFormatError(f'{spec.name} needs "{key}"', f"{path}.{key}")
    return spec.cls(**values)


def _plain_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    raise JSONFormatError(f"{spec.name} is written as a plain JSON value or a prefixed string "
                          "(\"i:1\", \"f:0.5\", \"s:text\", \"sn:name\", \"np:path\"), not an object", path)


def _unknown_from_json(spec: TypeSpec, obj: dict[str, Any], path: str) -> Any:
    # Arrays and Dictionaries are opened by _open_frame: only an Object without props gets here.
    raise JSONFormatError(f"unknown type {spec.name!r} (an Object needs \"props\")", path)


_LeafReader = Callable[[TypeSpec, dict[str, Any], str], Any]

#: Family -> the value of a ``{"type": ...}`` object of that family that has no children.
_LEAF_READERS: dict[Family, _LeafReader] = {
    Family.NIL: _plain_from_json,
    Family.BOOL: _plain_from_json,
    Family.INT: _plain_from_json,
    Family.FLOAT: _plain_from_json,
    Family.STRING: _plain_from_json,
    Family.NODE_PATH: _node_path_from_json,
    Family.MATH: _math_from_json,
    Family.PACKED: _packed_from_json,
    Family.STRINGS: _strings_from_json,
    Family.RECORD: _record_from_json,
    Family.ARRAY: _unknown_from_json,
    Family.DICTIONARY: _unknown_from_json,
    Family.OBJECT: _unknown_from_json,
}


#: Type name -> its leaf reader and registry row.
_READER_OF: dict[str, tuple[_LeafReader, TypeSpec]] = {
    name: (_LEAF_READERS[spec.family], spec) for name, spec in BY_NAME.items()}


def _leaf_from_dict(type_name: str, obj: dict[str, Any], path: str) -> Any:
    """Values of the ``{"type": ...}`` form that have no children."""
    entry = _READER_OF.get(type_name)
    if entry is not None:
        return entry[0](entry[1], obj, path)
    if type_name == _OBJECT_ID:
        return t.EncodedObjectAsID(_uint(obj.get("object_id"), 64, "object_id", path + ".object_id"))
    raise JSONFormatError(f"unknown type {type_name!r} (an Object needs \"props\")", path)


def _build_dictionary(key_type: Any, value_type: Any, typed: bool, pairs: list[Any], memo: Memo) -> Any:
    """A dict when it holds the entries exactly, else a Dictionary (the decoder's rule).

    ``memo`` carries the identities of the containers already used as keys in this
    reading, so keys nested in keys cost their size once (see :mod:`godot_formats.keys`).
    """
    if typed:
        typed_dict = t.TypedDictionary(key_type, value_type)
        typed_dict._fill(zip(pairs[0::2], pairs[1::2]), memo)
        return typed_dict
    out: dict[Any, Any] = {}
    for i in range(0, len(pairs), 2):
        try:
            n = len(out)
            out.setdefault(pairs[i], pairs[i + 1])
            if len(out) > n:
                continue
        except TypeError:  # an unhashable key such as an Array
            pass
        break
    else:
        if python_keys_agree(out):
            return out
    # Python cannot hash a key, merged two keys Godot keeps apart (1, 1.0, true), or
    # kept apart two NaNs that Godot merges.
    result = t.Dictionary()
    result._fill(zip(pairs[0::2], pairs[1::2]), memo)
    return result


class _Frame:
    """One JSON container being turned into a value."""

    __slots__ = ("kind", "items", "children", "path", "index", "info")

    def __init__(self, kind: str, children: list[Any], path: str, info: Any = None) -> None:
        self.kind = kind  # "list", "Array", "Dictionary", "Object"
        self.items: list[Any] = []
        self.children = children
        self.path = path
        self.index = 0
        self.info = info

    def child_path(self) -> str:
        i = self.index
        if self.kind == "list":
            return f"{self.path}[{i}]"
        if self.kind == "Object":
            return f"{self.path}.props[{i}]"
        return f"{self.path}.args[{i}]"

    def finish(self, memo: Memo) -> Any:
        if self.kind == "list":
            return self.items
        if self.kind == "Array":
            return t.TypedArray(self.info, self.items)
        if self.kind == "Dictionary":
            key_type, value_type, typed = self.info
            return _build_dictionary(key_type, value_type, typed, self.items, memo)
        props = dict(zip(self.items[0::2], self.items[1::2]))
        return t.Object(self.info, props)


def _open_frame(obj: Any, path: str) -> _Frame | None:
    """A frame for a JSON container that holds values, or None when ``obj`` is a leaf."""
    if isinstance(obj, list):
        return _Frame("list", obj, path)
    if not isinstance(obj, dict):
        return None
    type_name = obj.get("type")
    if not isinstance(type_name, str):
        raise JSONFormatError("an object needs a \"type\" string", path)
    if "props" in obj:
        props = obj["props"]
        if not isinstance(props, list) or len(props) % 2:
            raise JSONFormatError("props must be a list of name, value pairs", path + ".props")
        if not type_name:
            raise JSONFormatError("an Object needs a class name in \"type\"", path)
        return _Frame("Object", props, path, type_name)
    if type_name == "Array":
        args = _args_list(obj, path)
        if "elem_type" not in obj:
            return _Frame("list", args, path + ".args")
        element = _container_type_value(obj["elem_type"], path + ".elem_type")
        return _Frame("Array", args, path, element) if element is not None else _Frame("list", args, path + ".args")
    if type_name == "Dictionary":
        args = _args_list(obj, path)
        if len(args) % 2:
            raise JSONFormatError("Dictionary args are key, value pairs: an even count", path + ".args")
        typed = "key_type" in obj or "value_type" in obj
        key_type = _container_type_value(obj["key_type"], path + ".key_type") if "key_type" in obj else None
        value_type = _container_type_value(obj["value_type"], path + ".value_type") if "value_type" in obj else None
        return _Frame("Dictionary", args, path, (key_type, value_type, typed))
    return None


def _leaf_from_json(obj: Any, path: str) -> Any:
    if obj is None or type(obj) is bool:
        return obj
    if isinstance(obj, str):
        return _scalar_from_text(obj, path)
    if isinstance(obj, dict):
        return _leaf_from_dict(obj["type"], obj, path)
    if type(obj) in (int, float):
        raise JSONFormatError(f"a bare JSON number ({obj!r}); write \"i:{obj}\" for an int or "
                              f"\"f:{obj}\" for a float", path)
    raise JSONFormatError(f"{_kind(obj)} is not JSON", path)


def from_json(obj: Any, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The value a JSON form stands for (ours or the engine's ``JSON.from_native`` output).

    Raises :class:`JSONFormatError`, naming the path of the bad node, for
    anything that is not a value in that form.
    """
    frame = _open_frame(obj, "$")
    if frame is None:
        return _leaf_from_json(obj, "$")
    stack = [frame]
    memo: Memo = {}
    while True:
        frame = stack[-1]
        children = frame.children
        while frame.index < len(children):
            child = children[frame.index]
            path = frame.child_path()
            if frame.kind == "Object" and frame.index % 2 == 0:
                if not isinstance(child, str):
                    raise JSONFormatError(f"a property name is a string, got {_kind(child)}", path)
                frame.items.append(child)
                frame.index += 1
                continue
            sub = _open_frame(child, path)
            if sub is not None:
                if len(stack) > max_depth:
                    raise JSONFormatError(nesting_error(max_depth, writing=False), path)
                stack.append(sub)
                break
            frame.items.append(_leaf_from_json(child, path))
            frame.index += 1
        else:
            value = stack.pop().finish(memo)
            if not stack:
                return value
            parent = stack[-1]
            parent.items.append(value)
            parent.index += 1


# -- text ----------------------------------------------------------------------------------------


_SURROGATE = re.compile("[\ud800-\udfff]")
_WIDTH = 100
#: Columns of indentation :func:`dumps_json` never goes past: a container that
#: would be indented deeper (JSON nesting level 32 with the default indent of 2)
#: is written on one line, however long.  Each line then carries at most this
#: much indentation, so the text stays within a constant factor of the value's
#: bytes whatever the nesting (docs/json.md, "Layout").
MAX_INDENT_COLUMNS = 64


_encode_string = json.encoder.encode_basestring


def _escape_surrogates(text: str) -> str:
    # Godot 3 strings may hold lone surrogates, which UTF-8 cannot: keep them escaped.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


def _scalar_json(x: Any) -> str:
    """One JSON scalar; ``to_json`` never produces a non-finite float."""
    if x is None:
        return "null"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if type(x) is int:
        return str(x)
    if type(x) is float:
        return repr(x)
    return _escape_surrogates(_encode_string(x))


def _tokens(node: list[Any] | dict[str, Any], comma: str = ", ", colon: str = ": ") -> Iterator[Any]:
    """The one-line text of a container, piece by piece; child containers are yielded as they are."""
    if isinstance(node, list):
        yield "["
        for i, x in enumerate(node):
            if i:
                yield comma
            yield x if isinstance(x, (list, dict)) else _scalar_json(x)
        yield "]"
        return
    yield "{"
    for i, (k, v) in enumerate(node.items()):
        if i:
            yield comma
        yield _scalar_json(k) + colon
        yield v if isinstance(v, (list, dict)) else _scalar_json(v)
    yield "}"


def _inline(node: Any, limit: int) -> str | None:
    """``node`` on one line if that takes at most ``limit`` characters, else None (found lazily)."""
    if not isinstance(node, (list, dict)):
        return _scalar_json(node)
    parts: list[str] = []
    size = 0
    stack = [_tokens(node)]
    while stack:
        for piece in stack[-1]:
            if not isinstance(piece, str):
                stack.append(_tokens(piece))
                break
            size += len(piece)
            if size > limit:
                return None
            parts.append(piece)
        else:
            stack.pop()
    return "".join(parts)


def _is_flat(node: list[Any] | dict[str, Any]) -> bool:
    children = node if isinstance(node, list) else node.values()
    return not any(isinstance(x, (list, dict)) for x in children)


def _one_line(root: Any, comma: str, colon: str) -> str:
    """``root`` on one line, however long, without recursion.

    A container without child containers (most of the bytes of a large value:
    ``args`` lists, packed arrays) is written by the json module in one call;
    nesting is walked here with an explicit stack.
    """
    if not isinstance(root, (list, dict)):
        return _scalar_json(root)
    flat = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False,
                            separators=(comma, colon)).encode
    if _is_flat(root):
        return _escape_surrogates(flat(root))
    parts: list[str] = []
    stack = [_tokens(root, comma, colon)]
    while stack:
        for piece in stack[-1]:
            if isinstance(piece, str):
                parts.append(piece)
            elif _is_flat(piece):
                parts.append(_escape_surrogates(flat(piece)))
            else:
                stack.append(_tokens(piece, comma, colon))
                break
        else:
            stack.pop()
    return "".join(parts)


class _Token:
    """Closing text in the work list of :func:`_pretty`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _is_number_list(node: Any) -> bool:
    return isinstance(node, list) and len(node) > 0 and all(
        type(x) in (int, float) or x in ("inf", "-inf", "nan") for x in node)


def _pretty(root: Any, indent: int) -> str:
    """JSON laid out for editing: small containers on one line, number lists wrapped,
    Dictionary args and Object props one key, value pair per line.

    A container whose children would be indented past :data:`MAX_INDENT_COLUMNS`
    is written on one line instead, so no line carries more indentation than that.
    """
    out: list[str] = []
    # Work items: (node, level, prefix, suffix, pairs)
    todo: list[tuple[Any, int, str, str, bool]] = [(root, 0, "", "", False)]
    while todo:
        node, level, prefix, suffix, pairs = todo.pop()
        if isinstance(node, _Token):
            out.append(" " * (indent * level) + node.text + suffix)
            continue
        pad = " " * (indent * level)
        room = _WIDTH - len(pad) - len(prefix) - len(suffix)
        flat = _inline(node, max(room, 20)) if isinstance(node, (list, dict)) else _scalar_json(node)
        if flat is None and indent * (level + 1) > MAX_INDENT_COLUMNS:
            flat = _one_line(node, ", ", ": ")
        if flat is not None:
            out.append(pad + prefix + flat + suffix)
            continue
        if _is_number_list(node):
            out.append(pad + prefix + "[")
            inner = " " * (indent * (level + 1))
            line = ""
            for i, x in enumerate(node):
                text = _scalar_json(x) + ("," if i < len(node) - 1 else "")
                if line and len(inner) + len(line) + 1 + len(text) > _WIDTH:
                    out.append(inner + line)
                    line = text
                else:
                    line = f"{line} {text}" if line else text
            out.append(inner + line)
            out.append(pad + "]" + suffix)
            continue
        if isinstance(node, dict):
            out.append(pad + prefix + "{")
            todo.append((_Token("}"), level, "", suffix, False))
            entries = list(node.items())
            for i in range(len(entries) - 1, -1, -1):
                key, child = entries[i]
                comma = "," if i < len(entries) - 1 else ""
                by_pairs = key in ("args", "props") and (node.get("type") == "Dictionary" or key == "props")
                todo.append((child, level + 1, _scalar_json(key) + ": ", comma, by_pairs))
            continue
        out.append(pad + prefix + "[")
        todo.append((_Token("]"), level, "", suffix, False))
        n = len(node)
        for i in range(n - 1, -1, -1):
            comma = "," if i < n - 1 else ""
            if pairs and i % 2 == 1:
                key_text = _inline(node[i - 1], _WIDTH // 2)
                if key_text is not None:
                    todo.append((node[i], level + 1, key_text + ", ", comma, False))
                    continue
            if pairs and i % 2 == 0 and i + 1 < n and _inline(node[i], _WIDTH // 2) is not None:
                continue  # written with its value
            todo.append((node[i], level + 1, "", comma, False))
    return "\n".join(out)


def dumps_json(value: Any, indent: int | None = 2, *, packed_base64: bool = False) -> str:
    """``value`` as JSON text; ``indent=None`` writes one compact line.

    With an indent, small containers stay on one line and number lists are
    wrapped, so a save file stays readable and short enough to edit; no line
    is indented past :data:`MAX_INDENT_COLUMNS` (deeper containers are written
    on one line).  Neither form recurses, whatever the nesting.
    """
    obj = to_json(value, packed_base64=packed_base64)
    if indent is None:
        return _one_line(obj, ",", ":")
    return _pretty(obj, indent)


# -- reading JSON text ------------------------------------------------------------------------------

#: Digits of a JSON integer or an ``"i:"`` text: a Variant int has at most 19
#: (and u64 ids 20).  Python's ``int()`` is quadratic in the digits, and raises a
#: plain ValueError past ``sys.get_int_max_str_digits()``.
_MAX_INT_DIGITS = 100


def _json_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise JSONFormatError(f"a JSON integer of {len(text)} digits (at most {_MAX_INT_DIGITS})")
    return int(text)


def _reject_constant(name: str) -> Any:
    raise JSONFormatError(f"{name} is not JSON; write \"f:{name.lower().replace('infinity', 'inf')}\" "
                          "or, inside args, the string \"inf\", \"-inf\" or \"nan\"")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_json_int)
_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_CONSTANTS = (("null", None), ("true", True), ("false", False))
_REJECTED = ("NaN", "Infinity", "-Infinity")


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object key at ``pos`` (whitespace skipped) and the position after its colon and whitespace."""
    if text[pos:pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = _scanstring(text, pos + 1, True)
    pos = _JSON_WS.match(text, pos).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _JSON_WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def _scalar_at(text: str, pos: int) -> tuple[Any, int]:
    """The string, constant or number at ``pos`` and the position after it."""
    if text[pos:pos + 1] == '"':
        return _scanstring(text, pos + 1, True)
    for word, constant in _CONSTANTS:
        if text.startswith(word, pos):
            return constant, pos + len(word)
    for word in _REJECTED:
        if text.startswith(word, pos):
            _reject_constant(word)
    m = _JSON_NUMBER.match(text, pos)
    if m is None:
        raise json.JSONDecodeError("Expecting value", text, pos)
    integer, frac, exp = m.groups()
    value = float(integer + (frac or "") + (exp or "")) if frac or exp else _json_int(integer)
    return value, m.end()


def _hand_up(stack: list[Any], keys: list[Any], value: Any, text: str, pos: int) -> tuple[Any, int]:
    """Put ``value`` in the innermost open container, closing each container that ends after it.

    Returns where the next value starts or, once the outermost container is closed
    (``stack`` empty), the document and the position after it.
    """
    ws = _JSON_WS.match
    while stack:
        key = keys[-1]
        if key is None:
            stack[-1].append(value)
        else:
            stack[-1][key] = value
        pos = ws(text, pos).end()  # type: ignore[union-attr]
        c = text[pos:pos + 1]
        if c == ",":
            pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
            if key is not None:
                keys[-1], pos = _key(text, pos)
            return value, pos
        if c != ("]" if key is None else "}"):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        value = stack.pop()
        keys.pop()
        pos += 1
    return value, pos


def _raw_decode_iteratively(text: str, pos: int) -> tuple[Any, int]:
    """One JSON document at ``pos``, as ``json.JSONDecoder.raw_decode`` reads it, with an explicit stack.

    The json module recurses once per nesting level; this takes any depth.
    """
    stack: list[Any] = []  # the open lists and dicts
    keys: list[Any] = []  # the key each open dict is reading a value for (None for lists)
    ws = _JSON_WS.match
    while True:
        # A value starts at pos.
        c = text[pos:pos + 1]
        value: Any
        if c == "{" or c == "[":
            pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos:pos + 1] != ("}" if c == "{" else "]"):
                key = None
                if c == "{":
                    key, pos = _key(text, pos)
                stack.append({} if c == "{" else [])
                keys.append(key)
                continue
            value, pos = ({} if c == "{" else []), pos + 1
        else:
            value, pos = _scalar_at(text, pos)
        value, pos = _hand_up(stack, keys, value, text, pos)
        if not stack:
            return value, pos


def _parse_documents(text: str) -> Iterator[tuple[int, Any]]:
    pos, end = 0, len(text)
    ws = re.compile(r"\s*")
    pos = ws.match(text, pos).end()  # type: ignore[union-attr]
    while pos < end:
        try:
            try:
                obj, new = _DECODER.raw_decode(text, pos)
            except RecursionError:
                # Deeper than the interpreter lets the json module go: read it without recursion.
                obj, new = _raw_decode_iteratively(text, pos)
        except json.JSONDecodeError as e:
            raise JSONFormatError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        yield pos, obj
        pos = ws.match(text, new).end()  # type: ignore[union-attr]


def loads_json_documents(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> list[Any]:
    """Every value of a text holding one or more JSON documents one after another.

    ``godot-formats dump --json`` writes one document per ``store_var`` frame.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise JSONFormatError(f"JSON text is not UTF-8 (byte {e.start})") from None
    docs = list(_parse_documents(text))
    if not docs:
        raise JSONFormatError("no JSON value in the text")
    return [from_json(obj, max_depth=max_depth) for _, obj in docs]


def loads_json(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The value of JSON text written by :func:`dumps_json` or by ``JSON.stringify(JSON.from_native(v))``."""
    values = loads_json_documents(text, max_depth=max_depth)
    if len(values) > 1:
        raise JSONFormatError(f"{len(values)} JSON documents where one was expected (use loads_json_documents)")
    return values[0]
