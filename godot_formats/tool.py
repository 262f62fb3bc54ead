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

from .commands.common import EXIT_BAD_INPUT as EXIT_BAD_INPUT  # the commands' shared helpers, re-exported
from .commands.common import EXIT_BROKEN_PIPE as EXIT_BROKEN_PIPE
from .commands.common import EXIT_USAGE as EXIT_USAGE
from .commands.common import add_dialect_option as add_dialect_option
from .commands.common import closed_pipe
from .commands.common import internal_error as internal_error
from .commands.common import one_line as one_line
from .commands.common import os_error as os_error
from .commands.common import printable as printable
from .commands.common import read_input as read_input
from .core.errors import GodotFormatsError
from .core.version import __version__
from .layers.files import TEMP_MARK as TEMP_MARK  # the commands' shared helpers, re-exported
from .layers.files import is_temp_name as is_temp_name
from .layers.files import write_atomic as write_atomic
from .layers.files import write_target as write_target

#: Subcommand modules in godot_formats.commands, in the order --help lists them.
COMMANDS = ("dump", "load", "explain", "convert", "detect", "scan", "unwrap", "wrap", "edit", "set", "conformance",
            "engine")

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
    """Run one command; its exit status.  A closed standard output (``| head``) ends every command
    quietly, here, in one place (:func:`~godot_formats.commands.common.closed_pipe`)."""
    try:
        try:
            return _run(argv)  # argparse's --help and --version leave through SystemExit, flushed below too
        finally:
            sys.stdout.flush()  # what is still buffered fails here, inside the try, not at the interpreter's exit
    except BrokenPipeError:
        return closed_pipe()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
