"""``godot-formats load FILE -o OUT``: turn edited JSON (or Godot text) back into Variant bytes.

The inverse of ``godot-formats dump --json`` (and of ``dump``'s Godot text):
JSON in our lossless form or the engine's ``JSON.from_native`` form, one
document per value, or Godot's ``var_to_str`` text.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.dialects import get_dialect
from ..core.errors import EncodeError, GodotFormatsError
from .common import add_dialect_option, read_input, told

FORMATS = ("auto", "json", "text")
EXTENSIONS = {".json": "json", ".txt": "text", ".tres": "text", ".var": "text"}

EPILOG = """\
examples:
  godot-formats dump save.dat --json > save.json      (edit save.json)
  godot-formats load save.json -o new.dat             the same layers, framing and dialect as save.dat
  godot-formats load save.json -o save.dat --overwrite --password hunter2
  godot-formats load value.txt --dialect godot3 -o blob.bin
  echo '{"type": "Vector2", "args": [1, 2]}' | godot-formats load - --hex

The first JSON document, or the first line of the text, that 'godot-formats dump'
writes records the layers of the file it read (encryption, compression,
store_var framing, byte order, dialect): load writes the file back with them,
byte for byte when nothing was edited.  An encrypted file needs its password
(--password, --key or GODOT_FORMATS_PASSWORD).  Without such a header the
values are written raw, or as store_var records with --framing store_var.

--from auto reads .json files as JSON and .txt/.tres files as Godot text; for
other names (and standard input) text that starts like JSON ({, [ or ") is JSON,
and an error there is an error, never read again as Godot text.  -o never
replaces an existing file without --overwrite.
"""


def add_parser(subparsers: Any) -> None:
    from .common import add_password_options

    parser = subparsers.add_parser(
        "load", help="turn edited JSON or Godot text back into Variant bytes",
        description="Encode values written as JSON (godot-formats dump --json, or Godot 4's "
                    "JSON.from_native shape) or as Godot text (var_to_str) into the binary Variant format "
                    "of one engine version, with the layers (encryption, compression, framing) that the "
                    "header written by 'godot-formats dump' records.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="JSON or Godot text ('-' for standard input)")
    add_dialect_option(parser, allow_auto=False, default="", help_default="the header's, else godot4")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write the bytes ('-' for standard output)")
    parser.add_argument("--overwrite", action="store_true", help="allow -o to replace an existing file")
    parser.add_argument("--from", dest="source_format", choices=FORMATS, default="auto",
                        help="input format (default: %(default)s: by file extension, else by its first character)")
    parser.add_argument("--framing", choices=("none", "store_var"), default=None,
                        help="without a header: store_var puts a u32 length before each value, as "
                             "FileAccess.store_var does (default: none)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="write full Objects (class name and properties), as var_to_bytes_with_objects")
    parser.add_argument("--hex", action="store_true", help="print the bytes as hex instead of writing them")
    add_password_options(parser)
    parser.set_defaults(func=run)


def _text_value(text: str, dialect: str) -> Any:
    from ..views.text import from_text

    return from_text(text, dialect)


def _decode_text(raw: bytes) -> str:
    from .common import CONFIG_HEADER

    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if raw.lstrip(b"\xef\xbb\xbf").startswith(CONFIG_HEADER.encode()):
            # A ConfigFile's own text: its bytes that are not UTF-8 are the file's, kept as they were.
            return raw.decode("utf-8", "surrogateescape").lstrip("\ufeff")
        raise GodotFormatsError(f"the input is not UTF-8 text (byte {e.start}); load reads JSON or Godot text, "
                                "dump and explain read binary files") from None


def _format(text: str, source_format: str, name: str) -> str:
    from .common import TEXT_HEADER, looks_like_json

    fmt = source_format
    if fmt == "auto" and name and name != "-":
        fmt = EXTENSIONS.get(Path(name).suffix.lower(), "auto")
    if fmt == "auto":
        if text.lstrip("\ufeff").startswith(TEXT_HEADER):
            return "text"
        return "json" if looks_like_json(text) else "text"
    return fmt


def parse_view(raw: bytes, source_format: str, dialect: str, name: str = "") -> tuple[dict[str, Any] | None,
                                                                                     list[Any]]:
    """The header (or None) and the values of a JSON or text view."""
    from .common import json_documents, split_text_header, text_values

    text = _decode_text(raw)
    fmt = _format(text, source_format, name)
    if fmt == "json":
        try:
            return json_documents(text)
        except GodotFormatsError as e:
            hint = "" if source_format == "json" or Path(name).suffix.lower() == ".json" else \
                " (Godot text? give --from text)"
            raise GodotFormatsError(f"{e}{hint}") from None
    header, text = split_text_header(text)
    d = dialect or (header or {}).get("dialect") or "godot4"
    return header, text_values(text, d, (header or {}).get("records"))


def parse_values(raw: bytes, source_format: str, dialect: str, name: str = "") -> list[Any]:
    """The values in ``raw``: JSON documents, or Godot text values (a header, if any, is left out)."""
    return parse_view(raw, source_format, dialect, name)[1]


def encode_values(values: list[Any], dialect: str, framing: str, full_objects: bool) -> bytes:
    from ..api import dumps

    if len(values) > 1 and framing != "store_var":
        raise GodotFormatsError(f"{len(values)} values: give --framing store_var to write them as store_var "
                                "records (one value per record)")
    if not values:
        raise GodotFormatsError("no value in the input")
    blobs = []
    for i, v in enumerate(values):
        try:
            blobs.append(dumps(v, dialect, allow_objects=full_objects))
        except EncodeError as e:
            where = f"record {i + 1}: " if len(values) > 1 else ""  # from 1, as dump and set --record count
            numbered = EncodeError(path=e.path, **e.reason_in(where))  # the record named, the remedy kept
            raise EncodeError(told(numbered)) from None
    if framing == "store_var":
        from ..saves.detection import frame_store_var

        return frame_store_var(blobs)
    return blobs[0]


def save_bytes(header: dict[str, Any], values: list[Any], args: argparse.Namespace) -> bytes:
    """The file a header describes, holding ``values``."""
    from ..saves.savefile import SaveFile
    from .common import credentials

    container = header.get("container")
    if container != "store_var" and len(values) != 1:
        raise GodotFormatsError(f"the header says {container} (one value), the input holds {len(values)}")
    if args.dialect and header.get("dialect") and get_dialect(args.dialect) != get_dialect(header["dialect"]):
        raise GodotFormatsError(f"the header says {header['dialect']}, --dialect says {args.dialect}; "
                                "use 'godot-formats convert' to move a save to another engine version")
    if args.framing is not None and (args.framing == "store_var") != (container == "store_var"):
        raise GodotFormatsError(f"the header says {container}; leave out --framing {args.framing}")
    password, key = credentials(args)
    sf = SaveFile.from_header(header, values, password=password, key=key, allow_objects=args.allow_objects)
    try:
        data = sf.to_bytes()
    except EncodeError as e:  # what would help (--password, --allow-objects) is the error's remedy
        raise EncodeError(told(e)) from None
    return data


def config_view(raw: bytes, args: argparse.Namespace) -> bytes | None:
    """The ConfigFile a view of ``dump`` describes (its text under the header line, or the JSON document
    of its sections), written back with its encryption; None for the view of a save."""
    import json

    from .common import CONFIG_HEADER, CONFIG_KEY, config_file_bytes, looks_like_json

    text = _decode_text(raw).lstrip("\ufeff")
    if text.startswith(CONFIG_HEADER) and args.source_format != "json":
        first, _, body = text.partition("\n")
        try:
            header = json.loads(first[len(CONFIG_HEADER):])
        except json.JSONDecodeError as e:
            raise GodotFormatsError(f"line 1: the configfile header is not valid JSON ({e.msg})") from None
        if not isinstance(header, dict) or header.get(CONFIG_KEY) != 1:
            raise GodotFormatsError("line 1: not a godot-formats configfile header (version 1)")
        if header.get("newline_added") and body.endswith("\n"):
            body = body[:-1]
        return config_file_bytes(body, _given_dialect(header, args), args, shown=text)  # the header: a comment
    if args.source_format == "text" or not looks_like_json(text) or CONFIG_KEY not in text[:200]:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None  # not one document: the JSON of a save (its errors are parse_view's to say)
    if not isinstance(doc, dict) or doc.get(CONFIG_KEY) != 1:
        return None
    return config_file_bytes(_sections_text(doc), _given_dialect(doc, args), args)


def _given_dialect(header: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The header, its dialect checked against ``--dialect`` (a view is written back as it was read)."""
    if args.dialect and header.get("dialect") and get_dialect(args.dialect) != get_dialect(header["dialect"]):
        raise GodotFormatsError(f"the header says {header['dialect']}, --dialect says {args.dialect}; "
                                "use 'godot-formats convert' to move a ConfigFile to another engine version")
    return header


def _sections_text(doc: dict[str, Any]) -> str:
    """The text the engine's ConfigFile.save writes for the sections of a JSON view."""
    from ..configfile import encode_to_text
    from ..resources.model import ExtResource
    from ..views.jsonform import JSONFormatError, from_json

    def reference(obj: dict[str, Any], path: str) -> Any:  # a Resource("path") of the text
        if obj.get("type") == "ExtResource" and isinstance(obj.get("path"), str):
            return ExtResource(str(obj.get("class") or "Resource"), obj["path"])
        raise JSONFormatError(f"a {obj.get('type')} has no place in a ConfigFile", path)

    sections = doc.get("sections")
    if not isinstance(sections, dict) or not all(isinstance(keys, dict) for keys in sections.values()):
        raise GodotFormatsError('a ConfigFile\'s JSON needs "sections": {section: {key: value}}')
    values = {name: {key: from_json(v, object_hook=reference) for key, v in keys.items()}
              for name, keys in sections.items()}
    dialect = doc.get("dialect") or "godot4"
    try:
        return encode_to_text(values, dialect)
    except EncodeError as e:
        raise EncodeError(told(e)) from None


def run(args: argparse.Namespace) -> int:
    from .common import refuse_existing, write_output

    if args.output not in (None, "-") and not args.hex:
        refuse_existing(args.output, args.overwrite)  # before any work, and before a password is asked for
    raw = read_input(args.file)  # the one bounded read: never a FIFO, never past max_size
    config = config_view(raw, args)
    if config is not None:  # a ConfigFile's view: the file is text again, not Variant bytes
        write_output(config, args.output, args.overwrite, hex_out=args.hex)
        return 0
    header, values = parse_view(raw, args.source_format, args.dialect, args.file)
    if header is not None:
        out = save_bytes(header, values, args)
    else:
        out = encode_values(values, args.dialect or "godot4", args.framing or "none", args.allow_objects)
    write_output(out, args.output, args.overwrite, hex_out=args.hex)
    return 0
