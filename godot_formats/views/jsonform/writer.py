"""Value -> JSON form (``to_json``), with an explicit stack: no recursion on the value."""

from __future__ import annotations

import base64
import enum
import math
import reprlib
from array import array
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Final, Literal, Union

from ...core import types as t
from ...core.codec import DEFAULT_MAX_DEPTH
from ...core.errors import EncodeError
from ...core.registry import Family, TypeSpec, nesting_error, spec_for
from ...core.switches import I32, REAL, U8
from .common import _BASE64_TYPECODE, _INT_BITS, _OBJECT_ID, _TEXT_PREFIX, JSONValue, _container_type_json
from .numbers import _float_text, _json_number, _nonfinite_text


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


#: What :func:`to_json` asks about a value that has no Godot type: its JSON form (a reference of
#: a resource save, say), written as it is; it raises :class:`EncodeError` for a value it has none for.
Default = Callable[[Any], JSONValue]


def _by_default(value: Any, default: Default | None) -> _LeafJSON:
    """The JSON of a value that has no Godot type: a Mapping's shell, or what ``default`` makes of it."""
    if default is None or isinstance(value, Mapping):
        return _unregistered_json(value, None, False)
    return default(value)


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


def to_json(value: Any, *, packed_base64: bool = False, max_depth: int = DEFAULT_MAX_DEPTH,
            default: Default | None = None) -> JSONValue:
    """The JSON form of ``value``: plain dicts, lists, strings, numbers, booleans and None.

    ``json.dumps`` can write the result as is (it never holds NaN or infinity);
    :func:`dumps_json` writes it laid out for editing.  ``packed_base64`` writes
    packed number arrays as base64 instead of number lists.  ``default``, as
    ``json.dumps``'s, is called with each value, at any depth, that has no Godot
    type (the references of a resource save: :mod:`godot_formats.resources.jsondoc`)
    and returns its JSON form, which is written as it is; without it such a value
    raises :class:`EncodeError`.
    """
    writer, spec = _WRITER_OF.get(type(value)) or _writer_for(value)
    out = writer(value, spec, packed_base64) if writer is not _unregistered_json else _by_default(value, default)
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
            writer, spec = writer_of.get(type(child)) or _writer_for(child)
            if writer is _unregistered_json:
                out = _by_default(child, default)
            else:
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
