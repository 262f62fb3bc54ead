"""``godot-formats unwrap FILE -o OUT``: the bytes inside a file's layers, decrypted and/or
decompressed (as ``gunzip`` does), base64 text decoded.  ``wrap`` puts layers back."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.errors import GodotFormatsError
from ..layers.compression import MODES as _MODE_TABLE
from .common import add_password_options, peel, read_input, refuse_existing, write_output

EPILOG = """\
examples:
  godot-formats unwrap enc.sav --password hunter2 -o plain.bin
  GODOT_FORMATS_PASSWORD=hunter2 godot-formats unwrap enc.sav -o plain.bin
  godot-formats unwrap compressed.sav -o plain.bin
  godot-formats unwrap blob.bin --compressed deflate -o plain.bin   a bare PackedByteArray.compress stream

Each layer is taken off once, outside in: encryption (GDEC), compression
(GCPF), Marshalls.variant_to_base64 text.  What was taken off is said on
standard error; a file without any layer is an error (nothing is written).
The inner bytes are what 'godot-formats dump' and 'explain' read.
"""

#: Compression modes by their ids (the compression module's table): "fastlz", "deflate", ...
MODES = tuple(m.name.lower() for m in _MODE_TABLE)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "unwrap", help="write the bytes inside a file's layers (decrypted, decompressed, base64-decoded)",
        description="Take the layers off a save file: decrypt a GDEC file (open_encrypted[_with_pass]), "
                    "decompress a GCPF file (open_compressed), decode Marshalls.variant_to_base64 text.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the file ('-' for standard input)")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write the inner bytes ('-': standard output)")
    parser.add_argument("--overwrite", action="store_true", help="allow -o to replace an existing file")
    parser.add_argument("--compressed", choices=MODES, metavar="MODE",
                        help=f"the file is one bare PackedByteArray.compress stream of this mode ({', '.join(MODES)})"
                             ", which has no header to recognise it by")
    parser.add_argument("--max-size", type=int, default=None, metavar="BYTES",
                        help="refuse inner data larger than this (default: 1 GiB)")
    add_password_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.output not in (None, "-"):
        refuse_existing(args.output, args.overwrite)
    data = read_input(args.file)  # the one bounded read: never a FIFO, never past max_size
    if args.compressed is not None:
        from ..core.errors import DecodeError
        from ..layers.compression import decompress
        from ..saves.savefile import DEFAULT_MAX_FILE_SIZE

        mode = MODES.index(args.compressed)
        try:
            inner = decompress(data, mode, max_size=args.max_size or DEFAULT_MAX_FILE_SIZE)
        except DecodeError as e:
            raise GodotFormatsError(f"at byte {e.offset}: not a {args.compressed} stream: {e.reason}") from None
        layers = [f"decompressed (bare {args.compressed} stream)"]
    else:
        peeled = peel(data, args, max_size=args.max_size)
        inner, layers = peeled.data, peeled.layers
    if not layers:
        raise GodotFormatsError("no layer to take off: the file is not encrypted (GDEC), compressed (GCPF) nor "
                                "base64 text (for a bare compressed stream give --compressed MODE)")
    write_output(inner, args.output, args.overwrite)
    print(f"godot-formats unwrap: {', '.join(layers)}: {len(inner)} bytes", file=sys.stderr)
    return 0
