"""A resource file as one JSON document (``godot-formats dump --json``), and its values read back.

Every value is in the lossless form of :mod:`godot_formats.views.jsonform`, written and read with
its explicit stack, so a value nested as deep as the readers accept (1024 containers) converts
without recursion.  A reference to a resource is written where it stands, at any depth (in an
Array, a Dictionary, a typed container, an Object's properties), through the form's ``default``
hook, and read back through its ``object_hook``:

* ``{"type": "SubResource", "id": ..., "class": ...}``: one of the file's own resources, by its id;
* ``{"type": "ExtResource", "class": ..., "path": ..., "id": ...}``: another file, by the id of
  its entry in ``external``; a reference written in the value itself (a ``.tres``'s
  ``Resource("res://...")``, a ``.res``'s old inline form) has ``"id": null`` and adds ``"uid"``
  when it has one.

docs/json.md ("Resource saves") has the document's shape.  Nothing is loaded or run.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core.errors import EncodeError, JSONFormatError
from ..views.jsonform import JSONValue, dumps_form, from_json, to_json
from .model import ExtResource, Resource, ResourceFile

__all__ = ["resource_json", "dumps_resource", "value_json", "value_from_json", "reference_json"]


def reference_json(value: Any) -> JSONValue:
    """The JSON of a reference to a resource (``to_json``'s ``default``); any other value that
    has no Godot type raises :class:`EncodeError`."""
    if isinstance(value, Resource):
        return {"type": "SubResource", "id": value.id, "class": value.type}
    if isinstance(value, ExtResource):
        out: dict[str, Any] = {"type": "ExtResource", "class": value.type, "path": value.path, "id": value.id}
        if value.id is None and value.uid is not None:
            out["uid"] = value.uid
        return out
    raise EncodeError(f"cannot represent a {type(value).__name__} in JSON")


def value_json(value: Any, *, packed_base64: bool = False) -> JSONValue:
    """One property's value in the JSON form, its references as above."""
    return to_json(value, packed_base64=packed_base64, default=reference_json)


def resource_json(rf: ResourceFile, *, packed_base64: bool = False) -> dict[str, Any]:
    """The whole file as one JSON document: what describes it, its references, its resources."""
    def resource(res: Resource) -> dict[str, Any]:
        return {"type": res.type, "id": res.id,
                "properties": {name: value_json(v, packed_base64=packed_base64) for name, v in res.properties.items()}}

    return {
        "engine": rf.engine, "format": rf.format, "version": rf.version, "compression": rf.compression,
        "byteorder": rf.byteorder, "script_class": rf.header.get("script_class"),
        "external": [{"id": e.id, "type": e.type, "path": e.path, "uid": e.uid} for e in rf.external],
        "resources": [resource(r) for r in rf.resources],
        "main": resource(rf.main),
        "notes": list(rf.notes),
    }


def dumps_resource(rf: ResourceFile, indent: int | None = 2, *, packed_base64: bool = False) -> str:
    """:func:`resource_json` as JSON text, laid out as ``dumps_json`` lays out a value, at any depth."""
    return dumps_form(resource_json(rf, packed_base64=packed_base64), indent)


def value_from_json(obj: Any, rf: ResourceFile) -> Any:
    """The value a property's JSON stands for, each reference resolved to ``rf``'s own object
    (a sub-resource by its id, an external resource by its entry's id) or, for one written in
    the value, an :class:`ExtResource` of its own (one per path, as the text reader makes them)."""
    return from_json(obj, object_hook=_resolver(rf))


def _text(obj: dict[str, Any], key: str, path: str) -> str:
    x = obj.get(key)
    if not isinstance(x, str):
        raise JSONFormatError(f"a {obj['type']} needs a \"{key}\" string", f"{path}.{key}")
    return x


def _resolver(rf: ResourceFile) -> Callable[[dict[str, Any], str], Any]:
    """``from_json``'s ``object_hook`` for the references of ``rf``."""
    subs = {_key(res.id): res for res in (*rf.resources, rf.main)}
    external = {_key(ext.id): ext for ext in rf.external if ext.id is not None}
    inline: dict[str, ExtResource] = {}

    def resolve(obj: dict[str, Any], path: str) -> Any:
        kind, ident = obj["type"], obj.get("id")
        if not isinstance(ident, (str, int, type(None))) or isinstance(ident, bool):
            raise JSONFormatError(f"a {kind}'s id is a string, an integer or null", path + ".id")
        if kind == "SubResource":
            found: Any = subs.get(_key(ident))
        elif kind == "ExtResource" and ident is not None:
            found = external.get(_key(ident))
        elif kind == "ExtResource":
            uid = obj.get("uid")
            if not isinstance(uid, (int, type(None))) or isinstance(uid, bool):
                raise JSONFormatError("an ExtResource's uid is an integer or null", path + ".uid")
            ref_path = _text(obj, "path", path)
            found = inline.setdefault(ref_path, ExtResource(_text(obj, "class", path), ref_path, uid))
        else:
            raise JSONFormatError(f"unknown type {kind!r} (an Object needs \"props\")", path)
        if found is None:
            raise JSONFormatError(f"{kind} {ident!r} is not one of the file's", path + ".id")
        return found

    return resolve


def _key(ident: Any) -> str | None:
    """An id as it is compared: as text, as the engine compares them (``1`` and ``"1"`` are one id)."""
    return None if ident is None else str(ident)
