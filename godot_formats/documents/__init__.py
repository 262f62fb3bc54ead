"""One door for every Godot file: :func:`open` reads a path, bytes or a binary file object, tells
its kind (:mod:`.kinds`, one row per kind) and returns a document that answers one protocol
(:class:`.protocol.Document`) whatever the kind.  The size and depth bounds and the read itself are
every kind's (:func:`godot_formats.layers.files.read_bounded`, :mod:`godot_formats.core.limits`)."""

from __future__ import annotations

from typing import Any

from ..core.errors import GodotFormatsError
from ..core.limits import MAX_FILE_SIZE
from ..layers.files import Readable, read_bounded
from .kinds import KINDS, Kind, OpenOptions, kind_of, register_kind, unregister_kind
from .protocol import Document

__all__ = ["KINDS", "Document", "Kind", "OpenOptions", "kind_of", "open", "register_kind",
           "unregister_kind"]


def open(file: Readable, *, password: str | None = None, key: bytes | None = None, dialect: Any = None,
         allow_objects: bool = False, max_size: int = MAX_FILE_SIZE, max_ratio: int | None = None,
         salvage: bool = False, framing: str = "auto", compressed: str | int | None = None,
         kind: str | None = None) -> Any:
    """The document in ``file`` (a path, bytes or a binary file object), of whichever kind it is:
    a save (``store_var``, ``var_to_bytes``, base64, ``project.binary``/``engine.cfb``, ConfigFile
    text; encrypted or compressed) or a resource (``.tres``, ``.res``, RSCC).  ``kind`` names the
    kind instead of telling it from the bytes.

    One set of options for every kind, each kind taking what applies to it: ``password`` or ``key``
    (32 bytes) opens an encrypted save; ``dialect`` skips detection; ``allow_objects`` reads full
    Objects as inert data; ``salvage`` keeps the readable records of a damaged save; ``framing``
    (``auto``, ``none``, ``store_var``); ``compressed`` names the mode of a bare
    ``PackedByteArray.compress`` stream.  No file over ``max_size`` bytes is read, and a compressed
    layer decompresses to at most ``max_ratio`` times the file's size (1 MiB at least; default: the
    kind's own bound, :data:`~godot_formats.core.limits.MAX_RATIO` for a save's layers and
    :data:`~godot_formats.core.limits.RSCC_MAX_RATIO` for a compressed resource); a FIFO, a
    device, a socket or a folder is refused before it is read.  Every failure to read the bytes is
    one of the library's errors (``gf.DecodeError`` and its kin) naming the byte offset; a file that
    cannot be opened at all raises the ``OSError`` that says why (``FileNotFoundError`` ...).
    """
    data, path = read_bounded(file, max_size)
    options = OpenOptions(password, key, dialect, allow_objects, max_size, max_ratio, salvage, framing, compressed)
    if kind is None:
        found = kind_of(data)
    else:
        named = [k for k in KINDS if k.name == kind]
        if not named:
            raise GodotFormatsError(f"unknown kind {kind!r}; kinds: {', '.join(k.name for k in KINDS)}")
        found = named[0]
    return found.read(data, path, options)
