"""``explain`` of a resource save: every field of a ``.res`` with its offset, bytes and meaning,
and every section and property of a ``.tres`` with its line.

The binary listing comes from the reader itself (:mod:`.binary`), run with a reader that
records each read: what is listed is exactly what :func:`~.binary.read_binary` reads, and a
damaged file is listed up to the damage, then the error.  Nothing is loaded or run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.errors import DecodeError, GodotFormatsError
from ..layers.compression import RSCC_MAGIC
from ..views.explain import TEXT_CHARS, Field, quote
from .binary import RSRC_MAGIC, _read_rsrc, _Reader
from .ids import BY_ID

__all__ = ["explain_binary", "explain_text"]


class _Tracer(_Reader):
    """A reader that keeps a :class:`Field` for each read."""

    fields: list[Field]

    def __init__(self, data: bytes, pos: int, big_endian: bool, base: int) -> None:
        super().__init__(data, pos, big_endian, base)
        self.fields = [Field(0, 4, 0, "header", "magic RSRC"),
                       Field(4, 4, 0, "flags", f"big_endian {int(big_endian)}")] if pos == 8 else [
            Field(0, 4, 0, "flags", f"big_endian {int(big_endian)}")]
        self.quiet = 0
        self.strings: list[str] = []

    def read_u32(self, what: str) -> int:
        at = self.pos
        value = super().read_u32(what)
        if not self.quiet:
            text = _u32_text(what, value)
            if what == "property name index" and value < len(self.strings):
                text += f" ({self.strings[value]})"
            self.fields.append(Field(at, 4, self.depth, "value", text))
        return value

    def read_u64(self, what: str) -> int:
        at = self.pos
        value = super().read_u64(what)
        self.fields.append(Field(at, 8, self.depth, "value", f"{what}: {value}"))
        return value

    def read_numbers(self, kind: str, count: int, what: str) -> tuple[Any, ...]:
        at = self.pos
        values = super().read_numbers(kind, count, what)
        shown = ", ".join(repr(v) for v in values[:16]) + (" …" if count > 16 else "")
        self.fields.append(Field(at, self.pos - at, self.depth, "value", f"{what}: {shown}"))
        return values

    def read_string(self, what: str) -> str:
        at = self.pos
        self.quiet += 1
        try:
            text = super().read_string(what)
        finally:
            self.quiet -= 1
        if what == "string table entry":
            self.strings.append(text)
        self.fields.append(Field(at, self.pos - at, self.depth, "text",
                                 f"{what}: {quote(text)} ({self.pos - at - 4} bytes after the length)"))
        return text


def _u32_text(what: str, value: int) -> str:
    if what == "Variant type":
        row = BY_ID.get(value)
        return f"type {value} ({row.type if row is not None else 'unknown'})"
    if what == "Object kind":
        return f"Object kind {value} ({_OBJECT_KINDS.get(value, 'unknown')})"
    return f"{what}: {value}"


_OBJECT_KINDS = {0: "empty: null", 1: "external resource by type and path", 2: "internal resource",
                 3: "external resource by index"}


def explain_binary(data: bytes) -> tuple[list[Field], bytes, str | None]:
    """The fields of the binary resource ``data``, the bytes their offsets count in (a compressed
    file's decompressed stream), and the error that stopped the reading, if any."""
    from ..layers.compression import read_gcpf

    plain, pos, error = data, 4, None
    if data[:4] not in (RSRC_MAGIC, RSCC_MAGIC):
        return [], data, f"at byte 0: not a binary resource file: it starts with {data[:4]!r}, not RSRC or RSCC"
    if data[:4] == RSCC_MAGIC:
        try:
            plain, _ = read_gcpf(data, max_size=max(1 << 20, 100 * len(data)))
        except GodotFormatsError as e:
            return [Field(0, 4, 0, "header", "magic RSCC (compressed)")], data, str(e)
        pos = 0
    tracer: list[_Tracer] = []

    class Recorder(_Tracer):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            tracer.append(self)

    try:
        _read_rsrc(plain, pos, base=0, reader=Recorder)
    except DecodeError as e:
        error = f"at byte {e.offset}: {e.reason}" if hasattr(e, "reason") else str(e)
    fields = sorted(tracer[0].fields, key=lambda f: f.offset) if tracer else []
    # A resource's type is read twice (where it is, then what it holds): the second names it.
    fields = [f for i, f in enumerate(fields) if i + 1 == len(fields) or fields[i + 1].offset != f.offset]
    if pos == 0:  # the stream of a compressed file has no magic: its first word is big_endian
        fields = [f for f in fields if not (f.kind == "header" and f.text == "magic RSRC")]
    return fields, plain, error


def explain_text(data: bytes) -> Iterator[str]:
    """One line per section and per property of a ``.tres``: its line number and what it is."""
    from ..views.text import to_text
    from .text import read_text

    rf = read_text(data)
    lines = data.decode("utf-8-sig").split("\n")
    yield f"# Godot {rf.engine} text resource, format {rf.version}: main resource {rf.main.type}"
    sections = [("[ext_resource", e) for e in rf.external]
    at = 0

    def find(prefix: str) -> int:
        nonlocal at
        for i in range(at, len(lines)):
            if lines[i].startswith(prefix):
                at = i + 1
                return i + 1
        return 0

    yield f"{find('[gd_resource'):>5}  header: {rf.main.type}, format {rf.version}"
    for _, ext in sections:
        yield f"{find('[ext_resource'):>5}  external resource {ext.id}: {ext.type} at {ext.path} (never loaded)"
    for res in (*rf.resources, rf.main):
        if res is rf.main:
            yield f"{find('[resource]'):>5}  the main resource ({res.type})"
        else:
            yield f"{find('[sub_resource'):>5}  sub-resource {res.id} ({res.type})"
        for name, value in res.properties.items():
            kind = type(value).__name__ if value is not None else "null"
            try:
                text = to_text(value, "godot3" if rf.engine <= 3 else "godot4").split("\n")[0]
            except GodotFormatsError:
                text = repr(value)
            yield f"{find(name):>5}    {name}: {kind} {text[:TEXT_CHARS]}"
