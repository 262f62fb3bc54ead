"""Converting many save files at once: on every core, resumable, with a report row per input.

A studio migrating its players' saves from Godot 3 to Godot 4 needs all the cores, a record of what
happened to each save (converted, failed and why, what was lost), and a way to pick up a killed run
without counting its finished files as failures.  This package is the one batch engine: the command
line's ``convert`` uses it in every mode (a file, a folder on a pool, a journaled run), and
:func:`convert` is its library face.  Its modules, bottom first:

- :mod:`.signals`: a Ctrl-C held over steps that belong together; workers that die with their parent;
- :mod:`.report`: the rows (one per input, every file name given back exactly) and :class:`Result`;
- :mod:`.walk`: the one folder walk, object-store listings, shards, each input's destination;
- :mod:`.onefile`: one file's conversion (:func:`convert_data`, :func:`convert_bytes`) and the one
  wording of its failures (:func:`failure`);
- :mod:`.output`: one output written inside the output folder, atomically, never in another run's way;
- :mod:`.journal`: the journal, which survives whatever a crash or a full disk leaves;
- :mod:`.pool`: the process pool, in order, hardened against workers that die;
- :mod:`.run`: a run (:func:`convert`).

Nothing here imports the command line.
"""

from __future__ import annotations

from .journal import Journal, read_journal
from .onefile import BatchOptions, Converted, convert_bytes, convert_data, failure, options_from_args
from .pool import CHUNK, POOL_CHUNK
from .report import (
    DONE_EARLIER,
    ERROR_KINDS,
    NO_DEST,
    ROW_FIELDS,
    Result,
    arrow_schema,
    key_of,
    new_row,
    write_parquet,
)
from .run import convert
from .walk import in_shard, is_url, key_dest

__all__ = ["CHUNK", "DONE_EARLIER", "ERROR_KINDS", "NO_DEST", "POOL_CHUNK", "ROW_FIELDS", "BatchOptions",
           "Converted", "Journal", "Result", "arrow_schema", "convert", "convert_bytes", "convert_data", "failure",
           "in_shard", "is_url", "key_dest", "key_of", "new_row", "options_from_args", "read_journal",
           "write_parquet"]
