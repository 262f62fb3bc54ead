"""JSON form -> value (``from_json``), with an explicit stack: no recursion on the document."""

from __future__ import annotations

import base64
import binascii
from array import array
from typing import Any, Callable

from ...core import types as t
from ...core.codec import DEFAULT_MAX_DEPTH
from ...core.errors import JSONFormatError
from ...core.keys import Memo, python_keys_agree
from ...core.registry import BY_NAME, Family, TypeSpec, nesting_error
from ...core.switches import F64, I32, U8
from .common import _BASE64_TYPECODE, _INT_BITS, _OBJECT_ID, _container_type_value
from .numbers import _INT_TEXT, _MAX_INT_DIGITS, _arg_int, _floats, _kind, _parse_float_text


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


#: What :func:`from_json` asks about a ``{"type": ...}`` object whose type names no Godot type (the
#: references of a resource save): the value it stands for; it raises :class:`JSONFormatError` for an
#: object it does not know.  The inverse of ``to_json``'s ``default``.
ObjectHook = Callable[[dict[str, Any], str], Any]


def _leaf_from_dict(type_name: str, obj: dict[str, Any], path: str, object_hook: ObjectHook | None = None) -> Any:
    """Values of the ``{"type": ...}`` form that have no children."""
    entry = _READER_OF.get(type_name)
    if entry is not None:
        return entry[0](entry[1], obj, path)
    if type_name == _OBJECT_ID:
        return t.EncodedObjectAsID(_uint(obj.get("object_id"), 64, "object_id", path + ".object_id"))
    if object_hook is not None:
        return object_hook(obj, path)
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


def _leaf_from_json(obj: Any, path: str, object_hook: ObjectHook | None = None) -> Any:
    if obj is None or type(obj) is bool:
        return obj
    if isinstance(obj, str):
        return _scalar_from_text(obj, path)
    if isinstance(obj, dict):
        return _leaf_from_dict(obj["type"], obj, path, object_hook)
    if type(obj) in (int, float):
        raise JSONFormatError(f"a bare JSON number ({obj!r}); write \"i:{obj}\" for an int or "
                              f"\"f:{obj}\" for a float", path)
    raise JSONFormatError(f"{_kind(obj)} is not JSON", path)


def from_json(obj: Any, *, max_depth: int = DEFAULT_MAX_DEPTH, object_hook: ObjectHook | None = None) -> Any:
    """The value a JSON form stands for (ours or the engine's ``JSON.from_native`` output).

    Raises :class:`JSONFormatError`, naming the path of the bad node, for
    anything that is not a value in that form.  ``object_hook(obj, path)`` is called
    with each ``{"type": ...}`` object, at any depth, whose type names no Godot type,
    and returns the value it stands for (a resource save's references:
    :mod:`godot_formats.resources.jsondoc`); without it such an object is an error.
    """
    frame = _open_frame(obj, "$")
    if frame is None:
        return _leaf_from_json(obj, "$", object_hook)
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
            frame.items.append(_leaf_from_json(child, path, object_hook))
            frame.index += 1
        else:
            value = stack.pop().finish(memo)
            if not stack:
                return value
            parent = stack[-1]
            parent.items.append(value)
            parent.index += 1
