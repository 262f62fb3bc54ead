#!/usr/bin/env python3
"""A conformance adapter built on godot_formats (docs/conformance.md):
    godot-formats conformance -- python3 examples/conformance_adapter.py
It supports the three operations (roundtrip, decode, encode).  With ``--as DIALECT`` it reads and
writes every request in that dialect instead of the one asked (``--as docs-godot4``: what an
implementation of the documentation page gets); ``--ops decode,encode`` declares fewer operations."""
import json
import sys

import godot_formats as gf
from godot_formats.views.jsonform import dumps_json, from_json

args = sys.argv[1:]
forced = args[args.index("--as") + 1] if "--as" in args else None
ops = args[args.index("--ops") + 1].split(",") if "--ops" in args else ["roundtrip", "decode", "encode"]


def answer(request):
    """The answer's fields, as JSON text (a decoded value may nest deeper than json.dumps goes)."""
    op = request.get("op")
    if op == "operations":
        return '"operations":' + json.dumps(ops)
    dialect, objects = forced or request["dialect"], request.get("objects", False)
    if op not in ops:
        raise ValueError(f"unknown op {op!r}")
    if op == "encode":
        value = from_json(request["json"])
    else:
        value = gf.loads(bytes.fromhex(request["hex"]), dialect, allow_objects=objects)
    if op == "decode":
        return '"json":' + dumps_json(value, indent=None)
    return '"hex":' + json.dumps(gf.dumps(value, dialect, allow_objects=objects).hex())


sys.setrecursionlimit(10_000)  # json.loads of the corpus's deepest value (1025 nested Arrays)
for line in sys.stdin:
    request = json.loads(line)
    try:
        fields = answer(request)
    except (gf.GodotFormatsError, ValueError) as e:
        fields = '"error":' + json.dumps(str(e))
    print('{"id":' + json.dumps(request["id"]) + "," + fields + "}", flush=True)
