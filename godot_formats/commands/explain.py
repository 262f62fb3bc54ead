"""``godot-formats explain FILE``: every field of a Variant file, with its offset, bytes and meaning.

A disassembler in the spirit of ``python -m pickletools``: see
:mod:`godot_formats.explain`.  Malformed files are listed as far as they can be
read, then a line names the offset and the problem; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Iterator
from typing import Any

from ..explain import Field, explain_fields, format_lines
from ..tool import EXIT_BAD_INPUT, read_input
from .inputs import add_input_options, resolve_input

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
    from .common import peel

    peeled = peel(read_input(args.file), args)
    data = peeled.data
    if peeled.layers:
        print(f"# {', '.join(peeled.layers)}: offsets below are in those {len(data)} bytes")
    framing = "none" if args.offset is not None else args.framing
    source = resolve_input(data, args.dialect, framing, args.allow_objects)
    d = source.dialect
    print(f"# {d.name}: {d.description} [{source.note}]")
    errors: list[Field] = []

    def fields() -> Iterator[Field]:
        for i, record in enumerate(source.records):
            if record.prefixed:
                length = struct.unpack_from("<I", data, record.start - 4)[0]
                yield Field(record.start - 4, 4, 0, "prefix", f"store_var record {i}: length prefix {length}")
            start = args.offset if args.offset is not None else record.start
            if start < 0:
                start += len(data)
            for f in explain_fields(data, d, offset=start, end=record.end, allow_objects=args.allow_objects,
                                    max_elements=args.max_elements or None):
                if f.kind == "error":
                    errors.append(f)
                yield f
            if errors:
                break

    # Written as it is made: the listing of a large file is never held whole.
    sys.stdout.writelines(line + "\n" for line in format_lines(fields(), data))
    if errors:
        hint = " (add --allow-objects to list it)" if "allow_objects" in errors[0].text else ""
        print(f"godot-formats explain: {errors[0].text[len('error: '):]}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0
