"""The report of a run: one row per input, with the same fields everywhere (the journal, a Parquet
report, :class:`Result`, a Spark or Ray table), and the file names in them given back exactly.

A file name on Linux is bytes; Python hands one that is not UTF-8 over as text with surrogate
escapes (``b'\\xffbad.sav'`` is ``'\\udcffbad.sav'``), which no JSON writer, Parquet column or terminal
takes.  A row keeps such a name readable (``path`` with the bad bytes as ``\\xff`` escapes) and exact
(``path_bytes``, the name's bytes in hex, or None for a UTF-8 name): :func:`key_of` gives the name
back, the same ``str`` the folder walk gave, so a resumed run finds its files (issue 40, item 2).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import attrs

from ..core.version import __version__

__all__ = ["DONE_EARLIER", "ERROR_KINDS", "NO_DEST", "ROW_FIELDS", "Result", "arrow_schema", "for_json",
           "key_of", "new_row", "sha", "write_parquet"]

#: The fields of a report row, in order.  ``status`` is converted / unchanged / failed / skipped;
#: ``error_kind`` is None or one of :data:`ERROR_KINDS`; ``losses`` is a list of strings (the
#: changes applied under ``policy="lossy"``, or those that made a strict conversion fail);
#: ``detail`` is the command line's one-line description of what was done; ``path_bytes`` is the
#: input's name as hex bytes when it is not UTF-8 (``path`` then shows the bad bytes as escapes).
ROW_FIELDS: tuple[str, ...] = (
    "path", "status", "error_kind", "error", "source_dialect", "layers", "input_size", "input_sha256",
    "output_size", "output_sha256", "output_path", "losses", "detail", "version", "run_id", "time", "path_bytes",
)

#: What kind of failure a failed row is: the input is bad, converting it would lose data (strict
#: policy), a bug of ours (or a worker that died), or the file system refused a read or a write.
ERROR_KINDS = ("bad input", "would lose", "internal", "io")

#: The ``error`` of a row skipped because the journal says an earlier run finished it.
DONE_EARLIER = "done earlier (the journal has it, and the input's SHA-256 still matches)"

#: The error of a key that has no output path under ``dst`` (:func:`.walk.key_dest`).
NO_DEST = "no output path: the key is empty or climbs out of the destination with '..'"

#: The statuses of a file that needs no more work.
FINAL = ("converted", "unchanged")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def new_row(name: str, data: bytes | None, run_id: str = "") -> dict[str, Any]:
    """A row with every :data:`ROW_FIELDS` key, for the input ``name`` (its bytes, when read)."""
    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(path=name, losses=[], version=__version__, run_id=run_id, time=time.time())
    if data is not None:
        row.update(input_size=len(data), input_sha256=sha(data))
    return row


def is_final(row: dict[str, Any]) -> bool:
    """Whether a journal row says its file needs no more work."""
    return row.get("status") in FINAL or (row.get("status") == "skipped" and row.get("error") == DONE_EARLIER)


def _text(value: str) -> str:
    """``value`` with what UTF-8 cannot hold as escapes: a surrogate-escaped byte of a file name as
    ``\\xNN`` (the byte), any other lone surrogate as ``\\udNNN``."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _exact(path: str) -> str:
    """The bytes a name stands for, in hex: a file name's (``os.fsencode``), else the text's own."""
    try:
        return os.fsencode(path).hex()
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogatepass").hex()


def for_json(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as any JSON or Parquet writer takes it: every text valid UTF-8, the exact name of an
    input that is not in ``path_bytes``."""
    out = dict(row)
    path = row.get("path")
    if isinstance(path, str) and _text(path) != path:
        out["path_bytes"] = _exact(path)
    for name, value in row.items():
        if isinstance(value, str):
            out[name] = _text(value)
        elif isinstance(value, list):
            out[name] = [_text(v) if isinstance(v, str) else v for v in value]
    return out


def key_of(row: dict[str, Any]) -> str | None:
    """The input name a journal row is about, exactly as the walk gave it (None: not a row of ours)."""
    exact = row.get("path_bytes")
    if isinstance(exact, str):
        try:
            return os.fsdecode(bytes.fromhex(exact))
        except ValueError:
            return None
    path = row.get("path")
    return path if isinstance(path, str) else None


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


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    """The rows as a Parquet table (pyarrow), which DuckDB, pandas and Spark read."""
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    table = pa.Table.from_pylist([{k: j.get(k) for k in ROW_FIELDS} for j in map(for_json, rows)],
                                 schema=arrow_schema())
    pq.write_table(table, path)


@attrs.define
class Result:
    """What a run did: the counts by status, the rows (in the order of the listing), the journal and
    report paths, whether Ctrl-C cut it short, and the notes of what the run met besides the files
    (a journal line it could not read; a journal it could not write, which stopped the run)."""

    counts: dict[str, int]
    rows: list[dict[str, Any]]
    journal: Path
    report: Path | None
    run_id: str
    interrupted: bool = False
    seconds: float = 0.0
    notes: list[str] = attrs.Factory(list)
    stopped: str | None = None

    def summary(self) -> str:
        return f"{len(self.rows)} file(s): " + ", ".join(f"{n} {status}" for status, n in self.counts.items())
