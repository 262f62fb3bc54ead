#!/usr/bin/env python3
"""Conformance adapter for the PyPI package playgodot (``playgodot.variant``: decode_variant /
encode_variant), a Godot 4 implementation for the remote debugger's messages (docs/conformance.md).

    python3 -m venv /tmp/gf-peers/playgodot && /tmp/gf-peers/playgodot/bin/pip install playgodot==0.5.1
    godot-formats conformance -d godot4 -- /tmp/gf-peers/playgodot/bin/python examples/conformance/playgodot_adapter.py

It needs only the package (not godot_formats).  What the adapter adds, and only this:

* roundtrip: ``encode_variant(decode_variant(bytes)[0])``;
* decode: the JSON form of the package's value.  Its values are Python ones (int, float, str, list,
  dict, bytes) and dicts tagged ``_type`` for math types and RID: a top-level str is a StringName or
  a NodePath, and a top-level list a packed array, by the header's type id (the package keeps no more);
* encode: the JSON form read into those values and written by ``encode_variant``, which takes None,
  bool, int, float, str, list, dict and bytes.  A type it has no value for is refused, naming it.
"""
import json
import math
import struct
import sys

from playgodot.variant import decode_variant, encode_variant

sys.setrecursionlimit(20_000)  # the corpus nests 1025 Arrays deep

PACKED = {29: "PackedByteArray", 30: "PackedInt32Array", 31: "PackedInt64Array", 32: "PackedFloat32Array",
          33: "PackedFloat64Array", 34: "PackedStringArray", 35: "PackedVector2Array", 36: "PackedVector3Array",
          37: "PackedColorArray", 38: "PackedVector4Array"}
TAGGED = {"Vector2": "xy", "Vector2i": "xy", "Vector3": "xyz", "Vector3i": "xyz", "Color": "rgba"}


def float_text(x):
    if math.isnan(x):
        return "nan"
    return "inf" if x == math.inf else "-inf" if x == -math.inf else repr(x)


def arg(x):
    """A number of "args": a JSON number, or the form's text for what JSON cannot hold."""
    return x if isinstance(x, int) or math.isfinite(x) else float_text(x)


def to_form(v, type_id=None):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return f"i:{v}"
    if isinstance(v, float):
        return "f:" + float_text(v)
    if isinstance(v, str):
        return {21: "sn:", 22: "np:"}.get(type_id, "s:") + v
    if isinstance(v, bytes):
        return {"type": "PackedByteArray", "args": list(v)}
    if isinstance(v, list):
        if type_id in PACKED:
            return {"type": PACKED[type_id], "args": [arg(x) if not isinstance(x, str) else x for x in v]}
        return [to_form(x) for x in v]
    tag = v.get("_type")
    if tag in TAGGED:
        return {"type": tag, "args": [arg(v[c]) for c in TAGGED[tag]]}
    if tag == "RID" and set(v) == {"_type", "id"}:
        return {"type": "RID", "id": v["id"]}
    return {"type": "Dictionary", "args": [x for k, val in v.items() for x in (to_form(k), to_form(val))]}


def from_form(node):
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, str):
        kind, _, body = node.partition(":")
        if kind == "i":
            return int(body)
        if kind == "f":
            return float(body)
        if kind == "s":
            return body
        raise ValueError(f"the package has no value for {'StringName' if kind == 'sn' else 'NodePath'} {body!r}")
    if isinstance(node, list):
        return [from_form(x) for x in node]
    name = node.get("type")
    if name == "Dictionary" and "key_type" not in node:
        args = node["args"]
        return {from_form(args[k]): from_form(args[k + 1]) for k in range(0, len(args), 2)}
    if name == "PackedByteArray" and "args" in node:
        return bytes(node["args"])
    typed = " (typed)" if "key_type" in node or "elem_type" in node else ""
    raise ValueError(f"the package has no value for {name}{typed}")


def answer(request):
    op = request["op"]
    if op == "operations":
        return {"operations": ["roundtrip", "decode", "encode"]}
    if op == "encode":
        return {"hex": encode_variant(from_form(request["json"])).hex()}
    data = bytes.fromhex(request["hex"])
    value, _ = decode_variant(data)
    if op == "decode":
        type_id = struct.unpack_from("<I", data)[0] & 0xFF if len(data) >= 4 else None
        return {"json": to_form(value, type_id)}
    if op == "roundtrip":
        return {"hex": encode_variant(value).hex()}
    raise ValueError(f"unknown op {op!r}")


for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = answer(request)
    except Exception as e:  # the package raises what it raises (struct.error, ValueError, TypeError ...)
        reply = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps({"id": request["id"], **reply}), flush=True)
