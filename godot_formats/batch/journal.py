"""The journal of a run: JSON lines, one row per input, appended in batches; also the resume state.

A journal is whatever a crash, a kill or a full disk left: a last line cut in the middle of a UTF-8
character, a line another tool wrote, one nested a thousand deep.  It is read as bytes, a line at a
time, and a line that is not one of our rows is skipped with a note (its file is simply done again),
never an error that stops the run (issue 40, items 1 and 9).  A row is only ever written for a
durable output: the written files are flushed to disk first (one ``os.sync``), then the rows are
appended and the journal fsynced.  An append the disk refuses is cut back off, so the journal stays
whole lines, and the run stops with its summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .report import FINAL, for_json, is_final, key_of

__all__ = ["Journal", "locked", "read_journal"]


def _row(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The row on one journal line, or None and why it is not one (None, None: a blank line)."""
    line = line.strip()
    if not line:
        return None, None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 at byte {e.start} (a line cut short by a crash or a full disk?)"
    try:
        row = json.loads(text)
    except RecursionError:
        return None, "nested too deep to be a row"
    except ValueError as e:
        return None, f"not JSON ({str(e).splitlines()[0]})"
    if not isinstance(row, dict):
        return None, f"a JSON {type(row).__name__}, not a row"
    if key_of(row) is None:
        return None, "a row without a file name (its 'path' is not text)"
    if not isinstance(row.get("status"), str):
        return None, "a row without a status"
    return row, None


def read_journal(path: Path, notes: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The last row of each input in a journal.  Each line that is not a row (a torn last line, a
    line of another tool's) is skipped, with a note in ``notes`` naming the line and why."""
    rows: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(FileNotFoundError), path.open("rb") as f:
        for number, line in enumerate(f, 1):
            row, why = _row(line)
            if row is not None:
                rows[key_of(row)] = row  # type: ignore[index]  # _row checked it
            elif why is not None and notes is not None:
                notes.append(f"{path}, line {number}: skipped, {why}; its file, if any, is done again")
    return rows


def done_sha(row: dict[str, Any] | None) -> str | None:
    """The input SHA-256 of a journal row that says its file is done (None: do it)."""
    value = row.get("input_sha256") if row is not None and is_final(row) else None
    return value if isinstance(value, str) else None


@contextlib.contextmanager
def locked(f: Any) -> Iterator[None]:
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
    stays JSON lines for every reader.  A last line that is a whole row without its newline (a file
    another tool wrote) keeps its row and gets the newline."""
    with contextlib.suppress(FileNotFoundError), path.open("r+b") as f, locked(f):
        end = f.seek(0, os.SEEK_END)
        if end == 0:
            return
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return
        start = _line_start(f, end)
        f.seek(start)
        row, _ = _row(f.read(end - start))
        if row is None:
            f.truncate(start)
        else:
            f.seek(end)
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
        self.file = path.open("ab", buffering=0)  # no buffer: a refused write leaves nothing to write later
        self.pending: list[dict[str, Any]] = []
        self.last = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        """Add a row (written with the next batch); ``OSError`` when the disk refuses the batch (a full
        disk, a quota): the journal is left as it was, whole lines."""
        self.pending.append(row)
        if len(self.pending) >= self.every or time.monotonic() - self.last >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            if any(r.get("status") in FINAL for r in self.pending):
                os.sync()
            data = "".join(json.dumps(for_json(r), ensure_ascii=False) + "\n" for r in self.pending).encode("utf-8")
            with locked(self.file):
                size = self.file.seek(0, os.SEEK_END)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[self.file.write(view) or 0:]
                    os.fsync(self.file.fileno())
                except OSError as e:
                    with contextlib.suppress(OSError):
                        os.truncate(self.path, size)  # the lines stay whole: a torn one would be skipped anyway
                    raise OSError(e.errno, f"cannot write the journal {self.path}: {e.strerror or e}") from e
            self.pending.clear()
        self.last = time.monotonic()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with contextlib.suppress(OSError):
                self.file.close()

