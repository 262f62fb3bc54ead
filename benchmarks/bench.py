#!/usr/bin/env python3
"""Time our decode/encode against the real Godot 3 engine, on the engine's own bytes.

    python3 benchmarks/bench.py                # full workloads, 5 runs, engine if installed
    python3 benchmarks/bench.py --quick        # workloads 10x smaller
    python3 benchmarks/bench.py --no-engine    # our numbers only
    python3 benchmarks/bench.py --json         # machine-readable results
    python3 benchmarks/bench.py --profile 15   # also cProfile each workload (top 15 functions)

One run does everything, one workload at a time: ``bench.gd`` builds the workload inside
``godot3-server``, times ``var2bytes``/``bytes2var`` there (``OS.get_ticks_usec`` around
single calls) and writes the engine's bytes to a temporary folder; right after, we time
``loads(bytes, "godot3")`` and ``dumps(value, "godot3")`` on exactly those bytes
(``time.perf_counter``, the median of ``--runs``), check that our re-encoding is
byte-for-byte the engine's, and print the ratio engine_time / our_time (1.0 = as fast as
the engine, higher = faster).  Taking turns per workload keeps both sides' numbers close
in time, which matters on a shared machine.

Why the method is fair: both sides time one call on the same bytes, neither pays for
building the input or for freeing the previous result, and both are medians.  The cyclic
GC is collected before each of our runs and disabled inside it (as ``timeit`` does; the
engine has no cyclic GC); ``--gc`` keeps it enabled to show what it costs.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import os
import platform
import pstats
import re
import statistics
import sys
import tempfile
import time
import tracemalloc
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import godot_formats as gf  # noqa: E402
from godot_formats import types as t  # noqa: E402

DIALECT = "godot3"
GD_SCRIPT = HERE / "bench.gd"
QUICK_DIVISOR = 10

#: engine_time / our_time we aim for: packed arrays are one memory copy on both sides,
#: containers are one Python object per element on ours.
TARGETS = {"packed": 0.8, "container": 0.2}


# ---------------------------------------------------------------------------------------
# workloads


@dataclass(frozen=True)
class Workload:
    """One value, built the same way here and in bench.gd (``build(n)`` with n elements)."""

    name: str
    label: str
    kind: str  # "packed" or "container": which target applies
    size: int  # element count of the full workload
    build: Callable[[int], Any]
    #: For a value that defers work until it is used (a PackedStringArray keeps its
    #: bytes and makes its strings when first read): what using it all means.  Such a
    #: workload gets a second row, "every element made": decode and then this, and
    #: encode from the value built in Python (its strings exist, its bytes do not).
    use_all: Callable[[Any], Any] | None = None

    def count(self, divisor: int) -> int:
        return self.size // divisor


# The Dictionary values of perf.gd: 1, -7, 2^31 (int64), 0.5 (float32), 0.1 (float64), two
# Strings, true, null, Vector2(1, 2), Color(1, 0, 0).
_SMALL: tuple[Any, ...] = (1, -7, 2147483648, 0.5, 0.1, "ab", "héllo", True, None,
                           t.Vector2(1, 2), t.Color(1, 0, 0, 1))
# perf.gd's pattern, stored as float32.  Its literal -0.0 reaches the array as +0.0 in
# Godot 3.2.3 (the engine writes 00000000 for it), so the copy here says 0.0.
_FLOATS = (0.0, 1.5, -2.25, 3.0e10, 0.1, 0.0, 7.0, 1e-3)


def _dict(n: int) -> dict[str, Any]:
    return {f"k{i}": _SMALL[i % len(_SMALL)] for i in range(n)}


def _records(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "pos": t.Vector3(i, i * 0.5, -i), "tags": ["a", "b"], "hp": 0.75} for i in range(n)]


def _floats(n: int) -> t.PackedFloat32Array:
    data = array("f", _FLOATS) * (n // len(_FLOATS) + 1)
    del data[n:]
    return t.PackedFloat32Array(data)


def _bytes(n: int) -> bytes:
    return (bytes(range(1, 9)) * (n // 8 + 1))[:n]


WORKLOADS: tuple[Workload, ...] = (
    Workload("dict_100k", "Dictionary, String keys, mixed small values", "container", 100_000, _dict),
    Workload("records_20k", 'Array of {"id", "pos": Vector3, "tags": [2], "hp"}', "container", 20_000, _records),
    Workload("ints_1m", "Array of ints", "container", 1_000_000, lambda n: list(range(n))),
    Workload("strings_100k", 'PoolStringArray of short strings ("s0"...)', "packed", 100_000,
             lambda n: t.PackedStringArray(f"s{i}" for i in range(n)), use_all=lambda v: v.tolist()),
    Workload("floats_10m", "PoolRealArray (float32)", "packed", 10_000_000, _floats),
    Workload("bytes_40m", "PoolByteArray", "packed", 40_000_000, _bytes),
)


# ---------------------------------------------------------------------------------------
# the engine side


@dataclass
class EngineRun:
    """One workload through bench.gd: the engine's version, its timings and its bytes."""

    version: str
    encode: list[float]  # seconds per var2bytes call
    decode: list[float]  # seconds per bytes2var call
    data: bytes


def _oracles() -> ModuleType:
    """tests/oracles.py (not a package: the tests import it by path, so do we)."""
    spec = importlib.util.spec_from_file_location("godot_formats_test_oracles", REPO / "tests" / "oracles.py")
    if spec is None or spec.loader is None:
        raise ImportError("tests/oracles.py not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engine_unavailable() -> str | None:
    """None when godot3-server can be driven here, else why not."""
    try:
        reason: str | None = _oracles().godot3_available()
    except (ImportError, OSError) as e:
        return f"cannot load tests/oracles.py ({e})"
    return reason


def gd_script(runs: int, divisor: int, out_dir: str, only: str) -> str:
    """bench.gd with its constants set."""
    text = GD_SCRIPT.read_text(encoding="utf-8")
    settings = {"RUNS": str(runs), "DIVISOR": str(divisor), "OUT_DIR": json.dumps(out_dir), "ONLY": json.dumps(only)}
    for const, value in settings.items():
        text, n = re.subn(rf"^const {const} = [^\n#]*", f"const {const} = {value} ", text, count=1, flags=re.M)
        if n != 1:
            raise RuntimeError(f"bench.gd has no 'const {const} =' line")
    return text


def run_engine(runs: int, divisor: int, name: str) -> EngineRun:
    """Build and time one workload in Godot 3; its var2bytes output comes back through a file."""
    with tempfile.TemporaryDirectory(prefix="godot-formats-bench-") as tmp:
        out = _oracles().godot3_run(gd_script(runs, divisor, tmp, name), timeout=1800)
        version = "?"
        for line in out.splitlines():
            parts = line.split()
            if line.startswith("@@ENGINE "):
                version = line[len("@@ENGINE "):].strip()
            elif line.startswith("@@BENCH ") and len(parts) == 5 and parts[1] == name:
                data = Path(tmp, name + ".bin").read_bytes()
                if len(data) != int(parts[2]):
                    raise RuntimeError(f"engine wrote {len(data)} bytes for {name}, reported {parts[2]}")
                return EngineRun(version, [int(x) / 1e6 for x in parts[3].split(",")],
                                 [int(x) / 1e6 for x in parts[4].split(",")], data)
        raise RuntimeError(f"the engine reported nothing for {name}; its output:\n{out[-4000:]}")


# ---------------------------------------------------------------------------------------
# our side


@dataclass
class Codec:
    """What we time: loads/dumps, or the Decoder/Encoder of another codec module (--codec)."""

    name: str
    decode: Callable[[bytes], Any]
    encode: Callable[[Any], bytes]


def our_codec(path: str | None) -> Codec:
    if path is None:
        return Codec("godot_formats", lambda b: gf.loads(b, DIALECT), lambda v: gf.dumps(v, DIALECT))
    # Loaded as a module of the package, so that its relative imports work.
    spec = importlib.util.spec_from_file_location("godot_formats._bench_candidate", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    dialect = gf.get_dialect(DIALECT)
    decoder, encoder = module.Decoder(dialect), module.Encoder(dialect)
    return Codec(path, lambda b: decoder.decode(b)[0], encoder.encode)


def time_runs(fn: Callable[[Any], Any], arg: Any, runs: int, keep_gc: bool) -> list[float]:
    """Seconds per call; the result is dropped outside the timed region."""
    times = []
    for _ in range(runs):
        gc.collect()
        was_enabled = gc.isenabled()
        if not keep_gc:
            gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn(arg)
            t1 = time.perf_counter()
        finally:
            if was_enabled:
                gc.enable()
        del result
        times.append(t1 - t0)
    return times


def traced_peak(fn: Callable[[Any], Any], arg: Any) -> tuple[int, int]:
    """(peak bytes allocated during fn(arg), bytes still held by its result) per tracemalloc.

    The argument was allocated before tracing started, so it is not counted: a decoder
    that holds no more than the input plus the result has peak == result.
    """
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = fn(arg)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak, held


def profile(fn: Callable[[Any], Any], arg: Any, top: int) -> str:
    """cProfile one call; the ``top`` functions by own time, with their share of the total."""
    prof = cProfile.Profile()
    prof.enable()
    result = fn(arg)
    prof.disable()
    del result
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in stats.values()) or 1e-12
    lines = [f"{'own %':>6} {'own ms':>8} {'cum ms':>8} {'calls':>9}  function"]
    for (path, line, func), (_, calls, own, cum, _) in sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]:
        where = f"{Path(path).name}:{line} {func}" if line else func
        lines.append(f"{own / total:6.1%} {own * 1e3:8.1f} {cum * 1e3:8.1f} {calls:9,}  {where}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# report


def median_ms(times: list[float] | None) -> float | None:
    return None if not times else statistics.median(times) * 1e3


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _ratio(engine: float | None, ours: float | None, target: float) -> str:
    if engine is None or ours is None or ours == 0:
        return "-"
    r = round(engine / ours, 2)  # judged as shown: 0.797 is 0.80, on target
    return f"{r:.2f}" + ("" if r >= target else " (<" + f"{target:g})")


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            models = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = models[0] if models else cpu
    except OSError:
        pass
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M %Z"), "load_average": _load()}


def _load() -> list[float] | None:
    """The 1/5/15-minute load averages: other work on the machine skews both sides' numbers."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _memory_line(what: str, memory: dict[str, Any], note: str) -> str:
    peak, held = memory[f"{what}_peak_bytes"], memory[f"{what}_result_bytes"]
    return (f"  {what}: peak {peak / 1e6:.1f} MB, result {held / 1e6:.1f} MB -> "
            f"peak = {peak / max(held, 1):.2f} x result{note}")


def _best_ratio(row: dict[str, Any], what: str) -> str:
    engine, ours = row[f"engine_{what}_runs_ms"], row[f"ours_{what}_runs_ms"]
    return f"{min(engine) / min(ours):.2f}" if engine and ours and min(ours) > 0 else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: medians and their ratio; the last column compares the best runs,
    which a busy machine disturbs less than the medians."""
    head = ("| workload | size | engine decode ms | ours decode ms | ratio | "
            "engine encode ms | ours encode ms | ratio | same bytes | best-run ratios dec / enc |")
    lines = [head, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        target = TARGETS[r["kind"]]
        lines.append(
            f"| {r['name']} ({r['count']:,}) | {r['size']:,} B | {_ms(r['engine_decode_ms'])} | "
            f"{_ms(r['ours_decode_ms'])} | {_ratio(r['engine_decode_ms'], r['ours_decode_ms'], target)} | "
            f"{_ms(r['engine_encode_ms'])} | {_ms(r['ours_encode_ms'])} | "
            f"{_ratio(r['engine_encode_ms'], r['ours_encode_ms'], target)} | {r['same_bytes']} | "
            f"{_best_ratio(r, 'decode')} / {_best_ratio(r, 'encode')} |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help=f"workloads {QUICK_DIVISOR}x smaller")
    parser.add_argument("--no-engine", action="store_true", help="don't run Godot; our numbers only")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    parser.add_argument("--gc", action="store_true", help="keep the cyclic GC enabled inside our timed calls")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated workload names ("
                        + ", ".join(w.name for w in WORKLOADS) + ")")
    parser.add_argument("--profile", type=int, metavar="TOP", default=0,
                        help="also cProfile one decode and one encode per workload, TOP functions")
    parser.add_argument("--codec", metavar="FILE", help="time the Decoder/Encoder of this codec.py "
                        "(a modified copy of godot_formats/codec.py) instead of loads/dumps")
    return parser


def _chosen_workloads(parser: argparse.ArgumentParser, only: str | None) -> list[Workload]:
    """The workloads of --only; a misspelt name stops the run before any slow work starts."""
    if not only:
        return list(WORKLOADS)
    wanted = set(only.split(","))
    unknown = wanted - {w.name for w in WORKLOADS}
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    return [w for w in WORKLOADS if w.name in wanted]


@dataclass
class Results:
    """What the workloads produce, gathered one workload at a time and reported at the end."""

    engine_note: str
    use_engine: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, dict[str, str]] = field(default_factory=dict)
    memory: dict[str, Any] | None = None

    @property
    def all_same(self) -> bool:
        """Whether every re-encoding matched: a speed number for other bytes would mean nothing."""
        return all(r["same_bytes"] == "yes" for r in self.rows)


def _engine_plan(args: argparse.Namespace, say: Callable[[str], None]) -> Results:
    """Whether the engine takes part, said up front: a run without it is easy to mistake for one with it."""
    if args.no_engine:
        return Results("not run (--no-engine)", False)
    reason = engine_unavailable()
    if reason is None:
        say(f"Godot 3 and ours take turns, one workload at a time ({args.runs} runs per measurement)")
        return Results("not run (--no-engine)", True)
    note = f"not available: {reason}"
    say(f"Godot 3 engine {note}\n-> printing our numbers only")
    return Results(note, False)


def _engine_side(w: Workload, our_bytes: bytes, args: argparse.Namespace, divisor: int, res: Results,
                 say: Callable[[str], None]) -> tuple[bytes, EngineRun | None]:
    """The bytes both sides time (the engine's when it runs, else ours) and the engine's run."""
    if not res.use_engine:
        return our_bytes, None
    say(f"{w.name}: Godot 3...")
    engine = run_engine(args.runs, divisor, w.name)
    res.engine_note = engine.version
    if our_bytes != engine.data:  # then the --no-engine numbers would be for other bytes
        say(f"WARNING {w.name}: the value built in Python does not encode to the engine's bytes")
    return engine.data, engine


def _main_row(w: Workload, n: int, data: bytes, value: Any, engine: EngineRun | None, codec: Codec,
              args: argparse.Namespace) -> dict[str, Any]:
    """The workload's row: every run kept beside the medians, so a noisy run can be spotted later."""
    same = codec.encode(value) == data
    dec = time_runs(codec.decode, data, args.runs, args.gc)
    enc = time_runs(codec.encode, value, args.runs, args.gc)
    e_enc, e_dec = (engine.encode, engine.decode) if engine is not None else (None, None)
    return {
        "name": w.name, "label": w.label, "kind": w.kind, "target": TARGETS[w.kind], "count": n,
        "size": len(data), "same_bytes": "yes" if same else "NO",
        "engine_decode_ms": median_ms(e_dec), "engine_encode_ms": median_ms(e_enc),
        "ours_decode_ms": median_ms(dec), "ours_encode_ms": median_ms(enc),
        "engine_decode_runs_ms": [x * 1e3 for x in e_dec or []],
        "engine_encode_runs_ms": [x * 1e3 for x in e_enc or []],
        "ours_decode_runs_ms": [x * 1e3 for x in dec], "ours_encode_runs_ms": [x * 1e3 for x in enc],
        "load_average": _load(),
    }


def _use_all_row(w: Workload, n: int, data: bytes, base: dict[str, Any], codec: Codec,
                 args: argparse.Namespace) -> dict[str, Any]:
    """The "every element made" row: a lazy value's decode is only fair with the work it defers."""
    assert w.use_all is not None
    use_all = w.use_all

    def decode_all(b: bytes) -> Any:
        return use_all(codec.decode(b))

    built = w.build(n)
    row = {
        **base, "name": f"{w.name}, every element made",
        "same_bytes": "yes" if codec.encode(built) == data else "NO",
        "ours_decode_runs_ms": [x * 1e3 for x in time_runs(decode_all, data, args.runs, args.gc)],
        "ours_encode_runs_ms": [x * 1e3 for x in time_runs(codec.encode, built, args.runs, args.gc)],
        "load_average": _load(),
    }
    row["ours_decode_ms"] = statistics.median(row["ours_decode_runs_ms"])
    row["ours_encode_ms"] = statistics.median(row["ours_encode_runs_ms"])
    return row


def _run_workload(w: Workload, args: argparse.Namespace, divisor: int, codec: Codec, res: Results,
                  say: Callable[[str], None]) -> None:
    """Both sides on one workload, right after each other, so a change in machine load hits both."""
    n = w.count(divisor)
    value_built = w.build(n)
    our_bytes = codec.encode(value_built)
    del value_built
    data, engine = _engine_side(w, our_bytes, args, divisor, res, say)
    del our_bytes
    value = codec.decode(data)  # also the warm-up
    say(f"{w.name}: {len(data):,} bytes, ours...")
    res.rows.append(_main_row(w, n, data, value, engine, codec, args))
    del engine
    if w.use_all is not None:
        say(f"{w.name}: every element made...")
        res.rows.append(_use_all_row(w, n, data, res.rows[-1], codec, args))
    if w.name == "floats_10m":
        peak, held = traced_peak(codec.decode, data)
        enc_peak, enc_held = traced_peak(codec.encode, value)
        res.memory = {"workload": w.name, "input_bytes": len(data),
                      "decode_peak_bytes": peak, "decode_result_bytes": held,
                      "encode_peak_bytes": enc_peak, "encode_result_bytes": enc_held}
    if args.profile:
        res.profiles[w.name] = {"decode": profile(codec.decode, data, args.profile),
                                "encode": profile(codec.encode, value, args.profile)}


def _print_report(res: Results, info: dict[str, Any], args: argparse.Namespace) -> None:
    """The human report: the machine and its load first, since they decide how far the numbers can be trusted."""
    print()
    print(f"engine: Godot {res.engine_note}" if res.use_engine else f"engine: {res.engine_note}")
    m = info["machine"]
    print(f"ours: {info['codec']} on Python {m['python']} ({m['implementation']}), {m['cpu']} x{m['cpus']}, "
          f"{m['date']}")
    load = m["load_average"]
    if load is not None:
        busy = " (BUSY MACHINE: numbers are noisy)" if load[0] > 0.75 * (m["cpus"] or 1) else ""
        print(f"load average at the end: {load[0]} {load[1]} {load[2]}{busy}")
    print(f"median of {args.runs} runs; ratio = engine time / our time (higher is better; "
          f"targets: packed >= {TARGETS['packed']}, containers >= {TARGETS['container']}); "
          f"GC {'enabled' if args.gc else 'disabled'} in our timed calls\n")
    print(table(res.rows))
    memory = res.memory
    if memory is not None:
        print(f"\npeak memory (tracemalloc), {memory['workload']}, input {memory['input_bytes'] / 1e6:.1f} MB "
              "(allocated before tracing, so not counted):")
        print(_memory_line("decode", memory, " (target 1.00: input + result only)"))
        print(_memory_line("encode", memory, ""))
    for name, prof in res.profiles.items():
        for what, text in prof.items():
            print(f"\n--- cProfile: {name} {what} (sorted by own time) ---\n{text}")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    divisor = QUICK_DIVISOR if args.quick else 1
    workloads = _chosen_workloads(parser, args.only)
    # With --json, standard output holds only the document.
    say: Callable[[str], None] = (lambda s: print(s, file=sys.stderr)) if args.json else print
    res = _engine_plan(args, say)
    codec = our_codec(args.codec)
    for w in workloads:
        _run_workload(w, args, divisor, codec, res, say)

    info = {"engine": res.engine_note, "codec": codec.name, "runs": args.runs, "quick": args.quick,
            "gc_in_timed_calls": args.gc, "machine": machine()}
    if args.json:
        print(json.dumps({"info": info, "workloads": res.rows, "memory": res.memory, "profiles": res.profiles},
                         indent=1))
    else:
        _print_report(res, info, args)
    return 0 if res.all_same else 1


if __name__ == "__main__":
    sys.exit(main())
