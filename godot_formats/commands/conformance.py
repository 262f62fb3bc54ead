"""``godot-formats conformance [--dialect godot3|godot4 ...] [--json] -- COMMAND [ARGS...]``: run the
engines' corpus through another implementation and print its report card (docs/conformance.md).

COMMAND is started once and answers JSON lines on its stdin/stdout.  Exit status 0 when every case
passed, 1 when any failed (or the adapter could not be started), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_BAD_INPUT, EXIT_USAGE, printable


def add_parser(subparsers: Any) -> None:
    from ..conformance import DIALECTS, ENGINES

    parser = subparsers.add_parser(
        "conformance", help="judge another implementation against the real engines' bytes",
        description="Start COMMAND (an adapter around another implementation of Godot's binary "
                    "serialization), send it every value the engines wrote and every input they refused, "
                    "one JSON line each, and judge its answers: engine bytes must come back unchanged "
                    "(NodePath padding ignored), refused inputs must be refused. Engines: "
                    + "; ".join(f"{d} = {e}" for d, e in ENGINES.items()) + ". Protocol: docs/conformance.md.",
        usage="%(prog)s [--dialect godot3|godot4 ...] [--json] [--timeout S] [--start-timeout S] "
              "-- COMMAND [ARGS...]",
    )
    parser.add_argument("--dialect", "-d", action="append", choices=DIALECTS, metavar="NAME",
                        help=f"a corpus to run: {' or '.join(DIALECTS)}; repeat for both (default: both)")
    parser.add_argument("--json", action="store_true", help="the report as one JSON object (every failure)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds the adapter has to answer each request (default: %(default)s)")
    parser.add_argument("--start-timeout", type=float, default=60.0, metavar="S",
                        help="seconds for the first answer after the adapter starts, which includes loading it "
                             "(default: %(default)s; never less than --timeout)")
    parser.add_argument("--restarts", type=int, default=3, metavar="N",
                        help="start the adapter again at most N times after it exits or stops answering "
                             "(default: %(default)s)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="failing cases printed in full (default: %(default)s; -1: all)")
    parser.add_argument("adapter", nargs=argparse.REMAINDER, metavar="COMMAND",
                        help="the adapter to run, after --")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..conformance import cases
    from ..conformance.report import to_json, to_text
    from ..conformance.runner import run as run_adapter

    command = list(args.adapter)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("godot-formats conformance: no adapter command: give it after --, e.g. "
              "godot-formats conformance -- python3 examples/conformance_adapter.py", file=sys.stderr)
        return EXIT_USAGE
    if not (args.timeout > 0 and args.start_timeout > 0) or args.restarts < 0:
        print("godot-formats conformance: --timeout and --start-timeout must be positive, --restarts at least 0",
              file=sys.stderr)
        return EXIT_USAGE
    corpus = cases(dict.fromkeys(args.dialect) if args.dialect else None)
    result = run_adapter(command, corpus, timeout=args.timeout, start_timeout=args.start_timeout,
                         max_restarts=args.restarts)
    text = to_json(result) if args.json else to_text(result, args.show)
    sys.stdout.write(text if args.json else printable_lines(text))
    return 0 if all(v.passed for v in result.verdicts) and result.verdicts else EXIT_BAD_INPUT


def printable_lines(text: str) -> str:
    return "\n".join(printable(line) for line in text.split("\n"))
