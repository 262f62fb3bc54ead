"""Scaling: a 5 MB, a 50 MB and (``--big``) a 500 MB save, step by step, to show the cost stays linear.

Each save is the whole-file save of ``wholefile.py`` (``bench_values.save_values``: one large
Dictionary, then one ``store_var`` per record), scaled, made by the library in a process of its own
(``make``).  A second fresh process per size (``measure``) builds the live heap, then runs the steps
of a Godot 3 -> Godot 4 migration, as ``gf.open(p, dialect="godot3").save(out, dialect="godot4")``
does them, each timed on its own with the GC on (the previous step's result is freed after the
timing, as the codec rows drop theirs outside the timed region: freeing 2 GB of values is Python's
cost, not the next step's):

* read: the file's bytes (``godot_formats.saves.reading.read_bounded``, what ``gf.open`` reads with);
* decode: ``gf.open(data, dialect="godot3").values`` (framing and decoding; no detection);
* convert: ``gf.convert_value(v, "godot3", "godot4", policy="lossy")`` of every record;
* encode: every record in Godot 4's format, framed: ``gf.SaveFile(values, godot4, "store_var").to_bytes()``,
  the call ``sf.save`` makes for a migrated save (its records in one call and one buffer);
* write: ``save_to`` (atomic: a temporary file, then a rename), as ``sf.save`` writes.

Beside the steps, the objects' own cost (``floor``): ``pickle.loads`` making the same Python objects
from a pickle of the decoded values, nothing of ours involved, timed as the steps are.  Its CPU
time per byte grows with the size too: CPython's dicts, lists and strs cost more each when there
are tens of millions of them (the large dict's table outgrows the caches and the TLB, fresh
memory is faulted in page by page), so a decode's growth up to that factor is CPython's, not the
decoder's.

Reported per size and step: MB/s (the save's size over the step's median wall time), and the CPU
time per byte relative to the smallest size (1.00 = linear; CPU time, since the load of a shared
machine moves wall time more than any non-linearity would).  Memory: the process's peak resident size
(VmHWM, reset after the live heap is built; ``ru_maxrss`` where there is no /proc) above what it
held before reading (the interpreter and the live heap), read after each step of the first run, so
the step that raised the peak shows; and the resident size held after the decode (the input and
the values).  The 500 MB save runs only with ``--big``, after a
check of free memory and disk (a prediction from the 50 MB run's peak, x10), and skips with a
message when either is short: the machine is shared.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (REPO, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import bench_values  # noqa: E402

import godot_formats as gf  # noqa: E402
from godot_formats.layers.files import save_to  # noqa: E402
from godot_formats.layers.framing import join_frames  # noqa: E402
from godot_formats.saves.reading import read_bounded  # noqa: E402

__all__ = ["STEPS", "SIZES_MB", "BIG_MB", "run", "table", "make", "measure", "size_text"]

STEPS = ("read", "decode", "convert", "encode", "write")
#: The sizes of a default run (the whole-file save is 6.65 MB: 5 MB is 0.75 of it), and --big's.
SIZES_MB = (5.0, 50.0)
BIG_MB = 500.0
#: The whole-file save's size at scale 1, in MB: the scale of a target size.
BASE_MB = 6.654912
#: --big runs the 500 MB save only if this many times the 50 MB run's peak fits in available memory.
SAFETY = 1.25


def _rss_mb() -> float:
    """The resident size now, in MB (/proc/self/statm; 0 where it does not exist)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


def _reset_peak() -> None:
    """Start the peak resident size afresh (Linux: ``5`` to /proc/self/clear_refs resets VmHWM), so that
    building the live heap, whose temporaries are gone, does not hide the steps' peak."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        pass


def _peak_mb() -> float:
    """The peak resident size since :func:`_reset_peak`, in MB (VmHWM; elsewhere ru_maxrss, since the start)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def make(path: Path, mb: float) -> int:
    """Write a save of about ``mb`` MB with the library (Godot 3, plain store_var); its size."""
    values = bench_values.save_values(scale=mb / BASE_MB)
    data = join_frames([gf.dumps(v, "godot3") for v in values])
    save_to(path, data, origin=None, overwrite=True, what="save file")
    return len(data)


def _steps(path: Path, out: Path) -> list[tuple[str, Callable[[Any], Any]]]:
    """The migration, step by step: each takes the previous step's result."""
    return [
        ("read", lambda _: read_bounded(path)[0]),
        ("decode", lambda data: gf.open(data, dialect="godot3").values),
        ("convert", lambda values: [gf.convert_value(v, "godot3", "godot4", policy="lossy")[0] for v in values]),
        ("encode", lambda values: gf.SaveFile(values, gf.get_dialect("godot4"), "store_var").to_bytes()),
        ("write", lambda data: save_to(out, data, origin=None, overwrite=True, what="save file")),
    ]


def measure(path: Path, runs: int, heap: int) -> dict[str, Any]:
    """The steps on ``path``, ``runs`` times, GC on, in a process holding a live heap of ``heap`` items."""
    live = bench_values.live_heap(heap)
    out = path.with_name(path.name + ".godot4")
    gc.collect()
    _reset_peak()
    base_rss = _rss_mb()
    times: dict[str, list[float]] = {s: [] for s in STEPS}
    cpu: dict[str, list[float]] = {s: [] for s in STEPS}
    peaks: dict[str, float] = {}
    held_after_decode = 0.0
    for run_no in range(runs):
        result: Any = None
        for name, step in _steps(path, out):
            gc.collect()
            before = result  # freed after the timing: each step is timed without freeing the one before's result
            c0, t0 = time.process_time(), time.perf_counter()
            result = step(before)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            del before
            if run_no == 0:
                peaks[name] = _peak_mb() - base_rss
                if name == "decode":
                    held_after_decode = _rss_mb() - base_rss
        del result
    floor_times, floor_cpu = _floor(path, runs)
    del live
    return {"size": path.stat().st_size, "runs": runs, "times": times, "cpu": cpu, "peak_after_mb": peaks,
            "held_after_decode_mb": held_after_decode, "base_rss_mb": base_rss, "floor_times": floor_times,
            "floor_cpu": floor_cpu}


def _floor(path: Path, runs: int) -> tuple[list[float], list[float]]:
    """``pickle.loads`` of the save's decoded values (pickled before, untimed), ``runs`` times: the
    cost of making the same objects with nothing of ours involved, wall and CPU seconds per run."""
    values = gf.open(read_bounded(path)[0], dialect="godot3").values
    pickled = pickle.dumps(values, 5)
    del values
    times, cpu = [], []
    for _ in range(runs):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        made = pickle.loads(pickled)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del made
    return times, cpu


def _worker(argv: list[str], timeout: float) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"scaling.py {' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def _available_mb() -> float | None:
    """MemAvailable, in MB (None where /proc/meminfo does not say)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError):
        pass
    return None


def room_for(mb: float, rows: list[dict[str, Any]], folder: str) -> str | None:
    """None when a save of ``mb`` MB fits in free memory and disk, else why not.

    The memory it needs is predicted from the largest size measured so far (its peak, scaled by
    size), or 20x the save where none was; the disk needs the save and its migrated copy.
    """
    biggest = max((r for r in rows if "peak_mb" in r), key=lambda r: r["size"], default=None)
    need = (biggest["peak_mb"] * mb * 1e6 / biggest["size"] if biggest is not None else 20 * mb) * SAFETY
    have = _available_mb()
    if have is not None and need > have:
        return f"needs about {need / 1e3:.1f} GB of memory, {have / 1e3:.1f} GB available"
    free = shutil.disk_usage(folder).free / 1e6
    if free < 3 * mb:
        return f"needs {3 * mb / 1e3:.1f} GB of disk in {folder}, {free / 1e3:.1f} GB free"
    return None


def _row(mb: float, got: dict[str, Any]) -> dict[str, Any]:
    size = got["size"]
    row: dict[str, Any] = {"target_mb": mb, "size": size, "runs": got["runs"],
                           "peak_mb": max(got["peak_after_mb"].values()), "peak_after_mb": got["peak_after_mb"],
                           "held_after_decode_mb": got["held_after_decode_mb"]}
    for step in STEPS:
        seconds = statistics.median(got["times"][step])
        row[f"{step}_s"], row[f"{step}_runs_s"] = seconds, got["times"][step]
        row[f"{step}_cpu_s"], row[f"{step}_cpu_runs_s"] = statistics.median(got["cpu"][step]), got["cpu"][step]
        row[f"{step}_mb_s"] = size / 1e6 / seconds if seconds > 0 else None
    row["total_s"] = sum(row[f"{s}_s"] for s in STEPS)
    row["total_cpu_s"] = sum(row[f"{s}_cpu_s"] for s in STEPS)
    if got.get("floor_times"):
        row["floor_s"], row["floor_runs_s"] = statistics.median(got["floor_times"]), got["floor_times"]
        row["floor_cpu_s"], row["floor_cpu_runs_s"] = statistics.median(got["floor_cpu"]), got["floor_cpu"]
    return row


def per_byte(rows: list[dict[str, Any]]) -> None:
    """Each step's CPU time per byte relative to the smallest size's (1.00 = linear; above, slower per
    byte).  CPU time (``process_time``, the I/O's system time included) rather than wall time: on a
    shared machine the load moves wall times by tens of percent between one size's runs and the
    next's, which would hide or invent a non-linearity; rows without it use wall time."""
    if not rows:
        return
    first = rows[0]
    for row in rows:
        for step in STEPS + ("total", "floor"):
            if f"{step}_s" not in first or f"{step}_s" not in row:
                continue
            key = f"{step}_cpu_s" if f"{step}_cpu_s" in first else f"{step}_s"
            base = first[key] / first["size"]
            row[f"{step}_per_byte_x"] = (row[key] / row["size"]) / base if base > 0 else None


def runs_for(mb: float, runs: int) -> int:
    """Runs per size: ``--runs`` up to 10 MB, at most 3 up to 100 MB, one above (each is minutes)."""
    return runs if mb <= 10 else min(runs, 3) if mb <= 100 else 1


def run(sizes_mb: list[float], runs: int, heap: int, say: Callable[[str], None]) -> tuple[list[dict[str, Any]],
                                                                                          list[str]]:
    """Each size in fresh processes (make, then measure); the rows, and the sizes skipped with why."""
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="godot-formats-scaling-") as tmp:
        for mb in sizes_mb:
            why = room_for(mb, rows, tmp) if mb > 100 else None
            if why is not None:
                skipped.append(f"{mb:g} MB: skipped, {why}")
                say(f"scaling: {skipped[-1]}")
                continue
            path = Path(tmp) / f"save_{mb:g}MB.sav"
            say(f"scaling: making a {mb:g} MB save...")
            _worker(["make", str(path), "--mb", str(mb)], timeout=3600)
            n = runs_for(mb, runs)
            say(f"scaling: {path.stat().st_size / 1e6:.1f} MB, {n} run(s) of read/decode/convert/encode/write...")
            rows.append(_row(mb, _worker(["measure", str(path), "--runs", str(n), "--heap", str(heap)],
                                         timeout=7200)))
            path.unlink()
            path.with_name(path.name + ".godot4").unlink(missing_ok=True)
    per_byte(rows)
    return rows, skipped


def size_text(size: int) -> str:
    """A file's size for a table: MB, or kB for the tiny saves of a test run."""
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per size, MB/s per step (and its per-byte cost relative to the smallest size), and memory."""
    head = ("| save | runs | " + " | ".join(f"{s} MB/s (x)" for s in STEPS)
            + " | total s (x) | the objects' own cost: pickle.loads s (x) | peak MB above start (x file) | "
            "held after decode MB |")
    lines = [head, "| ---: | ---: |" + " ---: |" * (len(STEPS) + 4)]
    for r in rows:
        cells = [f"{_f(r[f'{s}_mb_s'])} ({_f(r.get(f'{s}_per_byte_x'), 2)})" for s in STEPS]
        lines.append(f"| {size_text(r['size'])} | {r['runs']} | " + " | ".join(cells)
                     + f" | {r['total_s']:.2f} ({_f(r.get('total_per_byte_x'), 2)}) | "
                     f"{_f(r.get('floor_s'), 2)} ({_f(r.get('floor_per_byte_x'), 2)}) | "
                     f"{r['peak_mb']:,.0f} ({r['peak_mb'] / (r['size'] / 1e6):.1f}) | "
                     f"{r['held_after_decode_mb']:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_make = sub.add_parser("make", help="write a save of --mb MB")
    p_make.add_argument("path", type=Path)
    p_make.add_argument("--mb", type=float, required=True)
    p_measure = sub.add_parser("measure", help="time the steps on a save (prints JSON)")
    p_measure.add_argument("path", type=Path)
    p_measure.add_argument("--runs", type=int, default=1)
    p_measure.add_argument("--heap", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    if args.cmd == "make":
        print(json.dumps({"size": make(args.path, args.mb)}))
    else:
        print(json.dumps(measure(args.path, args.runs, args.heap)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
