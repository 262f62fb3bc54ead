"""What the JSON form adds to the registry's rows, and container types both directions share."""

from __future__ import annotations

from typing import Any, Union

from ...core import types as t
from ...core.errors import JSONFormatError
from ...core.registry import Family, TypeSpec, for_each_row
from ...core.switches import F32, F64, I32, I64, REAL
from .numbers import _kind

JSONValue = Union[None, bool, int, float, str, list[Any], dict[str, Any]]

#: array typecode of a packed array's component at its natural width (what base64 holds).
_BASE64_TYPECODE = {I32: "i", I64: "q", F32: "f", F64: "d", REAL: "f"}
_INT_BITS = {I32: 32, I64: 64}
#: The prefix of each text type's string form (the engine's ``JSON.from_native``).
_TEXT_PREFIX = {"String": "s:", "StringName": "sn:"}
#: An Object in its id form: the Object row's second class, which the engine's JSON has no form for.
_OBJECT_ID = t.EncodedObjectAsID.__name__


# -- container types -------------------------------------------------------------------

#: The types a typed container may name as a builtin: every Godot 4 type but Nil and Object
#: (typed containers are Godot 4's).
_BUILTIN_NAMES: set[str] = set()
#: ... and Object, which names a class or script beside it.
_TYPE_NAMES: set[str] = {"Nil", "Object"}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if 4 in spec.majors and spec.family not in (Family.NIL, Family.OBJECT):
        _BUILTIN_NAMES.add(spec.name)
        _TYPE_NAMES.add(spec.name)


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
        if obj["builtin"] not in _TYPE_NAMES:
            raise JSONFormatError(f"unknown builtin type {obj['builtin']!r}", path)
        return t.ContainerType(obj["builtin"], cls, script)
    raise JSONFormatError(f"a container type is a type name, class name or res:// path, not {_kind(obj)}", path)
