"""``godot-formats detect FILE...``: which engine version wrote each file, ranked.

Prints, per file, a one-line verdict (the best dialect, or ``ambiguous`` with the
readings that fit equally well) and the candidates under it.  Exit status 1 when
some file cannot be read completely by any engine dialect, or cannot be read at all:
such a file gets one line on standard error (``godot-formats detect: FILE: reason``)
and the other files are still inspected.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..detection import Candidate, detect, is_ambiguous
from ..dialects import get_dialect
from ..errors import GodotFormatsError
from ..tool import EXIT_BAD_INPUT, internal_error, one_line, printable, read_input


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "detect", help="guess which engine version (dialect) wrote a file",
        description="Try every engine dialect on each file (raw var_to_bytes data, or store_var/put_var "
                    "records with their length prefix) and rank the dialects that read it. Bytes that "
                    "several versions write identically are reported as ambiguous, not guessed.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to inspect ('-' for standard input)")
    parser.add_argument("--documented", action="store_true",
                        help="also try the documented dialects (docs-*), which follow documentation pages")
    parser.add_argument("--all", action="store_true", help="also list the dialects that cannot read the file")
    parser.add_argument("--json", action="store_true", help="one JSON object per file on standard output")
    from .common import add_password_options

    add_password_options(parser)
    parser.set_defaults(func=run)


def layers(data: bytes, args: argparse.Namespace) -> tuple[dict[str, Any], str, bytes]:
    """The layers of a file (container, encryption, compression, framing), in words, and the bytes
    inside them (what the dialects are detected on)."""
    from ..savefile import AmbiguousDialectError
    from .common import describe_layers, open_save, peel

    info: dict[str, Any] = {}
    try:
        peeled = peel(data, args)
    except GodotFormatsError as e:  # an encrypted file without its password, a damaged layer
        return {"error": one_line(e)}, f"cannot look inside: {one_line(e)}", b""
    if peeled.encryption is not None:
        info["encryption"] = f"godot{peeled.encryption.version}"
    if peeled.compression is not None:
        info["compression"] = peeled.compression.mode_name
    if peeled.base64:
        info["base64"] = True
    try:
        sf = open_save(data, args, allow_objects=True)
    except AmbiguousDialectError:
        words = ", ".join(peeled.layers + ["the framing depends on the dialect (ambiguous)"])
        return info, words, peeled.data
    except GodotFormatsError as e:
        return info, ", ".join(peeled.layers + [f"not readable: {one_line(e)}"]), peeled.data
    info.update(sf.layers)
    info["read"] = True
    return info, describe_layers(sf), peeled.data


def verdict(candidates: list[Candidate]) -> str:
    """The one-line answer: a dialect, ``ambiguous: a | b``, or ``unknown``."""
    if not candidates or not candidates[0].complete:
        return "unknown (no engine dialect reads it completely)"
    best = candidates[0]
    framing = " (store_var framed)" if best.framed else ""
    if is_ambiguous(candidates):
        readings: dict[tuple[int, bool], str] = {}  # the best dialect of each equally good reading
        for c in candidates:
            if c.ambiguous:
                label = c.dialect + (" (store_var framed)" if c.framed else "")
                readings.setdefault((get_dialect(c.dialect).major, c.framed), label)
        return "ambiguous: " + " | ".join(readings.values())
    return best.dialect + framing


def _json_name(path: str) -> str:
    """A file name as JSON can hold it: bytes that are not UTF-8 written ``\\xff``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            data = read_input(path)
            layer_info, layer_words, inner = layers(data, args)
            candidates = detect(inner, include_documented=args.documented) if inner else []
        except Exception as e:  # this file fails with one line; the others are still inspected
            if isinstance(e, OSError):
                reason = e.strerror or one_line(e)
            elif isinstance(e, GodotFormatsError):
                reason = one_line(e)
            else:
                reason = internal_error(e)
            sys.stdout.flush()
            print(printable(f"godot-formats detect: {path}: {reason}"), file=sys.stderr)
            if args.json:
                print(json.dumps({"file": _json_name(path), "error": reason}, ensure_ascii=False))
            status = EXIT_BAD_INPUT
            continue
        said = verdict(candidates)
        if (not candidates or not candidates[0].complete) and layer_info.get("read"):
            # Read through its layers (big-endian lengths, slack, project settings) though no bare
            # dialect reads the bytes: the reading gf.open makes.
            said = f"{layer_info['dialect']} (read through its layers)"
        elif not candidates or not candidates[0].complete:
            status = EXIT_BAD_INPUT
        shown = [c for c in candidates if args.all or c.confidence > 0]
        if args.json:
            print(json.dumps({
                "file": _json_name(path), "size": len(data), "verdict": said,
                "layers": layer_info,
                "ambiguous": is_ambiguous(candidates),
                "candidates": [{"dialect": c.dialect, "confidence": c.confidence, "complete": c.complete,
                                "framed": c.framed, "ambiguous": c.ambiguous, "reason": c.reason} for c in shown],
            }, ensure_ascii=False))
            continue
        print(printable(f"{path}: {said}"))
        print(printable(f"  layers: {layer_words}"))
        for c in shown:
            flags = ",".join(f for f, on in (("complete", c.complete), ("framed", c.framed),
                                              ("ambiguous", c.ambiguous)) if on) or "-"
            print(f"  {c.dialect:<20} {c.confidence:5.3f}  {flags:<26} {c.reason}")
    sys.stdout.flush()
    return status
