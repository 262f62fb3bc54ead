#!/usr/bin/env python3
"""A conformance adapter built on godot_formats (docs/conformance.md):
    godot-formats conformance -- python3 examples/conformance_adapter.py
With ``--as DIALECT`` it reads and writes every request in that dialect instead of the one asked
(``--as docs-godot4``: what an implementation of the documentation page gets)."""
import json
import sys

import godot_formats as gf

forced = sys.argv[2] if sys.argv[1:2] == ["--as"] else None

for line in sys.stdin:
    request = json.loads(line)
    dialect, objects = forced or request["dialect"], request.get("objects", False)
    try:
        if request.get("op") != "roundtrip":
            raise ValueError(f"unknown op {request.get('op')!r}")
        value = gf.loads(bytes.fromhex(request["hex"]), dialect, allow_objects=objects)
        answer = {"hex": gf.dumps(value, dialect, full_objects=objects).hex()}
    except (gf.GodotFormatsError, ValueError) as e:
        answer = {"error": str(e)}
    print(json.dumps({"id": request["id"], **answer}), flush=True)
