"""``godot-formats wrap FILE -o OUT``: put layers around bytes (the reverse of ``unwrap``):
encrypt as Godot 3 or 4 does, compress as ``open_compressed`` does, or take the layers of an
existing file (``--like``)."""

from __future__ import annotations

import argparse
import base64
import sys
from typing import Any

import attrs

from ..core.errors import GodotFormatsError
from ..layers.compression import MODES
from .common import add_password_options, credentials, peel, read_input, refuse_existing, write_output

EPILOG = """\
examples:
  godot-formats wrap plain.bin --encrypt godot4 --password hunter2 -o enc.sav
  godot-formats wrap plain.bin --encrypt godot3 --key 000102...1e1f -o enc.sav
  godot-formats wrap plain.bin --compress zstd -o save.sav
  godot-formats wrap plain.bin --like original.sav --password hunter2 -o save.sav

--encrypt godot3 writes AES-256-ECB with Godot 3's header, godot4 AES-256-CFB
with a fresh random IV, as FileAccess.open_encrypted[_with_pass] does.
--compress writes the GCPF file of open_compressed (4096-byte blocks, the
engine's default settings).  Godot opens a file either encrypted or compressed,
never both, so only one of them can be given.  --like takes every layer of an
existing file (its password is needed for an encrypted one); the IV of a Godot
4 file is kept only when the inner bytes are the same (never one IV for two
plaintexts).
"""

#: The modes Godot writes, by name (the compression module's table; Brotli is read only).
COMPRESS = {m.name.lower(): m.id for m in MODES if m.engine_writes}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "wrap", help="put layers around bytes: encrypt or compress them as Godot does (reverse of unwrap)",
        description="Encrypt (GDEC) or compress (GCPF) a file as Godot's FileAccess does, or give it the "
                    "layers of an existing save file.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the inner bytes ('-' for standard input)")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write the file ('-': standard output)")
    parser.add_argument("--overwrite", action="store_true", help="allow -o to replace an existing file")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--encrypt", choices=("godot3", "godot4"), help="encrypt as this engine does")
    how.add_argument("--compress", choices=tuple(COMPRESS), help="compress as open_compressed does")
    how.add_argument("--like", metavar="ORIGINAL", help="take the layers of this file")
    parser.add_argument("--base64", action="store_true",
                        help="write the bytes as Marshalls.variant_to_base64 text (inside any other layer)")
    add_password_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..layers.compression import GcpfInfo, write_gcpf
    from ..layers.encryption import GdecInfo, write_gdec

    if args.output not in (None, "-"):
        refuse_existing(args.output, args.overwrite)
    data = read_input(args.file)  # the one bounded read: never a FIFO, never past max_size
    encryption = compression = None
    b64 = args.base64
    original_inner = None
    if args.like is not None:
        like = peel(read_input(args.like), args)
        if like.encryption is None and like.compression is None and not like.base64:
            raise GodotFormatsError(f"{args.like} has no layer (not encrypted, compressed nor base64) to take")
        encryption, compression, b64 = like.encryption, like.compression, b64 or like.base64
        original_inner = like.data
    elif args.encrypt is not None:
        encryption = GdecInfo.for_version(3 if args.encrypt == "godot3" else 4)
    else:
        compression = GcpfInfo(mode=COMPRESS[args.compress])
    layers = []
    out = data
    if b64:
        out = base64.b64encode(out)
        layers.append("base64")
    if compression is not None:
        out = write_gcpf(out, compression)
        layers.append(f"compressed ({compression.mode_name})")
    if encryption is not None:
        password, key = credentials(args)
        if password is None and key is None:
            raise GodotFormatsError("encrypting needs --password, --key or GODOT_FORMATS_PASSWORD")
        if encryption.iv is not None and data != original_inner:
            encryption = attrs.evolve(encryption, iv=None)  # a fresh IV for other bytes
        out = write_gdec(out, encryption, key=key, password=password if key is None else None)
        layers.append(f"encrypted (Godot {encryption.version})")
    write_output(out, args.output, args.overwrite)
    print(f"godot-formats wrap: {', '.join(layers)}: {len(out)} bytes", file=sys.stderr)
    return 0
