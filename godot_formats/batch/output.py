"""Writing one output of a run: inside the output folder, never over a file unless told, atomic, and
never in another run's way.

Every destination is checked to resolve inside the output folder right before it is written
(:func:`.walk.outside`: symlinks in any component followed), in every mode.  A temporary file names
its writer (:func:`godot_formats.layers.files.temp_prefix`); one left by a dead writer is removed, one
whose writer lives (another run on the same output folder) is left alone (issue 40, item 4).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..core.limits import MAX_FILE_SIZE
from ..layers.files import TEMP_MARK, host_tag, is_temp_name, read_bounded, temp_prefix, temp_writer, write_target
from .signals import alive
from .walk import outside

__all__ = ["remove_stale_temps", "write_new"]


def remove_stale_temps(dest: str | os.PathLike[str], since: float | None = None) -> None:
    """Remove our temporary files of ``dest`` whose writer is dead: a worker killed while writing it.
    One whose writer lives is another run's (or this one's) write in progress, and stays.  A writer
    on another host (another container on a shared volume: its process ids are not ours to ask),
    or a name that records none (an older version's), is taken for dead only when the file is older
    than ``since`` (the start of this run, as ``time.time()``); never when ``since`` is None."""
    here = host_tag()
    path = Path(dest)
    with contextlib.suppress(OSError), os.scandir(path.parent) as it:
        for entry in it:
            if not (entry.name.startswith(f".{path.name}{TEMP_MARK}") and is_temp_name(entry.name)):
                continue
            writer = temp_writer(entry.name)
            stale = False
            if writer is not None and writer[1] == here:
                stale = not alive(writer[0])
            elif since is not None:
                with contextlib.suppress(OSError):
                    stale = entry.stat(follow_symlinks=False).st_mtime < since
            if stale:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _make_folders(folder: Path, root: Path) -> str | None:
    """Create ``folder`` (below ``root``), each missing part a real folder; why not, when a part
    resolves outside ``root`` (checked before each part is made: nothing is created outside)."""
    root.mkdir(parents=True, exist_ok=True)  # the output folder itself, where the caller named it
    missing: list[Path] = []
    here = folder
    while not os.path.lexists(here) and here != root and here != here.parent:
        missing.append(here)
        here = here.parent
    refused = outside(here, root)
    if refused is not None:
        return refused
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(part)
        refused = outside(part, root)  # a folder swapped for a symlink meanwhile
        if refused is not None:
            return refused
    return None


def write_new(dest: Path, data: bytes, *, root: Path, overwrite: bool, same: Callable[[bytes], bool],
              since: float | None = None) -> tuple[str | None, bytes]:
    """Write ``data`` to ``dest`` (below the output folder ``root``) through a temporary file beside
    it (no fsync: the journal batches that).  Without ``overwrite`` an existing file is never
    replaced (a hard link refuses it atomically); one that already holds what ``data`` holds
    (``same(existing)``: a rerun of a file whose row was lost) is kept.  Returns the refusal in words
    (or None) and the bytes ``dest`` now holds, which the row describes: a kept encrypted save has
    another IV than ``data``.  ``since``: when the run began (:func:`remove_stale_temps`).

    A ``dest`` that is a symlink is written through, to the file it points to, as the command line's
    one-file mode writes (:func:`godot_formats.layers.files.write_target`): the same rule in every
    mode, the link kept, its target checked inside ``root`` like any destination."""
    refused = _make_folders(dest.parent, root) or outside(dest, root)
    if refused is not None:
        return refused, data
    try:
        dest = write_target(dest)  # a symlink's target (a dangling one is refused); a FIFO, a folder refused
    except OSError as e:
        return f"{dest}: {e.strerror or e}", data
    remove_stale_temps(dest, since)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=temp_prefix(dest), suffix=".tmp")
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
            existing = read_bounded(dest, MAX_FILE_SIZE)[0]  # what is there now, a regular file or refused
            if same(existing):
                return None, existing
            return f"{dest} would replace an existing file; use overwrite=True (--overwrite)", data
        return None, data
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
