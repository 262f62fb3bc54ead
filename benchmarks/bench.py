#!/usr/bin/env python3
"""Time what users run -- the codec, whole save files, large saves -- against the real Godot 3 engine and peers.

    python3 benchmarks/bench.py                # everything, 5 runs, the engine if installed
    python3 benchmarks/bench.py --quick        # everything 10x smaller (a couple of minutes)
    python3 benchmarks/bench.py --no-engine    # our numbers only
    python3 benchmarks/bench.py --mode objects # the codec rows through Decoder/Encoder objects, GC off
    python3 benchmarks/bench.py --big          # also the 500 MB save (if memory allows)
    python3 benchmarks/bench.py --json         # machine-readable results
    python3 benchmarks/bench.py --profile 15   # also cProfile each workload (top 15 functions)

Four parts, each in turns with the engine so that both sides' numbers are close in time.  The
engine's runs of a workload, of the message and of a file layer are split around ours (half
before, the rest right after the compiled core's, ``wholefile.split_runs``): the shared machine's speed
moves by up to 2x over seconds, alike for both sides, and a side timed only before the other
drew its own luck.

* **The codec workloads** (``--only dict_100k,...``): ``bench.gd`` builds each workload inside
  ``godot3-server``, times ``var2bytes``/``bytes2var`` there (``OS.get_ticks_usec`` around single
  calls) and writes the engine's bytes; right after, we time decoding and encoding exactly those
  bytes.  By default (``--mode users``) as users call the library: ``gf.loads(data, "godot3")`` and
  ``gf.dumps(value, "godot3")`` -- a dialect name, the GC on, in a process that already holds a
  live heap (``--heap``, a million small dicts: a long-running program's data) -- with the compiled
  core (this process) and the pure-Python reference (a process with ``GODOT_FORMATS_PURE=1``, as
  ``loads`` takes the process's backend).  ``--mode objects`` gives the numbers of before: each
  backend's ``Decoder``/``Encoder`` object with the GC off inside the call (``--gc`` keeps it on);
  ``--mode both`` prints both.  Each re-encoding must be byte-for-byte the engine's.  On the
  container workloads, the strings and a small game message, pickle, orjson, msgpack and msgspec
  run on the same Python objects (``peers.py``), under the same GC and heap.
* **Whole save files** (``--only files``, ``wholefile.py``): the engine's ``File`` + ``store_var``
  / ``get_var`` on a 6.7 MB save in every layer it writes (plain, ``open_compressed`` FastLZ,
  Deflate, Zstd, Gzip, ``open_encrypted_with_pass``), against ``gf.open(path).values``,
  ``sf.save(out)`` and ``gf.open(path).save(out, dialect="godot4")`` on the same files.
* **Scaling** (``--only scaling``, ``scaling.py``): a 5 MB and a 50 MB save (``--big``: 500 MB),
  read, decoded, converted to Godot 4, encoded and written, in MB/s per step with the peak memory.
* **The small message and the per-call overhead**, in microseconds per call.

At the end, the targets of issue 22 are checked, one line each: the benchmark reports, it never
asserts.  Ratios are engine time / our time: above 1 we are faster.

Why the method is fair: both sides time the same work on the same bytes or files, neither pays
for building its input or for freeing the previous result, and both are medians.  The GC is
collected before each of our runs (outside the timing) and left on inside it, as in a user's
program; the engine has no cyclic GC to pay for.  benchmarks/README.md says how each side is timed.
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

import bench_values  # noqa: E402
import peers  # noqa: E402
import scaling  # noqa: E402
import wholefile  # noqa: E402

import godot_formats as gf  # noqa: E402
from godot_formats.core import codec as reference_codec  # noqa: E402
from godot_formats.core import types as t  # noqa: E402

DIALECT = "godot3"
GD_SCRIPT = HERE / "bench.gd"
QUICK_DIVISOR = 10

#: Our backends, fastest first: the compiled core and the pure-Python reference.
BACKENDS = ("c", "python")
#: How ours is timed, by the prefix of its fields: as users call it (``gf.loads``/``gf.dumps``,
#: the GC on, a live heap: the default) under the backend's name, or through the backend's
#: Decoder/Encoder objects with the GC off (``--mode objects``) with ``_obj`` after it.
LABELS = {"c": "compiled", "python": "reference", "c_obj": "compiled, Decoder GC off",
          "python_obj": "reference, Decoder GC off", "default": "default"}
MODES = ("users", "objects", "both")
#: The live heap of the "as users call it" mode: this many small dicts (bench_values.live_heap).
HEAP_ITEMS = 1_000_000
#: The parts of a run besides the codec workloads (--only names them too).
PARTS = ("message", "files", "scaling")

#: engine_time / our_time the reference aims for: packed arrays are one memory copy on both
#: sides, containers are one Python object per element on ours.
TARGETS = {"packed": 0.8, "container": 0.2}
#: The compiled core's targets (its issue): engine_time / our_time on every row ...
C_TARGETS = {"packed": 1.5, "container": 2.0, "message": 2.0}
#: ... and at most this many times pickle's time on the container rows ...
C_PICKLE_TARGET = 1.5
#: ... and at most msgspec's time (issue 22: at least as fast as msgspec's msgpack codec) on the
#: rows where msgspec runs, as users call the library.
C_MSGSPEC_TARGET = 1.0
#: The peers whose time ours is divided by (x pickle, x msgspec), when they are installed.
X_PEERS = ("pickle", "msgspec")
#: Whole files (issue 22): engine time / ours at least this, reading, writing and migrating.
FILE_TARGET = 2.0
#: Scaling (issue 22): no step's CPU time per byte above the smallest save's.
SCALING_TARGET = 1.0

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
    #: Whether pickle, orjson, msgpack and msgspec are timed on it too (on the "every element
    #: made" row when there is one: the peers return every element).
    peers: bool = False
    #: What it costs CPython alone to make the Python objects a decode returns, from C with
    #: nothing to read (``floor(value)`` gives a call to time): no decoder that returns the
    #: same objects can be faster, so engine time / this is the best ratio there can be.
    floor: Callable[[Any], Callable[[], Any]] | None = None

    def count(self, divisor: int) -> int:
        return self.size // divisor


# perf.gd's pattern, stored as float32.  Its literal -0.0 reaches the array as +0.0 in
# Godot 3.2.3 (the engine writes 00000000 for it), so the copy here says 0.0.
_FLOATS = (0.0, 1.5, -2.25, 3.0e10, 0.1, 0.0, 7.0, 1e-3)
# The container workloads' values (bench_values: the whole-file save is made of the same).
_dict, _records = bench_values.dict_of, bench_values.records_of


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
    Workload("ints_1m", "Array of ints", "container", 1_000_000, lambda n: list(range(n)), peers=True,
             floor=lambda value: array("q", value).tolist),
    Workload("strings_100k", 'PoolStringArray of short strings ("s0"...)', "packed", 100_000,
             lambda n: t.PackedStringArray(f"s{i}" for i in range(n)), use_all=lambda v: v.tolist(), peers=True),
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


#: A GDScript with its ``const NAME = ...`` lines set (shared with wholefile.py).
_set_consts = wholefile.set_consts


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

    def joined(self, more: EngineCalls) -> EngineCalls:
        """These runs and ``more``'s (the same message: the engine's bytes must not change)."""
        if more.message != self.message:
            raise RuntimeError("the engine's second message run wrote other bytes")
        return EngineCalls(self.version, self.message, {k: v + more.per_call[k] for k, v in self.per_call.items()},
                           self.loop + more.loop)


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
    """What we time: one backend, as users call it or through its Decoder/Encoder objects.

    ``key`` prefixes its fields in the rows (see LABELS).  As users call it (``users``): the
    public ``gf.loads``/``gf.dumps`` with a dialect name and the GC on; those take the process's
    backend, so the reference's run in a ``GODOT_FORMATS_PURE=1`` process (``remote``), and its
    ``decode_at``/``encode`` here are its objects', for the untimed work (values, memory, profiles).
    """

    name: str
    backend: str  # "c", "python", or "default" (a --codec module without backends)
    decode_at: Callable[[bytes], tuple[Any, int]]  # Decoder.decode: (value, offset after it)
    encode: Callable[[Any], bytes]
    key: str = ""
    users: bool = False
    remote: bool = False

    def decode(self, data: bytes) -> Any:
        return self.decode_at(data)[0]

    def keep_gc(self, args: argparse.Namespace) -> bool:
        """The GC stays on inside the timed call as users call it, and in objects mode with --gc."""
        return self.users or bool(args.gc)

    @property
    def calls(self) -> tuple[str, str, dict[str, Any]]:
        """timeit's statements for one decode and one encode of ``a``, and the names they use."""
        if self.users:
            return (f"loads(a, {DIALECT!r})", f"dumps(a, {DIALECT!r})", {"loads": gf.loads, "dumps": gf.dumps})
        return "dec(a)[0]", "enc(a)", {"dec": self.decode_at, "enc": self.encode}


def _users_loads(data: bytes) -> tuple[Any, int]:
    return gf.loads(data, DIALECT), len(data)


def _users_dumps(value: Any) -> bytes:
    return gf.dumps(value, DIALECT)


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


def object_codecs(path: str | None, suffix: str = "") -> tuple[list[Codec], str | None]:
    """One Codec per backend that is built (compiled first), through its Decoder/Encoder objects,
    and why the compiled core is missing, if it is."""
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
            return [Codec(name, "default", module.Decoder(dialect).decode, module.Encoder(dialect).encode,
                          "default")], None
        codecs.append(Codec(name, backend, decoder.decode, encoder.encode, backend + suffix))
    return codecs, missing


def our_codecs(path: str | None, mode: str = "objects") -> tuple[list[Codec], str | None]:
    """The Codecs of a mode (users first in ``both``), and why the compiled core is missing, if it is.

    As users call it, this process's backend is timed here and the reference, when the compiled
    core is this process's, in a pure process.
    """
    objects, missing = object_codecs(path, "_obj")
    if mode == "objects":
        return objects, missing
    users = []
    for c in objects:
        local = c.backend == gf.backend
        users.append(Codec("godot_formats", c.backend, _users_loads if local else c.decode_at,
                           _users_dumps if local else c.encode, c.backend, users=True, remote=not local))
    return users + (objects if mode == "both" else []), missing


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


def _single_call_ms(runs: int, keep_gc: bool) -> Measure:
    """The workloads' method: one call per run, in ms."""
    def measure(fn: Callable[[Any], Any], stmt: str, names: dict[str, Any]) -> list[float]:
        return [x * 1e3 for x in time_runs(fn, names["a"], runs, keep_gc)]
    return measure


def _per_call_us(runs: int, keep_gc: bool, calls: int) -> Measure:
    """The small message's method: ``calls`` calls per run, us per call."""
    def measure(fn: Callable[[Any], Any], stmt: str, names: dict[str, Any]) -> list[float]:
        return per_call_us(stmt, names, calls, runs, keep_gc)
    return measure


def peer_fields(value: Any, peer_list: list[peers.Peer], measure: Measure, unit: str) -> dict[str, dict[str, Any]]:
    """Each peer's encoded size and its loads/dumps times on ``value`` (plain for orjson, msgpack and msgspec)."""
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


def add_x_peers(row: dict[str, Any], backends: list[str]) -> None:
    """Our time / pickle's and msgspec's time (X_PEERS), per backend and direction (lower is better)."""
    unit = row.get("unit", "ms")
    for name in X_PEERS:
        theirs_row = row.get("peers", {}).get(name)
        if theirs_row is None:
            continue
        for b in backends:
            for what in ("decode", "encode"):
                ours, theirs = row.get(f"{b}_{what}_{unit}"), theirs_row[f"{what}_{unit}"]
                row[f"{b}_{what}_x_{name}"] = ours / theirs if ours is not None and theirs else None


# ---------------------------------------------------------------------------------------
# report


def median_ms(times: list[float] | None) -> float | None:
    return None if not times else statistics.median(times) * 1e3


def _median(values: list[float] | None) -> float | None:
    return None if not values else statistics.median(values)


def _ms(value: float | None) -> str:
    """A time in ms or us: three significant digits or so."""
    return "-" if value is None else f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def target_for(key: str, kind: str) -> float | None:
    """engine_time / our_time a backend (a field prefix: "c", "c_obj"...) aims for on a kind of row (None: none)."""
    return (C_TARGETS if key.split("_")[0] == "c" else TARGETS).get(kind)


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
    """Markdown table: our times and the peers' on the same objects, and ours / pickle's and msgspec's."""
    labels = [LABELS.get(b, b) for b in backends]
    # Ours / theirs as users call it (the _obj columns too when they are all there is).
    compared = [b for b in backends if not b.endswith("_obj")] or backends
    ratios = [(b, x) for x in X_PEERS if x in peer_names for b in compared]
    head = "| workload | op | " + " | ".join(labels + peer_names + [f"{LABELS.get(b, b)} x {x}" for b, x in ratios])
    lines = [head + " |", "| --- | --- |" + " ---: |" * (len(backends) + len(peer_names) + len(ratios))]
    for r in rows:
        unit = r.get("unit", "ms")
        shown = "µs" if unit == "us" else unit
        for what in ("decode", "encode"):
            cells = [_ms(r[f"{b}_{what}_{unit}"]) for b in backends]
            cells += [_ms(r["peers"][p][f"{what}_{unit}"]) for p in peer_names]
            cells += [_times(r.get(f"{b}_{what}_x_{x}")) for b, x in ratios]
            lines.append(f"| {r['name']} | {what} {shown} | " + " | ".join(cells) + " |")
        sizes = [f"{r['size']:,}"] * len(backends) + [f"{r['peers'][p]['size']:,}" for p in peer_names]
        lines.append(f"| {r['name']} | bytes | " + " | ".join(sizes + [""] * len(ratios)) + " |")
    return "\n".join(lines)


def call_rows(msg: dict[str, Any] | None, per_call: list[dict[str, Any]], backends: list[str]) -> list[dict[str, Any]]:
    """The lines of the per-call table: the message's decode and encode, then the overhead."""
    out = []
    if msg is not None:
        for what in ("decode", "encode"):
            out.append({"name": f"message {what} ({msg['size']} B)", "kind": "message",
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


def _headline(rows: list[dict[str, Any]]) -> str:
    """The compiled core's field prefix whose targets are checked: as users call it when timed so."""
    return "c" if any("c_decode_ms" in r or "c_decode_us" in r for r in rows) else "c_obj"


def target_checks(rows: list[dict[str, Any]], msg: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The compiled core's targets: >= C_TARGETS x the engine on every row and the message, at most
    C_PICKLE_TARGET x pickle's time on the container rows and C_MSGSPEC_TARGET x msgspec's on every
    row that timed it."""
    checks = []
    every = rows + ([msg] if msg is not None else [])
    c = _headline(every)
    for r in every:
        unit = r.get("unit", "ms")
        for what in ("decode", "encode"):
            engine, ours = r.get(f"engine_{what}_{unit}"), r.get(f"{c}_{what}_{unit}")
            ratio = engine / ours if engine is not None and ours else None
            checks.append(_check(r["name"], what, "x the engine", ratio, True, C_TARGETS[r["kind"]]))
            if r["kind"] == "container" and f"{c}_{what}_x_pickle" in r:
                checks.append(_check(r["name"], what, "x pickle's time", r[f"{c}_{what}_x_pickle"], False,
                                     C_PICKLE_TARGET))
            if f"{c}_{what}_x_msgspec" in r:
                checks.append(_check(r["name"], what, "x msgspec's time", r[f"{c}_{what}_x_msgspec"], False,
                                     C_MSGSPEC_TARGET))
    return checks


def file_checks(rows: list[dict[str, Any]], scaled: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 22's whole-file targets (>= FILE_TARGET x the engine reading, writing and migrating,
    each layer) and its scaling target (no step slower per byte than at the smallest size)."""
    checks = []
    for r in rows:
        for op, what in (("open", "read (detected)"), ("open_given", "read (godot3)"), ("save", "write"),
                         ("migrate", "migrate")):
            checks.append(_check(f"file, {r['layer']}", what, "x the engine", r.get(f"{op}_ratio"), True,
                                 FILE_TARGET))
    for r in scaled[1:]:
        for step in scaling.STEPS:
            # The decode beside the objects' own cost (pickle.loads making the same objects): how much
            # of its growth per byte is CPython's.
            floor = r.get("floor_per_byte_x") if step == "decode" else None
            what = step if floor is None else f"{step} (pickle.loads {floor:.2f})"
            checks.append(_check(f"scaling, {scaling.size_text(r['size'])}", what, "x CPU per byte at the smallest",
                                 r.get(f"{step}_per_byte_x"), False, SCALING_TARGET))
    return checks


def check_lines(checks: list[dict[str, Any]], note: str | None) -> list[str]:
    """The checks as text, one line each; the benchmark reports them, it does not assert them."""
    if note is not None:
        return [f"targets of the compiled core: not checked ({note})"]
    lines = ["targets of the compiled core (reported, not asserted):"]
    unmeasured = [c for c in checks if c["result"] == "not measured"]
    checks = [c for c in checks if c["result"] != "not measured"]
    width = max((len(c["row"]) for c in checks), default=0)
    what_width = max((len(c["what"]) for c in checks), default=0)
    measure_width = max((len(c["measure"]) for c in checks), default=0)
    if unmeasured:
        lines.append(f"  {len(unmeasured)} not measured (no engine, or a part not run): "
                     f"{', '.join(dict.fromkeys(c['row'] for c in unmeasured))}")
    for c in checks:
        value = "-" if c["value"] is None else f"{c['value']:.2f}"
        lines.append(f"  {c['row']:<{width}} {c['what'] + ':':<{what_width + 1}} {value:>6} "
                     f"{c['measure']:<{measure_width}} (target {c['target']}): {c['result']}")
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
    parser.add_argument("--quick", action="store_true",
                        help=f"everything {QUICK_DIVISOR}x smaller, the live heap too (a smoke run)")
    parser.add_argument("--divisor", type=int, metavar="N", help="every size divided by N (--quick: "
                        f"{QUICK_DIVISOR}); the tests run tiny sizes with it")
    parser.add_argument("--no-engine", action="store_true", help="don't run Godot; our numbers only")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the tables")
    parser.add_argument("--mode", choices=MODES, default="users",
                        help="users: gf.loads/gf.dumps with a dialect name, GC on, a live heap (the default); "
                        "objects: each backend's Decoder/Encoder, GC off (the numbers of before); both")
    parser.add_argument("--heap", type=int, metavar="ITEMS", help=f"small dicts held live while timing "
                        f"({HEAP_ITEMS:,}, a tenth with --quick; 0: none)")
    parser.add_argument("--gc", action="store_true", help="objects mode: keep the cyclic GC on inside the calls")
    parser.add_argument("--big", action="store_true", help=f"scaling: also a {scaling.BIG_MB:g} MB save, if "
                        "free memory and disk allow")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated parts: workload names ("
                        + ", ".join(w.name for w in WORKLOADS) + "), message (the small message and the "
                        "per-call overhead), files (whole save files), scaling")
    parser.add_argument("--profile", type=int, metavar="TOP", default=0,
                        help="also cProfile one decode and one encode per workload and backend, TOP functions")
    parser.add_argument("--codec", metavar="FILE", help="time the Decoder/Encoder of this codec.py "
                        "(a modified copy of godot_formats/core/codec.py) instead of the package's (objects mode)")
    parser.add_argument("--worker", metavar="SPEC", help=argparse.SUPPRESS)
    return parser


def _chosen(parser: argparse.ArgumentParser, only: str | None) -> tuple[list[Workload], set[str]]:
    """The workloads and the other parts (PARTS) of --only; a misspelt name stops the run
    before any slow work starts."""
    if not only:
        return list(WORKLOADS), set(PARTS)
    wanted = set(only.split(","))
    unknown = wanted - {w.name for w in WORKLOADS} - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    return [w for w in WORKLOADS if w.name in wanted], wanted & set(PARTS)


@dataclass
class Results:
    """What the parts produce, gathered one at a time and reported at the end."""

    engine_note: str
    use_engine: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, dict[str, str]] = field(default_factory=dict)
    memory: dict[str, Any] | None = None
    #: The field prefixes of our rows (LABELS), compiled first; why the compiled core is missing (None: it is not).
    backends: list[str] = field(default_factory=list)
    compiled_note: str | None = None
    peer_list: list[peers.Peer] = field(default_factory=list)
    peers_missing: list[str] = field(default_factory=list)
    #: Whether the peers run with the GC on (as users call it) or off (objects mode).
    peers_gc: bool = True
    #: The small message (us per call), and the per-call overhead rows.
    message: dict[str, Any] | None = None
    per_call: list[dict[str, Any]] = field(default_factory=list)
    #: Whole save files (wholefile.py), and the scaling rows (scaling.py) with the sizes skipped.
    files: list[dict[str, Any]] = field(default_factory=list)
    scaling: list[dict[str, Any]] = field(default_factory=list)
    scaling_skipped: list[str] = field(default_factory=list)

    @property
    def peer_names(self) -> list[str]:
        return [p.name for p in self.peer_list]

    @property
    def all_same(self) -> bool:
        """Whether every re-encoding and file check held: a speed number for other bytes would mean nothing."""
        rows = self.rows + ([self.message] if self.message is not None else [])
        return all(r["same_bytes"] == "yes" for r in rows) and wholefile.all_ok(self.files)


def _engine_plan(args: argparse.Namespace, say: Callable[[str], None]) -> Results:
    """Whether the engine takes part, said up front: a run without it is easy to mistake for one with it."""
    if args.no_engine:
        return Results("not run (--no-engine)", False)
    reason = engine_unavailable()
    if reason is None:
        say(f"Godot 3 and ours take turns, one workload or file at a time ({args.runs} runs per measurement)")
        return Results("not run (--no-engine)", True)
    note = f"not available: {reason}"
    say(f"Godot 3 engine {note}\n-> printing our numbers only")
    return Results(note, False)


def _codec_plan(args: argparse.Namespace, res: Results, say: Callable[[str], None]) -> list[Codec]:
    """Our backends and the peers, said up front in a line each when one is missing."""
    codecs, missing = our_codecs(args.codec, args.mode)
    res.backends = [c.key for c in codecs]
    res.peers_gc = args.mode != "objects" or bool(args.gc)
    if missing is not None:
        res.compiled_note = missing
        say(f"{missing} -> timing the reference only")
    elif not any(c.backend == "c" for c in codecs):
        res.compiled_note = f"{args.codec} has no backends"
    res.peer_list, res.peers_missing = peers.available()
    if res.peers_missing:
        say(f"{', '.join(res.peers_missing)} not installed: skipped ({peers.INSTALL_HINT})")
    return codecs


def _engine_side(w: Workload, our_bytes: bytes, args: argparse.Namespace, divisor: int, res: Results,
                 say: Callable[[str], None]) -> tuple[bytes, EngineRun | None]:
    """The bytes both sides time (the engine's when it runs, else ours) and the engine's runs before ours."""
    if not res.use_engine:
        return our_bytes, None
    say(f"{w.name}: Godot 3...")
    engine = run_engine(wholefile.split_runs(args.runs)[0], divisor, w.name)
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
    """One codec's numbers on a workload, in this process, its fields prefixed with its key."""
    b, decode, keep_gc = codec.key, decode or codec.decode, codec.keep_gc(args)
    # Untimed warm-ups, their results dropped: the first free of a large result changes how
    # malloc serves the next ones (glibc raises its mmap threshold), which made whichever
    # backend went first up to 4x slower in its first runs.
    decode(data)
    same = codec.encode(value) == data
    dec = time_runs(decode, data, args.runs, keep_gc)
    enc = time_runs(codec.encode, value, args.runs, keep_gc)
    return {f"{b}_same_bytes": "yes" if same else "NO",
            f"{b}_decode_ms": median_ms(dec), f"{b}_encode_ms": median_ms(enc),
            f"{b}_decode_runs_ms": [x * 1e3 for x in dec], f"{b}_encode_runs_ms": [x * 1e3 for x in enc]}


def _local_fields(codec: Codec, data: bytes, args: argparse.Namespace, w: Workload, n: int,
                  every_element: bool) -> dict[str, Any]:
    """A workload's row, or its "every element made" row (decode, then use every element; encode
    the value built in Python), timed in this process."""
    if every_element:
        assert w.use_all is not None
        return _backend_fields(codec, data, w.build(n), args, _decode_all(codec, w.use_all))
    return _backend_fields(codec, data, codec.decode(data), args)


def _remote(codec: Codec, spec: dict[str, Any], data: bytes, args: argparse.Namespace) -> dict[str, Any]:
    """A remote codec's fields: the work of ``--worker SPEC`` in a GODOT_FORMATS_PURE=1 process that
    builds its own live heap (``loads``/``dumps`` there take the reference)."""
    with tempfile.TemporaryDirectory(prefix="godot-formats-bench-worker-") as tmp:
        path = Path(tmp, "data.bin")
        path.write_bytes(data)
        spec = {**spec, "data": str(path), "runs": args.runs, "heap": args.heap, "key": codec.key}
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
                              env={**os.environ, "GODOT_FORMATS_PURE": "1"}, cwd=REPO, capture_output=True,
                              text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"timing the {codec.backend} backend in a pure process failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    if result.pop("backend") != codec.backend:
        raise RuntimeError(f"timing loads/dumps for the {codec.backend} backend ran another one")
    return result


def _timed_fields(codec: Codec, data: bytes, args: argparse.Namespace, w: Workload, n: int,
                  every_element: bool = False) -> dict[str, Any]:
    if codec.remote:
        return _remote(codec, {"kind": "workload", "workload": w.name, "n": n, "every_element": every_element},
                       data, args)
    return _local_fields(codec, data, args, w, n, every_element)


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """The other end of :func:`_remote`: time ``loads``/``dumps`` with this process's backend, GC on,
    holding a live heap, on the workload or message of ``spec``."""
    live = bench_values.live_heap(spec["heap"])
    data = Path(spec["data"]).read_bytes()
    codec = Codec("godot_formats", gf.backend, _users_loads, _users_dumps, spec["key"], users=True)
    args = argparse.Namespace(runs=spec["runs"], gc=True, heap=spec["heap"])
    if spec["kind"] == "message":
        out = _message_fields(codec, data, spec["calls"], args)
    else:
        w = next(x for x in WORKLOADS if x.name == spec["workload"])
        out = _local_fields(codec, data, args, w, spec["n"], spec["every_element"])
    del live
    return {"backend": gf.backend, **out}


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
    keep_gc = codec.keep_gc(args)
    for _ in range(max(args.runs, 7)):
        floor += time_runs(lambda _: make(), None, 1, keep_gc)
        ours += time_runs(codec.decode, data, 1, keep_gc)
    row["floor_decode_ms"], row["floor_ours_decode_ms"] = median_ms(floor), median_ms(ours)
    row["floor_backend"] = codec.key


def _decode_all(codec: Codec, use_all: Callable[[Any], Any]) -> Callable[[bytes], Any]:
    def decode_all(b: bytes) -> Any:
        return use_all(codec.decode(b))
    return decode_all


def _use_all_row(w: Workload, n: int, data: bytes, base: dict[str, Any], codecs: list[Codec],
                 args: argparse.Namespace) -> dict[str, Any]:
    """The "every element made" row: a lazy value's decode is only fair with the work it defers."""
    row = {k: v for k, v in base.items() if k != "peers" and "_x_" not in k}
    row["name"] = f"{w.name}, every element made"
    for codec in codecs:
        row.update(_timed_fields(codec, data, args, w, n, every_element=True))
    return _finish_row(row, [c.key for c in codecs])


def _diagnose(w: Workload, codec: Codec, data: bytes, args: argparse.Namespace, res: Results) -> None:
    """Memory (floats_10m) and --profile, per backend (a remote one's through its objects, here);
    the first backend's under the names of before."""
    if w.name != "floats_10m" and not args.profile:
        return
    value = codec.decode(data)
    first = codec.key == res.backends[0]
    if w.name == "floats_10m":
        peak, held = traced_peak(codec.decode, data)
        enc_peak, enc_held = traced_peak(codec.encode, value)
        memory = {"decode_peak_bytes": peak, "decode_result_bytes": held,
                  "encode_peak_bytes": enc_peak, "encode_result_bytes": enc_held}
        if first or res.memory is None:
            res.memory = {"workload": w.name, "input_bytes": len(data), "backend": codec.key, **memory,
                          "by_backend": {}}
        res.memory["by_backend"][codec.key] = memory
    if args.profile:
        key = w.name if first else f"{w.name} ({codec.key})"
        res.profiles[key] = {"decode": profile(codec.decode, data, args.profile),
                             "encode": profile(codec.encode, value, args.profile)}


def _add_peers(row: dict[str, Any], value: Any, res: Results, args: argparse.Namespace) -> None:
    row["peers"] = peer_fields(value, res.peer_list, _single_call_ms(args.runs, res.peers_gc), "ms")
    add_x_peers(row, res.backends)


def _run_workload(w: Workload, args: argparse.Namespace, divisor: int, codecs: list[Codec], res: Results,
                  say: Callable[[str], None]) -> None:
    """Both sides on one workload, right after each other, so a change in machine load hits both."""
    n = w.count(divisor)
    value_built = w.build(n)
    our_bytes = codecs[-1].encode(value_built)  # the last codec's: the reference's objects
    del value_built
    data, engine = _engine_side(w, our_bytes, args, divisor, res, say)
    del our_bytes
    row = _engine_row(w, n, data, engine)
    if engine is not None:
        engine = EngineRun(engine.version, engine.encode, engine.decode, b"")  # its bytes are `data`
    after = wholefile.split_runs(args.runs)[1]
    for i, codec in enumerate(codecs):
        say(f"{w.name}: {len(data):,} bytes, ours ({LABELS.get(codec.key, codec.key)})...")
        row.update(_timed_fields(codec, data, args, w, n))
        _diagnose(w, codec, data, args, res)
        if i == 0 and engine is not None and after:
            say(f"{w.name}: Godot 3 again (its other {after} run(s), after ours)...")
            more = run_engine(after, divisor, w.name)
            if more.data != data:
                raise RuntimeError(f"the engine's second run of {w.name} wrote other bytes")
            del more.data
            row.update(_engine_row(w, n, data, EngineRun(engine.version, engine.encode + more.encode,
                                                         engine.decode + more.decode, b"")))
    del engine
    if w.floor is not None and not codecs[0].remote:
        _floor_fields(row, w.floor(w.build(n)), codecs[0], data, args)
    res.rows.append(_finish_row(row, res.backends))
    if w.peers and w.use_all is None:
        say(f"{w.name}: {', '.join(res.peer_names)}...")
        _add_peers(row, codecs[0].decode(data), res, args)
    if w.use_all is not None:
        say(f"{w.name}: every element made...")
        every = _use_all_row(w, n, data, row, codecs, args)
        if w.peers:  # the peers return every element: they are compared with this row
            say(f"{w.name}, every element made: {', '.join(res.peer_names)}...")
            _add_peers(every, w.use_all(codecs[0].decode(data)), res, args)
        res.rows.append(every)


def _message_fields(codec: Codec, data: bytes, calls: int, args: argparse.Namespace) -> dict[str, Any]:
    """One codec's message numbers, us per call, in this process."""
    b, value = codec.key, codec.decode(data)
    dec_stmt, enc_stmt, names = codec.calls
    dec = per_call_us(dec_stmt, {**names, "a": data}, calls, args.runs, codec.keep_gc(args))
    enc = per_call_us(enc_stmt, {**names, "a": value}, calls, args.runs, codec.keep_gc(args))
    return {f"{b}_same_bytes": "yes" if codec.encode(value) == data else "NO",
            f"{b}_decode_us": _median(dec), f"{b}_encode_us": _median(enc),
            f"{b}_decode_runs_us": dec, f"{b}_encode_runs_us": enc}


def _message_timed(codec: Codec, data: bytes, calls: int, args: argparse.Namespace) -> dict[str, Any]:
    """A codec's message fields: in this process, or a remote (pure) codec's in its own."""
    if codec.remote:
        return _remote(codec, {"kind": "message", "calls": calls}, data, args)
    return _message_fields(codec, data, calls, args)


def _message_row(data: bytes, engine: EngineCalls | None, codecs: list[Codec], res: Results,
                 calls: int, args: argparse.Namespace, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The small message, us per call: the engine's, each backend's (``done``: those already timed,
    by key), and the peers'."""
    row: dict[str, Any] = {"name": "message", "label": MESSAGE_LABEL, "kind": "message", "unit": "us",
                           "target_compiled": C_TARGETS["message"], "size": len(data), "hex": data.hex(),
                           "calls": calls}
    for what in ("decode", "encode"):
        runs = engine.per_call[what] if engine is not None else None
        row[f"engine_{what}_us"], row[f"engine_{what}_runs_us"] = _median(runs), runs or []
    for codec in codecs:
        row.update(done[codec.key] if codec.key in done else _message_timed(codec, data, calls, args))
    row["same_bytes"] = "yes" if all(row[f"{c.key}_same_bytes"] == "yes" for c in codecs) else "NO"
    row["peers"] = peer_fields(codecs[0].decode(data), res.peer_list, _per_call_us(args.runs, res.peers_gc, calls),
                               "us")
    return row


def _public_calls(codecs: list[Codec], calls: int, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``loads``/``dumps`` per backend: this process's in it, the reference's in a pure process."""
    out = {}
    keep_gc = any(c.users for c in codecs) or args.gc
    for b in dict.fromkeys(c.backend for c in codecs):
        if b == gf.backend:
            out[b] = public_call_us(calls, args.runs, keep_gc)
        elif b == "python":
            out[b] = public_call_us_pure(calls, args.runs, keep_gc)
        if b in out and out[b]["backend"] != b:
            raise RuntimeError(f"timing loads/dumps for the {b} backend ran the {out[b]['backend']} one")
    return out


def _objects_of(codec: Codec) -> dict[str, Any]:
    """The Decoder/Encoder methods of a codec's backend (a users codec's calls go through loads/dumps)."""
    if not codec.users:
        return {"dec": codec.decode_at, "enc": codec.encode}
    dialect = gf.get_dialect(DIALECT)
    return {"dec": gf.Decoder(dialect, backend=codec.backend).decode,
            "enc": gf.Encoder(dialect, backend=codec.backend).encode}


def _overhead_rows(engine: EngineCalls | None, codecs: list[Codec], calls: int,
                   args: argparse.Namespace) -> list[dict[str, Any]]:
    """The per-call overhead: a Nil decoded and None encoded, through loads/dumps and through the codec objects."""
    public = _public_calls(codecs, calls, args)
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
                times = per_call_us(stmt[0], {**_objects_of(codec), "a": stmt[1]}, calls, args.runs,
                                    codec.keep_gc(args))
            elif codec.backend in public and public_key is not None:
                times = public[codec.backend][public_key]
            else:
                continue
            row[f"{codec.key}_us"], row[f"{codec.key}_runs_us"] = _median(times), times
        rows.append(row)
    return rows


def _run_message(args: argparse.Namespace, divisor: int, codecs: list[Codec], res: Results,
                 say: Callable[[str], None]) -> None:
    """The small message and the per-call overhead, the engine first (it gives the bytes)."""
    calls = max(MESSAGE_CALLS // divisor, 1)
    ours = codecs[-1].encode(message())
    engine = None
    before, after = wholefile.split_runs(args.runs)
    if res.use_engine:
        say("message: Godot 3...")
        engine = run_engine_calls(before, calls)
        res.engine_note = engine.version
        if engine.message != ours:
            say("WARNING message: the value built in Python does not encode to the engine's bytes")
    say(f"message: {calls:,} calls per run, ours and {', '.join(res.peer_names)}...")
    data = engine.message if engine is not None else ours
    first = codecs[0]
    done = {first.key: _message_timed(first, data, calls, args)}
    if engine is not None and after:
        say(f"message: Godot 3 again (its other {after} run(s), after ours)...")
        engine = engine.joined(run_engine_calls(after, calls))
    res.message = _message_row(data, engine, codecs, res, calls, args, done)
    add_x_peers(res.message, res.backends)
    say("per-call overhead...")
    res.per_call = _overhead_rows(engine, codecs, calls * 5, args)


def _how_ours_is_timed(args: argparse.Namespace, heap: int) -> str:
    users = (f'as users call it: gf.loads(data, "{DIALECT}") / gf.dumps(value, "{DIALECT}"), the GC on, '
             f"{bench_values.heap_objects(heap):,} live objects on the heap (the reference in a process of "
             "its own, GODOT_FORMATS_PURE=1, with the same heap)")
    objects = f"through each backend's Decoder/Encoder objects, the GC {'on' if args.gc else 'off'} in the call"
    return {"users": users, "objects": objects, "both": f"{users}; and (the _obj rows) {objects}"}[args.mode]


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
    print(f"median of {args.runs} runs; ours timed {info['how']}")
    print(f"ratio = engine time / our time (higher is better; targets: reference packed >= {TARGETS['packed']}, "
          f"containers >= {TARGETS['container']}; compiled core packed >= {C_TARGETS['packed']:g}, containers and "
          f"the small message >= {C_TARGETS['container']:g})\n")


def _print_peers_and_calls(res: Results, args: argparse.Namespace) -> None:
    peer_rows = [r for r in res.rows if "peers" in r] + ([res.message] if res.message is not None else [])
    if peer_rows:
        print(f"\npeers on the same Python objects, the GC {'on' if res.peers_gc else 'off'} as ours: median times; "
              f"x pickle, x msgspec = our time / theirs (lower is better; compiled core targets <= "
              f"{C_PICKLE_TARGET:g} x pickle on the containers, <= {C_MSGSPEC_TARGET:g} x msgspec). "
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
              "empty loop's cost taken off; ours: timeit's loop over each column's calls (the message: "
              "loads/dumps as users call it, Decoder/Encoder in the _obj columns); the overhead rows name "
              "their call\n")
        print(call_table(call_rows(msg, res.per_call, res.backends), res.backends))


def _print_files_and_scaling(res: Results, args: argparse.Namespace) -> None:
    if res.files:
        print(f"\nwhole save files (median of {args.runs} runs, ours GC on with the live heap; ratio = engine "
              "time / ours): the engine's File + store_var/get_var, open to close, timed in GDScript; ours "
              "gf.open(p).values, gf.open(p, dialect=\"godot3\").values, sf.save(out) after one value changed "
              "(every layer written anew) and gf.open(p).save(out, dialect=\"godot4\") against the engine "
              "reading and re-writing the file\n")
        print(wholefile.table(res.files))
        print()
        print(wholefile.check_table(res.files))
    if res.scaling or res.scaling_skipped:
        print("\nscaling: a Godot 3 -> Godot 4 migration step by step, each size in a fresh process with the "
              "live heap, GC on; MB/s = the save's size / the step's median wall time; (x) = CPU time per "
              "byte / the smallest size's (1.00 = linear; CPU time, as the machine's load moves wall time); "
              "peak = the resident peak (VmHWM) above the process before reading\n")
        if res.scaling:
            print(scaling.table(res.scaling))
        for line in res.scaling_skipped:
            print(f"  {line}")


def _print_report(res: Results, info: dict[str, Any], args: argparse.Namespace) -> None:
    """The human report: header, the workloads, the peers and the small message, the files, scaling,
    the targets, memory, profiles."""
    _print_header(res, info, args)
    if res.rows:
        print(table(res.rows, res.backends))
    _print_peers_and_calls(res, args)
    _print_files_and_scaling(res, args)
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


def _run_parts(args: argparse.Namespace, divisor: int, heap: int, workloads: list[Workload], parts: set[str],
               res: Results, say: Callable[[str], None]) -> list[Codec]:
    """Every part asked for, in turn; the codecs the workloads were timed with."""
    codecs = _codec_plan(args, res, say)
    for w in workloads:
        _run_workload(w, args, divisor, codecs, res, say)
    if "message" in parts:
        _run_message(args, divisor, codecs, res, say)
    if "files" in parts:
        res.files, version = wholefile.run(args.runs, divisor, res.use_engine, say)
        res.engine_note = version or res.engine_note
    if "scaling" in parts:
        sizes = [mb / divisor for mb in scaling.SIZES_MB + ((scaling.BIG_MB,) if args.big else ())]
        res.scaling, res.scaling_skipped = scaling.run(sizes, args.runs, heap, say)
    return codecs


def _settings(parser: argparse.ArgumentParser, args: argparse.Namespace,
              say: Callable[[str], None]) -> tuple[int, int]:
    """The divisor and the live heap's size, checked; --codec implies objects mode."""
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    divisor = args.divisor or (QUICK_DIVISOR if args.quick else 1)
    if divisor < 1:
        parser.error("--divisor must be at least 1")
    if args.codec is not None and args.mode != "objects":
        say("--codec times Decoder/Encoder objects: --mode objects")
        args.mode = "objects"
    args.heap = args.heap if args.heap is not None else HEAP_ITEMS // (QUICK_DIVISOR if args.quick else 1)
    if args.heap < 0:
        parser.error("--heap must be 0 or more")
    return divisor, args.heap


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    # With --json, standard output holds only the document.
    say: Callable[[str], None] = (lambda s: print(s, file=sys.stderr)) if args.json else print
    divisor, heap = _settings(parser, args, say)
    workloads, parts = _chosen(parser, args.only)
    res = _engine_plan(args, say)
    say(f"building the live heap: {bench_values.heap_objects(heap):,} objects...")
    live = bench_values.live_heap(heap)  # held until the end: the "as users call it" condition
    codecs = _run_parts(args, divisor, heap, workloads, parts, res, say)
    del live

    checks = [] if res.compiled_note else target_checks(res.rows, res.message) + file_checks(res.files, res.scaling)
    info = {"engine": res.engine_note, "codec": codecs[0].name, "runs": args.runs, "quick": args.quick,
            "divisor": divisor, "mode": args.mode, "how": _how_ours_is_timed(args, heap),
            "heap_objects": bench_values.heap_objects(heap),
            "gc_in_timed_calls": args.mode != "objects" or args.gc, "machine": machine(), "backends": res.backends,
            "compiled_core": res.compiled_note or "built", "peers": res.peer_names,
            "peers_missing": res.peers_missing, "peers_note": peers.PLAIN_NOTE, "peers_gc": res.peers_gc,
            "targets_reference": TARGETS, "targets_compiled": C_TARGETS,
            "target_compiled_x_pickle": C_PICKLE_TARGET, "target_compiled_x_msgspec": C_MSGSPEC_TARGET,
            "target_files": FILE_TARGET, "targets": checks}
    if args.json:
        print(json.dumps({"info": info, "workloads": res.rows, "memory": res.memory, "profiles": res.profiles,
                          "message": res.message, "per_call": res.per_call, "files": res.files,
                          "scaling": res.scaling, "scaling_skipped": res.scaling_skipped}, indent=1))
    else:
        _print_report(res, info, args)
    return 0 if res.all_same else 1


if __name__ == "__main__":
    sys.exit(main())
