"""``godot-formats load FILE -o OUT``: turn edited JSON (or Godot text) back into Variant bytes.

The inverse of ``godot-formats dump --json`` (and of ``dump``'s Godot text):
JSON in our lossless form or the engine's ``JSON.from_native`` form, one
document per value, or Godot's ``var_to_str`` text.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import EncodeError, GodotFormatsError
from ..tool import add_dialect_option, read_input, write_atomic

FORMATS = ("auto", "json", "text")
EXTENSIONS = {".json": "json", ".txt": "text", ".tres": "text", ".var": "text"}

EPILOG = """\
examples:
  godot-formats dump save.dat --json > save.json      (edit save.json)
  godot-formats load save.json -o save.dat --framing store_var
  godot-formats load value.txt --dialect godot3 -o blob.bin
  echo '{"type": "Vector2", "args": [1, 2]}' | godot-formats load - --hex

--from auto reads .json files as JSON and .txt/.tres files as Godot text; other
names (and standard input) are tried as JSON first, then as text.  Several JSON
documents in a row (what dump --json prints for a file of several store_var
records) need --framing store_var.
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "load", help="turn edited JSON or Godot text back into Variant bytes",
        description="Encode values written as JSON (godot-formats dump --json, or Godot 4's "
                    "JSON.from_native shape) or as Godot text (var_to_str) into the binary Variant format "
                    "of one engine version.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="JSON or Godot text ('-' for standard input)")
    add_dialect_option(parser, allow_auto=False, default="godot4")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write the bytes ('-' for standard output)")
    parser.add_argument("--from", dest="source_format", choices=FORMATS, default="auto",
                        help="input format (default: %(default)s: by file extension, else JSON then text)")
    parser.add_argument("--framing", choices=("none", "store_var"), default="none",
                        help="store_var: put a u32 length before each value, as FileAccess.store_var does "
                             "(default: %(default)s)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="write full Objects (class name and properties), as var_to_bytes_with_objects")
    parser.add_argument("--hex", action="store_true", help="print the bytes as hex instead of writing them")
    parser.set_defaults(func=run)


def _text_value(text: str, dialect: str) -> Any:
    from ..text import from_text

    return from_text(text, dialect)


def parse_values(raw: bytes, source_format: str, dialect: str, name: str = "") -> list[Any]:
    """The values in ``raw``: JSON documents, or one Godot text value."""
    from ..jsonform import loads_json_documents

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise GodotFormatsError(f"the input is not UTF-8 text (byte {e.start}); load reads JSON or Godot text, "
                                "dump and explain read binary files") from None
    fmt = source_format
    if fmt == "auto":
        fmt = EXTENSIONS.get(Path(name).suffix.lower(), "auto") if name and name != "-" else "auto"
    if fmt == "json":
        return loads_json_documents(text)
    if fmt == "text":
        return [_text_value(text, dialect)]
    try:
        return loads_json_documents(text)
    except GodotFormatsError as json_error:
        try:
            return [_text_value(text, dialect)]
        except GodotFormatsError as text_error:
            raise GodotFormatsError(f"neither JSON ({json_error}) nor Godot text ({text_error})") from None


def encode_values(values: list[Any], dialect: str, framing: str, full_objects: bool) -> bytes:
    from .. import dumps

    if len(values) > 1 and framing != "store_var":
        raise GodotFormatsError(f"{len(values)} values: give --framing store_var to write them as store_var "
                                "records (one value per record)")
    blobs = []
    for i, v in enumerate(values):
        try:
            blobs.append(dumps(v, dialect, full_objects=full_objects))
        except EncodeError as e:
            where = f"value {i}: " if len(values) > 1 else ""
            hint = "; add --allow-objects to write it in full" if "full_objects" in e.reason else ""
            raise EncodeError(f"{where}{e.reason}{hint}", e.path) from None
    if framing == "store_var":
        from ..detect import frame_store_var

        return frame_store_var(blobs)
    return blobs[0]


def run(args: argparse.Namespace) -> int:
    raw = read_input(args.file)
    values = parse_values(raw, args.source_format, args.dialect, args.file)
    out = encode_values(values, args.dialect, args.framing, args.allow_objects)
    if args.hex:
        print(out.hex())
        return 0
    if args.output in (None, "-"):
        if sys.stdout.isatty():
            raise GodotFormatsError("refusing to write binary data to a terminal: give -o FILE (or --hex)")
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
        return 0
    write_atomic(Path(args.output), out)
    return 0
