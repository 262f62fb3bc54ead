"""What a resource file holds, whatever its form (``.tres`` text, ``.res`` binary, RSCC compressed).

A resource save is a main Resource, the sub-resources it (transitively) references, and
references to other files (scripts, textures ...).  We parse and never load: an external
resource stays a reference (type, path, uid) and a script stays its path.  A sub-resource is one
Python object wherever it is referenced, so shared sub-resources stay shared.

What a byte-exact writer needs beyond the values (string-table order, ids, the names of
properties skipped as class defaults, the header's reserved fields) is kept in ``ResourceFile``'s
``layout`` fields, which the writers read back.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Callable, ClassVar, Union

import attrs

from ..core import types as t
from ..core.dialects import Dialect, get_dialect
from ..core.errors import EncodeError, Remedy
from ..layers.files import save_to

__all__ = ["ExtResource", "Resource", "ResourceFile", "WRITERS", "FORMATS", "FORM_BY_SUFFIX", "form_for_path",
           "values_in", "holds", "holds_reference"]

#: The forms a resource file is written in, each with its writer (registered by :mod:`.binary` and
#: :mod:`.text`, which import this module: the model knows the writers only by this table).
WRITERS: dict[str, Callable[..., bytes]] = {}
#: The converter between engine versions (:func:`.conversion.convert_resource`, registered there).
CONVERTERS: list[Callable[..., Any]] = []
#: The code scanner (:func:`.scan.scan`, registered there), which gates the writers.
SCANNERS: list[Callable[[ResourceFile], list[Any]]] = []


def carries_code(found: list[Any], then: str) -> EncodeError:
    """The refusal of a writer (or a conversion) whose values would run code once the engine makes them:
    the first three findings of the scanner named, and the flag that writes it anyway, then ``then``."""
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    shown = "; ".join(str(f) for f in found[:3]) + more
    return EncodeError(f"the file carries code, which Godot runs when it loads it: {shown}; pass ",
                       remedy=Remedy.ALLOW_SCRIPTS, then=then)
FORMATS = ("binary", "text")

#: The form a file name asks for, as the engine's ResourceSaver chooses its saver by extension
#: (a text file named ``.res`` would not load: the binary loader claims that extension).
FORM_BY_SUFFIX = {".res": "binary", ".tres": "text"}


def form_for_path(file: Any) -> str | None:
    """The form a path's extension names (None for another extension, or for a file object)."""
    if not isinstance(file, (str, os.PathLike)):
        return None
    return FORM_BY_SUFFIX.get(Path(file).suffix.lower())
FileLike = Union[str, "os.PathLike[str]", IO[bytes]]


def values_in(value: Any) -> Iterator[Any]:
    """``value`` and every value inside its Arrays and Dictionaries (keys, then values), in file
    order, without recursion: the one walk the resource modules share."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        if isinstance(v, (dict, t.Dictionary)):
            stack.extend(reversed([x for pair in v.items() for x in pair]))
        elif isinstance(v, (list, tuple)) and not isinstance(v, t.Components):
            stack.extend(reversed(v))


def holds(value: Any, classes: type | tuple[type, ...]) -> bool:
    """Whether ``value`` is, or holds at any depth, an instance of ``classes``."""
    return any(isinstance(v, classes) for v in values_in(value))


def holds_reference(value: Any) -> bool:
    """Whether ``value`` is, or holds, a reference to a resource (of this file or another)."""
    return holds(value, (Resource, ExtResource))


@attrs.define(eq=False)
class ExtResource:
    """A reference to another file (``[ext_resource]``): never loaded.

    ``id`` is the text form's id (``1`` in Godot 3, ``"1"``/``"1_abcde"`` in Godot 4) or, in a
    binary file, the entry's index; ``uid`` the 64-bit uid (None where the file has none: Godot 3,
    or ``-1``/no uid in text).
    """

    type: str
    path: str
    uid: int | None = None
    id: int | str | None = None

    def __repr__(self) -> str:
        return f"ExtResource({self.type!r}, {self.path!r})"


@attrs.define(eq=False)
class Resource:
    """One resource of the file: its native class (``type``), and its stored properties in file
    order (values of the library's value model; a Resource value is a :class:`Resource` of this
    file or an :class:`ExtResource`).  ``script`` is the ``script`` property (an ExtResource to a
    script file, or an embedded script sub-resource), or None."""

    type: str
    properties: dict[str, Any] = attrs.field(factory=dict)
    id: int | str | None = None  # text id, or binary local path ("local://1", "local://Resource_bc5hj")

    @property
    def script(self) -> Any:
        return self.properties.get("script")

    def __repr__(self) -> str:
        return f"Resource({self.type!r}, id={self.id!r}, {len(self.properties)} properties)"


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"ResourceFile.{old} is {new} since 0.4, the name a save file has for it; {old} goes in 0.5",
                  DeprecationWarning, stacklevel=3)


@attrs.define(eq=False)
class ResourceFile:
    """A whole resource file: ``main``, ``resources`` (the sub-resources, file order, main excluded),
    ``external``; and what describes the file: ``engine`` (major version: 2, 3 or 4), ``format``
    ("binary" or "text"), ``version`` (the format version: binary 1-6, text 1-4), ``compression``
    (the RSCC compression mode name, or None), ``byteorder`` (``"little"`` or ``"big"``: the binary
    form's numbers).  ``compression`` and ``byteorder`` are a save's names for the same facts; the
    ``compressed`` and ``big_endian`` still answer until 0.5, with a ``DeprecationWarning``."""

    main: Resource
    resources: list[Resource] = attrs.field(factory=list)
    external: list[ExtResource] = attrs.field(factory=list)
    engine: int = 4
    format: str = "binary"
    version: int = 6
    compression: str | None = None
    byteorder: str = attrs.field(default="little", validator=attrs.validators.in_(("little", "big")))
    #: Header facts: Godot version (major, minor) the file names, uid, script_class, flags ...
    header: dict[str, Any] = attrs.field(factory=dict)
    #: What the file says that no value holds, kept for a byte-exact write back (the string table's
    #: order, names of properties skipped as defaults, reserved words ...): the writers' business.
    layout: dict[str, Any] = attrs.field(factory=dict, repr=False)
    #: Things a reader should know (the engine misreads big-endian packed arrays ...).
    notes: list[str] = attrs.field(factory=list)
    #: Where the file was read from (None for bytes).
    path: Path | None = None

    #: The document kind (:mod:`godot_formats.documents`): every document answers the same protocol.
    kind: ClassVar[str] = "resource"

    @property
    def dialect(self) -> Dialect:
        """The engine version that wrote the file, as the dialect of its major version."""
        return get_dialect(f"godot{self.engine}")

    @property
    def layers(self) -> dict[str, Any]:
        """What the file has around its values, as plain data (the same keys a save's layers use
        where the idea is the same: ``compression``, ``byteorder``)."""
        return {"container": f"resource ({self.format})", "dialect": self.dialect.name, "format": self.format,
                "version": self.version, "compression": self.compression, "byteorder": self.byteorder}

    @property
    def compressed(self) -> str | None:
        """The development versions' name of :attr:`compression` (until 0.5)."""
        _renamed("compressed", "compression")
        return self.compression

    @compressed.setter
    def compressed(self, value: str | None) -> None:
        _renamed("compressed", "compression")
        self.compression = value

    @property
    def big_endian(self) -> bool:
        """The development versions' ``byteorder == "big"`` (until 0.5)."""
        _renamed("big_endian", 'byteorder ("little" or "big")')
        return self.byteorder == "big"

    @big_endian.setter
    def big_endian(self, value: bool) -> None:
        _renamed("big_endian", 'byteorder ("little" or "big")')
        self.byteorder = "big" if value else "little"

    def to_bytes(self, *, format: str | None = None, version: int | None = None, dialect: Any = None,
                 policy: str = "strict", property_renames: dict[str, str] | None = None, allow_scripts: bool = False,
                 **options: Any) -> bytes:
        """The file's bytes: unchanged, the bytes it was read from, byte for byte.

        ``format`` ("text" or "binary") and ``version`` (the format version: text 2-4, binary 3-6)
        write another form; ``dialect`` ("godot3", "godot4" ...) another engine version, through
        :meth:`convert` (``policy``, ``property_renames``).  ``options`` go to the writer
        (``compressed=``, ``big_endian=`` for binary: the binary writer's own options).  A file that
        embeds a script is written only with ``allow_scripts=True`` (copied as it is, never run).
        """
        return self._written(format=format, version=version, dialect=dialect, policy=policy,
                             property_renames=property_renames, allow_scripts=allow_scripts, **options)[0]

    def _written(self, *, format: str | None = None, version: int | None = None, dialect: Any = None,
                 policy: str = "strict", property_renames: dict[str, str] | None = None, allow_scripts: bool = False,
                 **options: Any) -> tuple[bytes, list[Any]]:
        """:meth:`to_bytes`, and the losses of its conversion (what :meth:`save` returns)."""
        form = format or self.format
        if form not in WRITERS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {form!r}")
        if not allow_scripts:
            found = SCANNERS[0](self)
            if found:
                raise carries_code(found, " to write it anyway (it is copied as it is, never run)")
        rf: ResourceFile = self
        losses: list[Any] = []
        if dialect is not None:
            rf, losses = self.convert(dialect, policy=policy, property_renames=property_renames)
        return WRITERS[form](rf, version=version, **options), losses

    def _is_origin(self, file: Any) -> bool:
        if file is None:
            return True
        if self.path is None or not isinstance(file, (str, os.PathLike)):
            return False
        try:
            return os.path.samefile(file, self.path)
        except OSError:
            return Path(file) == self.path

    def convert(self, dialect: Any, *, policy: str = "strict",
                property_renames: dict[str, str] | None = None) -> tuple[ResourceFile, list[Any]]:
        """This file for another engine version, and every loss (see
        :mod:`godot_formats.resources.conversion`)."""
        return CONVERTERS[0](self, dialect, policy=policy, property_renames=property_renames)  # type: ignore[no-any-return]

    def save(self, file: FileLike | None = None, *, dialect: Any = None, policy: str = "strict",
             overwrite: bool = False, **options: Any) -> list[Any]:
        """Write the file atomically to ``file`` (a path or a binary file object), or back where it
        was read from; an existing file other than that one is only replaced with ``overwrite=True``.
        ``options`` as :meth:`to_bytes`.  Returns the losses of a conversion (``dialect=``; ``[]``
        without one), as ``SaveFile.save`` does: under ``policy="lossy"`` the caller learns what
        changed without converting twice.  Saved under another name, the file takes the form its
        extension names (``.res`` binary, ``.tres`` text) unless ``format=`` says otherwise; saved
        back where it was read, it keeps its own."""
        if options.get("format") is None and options.get("version") is None and not self._is_origin(file):
            options["format"] = form_for_path(file)
        data, losses = self._written(dialect=dialect, policy=policy, **options)
        save_to(file, data, origin=self.path, overwrite=overwrite, what="resource file")
        return losses
