"""Godot's text form read back, with both backends: a 5 MB ConfigFile and one big value.

The file is the one made from the engine-written fixtures (``fixtures/configfile/godot3.jsonl``: a
Godot 3.2.3 save of key bindings, then its game save repeated, each copy's sections renamed, up to
5 MB); Godot 3.2.3's own ``ConfigFile.load`` reads it in 0.6-0.9 s on this machine.  Timed, in both
dialects, with the compiled fast path (``godot_formats/core/_ctext.c``) and with the reference
parser alone (``views.text.parser.COMPILED = False``, what ``GODOT_FORMATS_PURE=1`` runs):

* ``read_config``: the whole file, as a user reads it (``godot_formats.configfile.read_config``);
* ``values only``: ``read_value`` at each entry's value, the file's own loop without its key and
  header scanning (so the part of ``read_config`` that is the text parser's);
* ``from_text``: one Array holding every value of the file (some 5 MB of text, one call).

Medians of ``--runs``, GC on, ``gc.collect()`` before each run.  A script, not a test: the numbers
depend on the machine and its load.

    python3 benchmarks/text_parse.py [--runs 5] [--file /tmp/cf5.cfg]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from godot_formats.configfile import read_config
from godot_formats.configfile.text import parse
from godot_formats.core import accel
from godot_formats.views.text import parser
from godot_formats.views.text.parser import from_text, read_value

ROOT = Path(__file__).resolve().parent.parent


def make_file(path: Path, size: int = 5_000_000) -> None:
    """The 5 MB file: the key bindings once, then the game save, its sections renamed each time."""
    records = [json.loads(line) for line in (ROOT / "fixtures" / "configfile" / "godot3.jsonl").open(encoding="utf-8")]
    kb = next(r for r in records if r["name"] == "keybindings")["text"]
    gs = next(r for r in records if r["name"] == "game_save")["text"]
    parts, total, i = [kb], len(kb), 0
    while total < size:
        b = gs.replace("[player]", f"[player{i}]").replace("[world]", f"[world{i}]")
        parts.append("\n" + b)
        total += len(b) + 1
        i += 1
    path.write_text("".join(parts), encoding="utf-8")


def timed(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--file", type=Path, default=Path("/tmp/cf5.cfg"))
    args = ap.parse_args()
    if not args.file.exists():
        make_file(args.file)
    data = args.file.read_bytes()
    text = data.decode("utf-8")
    print(f"{args.file}: {len(data) / 1e6:.1f} MB; compiled text parser {'built' if accel.ctext else 'NOT built'}")
    backends = [("compiled", True), ("reference", False)] if accel.ctext is not None else [("reference", False)]
    for dialect in ("godot3", "godot4"):
        spans = [(e.value_start, e.end) for e in parse(text, dialect).entries]
        big = "[" + ", ".join(text[a:b] for a, b in spans) + "]"
        starts = [a for a, _ in spans]

        def values_only(d: str = dialect, s: list[int] = starts) -> None:
            for start in s:
                read_value(text, start, d)

        rows: dict[str, list[float]] = {}
        for _, compiled in backends:
            parser.COMPILED = compiled
            for name, fn in (("read_config", lambda d=dialect: read_config(data, dialect=d)),
                             ("values only", values_only),
                             ("from_text", lambda d=dialect, v=big: from_text(v, d, max_depth=10**6))):
                rows.setdefault(name, []).append(timed(fn, args.runs))
        parser.COMPILED = accel.ctext is not None
        for name, secs in rows.items():
            cells = "  ".join(f"{label} {s:6.3f} s" for (label, _), s in zip(backends, secs))
            ratio = f"  ({secs[1] / secs[0]:.1f}x)" if len(secs) == 2 else ""
            print(f"{dialect}  {name:12} {cells}{ratio}")


if __name__ == "__main__":
    main()
