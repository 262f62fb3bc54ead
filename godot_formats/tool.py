"""The ``godot-formats`` command line (also ``python -m godot_formats``).

Each subcommand lives in :mod:`godot_formats.commands` as a module with
``add_parser(subparsers)``; this module only wires them up and turns every error
into a one-line message and a non-zero exit status: our own errors and OS errors
as they are, anything unexpected (a bug) as an ``internal error`` naming the file
and the exception type.  What the commands share (reading files or stdin, the
``--dialect`` option, the one-line messages) is :mod:`godot_formats.commands.common`.  Set
``GODOT_FORMATS_TRACEBACK=1`` to get the traceback of an internal error instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from .core.version import __version__

#: What this module re-exports of the commands' shared helpers (``tool.EXIT_USAGE`` ...), imported
#: when first asked for: ``godot-formats --version`` imports neither them nor any command.
_REEXPORTED = {
    **dict.fromkeys(("EXIT_BAD_INPUT", "EXIT_BROKEN_PIPE", "EXIT_USAGE", "add_dialect_option", "closed_pipe",
                     "internal_error", "one_line", "os_error", "printable", "read_input"), "commands.common"),
    **dict.fromkeys(("TEMP_MARK", "is_temp_name", "write_atomic", "write_target"), "layers.files"),
}


def __getattr__(name: str) -> Any:
    if name not in _REEXPORTED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__package__}.{_REEXPORTED[name]}"), name)
    globals()[name] = value
    return value


#: Subcommand modules in godot_formats.commands, in the order --help lists them.
COMMANDS = ("dump", "load", "explain", "convert", "detect", "scan", "unwrap", "wrap", "edit", "set", "conformance",
            "engine")

def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` just that command's part: a call names one command,
    and importing the others' modules (save files, resources, engines, batch) would cost every call
    their import time."""
    parser = argparse.ArgumentParser(
        prog="godot-formats",
        description="Inspect, edit, convert and detect Godot binary Variant data "
                    "(var_to_bytes, store_var, put_var) of every engine version.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f".commands.{name}", __package__)
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.commands.{name}":
                raise
            continue  # a command that is not part of this build
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status.  A closed standard output (``| head``) ends every command
    quietly, here, in one place (:func:`~godot_formats.commands.common.closed_pipe`)."""
    try:
        try:
            return _run(argv)  # argparse's --help and --version leave through SystemExit, flushed below too
        finally:
            sys.stdout.flush()  # what is still buffered fails here, inside the try, not at the interpreter's exit
    except BrokenPipeError:
        from .commands.common import closed_pipe

        return closed_pipe()


def _command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names first (None: options only, ``--help``, or a word that is not one)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:  # asked of every install and by scripts: no parser, no command module
        print(f"godot-formats {__version__}")
        return 0
    from .commands.common import EXIT_BAD_INPUT, EXIT_USAGE, internal_error, os_error, printable
    from .core.errors import GodotFormatsError

    parser = build_parser(_command_named(words))
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        raise  # standard output closed by its reader: main ends quietly
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


if __name__ == "__main__":
    sys.exit(main())
