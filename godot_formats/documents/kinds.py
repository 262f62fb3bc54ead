"""The kinds of file a game or a project keeps, one row each, as ``tarfile.open``'s ``OPEN_METH``
has one row per compression: what the first bytes of each look like, and what reads it.

:func:`kind_of` asks the rows in order and the first whose ``sniff`` accepts the bytes reads them;
the last row (a save: ``store_var`` records, ``var_to_bytes``, base64, project settings, ConfigFile
text, with any encryption or compression around them) takes everything the others do not, and its
one reading (:func:`godot_formats.saves.reading.read`) says what the bytes are or why they are none
of these.  A program adds a kind with :func:`register_kind` (``docs/architecture.md`` has the recipe).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ..core.limits import MAX_FILE_SIZE, MAX_RATIO
from ..layers.magic import looks_like_config, resource_form

__all__ = ["KINDS", "Kind", "OpenOptions", "kind_of", "register_kind", "unregister_kind"]


@attrs.frozen
class OpenOptions:
    """The options of :func:`godot_formats.documents.open`, one set for every kind: each kind takes
    what applies to it (a resource has no password) and leaves the rest."""

    password: str | None = None
    key: bytes | None = None
    dialect: Any = None
    allow_objects: bool = False
    max_size: int = MAX_FILE_SIZE
    max_ratio: int | None = None  # None: the kind's own bound (core.limits)
    salvage: bool = False
    framing: str = "auto"
    compressed: str | int | None = None


#: How a kind reads a file: its bytes, where they came from, and the options.
Reader = Callable[[bytes, "Path | None", OpenOptions], Any]


@attrs.frozen
class Kind:
    """One kind of file: ``name`` (a document's ``kind``), a line for people, ``sniff(data)`` (whether
    the first bytes are this kind's), and ``read(data, path, options)`` (the document)."""

    name: str
    description: str
    sniff: Callable[[bytes], bool]
    read: Reader


def _is_resource(data: bytes) -> bool:
    """A resource save, binary or text, or a scene: the resource reader refuses a scene by name."""
    return resource_form(data) is not None


def _read_resource(data: bytes, path: Path | None, options: OpenOptions) -> Any:
    from ..resources.opening import open_resource

    rf = open_resource(data, max_size=options.max_size, max_ratio=options.max_ratio)
    rf.path = path
    return rf


def _is_config(data: bytes) -> bool:
    return looks_like_config(data)


def _read_config(data: bytes, path: Path | None, options: OpenOptions) -> Any:
    from ..configfile import read_config

    return read_config(data, path=path, password=options.password, key=options.key, dialect=options.dialect,
                       salvage=options.salvage, max_size=options.max_size)


def _read_save(data: bytes, path: Path | None, options: OpenOptions) -> Any:
    from ..saves.savefile import open as open_save

    sf = open_save(data, password=options.password, key=options.key, dialect=options.dialect,
                   allow_objects=options.allow_objects, max_size=options.max_size, salvage=options.salvage,
                   compressed=options.compressed, framing=options.framing,
                   max_ratio=MAX_RATIO if options.max_ratio is None else options.max_ratio)
    if sf.container == "text":  # ConfigFile text inside a layer (save_encrypted_pass): a ConfigFile
        return _read_config(data, path, options)
    sf.path = path
    return sf


#: The kinds, in the order they are asked; the last takes what no other does.
KINDS: list[Kind] = [
    Kind("resource", "a resource save: .tres text, .res binary, RSCC compressed binary (a .tscn scene is "
                     "refused by name, not read yet)", _is_resource, _read_resource),
    Kind("configfile", "ConfigFile text: settings.cfg, key bindings, override.cfg, project.godot, "
                       "export_presets.cfg, *.import (encrypted ones are told by the save row, which decrypts)",
         _is_config, _read_config),
    Kind("save", "a save: store_var records or var_to_bytes data, base64 text, project settings, in any "
                 "encryption or compression (ConfigFile text inside one is a configfile)", lambda data: True,
         _read_save),
]


def kind_of(data: bytes) -> Kind:
    """The first kind whose ``sniff`` accepts ``data``."""
    return next(kind for kind in KINDS if kind.sniff(data))


def register_kind(kind: Kind, *, before: str = "save") -> Kind:
    """Add a kind, asked before the kind named ``before`` (the save, which takes everything, by
    default).  A name is one kind's: register another under a taken name after unregistering it."""
    if not isinstance(kind, Kind):
        raise TypeError(f"register_kind() takes a Kind, not {type(kind).__name__}")
    names = [k.name for k in KINDS]
    if kind.name in names:
        raise ValueError(f"the kind {kind.name!r} is registered already (unregister_kind it first)")
    if before not in names:
        raise ValueError(f"no kind {before!r} to put {kind.name!r} before; kinds: {', '.join(names)}")
    KINDS.insert(names.index(before), kind)
    return kind


def unregister_kind(name: str) -> None:
    """Forget the kind ``name`` (the reverse of :func:`register_kind`); the save stays."""
    if name == "save":
        raise ValueError("the save kind reads what no other kind does; it stays")
    for i, kind in enumerate(KINDS):
        if kind.name == name:
            del KINDS[i]
            return
    raise ValueError(f"no kind {name!r} is registered")
