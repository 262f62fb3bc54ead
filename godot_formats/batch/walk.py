"""What a run converts and where each output goes: the one folder walk (of the command line and of
:func:`godot_formats.batch.convert`), object-store listings, shards, and each input's destination,
checked to resolve inside the output folder before anything is written.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from ..core.errors import GodotFormatsError
from ..layers.files import file_kind, is_temp_name

__all__ = ["Skip", "THE_OUT_DIR", "entries", "in_shard", "inside", "is_url", "key_dest", "not_regular", "outside",
           "url_fs", "walk_url"]


@attrs.frozen
class Skip:
    """Why an entry of a folder is not converted: ``status`` is "skipped" (not a file to convert) or
    "failed" (it could not be read)."""

    status: str
    why: str


def not_regular(mode: int) -> str:
    """What a file that is not a regular file is, in words (:func:`godot_formats.layers.files.file_kind`)."""
    return file_kind(mode) or "a regular file"


#: The output folder met inside an input folder (it is not walked).
THE_OUT_DIR = Skip("skipped", "the output folder (--out-dir)")

SYMLINK = Skip("skipped", "a symlink, not followed (name it on the command line to convert the file it points to)")
TEMP_FILE = Skip("skipped", "a temporary file left by an interrupted godot-formats write (delete it)")


def entries(folder: Path, exclude: Path | None) -> Iterator[tuple[Path, Skip | None]]:
    """Every entry below ``folder``, folders in name order, a folder's own entries first, streamed
    (the first file comes before the tree is walked whole; no recursion, whatever the depth).

    Yields ``(file, None)`` for each regular file to convert and ``(path, skip)`` for every entry
    that is not converted, so each gets its row: symlinks (not followed), FIFOs, sockets and devices
    (only looked at, never opened), our own temporary files, the output folder ``exclude`` (a
    resolved path), and folders that cannot be read."""
    todo = [folder]
    while todo:
        here = todo.pop()
        try:
            with os.scandir(here) as it:
                found = sorted(it, key=lambda e: e.name)
        except OSError as e:
            yield here, Skip("failed", f"cannot read the folder: {e.strerror or e}")
            continue
        subfolders: list[Path] = []
        for entry in found:
            path = Path(entry.path)
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as e:
                yield path, Skip("failed", f"cannot read: {e.strerror or e}")
                continue
            if stat.S_ISLNK(mode):
                yield path, SYMLINK
            elif stat.S_ISDIR(mode):
                if exclude is not None and Path(os.path.realpath(path)) == exclude:
                    yield path, THE_OUT_DIR
                else:
                    subfolders.append(path)
            elif not stat.S_ISREG(mode):
                yield path, Skip("skipped", f"{not_regular(mode)}, not a regular file")
            elif is_temp_name(entry.name):
                yield path, TEMP_FILE
            else:
                yield path, None
        todo.extend(reversed(subfolders))


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Whether ``key`` belongs to shard ``i`` of ``n``: a stable hash (SHA-1 of the key), the same on
    every machine and every run, unlike Python's ``hash()``."""
    i, n = shard
    try:  # a file name's bytes (a name that is not UTF-8 arrives surrogate-escaped)
        exact = key.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a key a caller made, with lone surrogates of its own
        exact = key.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha1(exact).digest()[:8], "big") % n == i


def is_url(place: object) -> bool:
    """Whether a source or destination is an fsspec URL (``s3://bucket/saves``, ``memory://x``)."""
    return isinstance(place, str) and "://" in place


def url_fs(url: str, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path in it (needs fsspec: the ``[cloud]`` extra)."""
    try:
        import fsspec  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise GodotFormatsError(f"{url}: URLs need fsspec: pip install 'godot-formats[cloud]'") from None
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    return fs, path


def walk_url(root: str, storage_options: dict[str, Any] | None) -> Iterator[tuple[str, str, Skip | None]]:
    """``(key, url, None)`` for every object below the URL ``root``, folder by folder in name order,
    streamed (``fs.walk`` lists one folder at a time)."""
    fs, base = url_fs(root, storage_options)
    base = base.rstrip("/")
    for folder, subfolders, files in fs.walk(base):
        subfolders.sort()
        for name in sorted(files):
            full = f"{folder.rstrip('/')}/{name}"
            key = full[len(base):].lstrip("/")
            yield key, fs.unstrip_protocol(full), TEMP_FILE if is_temp_name(name) else None


def key_dest(key: str, dst: str | os.PathLike[str]) -> str | None:
    """Where the input ``key`` goes below ``dst``: ``dst`` + the key's path, without a URL's
    protocol (``s3://studio/saves/a.sav`` -> ``<dst>/studio/saves/a.sav``) nor a leading ``/``
    (``/data/a.sav`` -> ``<dst>/data/a.sav``).  A folder's keys are relative already, so it keeps its
    layout.  The rule needs no other key, so a streamed listing and each shard decide it alone.
    None for a key with ``..`` (it would climb out of ``dst``) or no path at all.  Where the path
    lands once symlinks are followed is :func:`outside`'s to check, at the time of the write."""
    path = key.split("://", 1)[1] if is_url(key) else key
    parts = [part for part in path.replace(os.sep, "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    rel = "/".join(parts)
    return f"{str(dst).rstrip('/')}/{rel}" if is_url(dst) else str(Path(dst) / rel)


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it (both resolved already)."""
    return path == folder or folder in path.parents


def outside(dest: Path, root: Path, named: str = "the output folder") -> str | None:
    """Why writing ``dest`` would land outside the folder ``root`` (None: it stays inside), symlinks
    in any component of either followed as a write follows them: the deepest part of ``dest`` that
    exists is resolved, and the rest is created below it as real folders.  Asked right before each
    write, in every mode, so a symlinked folder inside the output folder cannot carry a write out of
    it (issue 40, item 3)."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(dest))  # follows every symlink of the parts that exist
    if inside(real, real_root):
        return None
    return f"the output {dest} resolves to {real}, outside {named} {root}; nothing written"
