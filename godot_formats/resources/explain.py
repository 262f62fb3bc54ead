"""``explain`` of a resource save: every field of a ``.res`` with its offset, bytes and meaning,
and every section and property of a ``.tres`` with its line.

The binary listing comes from the reader itself (:mod:`.binary`), run with a reader that
records each read: what is listed is exactly what :func:`~.binary.read_binary` reads, with the
same bounds (an RSCC file's ratio, the objects a file may make), and a damaged file is listed up
to the damage, then the error.  The listing is handed out as the reading goes (the reader pauses
every few thousand objects), so a large file's listing is never held whole.  Nothing is loaded
or run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.errors import DecodeError, GodotFormatsError
from ..layers.compression import RSCC_MAGIC
from ..views.explain import TEXT_CHARS, Field, quote
from .binary import RSCC_MAX_RATIO, RSRC_MAGIC, _Reader, inflate, object_budget, reading, stream_where
from .ids import BY_ID

__all__ = ["BinaryListing", "explain_binary", "explain_text"]


class _Tracer(_Reader):
    """A reader that keeps a :class:`Field` for each read, until :meth:`take` hands them out."""

    fields: list[Field]

    def __init__(self, data: bytes, pos: int, big_endian: bool, base: int) -> None:
        super().__init__(data, pos, big_endian, base)
        self.fields = [Field(0, 4, 0, "header", "magic RSRC"),
                       Field(4, 4, 0, "flags", f"big_endian {int(big_endian)}")] if pos == 8 else [
            Field(0, 4, 0, "flags", f"big_endian {int(big_endian)}")]
        self.quiet = 0
        self.strings: list[str] = []
        self.offsets: list[int] = []  # of the internal resources, in the table's order
        #: None until the resources are read, then whether they are read in file order.
        self.in_order: bool | None = None

    def take(self) -> list[Field]:
        """The fields recorded since the last call, in file order, and forget them; none while the
        resources are read out of file order (a table no saver writes): all at the end, sorted."""
        if self.in_order is False:
            return []
        fields, self.fields = self.fields, []
        return fields

    def start_resource(self, offset: int) -> None:
        if self.in_order is None:
            self.in_order = self.offsets == sorted(self.offsets)

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
        if what == "internal resource offset":
            self.offsets.append(value)
        self.fields.append(Field(at, 8, self.depth, "value", f"{what}: {value}"))
        return value

    def read_numbers(self, kind: str, count: int, what: str) -> tuple[Any, ...]:
        at = self.pos
        values = super().read_numbers(kind, count, what)
        self.numbers(at, values, count, what)
        return values

    def read_array(self, kind: str, count: int, what: str) -> Any:
        at = self.pos
        values = super().read_array(kind, count, what)
        self.numbers(at, values, count, what)
        return values

    def numbers(self, at: int, values: Any, count: int, what: str) -> None:
        if count:  # an empty array's size says it all
            self.fields.append(Field(at, self.pos - at, self.depth, "value", f"{what}: {_shown(values, count)}"))

    def read_string(self, what: str) -> str:
        at = self.pos
        self.quiet += 1
        try:
            text = super().read_string(what)
        finally:
            self.quiet -= 1
        if what == "string table entry":
            self.strings.append(text)
        elif what == "resource type":
            return text  # the table's look ahead: listed where the resource is read ("resource X: type")
        self.fields.append(Field(at, self.pos - at, self.depth, "text",
                                 f"{what}: {quote(text)} ({self.pos - at - 4} bytes after the length)"))
        return text


def _shown(values: Any, count: int) -> str:
    return ", ".join(repr(v) for v in values[:16]) + (" …" if count > 16 else "")


def _u32_text(what: str, value: int) -> str:
    if what == "Variant type":
        row = BY_ID.get(value)
        return f"type {value} ({row.type if row is not None else 'unknown'})"
    if what == "Object kind":
        return f"Object kind {value} ({_OBJECT_KINDS.get(value, 'unknown')})"
    return f"{what}: {value}"


_OBJECT_KINDS = {0: "empty: null", 1: "external resource by type and path", 2: "internal resource",
                 3: "external resource by index"}


class BinaryListing:
    """The fields of the binary resource ``data``, made as the reader reads it: iterate over it
    for them, in file order (once).  ``plain`` is the bytes their offsets count in (a compressed
    file's decompressed stream), ``compressed`` whether it is one, ``error`` what stopped the
    reading (None: the whole file was read), known once the fields are all out; the reading has
    the bounds of :func:`~.binary.read_binary` (``max_ratio``, ``max_objects``)."""

    def __init__(self, data: bytes, *, max_ratio: int = RSCC_MAX_RATIO, max_objects: int | None = None) -> None:
        self.data, self.plain, self.error = data, data, None
        self.compressed = data[:4] == RSCC_MAGIC
        self.budget = object_budget(len(data), max_objects)
        self._start: list[Field] | None = None  # the fields of a file that stops before its stream
        if data[:4] not in (RSRC_MAGIC, RSCC_MAGIC):
            self._start = []
            self.error = f"at byte 0: not a binary resource file: it starts with {data[:4]!r}, not RSRC or RSCC"
        elif self.compressed:
            try:
                self.plain, _ = inflate(data, max_ratio=max_ratio)
            except GodotFormatsError as e:
                self._start, self.error = [Field(0, 4, 0, "header", "magic RSCC (compressed)")], str(e)

    def __iter__(self) -> Iterator[Field]:
        if self._start is not None:
            yield from self._start
            return
        tracers: list[_Tracer] = []

        class Recorder(_Tracer):
            def __init__(self, *args: Any) -> None:
                super().__init__(*args)
                tracers.append(self)

        steps = reading(self.plain, 0 if self.compressed else 4, 0, Recorder, budget=self.budget, size=len(self.data))
        try:
            for _ in steps:
                yield from tracers[0].take()
        except DecodeError as e:
            where = stream_where(self.data, e.offset) if self.compressed else ""
            self.error = f"at byte {e.offset}{where}: {e.reason}"
        if tracers:
            yield from tracers[0].take() if tracers[0].in_order is not False else sorted(
                tracers[0].fields, key=lambda f: f.offset)


def explain_binary(data: bytes, *, max_ratio: int = RSCC_MAX_RATIO,
                   max_objects: int | None = None) -> tuple[list[Field], bytes, str | None]:
    """The fields of the binary resource ``data`` (all of them: :class:`BinaryListing` hands them out
    one at a time), the bytes their offsets count in, and the error that stopped the reading, if any."""
    listing = BinaryListing(data, max_ratio=max_ratio, max_objects=max_objects)
    fields = list(listing)
    return fields, listing.plain, listing.error


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
