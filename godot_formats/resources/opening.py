"""``open_resource``: a resource file from a path or bytes, in whichever form it is; and
``scan_file``, the scanner's one door for every file a game reads.

The form is told by the first bytes, as the engine's loaders do: ``RSRC``/``RSCC`` is binary,
``[gd_resource`` text, after whatever the engines' tokenizer skips before it (every character up
to a space, ``;`` comments, and a byte order mark, which both engines refuse but a later one may
not: read all the same).  A ``[gd_scene`` file is refused by name (scenes are not in scope yet).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any, Union

from ..core.classdb import is_relative, is_script_path
from ..core.errors import (
    AmbiguousDialectError,
    ConfigFileError,
    DecodeError,
    GodotFormatsError,
    PasswordRequiredError,
    WrongPasswordError,
)
from ..core.limits import MAX_FILE_SIZE, MAX_RATIO, RSCC_MAX_RATIO
from ..layers.files import Readable, read_bounded
from ..layers.magic import SCENE_NOT_READ, looks_like_config, resource_form
from .binary import read_binary
from .model import ResourceFile
from .scan import Finding, Walk, walk_file
from .text import read_text

__all__ = ["open_resource", "scan_resource", "scan_file", "resource_form"]

#: The largest file read unless the caller says otherwise: every kind's
#: (:data:`godot_formats.core.limits.MAX_FILE_SIZE`).
DEFAULT_MAX_SIZE = MAX_FILE_SIZE
#: What the readers take: a path, bytes or a binary file object (read by :func:`read_bounded`).
Source = Readable


def open_resource(source: Source, *, max_size: int = DEFAULT_MAX_SIZE, max_ratio: int | None = None) -> ResourceFile:
    """The resource file at ``source`` (a path, bytes or a binary file object), parsed: nothing
    it references is loaded and no script it holds is compiled or run.  A compressed file
    decompresses to at most ``max_ratio`` times its size (default :data:`~godot_formats.core.limits.RSCC_MAX_RATIO`;
    1 MiB at least), ``max_size`` at most.
    The file is read as every entry point reads one (:func:`~godot_formats.layers.files.read_bounded`):
    a FIFO, a device, a socket or a folder is refused before it is read (``NotRegularFileError``),
    and so is a file over ``max_size`` bytes (``SizeLimitError``)."""
    data, path = read_bounded(source, max_size)
    form = resource_form(data)
    if form == "binary":
        rf = read_binary(data, max_size=max_size, max_ratio=RSCC_MAX_RATIO if max_ratio is None else max_ratio)
    elif form == "text":
        rf = read_text(data)
    elif form == "scene":
        raise DecodeError(0, SCENE_NOT_READ)
    else:
        raise DecodeError(0, f"not a resource file: it starts with {data[:12]!r}, not RSRC, RSCC or [gd_resource")
    rf.path = path
    return rf


def scan_resource(source: Source, *, max_size: int = DEFAULT_MAX_SIZE, max_ratio: int | None = None,
                  user_dir: str | os.PathLike[str] | None = None) -> list[Finding]:
    """What in the resource file at ``source`` would run code when Godot loads it (empty: nothing).
    See :mod:`godot_formats.resources.scan`.  ``user_dir``: the folder ``user://`` stands for (the
    game's user data folder): every file the scanned one references there is scanned too, and
    every file those reference, each once.  A file that is not a resource raises.  ``max_size``,
    ``max_ratio``: as for :func:`open_resource`, for each file read."""
    data, path = read_bounded(source, max_size)
    if resource_form(data) not in ("binary", "text"):
        open_resource(data)  # raises, naming what the file is instead
    return _scan_following(data, path, (max_size, max_ratio), user_dir=user_dir, saves=None)


def scan_file(source: Source, *, password: str | None = None, key: bytes | None = None,
              max_size: int = DEFAULT_MAX_SIZE, max_ratio: int | None = None,
              user_dir: str | os.PathLike[str] | None = None) -> list[Finding]:
    """What in the file at ``source`` would run code when a game loads it, whatever kind of file
    it is: a resource save (``.tres``, ``.res``, compressed), ConfigFile text (``settings.cfg``,
    ``project.godot``), or a save file of Variants (``store_var``, ``var_to_bytes``, encrypted with
    ``password``/``key``, compressed, base64, ``project.binary``) read with full Objects.  Empty:
    nothing was found.  A file none of these readers can read raises the reason: it is never
    called clean.  ``user_dir``, ``max_size`` and ``max_ratio`` as for :func:`scan_resource`."""
    data, path = read_bounded(source, max_size)
    return _scan_following(data, path, (max_size, max_ratio), user_dir=user_dir, saves=(password, key))


#: How a file that is no resource may be read: None (it may not: resources only), or as ConfigFile
#: text or a save of Variants, with the (password, key) of an encrypted one.
_Saves = Union[tuple[Union[str, None], Union[bytes, None]], None]
#: The ``(max_size, max_ratio)`` every file of one scan is read with.
_Limits = tuple[int, "int | None"]


def _walk(data: bytes, limits: _Limits, saves: _Saves) -> Walk:
    """The scanner's walk over one file, read by the reader its first bytes name."""
    if resource_form(data) in ("binary", "text", "scene") or saves is None:
        return walk_file(open_resource(data, max_size=limits[0], max_ratio=limits[1]))
    from ..configfile import read_config  # the ConfigFile reader stands beside this one, read when needed

    walk = Walk()
    if looks_like_config(data):
        try:
            doc = read_config(data, max_size=limits[0])
        except ConfigFileError as e:
            try:
                walk.visit(_save_values(data, limits, *saves), "record")  # base64 text looks alike
            except GodotFormatsError:
                raise e from None
            return walk
        _visit_config(walk, doc)
        return walk
    try:
        values = _save_values(data, limits, *saves)
    except (PasswordRequiredError, WrongPasswordError):
        raise  # a save, encrypted: the password is what is missing
    except DecodeError as e:
        raise DecodeError(e.offset, f"not a resource file, ConfigFile text or a save of Variants that godot-formats "
                                f"reads (as a save: {e.reason})") from None
    if values is _CONFIG:  # ConfigFile text in an encryption layer (save_encrypted_pass)
        _visit_config(walk, read_config(data, password=saves[0], key=saves[1], max_size=limits[0]))
        return walk
    walk.visit(values, "record")
    return walk


def _visit_config(walk: Walk, doc: Any) -> None:
    """Every entry of a ConfigFile as the engine reads it, a ``null`` one too (each is made on load)."""
    for entry in doc.entries():
        walk.visit(entry.value, f"[{entry.section}] {entry.key}")


#: What :func:`_save_values` gives for a file whose layers hold ConfigFile text, not Variants.
_CONFIG: list[Any] = []


def _save_values(data: bytes, limits: _Limits, password: str | None, key: bytes | None) -> list[Any]:
    """The records of a save of Variants, read with full Objects; every reading of an ambiguous one."""
    from ..saves.savefile import open as open_save  # the save reader is needed only for such a file

    max_size, ratio = limits
    max_ratio = MAX_RATIO if ratio is None else ratio  # a save's layers' own bound
    try:
        sf = open_save(data, password=password, key=key, allow_objects=True, max_size=max_size, max_ratio=max_ratio)
    except AmbiguousDialectError as e:  # the scan is the union of every way the file reads
        return [open_save(data, password=password, key=key, dialect=d, allow_objects=True, max_size=max_size,
                          max_ratio=max_ratio).values for d in dict.fromkeys(e.candidates)]
    return _CONFIG if sf.container == "text" else sf.values


def _resolve(ref: str, container: Path | None, user_dir: Path) -> Path | None:
    """The file a reference names in ``user_dir``: ``user://x``, or a relative path beside a file
    that is itself in ``user_dir``; None for any other reference, or one that climbs out."""
    if ref.startswith("user://"):
        target = user_dir / ref[len("user://"):].lstrip("/")
    elif container is not None and is_relative(ref):
        target = container.parent / ref
    else:
        return None
    target = Path(os.path.realpath(target))
    return target if target.is_relative_to(user_dir) else None


def _scan_following(data: bytes, path: Path | None, limits: _Limits, *, user_dir: Any,
                    saves: _Saves) -> list[Finding]:
    """The findings of one file and, with ``user_dir``, of every file it reaches there (breadth first,
    each once: Godot loads a reference as a resource, so that is how each is read)."""
    walk = _walk(data, limits, saves)
    found = list(walk.found)
    if user_dir is None:
        return found
    root = Path(os.path.realpath(user_dir))
    container = Path(os.path.realpath(path)) if path is not None else None
    seen = {container} if container is not None else set()
    queue: deque[tuple[Path | None, str, str, str | None]] = deque(
        (container, ref, where, None) for ref, where in walk.references)
    while queue:
        container, ref, where, via = queue.popleft()
        target = _resolve(ref, container, root)
        if target is None or target in seen:
            continue
        seen.add(target)
        name = "user://" + target.relative_to(root).as_posix()
        try:
            if is_script_path(ref):
                continue  # a script: code by what it is, already found as such
            inner = _walk(read_bounded(target, limits[0])[0], limits, None)
        except (GodotFormatsError, OSError) as e:
            found.append(Finding("reference-not-scanned", where, f"{name} ({target}) could not be scanned: "
                                 f"{str(e)[:300]}", via))
            continue
        found.extend(Finding(f.kind, f.where, f.message, name) for f in inner.found)
        queue.extend((target, r, w, name) for r, w in inner.references)
    return found
