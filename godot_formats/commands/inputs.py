"""The input side of the reading commands (``dump``, ``explain``): one set of options, one reading.

Both commands must read a file the same way, or ``explain`` would annotate bytes that
``dump`` shows as another value; so the ``FILE``, ``--dialect``, ``--framing`` and
``--allow-objects`` options live here, and both read through :mod:`godot_formats.reading`
(as ``gf.open`` and every other command do).

Not a command (``tool.COMMANDS`` does not list it).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core.errors import AmbiguousDialectError, DamagedFileError, DecodeError
from ..layers.framing import FramingError
from ..saves.reading import FRAMINGS, Reading, read_peeled
from ..tool import add_dialect_option
from .common import add_password_options, credentials, located

__all__ = ["FRAMINGS", "add_input_options", "resolve_input"]


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """FILE, --dialect (default auto), --framing, --allow-objects and the password options."""
    parser.add_argument("file", metavar="FILE", help="the file to read ('-' for standard input)")
    add_dialect_option(parser)
    parser.add_argument("--framing", choices=FRAMINGS, default="auto",
                        help="store_var: u32 length-prefixed records (store_var, put_var); none: raw "
                             "var_to_bytes data; auto: decide from the bytes (default: %(default)s)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="decode full Objects (as inert data: class name and properties, never code)")
    add_password_options(parser)


def resolve_input(data: bytes, args: argparse.Namespace, framing: str) -> Reading:
    """The one reading of ``data`` with the command's options (its layers taken off first)."""
    from ..saves.reading import peel

    password, key = credentials(args)
    dialect: Any = None if args.dialect == "auto" else args.dialect
    try:
        peeled = peel(data, password=password, key=key)
        return read_peeled(peeled, dialect=dialect, framing=framing, allow_objects=args.allow_objects)
    except (AmbiguousDialectError, DamagedFileError, FramingError):
        raise  # the command decides what to say (explain lists a damaged file in a given dialect)
    except DecodeError as e:
        raise located(e) from None
