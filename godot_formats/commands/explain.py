"""``godot-formats explain FILE``: every field of a Variant file, with its offset, bytes and meaning.

A disassembler in the spirit of ``python -m pickletools``: see
:mod:`godot_formats.explain`.  Malformed files are listed as far as they can be
read, then a line names the offset and the problem; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..batch.onefile import told
from ..core.errors import AmbiguousDialectError, DamagedFileError, GodotFormatsError
from ..layers.framing import FramingError
from ..saves.containers import container
from ..saves.reading import LAYER_BY_NAME, Reading
from ..views.explain import Field, explain_fields, format_lines
from .common import (
    EXIT_BAD_INPUT,
    add_input_options,
    ambiguity,
    credentials,
    kind_of_input,
    located,
    read_input,
    resolve_input,
)

EPILOG = """\
examples:
  godot-formats explain save.dat
  godot-formats explain - --dialect godot3 < blob.bin
  godot-formats explain player.sav --framing store_var --max-elements 0
  godot-formats explain packet.bin --offset 4     start at byte 4 (no framing)

Each line: offset, up to 8 bytes in hex ("…" when the field is longer) and what
they mean.  Header lines give the type id and name in the dialect's own
vocabulary (PoolIntArray in Godot 3) and the flags; padding says whether it is
zero (NodePath padding written by engines before 4.6.3 holds leftover memory).
"""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain", help="list every field of a Variant file (a disassembler)",
        description="Annotate a file of Godot binary Variant data field by field: offset, raw bytes and "
                    "meaning (headers, flags, lengths, counts, strings, padding), indented by nesting. "
                    "Malformed input is listed as far as it can be read, then the problem is named.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser)
    parser.add_argument("--offset", type=int, default=None, metavar="N",
                        help="explain the value that starts at byte N (implies --framing none)")
    parser.add_argument("--max-elements", type=int, default=16, metavar="N",
                        help="packed array elements (or 8-byte rows) shown per array, 0 for all "
                             "(default: %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    framing = "none" if args.offset is not None else args.framing
    data = read_input(args.file)  # the one bounded read: never a FIFO, never past max_size
    if args.offset is None:
        show = VIEWS.get(kind_of_input(data, args))  # the kind, as gf.open tells it (an encrypted ConfigFile too)
        if show is not None:
            return show(data, args)
    try:
        source = _at_offset(data, args) if args.offset is not None else resolve_input(data, args, framing)
    except AmbiguousDialectError as e:
        raise ambiguity(e) from None
    except (DamagedFileError, FramingError) as e:  # FramingError: also the frames of a dump --framing
        if args.dialect == "auto":
            hint = f"--dialect {e.dialect}" if isinstance(e, DamagedFileError) else "--dialect D"
            raise GodotFormatsError(f"{located(e)} ({hint} explains its bytes up to the damage)") from None
        source = _as_given(data, args, framing, isinstance(e, DamagedFileError) and e.record is not None)
    layers = [LAYER_BY_NAME[name].describe(info) for name, info in source.peeled.infos.items()]
    decoded = container(source.container).decoded
    if decoded is not None:
        layers.append(decoded)
    data = source.inner
    if layers:
        print(f"# {', '.join(layers)}: offsets below are in those {len(data)} bytes")
    d = source.dialect
    print(f"# {d.name}: {d.description} [{source.why}]")
    errors: list[Field] = []
    framed = container(source.container).framed

    def fields() -> Iterator[Field]:
        for i, (start, end) in enumerate(source.spans):
            if framed:
                order = "<I" if source.byteorder == "little" else ">I"
                length = struct.unpack_from(order, data, start - 4)[0]
                yield Field(start - 4, 4, 0, "prefix", f"store_var record {i + 1}: length prefix {length}")
            for f in explain_fields(data, d, offset=start, end=end, allow_objects=args.allow_objects,
                                    max_elements=args.max_elements or None):
                if f.kind == "error":
                    errors.append(f)
                yield f
            if errors:
                break

    # Written as it is made: the listing of a large file is never held whole.
    sys.stdout.writelines(line + "\n" for line in format_lines(fields(), data))
    if errors:
        error = errors[0].error  # what would list it (--allow-objects ...) is the error's remedy, said as a flag
        said = told(error) if error is not None else errors[0].text[len("error: "):]
        print(f"godot-formats explain: {said}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def _explain_resource(data: bytes, args: argparse.Namespace) -> int:
    """A resource save: a ``.res`` field by field, a ``.tres`` section and property by line."""
    from ..layers.magic import resource_form
    from ..resources.explain import BinaryListing, explain_text

    if resource_form(data) == "text":
        sys.stdout.writelines(line + "\n" for line in explain_text(data))
        return 0
    listing = BinaryListing(data)
    if listing.plain is not data:
        print(f"# RSCC: a compressed resource; offsets below are in its {len(listing.plain)} decompressed bytes")
    print("# a binary resource save (RSRC): every field as the reader reads it; nothing is loaded or run")
    # Written as the reader reads: the listing of a large file is never held whole.
    sys.stdout.writelines(line + "\n" for line in format_lines(listing, listing.plain))
    if listing.error is not None:
        print(f"godot-formats explain: {listing.error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def _explain_config(data: bytes, args: argparse.Namespace) -> int:
    """ConfigFile text: every ``key=value`` of the file in file order (a key set twice and a ``null`` that
    erases one included, as the engine reads them), with its line, its section and its value's own text;
    a damaged file is listed up to the damage, then the damage is named (exit status 1)."""
    from .common import config_layers, config_told, open_config

    doc = open_config(data, args, salvage=True, notes=False)  # listed as far as it reads, as a damaged binary file is
    print(f"# {config_layers(doc)}, {doc.dialect.name} [{doc.why}]: line, [section] key = the value as written")
    text = doc.text
    for entry in doc.entries():
        shown = text[entry.value_start:entry.end]
        if "\n" in shown:
            shown = shown.split("\n", 1)[0] + f" … ({shown.count(chr(10)) + 1} lines)"
        line = f"{doc.line_of(entry.start):>6}  [{entry.section}] {entry.key} = {shown}"
        print(line.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))  # a bad byte: \xff
    if doc.damage is not None:
        print(f"godot-formats explain: {config_told(doc.damage)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


#: The listings of the kinds other than the save (whose listing is the rest of :func:`run`): one row
#: per kind of :data:`godot_formats.documents.KINDS` that ``explain`` lists its own way.
VIEWS: dict[str, Callable[[bytes, argparse.Namespace], int]] = {"resource": _explain_resource,
                                                                "configfile": _explain_config}


def _at_offset(data: bytes, args: argparse.Namespace) -> Reading:
    """``--offset N``: the value that starts at byte N (inside the layers), in the dialect given or the one
    that reads it."""
    from ..core.dialects import get_dialect
    from ..saves.reading import peel, read_value

    password, key = credentials(args)
    peeled = peel(data, password=password, key=key)
    inner = peeled.data
    start = args.offset + len(inner) if args.offset < 0 else args.offset
    start = min(max(start, 0), len(inner))
    if args.dialect != "auto":
        d, why = get_dialect(args.dialect), f"{args.dialect} (given)"
    else:
        found = read_value(inner[start:], allow_objects=args.allow_objects)
        d, why = found.dialect, found.why
    return Reading(peeled, "var_to_bytes", d, why, inner, spans=((start, len(inner)),))


def _as_given(data: bytes, args: argparse.Namespace, framing: str, records: bool) -> Reading:
    """A damaged file in the dialect the user gave: its frames (when the damage is inside a record) or its
    one value, as they are, so the listing shows every field up to the damage, then the error."""
    from ..core.dialects import get_dialect
    from ..saves.detection import Layout
    from ..saves.reading import peel

    password, key = credentials(args)
    peeled = peel(data, password=password, key=key)
    inner = peeled.data
    layout = (Layout.frames(inner) if records and framing != "none" else None) or Layout.bare(inner)
    return Reading(peeled, "store_var" if layout.framed else "var_to_bytes", get_dialect(args.dialect),
                   f"{args.dialect} (given); the file is damaged", inner, layout.byteorder, layout.spans)
