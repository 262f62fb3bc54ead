"""A run: every file below a folder (or an fsspec URL, or each key of an iterable) converted into
another folder, on a process pool (every core by default) or a caller's executor, with a journal
that is also the resume state, and a stable-hash ``shard`` so that one command runs as an array job.

Outputs are written atomically (:mod:`.output`: a temporary file in the destination folder, then a
link or a rename), inside the output folder, and never replace an existing file unless
``overwrite=True``.  There is no fsync per file: before a batch of rows is appended to the journal
the written files are flushed to disk (``os.sync``) and the journal is fsynced
(:class:`.journal.Journal`), so the journal only records files that are durable.
"""

from __future__ import annotations

import os
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import attrs

from ..core.errors import GodotFormatsError
from ..core.limits import MAX_FILE_SIZE
from ..layers.files import read_bounded
from .journal import Journal, done_sha, read_journal
from .onefile import BatchOptions, convert_bytes, equivalent, failure, one_line
from .output import remove_stale_temps, write_new
from .pool import in_order, on_executor
from .report import DONE_EARLIER, NO_DEST, Result, arrow_schema, new_row, sha, write_parquet
from .signals import ctrl_c_deferred
from .walk import entries, in_shard, is_url, key_dest, not_regular, url_fs, walk_url

__all__ = ["Task", "convert"]


@attrs.frozen
class Task:
    """One input file of a run and where its output goes."""

    key: str  # the path relative to src, with '/': the report's path, the shard's and the journal's key
    source: str
    dest: str
    opts: BatchOptions
    overwrite: bool
    run_id: str
    root: str  # the folder every output must resolve inside (``dst``, or the command line's --out-dir)
    since: float  # when the run began (time.time()): an older temporary file naming no writer is stale
    done_sha: str | None = None  # resume: the input's SHA-256 when the journal has it final
    storage_options: dict[str, Any] | None = None  # for fsspec URLs (s3://, gs://, memory://)


def _read(task: Task) -> bytes:
    """The input's bytes: a regular file (a FIFO or a device named as an input is refused before it
    is read, never waited on), or an object of a store; at most the one size limit."""
    if is_url(task.source):
        return _cat(task.source, task.storage_options)
    return read_bounded(task.source, MAX_FILE_SIZE)[0]


def _cat(url: str, storage_options: dict[str, Any] | None) -> bytes:
    """An object's bytes, read as every input is: a local file (``file://``) through the one bounded
    read, an object of a store only when the store calls it a file of at most the size limit."""
    fs, path = url_fs(url, storage_options)
    if "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)):
        return read_bounded(path, MAX_FILE_SIZE)[0]
    info = fs.info(path)
    if info.get("type") not in ("file", None):
        raise GodotFormatsError(f"{url}: a {info.get('type')}, not a file")
    size = info.get("size")
    if isinstance(size, int) and size > MAX_FILE_SIZE:
        raise GodotFormatsError(f"{url}: {size} bytes, over the size limit of {MAX_FILE_SIZE}")
    data = bytes(fs.cat_file(path, start=0, end=MAX_FILE_SIZE + 1))
    if len(data) > MAX_FILE_SIZE:
        raise GodotFormatsError(f"{url}: over the size limit of {MAX_FILE_SIZE} bytes")
    return data


def _put_new(task: Task, out: bytes) -> tuple[str | None, bytes]:
    """Write an output to an object store: one PUT, after the conversion was verified; an existing
    object is replaced only with ``overwrite``, and kept when it holds the same values already.
    Returns the refusal (or None) and the bytes the object now holds."""
    fs, path = url_fs(task.dest, task.storage_options)
    if not task.overwrite:
        try:  # one GET, not exists() and then a GET: on S3 exists() of a new key costs a HEAD and a LIST
            existing: bytes | None = _cat(task.dest, task.storage_options)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if equivalent(existing, out, task.opts):
                return None, existing
            return f"{task.dest} would replace an existing file; use overwrite=True (--overwrite)", out
    fs.pipe_file(path, out)
    return None, out


def _why(e: Exception) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else one_line(e)


def work(item: Task | dict[str, Any]) -> dict[str, Any]:
    """Convert one file of a run, in a worker: read, :func:`.onefile.convert_bytes`, write.  Never
    raises.  A row decided while listing (a skipped entry) is its own result."""
    if isinstance(item, dict):
        return item
    task = item
    try:
        data = _read(task)
    except Exception as e:  # OSError, a special file; an object store's client raises its own errors
        row = new_row(task.key, None, task.run_id)
        kind = "bad input" if isinstance(e, GodotFormatsError) else "io"
        row.update(status="failed", error_kind=kind, error=f"cannot read: {_why(e)}")
        return row
    if task.done_sha is not None and sha(data) == task.done_sha:
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
            refused, there = write_new(Path(task.dest), out, root=Path(task.root), overwrite=task.overwrite,
                                       same=lambda existing: equivalent(existing, out, task.opts), since=task.since)
    except Exception as e:  # OSError locally; an object store's client raises its own errors
        refused, there = f"cannot write {task.dest}: {_why(e)}", out
    if refused is not None:
        row.update(status="failed", error_kind="io", error=refused)
    else:
        row["detail"] = f"{row['detail']} -> {task.dest}"
        if there is not out:  # an earlier run's output, with the same values, kept: the row describes it
            row.update(output_size=len(there), output_sha256=sha(there),
                       detail=f"{row['detail']} (kept: it already holds these values)")
    return row


def _died(item: Task | dict[str, Any]) -> dict[str, Any]:
    """The row of a file that killed its worker twice (the second time alone)."""
    if isinstance(item, dict):
        return item
    row = new_row(item.key, None, item.run_id)
    row.update(status="failed", error_kind="internal", output_path=item.dest,
               error="the worker process died converting this file, twice (the second time alone)")
    return row


def _tidy(item: Task | dict[str, Any]) -> None:
    """Remove what a killed worker was writing for ``item``'s output (its writer is dead)."""
    if isinstance(item, Task) and not is_url(item.dest):
        remove_stale_temps(item.dest, item.since)


def _failed_on_executor(item: Task | dict[str, Any], error: BaseException) -> dict[str, Any]:
    """The row of a file whose chunk raised on the caller's executor."""
    if isinstance(item, dict):
        return item
    kind, text, _ = failure(error) if isinstance(error, Exception) else ("internal", repr(error), ())
    row = _died(item)
    row.update(error_kind=kind, error=text)
    return row


def _journal_path(dst: Path, report: Path | None, url: bool = False) -> Path:
    """The report when it is JSON lines; else beside the destination folder (beside the report, for
    a destination on an object store, where a file cannot be appended to)."""
    if report is not None and report.suffix == ".jsonl":
        return report
    if url and report is not None:
        return report.with_suffix(".journal.jsonl")
    return dst.parent / f"{dst.name}.godot-formats-journal.jsonl"


def _keys(src: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[str, str, Any]]:
    """``(key, key, None)`` for each key of an iterable ``src``, as it comes (a generator over a
    database's rows is read as the run goes)."""
    for item in src:
        key = os.fspath(item)
        yield key, key, None


def _is_place(src: object) -> bool:
    """Whether ``src`` is one folder or URL (else an iterable of keys)."""
    return isinstance(src, (str, os.PathLike))


def _local(src: Path, exclude: Path | None) -> Iterator[tuple[str, str, Any]]:
    for path, skip in entries(src, exclude):
        yield path.relative_to(src).as_posix() if path != src else ".", str(path), skip


def _listing(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str],
             storage_options: dict[str, Any] | None) -> Iterator[tuple[str, str, Any]]:
    if not _is_place(src):
        return _keys(src)  # type: ignore[arg-type]
    if is_url(src):
        return walk_url(str(src), storage_options)
    exclude = None if is_url(dst) else Path(os.path.realpath(dst))
    return _local(Path(src), exclude)  # type: ignore[arg-type]


def _items(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str],
           opts: BatchOptions, shard: tuple[int, int], done: dict[str, dict[str, Any]], overwrite: bool,
           run_id: str, root: str, since: float,
           storage_options: dict[str, Any] | None = None) -> Iterator[Task | dict[str, Any]]:
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
            if skipped is None:
                row.update(status="failed", error_kind="bad input", error=NO_DEST)
            elif skipped.status == "failed":
                row.update(status="failed", error_kind="io", error=skipped.why)
            else:
                row.update(status="skipped", error=skipped.why)
            yield row
            continue
        yield Task(key, path, dest, opts, overwrite, run_id, root, since, done_sha(done.get(key)), storage_options)


def _checked(src: object, dst: str | os.PathLike[str], shard: tuple[int, int],
             report: str | os.PathLike[str] | None) -> Path | None:
    """The report's path, once the arguments of a run are known to make sense (else the error)."""
    if isinstance(src, (bytes, bytearray)):
        raise GodotFormatsError("src is a folder, a URL or an iterable of keys, not bytes")
    if _is_place(src) and not is_url(src) and not Path(src).is_dir():  # type: ignore[arg-type]
        raise GodotFormatsError(f"{src} is not a folder")
    i, n = shard
    if not (isinstance(i, int) and isinstance(n, int) and 0 <= i < n):
        raise GodotFormatsError(f"shard must be (i, n) with 0 <= i < n, not {shard!r}")
    report_path = Path(report) if report is not None else None
    if report_path is not None and report_path.suffix not in (".jsonl", ".parquet"):
        raise GodotFormatsError(f"the report must be a .jsonl or .parquet file, not {report}")
    if report_path is not None and report_path.suffix == ".parquet" and arrow_schema() is None:
        raise GodotFormatsError("a Parquet report needs pyarrow: pip install 'godot-formats[parquet]'")
    if is_url(dst) and report_path is None:
        raise GodotFormatsError("a URL destination needs report= (a local .jsonl or .parquet file: the journal)")
    return report_path


def _open_journal(journal_path: Path, resume: bool, notes: list[str]) -> tuple[dict[str, dict[str, Any]], Journal]:
    """The rows an earlier run journaled (with ``resume``) and the journal, open to append: a regular
    file of ours, or none yet (a FIFO there is refused, never waited on)."""
    try:
        mode = os.stat(journal_path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise GodotFormatsError(f"cannot look at the journal {journal_path}: {e.strerror or e}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise GodotFormatsError(f"the journal {journal_path} is {not_regular(mode)}, not a regular file")
    try:
        done = read_journal(journal_path, notes) if resume else {}
        journal = Journal(journal_path)
    except OSError as e:
        raise GodotFormatsError(f"cannot open the journal {journal_path}: {e.strerror or e}") from None
    return done, journal


def convert(src: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], dst: str | os.PathLike[str], *, to: str,
            source: str = "auto",
            policy: str = "strict", password: str | None = None, key: bytes | None = None,
            report: str | os.PathLike[str] | None = None, resume: bool = False, verify: bool = True,
            shard: tuple[int, int] = (0, 1), workers: int | None = None, executor: Executor | None = None,
            progress: Callable[[dict[str, Any], dict[str, int]], None] | None = None,
            overwrite: bool = False, options: BatchOptions | None = None,
            storage_options: dict[str, Any] | None = None, inside: str | os.PathLike[str] | None = None) -> Result:
    """Convert every file below the folder (or fsspec URL) ``src`` into ``dst`` (same layout), or each
    key of an iterable ``src`` (paths or URLs) to :func:`.walk.key_dest`'s place below ``dst``, on
    ``workers`` processes (default: every core) or on ``executor`` (for example a Dask ``Client``'s
    ``get_executor()``).

    Every input gets one row in the journal (``report`` if it ends in ``.jsonl``, else
    ``<dst>.godot-formats-journal.jsonl`` beside ``dst``); a ``.parquet`` report is written at the
    end (needs pyarrow).  ``resume=True`` skips inputs that the journal has as converted or
    unchanged and whose SHA-256 still matches (counted as skipped); a journal line that is not a
    row (torn by a crash or a full disk) is skipped with a note in ``Result.notes``.  ``shard=(i, n)``
    takes the inputs whose key hashes to ``i``.  ``progress(row, counts)`` is called after each file.
    Every output must resolve inside ``inside`` (default: ``dst``), symlinks followed, or it is
    refused.  Ctrl-C stops the run in order and returns what was done (``interrupted=True``); a
    journal the disk refuses to take stops it too (``stopped`` says why), with every row so far
    counted.
    """
    report_path = _checked(src, dst, shard, report)
    opts = options or BatchOptions(to=to, source=source, policy=policy, password=password, key=key, verify=verify)
    journal_path = _journal_path(Path(str(dst)), report_path, is_url(dst))
    run_id = uuid.uuid4().hex
    result = Result({"converted": 0, "unchanged": 0, "failed": 0, "skipped": 0}, [], journal_path,
                    report_path, run_id)
    done, journal = _open_journal(journal_path, resume, result.notes)
    started = time.monotonic()
    spill: list[tuple[Any, dict[str, Any]]] = []
    root = str(inside if inside is not None else dst)
    items = _items(src, dst, opts, shard, done, overwrite, run_id, root, time.time(), storage_options)
    width = workers or os.cpu_count() or 1
    if executor is None:
        pairs = in_order(items, work, width, _died, _tidy, spill)
    else:
        pairs = on_executor(items, work, width, executor, _failed_on_executor, spill)
    last: list[tuple[Any, dict[str, Any]]] = []  # the pair recorded last (a closed run may spill it again)

    def record(pair: tuple[Any, dict[str, Any]]) -> None:
        row = pair[1]
        with ctrl_c_deferred():  # counted, shown and journaled, or none of them
            result.rows.append(row)
            result.counts[row["status"]] += 1
            last[:] = [pair]
            if progress is not None:
                progress(row, result.counts)
            if result.stopped is None:
                try:
                    journal.add(row)
                except OSError as e:  # a full disk: the run stops, every row so far counted
                    journal.pending.clear()
                    result.stopped = e.strerror or str(e)

    try:
        for pair in pairs:
            record(pair)
            if result.stopped is not None:
                break
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        with ctrl_c_deferred():  # a second Ctrl-C waits for the files being written and their rows
            pairs.close()  # the files in flight finish; their rows are counted (journaled if it can)
            given = last[0] if last else None
            for pair in spill:
                if pair is not given:
                    record(pair)
            try:
                journal.close()
            except OSError as e:
                result.stopped = result.stopped or e.strerror or str(e)
    result.seconds = time.monotonic() - started
    if report_path is not None and report_path.suffix == ".parquet":
        try:
            write_parquet(result.rows, report_path)
        except OSError as e:  # a full disk: the rows are in the journal and in the result
            result.stopped = result.stopped or f"cannot write the report {report_path}: {e.strerror or e}"
    return result
