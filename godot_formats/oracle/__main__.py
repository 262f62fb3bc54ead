"""Run cases through a real engine and print the records as JSON lines (how fixtures are made).

    python3 -m godot_formats.oracle godot3 encode fixtures/godot3/catalog.json > fixtures/godot3/encode.jsonl
    python3 -m godot_formats.oracle godot4 decode fixtures/godot4/malformed_cases.jsonl \
        > fixtures/godot4/malformed.jsonl
    python3 -m godot_formats.oracle godot4 roundtrip fixtures/godot4/encode.jsonl --catalog fixtures/godot4/catalog.json
    python3 -m godot_formats.oracle godot3 run script.gd
    python3 -m godot_formats.oracle install          # the Godot 4 oracle's npm packages
    python3 -m godot_formats.oracle status           # which engines can run here, and why not

encode CATALOG: ``{"prelude": [...], "files": {...}, "cases": [...]}`` (or a bare list of cases).
decode CASES: JSON lines; a line with ``in_hex`` (a decode record, e.g. a fixture line) is
decoded again from ``in_hex``, any other from ``hex``. ``--catalog`` packs that catalog's
``files`` too (Godot 4: the scripts that encoded objects name by ``res://`` path).
roundtrip RECORDS: every ``hex`` of encode records decoded again, and every
``hex_full_objects`` with objects allowed (as ``NAME/full_objects``).
run SCRIPT: Godot 3 ``extends SceneTree`` / Godot 4 ``extends Node`` script; prints its output.

Records are printed as the fixtures hold them: Godot 3 with ``", "`` and ``": "`` separators,
Godot 4 compact (``--style`` overrides), UTF-8 unescaped unless ``--ascii``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from . import (
    ENGINES,
    OracleError,
    available,
    godot3_decode,
    godot3_encode,
    godot4_decode,
    godot4_encode,
    install,
    oracle_home,
)
from . import godot3 as _g3
from . import godot4 as _g4

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(rec: Any, style: str, ascii_only: bool = False) -> str:
    """One record as a JSON line in the fixtures' style: ``spaced`` (Python's default
    separators) or ``compact`` (Node's ``JSON.stringify``, lone surrogates escaped as it does)."""
    separators = (", ", ": ") if style == "spaced" else (",", ":")
    text = json.dumps(rec, ensure_ascii=ascii_only, separators=separators)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _read_json(path: str) -> Any:
    with (sys.stdin if path == "-" else open(path, encoding="utf-8")) as f:
        return json.load(f)


def _read_lines(path: str) -> list[dict[str, Any]]:
    with (sys.stdin if path == "-" else open(path, encoding="utf-8")) as f:
        return [json.loads(line) for line in f if line.strip()]


def decode_inputs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decode cases from JSON lines: decode records give their ``in_hex`` back."""
    cases = []
    for line in lines:
        case: dict[str, Any] = {k: line[k] for k in ("name", "allow_objects", "note") if k in line}
        case["hex"] = line["in_hex"] if "in_hex" in line else line["hex"]
        cases.append(case)
    return cases


def roundtrip_inputs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``hex`` (plain) and ``hex_full_objects`` (objects allowed) of encode records."""
    cases: list[dict[str, Any]] = []
    for r in records:
        if r.get("raw") or not r.get("hex"):
            continue
        cases.append({"name": r["name"], "hex": r["hex"], "allow_objects": False})
        if r.get("hex_full_objects"):
            cases.append({"name": r["name"] + "/full_objects", "hex": r["hex_full_objects"], "allow_objects": True})
    return cases


def _catalog(data: Any) -> dict[str, Any]:
    return {"cases": data} if isinstance(data, list) else dict(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m godot_formats.oracle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("engine", choices=(*ENGINES, "install", "status"))
    parser.add_argument("mode", nargs="?", choices=("encode", "decode", "roundtrip", "run"))
    parser.add_argument("file", nargs="?", help="catalog, JSON lines or script ('-': stdin)")
    parser.add_argument("--catalog", help="decode/roundtrip: also pack this catalog's files (Godot 4)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="decode: the default for cases without allow_objects")
    parser.add_argument("--style", choices=("spaced", "compact"), help="JSON separators of the records")
    parser.add_argument("--ascii", action="store_true", help="escape non-ASCII characters in the records")
    parser.add_argument("--keep-case-fields", action="store_true",
                        help="encode: add the catalog case's fields that the record lacks (in_hex, note), at its end")
    args = parser.parse_args(argv)
    try:
        if args.engine == "install":
            install()
            return 0
        if args.engine == "status":
            for engine in ENGINES:
                print(f"{engine}: {available(engine) or 'ready'}")
            print(f"oracle home: {oracle_home()}")
            return 0
        if args.mode is None or args.file is None:
            parser.error("give a mode (encode, decode, roundtrip, run) and a file")
        return _run(args)
    except OracleError as e:
        print(f"oracle: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as e:
        print(f"oracle: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    engine, mode = args.engine, args.mode
    if mode == "run":
        reason = available(engine)
        if reason:
            raise OracleError(reason)
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        if engine == "godot3":
            p = _g3.run_raw(text)
            sys.stdout.write(p.stdout)
            sys.stderr.write(p.stderr)
            return 0 if p.returncode == 0 else 1
        r = _g4.run_lines(text)
        sys.stdout.write("".join(line + "\n" for line in r.lines))
        if r.crash:
            print(f"engine stopped: {r.crash}", file=sys.stderr)
        return 1 if r.crash or r.exit else 0
    files = _catalog(_read_json(args.catalog)).get("files") if args.catalog else None
    if mode == "encode":
        catalog = _catalog(_read_json(args.file))
        if engine == "godot3":
            records = godot3_encode(catalog["cases"], catalog.get("prelude", ()))
        else:
            records = godot4_encode(catalog["cases"], catalog.get("prelude", ()), catalog.get("files"))
        if args.keep_case_fields:
            for rec, case in zip(records, catalog["cases"]):
                rec.update({k: v for k, v in case.items() if k not in rec})
    else:
        lines = _read_lines(args.file)
        cases = decode_inputs(lines) if mode == "decode" else roundtrip_inputs(lines)
        if args.allow_objects:
            cases = [{"allow_objects": True, **c} for c in cases]
        records = godot3_decode(cases) if engine == "godot3" else godot4_decode(cases, files)
    style = args.style or ("spaced" if engine == "godot3" else "compact")
    out = sys.stdout
    for rec in records:
        out.write(dumps(rec, style, args.ascii) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
