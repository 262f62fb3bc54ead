"""A big ConfigFile, read, converted and written back: ours against Godot 3.2.3's own ``ConfigFile``.

The file is a Godot 3 settings file as games write them: the engine-made key bindings of
fixtures/configfile/godot3.jsonl, then the engine-made game save section repeated (each copy its own
sections) up to ``--mb`` megabytes (5 by default).  In one run, in turns:

- the engine: ``ConfigFile.load`` then ``save`` of that file (``OS.get_ticks_usec`` around each, in the
  engine's own process: its start is not counted);
- ours, as users call it (the GC on): ``read_config`` (what ``gf.open`` does for this file), the
  unchanged write-back, one value set and the file written, and the Godot 4 conversion written
  (read + convert + write: the issue's target is that row against the engine's load + save).

Usage: ``python3 benchmarks/configfile.py [--mb 5] [--runs 3] [--no-engine]``.  A script, not a test:
times depend on the machine; ``tests/project/test_benchmarks.py`` only runs it small for its shape.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from godot_formats import oracle  # noqa: E402
from godot_formats.configfile import read_config  # noqa: E402

ENGINE_SCRIPT = """extends SceneTree
func _init():
\tfor i in range({runs}):
\t\tvar cf = ConfigFile.new()
\t\tvar t0 = OS.get_ticks_usec()
\t\tvar err = cf.load("res://big.cfg")
\t\tvar t1 = OS.get_ticks_usec()
\t\tvar err2 = cf.save("user://out.cfg")
\t\tvar t2 = OS.get_ticks_usec()
\t\tprint("@@RUN %d %d %d %d" % [t1 - t0, t2 - t1, err, err2])
\tquit()
"""


def make_file(mb: float) -> bytes:
    records = [json.loads(line) for line in (ROOT / "fixtures" / "configfile" / "godot3.jsonl").open(encoding="utf-8")]
    keys = next(r for r in records if r["name"] == "keybindings")["text"]
    save = next(r for r in records if r["name"] == "game_save")["text"]
    parts, size, i = [keys], len(keys), 0
    while size < mb * 1_000_000:
        block = save.replace("[player]", f"[player{i}]").replace("[world]", f"[world{i}]")
        parts.append("\n" + block)
        size += len(block) + 1
        i += 1
    return "".join(parts).encode("utf-8")


def engine_times(data: bytes, runs: int) -> list[tuple[float, float]] | str:
    why = oracle.godot3_available()
    if why is not None:
        return why
    from godot_formats.oracle.godot3 import run_project
    p = run_project(ENGINE_SCRIPT.format(runs=runs), {"big.cfg": data}, timeout=600)
    found = [tuple(map(int, m.groups())) for m in re.finditer(r"@@RUN (\d+) (\d+) (-?\d+) (-?\d+)", p.stdout)]
    if len(found) != runs or any(err or err2 for _, _, err, err2 in found):
        return f"the engine did not load and save the file: {p.stdout[-400:]} {p.stderr[-400:]}"
    return [(load / 1e6, save / 1e6) for load, save, _, _ in found]


def timed(fn: Callable[[], Any], runs: int) -> float:
    best: list[float] = []
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        fn()
        best.append(time.perf_counter() - t)
    return statistics.median(best)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-engine", action="store_true")
    args = ap.parse_args(argv)
    data = make_file(args.mb)
    print(f"ConfigFile of {len(data) / 1e6:.1f} MB (Godot 3 key bindings and saves), median of {args.runs} runs")

    def edit_and_write() -> bytes:
        doc = read_config(data)
        doc.set_value("player0", "gold", 99)
        return doc.to_bytes()

    def convert_and_write() -> bytes:
        doc, _ = read_config(data).convert("godot4", policy="lossy")
        return doc.to_bytes()

    doc = read_config(data)
    ours = {
        "read (gf.open of it)": timed(lambda: read_config(data), args.runs),
        "unchanged write-back": timed(doc.to_bytes, args.runs),
        "read + set one value + write": timed(edit_and_write, args.runs),
        "read + convert to Godot 4 + write": timed(convert_and_write, args.runs),
    }
    engine = None if args.no_engine else engine_times(data, args.runs)
    rows = [(name, seconds) for name, seconds in ours.items()]
    if isinstance(engine, list):
        load = statistics.median(t[0] for t in engine)
        both = statistics.median(t[0] + t[1] for t in engine)
        rows += [("Godot 3.2.3 ConfigFile.load", load), ("Godot 3.2.3 ConfigFile.load + save", both)]
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"  {name:<{width}}  {seconds:7.3f} s")
    if isinstance(engine, list):
        print(f"  ratio, our read / the engine's load:                  {ours['read (gf.open of it)'] / load:.2f}x")
        print(f"  ratio, our read+convert+write / the engine's load+save: "
              f"{ours['read + convert to Godot 4 + write'] / both:.2f}x  (target: at most 1)")
    elif isinstance(engine, str):
        print(f"  (no engine row: {engine})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
