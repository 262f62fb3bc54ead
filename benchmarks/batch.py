"""Files per second and CPU-seconds per file of a migration: the one-process command line of before,
the process pool (``--jobs``), and Dask (issue 25's benchmark row).

    python3 benchmarks/batch.py [--files 4000] [--large 100] [--skip-dask]

The same generated saves for every run (benchmarks/batch_saves.py: Godot 3 saves, plain,
encrypted and compressed in every mode; some lossy, some bad; ``--large`` of about 0.6 MB), each
run into a fresh folder:

- ``convert SRC --out-dir --jobs 1``: one process, one file after the other (the command line as it
  was before issue 25);
- ``convert SRC --out-dir`` (every core: the default) and ``--report`` (the batch path, from the
  command line), both on the process pool;
- ``batch.convert(workers=2)`` from Python, the pool without the command line's output;
- ``batch.convert(executor=...)`` on a ``distributed.LocalCluster(n_workers=2, processes=True,
  threads_per_worker=1)``'s executor (its start-up is timed apart).

CPU is user + system of every process of the run (the command line and its workers; Dask's
nannies and workers).  The load average is printed beside each run: on a shared machine the
ratios between rows say more than the rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import batch_saves

from godot_formats import batch


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _tree_cpu() -> float:
    """CPU seconds of this process and every live descendant (psutil), for Dask's processes."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            continue
    return total


def cli(src: Path, out: Path, *extra: str) -> tuple[float, float, str]:
    """Wall and CPU seconds of one command-line run (the children are waited for: their CPU counts)."""
    cmd = [sys.executable, "-m", "godot_formats", "convert", str(src), "--to", "godot4", "--out-dir", str(out),
           "--password", batch_saves.PASSWORD, *extra]
    cpu0, t0 = _children_cpu(), time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    return wall, cpu, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]


def pool(src: Path, out: Path) -> tuple[float, float, str]:
    """``batch.convert`` on the default pool of 2, from this process."""
    own0, cpu0, t0 = time.process_time(), _children_cpu(), time.monotonic()
    result = batch.convert(src, out, to="godot4", password=batch_saves.PASSWORD, workers=2)
    wall = time.monotonic() - t0
    return wall, time.process_time() - own0 + _children_cpu() - cpu0, result.summary()


def dask(src: Path, out: Path, startup: list[float]) -> tuple[float, float, str]:
    """``batch.convert`` on a LocalCluster of 2 worker processes; its start-up goes to ``startup``."""
    from distributed import Client, LocalCluster

    t0 = time.monotonic()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        startup.append(time.monotonic() - t0)
        cpu0, t1 = _tree_cpu(), time.monotonic()
        result = batch.convert(src, out, to="godot4", password=batch_saves.PASSWORD,
                               executor=client.get_executor(), workers=2)
        wall, cpu = time.monotonic() - t1, _tree_cpu() - cpu0
    return wall, cpu, result.summary()


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--large", type=int, default=100)
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="batch-bench-"))
    try:
        src = work / "saves"
        manifest = batch_saves.generate(src, args.files, large=args.large)
        size = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
        n = len(manifest)
        print(f"{n} files ({args.files} small, {args.large} large), {size / 1e6:.1f} MB; {os.cpu_count()} CPUs")
        startup: list[float] = []
        runs: list[tuple[str, Callable[[Path], tuple[float, float, str]]]] = [
            ("convert --jobs 1 (one process: the command line before)", lambda o: cli(src, o, "--jobs", "1")),
            ("convert (default: every core)", lambda o: cli(src, o)),
            ("convert --report R.jsonl (the batch path)", lambda o: cli(src, o, "--report", str(o) + ".jsonl")),
            ("batch.convert(workers=2)", lambda o: pool(src, o)),
        ]
        if not args.skip_dask:
            runs.append(("batch.convert(executor=LocalCluster(2 processes))", lambda o: dask(src, o, startup)))
        print("| run | wall s | CPU s | files/s | CPU ms/file | CPU/wall | load before | outcome |")
        print("|---|---:|---:|---:|---:|---:|---|---|")
        for i, (name, run) in enumerate(runs):
            before = load()
            wall, cpu, outcome = run(work / f"out{i}")
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {n / wall:.0f} | {1000 * cpu / n:.1f} | {cpu / wall:.2f} "
                  f"| {before} | {outcome} |", flush=True)
        if startup:
            print(f"Dask LocalCluster start-up: {startup[0]:.1f} s (not in its row)")
        print(f"load average at the end: {load()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
