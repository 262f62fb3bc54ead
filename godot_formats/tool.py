"""The ``godot-formats`` command line (also ``python -m godot_formats``).

Each subcommand lives in :mod:`godot_formats.commands` as a module with
``add_parser(subparsers)``; this module only wires them up and owns what they
share: reading files or stdin, the ``--dialect`` option, and turning our own
errors into a one-line message and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__, dialect_names
from .errors import GodotFormatsError

#: Subcommand modules in godot_formats.commands, in the order --help lists them.
COMMANDS = ("dump", "load", "explain", "convert", "detect")

EXIT_BAD_INPUT = 1
EXIT_USAGE = 2


def read_input(path: str) -> bytes:
    """The bytes of a file, or of standard input for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    return Path(path).read_bytes()


def add_dialect_option(parser: argparse.ArgumentParser, *, allow_auto: bool = True, default: str | None = None) -> None:
    choices = [*dialect_names(), *(["auto"] if allow_auto else [])]
    parser.add_argument(
        "--dialect", "-d", choices=choices, default=default or ("auto" if allow_auto else "godot4"),
        metavar="NAME",
        help=f"format version: {', '.join(choices)} (default: %(default)s)",
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
        print(f"godot-formats {args.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        print(f"godot-formats {args.command}: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
