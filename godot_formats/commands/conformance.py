"""``godot-formats conformance [--dialect godot3|godot4 ...] [--op roundtrip|decode|encode ...] [--json]
-- COMMAND [ARGS...]``: run the engines' corpus through another implementation and print its report
card (docs/conformance.md).

COMMAND is started once (again after a case it hangs or dies on) and answers JSON lines on its
stdin/stdout.  Exit status 0 when every case was run and passed, 1 when any failed or was not run (or
the adapter could not be started), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_BAD_INPUT, EXIT_USAGE, printable


def add_parser(subparsers: Any) -> None:
    from ..conformance import DIALECTS, ENGINES, OPERATIONS
    from ..conformance.runner import DEFAULT_TIME_LIMIT

    parser = subparsers.add_parser(
        "conformance", help="judge another implementation against the real engines' bytes",
        description="Start COMMAND (an adapter around another implementation of Godot's binary "
                    "serialization), send it every value the engines wrote and every input they refused, "
                    "one JSON line each, and judge its answers: engine bytes must come back unchanged "
                    "(NodePath padding ignored), refused inputs must be refused; decode and encode, when the "
                    "adapter supports them, are judged on their own. Engines: "
                    + "; ".join(f"{d} = {e}" for d, e in ENGINES.items()) + ". Protocol: docs/conformance.md.",
        usage="%(prog)s [--dialect godot3|godot4 ...] [--op roundtrip|decode|encode ...] [--json] [--timeout S] "
              "[--start-timeout S] [--time-limit S] [--restarts N] -- COMMAND [ARGS...]",
    )
    parser.add_argument("--dialect", "-d", action="append", choices=DIALECTS, metavar="NAME",
                        help=f"a corpus to run: {' or '.join(DIALECTS)}; repeat for both (default: both)")
    parser.add_argument("--op", action="append", choices=OPERATIONS, metavar="OP", dest="ops",
                        help=f"an operation to run: {', '.join(OPERATIONS)}; repeat for more (default: every one "
                             "the adapter says it supports)")
    parser.add_argument("--json", action="store_true", help="the report as one JSON object (every failure)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds the adapter has to answer each request (default: %(default)s)")
    parser.add_argument("--start-timeout", type=float, default=60.0, metavar="S",
                        help="seconds for the answer to the opening request after each start, which includes "
                             "loading the adapter (default: %(default)s; never less than --timeout)")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="S",
                        help="seconds for the whole run; the cases not reached are reported as not run "
                             "(default: %(default)s; 0: no limit)")
    parser.add_argument("--restarts", type=int, default=None, metavar="N",
                        help="start the adapter again at most N times after it hangs or exits (default: no "
                             "limit; each case has --timeout, the run --time-limit)")
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
    if not (args.timeout > 0 and args.start_timeout > 0) or (args.restarts or 0) < 0 or args.time_limit < 0:
        print("godot-formats conformance: --timeout and --start-timeout must be positive, --restarts and "
              "--time-limit at least 0", file=sys.stderr)
        return EXIT_USAGE
    corpus = cases(dict.fromkeys(args.dialect) if args.dialect else None)
    result = run_adapter(command, corpus, operations=list(dict.fromkeys(args.ops)) if args.ops else None,
                         timeout=args.timeout, start_timeout=args.start_timeout, max_restarts=args.restarts,
                         time_limit=args.time_limit or None)
    text = to_json(result) if args.json else to_text(result, args.show)
    sys.stdout.write(text if args.json else printable_lines(text))
    return 0 if result.verdicts and all(v.passed for v in result.verdicts) else EXIT_BAD_INPUT


def printable_lines(text: str) -> str:
    return "\n".join(printable(line) for line in text.split("\n"))
