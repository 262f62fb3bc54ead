"""What every document answers, whatever kind of file it was read from (a ``store_var`` save, a
resource, ConfigFile text ...): one vocabulary, as ``tarfile.TarFile`` is one object for every
compression.  The kinds implement it; :func:`godot_formats.documents.open` returns one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..core.dialects import Dialect

__all__ = ["Document"]


@runtime_checkable
class Document(Protocol):
    """One Godot file, read.

    - ``kind``: which row of :data:`godot_formats.documents.KINDS` read it (``"save"``, ``"resource"``);
    - ``path``: where it was read from (None for bytes);
    - ``dialect``: the engine version that wrote it (a :class:`~godot_formats.Dialect`);
    - ``layers``: what the file has around its values, as plain data (JSON-ready);
    - ``notes``: what a reader should know that no value says (how the version was told, what a
      reading kept or set aside);
    - ``to_bytes``: the file's bytes, the ones it was read from while nothing changed; ``dialect``
      writes another engine version (``policy`` as :meth:`convert`), ``form`` the kind's own
      choices (a resource's ``format="text"``, a save's ``password=``);
    - ``save``: written atomically to ``file`` or back where it was read; an existing other file is
      replaced only with ``overwrite``; returns the losses of a conversion;
    - ``convert``: the same document for another engine version, and every change that made
      (``policy="strict"`` refuses any loss, ``"lossy"`` applies and lists them).
    """

    kind: str
    path: Path | None

    @property
    def dialect(self) -> Dialect: ...

    @property
    def layers(self) -> dict[str, Any]: ...

    @property
    def notes(self) -> list[str]: ...

    def to_bytes(self, *, dialect: str | Dialect | None = None, policy: str = "strict", **form: Any) -> bytes: ...

    def save(self, file: Any = None, *, dialect: str | Dialect | None = None, policy: str = "strict",
             overwrite: bool = False) -> list[Any]: ...

    def convert(self, dialect: str | Dialect, *, policy: str = "strict") -> tuple[Any, list[Any]]: ...
