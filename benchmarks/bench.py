#!/usr/bin/env python3
"""Time our decode/encode, both backends, against the real Godot 3 engine and against pickle, orjson and msgpack.

    python3 benchmarks/bench.py                # full workloads, 5 runs, engine if installed
    python3 benchmarks/bench.py --quick        # workloads 10x smaller
    python3 benchmarks/bench.py --no-engine    # our numbers only
    python3 benchmarks/bench.py --json         # machine-readable results
    python3 benchmarks/bench.py --profile 15   # also cProfile each workload (top 15 functions)

One run does everything, one workload at a time: ``bench.gd`` builds the workload inside
``godot3-server``, times ``var2bytes``/``bytes2var`` there (``OS.get_ticks_usec`` around
single calls) and writes the engine's bytes to a temporary folder; right after, we time
decoding and encoding exactly those bytes in ``"godot3"`` with each backend of ours -- the
compiled core (``Decoder(dialect, backend="c")``, when it is built) and the pure-Python
reference (``backend="python"``) -- (``time.perf_counter``, the median of ``--runs``),
check that each re-encoding is byte-for-byte the engine's, and print the ratio
engine_time / our_time (1.0 = as fast as the engine, higher = faster).  Taking turns per
workload keeps both sides' numbers close in time, which matters on a shared machine.

On the container workloads (``dict_100k``, ``records_20k``) the same Python objects also go
through pickle (protocol 5), orjson and msgpack (``peers.py``), and our time / pickle's is
printed.  A small game message (~150 bytes) and the per-call overhead (a Nil, ``None``)
are timed per call, in microseconds: the engine runs ``bytes2var``/``var2bytes`` in a
GDScript loop (``MESSAGE_GD``), we run them in ``timeit``'s loop.  At the end, the targets
of the compiled core are checked, one line each: the benchmark reports, it never asserts.

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
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (REPO, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import peers  # noqa: E402

import godot_formats as gf  # noqa: E402
from godot_formats import codec as reference_codec  # noqa: E402
from godot_formats import types as t  # noqa: E402

DIALECT = "godot3"
GD_SCRIPT = HERE / "bench.gd"
QUICK_DIVISOR = 10

#: Our backends, fastest first: the compiled core and the pure-Python reference.
BACKENDS = ("c", "python")
LABELS = {"c": "compiled", "python": "reference"}

#: engine_time / our_time the reference aims for: packed arrays are one memory copy on both
#: sides, containers are one Python object per element on ours.
TARGETS = {"packed": 0.8, "container": 0.2}
#: The compiled core's targets (its issue): engine_time / our_time on every row ...
C_TARGETS = {"packed": 1.5, "container": 2.0, "message": 2.0}
#: ... and at most this many times pickle's time on the container rows.
C_PICKLE_TARGET = 1.5

#: The small message: a typical game-state update, 156 bytes in godot3.  MESSAGE_GD builds
#: the same value in GDScript (the bytes are compared).
MESSAGE_LABEL = '{"type": "move", "id": 12345, "pos": Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}'
#: Calls per timed run of the message and of the per-call overhead (--quick: a tenth).
MESSAGE_CALLS = 20_000
#: A Nil: the smallest input, so decoding it is the per-call overhead.
NIL = b"\0\0\0\0"


def message() -> dict[str, Any]:
    return {"type": "move", "id": 12345, "pos": t.Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}


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
    #: Whether pickle, orjson and msgpack are timed on it too.
    peers: bool = False
    #: What it costs CPython alone to make the Python objects a decode returns, from C with
    #: nothing to read (``floor(value)`` gives a call to time): no decoder that returns the
    #: same objects can be faster, so engine time / this is the best ratio there can be.
    floor: Callable[[Any], Callable[[], Any]] | None = None

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
    Workload("dict_100k", "Dictionary, String keys, mixed small values", "container", 100_000, _dict, peers=True),
    Workload("records_20k", 'Array of {"id", "pos": Vector3, "tags": [2], "hp"}', "container", 20_000, _records,
             peers=True),
    Workload("ints_1m", "Array of ints", "container", 1_000_000, lambda n: list(range(n)),
             floor=lambda value: array("q", value).tolist),
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


def _set_consts(text: str, settings: dict[str, str], what: str) -> str:
    """A GDScript with its ``const NAME = ...`` lines set."""
    for const, value in settings.items():
        text, n = re.subn(rf"^const {const} = [^\n#]*", f"const {const} = {value} ", text, count=1, flags=re.M)
        if n != 1:
            raise RuntimeError(f"{what} has no 'const {const} =' line")
    return text


def gd_script(runs: int, divisor: int, out_dir: str, only: str) -> str:
    """bench.gd with its constants set."""
    settings = {"RUNS": str(runs), "DIVISOR": str(divisor), "OUT_DIR": json.dumps(out_dir), "ONLY": json.dumps(only)}
    return _set_consts(GD_SCRIPT.read_text(encoding="utf-8"), settings, "bench.gd")


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


# The small message and the per-call overhead in the engine: CALLS calls of bytes2var /
# var2bytes in a GDScript loop, OS.get_ticks_usec() around the loop, RUNS times.  The empty
# loop is timed too and its cost taken off (a few percent of a call), so the engine is
# charged for its calls only; our side is charged for timeit's loop (tens of nanoseconds).
# Each result is dropped inside the loop, on both sides.  Indented with 4 spaces here, tabs
# when run.
MESSAGE_GD = """\
extends SceneTree

const RUNS = 5
const CALLS = 20000

func joined(times):
    var parts = PoolStringArray()
    for t in times:
        parts.append(str(t))
    return parts.join(",")

func _init():
    var info = Engine.get_version_info()
    print("@@ENGINE %s debug=%s" % [info.string, OS.is_debug_build()])
    var msg = {"type": "move", "id": 12345, "pos": Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}
    var b = var2bytes(msg)
    var nil_b = var2bytes(null)
    var times = {"loop": [], "decode": [], "encode": [], "nil_decode": [], "nil_encode": []}
    for r in range(RUNS):
        var t0 = OS.get_ticks_usec()
        for i in CALLS:
            pass
        var t1 = OS.get_ticks_usec()
        times["loop"].append(t1 - t0)
        t0 = OS.get_ticks_usec()
        for i in CALLS:
            bytes2var(b)
        t1 = OS.get_ticks_usec()
        times["decode"].append(t1 - t0)
        t0 = OS.get_ticks_usec()
        for i in CALLS:
            var2bytes(msg)
        t1 = OS.get_ticks_usec()
        times["encode"].append(t1 - t0)
        t0 = OS.get_ticks_usec()
        for i in CALLS:
            bytes2var(nil_b)
        t1 = OS.get_ticks_usec()
        times["nil_decode"].append(t1 - t0)
        t0 = OS.get_ticks_usec()
        for i in CALLS:
            var2bytes(null)
        t1 = OS.get_ticks_usec()
        times["nil_encode"].append(t1 - t0)
    print("@@MESSAGE %s" % b.hex_encode())
    for k in times:
        print("@@CALLS %s %s" % [k, joined(times[k])])
    quit()
"""


@dataclass
class EngineCalls:
    """MESSAGE_GD's results: the engine's message bytes and its microseconds per call."""

    version: str
    message: bytes
    #: "decode", "encode" (the message), "nil_decode", "nil_encode": us per call, each run,
    #: the empty loop's cost taken off.
    per_call: dict[str, list[float]]
    loop: list[float]  # us per iteration of the empty loop, each run


def run_engine_calls(runs: int, calls: int) -> EngineCalls:
    """Time the small message and a Nil per call in Godot 3."""
    script = re.sub(r"^(?:    )+", lambda m: "\t" * (len(m.group(0)) // 4), MESSAGE_GD, flags=re.M)
    out = _oracles().godot3_run(_set_consts(script, {"RUNS": str(runs), "CALLS": str(calls)}, "MESSAGE_GD"),
                                timeout=600)
    version, data, totals = "?", None, {}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("@@ENGINE "):
            version = line[len("@@ENGINE "):].strip()
        elif parts[:1] == ["@@MESSAGE"] and len(parts) == 2:
            data = bytes.fromhex(parts[1])
        elif parts[:1] == ["@@CALLS"] and len(parts) == 3:
            totals[parts[1]] = [int(x) for x in parts[2].split(",")]
    if data is None or "loop" not in totals:
        raise RuntimeError(f"the engine reported no message timings; its output:\n{out[-4000:]}")
    loop = totals.pop("loop")
    per_call = {k: [(x - empty) / calls for x, empty in zip(v, loop)] for k, v in totals.items()}
    return EngineCalls(version, data, per_call, [x / calls for x in loop])


# ---------------------------------------------------------------------------------------
# our side


@dataclass(frozen=True)
class Codec:
    """What we time: one backend's Decoder/Encoder, of the package or of another codec module (--codec)."""

    name: str
    backend: str  # "c", "python", or "default" (a --codec module without backends)
    decode_at: Callable[[bytes], tuple[Any, int]]  # Decoder.decode: (value, offset after it)
    encode: Callable[[Any], bytes]

    def decode(self, data: bytes) -> Any:
        return self.decode_at(data)[0]


def _load_codec_module(path: str | None) -> ModuleType:
    if path is None:
        return reference_codec
    # Loaded as a module of the package, so that its relative imports work.
    spec = importlib.util.spec_from_file_location("godot_formats._bench_candidate", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def our_codecs(path: str | None) -> tuple[list[Codec], str | None]:
    """One Codec per backend that is built (compiled first), and why the compiled core is missing, if it is."""
    module = _load_codec_module(path)
    name = path or "godot_formats"
    dialect = gf.get_dialect(DIALECT)
    codecs, missing = [], None
    for backend in BACKENDS:
        try:
            decoder, encoder = module.Decoder(dialect, backend=backend), module.Encoder(dialect, backend=backend)
        except ValueError as e:  # the compiled core is not built (or GODOT_FORMATS_PURE is set)
            missing = str(e)
            continue
        except TypeError:  # a codec.py from before the backends: its one codec
            return [Codec(name, "default", module.Decoder(dialect).decode, module.Encoder(dialect).encode)], None
        codecs.append(Codec(name, backend, decoder.decode, encoder.encode))
    return codecs, missing


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


def per_call_us(stmt: str, names: dict[str, Any], calls: int, runs: int, keep_gc: bool) -> list[float]:
    """Microseconds per call of ``stmt``, each of ``runs`` runs of ``calls`` calls.

    timeit's inline loop: no Python function wraps the call (a lambda would add ~50 ns to
    each).  The GC is collected before each run and off inside it unless ``keep_gc``.
    """
    timer = timeit.Timer(stmt, "gc.enable()" if keep_gc else "pass", globals={**names, "gc": gc})
    out = []
    for _ in range(runs):
        gc.collect()
        out.append(timer.timeit(calls) / calls * 1e6)
    return out


def public_call_us(calls: int, runs: int, keep_gc: bool) -> dict[str, Any]:
    """``loads`` of a Nil and ``dumps(None)``, us per call, with this process's backend."""
    names = {"loads": gf.loads, "dumps": gf.dumps, "nil": NIL}
    return {"backend": gf.backend,
            "loads": per_call_us(f"loads(nil, {DIALECT!r})", names, calls, runs, keep_gc),
            "dumps": per_call_us(f"dumps(None, {DIALECT!r})", names, calls, runs, keep_gc)}


def public_call_us_pure(calls: int, runs: int, keep_gc: bool) -> dict[str, Any]:
    """:func:`public_call_us` in a process with the compiled core turned off (GODOT_FORMATS_PURE=1).

    ``loads``/``dumps`` use the process's backend, so the reference's numbers need a
    process of their own while the compiled core is built.
    """
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import bench; "
            f"print(json.dumps(bench.public_call_us({calls}, {runs}, {keep_gc})))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "GODOT_FORMATS_PURE": "1"}, cwd=REPO,
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"timing loads/dumps with GODOT_FORMATS_PURE=1 failed:\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


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


#: How the peers are timed on a row: (the function and its argument ``names["a"]``, or
#: the timeit statement over ``names``) -> each run's time, in the row's unit.
Measure = Callable[[Callable[[Any], Any], str, dict[str, Any]], list[float]]


def _single_call_ms(args: argparse.Namespace) -> Measure:
    """The workloads' method: one call per run, in ms."""
    def measure(fn: Callable[[Any], Any], stmt: str, names: dict[str, Any]) -> list[float]:
        return [x * 1e3 for x in time_runs(fn, names["a"], args.runs, args.gc)]
    return measure


def _per_call_us(args: argparse.Namespace, calls: int) -> Measure:
    """The small message's method: ``calls`` calls per run, us per call."""
    def measure(fn: Callable[[Any], Any], stmt: str, names: dict[str, Any]) -> list[float]:
        return per_call_us(stmt, names, calls, args.runs, args.gc)
    return measure


def peer_fields(value: Any, peer_list: list[peers.Peer], measure: Measure, unit: str) -> dict[str, dict[str, Any]]:
    """Each peer's encoded size and its loads/dumps times on ``value`` (plain for orjson and msgpack)."""
    out = {}
    for p in peer_list:
        v = peers.plain(value) if p.plain else value
        data = p.dump(v)
        p.loads(data)  # the warm-ups, as for ours: this and the dump above, dropped
        names = {"loads": p.loads, "dumps": p.dumps}
        dec = measure(p.loads, "loads(a)", {**names, "a": data})
        enc = measure(p.dump, p.dumps_stmt, {**names, "a": v})
        out[p.name] = {"size": len(data), f"decode_{unit}": statistics.median(dec),
                       f"encode_{unit}": statistics.median(enc), f"decode_runs_{unit}": dec, f"encode_runs_{unit}": enc}
    return out


def add_x_pickle(row: dict[str, Any], backends: list[str]) -> None:
    """Our time / pickle's time, per backend and direction (lower is better)."""
    unit = row.get("unit", "ms")
    pickled = row.get("peers", {}).get("pickle")
    if pickled is None:
        return
    for b in backends:
        for what in ("decode", "encode"):
            ours, theirs = row[f"{b}_{what}_{unit}"], pickled[f"{what}_{unit}"]
            row[f"{b}_{what}_x_pickle"] = ours / theirs if ours is not None and theirs else None


# ---------------------------------------------------------------------------------------
# report


def median_ms(times: list[float] | None) -> float | None:
    return None if not times else statistics.median(times) * 1e3


def _median(values: list[float] | None) -> float | None:
    return None if not values else statistics.median(values)


def _ms(value: float | None) -> str:
    """A time in ms or us: three significant digits or so."""
    return "-" if value is None else f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def target_for(backend: str, kind: str) -> float | None:
    """engine_time / our_time a backend aims for on a kind of row (None: no target)."""
    return (C_TARGETS if backend == "c" else TARGETS).get(kind)


def _ratio(engine: float | None, ours: float | None, target: float | None) -> str:
    if engine is None or ours is None or ours == 0:
        return "-"
    r = round(engine / ours, 2)  # judged as shown: 0.797 is 0.80, on target
    return f"{r:.2f}" + ("" if target is None or r >= target else " (<" + f"{target:g})")


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


def _memory_line(what: str, memory: dict[str, Any], note: str, backend: str = "") -> str:
    peak, held = memory[f"{what}_peak_bytes"], memory[f"{what}_result_bytes"]
    return (f"  {what}{f' ({backend})' if backend else ''}: peak {peak / 1e6:.1f} MB, result {held / 1e6:.1f} MB -> "
            f"peak = {peak / max(held, 1):.2f} x result{note}")


def _best_ratio(row: dict[str, Any], what: str, backend: str) -> str:
    engine, ours = row[f"engine_{what}_runs_ms"], row[f"{backend}_{what}_runs_ms"]
    return f"{min(engine) / min(ours):.2f}" if engine and ours and min(ours) > 0 else "-"


def table(rows: list[dict[str, Any]], backends: list[str]) -> str:
    """Markdown table, a line per workload and backend: medians and their ratio; the last
    column compares the best runs, which a busy machine disturbs less than the medians."""
    head = ("| workload | size | backend | engine decode ms | ours decode ms | ratio | "
            "engine encode ms | ours encode ms | ratio | same bytes | best-run ratios dec / enc |")
    lines = [head, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        for b in backends:
            target = target_for(b, r["kind"])
            dec, enc = r[f"{b}_decode_ms"], r[f"{b}_encode_ms"]
            lines.append(
                f"| {r['name']} ({r['count']:,}) | {r['size']:,} B | {LABELS.get(b, b)} | "
                f"{_ms(r['engine_decode_ms'])} | {_ms(dec)} | {_ratio(r['engine_decode_ms'], dec, target)} | "
                f"{_ms(r['engine_encode_ms'])} | {_ms(enc)} | {_ratio(r['engine_encode_ms'], enc, target)} | "
                f"{r[f'{b}_same_bytes']} | {_best_ratio(r, 'decode', b)} / {_best_ratio(r, 'encode', b)} |")
    return "\n".join(lines)


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def peer_table(rows: list[dict[str, Any]], backends: list[str], peer_names: list[str]) -> str:
    """Markdown table: our times and the peers' on the same objects, and ours / pickle's."""
    labels = [LABELS.get(b, b) for b in backends]
    head = "| workload | op | " + " | ".join(labels + peer_names + [f"{x} x pickle" for x in labels]) + " |"
    lines = [head, "| --- | --- |" + " ---: |" * (2 * len(backends) + len(peer_names))]
    for r in rows:
        unit = r.get("unit", "ms")
        shown = "µs" if unit == "us" else unit
        for what in ("decode", "encode"):
            cells = [_ms(r[f"{b}_{what}_{unit}"]) for b in backends]
            cells += [_ms(r["peers"][p][f"{what}_{unit}"]) for p in peer_names]
            cells += [_times(r.get(f"{b}_{what}_x_pickle")) for b in backends]
            lines.append(f"| {r['name']} | {what} {shown} | " + " | ".join(cells) + " |")
        sizes = [f"{r['size']:,}"] * len(backends) + [f"{r['peers'][p]['size']:,}" for p in peer_names]
        lines.append(f"| {r['name']} | bytes | " + " | ".join(sizes + [""] * len(backends)) + " |")
    return "\n".join(lines)


def call_rows(msg: dict[str, Any] | None, per_call: list[dict[str, Any]], backends: list[str]) -> list[dict[str, Any]]:
    """The lines of the per-call table: the message's decode and encode, then the overhead."""
    out = []
    if msg is not None:
        for what, call in (("decode", "Decoder.decode"), ("encode", "Encoder.encode")):
            out.append({"name": f"message {what} ({msg['size']} B): {call}", "kind": "message",
                        "engine_us": msg[f"engine_{what}_us"], **{f"{b}_us": msg[f"{b}_{what}_us"] for b in backends}})
    return out + [{**r, "kind": "overhead"} for r in per_call]


def call_table(lines_in: list[dict[str, Any]], backends: list[str]) -> str:
    """Markdown table of the per-call times, us per call, with engine_time / our_time."""
    head = "| per call | engine µs | " + " | ".join(f"{LABELS.get(b, b)} µs | ratio" for b in backends) + " |"
    lines = [head, "| --- | ---: |" + " ---: | ---: |" * len(backends)]
    for r in lines_in:
        cells = [f"{_ms(r.get(f'{b}_us'))} | {_ratio(r['engine_us'], r.get(f'{b}_us'), target_for(b, r['kind']))}"
                 for b in backends]
        lines.append(f"| {r['name']} | {_ms(r['engine_us'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _check(row: str, what: str, measure: str, value: float | None, at_least: bool, target: float) -> dict[str, Any]:
    """One target, judged as shown (two decimals)."""
    if value is None:
        result = "not measured"
    else:
        shown = round(value, 2)
        result = "meets" if (shown >= target if at_least else shown <= target) else "misses"
    return {"row": row, "what": what, "measure": measure, "value": value,
            "target": f"{'>=' if at_least else '<='} {target:g}", "result": result}


def target_checks(rows: list[dict[str, Any]], msg: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The compiled core's targets: >= C_TARGETS x the engine on every row and the message,
    and at most C_PICKLE_TARGET x pickle's time on the container rows that timed pickle."""
    checks = []
    for r in rows + ([msg] if msg is not None else []):
        unit = r.get("unit", "ms")
        for what in ("decode", "encode"):
            engine, ours = r.get(f"engine_{what}_{unit}"), r.get(f"c_{what}_{unit}")
            ratio = engine / ours if engine is not None and ours else None
            checks.append(_check(r["name"], what, "x the engine", ratio, True, C_TARGETS[r["kind"]]))
            if r["kind"] == "container" and f"c_{what}_x_pickle" in r:
                checks.append(_check(r["name"], what, "x pickle's time", r[f"c_{what}_x_pickle"], False,
                                     C_PICKLE_TARGET))
    return checks


def check_lines(checks: list[dict[str, Any]], note: str | None) -> list[str]:
    """The checks as text, one line each; the benchmark reports them, it does not assert them."""
    if note is not None:
        return [f"targets of the compiled core: not checked ({note})"]
    lines = ["targets of the compiled core (reported, not asserted):"]
    width = max((len(c["row"]) for c in checks), default=0)
    for c in checks:
        value = "-" if c["value"] is None else f"{c['value']:.2f}"
        lines.append(f"  {c['row']:<{width}} {c['what']}: {value:>6} {c['measure']:<16} "
                     f"(target {c['target']}): {c['result']}")
    return lines


def floor_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Where CPython's own cost of making the objects bounds the ratio a decoder can reach."""
    lines = []
    for r in rows:
        floor, engine, ours = r.get("floor_decode_ms"), r.get("engine_decode_ms"), r.get("floor_ours_decode_ms")
        if floor is None:
            continue
        lines.append(f"\nthe objects' own cost, {r['name']}: CPython makes the same {r['count']:,} objects and their "
                     f"list in {floor:.1f} ms (array.tolist, nothing read)")
        if engine is not None:
            lines.append(f"  so no decoder returning them can pass {engine / floor:.2f} x the engine here "
                         f"(engine {engine:.1f} ms)")
        if ours is not None:
            lines.append(f"  ours ({LABELS.get(r['floor_backend'], r['floor_backend'])}), timed in turns with it: "
                         f"{ours:.1f} ms, {ours / floor:.2f} x that cost")
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help=f"workloads {QUICK_DIVISOR}x smaller")
    parser.add_argument("--no-engine", action="store_true", help="don't run Godot; our numbers only")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    parser.add_argument("--gc", action="store_true", help="keep the cyclic GC enabled inside our timed calls")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated workload names ("
                        + ", ".join(w.name for w in WORKLOADS) + ", and message: the small message and the "
                        "per-call overhead)")
    parser.add_argument("--profile", type=int, metavar="TOP", default=0,
                        help="also cProfile one decode and one encode per workload and backend, TOP functions")
    parser.add_argument("--codec", metavar="FILE", help="time the Decoder/Encoder of this codec.py "
                        "(a modified copy of godot_formats/core/codec.py) instead of the package's")
    return parser


def _chosen_workloads(parser: argparse.ArgumentParser, only: str | None) -> tuple[list[Workload], bool]:
    """The workloads of --only, and whether the message is wanted; a misspelt name stops
    the run before any slow work starts."""
    if not only:
        return list(WORKLOADS), True
    wanted = set(only.split(","))
    unknown = wanted - {w.name for w in WORKLOADS} - {"message"}
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    return [w for w in WORKLOADS if w.name in wanted], "message" in wanted


@dataclass
class Results:
    """What the workloads produce, gathered one workload at a time and reported at the end."""

    engine_note: str
    use_engine: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, dict[str, str]] = field(default_factory=dict)
    memory: dict[str, Any] | None = None
    #: The backends timed, compiled first; why the compiled core is missing (None: it is not).
    backends: list[str] = field(default_factory=list)
    compiled_note: str | None = None
    peer_list: list[peers.Peer] = field(default_factory=list)
    peers_missing: list[str] = field(default_factory=list)
    #: The small message (us per call), and the per-call overhead rows.
    message: dict[str, Any] | None = None
    per_call: list[dict[str, Any]] = field(default_factory=list)

    @property
    def peer_names(self) -> list[str]:
        return [p.name for p in self.peer_list]

    @property
    def all_same(self) -> bool:
        """Whether every re-encoding matched: a speed number for other bytes would mean nothing."""
        rows = self.rows + ([self.message] if self.message is not None else [])
        return all(r["same_bytes"] == "yes" for r in rows)


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


def _codec_plan(args: argparse.Namespace, res: Results, say: Callable[[str], None]) -> list[Codec]:
    """Our backends and the peers, said up front in a line each when one is missing."""
    codecs, missing = our_codecs(args.codec)
    res.backends = [c.backend for c in codecs]
    if missing is not None:
        res.compiled_note = missing
        say(f"{missing} -> timing the reference only")
    elif "c" not in res.backends:
        res.compiled_note = f"{args.codec} has no backends"
    res.peer_list, res.peers_missing = peers.available()
    if res.peers_missing:
        say(f"{', '.join(res.peers_missing)} not installed: skipped ({peers.INSTALL_HINT})")
    return codecs


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


def _engine_row(w: Workload, n: int, data: bytes, engine: EngineRun | None) -> dict[str, Any]:
    """The workload's row before our numbers: every run kept beside the medians, so a noisy run can be spotted later."""
    e_enc, e_dec = (engine.encode, engine.decode) if engine is not None else (None, None)
    return {
        "name": w.name, "label": w.label, "kind": w.kind, "target": TARGETS[w.kind],
        "target_compiled": C_TARGETS[w.kind], "count": n, "size": len(data),
        "engine_decode_ms": median_ms(e_dec), "engine_encode_ms": median_ms(e_enc),
        "engine_decode_runs_ms": [x * 1e3 for x in e_dec or []],
        "engine_encode_runs_ms": [x * 1e3 for x in e_enc or []],
    }


def _backend_fields(codec: Codec, data: bytes, value: Any, args: argparse.Namespace,
                    decode: Callable[[bytes], Any] | None = None) -> dict[str, Any]:
    """One backend's numbers on a workload, its fields prefixed with the backend's name."""
    b, decode = codec.backend, decode or codec.decode
    # Untimed warm-ups, their results dropped: the first free of a large result changes how
    # malloc serves the next ones (glibc raises its mmap threshold), which made whichever
    # backend went first up to 4x slower in its first runs.
    decode(data)
    same = codec.encode(value) == data
    dec = time_runs(decode, data, args.runs, args.gc)
    enc = time_runs(codec.encode, value, args.runs, args.gc)
    return {f"{b}_same_bytes": "yes" if same else "NO",
            f"{b}_decode_ms": median_ms(dec), f"{b}_encode_ms": median_ms(enc),
            f"{b}_decode_runs_ms": [x * 1e3 for x in dec], f"{b}_encode_runs_ms": [x * 1e3 for x in enc]}


def _finish_row(row: dict[str, Any], backends: list[str]) -> dict[str, Any]:
    """Same bytes for every backend, and the fields of before the backends (``ours_*``: the first backend's)."""
    first = backends[0]
    row["same_bytes"] = "yes" if all(row[f"{b}_same_bytes"] == "yes" for b in backends) else "NO"
    row["ours_backend"] = first
    for key in ("decode_ms", "encode_ms", "decode_runs_ms", "encode_runs_ms"):
        row[f"ours_{key}"] = row[f"{first}_{key}"]
    row["load_average"] = _load()
    return row


def _floor_fields(row: dict[str, Any], make: Callable[[], Any], codec: Codec, data: bytes,
                  args: argparse.Namespace) -> None:
    """The objects' own cost, timed in turns with the first backend's decode (the machine's
    memory state moves both alike), so the two medians compare."""
    floor: list[float] = []
    ours: list[float] = []
    for _ in range(max(args.runs, 7)):
        floor += time_runs(lambda _: make(), None, 1, args.gc)
        ours += time_runs(codec.decode, data, 1, args.gc)
    row["floor_decode_ms"], row["floor_ours_decode_ms"] = median_ms(floor), median_ms(ours)
    row["floor_backend"] = codec.backend


def _decode_all(codec: Codec, use_all: Callable[[Any], Any]) -> Callable[[bytes], Any]:
    def decode_all(b: bytes) -> Any:
        return use_all(codec.decode(b))
    return decode_all


def _use_all_row(w: Workload, n: int, data: bytes, base: dict[str, Any], codecs: list[Codec],
                 args: argparse.Namespace) -> dict[str, Any]:
    """The "every element made" row: a lazy value's decode is only fair with the work it defers."""
    assert w.use_all is not None
    built = w.build(n)
    row = {**base, "name": f"{w.name}, every element made"}
    for codec in codecs:
        row.update(_backend_fields(codec, data, built, args, _decode_all(codec, w.use_all)))
    return _finish_row(row, [c.backend for c in codecs])


def _diagnose(w: Workload, codec: Codec, data: bytes, value: Any, args: argparse.Namespace, res: Results) -> None:
    """Memory (floats_10m) and --profile, per backend; the first backend's under the names of before."""
    first = codec.backend == res.backends[0]
    if w.name == "floats_10m":
        peak, held = traced_peak(codec.decode, data)
        enc_peak, enc_held = traced_peak(codec.encode, value)
        memory = {"decode_peak_bytes": peak, "decode_result_bytes": held,
                  "encode_peak_bytes": enc_peak, "encode_result_bytes": enc_held}
        if first or res.memory is None:
            res.memory = {"workload": w.name, "input_bytes": len(data), "backend": codec.backend, **memory,
                          "by_backend": {}}
        res.memory["by_backend"][codec.backend] = memory
    if args.profile:
        key = w.name if first else f"{w.name} ({codec.backend})"
        res.profiles[key] = {"decode": profile(codec.decode, data, args.profile),
                             "encode": profile(codec.encode, value, args.profile)}


def _run_workload(w: Workload, args: argparse.Namespace, divisor: int, codecs: list[Codec], res: Results,
                  say: Callable[[str], None]) -> None:
    """Both sides on one workload, right after each other, so a change in machine load hits both."""
    n = w.count(divisor)
    value_built = w.build(n)
    our_bytes = codecs[-1].encode(value_built)  # the reference's
    del value_built
    data, engine = _engine_side(w, our_bytes, args, divisor, res, say)
    del our_bytes
    row = _engine_row(w, n, data, engine)
    del engine
    for codec in codecs:
        value = codec.decode(data)  # what this backend encodes: its own decoding of the bytes
        say(f"{w.name}: {len(data):,} bytes, ours ({LABELS.get(codec.backend, codec.backend)})...")
        row.update(_backend_fields(codec, data, value, args))
        _diagnose(w, codec, data, value, args, res)
        del value
    if w.floor is not None:
        _floor_fields(row, w.floor(w.build(n)), codecs[0], data, args)
    res.rows.append(_finish_row(row, res.backends))
    if w.peers:
        say(f"{w.name}: {', '.join(res.peer_names)}...")
        row["peers"] = peer_fields(codecs[0].decode(data), res.peer_list, _single_call_ms(args), "ms")
        add_x_pickle(row, res.backends)
    if w.use_all is not None:
        say(f"{w.name}: every element made...")
        res.rows.append(_use_all_row(w, n, data, row, codecs, args))


def _message_row(data: bytes, engine: EngineCalls | None, codecs: list[Codec], peer_list: list[peers.Peer],
                 calls: int, args: argparse.Namespace) -> dict[str, Any]:
    """The small message, us per call: the engine's, each backend's, and the peers'."""
    row: dict[str, Any] = {"name": "message", "label": MESSAGE_LABEL, "kind": "message", "unit": "us",
                           "target_compiled": C_TARGETS["message"], "size": len(data), "hex": data.hex(),
                           "calls": calls}
    for what in ("decode", "encode"):
        runs = engine.per_call[what] if engine is not None else None
        row[f"engine_{what}_us"], row[f"engine_{what}_runs_us"] = _median(runs), runs or []
    for codec in codecs:
        b, value = codec.backend, codec.decode(data)
        dec = per_call_us("dec(a)[0]", {"dec": codec.decode_at, "a": data}, calls, args.runs, args.gc)
        enc = per_call_us("enc(a)", {"enc": codec.encode, "a": value}, calls, args.runs, args.gc)
        row.update({f"{b}_same_bytes": "yes" if codec.encode(value) == data else "NO",
                    f"{b}_decode_us": _median(dec), f"{b}_encode_us": _median(enc),
                    f"{b}_decode_runs_us": dec, f"{b}_encode_runs_us": enc})
    row["same_bytes"] = "yes" if all(row[f"{c.backend}_same_bytes"] == "yes" for c in codecs) else "NO"
    row["peers"] = peer_fields(codecs[0].decode(data), peer_list, _per_call_us(args, calls), "us")
    return row


def _public_calls(backends: list[str], calls: int, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``loads``/``dumps`` per backend: this process's in it, the reference's in a pure process."""
    out = {}
    for b in backends:
        if b == gf.backend:
            out[b] = public_call_us(calls, args.runs, args.gc)
        elif b == "python":
            out[b] = public_call_us_pure(calls, args.runs, args.gc)
        if b in out and out[b]["backend"] != b:
            raise RuntimeError(f"timing loads/dumps for the {b} backend ran the {out[b]['backend']} one")
    return out


def _overhead_rows(engine: EngineCalls | None, codecs: list[Codec], calls: int,
                   args: argparse.Namespace) -> list[dict[str, Any]]:
    """The per-call overhead: a Nil decoded and None encoded, through loads/dumps and through the codec objects."""
    public = _public_calls([c.backend for c in codecs], calls, args)
    shapes = ((f'loads(b"\\0\\0\\0\\0", "{DIALECT}")', "nil_decode", "loads", None),
              (f'dumps(None, "{DIALECT}")', "nil_encode", "dumps", None),
              ('Decoder.decode(b"\\0\\0\\0\\0")', "nil_decode", None, ("dec(a)[0]", NIL)),
              ("Encoder.encode(None)", "nil_encode", None, ("enc(a)", None)))
    rows = []
    for name, engine_key, public_key, stmt in shapes:
        runs = engine.per_call[engine_key] if engine is not None else None
        row: dict[str, Any] = {"name": name, "engine_us": _median(runs), "engine_runs_us": runs or []}
        for codec in codecs:
            if stmt is not None:
                names = {"dec": codec.decode_at, "enc": codec.encode, "a": stmt[1]}
                times = per_call_us(stmt[0], names, calls, args.runs, args.gc)
            elif codec.backend in public and public_key is not None:
                times = public[codec.backend][public_key]
            else:
                continue
            row[f"{codec.backend}_us"], row[f"{codec.backend}_runs_us"] = _median(times), times
        rows.append(row)
    return rows


def _run_message(args: argparse.Namespace, divisor: int, codecs: list[Codec], res: Results,
                 say: Callable[[str], None]) -> None:
    """The small message and the per-call overhead, the engine first (it gives the bytes)."""
    calls = MESSAGE_CALLS // divisor
    ours = codecs[-1].encode(message())
    engine = None
    if res.use_engine:
        say("message: Godot 3...")
        engine = run_engine_calls(args.runs, calls)
        res.engine_note = engine.version
        if engine.message != ours:
            say("WARNING message: the value built in Python does not encode to the engine's bytes")
    say(f"message: {calls:,} calls per run, ours and {', '.join(res.peer_names)}...")
    res.message = _message_row(engine.message if engine is not None else ours, engine, codecs, res.peer_list,
                               calls, args)
    add_x_pickle(res.message, res.backends)
    say("per-call overhead...")
    res.per_call = _overhead_rows(engine, codecs, calls * 5, args)


def _print_header(res: Results, info: dict[str, Any], args: argparse.Namespace) -> None:
    """The machine and its load first, since they decide how far the numbers can be trusted."""
    print()
    print(f"engine: Godot {res.engine_note}" if res.use_engine else f"engine: {res.engine_note}")
    m = info["machine"]
    backends = " and ".join(f"{LABELS[b]} ({b})" if b in LABELS else b for b in res.backends)
    print(f"ours: {info['codec']}, {backends}, on Python {m['python']} ({m['implementation']}), "
          f"{m['cpu']} x{m['cpus']}, {m['date']}")
    if res.compiled_note is not None:
        print(f"{res.compiled_note}: the reference only")
    load = m["load_average"]
    if load is not None:
        busy = " (BUSY MACHINE: numbers are noisy)" if load[0] > 0.75 * (m["cpus"] or 1) else ""
        print(f"load average at the end: {load[0]} {load[1]} {load[2]}{busy}")
    print(f"median of {args.runs} runs; ratio = engine time / our time (higher is better; targets: reference "
          f"packed >= {TARGETS['packed']}, containers >= {TARGETS['container']}; compiled core packed >= "
          f"{C_TARGETS['packed']:g}, containers and the small message >= {C_TARGETS['container']:g}); "
          f"GC {'enabled' if args.gc else 'disabled'} in our timed calls\n")


def _print_peers_and_calls(res: Results, args: argparse.Namespace) -> None:
    peer_rows = [r for r in res.rows if "peers" in r] + ([res.message] if res.message is not None else [])
    if peer_rows:
        print(f"\npeers on the same Python objects: median times; x pickle = our time / pickle's time "
              f"(lower is better; compiled core target <= {C_PICKLE_TARGET:g} on the containers). "
              f"{peers.PLAIN_NOTE}.")
        if res.peers_missing:
            print(f"{', '.join(res.peers_missing)} not installed, so not shown: {peers.INSTALL_HINT} "
                  "(the optional extra 'bench')")
        print()
        print(peer_table(peer_rows, res.backends, res.peer_names))
    if res.message is not None:
        msg = res.message
        print(f"\nper call, µs (median of {args.runs} runs of {msg['calls']:,} calls; the overhead rows "
              f"{msg['calls'] * 5:,}): the message is {MESSAGE_LABEL}, {msg['size']} bytes in {DIALECT} "
              f"(same bytes: {msg['same_bytes']}). The engine: bytes2var/var2bytes in a GDScript loop, the "
              "empty loop's cost taken off; ours: timeit's loop over each backend's Decoder/Encoder; the "
              "overhead rows also go through loads/dumps\n")
        print(call_table(call_rows(msg, res.per_call, res.backends), res.backends))


def _print_report(res: Results, info: dict[str, Any], args: argparse.Namespace) -> None:
    """The human report: header, the workloads, the peers and the small message, the targets, memory, profiles."""
    _print_header(res, info, args)
    print(table(res.rows, res.backends))
    _print_peers_and_calls(res, args)
    print()
    print("\n".join(check_lines(info["targets"], res.compiled_note)))
    print("\n".join(floor_lines(res.rows)))
    memory = res.memory
    if memory is not None:
        print(f"\npeak memory (tracemalloc), {memory['workload']}, input {memory['input_bytes'] / 1e6:.1f} MB "
              "(allocated before tracing, so not counted):")
        for b, mem in memory["by_backend"].items():
            print(_memory_line("decode", mem, " (target 1.00: input + result only)", LABELS.get(b, b)))
            print(_memory_line("encode", mem, "", LABELS.get(b, b)))
    for name, prof in res.profiles.items():
        label = name if name.endswith(")") else f"{name} ({res.backends[0]})"
        for what, text in prof.items():
            print(f"\n--- cProfile: {label} {what} (sorted by own time) ---\n{text}")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    divisor = QUICK_DIVISOR if args.quick else 1
    workloads, with_message = _chosen_workloads(parser, args.only)
    # With --json, standard output holds only the document.
    say: Callable[[str], None] = (lambda s: print(s, file=sys.stderr)) if args.json else print
    res = _engine_plan(args, say)
    codecs = _codec_plan(args, res, say)
    for w in workloads:
        _run_workload(w, args, divisor, codecs, res, say)
    if with_message:
        _run_message(args, divisor, codecs, res, say)

    info = {"engine": res.engine_note, "codec": codecs[0].name, "runs": args.runs, "quick": args.quick,
            "gc_in_timed_calls": args.gc, "machine": machine(), "backends": res.backends,
            "compiled_core": res.compiled_note or "built", "peers": res.peer_names,
            "peers_missing": res.peers_missing, "peers_note": peers.PLAIN_NOTE,
            "targets_reference": TARGETS, "targets_compiled": C_TARGETS,
            "target_compiled_x_pickle": C_PICKLE_TARGET,
            "targets": [] if res.compiled_note else target_checks(res.rows, res.message)}
    if args.json:
        print(json.dumps({"info": info, "workloads": res.rows, "memory": res.memory, "profiles": res.profiles,
                          "message": res.message, "per_call": res.per_call}, indent=1))
    else:
        _print_report(res, info, args)
    return 0 if res.all_same else 1


if __name__ == "__main__":
    sys.exit(main())
