"""``godot-formats dump FILE``: show a Variant file as Godot text, editable JSON or a tree.

The input options and the choice of dialect and framing are shared with
``explain`` and live in :mod:`godot_formats.commands.common`; the tree view is the library's
(:mod:`godot_formats.views.tree`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..core.dialects import Dialect
from ..core.errors import AmbiguousDialectError, EncodeError, GodotFormatsError
from ..views.tree import describe, tree_lines
from .common import add_input_options, kind_of_input, read_input

EPILOG = """\
examples:
  godot-formats dump save.dat                  Godot text (what var_to_str prints)
  godot-formats dump save.dat --json > s.json  JSON to edit, then: godot-formats load s.json -o new.dat
  godot-formats dump enc.sav --password hunter2   an encrypted save (or set GODOT_FORMATS_PASSWORD)
  godot-formats dump broken.sav --salvage      the intact records of a damaged save
  godot-formats dump save.dat --tree           an indented tree of types and values
  godot-formats dump - --dialect godot3 < blob.bin
  godot-formats dump player.sav --framing store_var --allow-objects

The file is opened through its layers (encrypted, compressed, base64) as
godot_formats.open does.  The first line of the text (a ';' comment, which
Godot's parser skips) or the first JSON document records those layers, so that
'godot-formats load' writes the file back exactly as it was.  A file that
several engine versions read completely, as different values, is refused with
its readings listed: choose one with --dialect.

--framing auto treats the file as store_var records (u32 length + value, as
FileAccess.store_var and StreamPeer.put_var write, either byte order) when the
lengths tile the file; --framing none/store_var decide it yourself.
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dump", help="show a Variant file as Godot text, JSON or a tree",
        description="Decode a file of Godot binary Variant data (var_to_bytes, store_var, put_var) and "
                    "print its value: as Godot's own text (var_to_str) by default, as lossless JSON to "
                    "edit (--json; 'godot-formats load' turns it back into bytes), or as a tree (--tree).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser)
    from .common import add_salvage_option

    add_salvage_option(parser)
    parser.add_argument("--no-header", action="store_true",
                        help="leave out the first line (text) or document (JSON) that records the file's "
                             "layers for 'godot-formats load'")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_const", dest="form", const="json",
                      help="lossless JSON (Godot 4's JSON.from_native shape), one document per value")
    form.add_argument("--tree", action="store_const", dest="form", const="tree", help="an indented tree")
    form.add_argument("--text", action="store_const", dest="form", const="text",
                      help="Godot's text form, as var_to_str / var2str write it (the default)")
    parser.add_argument("--compact", action="store_true", help="with --json: one line per document")
    parser.add_argument("--base64", action="store_true",
                        help="with --json: packed number arrays as base64 instead of number lists")
    parser.add_argument("--max-elements", type=int, default=16, metavar="N",
                        help="with --tree: packed array elements shown per array, 0 for all (default: %(default)s)")
    parser.set_defaults(func=run, form="text")


def render_lines(values: list[Any], d: Dialect, args: argparse.Namespace) -> Iterator[str]:
    """The output of ``dump`` for the decoded values (one per record), a line or a document at a time.

    Text is all made before the first piece is given, so a value the text form
    cannot hold fails before anything is printed.
    """
    if args.form == "json":
        from ..views.jsonform import dumps_json

        for v in values:
            yield dumps_json(v, None if args.compact else 2, packed_base64=args.base64)
        return
    if args.form == "tree":
        limit = args.max_elements or None
        for i, v in enumerate(values):
            if len(values) > 1:
                yield f"record {i + 1} of {len(values)}:"  # from 1, as the text view and set --record count
            yield from tree_lines(v, d, max_elements=limit, indent="  ")
        return
    from ..views.text import to_text

    texts = []
    for v in values:
        try:
            texts.append(to_text(v, d).rstrip("\n"))
        except EncodeError as e:
            raise EncodeError(f"{e} (use --json or --tree)") from None
    yield from texts


def render(values: list[Any], d: Dialect, args: argparse.Namespace) -> str:
    """The output of ``dump`` for the decoded values (one per record)."""
    return "\n".join(render_lines(values, d, args))


def _open(data: bytes, args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The save file (its layers) and its values, as the options ask: one reading (gf.open)."""
    from .common import ambiguity, note_damage, open_save

    try:
        sf = open_save(data, args, dialect=None if args.dialect == "auto" else args.dialect,
                       salvage=args.salvage, framing=args.framing)
    except AmbiguousDialectError as e:
        raise ambiguity(e) from None
    note_damage(sf, "dump")
    return sf, sf.values


def run(args: argparse.Namespace) -> int:
    from .common import TEXT_HEADER, header_of

    data = read_input(args.file)  # the one bounded read: never a FIFO, never past max_size
    show = VIEWS.get(kind_of_input(data, args))  # the kind, as gf.open tells it (godot_formats.documents.KINDS)
    if show is not None:
        return show(data, args)
    sf, values = _open(data, args)
    header = None if args.no_header or args.form == "tree" else header_of(sf)
    if args.form == "text":
        _check_text_keeps(values, sf.dialect)
    out = sys.stdout
    if header is not None:
        if args.form == "json":
            out.write(json.dumps(header, indent=None if args.compact else 2) + "\n")
        else:
            out.write(TEXT_HEADER + json.dumps(header) + "\n")
    if args.form == "text" and len(values) > 1:
        for i, line in enumerate(render_lines(values, sf.dialect, args)):
            out.write(f"; record {i + 1} of {len(values)}\n{line}\n")
        return 0
    # Written as it is made: the tree of a large file is never held whole.
    out.writelines(piece + "\n" for piece in render_lines(values, sf.dialect, args))
    return 0


def _dump_resource(data: bytes, args: argparse.Namespace) -> int:
    """A resource save (``.tres``/``.res``) shown as its ``.tres`` text, JSON or a tree."""
    from ..resources import open_resource
    from ..resources.jsondoc import dumps_resource
    from ..resources.views import resource_tree

    rf = open_resource(data)  # the resource row's reader (the kind is told already); a scene is refused by name
    if args.form == "json":  # laid out without recursion: any depth the readers take
        sys.stdout.write(dumps_resource(rf, None if args.compact else 2, packed_base64=args.base64) + "\n")
    elif args.form == "tree":
        sys.stdout.writelines(line + "\n" for line in resource_tree(rf, max_elements=args.max_elements or None))
    else:
        sys.stdout.write(rf.to_bytes(format="text", allow_scripts=True).decode("utf-8"))
    for note in rf.notes:
        print(f"godot-formats dump: note: {note}", file=sys.stderr)
    return 0


def config_json(doc: Any, *, packed_base64: bool = False, header: bool = True) -> dict[str, Any]:
    """A ConfigFile as one JSON document: what ``load`` needs to write it back (``header``: its dialect
    and encryption), its sections as the engine holds them after ``load`` (section -> key -> value,
    each value in the lossless JSON form, a ``Resource("path")`` as an ExtResource reference), and notes."""
    from ..configfile import encode_to_text
    from ..resources.jsondoc import value_json
    from .common import CONFIG_KEY, config_header

    sections = {name: dict(keys) for name, keys in doc.sections.items()}
    if header:
        out = config_header(doc, encode_to_text(sections, doc.dialect) if doc.encryption is not None else "")
    else:
        out = {CONFIG_KEY: 1, "dialect": doc.dialect.name}
    out["sections"] = {name: {key: value_json(value, packed_base64=packed_base64) for key, value in keys.items()}
                       for name, keys in sections.items()}
    out["notes"] = list(doc.notes)
    return out


def _dump_config(data: bytes, args: argparse.Namespace) -> int:
    """ConfigFile text (``settings.cfg``, a ``save_encrypted_pass`` save ...): its own text (decrypted)
    under a header line for ``load`` (a ``;`` comment to the engine too), its sections as one JSON
    document, or a tree of section -> key -> value."""
    from ..views.jsonform import dumps_form
    from .common import CONFIG_HEADER, config_header, open_config

    doc = open_config(data, args, salvage=args.salvage)
    if args.form == "json":
        shown = config_json(doc, packed_base64=args.base64, header=not args.no_header)
        sys.stdout.write(dumps_form(shown, None if args.compact else 2) + "\n")
    elif args.form == "tree":
        limit = args.max_elements or None
        sys.stdout.writelines(line + "\n" for line in tree_lines(
            {name: dict(keys) for name, keys in doc.sections.items()}, doc.dialect, max_elements=limit, indent="  "))
    else:
        text = _kept_text(doc)
        header = config_header(doc, text)
        if text and not text.endswith("\n"):
            text, header["newline_added"] = text + "\n", True  # load takes it off again
        view = (CONFIG_HEADER + json.dumps(header) + "\n" if not args.no_header else "") + text
        sys.stdout.flush()  # the file's own bytes, those that are not UTF-8 too (load takes them back)
        sys.stdout.buffer.write(view.encode("utf-8", "surrogateescape"))
    return 0


def _kept_text(doc: Any) -> str:
    """The file's text, up to what a salvaged file kept (what ConfigFile.load kept: ``kept_text``)."""
    return str(doc.kept_text)


#: The views of the kinds other than the save (whose view is the rest of :func:`run`): one row per
#: kind of :data:`godot_formats.documents.KINDS` that ``dump`` shows its own way.
VIEWS: dict[str, Callable[[bytes, argparse.Namespace], int]] = {"resource": _dump_resource,
                                                                 "configfile": _dump_config}


def _check_text_keeps(values: list[Any], d: Dialect) -> None:
    """Say (on standard error) when Godot text does not keep a value exactly: nothing is lost silently."""
    from ..core.codec import encoder_for
    from ..views.text import from_text, to_text

    encoder = encoder_for(d, True)
    for i, v in enumerate(values):
        try:
            same = encoder.encode(from_text(to_text(v, d), d)) == encoder.encode(v)
        except GodotFormatsError:
            same = False
        if not same:
            where = f"record {i + 1}: " if len(values) > 1 else ""
            print(f"godot-formats dump: note: {where}the text form does not keep every bit of the value "
                  "(var_to_str sorts Dictionary keys; Godot 3 rounds floats; RID and Signal contents are dropped); "
                  "load writes the value as the text says: use --json to keep every bit",
                  file=sys.stderr)
            return


__all__ = ["add_parser", "tree_lines", "describe", "render", "render_lines", "run"]
