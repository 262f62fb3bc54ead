"""``godot-formats scan FILE...``: does a resource save hold code?

One line per finding (``FILE: kind: where: why``), nothing for a clean file, and exit status 1
when anything was found or a file could not be read (that file gets a line on standard error and
the others are still scanned).  The files are parsed, never loaded: see
:mod:`godot_formats.resources.scan` for what is looked for.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import attrs

from ..core.errors import GodotFormatsError
from ..resources.opening import open_resource
from ..resources.scan import scan
from .common import EXIT_BAD_INPUT, one_line, printable, read_input


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scan", help="find code in resource saves (.tres/.res) without loading them",
        description="Parse each resource file (.tres, .res, compressed .res) and list what would run "
                    "code when Godot loads it: embedded scripts at any depth, scripts or scenes loaded "
                    "from outside res://, classes that are not data. Nothing is loaded or run. Exit "
                    "status 1 when anything is found.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="resource files ('-' for standard input)")
    parser.add_argument("--json", action="store_true", help="one JSON object per file on standard output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = 0
    for name in args.files:
        try:
            findings = scan(open_resource(read_input(name)))
        except (GodotFormatsError, OSError) as e:
            print(printable(f"godot-formats scan: {name}: {one_line(e)}"), file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        if findings:
            status = EXIT_BAD_INPUT
        if args.json:
            print(json.dumps({"file": name, "findings": [attrs.asdict(f) for f in findings]}))
            continue
        for finding in findings:
            print(printable(f"{name}: {finding}"))
    return status
