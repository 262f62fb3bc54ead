"""A disassembler for Variant bytes, in the spirit of ``pickletools.dis``.

:func:`explain` prints one line per field: its offset, its bytes in hex and
what they mean, indented by nesting::

    offset  bytes              meaning
         0  1b000000           Dictionary (type 27)
         4  01000000             count: 1
         8  04000000             key 0: String (type 4)
        12  02000000               length: 2
        16  6870                   "hp"
        18  0000                   padding: 2 bytes, zero
        20  02000000             value 0: int (type 2)
        24  03000000               int32: 3
        28                       end: the value is 28 bytes; no trailing bytes

It walks the bytes with the dialect's own tables and leaves the judging to the
codec: the whole value is decoded first, each leaf is decoded by the same
:class:`~godot_formats.codec.Decoder`, and a malformed blob ends in a line
holding the decoder's own :class:`~godot_formats.errors.DecodeError` message,
after everything that could be read.  It never raises on bad bytes.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, NoReturn

import attrs

from ..core.codec import COUNT_MASK, DEFAULT_MAX_DEPTH, INT32_MAX, NODE_PATH_NEW_FORMAT, Decoder
from ..core.dialects import Dialect, ObjectFormat, get_dialect
from ..core.errors import DecodeError
from ..core.registry import BY_NAME, Family, TypeSpec, pad4
from ..core.switches import FLAG_64, I32, I64, REAL, U8

__all__ = ["Field", "explain", "explain_fields", "format_fields", "format_lines", "MAX_INDENT_DEPTH"]

_u32 = struct.Struct("<I").unpack_from
_u64 = struct.Struct("<Q").unpack_from

#: Bytes shown in the hex column of one line; longer fields end in "…".
HEX_BYTES = 8
#: Characters of a string shown before it is cut short.
TEXT_CHARS = 60

#: Nesting levels that indent a line; deeper lines keep that indentation and
#: say their depth (``(depth 40) [0] Nil (type 0)``), so a line never carries
#: more than 64 columns of indentation and the listing stays within a constant
#: factor of the input's size, whatever the nesting.  ``Field.depth`` is exact.
MAX_INDENT_DEPTH = 32

#: What a header's bit 16-19 mean for a container type kind.
CONTAINER_KINDS = {0: "untyped", 1: "builtin type", 2: "class name", 3: "script path"}


@attrs.frozen
class Field:
    """One annotated span of the bytes.

    ``kind`` says what the span is: ``header``, ``count``, ``length``,
    ``text``, ``padding``, ``value``, ``type``, ``flags``, ``more`` (elements
    not shown), ``error``, ``end`` or ``prefix`` (a ``store_var`` length).
    """

    offset: int
    size: int
    depth: int
    kind: str
    text: str
    #: The error an ``error`` field says (its remedy, for a caller that words it: the command line's flag).
    error: DecodeError | None = None


class _Stop(Exception):
    """Raised inside the walk after the error line has been produced."""


def quote(text: str) -> str:
    """A string as explain shows it: JSON-quoted, cut at ``TEXT_CHARS`` with its full length."""
    shown = json.dumps(text[:TEXT_CHARS], ensure_ascii=False)
    return shown if len(text) <= TEXT_CHARS else f"{shown}… ({len(text)} characters)"


def _bytes(n: int) -> str:
    return f"{n} byte{'' if n == 1 else 's'}"


def _number(x: Any) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _ordinal_label(kind: str, index: int) -> str:
    if kind == "Array":
        return f"[{index}] "
    entry, is_value = divmod(index, 2)
    return f"value {entry}: " if is_value else f"key {entry}: "


@attrs.define
class _Open:
    """A container whose children are being walked."""

    kind: str  # "Array", "Dictionary" or "Object"
    count: int  # children (twice the entries of a Dictionary)
    index: int = 0


@attrs.frozen
class _Leaf:
    """A value without children as the decoder read it: what its family's field walker lists."""

    spec: TypeSpec
    body: int  # where its payload starts, after the header
    end: int  # where it ends (the bytes' limit when the decoder refused it)
    value: Any
    error: DecodeError | None
    depth: int

    @property
    def size(self) -> int:
        return self.end - self.body

    def reaches(self, at: int) -> bool:
        """Whether the value has a field at ``at``.

        A value the decoder read has none past its end (Godot 3's RID is its header
        alone); one it refused is listed up to the error, but not past an error about
        what came before ``at`` (a dialect with no RID encoding at all).
        """
        if self.error is None:
            return at < self.end
        return self.error.offset >= at


@functools.lru_cache(maxsize=32)
def _decoder(dialect: Dialect, allow_objects: bool, max_depth: int) -> Decoder:
    """One Decoder per options (building one builds its tables; a file of many records reuses it)."""
    return Decoder(dialect, allow_objects=allow_objects, max_depth=max_depth)


class _Walker:
    def __init__(self, buf: bytes, limit: int, dialect: Dialect, allow_objects: bool, max_elements: int | None,
                 max_depth: int) -> None:
        self.buf = buf
        self.limit = limit  # the value's bytes end here (``end``), without a copy of the rest
        self.d = dialect
        self.allow_objects = allow_objects
        self.max_elements = max_elements
        self.decoder = _decoder(dialect, allow_objects, max_depth)
        self.error: DecodeError | None = None
        self.end: int | None = None

    # -- shared pieces ------------------------------------------------------------------

    def fail(self, e: DecodeError | None, pos: int, depth: int) -> Generator[Field, None, NoReturn]:
        """The error line, then stop the walk."""
        if e is None:
            e = self.error or DecodeError(pos, "the bytes end inside this field")
        yield Field(e.offset, 0, depth, "error", f"error: {e}", e)
        raise _Stop

    def field(self, pos: int, size: int, depth: int, kind: str, text: str) -> Iterator[Field]:
        """A field of ``size`` bytes, or the error when they are not all there or hold the first error."""
        if pos + size > self.limit:
            yield from self.fail(None, pos, depth)
        yield Field(pos, size, depth, kind, text)
        e = self.error
        if e is not None and e.offset < pos + size:
            yield from self.fail(e, pos, depth)

    def type_name(self, type_id: int) -> str | None:
        types = self.d.types
        return types[type_id] if type_id < len(types) and types[type_id] else None

    def spec_of(self, type_id: int) -> TypeSpec | None:
        """The registry row of a type id in this dialect, or None for an id it has no type for."""
        name = self.type_name(type_id)
        return None if name is None else BY_NAME[name]

    def string(self, pos: int, depth: int, what: str = "", padded: bool = True, what_error: str = "String",
               nul: bool = False, padding_note: str = "") -> Generator[Field, None, tuple[str, int]]:
        """A u32 length, the UTF-8 bytes and their padding; returns the text and the offset after it.

        ``what`` prefixes the length line (``"name 0 "``); ``what_error`` names the
        string in the decoder's error messages; ``nul``: a trailing NUL is the
        PackedStringArray terminator.
        """
        n = self.u32(pos)
        yield from self.field(pos, 4, depth, "length", f"{what}length: {n} byte{'' if n == 1 else 's'}")
        try:
            text, stop = self.decoder.read_string(self.buf, pos, self.limit, what_error, padded)
        except DecodeError as e:
            yield from self.fail(e, pos, depth)
        if n:
            shown = quote(text[:-1]) + " + NUL" if nul and text.endswith("\0") else quote(text)
            yield from self.field(pos + 4, n, depth, "text", shown)
        pad = stop - pos - 4 - n
        if pad:
            yield from self.padding(pos + 4 + n, pad, depth, padding_note)
        return text, stop

    def padding(self, pos: int, size: int, depth: int, note: str = "") -> Iterator[Field]:
        """Padding bytes; the note says why they may not be zero."""
        raw = self.buf[pos:pos + size]
        state = "zero" if not any(raw) else f"NOT zero{note}"
        yield from self.field(pos, size, depth, "padding", f"padding: {size} byte{'s' if size > 1 else ''}, {state}")

    # -- headers --------------------------------------------------------------------------

    def describe_header(self, header: int, spec: TypeSpec | None) -> str:
        d = self.d
        type_id = header & d.type_mask
        if spec is None:
            return f"unknown type id {type_id} (header 0x{header:08x})"
        flags = header & ~d.type_mask
        notes, used = _HEADER_FLAGS.get(spec.family, _Walker.no_flags)(self, spec, flags)
        if flags & ~used:
            notes.append(f"unused header bits 0x{flags & ~used:08x} set (ignored)")
        return f"{d.native_name(spec.name)} (type {type_id})" + (f", {', '.join(notes)}" if notes else "")

    # What the bits above a header's type id mean, by family: the notes, and the bits they account for.

    def no_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        return [], 0

    def wide_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        """int and float: bit 16 says 64 bits."""
        return (["64-bit"] if flags & FLAG_64 else []), FLAG_64

    def object_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        form = self.d.object_format
        if form == ObjectFormat.ENGINE:
            return ["as id" if flags & FLAG_64 else "full object"], FLAG_64
        if form == ObjectFormat.DOCS4:
            mode = "full object" if self.allow_objects else "as id"
            return [f"{mode} (this page has no flag: allow_objects decides)"], 0
        return [], 0

    def real_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        """Math types and packed arrays of real_t: bit 16 says a double-precision build wrote them."""
        if spec.component != REAL or not flags & FLAG_64:
            return [], 0
        return ["64-bit components (double-precision build)" if self.d.math_flag_64
                else "64-bit flag, ignored by this dialect"], FLAG_64

    def array_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        if not self.d.typed_arrays:
            return [], 0
        kind = (flags >> 16) & 3
        return ([f"typed: element {CONTAINER_KINDS[kind]}"] if kind else []), 3 << 16

    def dictionary_flags(self, spec: TypeSpec, flags: int) -> tuple[list[str], int]:
        if not self.d.typed_dictionaries:
            return [], 0
        key, value = (flags >> 16) & 3, (flags >> 18) & 3
        return ([f"typed: key {CONTAINER_KINDS[key]}, value {CONTAINER_KINDS[value]}"] if key or value else []), \
            15 << 16

    def container_type(self, pos: int, kind: int, depth: int, what: str) -> Generator[Field, None, int]:
        """The type info of a typed container's element (or key, or value), by its header kind."""
        if kind == 0:
            return pos
        if kind == 1:
            type_id = self.u32(pos)
            name = self.type_name(type_id)
            shown = f"{self.d.native_name(name)} (type {type_id})" if name else f"unknown type id {type_id}"
            yield from self.field(pos, 4, depth, "type", f"{what} type: {shown}")
            return pos + 4
        noun = "class name" if kind == 2 else "script path"
        _, pos = yield from self.string(pos, depth, f"{what} {noun} ", what_error=f"container {noun}")
        return pos

    # -- the walk ---------------------------------------------------------------------------

    def walk(self, start: int) -> Generator[Field, None, int]:
        buf = self.buf
        stack: list[_Open] = []
        pos = start
        label = ""
        while True:
            depth = len(stack)
            if self.limit - pos < 4:
                yield from self.fail(None, pos, depth)
            header = _u32(buf, pos)[0]
            spec = self.spec_of(header & self.d.type_mask)
            yield from self.field(pos, 4, depth, "header", label + self.describe_header(header, spec))
            family = None if spec is None else spec.family
            opened: _Open | None = None
            if family is Family.ARRAY:
                pos, opened = yield from self.open_array(pos, header, depth)
            elif family is Family.DICTIONARY:
                pos, opened = yield from self.open_dictionary(pos, header, depth)
            elif family is Family.OBJECT and not self.object_as_id(header):
                pos, opened = yield from self.open_object(pos, depth)
            else:
                pos = yield from self.leaf(pos, spec, depth)
            if opened is not None and opened.count:
                stack.append(opened)
            # Find the next value: the next child of the innermost unfinished container.
            while stack:
                top = stack[-1]
                if top.index < top.count:
                    if top.kind == "Object":
                        prop, pos = yield from self.string(pos, len(stack), "property name ",
                                                           self.d.object_format == ObjectFormat.ENGINE, "property name")
                        label = f"property {quote(prop)}: "
                    else:
                        label = _ordinal_label(top.kind, top.index)
                    top.index += 1
                    break
                stack.pop()
            else:
                return pos

    def object_as_id(self, header: int) -> bool:
        """Whether an Object header starts a leaf: its id, or (Godot 2) nothing at all."""
        form = self.d.object_format
        if form == ObjectFormat.ENGINE:
            return bool(header & FLAG_64)
        return form == ObjectFormat.HEADER or not self.allow_objects

    def count(self, pos: int, depth: int, what: str) -> Generator[Field, None, int]:
        raw = self.u32(pos)
        count = raw & COUNT_MASK
        note = " (bit 31 set: the old 'shared' flag, ignored)" if raw != count else ""
        yield from self.field(pos, 4, depth, "count", f"{what}: {count}{note}")
        return count

    def open_array(self, pos: int, header: int, depth: int) -> Generator[Field, None, tuple[int, _Open | None]]:
        pos += 4
        kind = (header >> 16) & 3 if self.d.typed_arrays else 0
        if kind:
            pos = yield from self.container_type(pos, kind, depth + 1, "element")
        n = yield from self.count(pos, depth + 1, "count")
        return pos + 4, _Open("Array", n)

    def open_dictionary(self, pos: int, header: int, depth: int) -> Generator[Field, None, tuple[int, _Open | None]]:
        pos += 4
        if self.d.typed_dictionaries and header & (15 << 16):
            pos = yield from self.container_type(pos, (header >> 16) & 3, depth + 1, "key")
            pos = yield from self.container_type(pos, (header >> 18) & 3, depth + 1, "value")
        n = yield from self.count(pos, depth + 1, "count")
        return pos + 4, _Open("Dictionary", 2 * n)

    def open_object(self, pos: int, depth: int) -> Generator[Field, None, tuple[int, _Open | None]]:
        class_name, pos = yield from self.string(pos + 4, depth + 1, "class name ",
                                                 self.d.object_format == ObjectFormat.ENGINE, "Object class name")
        if not class_name:
            yield Field(pos, 0, depth + 1, "value", "an empty class name: a null Object")
            return pos, None
        raw = self.u32(pos)
        if raw > INT32_MAX:  # the engines read it as an int32: negative, so no properties
            yield from self.field(pos, 4, depth + 1, "count",
                                  f"property count: {raw - (1 << 32)} (negative as an int32: no properties)")
            return pos + 4, None
        n = yield from self.count(pos, depth + 1, "property count")
        return pos + 4, _Open("Object", n)

    # -- leaves ----------------------------------------------------------------------------

    def u32(self, pos: int) -> int:
        """The u32 at ``pos``, or 0 past the end (the field that holds it then reports the error)."""
        return int(_u32(self.buf, pos)[0]) if 0 <= pos <= self.limit - 4 else 0

    def u64(self, pos: int) -> int:
        return int(_u64(self.buf, pos)[0]) if 0 <= pos <= self.limit - 8 else 0

    def leaf(self, pos: int, spec: TypeSpec | None, depth: int) -> Generator[Field, None, int]:
        """The fields of a value without children, by its row's family.

        The decoder reads the value first; when it refuses it, the same
        breakdown runs on the bytes as far as they go, so the fields before
        the problem are still listed, then the error.
        """
        error: DecodeError | None = None
        value: Any = None
        try:
            value, end = self.decoder.decode(self.buf, pos, self.limit)
        except DecodeError as e:
            error, end = e, self.limit
        if spec is not None:  # else the decoder refused the unknown type id
            yield from _LEAF_FIELDS[spec.family](self, _Leaf(spec, pos + 4, end, value, error, depth + 1))
        if error is not None:
            yield from self.fail(error, pos + 4, depth + 1)
        return end

    def no_fields(self, leaf: _Leaf) -> Iterator[Field]:
        """Nil: the header is the whole value."""
        return iter(())

    def scalar_fields(self, leaf: _Leaf) -> Iterator[Field]:
        """A value whose payload is one line: a bool, an int, a float or a math type."""
        if leaf.error is None and leaf.size:
            yield from self.field(leaf.body, leaf.size, leaf.depth, "value", self.scalar(leaf))

    def scalar(self, leaf: _Leaf) -> str:
        return _SCALAR_TEXT[leaf.spec.family](self, leaf)

    def bool_text(self, leaf: _Leaf) -> str:
        raw = self.u32(leaf.body)
        return ("true" if leaf.value else "false") + (f" (raw {raw}: any non-zero is true)" if raw > 1 else "")

    def int_text(self, leaf: _Leaf) -> str:
        return f"int{8 * leaf.size}: {leaf.value}"

    def float_text(self, leaf: _Leaf) -> str:
        return f"float{8 * leaf.size}: {_number(leaf.value)}"

    def math_text(self, leaf: _Leaf) -> str:
        name = leaf.spec.name
        row = self.d.math_type(name)  # the dialect's order: a documentation page writes a Basis by columns
        parts = ", ".join(_number(x) for x in row.to_wire(leaf.value))
        width = "int32" if row.component == I32 else f"float{8 * leaf.size // row.count}"
        return f"{self.d.native_name(name)}({parts}) [{row.count} × {width}]"

    def text_fields(self, leaf: _Leaf) -> Iterator[Field]:
        yield from self.string(leaf.body, leaf.depth, what_error=leaf.spec.name)

    def node_path_fields(self, leaf: _Leaf) -> Iterator[Field]:
        yield from self.node_path(leaf.body, leaf.depth)

    def packed_fields(self, leaf: _Leaf) -> Iterator[Field]:
        if leaf.spec.component == U8:
            yield from self.byte_array(leaf.body, leaf.end, leaf.depth)
        else:
            yield from self.packed(leaf)

    def strings_fields(self, leaf: _Leaf) -> Iterator[Field]:
        yield from self.string_array(leaf.body, leaf.depth)

    def object_fields(self, leaf: _Leaf) -> Iterator[Field]:
        """An Object in its id form (walk opens a full one)."""
        if leaf.error is not None:
            return
        if self.d.object_format == ObjectFormat.HEADER:
            yield Field(leaf.body, 0, leaf.depth, "value", "no payload: Godot 2 writes an Object as its type header "
                                                           "alone (read as null)")
            return
        yield from self.field(leaf.body, leaf.size, leaf.depth, "value", f"object id: {self.u64(leaf.body)}"
                              + ("" if leaf.value is not None else " (null)"))

    def record_fields(self, leaf: _Leaf) -> Generator[Field, None, None]:
        """A record's fields in its row's ``layout``, one line each, as far as the bytes go."""
        at = leaf.body
        for label, kind in leaf.spec.layout:
            if not leaf.reaches(at):
                break
            at = yield from _RECORD_KINDS[kind](self, leaf, label, at)

    def record_u32(self, leaf: _Leaf, label: str, at: int) -> Generator[Field, None, int]:
        yield from self.field(at, 4, leaf.depth, "value", f"{label}: {self.u32(at)}")
        return at + 4

    def record_u64(self, leaf: _Leaf, label: str, at: int) -> Generator[Field, None, int]:
        yield from self.field(at, 8, leaf.depth, "value", f"{label}: {self.u64(at)}")
        return at + 8

    def record_text(self, leaf: _Leaf, label: str, at: int) -> Generator[Field, None, int]:
        _, stop = yield from self.string(at, leaf.depth, f"{label} ", what_error=f"{leaf.spec.name} {label}")
        return stop

    def record_bytes(self, leaf: _Leaf, label: str, at: int) -> Generator[Field, None, int]:
        """A u32 length, the bytes and their padding (which, at the very end, the engines do not require)."""
        n = self.u32(at)
        yield from self.field(at, 4, leaf.depth, "length", f"{label} length: {_bytes(n)}")
        if n:
            yield from self.field(at + 4, n, leaf.depth, "value", f"{label}: {_bytes(n)}")
        return (yield from self.end_padding(at + 4 + n, n, leaf.end, leaf.depth))

    def record_words(self, leaf: _Leaf, label: str, at: int) -> Generator[Field, None, int]:
        """u32 words up to the value's end (how many, the decoder decided)."""
        i = 0
        while at < leaf.end:
            yield from self.field(at, 4, leaf.depth, "value", f"{label} [{i}]: {self.u32(at)}")
            at, i = at + 4, i + 1
        return at

    def node_path(self, pos: int, depth: int) -> Iterator[Field]:
        first = self.u32(pos)
        if not first & NODE_PATH_NEW_FORMAT and self.d.node_path_old_format and pos + 4 <= self.limit:
            yield from self.string(pos, depth, "old-format path ", what_error="NodePath")
            return
        names, subnames, flags = first & COUNT_MASK, self.u32(pos + 4), self.u32(pos + 8)
        form = "| 0x80000000, the new format" if first & NODE_PATH_NEW_FORMAT else "bit 31 clear: the old format"
        yield from self.field(pos, 4, depth, "count", f"name count: {names} ({form})")
        yield from self.field(pos + 4, 4, depth, "count", f"subname count: {subnames}")
        shown = [w for bit, w in ((1, "absolute"), (2, "property: one more subname follows")) if flags & bit]
        yield from self.field(pos + 8, 4, depth, "flags", f"flags: {flags}" + (f" ({', '.join(shown)})" if shown
                                                                                 else ""))
        if flags & 2:
            subnames += 1
        at = pos + 12
        for i in range(names + subnames):
            what = f"name {i} " if i < names else f"subname {i - names} "
            _, stop = yield from self.string(at, depth, what, what_error="NodePath name", padding_note=(
                " (engines before 4.6.3 leave it uninitialised: godot#44999)"))
            at = stop

    def byte_array(self, pos: int, end: int, depth: int) -> Iterator[Field]:
        n = self.u32(pos)
        yield from self.field(pos, 4, depth, "count", f"count: {n}")
        at, stop = pos + 4, pos + 4 + n
        shown = 0
        while at < stop:
            if self.max_elements is not None and shown >= self.max_elements:
                yield from self.field(at, stop - at, depth, "more", f"… {stop - at} more bytes")
                at = stop
                break
            chunk = self.buf[at:min(at + HEX_BYTES, stop)]
            first = at - pos - 4
            yield from self.field(at, len(chunk), depth, "value", f"bytes {first}-{first + len(chunk) - 1}")
            at += len(chunk)
            shown += 1
        yield from self.end_padding(stop, n, end, depth)

    def end_padding(self, stop: int, n: int, end: int, depth: int) -> Generator[Field, None, int]:
        """The padding after ``n`` bytes of data that end at ``stop``, in a value that ends at ``end``."""
        if end > stop:
            yield from self.padding(stop, end - stop, depth)
        elif pad4(n):
            yield Field(stop, 0, depth, "padding", f"padding: missing ({pad4(n)} bytes; the engine does not "
                                                   "require it at the end)")
        return max(stop, end)

    def string_array(self, pos: int, depth: int) -> Iterator[Field]:
        raw = self.u32(pos)
        note = " (negative as an int32: read as empty)" if raw > INT32_MAX else ""
        yield from self.field(pos, 4, depth, "count", f"count: {raw if not note else raw - (1 << 32)}{note}")
        at = pos + 4
        for i in range(0 if note else raw):
            _, at = yield from self.string(at, depth, f"[{i}] ", what_error="PackedStringArray element",
                                           nul=self.d.packed_string_nul)

    def packed(self, leaf: _Leaf) -> Iterator[Field]:
        pos, end, value, depth = leaf.body, leaf.end, leaf.value, leaf.depth
        count_size = self.d.int64_array_count_size if leaf.spec.component == I64 else 4
        if value is None:  # refused: the count is what is wrong
            count = self.u32(pos) if count_size == 4 else self.u64(pos)
            yield from self.field(pos, count_size, depth, "count", f"count: {count}")
            return
        n = len(value)
        at = pos + count_size
        size = (end - at) // n if n else 0
        yield from self.field(pos, count_size, depth, "count", f"count: {n}" + (f" ({size} bytes each)" if n else ""))
        if not n:
            return
        limit = n if self.max_elements is None else min(n, self.max_elements)
        for i in range(limit):
            element = value[i]
            if isinstance(element, (int, float)):
                shown = _number(element)
            else:
                shown = f"({', '.join(_number(x) for x in tuple(element))})"
            yield from self.field(at, size, depth, "value", f"[{i}] {shown}")
            at += size
        if limit < n:
            yield from self.field(at, end - at, depth, "more", f"… {n - limit} more elements ({end - at} bytes)")



#: Family -> what its header's flag bits mean.
_HEADER_FLAGS: dict[Family, Callable[[_Walker, TypeSpec, int], tuple[list[str], int]]] = {
    Family.INT: _Walker.wide_flags,
    Family.FLOAT: _Walker.wide_flags,
    Family.MATH: _Walker.real_flags,
    Family.PACKED: _Walker.real_flags,
    Family.OBJECT: _Walker.object_flags,
    Family.ARRAY: _Walker.array_flags,
    Family.DICTIONARY: _Walker.dictionary_flags,
}

#: Family -> the fields of a value of it without children (walk opens Arrays,
#: Dictionaries and full Objects itself).
_LEAF_FIELDS: dict[Family, Callable[[_Walker, _Leaf], Iterator[Field]]] = {
    Family.NIL: _Walker.no_fields,
    Family.BOOL: _Walker.scalar_fields,
    Family.INT: _Walker.scalar_fields,
    Family.FLOAT: _Walker.scalar_fields,
    Family.MATH: _Walker.scalar_fields,
    Family.STRING: _Walker.text_fields,
    Family.NODE_PATH: _Walker.node_path_fields,
    Family.PACKED: _Walker.packed_fields,
    Family.STRINGS: _Walker.strings_fields,
    Family.RECORD: _Walker.record_fields,
    Family.OBJECT: _Walker.object_fields,
    Family.ARRAY: _Walker.no_fields,
    Family.DICTIONARY: _Walker.no_fields,
}

#: Family -> the one line of a scalar's payload.
_SCALAR_TEXT: dict[Family, Callable[[_Walker, _Leaf], str]] = {
    Family.BOOL: _Walker.bool_text,
    Family.INT: _Walker.int_text,
    Family.FLOAT: _Walker.float_text,
    Family.MATH: _Walker.math_text,
}

#: Record layout kind -> its field walker: (walker, leaf, label, offset) -> the offset after it.
_RECORD_KINDS: dict[str, Callable[[_Walker, _Leaf, str, int], Generator[Field, None, int]]] = {
    "u32": _Walker.record_u32,
    "u64": _Walker.record_u64,
    "str": _Walker.record_text,
    "bytes": _Walker.record_bytes,
    "u32s": _Walker.record_words,
}


def explain_fields(
    data: bytes | bytearray | memoryview,
    dialect: str | Dialect = "godot4",
    *,
    offset: int = 0,
    allow_objects: bool = False,
    max_elements: int | None = 16,
    max_depth: int = DEFAULT_MAX_DEPTH,
    end: int | None = None,
) -> Iterator[Field]:
    """The fields of the value at ``offset``, in byte order, then an ``end`` (or ``error``) field.

    ``max_elements`` caps the elements shown per packed array (None: all);
    ``end`` bounds the value's bytes (one record of a larger file) without a copy.
    """
    if offset < 0:
        raise ValueError(f"offset must not be negative, got {offset}")
    buf = data if isinstance(data, bytes) else bytes(data)
    limit = len(buf) if end is None else max(0, min(end, len(buf)))
    d = get_dialect(dialect)
    walker = _Walker(buf, limit, d, allow_objects, max_elements, max_depth)
    try:
        walker.end = walker.decoder.decode(buf, offset, limit)[1]
    except DecodeError as e:
        walker.error = e
    try:
        stop = yield from walker.walk(offset)
    except _Stop:
        return
    if walker.error is not None:  # the walk got through what the decoder refused: say so anyway
        yield Field(walker.error.offset, 0, 0, "error", f"error: {walker.error}", walker.error)
        return
    trailing = limit - stop
    tail = f"{trailing} trailing byte{'s' if trailing != 1 else ''} (ignored by the engine)" if trailing \
        else "no trailing bytes"
    yield Field(stop, trailing, 0, "end", f"end: the value is {stop - offset} bytes; {tail}")


def indentation(depth: int, indent: str = "  ") -> str:
    """The indentation of a line at ``depth``: ``indent`` per level up to :data:`MAX_INDENT_DEPTH`,
    then ``(depth N)`` at that indentation (``explain`` and the ``dump`` tree share it)."""
    if depth <= MAX_INDENT_DEPTH:
        return indent * depth
    return indent * MAX_INDENT_DEPTH + f"(depth {depth}) "


def format_lines(fields: Iterable[Field], data: bytes | bytearray | memoryview,
                 *, header: bool = True) -> Iterator[str]:
    """The text lines of :func:`explain` for ``fields`` of ``data``, one at a time."""
    buf = data if isinstance(data, bytes) else bytes(data)
    width = max(6, len(str(len(buf))))
    hex_width = HEX_BYTES * 2 + (HEX_BYTES // 4 - 1) + 1
    if header:
        yield f"{'offset':>{width}}  {'bytes':<{hex_width}}  meaning"
    for f in fields:
        raw = buf[f.offset:f.offset + min(f.size, HEX_BYTES)] if f.kind not in ("end", "error") else b""
        if f.kind == "error":
            raw = buf[f.offset:f.offset + HEX_BYTES]
        groups = " ".join(raw[i:i + 4].hex() for i in range(0, len(raw), 4))
        if (f.size > HEX_BYTES and f.kind != "end") or (f.kind == "error" and len(buf) - f.offset > HEX_BYTES):
            groups += "…"
        yield f"{f.offset:>{width}}  {groups:<{hex_width}}  {indentation(f.depth)}{f.text}".rstrip()


def format_fields(fields: Iterable[Field], data: bytes | bytearray | memoryview,
                  *, header: bool = True) -> str:
    """The text lines of :func:`explain` for ``fields`` of ``data``."""
    return "\n".join(format_lines(fields, data, header=header))


def explain(
    data: bytes | bytearray | memoryview,
    dialect: str | Dialect = "godot4",
    *,
    offset: int = 0,
    allow_objects: bool = False,
    max_elements: int | None = 16,
) -> str:
    """A listing of every field of the value at ``offset``: offset, bytes, meaning.

    Malformed bytes are listed as far as they can be read, then a line names
    the offset and the problem; this never raises on bad input.
    """
    fields = explain_fields(data, dialect, offset=offset, allow_objects=allow_objects, max_elements=max_elements)
    return format_fields(fields, data)
