"""``open_resource``: a resource file from a path or bytes, in whichever form it is.

The form is told by the first bytes, as the engine's loaders do: ``RSRC``/``RSCC`` is binary,
``[gd_resource`` text.  A ``[gd_scene`` file is refused by name (scenes are not in scope yet).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Union

from ..core.errors import DecodeError
from ..layers.files import read_at_most
from .binary import is_binary_resource, read_binary
from .model import ResourceFile
from .scan import Finding, scan
from .text import read_text

__all__ = ["open_resource", "scan_resource", "resource_form"]

#: The largest file read (a save of this size is far beyond any game's).
DEFAULT_MAX_SIZE = 256 * 1024 * 1024
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]


def resource_form(data: bytes) -> str | None:
    """"binary", "text", "scene" or None (not a resource file), from the first bytes."""
    if is_binary_resource(data):
        return "binary"
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"[gd_resource"):
        return "text"
    if head.startswith(b"[gd_scene"):
        return "scene"
    return None


def _read_source(source: Source, max_size: int) -> tuple[bytes, Path | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with open(path, "rb") as f:
            data = read_at_most(f, max_size + 1)
    else:
        path, data = None, read_at_most(source, max_size + 1)
    if len(data) > max_size:
        raise DecodeError(max_size, f"the file is larger than max_size ({max_size} bytes)")
    return data, path


def open_resource(source: Source, *, max_size: int = DEFAULT_MAX_SIZE, max_ratio: int = 100) -> ResourceFile:
    """The resource file at ``source`` (a path, bytes or a binary file object), parsed: nothing
    it references is loaded and no script it holds is compiled or run.  A compressed file
    decompresses to at most ``max_ratio`` times its size (1 MiB at least), ``max_size`` at most."""
    data, path = _read_source(source, max_size)
    form = resource_form(data)
    if form == "binary":
        rf = read_binary(data, max_size=max_size, max_ratio=max_ratio)
    elif form == "text":
        rf = read_text(data)
    elif form == "scene":
        raise DecodeError(0, "this is a scene ([gd_scene ...]), not a resource save: scenes are not read yet")
    else:
        raise DecodeError(0, f"not a resource file: it starts with {data[:12]!r}, not RSRC, RSCC or [gd_resource")
    rf.path = path
    return rf


def scan_resource(source: Source, *, max_size: int = DEFAULT_MAX_SIZE) -> list[Finding]:
    """What in the resource file at ``source`` would run code when Godot loads it (empty: nothing).
    See :mod:`godot_formats.resources.scan`."""
    return scan(open_resource(source, max_size=max_size))
