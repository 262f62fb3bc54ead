"""``godot-formats scan FILE...``: would loading this file make Godot run code?

One line per finding (``FILE: kind: where: why``), nothing for a clean file.  Exit status 0 when
every file was read and nothing was found, 1 when anything was found, 2 when a file could not be
read (it gets a line on standard error saying why, and the others are still scanned): a file the
scanner cannot read is never reported clean.  The files are parsed, never loaded: see
:mod:`godot_formats.resources.scan` for what is looked for, and docs/security.md for which kinds
of file are read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import attrs

from ..core.errors import ConfigFileError, GodotFormatsError, NotRegularFileError
from ..resources.opening import scan_file
from .common import EXIT_BAD_INPUT, add_password_options, config_told, credentials, one_line, printable

#: A file could not be read: the scan cannot vouch for it.
EXIT_UNREADABLE = 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scan", help="find what would run code in a save, a resource or a ConfigFile, without loading it",
        description="Parse each file (a resource save .tres/.res/compressed .res, ConfigFile text such as "
                    "settings.cfg or project.godot, or a save of Variants: store_var, var_to_bytes, encrypted, "
                    "compressed, base64) and list what would run code when Godot loads it: embedded scripts "
                    "and inline Objects with scripts at any depth, files loaded from outside res:// (user://, "
                    "absolute and relative paths: Godot runs whatever script such a file holds), classes that "
                    "are not data. Nothing is loaded or run. Exit status 0: nothing found; 1: something "
                    "found; 2: a file could not be read (never reported clean).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to scan ('-' for standard input)")
    parser.add_argument("--user-dir", metavar="DIR",
                        help="the folder user:// stands for (the game's user data folder, e.g. "
                             "~/.local/share/godot/app_userdata/GAME): files the scanned ones load from "
                             "user:// are scanned too, and the files those load, each once")
    add_password_options(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per file on standard output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = 0
    password, key = credentials(args)
    for name in args.files:
        try:
            source: Any = sys.stdin.buffer if name == "-" else name  # read by scan_file: bounded, never a FIFO
            findings = scan_file(source, password=password, key=key, user_dir=args.user_dir)
        except (GodotFormatsError, OSError) as e:
            # The line names the file; damaged ConfigFile text is named by its line and column.
            reason = e.reason if isinstance(e, NotRegularFileError) else \
                config_told(e, salvage=False) if isinstance(e, ConfigFileError) else one_line(e)
            print(printable(f"godot-formats scan: {name}: cannot be scanned, so it is not known to be safe: "
                            f"{reason}"), file=sys.stderr)
            status = EXIT_UNREADABLE
            continue
        if findings and status == 0:
            status = EXIT_BAD_INPUT
        if args.json:
            print(json.dumps({"file": name, "findings": [attrs.asdict(f) for f in findings]}))
            continue
        for finding in findings:
            print(printable(f"{name}: {finding}"))
    return status
