"""``godot-formats detect FILE...``: which engine version wrote each file, ranked.

Prints, per file, a one-line verdict (the best dialect, or ``ambiguous`` with the
readings that fit equally well, or ``damaged`` with the record and byte where the
most plausible reading breaks) and the candidates under it.  The file is read once,
as ``gf.open`` and every command read it (:mod:`godot_formats.reading`).  Exit status 1
when some file is damaged, not binary, or cannot be read at all (a file that cannot
be opened gets one line on standard error, ``godot-formats detect: FILE: reason``);
the other files are still inspected.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import attrs

from ..core.dialects import get_dialect
from ..core.errors import (
    AmbiguousDialectError,
    DamagedFileError,
    DecodeError,
    GodotFormatsError,
    NotBinaryError,
    NotRegularFileError,
)
from ..saves.detection import Candidate, detect, is_ambiguous
from .common import EXIT_BAD_INPUT, internal_error, one_line, printable, read_input


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


@attrs.define
class DetectVerdict:
    """What ``detect`` says of one file: the verdict, its layers (as data and in words), the ranked
    readings of the bytes inside them, and whether the file fails (exit status 1)."""

    verdict: str
    info: dict[str, Any]
    words: str
    candidates: list[Candidate]
    failed: bool = False


def examine(data: bytes, args: argparse.Namespace) -> DetectVerdict:
    """The one reading of a file (:mod:`godot_formats.reading`, as every command makes it), in words."""
    from ..saves.reading import LAYER_BY_NAME, peel, read_peeled
    from ..saves.savefile import SaveFile
    from .common import credentials, describe_layers, kind_of_input, located

    own = VERDICTS.get(kind_of_input(data, args))  # the kind, as gf.open tells it (an encrypted ConfigFile too)
    if own is not None:
        return own(data, args)
    password, key = credentials(args)
    try:
        peeled = peel(data, password=password, key=key)
    except DecodeError as e:  # an encrypted file without its password, a damaged layer
        message = one_line(located(e))
        return DetectVerdict(f"unknown (cannot look inside: {message})", {"error": message},
                       f"cannot look inside: {message}", [], True)
    info: dict[str, Any] = {name: getattr(layer, "mode_name", None) or f"godot{layer.version}"
                            for name, layer in peeled.infos.items()}
    outside = [LAYER_BY_NAME[name].describe(layer) for name, layer in peeled.infos.items()]
    try:
        reading = read_peeled(peeled, allow_objects=True, thorough=True)
    except AmbiguousDialectError as e:
        words = ", ".join(outside + ["the dialect (and so the framing) depends on the reading"])
        return DetectVerdict(verdict(e.ranked) if e.ranked else f"ambiguous: {' | '.join(e.candidates)}", info, words,
                       e.ranked)
    except NotBinaryError as e:
        if e.kind in VERDICTS:  # another kind of file (godot_formats.documents.KINDS): its own verdict
            return VERDICTS[e.kind](data, args)
        return DetectVerdict(f"not binary: {one_line(located(e))}", info, ", ".join(outside) or "none", [], True)
    except DecodeError as e:
        ranked = e.ranked if isinstance(e, DamagedFileError) else []
        message = one_line(located(e))
        kind = "not binary" if isinstance(e, NotBinaryError) else "unknown (no engine dialect reads it completely)" \
            if isinstance(e, DamagedFileError) and e.explained == 0 else "damaged"
        return DetectVerdict(f"{kind}: {message}", info, ", ".join(outside) or "none", ranked, True)
    sf = SaveFile.from_reading(reading, allow_objects=True)
    info.update(sf.layers)
    info["read"] = True
    said = verdict(reading.candidates) if reading.candidates else reading.dialect.name
    return DetectVerdict(said, info, describe_layers(sf), reading.candidates)


def _resource_verdict(data: bytes, args: argparse.Namespace) -> DetectVerdict:
    """A resource save: its engine and format, as its header says (godot_formats.resources)."""
    from ..documents import open as open_document
    from ..layers.magic import SCENE_NOT_READ, resource_form
    from .common import located

    info: dict[str, Any] = {}
    try:
        rf = open_document(data, kind="resource")
    except DecodeError as e:
        if resource_form(data) == "scene":  # told by the door as a resource, refused by name
            return DetectVerdict(f"not binary: {SCENE_NOT_READ}", info, "none", [], True)
        message = one_line(located(e))
        return DetectVerdict(f"damaged resource file: {message}", info, "none", [], True)
    said = (f"resource: Godot {rf.engine} {rf.format} format {rf.version}"
            f"{' (' + rf.compression + ')' if rf.compression else ''}{', big-endian' if rf.byteorder == 'big' else ''}")
    info.update(resource={"engine": rf.engine, "format": rf.format, "version": rf.version,
                          "compression": rf.compression, "byteorder": rf.byteorder, "type": rf.main.type})
    holds = (f"a {rf.main.type} with {len(rf.resources)} sub-resource(s) and {len(rf.external)} external "
             "reference(s) (`godot-formats scan` checks it for code)")
    return DetectVerdict(said, info, holds, [])


def _config_verdict(data: bytes, args: argparse.Namespace) -> DetectVerdict:
    """ConfigFile text, plain or encrypted (``save_encrypted_pass``): the engine version that wrote it and
    why, its encryption, its sections; a damaged one names its line and column."""
    from ..configfile import read_config
    from .common import config_layers, config_told, credentials, located

    password, key = credentials(args)
    try:
        doc = read_config(data, password=password, key=key, salvage=True)  # a damaged one still says its version
    except DecodeError as e:  # the encryption layer
        message = one_line(located(e))
        return DetectVerdict(f"unknown (cannot look inside: {message})", {"error": message},
                             f"cannot look inside: {message}", [], True)
    info: dict[str, Any] = dict(doc.layers)
    info["why"] = doc.why
    holds = (f"{config_layers(doc)}: {info['sections']} section(s), {info['keys']} key(s)"
             f"{' before the damage' if doc.damage is not None else ''}; {doc.why}")
    if doc.damage is not None:
        return DetectVerdict(config_told(doc.damage), info, holds, [], True)
    return DetectVerdict(f"ConfigFile text: {doc.dialect.name}", info, holds, [])


#: The verdicts of the kinds that are not saves (:data:`godot_formats.documents.KINDS`; the save's is the
#: rest of :func:`examine`): one row per kind that ``detect`` describes its own way, asked before the
#: save's reading (and for what the save reader names instead of reading: its ``NotBinaryError.kind``).
VERDICTS: dict[str, Callable[[bytes, argparse.Namespace], DetectVerdict]] = {"resource": _resource_verdict,
                                                                              "configfile": _config_verdict}


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
            data = read_input(path)  # the one bounded read: never a FIFO, never past max_size
            found = examine(data, args)
            if args.documented:  # the documentation pages' readings too: a listing of its own
                from ..saves.reading import peel
                from .common import credentials
                password, key = credentials(args)
                found.candidates = detect(peel(data, password=password, key=key).data, include_documented=True)
        except Exception as e:  # this file fails with one line; the others are still inspected
            if isinstance(e, OSError):
                reason = e.strerror or one_line(e)
            elif isinstance(e, NotRegularFileError):
                reason = e.reason  # the line names the file already
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
        if found.failed:
            status = EXIT_BAD_INPUT
        candidates = found.candidates
        shown = [c for c in candidates if args.all or c.confidence > 0]
        if args.json:
            print(json.dumps({
                "file": _json_name(path), "size": len(data), "verdict": found.verdict,
                "layers": found.info,
                "ambiguous": is_ambiguous(candidates),
                "candidates": [{"dialect": c.dialect, "confidence": c.confidence, "complete": c.complete,
                                "framed": c.framed, "ambiguous": c.ambiguous, "reason": c.reason} for c in shown],
            }, ensure_ascii=False))
            continue
        print(printable(f"{path}: {found.verdict}"))
        print(printable(f"  layers: {found.words}"))
        for c in shown:
            flags = ",".join(f for f, on in (("complete", c.complete), ("framed", c.framed),
                                              ("ambiguous", c.ambiguous)) if on) or "-"
            print(f"  {c.dialect:<20} {c.confidence:5.3f}  {flags:<26} {c.reason}")
    sys.stdout.flush()
    return status
