#!/usr/bin/env python3
"""Build the conformance corpus shipped in the package (godot_formats/conformance/corpus/) from fixtures/.

    python3 scripts/make_conformance_corpus.py           # (re)write godot3.jsonl and godot4.jsonl
    python3 scripts/make_conformance_corpus.py --check   # exit 1 if the shipped files are out of date

Every expected answer is the engine's: nothing here comes from our encoder, which is only used to find
which bytes of an engine encoding are NodePath name padding (uninitialised memory in both engine builds,
godot#44999), recorded as ``mask`` ranges the judge ignores.

Two kinds of case, one JSON object a line (docs/conformance.md has the fields):

* ``expect: "same"``: every value the engine wrote (``fixtures/<engine>/encode.jsonl``: ``hex``, and
  ``hex_full_objects`` with ``objects: true``; the framed ``raw`` captures are left out): decoding and
  encoding again must give the engine's bytes back.  ``json`` is that value in the library's lossless
  JSON form, what a ``decode`` must answer and what an ``encode`` is given.  It is the engine's bytes
  as our decoder reads them, and is checked here against the engine itself: written as Godot text it
  must be the engine's own ``var_to_str``/``var2str`` of the value (every case but those holding an
  Object, whose engine text is of the live Object, not of what the bytes hold), and encoded
  again it must be the engine's bytes.  A value that fails either check stops the build.
* ``expect: "error"``: every input the engine refused (``malformed.jsonl``, ``hostile_counts.jsonl``,
  ``deep_dictionary_keys.jsonl``), decided from the engine's record as tests/hostile/test_malformed.py
  ``engine_verdict`` does, except the few refusals that depend on the engine's live state (its class
  database, the project's scripts) rather than on the bytes: ``STATEFUL_REFUSALS``.

Inputs the engine accepted but re-encoded differently (non-canonical bytes) and inputs Godot 3.2.3 crashed
on are not in the corpus: see docs/conformance.md, "What the corpus holds".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT / "godot_formats" / "conformance" / "corpus"
DIALECTS = ("godot3", "godot4")
REFUSAL_SOURCES = ("malformed", "hostile_counts", "deep_dictionary_keys")

#: Refusals that depend on the engine's class database or on res:// scripts, not on the bytes.
STATEFUL_REFUSALS = {
    ("godot3", "malformed", "bad_object_unknown_class"): "the class is not in the engine's ClassDB",
    ("godot4", "malformed", "object_full_unknown_class"): "the class is not in the engine's ClassDB",
    ("godot4", "malformed", "object_full_abstract_class"): "the engine cannot instantiate an abstract class",
    ("godot4", "malformed", "object_full_script_missing"): "the engine loads the res:// script the Object names",
    ("godot4", "malformed", "typed_array_script_missing"): "the engine loads the res:// script the Array names",
}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def refused(engine: str, case: dict[str, Any]) -> bool:
    """Whether the engine refused the input (returned no value), from its record only."""
    if case.get("engine_exit") is not None or case.get("crashed"):
        return False  # no verdict: Godot 3.2.3 overflowed its stack
    if case["ok"]:
        return False
    if engine == "godot3":
        return "hex" not in case and any("ERROR" in line for line in case.get("errors") or [])
    decode_errors = (case.get("errors") or {}).get("decode", [])
    return bool(case["type_name"] == "Nil" and any("ERROR" in line for line in decode_errors))


def engine_errors(engine: str, case: dict[str, Any]) -> str:
    errors = case.get("errors") or []
    lines = errors if isinstance(errors, list) else errors.get("decode", [])
    found = [line.strip() for line in lines if "ERROR" in line]
    return "\n".join(found[:2])


def header_type(data: bytes) -> int | None:
    return data[0] if len(data) >= 4 else None


def padding_ranges(data: bytes, dialect: str, objects: bool) -> list[list[int]]:
    """[start, end) ranges of NodePath name padding, found as tests/conftest.py node_path_pad_mask does:
    our encoding of the decoded value, written with two different padding bytes."""
    import godot_formats as gf
    from godot_formats.core.codec import Encoder

    class Marked(Encoder):
        node_path_padding = b"\xff"

    d = gf.get_dialect(dialect)
    value = gf.loads(data, d, allow_objects=objects)
    plain = Encoder(d, full_objects=objects).encode(value)
    marked = Marked(d, full_objects=objects).encode(value)
    ranges: list[list[int]] = []
    for i, (a, b) in enumerate(zip(plain, marked)):
        if a != b:
            if ranges and ranges[-1][1] == i:
                ranges[-1][1] = i + 1
            else:
                ranges.append([i, i + 1])
    return ranges


def holds_object(json_text: str) -> bool:
    """Whether a value holds an Object (full, or written as its id): the engine's text of it is of the
    live Object (properties the bytes do not carry, or the Object an id stands for)."""
    return '"props":' in json_text or '"EncodedObjectAsID"' in json_text


def engine_json(data: bytes, dialect: str, objects: bool, engine_text: str, mask: list[list[int]]) -> str:
    """The value of the engine's bytes in the lossless JSON form (compact), checked against the engine:
    its text is the engine's text of the value, and it encodes back to the engine's bytes."""
    import godot_formats as gf
    from godot_formats.views.jsonform import dumps_json, loads_json

    text = dumps_json(gf.loads(data, dialect, allow_objects=objects), indent=None)
    value = loads_json(text)
    again = gf.dumps(value, dialect, allow_objects=objects)
    masked = {i for a, b in mask for i in range(a, b)}
    if len(again) != len(data) or any(x != y and i not in masked for i, (x, y) in enumerate(zip(again, data))):
        raise SystemExit(f"{dialect}: the JSON form {text[:200]} does not encode back to the engine's bytes")
    if not holds_object(text) and gf.to_text(value, dialect) != engine_text:
        raise SystemExit(f"{dialect}: the JSON form {text[:200]} is not the value the engine printed as "
                         f"{engine_text[:200]!r}")
    return text


def build(dialect: str) -> list[dict[str, Any]]:
    encode = read_jsonl(FIXTURES / dialect / "encode.jsonl")
    text_key = "var2str" if dialect == "godot3" else "var_to_str"
    # The engine's own name for each type id, from the values it wrote.
    names = {c["type"]: c["type_name"] for c in encode
             if c.get("hex") and header_type(bytes.fromhex(c["hex"])) == c["type"]}

    def name_of(type_id: int | None) -> str:
        if type_id is None:
            return "(no header)"
        return str(names.get(type_id, "(not a type)"))

    out: list[dict[str, Any]] = []
    for c in encode:
        if c.get("raw"):
            continue
        for key, objects, suffix in (("hex", False, ""), ("hex_full_objects", True, "/full_objects")):
            if not c.get(key):
                continue
            data = bytes.fromhex(c[key])
            t = header_type(data)
            mask = padding_ranges(data, dialect, objects)
            engine = c.get(text_key, "")
            out.append({"case": f"encode:{c['name']}{suffix}", "dialect": dialect, "type": t, "type_name": name_of(t),
                        "objects": objects, "expect": "same", "hex": c[key], "engine": engine, "mask": mask,
                        "json": engine_json(data, dialect, objects, engine, mask)})
    for kind in REFUSAL_SOURCES:
        for c in read_jsonl(FIXTURES / dialect / f"{kind}.jsonl"):
            if not refused(dialect, c) or (dialect, kind, c["name"]) in STATEFUL_REFUSALS:
                continue
            t = header_type(bytes.fromhex(c["in_hex"]))
            out.append({"case": f"{kind}:{c['name']}", "dialect": dialect, "type": t, "type_name": name_of(t),
                        "objects": bool(c.get("allow_objects")), "expect": "error", "hex": c["in_hex"],
                        "engine": engine_errors(dialect, c), "mask": []})
    return out


def render(cases: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(c, separators=(",", ":")) + "\n" for c in cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped corpus is up to date")
    args = parser.parse_args(argv)
    stale = []
    for dialect in DIALECTS:
        text = render(build(dialect))
        path = CORPUS / f"{dialect}.jsonl"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: {text.count(chr(10))} cases, {len(text)} bytes")
    if stale:
        print(f"out of date (run python3 scripts/make_conformance_corpus.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
