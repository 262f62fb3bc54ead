"""Converting many save files at once: on every core, resumable, with a report row per input.

A studio migrating its players' saves from Godot 3 to Godot 4 needs three things that the
one-file-at-a-time command line did not give (issue 25): all the cores, a record of what
happened to each save (converted, failed and why, what was lost), and a way to pick up a
killed run without counting its finished files as failures.  This module is that layer:

- :func:`convert_bytes` converts one file's bytes and never raises: it returns the output (or
  None) and the file's report row.  It is the one code path for one input: the command line
  (``godot-formats convert``), the process pool of :func:`convert` and any other engine (a Dask
  executor, Spark's ``mapInPandas``, Ray's ``map_batches``) all go through :func:`convert_data`
  and word every error with :func:`failure`.
- :func:`convert` converts a folder into another folder on a process pool (every core by
  default), hardened against workers that die, with a JSON-lines journal that is also the
  resume state, and a stable-hash ``shard`` so that one command runs as an array job.

Outputs are written atomically (a temporary file in the destination folder, then a link or a
rename) and never replace an existing file unless ``overwrite=True``.  There is no fsync per
file: before a batch of rows is appended to the journal the written files are flushed to disk
(``os.sync``) and the journal is fsynced, so the journal only records files that are durable.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import os
import signal
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import attrs

from .commands.common import ctrl_c_deferred, describe_layers, internal_error, located, one_line
from .core.errors import AmbiguousDialectError, ConversionError, DecodeError, GodotFormatsError
from .core.version import __version__
from .layers import compression
from .layers.files import TEMP_MARK, is_temp_name
from .saves.conversion import Loss

_J = TypeVar("_J")
_R = TypeVar("_R")


__all__ = ["ROW_FIELDS", "BatchOptions", "Result", "arrow_schema", "convert", "convert_bytes", "convert_data",
           "failure", "in_shard"]

#: The fields of a report row, in order.  ``status`` is converted / unchanged / failed / skipped;
#: ``error_kind`` is None or one of :data:`ERROR_KINDS`; ``losses`` is a list of strings (the
#: changes applied under ``policy="lossy"``, or those that made a strict conversion fail);
#: ``detail`` is the command line's one-line description of what was done.
ROW_FIELDS: tuple[str, ...] = (
    "path", "status", "error_kind", "error", "source_dialect", "layers", "input_size", "input_sha256",
    "output_size", "output_sha256", "output_path", "losses", "detail", "version", "run_id", "time",
)

#: What kind of failure a failed row is: the input is bad, converting it would lose data (strict
#: policy), a bug of ours (or a worker that died), or the file system refused a read or a write.
ERROR_KINDS = ("bad input", "would lose", "internal", "io")

#: The ``error`` of a row skipped because the journal says an earlier run finished it.
DONE_EARLIER = "done earlier (the journal has it, and the input's SHA-256 still matches)"

_FINAL = ("converted", "unchanged")


def arrow_schema() -> Any:
    """The report rows as a ``pyarrow.schema`` (None without pyarrow), for Parquet reports and for
    engines that want a schema up front (Spark's ``mapInPandas``, Ray's ``map_batches``)."""
    try:
        import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    types = {"input_size": pa.int64(), "output_size": pa.int64(), "losses": pa.list_(pa.string()),
             "time": pa.float64()}
    return pa.schema([(name, types.get(name, pa.string())) for name in ROW_FIELDS])


@attrs.frozen
class BatchOptions:
    """How to convert each file; the command line's options, for a library caller."""

    to: str
    source: str = "auto"
    policy: str = "strict"
    password: str | None = None
    key: bytes | None = None
    verify: bool = True
    framing: str = "auto"
    allow_objects: bool = False
    format: str | None = None
    allow_scripts: bool = False


@attrs.frozen
class Converted:
    """One file converted: the output bytes, the one-line description, the losses, and what the
    input was (its dialect and layers, for the report)."""

    output: bytes
    how: str
    losses: list[Loss]
    source_dialect: str | None
    layers: str | None
    reopen: Callable[[bytes], bool] = attrs.field(eq=False, repr=False)


Step = Callable[[str], None]


def _no_step(what: str) -> None:
    """A step callback that shows nothing."""


def convert_data(data: bytes, opts: Any, step: Step = _no_step) -> Converted:
    """Convert one file's bytes: a resource save through ``ResourceFile.convert``, anything else
    through its one reading (``gf.open``) and ``SaveFile.convert`` (the layers migrate with the
    values).  ``opts`` is an :class:`BatchOptions` (or the command line's arguments, which have the same
    names).  Raises the library's errors; :func:`failure` words them, the same for every caller."""
    from .saves.savefile import open as open_file

    step("reading")
    resource = _convert_resource(data, opts)
    if resource is not None:
        return resource
    dialect = None if opts.source == "auto" else opts.source
    try:
        sf = open_file(data, password=opts.password, key=opts.key, dialect=dialect,
                       allow_objects=opts.allow_objects, framing=opts.framing)
    except AmbiguousDialectError as e:
        what = "give --from" if len(set(e.candidates)) > 1 else "give --framing"
        raise GodotFormatsError(f"ambiguous: {' and '.join(e.candidates)} read this file completely, as "
                                f"different values; {what}") from None
    except DecodeError as e:
        raise located(e) from None
    step("converting")
    converted, losses = sf.convert(opts.to, policy=opts.policy)
    out = converted.to_bytes()
    how = f"{sf.dialect.name} -> {opts.to}"
    layered = sf.encryption is not None or sf.compression is not None
    if layered or sf.container not in ("store_var", "var_to_bytes"):
        how += f" ({describe_layers(sf)})"
    elif sf.container == "store_var":
        how += f", {len(sf.values)} store_var record(s)" + (", big-endian lengths" if sf.byteorder == "big" else "")
    if sf.also:
        how += f" (the bytes also read as {', '.join(sf.also)}: same result)"

    def reopen(written: bytes) -> bool:
        back = open_file(written, password=opts.password, key=opts.key, dialect=opts.to,
                         allow_objects=opts.allow_objects, framing=opts.framing)
        return bool(back.values == converted.values) or back.to_bytes() == written

    return Converted(out, how, losses, sf.dialect.name, describe_layers(sf), reopen)


def _convert_resource(data: bytes, opts: Any) -> Converted | None:
    """A resource save (``.tres``/``.res``) converted, in ``opts.format`` (default: its own); None for
    anything else."""
    from .resources import open_resource, resource_form

    fmt = getattr(opts, "format", None)
    if resource_form(data) not in ("binary", "text"):
        if fmt:
            raise GodotFormatsError("--format applies to resource saves (.tres, .res) only")
        return None
    rf = open_resource(data)
    form = fmt or rf.format
    converted, losses = rf.convert(opts.to, policy=opts.policy)
    scripts = getattr(opts, "allow_scripts", False)
    out = converted.to_bytes(format=form, allow_scripts=scripts)
    how = f"resource, Godot {rf.engine} {rf.format} -> {opts.to} {form}"

    def reopen(written: bytes) -> bool:
        return bool(open_resource(written).to_bytes(format=form, allow_scripts=scripts) == written)

    return Converted(out, how, losses, f"godot{rf.engine}", f"resource ({rf.format})", reopen)


def failure(e: Exception) -> tuple[str, str, tuple[Loss, ...]]:
    """``(error kind, error, losses)`` of a failed conversion: the one wording of every caller."""
    if isinstance(e, ConversionError):
        return ("would lose", f"would lose data ({len(e.losses)} change(s); --policy lossy applies them)",
                tuple(e.losses))
    if isinstance(e, GodotFormatsError):
        hint = " (--allow-objects reads them as inert data)" if "allow_objects" in str(e) else ""
        return "bad input", f"{e}{hint}", ()
    if isinstance(e, OSError):
        return "io", e.strerror or one_line(e), ()
    return "internal", internal_error(e), ()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def new_row(name: str, data: bytes | None, run_id: str = "") -> dict[str, Any]:
    """A row with every :data:`ROW_FIELDS` key, for the input ``name`` (its bytes, when read)."""
    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(path=name, losses=[], version=__version__, run_id=run_id, time=time.time())
    if data is not None:
        row.update(input_size=len(data), input_sha256=_sha(data))
    return row


def convert_bytes(data: bytes, *, name: str, to: str, source: str = "auto", policy: str = "strict",
                  password: str | None = None, key: bytes | None = None, verify: bool = True,
                  options: BatchOptions | None = None, run_id: str = "") -> tuple[bytes | None, dict[str, Any]]:
    """Convert one file's bytes; never raises (a bug of ours is a failed row of kind "internal").

    Returns ``(output, row)``: the output is None when the file failed.  With ``verify`` the
    output is read back and must give what was meant (the converted values) before it counts.
    ``options`` (an :class:`BatchOptions`) overrides the keyword arguments, for callers that hold one.
    """
    opts = options or BatchOptions(to=to, source=source, policy=policy, password=password, key=key, verify=verify)
    row = new_row(name, data, run_id)
    try:
        done = convert_data(data, opts)
        if opts.verify and not done.reopen(done.output):
            raise RuntimeError("verification failed: the output reads back as other values")
    except Exception as e:  # every failure, a bug included, is this file's row
        kind, text, losses = failure(e)
        row.update(status="failed", error_kind=kind, error=text, losses=[str(x) for x in losses])
        return None, row
    row.update(status="unchanged" if done.output == data else "converted", source_dialect=done.source_dialect,
               layers=done.layers, output_size=len(done.output), output_sha256=_sha(done.output),
               losses=[str(x) for x in done.losses], detail=done.how)
    return done.output, row


# -- the pool: one task per file ------------------------------------------------------------------------


@attrs.frozen
class Task:
    """One input file of a run and where its output goes."""

    key: str  # the path relative to src, with '/': the report's path, the shard's and the journal's key
    source: str
    dest: str
    opts: BatchOptions
    overwrite: bool
    run_id: str
    done_sha: str | None = None  # resume: the input's SHA-256 when the journal has it final
    storage_options: dict[str, Any] | None = None  # for fsspec URLs (s3://, gs://, memory://)


def _equivalent(existing: bytes, out: bytes, opts: BatchOptions) -> bool:
    """Whether an existing output already holds what ``out`` holds: the same bytes, or (an encrypted
    save gets a fresh IV each time) the same values read back.  This is how a rerun of a file whose
    journal row was lost to a kill counts it as converted, without replacing it."""
    if existing == out:
        return True
    from .saves.savefile import open as open_file

    try:
        mine, theirs = (open_file(b, password=opts.password, key=opts.key, dialect=opts.to,
                                  allow_objects=opts.allow_objects, framing=opts.framing) for b in (out, existing))
        layers = [(x.container, x.encryption is None, x.compression is None) for x in (mine, theirs)]
        return bool(mine.values == theirs.values) and layers[0] == layers[1]
    except Exception:  # not a save of ours at all: not the same
        return False


def _write_new(dest: Path, data: bytes, overwrite: bool, opts: BatchOptions) -> tuple[str | None, bytes]:
    """Write ``data`` to ``dest`` through a temporary file beside it (no fsync: the journal batches
    that).  Without ``overwrite`` an existing file is never replaced (a hard link refuses it
    atomically); one that already holds what ``data`` holds (a rerun of a file whose row was lost)
    is kept.  Returns the refusal in words (or None) and the bytes ``dest`` now holds, which the row
    describes: a kept encrypted save has another IV than ``data``.  A temporary file of ``dest``
    left by a run killed while writing it goes first (one task writes a given ``dest`` at a time)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or (dest.exists() and not stat.S_ISREG(dest.stat().st_mode)):
        return f"{dest} is not a regular file; refusing to replace it", data
    _remove_temps(str(dest))
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}{TEMP_MARK}", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if overwrite:
            os.replace(tmp, dest)
            return None, data
        try:
            os.link(tmp, dest)
        except FileExistsError:
            existing = dest.read_bytes()
            if _equivalent(existing, data, opts):
                return None, existing
            return f"{dest} would replace an existing file; use overwrite=True (--overwrite)", data
        return None, data
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def is_url(place: object) -> bool:
    """Whether a source or destination is an fsspec URL (``s3://bucket/saves``, ``memory://x``)."""
    return isinstance(place, str) and "://" in place


def _url_fs(url: str, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path in it (needs fsspec: the ``[cloud]`` extra)."""
    try:
        import fsspec  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise GodotFormatsError(f"{url}: URLs need fsspec: pip install 'godot-formats[cloud]'") from None
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    return fs, path


def _read(task: Task) -> bytes:
    if is_url(task.source):
        fs, path = _url_fs(task.source, task.storage_options)
        return bytes(fs.cat_file(path))
    return Path(task.source).read_bytes()


def _put_new(task: Task, out: bytes) -> tuple[str | None, bytes]:
    """Write an output to an object store: one PUT, after the conversion was verified; an existing
    object is replaced only with ``overwrite``, and kept when it holds the same values already.
    Returns the refusal (or None) and the bytes the object now holds."""
    fs, path = _url_fs(task.dest, task.storage_options)
    if not task.overwrite:
        try:  # one GET, not exists() and then a GET: on S3 exists() of a new key costs a HEAD and a LIST
            existing: bytes | None = bytes(fs.cat_file(path))
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if _equivalent(existing, out, task.opts):
                return None, existing
            return f"{task.dest} would replace an existing file; use overwrite=True (--overwrite)", out
    fs.pipe_file(path, out)
    return None, out


def _work(task: Task) -> dict[str, Any]:
    """Convert one file of a run, in a worker: read, :func:`convert_bytes`, write.  Never raises."""
    try:
        data = _read(task)
    except Exception as e:  # OSError locally; an object store's client raises its own errors
        row = new_row(task.key, None, task.run_id)
        why = e.strerror if isinstance(e, OSError) and e.strerror else one_line(e)
        row.update(status="failed", error_kind="io", error=f"cannot read: {why}")
        return row
    if task.done_sha is not None and _sha(data) == task.done_sha:
        row = new_row(task.key, data, task.run_id)
        row.update(status="skipped", error=DONE_EARLIER, output_path=task.dest)
        return row
    out, row = convert_bytes(data, name=task.key, to=task.opts.to, options=task.opts, run_id=task.run_id)
    if out is None:
        return row
    row["output_path"] = task.dest
    try:
        if is_url(task.dest):
            refused, there = _put_new(task, out)
        else:
            refused, there = _write_new(Path(task.dest), out, task.overwrite, task.opts)
    except Exception as e:  # OSError locally; an object store's client raises its own errors
        why = e.strerror if isinstance(e, OSError) and e.strerror else one_line(e)
        refused, there = f"cannot write {task.dest}: {why}", out
    if refused is not None:
        row.update(status="failed", error_kind="io", error=refused)
    else:
        row["detail"] = f"{row['detail']} -> {task.dest}"
        if there is not out:  # an earlier run's output, with the same values, kept: the row describes it
            row.update(output_size=len(there), output_sha256=_sha(there),
                       detail=f"{row['detail']} (kept: it already holds these values)")
    return row


def _worker_start() -> None:
    """Workers leave Ctrl-C to the parent, which stops them in order (no half-written files)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _remove_temps(dest: str) -> None:
    """Our temporary files for ``dest``, left by a worker that died while writing it."""
    path = Path(dest)
    with contextlib.suppress(OSError), os.scandir(path.parent) as it:
        for entry in it:
            if entry.name.startswith(f".{path.name}{TEMP_MARK}") and is_temp_name(entry.name):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _died(task: Task, why: str) -> dict[str, Any]:
    row = new_row(task.key, None, task.run_id)
    row.update(status="failed", error_kind="internal", error=why, output_path=task.dest)
    return row


def _solo(task: Task) -> dict[str, Any]:
    """Retry a file alone in a fresh one-worker pool, after its pool broke: a file that kills its
    worker twice fails, and only that file."""
    _remove_temps(task.dest)
    pool = ProcessPoolExecutor(1, initializer=_worker_start)
    try:
        return pool.submit(_work, task).result()
    except BrokenProcessPool:
        _remove_temps(task.dest)
        return _died(task, "the worker process died converting this file, twice (the second time alone)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def submit(pool: Executor, fn: Callable[[_J], _R], job: _J) -> Future[_R]:
    """``pool.submit(fn, job)``; a pool that broke already (a worker died since the last look) gives
    a future holding that error, so that the job gets its solo retry with the others in flight
    (this module's pool and the command line's, :mod:`.commands.convert_pool`)."""
    try:
        return pool.submit(fn, job)
    except BrokenProcessPool as e:
        future: Future[_R] = Future()
        future.set_exception(e)
        return future


#: The most files per future on the default pool: one future per small save costs the parent as
#: much CPU as the worker spends converting it (pickling, the pool's threads, waking them), which
#: kept ``--jobs 2`` from using both cores.  Chunks start at one file and grow to this as files
#: finish, so a run of a few files still spreads over every worker.
POOL_CHUNK = 8


def _chunk_size(done: int, workers: int) -> int:
    """How many files the next chunk of the default pool takes, once ``done`` files are back."""
    return max(1, min(POOL_CHUNK, done // (4 * workers)))


def _run(items: Iterable[Task | dict[str, Any]], workers: int,
         spill: list[dict[str, Any]]) -> Generator[dict[str, Any], None, None]:
    """The rows of ``items`` (tasks run on the default pool in chunks; ready rows passed through),
    as they finish.

    At most ``2 * workers`` chunks are in flight, so the listing is streamed.  When the pool breaks
    (a worker died), every file of the chunks in flight is retried alone and the run goes on with a
    fresh pool.  Closing the generator (Ctrl-C) cancels what has not started and waits for the
    chunks being written, so no temporary file is left behind; the rows of those files, and the
    rows back but not yet given, go to ``spill`` (a closed generator yields no more), so that the
    journal has them too.
    """
    pool: Executor = ProcessPoolExecutor(workers, initializer=_worker_start)
    inflight: dict[Future[list[dict[str, Any]]], list[Task]] = {}
    ready: collections.deque[dict[str, Any]] = collections.deque()
    lost: collections.deque[Task] = collections.deque()  # files of a broken pool, each to be retried alone
    source = iter(items)
    done = 0
    try:
        while True:
            chunk: list[Task] = []
            for item in source:
                if isinstance(item, dict):
                    ready.append(item)
                    yield from _give(ready)
                    continue
                chunk.append(item)
                if len(chunk) >= _chunk_size(done, workers):
                    inflight[submit(pool, _work_many, chunk)] = chunk
                    chunk = []
                    if len(inflight) >= 2 * workers:
                        break
            if chunk:
                inflight[submit(pool, _work_many, chunk)] = chunk
            if not inflight:
                return
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            _collect(finished, inflight, ready)
            done += len(ready)
            yield from _give(ready)
            if any(isinstance(f.exception(), BrokenProcessPool) for f in inflight if f.done()):
                with ctrl_c_deferred():
                    lost.extend(task for tasks in inflight.values() for task in tasks)
                    inflight.clear()
                pool.shutdown(wait=True, cancel_futures=True)
                while lost:
                    row = _solo(lost[0])
                    with ctrl_c_deferred():
                        ready.append(row)
                        lost.popleft()
                    done += 1
                    yield from _give(ready)
                pool = ProcessPoolExecutor(workers, initializer=_worker_start)
    finally:
        with ctrl_c_deferred():  # a first Ctrl-C in wait() runs this on its way up: a second must not cut it
            pool.shutdown(wait=True, cancel_futures=True)
            for future, tasks in inflight.items():
                if _finished(future):
                    spill.extend(future.result())
                else:
                    lost.extend(tasks)
            for task in lost:
                _remove_temps(task.dest)
            spill.extend(ready)


def _finished(future: Future[Any]) -> bool:
    """Whether ``future`` ran to its result (not cancelled, no error: a broken pool's raise)."""
    return future.done() and not future.cancelled() and future.exception() is None


def _collect(finished: set[Future[list[dict[str, Any]]]], inflight: dict[Future[list[dict[str, Any]]], list[Task]],
             ready: collections.deque[dict[str, Any]]) -> None:
    """The rows of the finished chunks onto ``ready``; a chunk of the broken pool stays in
    ``inflight`` (for its files' solo retries), any other exception fails each of its files."""
    for future in finished:
        error = future.exception()
        with ctrl_c_deferred():  # moved whole: a row in both places would be spilled twice, in neither lost
            if error is None:
                ready.extend(future.result())
                del inflight[future]
            elif not isinstance(error, BrokenProcessPool):
                ready.extend(_chunk_rows(future, inflight.pop(future)))


def _give(ready: collections.deque[_R]) -> Generator[_R, None, None]:
    """Yield each item of ``ready`` and only then drop it: closed at a ``yield`` (Ctrl-C), the item
    given last is still in ``ready`` and goes to the spill with the rest, where the consumer, which
    knows the item it was given last, skips it (:func:`convert`'s ``record``)."""
    while ready:
        yield ready[0]
        ready.popleft()


#: Files per future on an executor given by the caller (``executor=``): a Dask future costs
#: milliseconds of scheduling, more than a small save takes to convert.
CHUNK = 16


def _work_many(tasks: list[Task]) -> list[dict[str, Any]]:
    """:func:`_work` on a chunk of files, in one future: each file on one thread, as the pool's
    other workers keep the other cores busy (a process pool's, a Dask cluster's, a thread pool's)."""
    with compression.one_thread():
        return [_work(task) for task in tasks]


def _chunk_rows(future: Future[list[dict[str, Any]]], tasks: list[Task]) -> list[dict[str, Any]]:
    """The rows of a finished chunk; a chunk whose future raised fails each of its files."""
    error = future.exception()
    if error is None:
        return future.result()
    kind, text, _ = failure(error) if isinstance(error, Exception) else ("internal", repr(error), ())
    rows = [_died(task, text) for task in tasks]
    for row in rows:
        row["error_kind"] = kind
    return rows


def _run_on(items: Iterable[Task | dict[str, Any]], workers: int, executor: Executor,
            spill: list[dict[str, Any]]) -> Generator[dict[str, Any], None, None]:
    """:func:`_run` on the caller's executor (a Dask client's, a thread pool): files go in chunks of
    :data:`CHUNK`, at most ``2 * workers`` chunks in flight.  Closing the generator cancels the
    chunks not started; the rows already back go to ``spill``."""
    inflight: dict[Future[list[dict[str, Any]]], list[Task]] = {}
    ready: collections.deque[dict[str, Any]] = collections.deque()
    source = iter(items)
    buf: list[Task] = []
    exhausted = False
    try:
        while True:
            while not exhausted and len(inflight) < 2 * workers:
                item = next(source, None)
                exhausted = item is None
                if isinstance(item, dict):
                    ready.append(item)
                elif item is not None:
                    buf.append(item)
                if buf and (len(buf) >= CHUNK or exhausted):
                    inflight[executor.submit(_work_many, buf)] = buf
                    buf = []
            yield from _give(ready)
            if not inflight:
                return
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for future in finished:
                with ctrl_c_deferred():
                    ready.extend(_chunk_rows(future, inflight.pop(future)))
    finally:
        for future in inflight:
            future.cancel()
        spill.extend(ready)


# -- listing, sharding, the journal ------------------------------------------------------------------


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Whether ``key`` belongs to shard ``i`` of ``n``: a stable hash (SHA-1 of the key), the same on
    every machine and every run, unlike Python's ``hash()``."""
    i, n = shard
    return int.from_bytes(hashlib.sha1(key.encode("utf-8", "surrogateescape")).digest()[:8], "big") % n == i


def _walk(root: Path, exclude: Path | None) -> Iterator[tuple[str, Path, str | None]]:
    """``(key, path, why skipped or None)`` for every entry below ``root``, folder by folder in name
    order, streamed (the first file comes before the tree is walked whole).  Symlinks are not
    followed, our temporary files and the output folder are skipped."""
    todo = [root]
    while todo:
        here = todo.pop()
        with os.scandir(here) as it:
            entries = sorted(it, key=lambda e: e.name)
        folders = []
        for entry in entries:
            path = Path(entry.path)
            key = path.relative_to(root).as_posix()
            if entry.is_symlink():
                yield key, path, "a symlink, not followed"
            elif entry.is_dir():
                if exclude is None or Path(os.path.realpath(path)) != exclude:
                    folders.append(path)
            elif not entry.is_file():
                yield key, path, "not a regular file"
            elif is_temp_name(entry.name):
                yield key, path, "a temporary file left by an interrupted godot-formats write"
            else:
                yield key, path, None
        todo.extend(reversed(folders))


def read_journal(path: Path) -> dict[str, dict[str, Any]]:
    """The last row of each key in a journal (a cut last line, from a kill, is ignored)."""
    rows: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(FileNotFoundError), path.open(encoding="utf-8") as f:
        for line in f:
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict) and "path" in row:
                    rows[row["path"]] = row
    return rows


def _final(row: dict[str, Any]) -> bool:
    return row.get("status") in _FINAL or (row.get("status") == "skipped" and row.get("error") == DONE_EARLIER)


@contextlib.contextmanager
def _locked(f: Any) -> Iterator[None]:
    """The journal held alone while it is appended or mended: shards sharing one journal (the
    default one, beside a shared ``dst``) never see each other's half-written batch as a torn
    line, nor interleave their lines.  Where ``fcntl`` is missing, one process at a time is the
    caller's to keep."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _cut_torn_tail(path: Path) -> None:
    """Drop a last line cut short by a kill in the middle of an append (its rows were not fsynced, so
    none of them was promised), so that this run's first row does not glue onto it and the journal
    stays JSON lines for every reader.  A last line that is whole JSON without its newline (a file
    another tool wrote) keeps its row and gets the newline."""
    with contextlib.suppress(FileNotFoundError), path.open("r+b") as f, _locked(f):
        end = f.seek(0, os.SEEK_END)
        if end == 0:
            return
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return
        start = _line_start(f, end)
        f.seek(start)
        try:
            json.loads(f.read(end - start))
        except ValueError:
            f.truncate(start)
        else:
            f.write(b"\n")


def _line_start(f: BinaryIO, end: int) -> int:
    """Where the last line of the open file ``f`` (``end`` bytes long) starts."""
    pos = end
    while pos > 0:
        step = min(pos, 1 << 16)
        f.seek(pos - step)
        cut = f.read(step).rfind(b"\n")
        if cut >= 0:
            return pos - step + cut + 1
        pos -= step
    return 0


class Journal:
    """The JSON-lines journal of a run, appended in batches: the written outputs are flushed to disk
    first (one ``os.sync``), then the rows are appended and the journal fsynced, so a row is only
    ever there for a durable file.  Batches: every :attr:`every` rows or :attr:`seconds`."""

    every = 256
    seconds = 1.0

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        _cut_torn_tail(path)
        self.file = path.open("a", encoding="utf-8")
        self.pending: list[dict[str, Any]] = []
        self.last = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        self.pending.append(row)
        if len(self.pending) >= self.every or time.monotonic() - self.last >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            if any(r.get("status") in _FINAL for r in self.pending):
                os.sync()
            with _locked(self.file):
                self.file.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.pending))
                self.file.flush()
                os.fsync(self.file.fileno())
            self.pending.clear()
        self.last = time.monotonic()

    def close(self) -> None:
        self.flush()
        self.file.close()


# -- the run ------------------------------------------------------------------------------------------


@attrs.define
class Result:
    """What a run did: the counts by status, the rows (in the order they finished), the journal and
    report paths, and whether Ctrl-C cut it short."""

    counts: dict[str, int]
    rows: list[dict[str, Any]]
    journal: Path
    report: Path | None
    run_id: str
    interrupted: bool = False
    seconds: float = 0.0

    def summary(self) -> str:
        return f"{len(self.rows)} file(s): " + ", ".join(f"{n} {status}" for status, n in self.counts.items())


def _journal_path(dst: Path, report: Path | None, url: bool = False) -> Path:
    """The report when it is JSON lines; else beside the destination folder (beside the report, for
    a destination on an object store, where a file cannot be appended to)."""
    if report is not None and report.suffix == ".jsonl":
        return report
    if url and report is not None:
        return report.with_suffix(".journal.jsonl")
    return dst.parent / f"{dst.name}.godot-formats-journal.jsonl"


def _walk_url(root: str, storage_options: dict[str, Any] | None) -> Iterator[tuple[str, str, str | None]]:
    """``(key, url, None)`` for every object below the URL ``root``, folder by folder in name order,
    streamed (``fs.walk`` lists one folder at a time)."""
    fs, base = _url_fs(root, storage_options)
    base = base.rstrip("/")
    for folder, subfolders, files in fs.walk(base):
        subfolders.sort()
        for name in sorted(files):
            full = f"{folder.rstrip('/')}/{name}"
            key = full[len(base):].lstrip("/")
            yield key, fs.unstrip_protocol(full), "a temporary file" if is_temp_name(name) else None


def key_dest(key: str, dst: str | os.PathLike[str]) -> str | None:
    """Where the input ``key`` goes below ``dst``: ``dst`` + the key's path, without a URL's
    protocol (``s3://studio/saves/a.sav`` -> ``<dst>/studio/saves/a.sav``) nor a leading ``/``
    (``/data/a.sav`` -> ``<dst>/data/a.sav``).  A folder's keys are relative already, so it keeps its
    layout.  The rule needs no other key, so a streamed listing and each shard decide it alone.
    None for a key with ``..`` (it would climb out of ``dst``) or no path at all."""
    path = key.split("://", 1)[1] if is_url(key) else key
    parts = [part for part in path.replace(os.sep, "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    rel = "/".join(parts)
    return f"{str(dst).rstrip('/')}/{rel}" if is_url(dst) else str(Path(dst) / rel)


def _keys(src: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[str, str, str | None]]:
    """``(key, key, None)`` for each key of an iterable ``src``, as it comes (a generator over a
    database's rows is read as the run goes)."""
    for item in src:
        key = os.fspath(item)
        yield key, key, None


def _is_place(src: object) -> bool:
    """Whether ``src`` is one folder or URL (else an iterable of keys)."""
    return isinstance(src, (str, os.PathLike))


def _listing(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str],
             storage_options: dict[str, Any] | None) -> Iterator[tuple[str, str, str | None]]:
    if not _is_place(src):
        return _keys(src)  # type: ignore[arg-type]
    if is_url(src):
        return _walk_url(str(src), storage_options)
    exclude = None if is_url(dst) else Path(os.path.realpath(dst))
    return ((key, str(path), why) for key, path, why in _walk(Path(src), exclude))  # type: ignore[arg-type]


#: The error of a key that has no output path under ``dst`` (:func:`key_dest`).
NO_DEST = "no output path: the key is empty or climbs out of the destination with '..'"


def _items(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str],
           opts: BatchOptions, shard: tuple[int, int], done: dict[str, dict[str, Any]], overwrite: bool,
           run_id: str, storage_options: dict[str, Any] | None = None) -> Iterator[Task | dict[str, Any]]:
    """The tasks of a run (and the rows of what is skipped or refused at once), streamed from the
    listing.  Two keys with one output (``s3://b/x.sav`` and ``gs://b/x.sav``, ``/d/x.sav`` and
    ``d/x.sav``) would write it twice, the second over the first: the first is converted, the
    other fails naming it.  A key given twice is one input, converted once (one row)."""
    outputs: dict[str, str] = {}  # each output handed out, and its key
    for key, path, skipped in _listing(src, dst, storage_options):
        if not in_shard(key, shard):
            continue
        dest = key_dest(key, dst)
        first = outputs.get(dest) if dest is not None else None
        if first == key:
            continue  # the same key again
        if first is not None:
            row = new_row(key, None, run_id)
            row.update(status="failed", error_kind="bad input",
                       error=f"its output {dest} is also the output of {first} (written once, for {first})")
            yield row
            continue
        if dest is not None:
            outputs[dest] = key
        if skipped is not None or dest is None:
            row = new_row(key, None, run_id)
            if dest is None and skipped is None:
                row.update(status="failed", error_kind="bad input", error=NO_DEST)
            else:
                row.update(status="skipped", error=skipped)
            yield row
            continue
        earlier = done.get(key)
        sha = earlier.get("input_sha256") if earlier is not None and _final(earlier) else None
        yield Task(key, path, dest, opts, overwrite, run_id, sha, storage_options)


def convert(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str], *, to: str,
            source: str = "auto",
            policy: str = "strict", password: str | None = None, key: bytes | None = None,
            report: str | os.PathLike[str] | None = None, resume: bool = False, verify: bool = True,
            shard: tuple[int, int] = (0, 1), workers: int | None = None, executor: Executor | None = None,
            progress: Callable[[dict[str, Any], dict[str, int]], None] | None = None,
            overwrite: bool = False, options: BatchOptions | None = None,
            storage_options: dict[str, Any] | None = None) -> Result:
    """Convert every file below the folder (or fsspec URL) ``src`` into ``dst`` (same layout), or each
    key of an iterable ``src`` (paths or URLs) to :func:`key_dest`'s place below ``dst``, on ``workers``
    processes (default: every core) or on ``executor`` (for example a Dask ``Client``'s
    ``get_executor()``).

    Every input gets one row in the journal (``report`` if it ends in ``.jsonl``, else
    ``<dst>.godot-formats-journal.jsonl`` beside ``dst``); a ``.parquet`` report is written at the
    end (needs pyarrow).  ``resume=True`` skips inputs that the journal has as converted or
    unchanged and whose SHA-256 still matches (counted as skipped).  ``shard=(i, n)`` takes the
    inputs whose key hashes to ``i``.  ``progress(row, counts)`` is called after each file.
    Ctrl-C stops the run in order and returns what was done (``interrupted=True``).
    """
    if _is_place(src) and not is_url(src) and not Path(src).is_dir():  # type: ignore[arg-type]
        raise GodotFormatsError(f"{src} is not a folder")
    if isinstance(src, (bytes, bytearray)):
        raise GodotFormatsError("src is a folder, a URL or an iterable of keys, not bytes")
    i, n = shard
    if not (isinstance(i, int) and isinstance(n, int) and 0 <= i < n):
        raise GodotFormatsError(f"shard must be (i, n) with 0 <= i < n, not {shard!r}")
    opts = options or BatchOptions(to=to, source=source, policy=policy, password=password, key=key, verify=verify)
    report_path = Path(report) if report is not None else None
    if report_path is not None and report_path.suffix not in (".jsonl", ".parquet"):
        raise GodotFormatsError(f"the report must be a .jsonl or .parquet file, not {report}")
    if report_path is not None and report_path.suffix == ".parquet" and arrow_schema() is None:
        raise GodotFormatsError("a Parquet report needs pyarrow: pip install 'godot-formats[parquet]'")
    if is_url(dst) and report_path is None:
        raise GodotFormatsError("a URL destination needs report= (a local .jsonl or .parquet file: the journal)")
    journal_path = _journal_path(Path(str(dst)), report_path, is_url(dst))
    done = read_journal(journal_path) if resume else {}
    run_id = uuid.uuid4().hex
    result = Result({"converted": 0, "unchanged": 0, "failed": 0, "skipped": 0}, [], journal_path,
                    report_path, run_id)
    started = time.monotonic()
    journal = Journal(journal_path)
    spill: list[dict[str, Any]] = []
    items = _items(src, dst, opts, shard, done, overwrite, run_id, storage_options)
    width = workers or os.cpu_count() or 1
    rows = _run(items, width, spill) if executor is None else _run_on(items, width, executor, spill)

    last: list[dict[str, Any]] = []  # the row recorded last (a closed run may spill it again: see _give)

    def record(row: dict[str, Any]) -> None:
        with ctrl_c_deferred():  # journaled, counted and shown, or none of them
            journal.add(row)
            result.rows.append(row)
            result.counts[row["status"]] += 1
            last[:] = [row]
            if progress is not None:
                progress(row, result.counts)

    try:
        for row in rows:
            record(row)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        with ctrl_c_deferred():  # a second Ctrl-C waits for the files being written and their rows
            rows.close()
            given = last[0] if last else None
            for row in spill:
                if row is not given:
                    record(row)
            journal.close()
    result.seconds = time.monotonic() - started
    if report_path is not None and report_path.suffix == ".parquet":
        write_parquet(result.rows, report_path)
    return result


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    """The rows as a Parquet table (pyarrow), which DuckDB, pandas and Spark read."""
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    schema = arrow_schema()
    table = pa.Table.from_pylist([{k: r.get(k) for k in ROW_FIELDS} for r in rows], schema=schema)
    pq.write_table(table, path)


def options_from_args(args: argparse.Namespace, password: str | None, key: bytes | None) -> BatchOptions:
    """The :class:`BatchOptions` of the command line's arguments."""
    return BatchOptions(to=args.to, source=args.source, policy=args.policy, password=password, key=key,
                   verify=getattr(args, "verify", True), framing=args.framing, allow_objects=args.allow_objects,
                   format=getattr(args, "format", None), allow_scripts=getattr(args, "allow_scripts", False))
