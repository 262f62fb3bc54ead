"""``godot-formats convert FOLDER --out-dir OUT`` with ``--workers``, ``--resume``, ``--report`` or
``--shard``: the folder goes through :func:`godot_formats.batch.convert` (a process pool, a journal,
resume and shards), and every file gets the same line as the one-process command prints."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from ..core.errors import GodotFormatsError
from .common import EXIT_BAD_INPUT, EXIT_USAGE, credentials, printable


def _shard(text: str | None) -> tuple[int, int]:
    """``I/N`` as ``(I, N)``."""
    if text is None:
        return 0, 1
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise GodotFormatsError(f"--shard wants I/N (for example 0/4), not {text!r}") from None
    if not 0 <= i < n:
        raise GodotFormatsError(f"--shard I/N needs 0 <= I < N, not {text}")
    return i, n


def _folder(args: argparse.Namespace) -> Path:
    """The one folder a batch run converts (the batch options need one folder and --out-dir)."""
    if len(args.inputs) != 1 or not Path(args.inputs[0]).is_dir() or not args.out_dir:
        raise GodotFormatsError("--workers, --resume, --report and --shard convert one folder: "
                                "give FOLDER --out-dir DIR")
    return Path(args.inputs[0])


class RateLine:
    """The progress line of a batch run on stderr: files done, files per second, and an ETA once a
    background count of the folder has finished (the conversion does not wait for that count)."""

    def __init__(self, folder: Path, mode: str, stream: IO[str] | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = mode == "always" or (mode == "auto" and self.stream.isatty())
        self.total: int | None = None
        self.started = time.monotonic()
        self.width = 0
        if self.enabled:
            threading.Thread(target=self._count, args=(folder,), daemon=True).start()

    def _count(self, folder: Path) -> None:
        self.total = sum(len(files) for _, _, files in os.walk(folder))

    def show(self, done: int) -> None:
        if not self.enabled:
            return
        rate = done / max(time.monotonic() - self.started, 1e-9)
        text = f"{done} file(s), {rate:.1f}/s"
        if self.total:
            left = max(self.total - done, 0)
            text = f"{done}/{self.total} file(s), {rate:.1f}/s, ETA {left / rate if rate else 0:.0f} s"
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def clear(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _line(folder: Path, row: dict[str, Any]) -> list[str]:
    """The one-process command's lines for a row: ``status  file: what``, then the losses."""
    label = str(folder / row["path"])
    what = row["detail"] if row["status"] in ("converted", "unchanged") else row["error"]
    lines = [f"{row['status']:<9}  {label}: {what}"]
    word = "would lose" if row["status"] == "failed" else "loss"
    return lines + [f"    {word}: {loss}" for loss in row["losses"]]


def run_batch(args: argparse.Namespace) -> int:
    """Convert one folder on a process pool; the exit status is the one-process command's (1 when a
    file failed), or 130 when Ctrl-C cut the run short (after the summary)."""
    from .. import batch

    try:
        folder = _folder(args)
        shard = _shard(args.shard)
        password, key = credentials(args)
        if args.workers is not None and args.workers < 0:
            raise GodotFormatsError("--workers wants 0 (every core) or more")
    except GodotFormatsError as e:
        print(f"godot-formats convert: {e}", file=sys.stderr)
        return EXIT_USAGE
    line = RateLine(folder, args.progress)

    def progress(row: dict[str, Any], counts: dict[str, int]) -> None:
        line.clear()
        for text in _line(folder, row):
            print(printable(text))
        sys.stdout.flush()
        line.show(sum(counts.values()))

    dst = Path(args.out_dir) / Path(os.path.abspath(folder)).name
    try:
        result = batch.convert(folder, dst, to=args.to, report=args.report, resume=args.resume, shard=shard,
                               workers=args.workers or None, overwrite=args.overwrite, progress=progress,
                               options=batch.options_from_args(args, password, key))
    except GodotFormatsError as e:
        line.clear()
        print(f"godot-formats convert: {e}", file=sys.stderr)
        return EXIT_USAGE
    line.clear()
    print(result.summary() + (" (interrupted)" if result.interrupted else ""))
    if result.interrupted:
        return 130
    return EXIT_BAD_INPUT if result.counts["failed"] else 0
