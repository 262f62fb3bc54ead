"""Converting a folder of Godot 3 saves to Godot 4 on Ray, through ``batch.convert_bytes``.

    python3 examples/batch/ray_recipe.py SRC DST REPORT.jsonl [--password P] [--address auto]

The driver lists SRC (streamed, folder by folder) and sends the keys in chunks of
:data:`godot_formats.batch.CHUNK` to Ray tasks; each task reads its files, converts each with
:func:`godot_formats.batch.convert_bytes` (the code path of the command line and of the process
pool: the same rows, worded the same), writes the outputs below DST and returns one report row per
file (:data:`godot_formats.batch.ROW_FIELDS`).  The driver writes the rows as JSON lines.

**Retries are capped.**  Ray retries a task whose worker died (``max_retries``, default 3) and,
with ``retry_exceptions``, one that raised; a save that crashes its worker would be converted
again and again.  The tasks here run with ``max_retries=0, retry_exceptions=False``: a chunk whose
worker died gives a failed row (``internal``) for each of its files, and the run goes on.
``convert_bytes`` never raises, so a bad save is a failed row, never a failed task.

At most ``2 x`` the cluster's CPUs chunks are in flight, so the listing of millions of keys is not
held in memory.  DST must be a folder every worker sees (on a real cluster, a shared file system;
for an object store write ``out`` with fsspec instead of ``write_atomic``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from godot_formats import batch
from godot_formats.layers.files import write_atomic


def convert_files(keys: list[str], src: str, dst: str, to: str, password: str | None) -> list[dict[str, Any]]:
    """One task: the rows of ``keys`` (relative to ``src``), each converted and written below ``dst``."""
    rows = []
    for key in keys:
        try:
            data = (Path(src) / key).read_bytes()
        except OSError as e:
            row = batch.new_row(key, None)
            row.update(status="failed", error_kind="io", error=f"cannot read: {e.strerror}")
            rows.append(row)
            continue
        out, row = batch.convert_bytes(data, name=key, to=to, password=password)
        if out is not None:
            dest = Path(dst) / key
            try:
                write_atomic(dest, out)
                row["output_path"] = str(dest)
            except OSError as e:
                row.update(status="failed", error_kind="io", error=f"cannot write {dest}: {e.strerror}")
        rows.append(row)
    return rows


def keys_below(src: str) -> Iterator[str]:
    """Every regular file below ``src``, as a key with ``/``, folder by folder."""
    for folder, subfolders, files in os.walk(src):
        subfolders.sort()
        for name in sorted(files):
            yield Path(folder, name).relative_to(src).as_posix()


def _died(keys: list[str], error: BaseException) -> list[dict[str, Any]]:
    """The rows of a chunk whose task failed (its worker died: no retry)."""
    rows = []
    for key in keys:
        row = batch.new_row(key, None)
        row.update(status="failed", error_kind="internal",
                   error=f"the Ray task died converting this chunk ({type(error).__name__}); not retried")
        rows.append(row)
    return rows


def convert(src: str, dst: str, *, to: str = "godot4", password: str | None = None,
            work: Callable[[list[str], str, str, str, str | None], list[dict[str, Any]]] = convert_files,
            ) -> Iterator[dict[str, Any]]:
    """The report rows of converting every file below ``src`` into ``dst`` on the Ray cluster that
    ``ray.init`` joined, as they finish.  ``work`` is what a task runs (:func:`convert_files`; a
    test gives one that crashes its worker)."""
    import ray

    task = ray.remote(max_retries=0, retry_exceptions=False, num_cpus=1)(work)
    limit = 2 * max(int(ray.cluster_resources().get("CPU", 1)), 1)
    inflight: dict[Any, list[str]] = {}
    chunks = _chunks(keys_below(src), batch.CHUNK)
    exhausted = False
    while True:
        while not exhausted and len(inflight) < limit:
            chunk = next(chunks, None)
            exhausted = chunk is None
            if chunk is not None:
                inflight[task.remote(chunk, src, dst, to, password)] = chunk
        if not inflight:
            return
        done, _ = ray.wait(list(inflight), num_returns=1)
        for ref in done:
            chunk = inflight.pop(ref)
            try:
                yield from ray.get(ref)
            except (ray.exceptions.RayError, OSError) as e:
                yield from _died(chunk, e)


def _chunks(keys: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for key in keys:
        chunk.append(key)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def main() -> int:
    import ray

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("report", help="the report, JSON lines")
    ap.add_argument("--password")
    ap.add_argument("--to", default="godot4")
    ap.add_argument("--address", help="a Ray cluster's address (default: a local one on every core)")
    args = ap.parse_args()
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    counts: dict[str, int] = {}
    try:
        with open(args.report, "w", encoding="utf-8") as f:
            for row in convert(args.src, args.dst, to=args.to, password=args.password):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                counts[row["status"]] = counts.get(row["status"], 0) + 1
    finally:
        ray.shutdown()
    print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
