"""``godot-formats convert FOLDER --out-dir OUT`` with ``--resume``, ``--report``, ``--shard``,
``--storage-option`` or ``--dask``, or a URL: the folder goes through
:func:`godot_formats.batch.convert` (a process pool or a Dask cluster, a journal, resume and shards),
and every file gets the same line as the one-process command prints."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
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


def _folder(args: argparse.Namespace) -> str:
    """The one folder (or URL) a batch run converts (the batch options need one and --out-dir)."""
    given = args.inputs[0] if len(args.inputs) == 1 else ""
    if not given or not args.out_dir or ("://" not in given and not Path(given).is_dir()):
        raise GodotFormatsError("--resume, --report, --shard, --storage-option, --dask and URLs convert one "
                                "folder: give FOLDER --out-dir DIR")
    return given


def storage_options(pairs: list[str]) -> dict[str, Any]:
    """``K=V`` pairs as fsspec's ``storage_options``: ``V`` read as JSON when it parses (``false``,
    ``3``, ``{"endpoint_url": ...}``), else as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq or not name:
            raise GodotFormatsError(f"--storage-option wants K=V, not {pair!r}")
        try:
            options[name] = json.loads(text)
        except ValueError:
            options[name] = text
    return options


@contextlib.contextmanager
def dask_executor(address: str | None) -> Iterator[tuple[Executor | None, int | None]]:
    """``(executor, width)`` of ``--dask``: a ``LocalCluster`` of one process per core for ``local``, a
    ``Client`` of the scheduler at ``address`` otherwise; ``(None, None)`` without ``--dask``.  The
    client and the cluster are closed on the way out, Ctrl-C included."""
    if address is None:
        yield None, None
        return
    try:
        dask: Any = importlib.import_module("distributed")  # untyped, and optional: the [dask] extra
    except ImportError:
        raise GodotFormatsError("--dask needs Dask: pip install 'godot-formats[dask]'") from None
    with contextlib.ExitStack() as stack:
        if address == "local":
            cluster = stack.enter_context(dask.LocalCluster(
                n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True, dashboard_address=None))
            client = stack.enter_context(dask.Client(cluster))
        else:
            client = stack.enter_context(dask.Client(address))
        width = sum(client.nthreads().values()) or 1
        yield client.get_executor(), width


def _dst(folder: str, out_dir: str) -> str:
    """``out_dir/<the folder's own name>``, as without the batch options (a URL's last part)."""
    if "://" in folder:
        name = folder.rstrip("/").rsplit("/", 1)[-1]
    else:
        name = Path(os.path.abspath(folder)).name
    return f"{out_dir.rstrip('/')}/{name}" if "://" in out_dir else str(Path(out_dir) / name)


def count_entries(folders: list[str], exclude: Path | None = None) -> int:
    """About how many lines a listing of ``folders`` gives, for a progress line's ETA: the files
    and the symlinked folders (a line each, never followed); ``exclude`` (the resolved output
    folder) is one line, not walked.  ``os.walk`` tells folders from files by the directory
    entry's type, so the count costs no stat of each file and can run beside the conversion."""
    n = 0
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            n += len(files)
            walked = []
            for name in dirs:
                path = os.path.join(top, name)
                if os.path.islink(path) or (exclude is not None and Path(os.path.realpath(path)) == exclude):
                    n += 1
                else:
                    walked.append(name)
            dirs[:] = walked
    return n


def count_in_background(folders: list[str], exclude: Path | None, done: Callable[[int], None]) -> None:
    """:func:`count_entries` in a daemon thread, handing the count to ``done``: the conversion
    starts at once and does not wait for (nor depend on) the count."""
    def count() -> None:
        with contextlib.suppress(Exception):  # no count, no ETA (a tree past os.walk's recursion, say)
            done(count_entries(folders, exclude))

    threading.Thread(target=count, daemon=True).start()


class RateLine:
    """The progress line of a batch run on stderr: files done, files per second, and an ETA once a
    background count of the folder has finished (the conversion does not wait for that count)."""

    def __init__(self, folder: str, mode: str, stream: IO[str] | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = mode == "always" or (mode == "auto" and self.stream.isatty())
        self.total: int | None = None
        self.started = time.monotonic()
        self.width = 0
        if self.enabled:
            threading.Thread(target=self._count, args=(folder, options), daemon=True).start()

    def _count(self, folder: str, options: dict[str, Any] | None) -> None:
        if "://" in folder:
            from ..batch.walk import url_fs

            with contextlib.suppress(Exception):  # no count, no ETA: the run does not depend on it
                fs, path = url_fs(folder, options)
                self.total = len(fs.find(path))
            return
        with contextlib.suppress(Exception):  # the same: a tree past os.walk's recursion, an unreadable folder
            self.total = count_entries([folder])

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


def _line(folder: str, row: dict[str, Any]) -> list[str]:
    """The one-process command's lines for a row: ``status  file: what``, then the losses."""
    label = f"{folder.rstrip('/')}/{row['path']}" if "://" in folder else str(Path(folder) / row["path"])
    what = row["detail"] if row["status"] in ("converted", "unchanged") else row["error"]
    lines = [f"{row['status']:<9}  {label}: {what}"]
    word = "would lose" if row["status"] == "failed" else "loss"
    return lines + [f"    {word}: {loss}" for loss in row["losses"]]


def run_batch(args: argparse.Namespace) -> int:
    """Convert one folder on a process pool or a Dask cluster; the exit status is the one-process
    command's (1 when a file failed), or 130 when Ctrl-C cut the run short (after the summary)."""
    try:
        folder = _folder(args)
        shard = _shard(args.shard)
        password, key = credentials(args)
        options = storage_options(args.storage_option)
        if args.workers is not None and args.workers < 0:
            raise GodotFormatsError("--workers wants 0 (every core) or more")
    except GodotFormatsError as e:
        print(f"godot-formats convert: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with dask_executor(args.dask) as (executor, width):
            return _run(args, folder, shard, (password, key), options, executor, width)
    except GodotFormatsError as e:
        print(f"godot-formats convert: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # while the Dask cluster started or stopped: it is closed
        print("godot-formats convert: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, folder: str, shard: tuple[int, int], secrets: tuple[str | None, bytes | None],
         options: dict[str, Any], executor: Executor | None, width: int | None) -> int:
    from .. import batch

    line = RateLine(folder, args.progress, options=options)

    def progress(row: dict[str, Any], counts: dict[str, int]) -> None:
        line.clear()
        for text in _line(folder, row):
            print(printable(text))
        sys.stdout.flush()
        line.show(sum(counts.values()))

    inside = None if "://" in args.out_dir else args.out_dir  # every output inside --out-dir, as in every mode
    try:
        result = batch.convert(folder, _dst(folder, args.out_dir), to=args.to, report=args.report,
                               resume=args.resume, shard=shard, workers=args.workers or width,
                               executor=executor, overwrite=args.overwrite, progress=progress,
                               options=batch.options_from_args(args, *secrets), storage_options=options or None,
                               inside=inside)
    finally:
        line.clear()
    for note in result.notes:
        print(printable(f"note: {note}"), file=sys.stderr)
    ended = " (interrupted)" if result.interrupted else ""
    if result.stopped is not None:
        ended = f" (stopped: {result.stopped}; the files after it were not converted)"
    print(result.summary() + ended)
    if result.stopped is not None:
        print(printable(f"godot-formats convert: {result.stopped}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    if result.interrupted:
        return 130
    return EXIT_BAD_INPUT if result.counts["failed"] else 0
