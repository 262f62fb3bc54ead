"""The ``godot-formats`` command line (also ``python -m godot_formats``).

Each subcommand lives in :mod:`godot_formats.commands` as a module with
``add_parser(subparsers)``; this module only wires them up and owns what they
share: reading files or stdin, the ``--dialect`` option, writing files
atomically, and turning every error into a one-line message and a non-zero exit
status: our own errors and OS errors as they are, anything unexpected (a bug)
as an ``internal error`` naming the file and the exception type.  Set
``GODOT_FORMATS_TRACEBACK=1`` to get the traceback of an internal error instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .core.dialects import dialect_names
from .core.errors import GodotFormatsError
from .core.version import __version__
from .layers.files import TEMP_MARK as TEMP_MARK  # the commands' shared helpers, re-exported
from .layers.files import is_temp_name as is_temp_name
from .layers.files import write_atomic as write_atomic
from .layers.files import write_target as write_target

#: Subcommand modules in godot_formats.commands, in the order --help lists them.
COMMANDS = ("dump", "load", "explain", "convert", "detect", "unwrap", "wrap", "edit", "set", "conformance", "engine")

EXIT_BAD_INPUT = 1
EXIT_USAGE = 2

def printable(text: str) -> str:
    """``text`` with every unprintable character escaped, so that a report line stays one line.

    File names may hold newlines or control characters, and bytes that are not
    UTF-8 (which Python keeps as lone surrogates, unprintable on a UTF-8
    terminal): ``\\n``, ``\\x1b``, ``\\xff`` instead.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    if "\udc80" <= c <= "\udcff":  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{ord(c) - 0xDC00:02x}"
    return c.encode("unicode_escape").decode("ascii")


def one_line(e: BaseException) -> str:
    """An exception as one line of text (its first line; the type when it has no message)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def internal_error(e: BaseException) -> str:
    """The one-line report of an exception we did not expect (a bug, not bad input)."""
    return f"internal error ({type(e).__name__}: {one_line(e)}); please report it"


def read_input(path: str) -> bytes:
    """The bytes of a file, or of standard input for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    return Path(path).read_bytes()


def add_dialect_option(parser: argparse.ArgumentParser, *, allow_auto: bool = True, default: str | None = None,
                       help_default: str | None = None) -> None:
    """``--dialect NAME``: every dialect name and alias of the README (``godot3.5``, ``godot4.6`` ...),
    checked with :func:`godot_formats.get_dialect` and given as the dialect's own name."""
    from .commands.common import dialect_arg

    choices = [*dialect_names(), *(["auto"] if allow_auto else [])]
    parser.add_argument(
        "--dialect", "-d", type=dialect_arg(allow_auto),
        default=default if default is not None else ("auto" if allow_auto else "godot4"),
        metavar="NAME",
        help=f"format version: {', '.join(choices)}, or an alias such as godot3.5 or godot4.6 "
             f"(default: {help_default or '%(default)s'})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="godot-formats",
        description="Inspect, edit, convert and detect Godot binary Variant data "
                    "(var_to_bytes, store_var, put_var) of every engine version.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f".commands.{name}", __package__)
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.commands.{name}":
                raise
            continue  # a command that is not part of this build
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except GodotFormatsError as e:
        print(printable(f"godot-formats {args.command}: {e}"), file=sys.stderr)
        for line in getattr(e, "details", ()):  # commands.common.DetailedError: one line each
            print(printable(line), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        print(printable(f"godot-formats {args.command}: {os_error(e)}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug, not bad input: still one line, naming the file
        if os.environ.get("GODOT_FORMATS_TRACEBACK"):
            raise
        file = getattr(args, "file", None)
        where = f"{file}: " if file else ""
        print(printable(f"godot-formats {args.command}: {where}{internal_error(e)}"), file=sys.stderr)
        return EXIT_BAD_INPUT


def os_error(e: OSError) -> str:
    """An OSError as one line: ``reason: file``."""
    return f"{e.strerror or one_line(e)}: {e.filename or ''}".rstrip(": ")


if __name__ == "__main__":
    sys.exit(main())
