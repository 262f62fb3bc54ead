"""Binary resource files: ``.res`` (magic ``RSRC``) and compressed ``.res`` (``RSCC``), read and
written without loading anything they reference or running any script they hold.

The layout (``ResourceLoaderBinary::open``/``load``, ``ResourceFormatSaverBinaryInstance::save``,
3.x and 4.x; research in docs/resources.md)::

    "RSRC"  u32 big_endian  u32 use_real64  u32 major  u32 minor  u32 format  string type
    u64 import metadata offset
    format >= 4: u32 flags, u64 uid, [string script_class if flags & 8], 11 reserved u32
    format <= 3: 14 reserved u32
    u32 n, n strings                    the string table (property names, NodePath parts)
    u32 n, n x (string type, string path[, u64 uid if flags & 2])     external resources
    u32 n, n x (string path, u64 offset)                              internal resources
    each internal resource at its offset: string type, u32 n, n x (u32 name index, Variant)
    "RSRC"

Every number after the first 8 bytes follows ``big_endian``.  Strings are a u32 length that
counts a closing NUL, then UTF-8 and the NUL, unpadded.  The last internal resource is the main
one.  An RSCC file is the GCPF container (:mod:`godot_formats.layers.compression`) around the
same bytes without the magic, whose offsets then count in the decompressed stream.

Reading is one pass with explicit stacks (no recursion on the file's data), every count and
length checked against the bytes left, and every reference checked against its table: a bad
file is a :class:`DecodeError` naming the byte offset.  What a file may make us allocate follows
its own bytes, compressed or not: an RSCC file inflates to :data:`RSCC_MAX_RATIO` times its size
at most, and the objects the reading makes (values, strings, resources) are counted against
:data:`OBJECTS_PER_BYTE` per byte of the file (:class:`SizeLimitError` past it).  The reading is a
generator that pauses every :data:`STEP` objects, so :mod:`.explain` lists a file as it is read.
"""

from __future__ import annotations

import re
import struct
import sys
from array import array
from typing import Any, Callable, Generator, Iterator, TypeVar

from ..core import types as t
from ..core.errors import DecodeError, EncodeError, SizeLimitError
from ..core.keys import GODOT3_KEYS, GODOT4_KEYS, python_keys_agree
from ..core.limits import (
    MAX_FILE_SIZE,
    MAX_RESOURCE_DEPTH,
    OBJECT_FLOOR,
    OBJECTS_PER_BYTE,
    RATIO_FLOOR,
    RSCC_MAX_RATIO,
)
from ..core.registry import BY_NAME, Family, TypeSpec, spec_for
from ..core.switches import F32, F64, I32, I64, REAL, U8
from ..layers.compression import RSCC_MAGIC, GcpfInfo, read_gcpf, write_gcpf
from ..layers.magic import RESOURCE_MAGICS, RSRC_MAGIC
from .ids import (
    BY_ID,
    FLAG_HAS_SCRIPT_CLASS,
    FLAG_NAMED_SCENE_IDS,
    FLAG_REAL_T_IS_DOUBLE,
    FLAG_UIDS,
    FORMAT_VERSIONS,
    OBJECT_EMPTY,
    OBJECT_EXTERNAL_RESOURCE,
    OBJECT_EXTERNAL_RESOURCE_INDEX,
    OBJECT_INTERNAL_RESOURCE,
    RSRC_IDS,
    Payload,
    RsrcId,
)
from .model import WRITERS, ExtResource, Resource, ResourceFile, values_in

__all__ = ["RSRC_MAGIC", "read_binary", "write_binary", "is_binary_resource", "RSCC_MAX_RATIO", "OBJECTS_PER_BYTE",
           "OBJECT_FLOOR", "object_budget"]

#: ``ResourceUID::INVALID_ID`` (-1) as the u64 the files hold: "no uid".
_NO_UID = 0xFFFFFFFFFFFFFFFF
_DECIMAL = re.compile(r"[0-9]{1,9}")
#: Deeper nesting of Arrays and Dictionaries than this is refused (the engine recurses):
#: :data:`godot_formats.core.limits.MAX_RESOURCE_DEPTH`.
MAX_DEPTH = MAX_RESOURCE_DEPTH
_NUMBER = {I32: "i", I64: "q", F32: "f", F64: "d", U8: "B"}

#: Objects read between two pauses of the reading, where :mod:`.explain` hands out its lines.
STEP = 4096
_SWAP = {"<": sys.byteorder == "big", ">": sys.byteorder == "little"}  # by the file's byte order
_T = TypeVar("_T")
#: A reading that pauses (yields) every :data:`STEP` objects and returns what it read.
Steps = Generator[None, None, _T]


def object_budget(size: int, max_objects: int | None = None) -> int:
    """The objects reading a ``size``-byte file may make: ``max_objects`` (0: no bound), or
    :data:`OBJECTS_PER_BYTE` per byte, :data:`OBJECT_FLOOR` at least."""
    if max_objects is not None:
        return max_objects or sys.maxsize
    return max(OBJECT_FLOOR, OBJECTS_PER_BYTE * size)


def is_binary_resource(data: bytes) -> bool:
    """Whether ``data`` starts as a binary resource file does (``RSRC`` or ``RSCC``)."""
    return data[:4] in RESOURCE_MAGICS


class _Reader:
    """A cursor over the file's bytes in its byte order; every read is bounds-checked."""

    def __init__(self, data: bytes, pos: int, big_endian: bool, base: int) -> None:
        self.data, self.pos, self.base = data, pos, base
        self.order = ">" if big_endian else "<"
        self.u32 = struct.Struct(self.order + "I")
        self.u64 = struct.Struct(self.order + "Q")
        self.real_is_double = False
        self.depth = 0  # how deep in the file's structure the next read is (for :mod:`.explain`)
        #: Objects made so far, how many may be (:func:`object_budget`), and when to pause next.
        self.made, self.budget, self.next_step = 0, sys.maxsize, STEP
        self.size = len(data)  # the size of the file as given, which the budget follows

    def charge(self, n: int, what: str, at: int | None = None) -> None:
        """Count ``n`` objects about to be made; past the budget, refuse the file before making them."""
        self.made += n
        if self.made > self.budget:
            raise SizeLimitError(self.base + (self.pos if at is None else at),
                                 f"{what}: the reading would make more than {self.budget} objects (values, strings, "
                                 f"resources), the budget of a file of {self.size} bytes ({OBJECTS_PER_BYTE} a byte, "
                                 f"{OBJECT_FLOOR} at least): a file built to expand, or one far larger than any save "
                                 "(max_objects= lifts it)")

    def due(self) -> bool:
        """Whether :data:`STEP` objects were made since the last pause (then the reading pauses)."""
        if self.made < self.next_step:
            return False
        self.next_step = self.made + STEP
        return True

    def start_resource(self, offset: int) -> None:
        """The reading moves to the resource at ``offset`` (a listing follows it: :mod:`.explain`)."""

    def fail(self, reason: str, at: int | None = None) -> DecodeError:
        return DecodeError(self.base + (self.pos if at is None else at), reason)

    def need(self, n: int, what: str) -> int:
        if n > len(self.data) - self.pos:
            raise self.fail(f"{what}: {n} byte(s) needed, {len(self.data) - self.pos} left")
        at = self.pos
        self.pos += n
        return at

    def read_u32(self, what: str) -> int:
        return int(self.u32.unpack_from(self.data, self.need(4, what))[0])

    def read_u64(self, what: str) -> int:
        return int(self.u64.unpack_from(self.data, self.need(8, what))[0])

    def read_numbers(self, kind: str, count: int, what: str) -> tuple[Any, ...]:
        code = _NUMBER[kind if kind != REAL else (F64 if self.real_is_double else F32)]
        size = struct.calcsize(code)
        at = self.need(size * count, what)
        return struct.unpack_from(f"{self.order}{count}{code}", self.data, at)

    def read_array(self, kind: str, count: int, what: str) -> array[Any]:
        """``count`` numbers as one ``array.array`` (no object per number), in this machine's order."""
        out = array(_NUMBER[kind if kind != REAL else (F64 if self.real_is_double else F32)])
        at = self.need(out.itemsize * count, what)
        out.frombytes(self.data[at:self.pos])
        if _SWAP[self.order]:
            out.byteswap()
        return out

    def read_string(self, what: str) -> str:
        n = self.read_u32(what + " length")
        return self.text(self.data[self.need(n, what):self.pos], what)

    def text(self, raw: bytes, what: str) -> str:
        nul = raw.find(b"\0")  # the engine's parse_utf8 stops at the first NUL
        try:
            return (raw if nul < 0 else raw[:nul]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{what} is not UTF-8 ({e.reason})") from None

    def count(self, what: str, each: int) -> int:
        """A u32 count of items of at least ``each`` bytes, checked against the bytes left."""
        n = self.read_u32(what)
        if n * each > len(self.data) - self.pos:
            raise self.fail(f"{what} {n} needs at least {n * each} bytes, {len(self.data) - self.pos} left",
                            self.pos - 4)
        return n


# --- reading ----------------------------------------------------------------------------------


def read_binary(data: bytes | bytearray | memoryview, *, max_size: int = MAX_FILE_SIZE,
                max_ratio: int = RSCC_MAX_RATIO, max_objects: int | None = None) -> ResourceFile:
    """The resource file in ``data`` (``RSRC`` or ``RSCC``), parsed; nothing is loaded or run.

    A compressed file inflates to at most ``max_ratio`` times its size (:data:`RSCC_MAX_RATIO`;
    1 MiB at least, ``max_size`` at most; 0 lifts it), and the reading makes at most
    ``max_objects`` objects (:func:`object_budget` of the file's size; 0 lifts it): past either,
    :class:`SizeLimitError` (docs/security.md)."""
    data = bytes(data)
    budget = object_budget(len(data), max_objects)
    if data[:4] == RSCC_MAGIC:
        plain, info = inflate(data, max_size, max_ratio)
        try:
            rf = _read_rsrc(plain, 0, base=0, budget=budget, size=len(data))
        except DecodeError as e:
            e.where = stream_where(data, e.offset)
            raise
        rf.compression = info.mode_name
        rf.layout["gcpf"] = info
        rf.layout["source"] = data
        rf.layout["plain"] = plain
        return rf
    if data[:4] != RSRC_MAGIC:
        raise DecodeError(0, f"not a binary resource file: it starts with {data[:4]!r}, not RSRC or RSCC")
    rf = _read_rsrc(data, 4, base=0, budget=budget, size=len(data))
    rf.layout["source"] = data
    return rf


def inflate(data: bytes, max_size: int = MAX_FILE_SIZE, max_ratio: int = RSCC_MAX_RATIO) -> tuple[bytes, GcpfInfo]:
    """The decompressed stream of the RSCC file ``data``: ``max_ratio`` times its size at most
    (:data:`RSCC_MAX_RATIO`, :data:`~godot_formats.core.limits.RATIO_FLOOR` at least, 0: no
    bound), ``max_size`` at most."""
    bound = max_size if not max_ratio else min(max_size, max(RATIO_FLOOR, max_ratio * len(data)))
    try:
        return read_gcpf(data, max_size=bound)
    except SizeLimitError as e:
        if bound == max_size:
            raise
        raise SizeLimitError(e.offset, f"{e.reason}: more than {max_ratio} times the file's {len(data)} bytes, the "
                                       "most a compressed resource inflates to (real ones: 1.5-2.5 times): a file "
                                       "built to expand, or one unusually compressible (max_ratio= lifts it)") from None


def stream_where(data: bytes, offset: int) -> str:
    """Where byte ``offset`` of the decompressed stream of the RSCC file ``data`` comes from, as an
    error says it after the offset (the offsets of a compressed file's errors count in that stream)."""
    _, _, block_size, total = struct.unpack_from("<4sIII", data)
    count = total // block_size + 1
    k = min(offset // block_size, count - 1)
    start = 16 + 4 * count + sum(struct.unpack_from(f"<{k}I", data, 16))
    return f" of the decompressed stream (block {k} of {count}, at byte {start} of the file)"


def _read_rsrc(data: bytes, pos: int, base: int, reader: type[_Reader] | None = None, *,
               budget: int = sys.maxsize, size: int | None = None) -> ResourceFile:
    """The file after its magic (``pos`` is where ``big_endian`` starts); ``reader``: a
    :class:`_Reader` subclass that also records what it reads (:mod:`.explain`); ``budget``: the
    objects it may make, for a file of ``size`` bytes (``len(data)``)."""
    steps = reading(data, pos, base, reader, budget=budget, size=size)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def reading(data: bytes, pos: int, base: int, reader: type[_Reader] | None = None, *,
            budget: int = sys.maxsize, size: int | None = None) -> Steps[ResourceFile]:
    """:func:`_read_rsrc` as a generator that pauses every :data:`STEP` objects, and returns the file."""
    if len(data) - pos < 8:
        raise DecodeError(base + pos, "truncated resource header")
    big_endian = struct.unpack_from("<I", data, pos)[0]
    r = (reader or _Reader)(data, pos + 4, big_endian != 0, base)
    r.budget, r.size = budget, len(data) if size is None else size
    header = _read_header(r, big_endian)
    layout: dict[str, Any] = {"magic_at": pos, "big_endian_word": big_endian}
    strings = yield from _read_strings(r)
    flags = header["flags"]
    external = yield from _read_external(r, flags)
    entries = yield from _read_entries(r)
    layout.update(strings=strings, offsets=[o for _, o in entries], tables_end=r.pos)
    resources = [_resource_at(r, path, offset) for path, offset in entries]
    parser = _Parser(r, header["format"], flags, strings, external, resources)
    end = 0
    # Each resource is read once, up to where the next one (by offset) starts: resources that
    # overlap would make the reading quadratic in the file's size, and no saver writes them.
    bounds = sorted({offset for _, offset in entries}) + [len(data)]
    if len(bounds) - 1 != len(entries):
        raise r.fail("two internal resources are at the same offset (no saver writes that)")
    next_start = dict(zip(bounds, bounds[1:]))
    for res, (_, offset) in zip(resources, entries):
        stop = yield from parser.properties(res, offset)
        limit = next_start[offset]
        if stop > limit:
            raise DecodeError(base + limit, f"internal resource {res.id!r} runs into the next one")
        end = max(end, stop)
    layout["empty_objects"] = parser.empty_objects
    layout["null_objects"] = [parser.null_objects.get(id(res), []) for res in resources]
    if data[end:end + 4] != RSRC_MAGIC:
        raise DecodeError(base + end, "the closing RSRC magic is missing (a truncated file?)")
    layout["tail"] = data[end + 4:]
    rf = ResourceFile(resources[-1], resources[:-1], external, engine=FORMAT_VERSIONS[header["format"]][0]
                      if header["format"] in FORMAT_VERSIONS else 4, format="binary",
                      version=header["format"], byteorder="big" if big_endian else "little", header=header,
                      layout=layout)
    if rf.byteorder == "big" and parser.packed_seen:
        rf.notes.append("big-endian file: Godot 3 and 4 read the elements of its packed arrays byte-swapped on "
                        "little-endian machines (they swap the numbers when writing, not when reading); the values "
                        "here are the ones written")
    return rf


def _read_strings(r: _Reader) -> Steps[list[str]]:
    """The string table: property names and NodePath parts."""
    n = r.count("string table size", 4)
    r.charge(n, "string table")
    strings = []
    for i in range(n):
        strings.append(r.read_string("string table entry"))
        if i % STEP == STEP - 1:
            yield
    return strings


def _read_external(r: _Reader, flags: int) -> Steps[list[ExtResource]]:
    """The external resources: each a reference (type, path, uid), never loaded."""
    n = r.count("external resource count", 8)
    r.charge(4 * n, "external resources")  # the reference, its two strings and its uid
    external = []
    for i in range(n):
        type_, path = r.read_string("external resource type"), r.read_string("external resource path")
        uid = r.read_u64("external resource uid") if flags & FLAG_UIDS else None
        external.append(ExtResource(type_, path, None if uid == _NO_UID else uid, i))
        if i % STEP == STEP - 1:
            yield
    return external


def _read_entries(r: _Reader) -> Steps[list[tuple[str, int]]]:
    """The internal resources' table: each one's path and offset."""
    n = r.count("internal resource count", 12)
    # its path, offset and their pair, the Resource, its properties, its type, and two index entries
    r.charge(8 * n, "internal resources")
    entries = []
    for i in range(n):
        path = r.read_string("internal resource path")
        entries.append((path, r.read_u64("internal resource offset")))
        if i % STEP == STEP - 1:
            yield
    if not entries:
        raise r.fail("the file has no main resource (no internal resources)")
    return entries


def _read_header(r: _Reader, big_endian: int) -> dict[str, Any]:
    use_real64 = r.read_u32("use_real64")
    major, minor, fmt = r.read_u32("major version"), r.read_u32("minor version"), r.read_u32("format version")
    if not 1 <= fmt <= 6:
        raise r.fail(f"binary resource format version {fmt} is not one this library reads (1 to 6)", r.pos - 4)
    header: dict[str, Any] = {"use_real64": use_real64, "godot_version": (major, minor), "format": fmt}
    header["type"] = r.read_string("main resource type")
    header["importmd_ofs"] = r.read_u64("import metadata offset")
    if fmt >= 4:
        header["flags"] = r.read_u32("flags")
        uid = r.read_u64("uid")
        header["uid"] = None if uid == 0xFFFFFFFFFFFFFFFF else uid
        header["uid_raw"] = uid
        header["script_class"] = r.read_string("script class") if header["flags"] & FLAG_HAS_SCRIPT_CLASS else None
        header["reserved"] = r.read_numbers(I32, 11, "reserved fields")
    else:
        header.update(flags=0, uid=None, script_class=None, reserved=r.read_numbers(I32, 14, "reserved fields"))
    r.real_is_double = bool(use_real64) or bool(header["flags"] & FLAG_REAL_T_IS_DOUBLE)
    return header


def _resource_at(r: _Reader, path: str, offset: int) -> Resource:
    if not r.pos <= offset < len(r.data):
        raise r.fail(f"internal resource {path!r} is at offset {offset}, outside the resources")
    r.pos = offset
    return Resource(r.read_string("resource type"), {}, path)


class _Frame:
    """An Array or Dictionary being filled, on the explicit stack."""

    __slots__ = ("items", "left", "is_dict", "store")

    def __init__(self, left: int, is_dict: bool, store: Callable[[Any], None]) -> None:
        self.items: list[Any] = []
        self.left, self.is_dict, self.store = left, is_dict, store


class _Parser:
    """``parse_variant`` with an explicit stack, and the references resolved to the file's objects."""

    def __init__(self, r: _Reader, fmt: int, flags: int, strings: list[str], external: list[ExtResource],
                 resources: list[Resource]) -> None:
        self.r, self.fmt, self.strings, self.external, self.resources = r, fmt, strings, external, resources
        self.named_ids = bool(flags & FLAG_NAMED_SCENE_IDS)
        self.by_local = {res.id: res for res in resources}
        self.rules = GODOT4_KEYS if fmt >= 4 else GODOT3_KEYS
        self.packed_seen = False
        #: The numbers (in file order) of the values written as an empty Object reference rather
        #: than as Nil: both read as None, and the writer gives each back its own bytes.
        self.empty_objects: set[int] = set()
        #: The properties (by resource) that hold an empty Object reference: a typed Object
        #: property left null, which the engine's text saver leaves out of a ``.tres``.
        self.null_objects: dict[int, list[str]] = {}
        self.values_read = 0

    def properties(self, res: Resource, offset: int) -> Steps[int]:
        """Read the properties of ``res`` at ``offset``; return where they end."""
        r = self.r
        r.pos = offset
        r.start_resource(offset)
        r.depth = 0
        r.read_string(f"resource {res.id}: type")
        r.depth = 1
        for _ in range(r.count("property count", 8)):
            at = r.pos
            r.depth = 1
            index = r.read_u32("property name index")
            if index >= len(self.strings):
                raise r.fail(f"property name index {index} is past the string table ({len(self.strings)})", at)
            name = self.strings[index]
            before = len(self.empty_objects)
            value = res.properties[name] = yield from self.variant(f"{res.id}:{name}")
            if value is None and len(self.empty_objects) != before:
                self.null_objects.setdefault(id(res), []).append(name)
        return r.pos

    def variant(self, where: str) -> Steps[Any]:
        """One Variant, its containers filled without recursion (pausing every :data:`STEP` objects)."""
        result: list[Any] = []
        stack: list[_Frame] = []
        r = self.r
        r.depth = 2
        value = self._value(stack, result.append, where)
        if value is not _OPEN:
            return value
        while stack:
            if r.made >= r.next_step and r.due():
                yield
            top = stack[-1]
            if top.left == 0:
                stack.pop()
                top.store(self._close(top))
                continue
            top.left -= 1
            self.r.depth = 2 + len(stack)
            item = self._value(stack, top.items.append, where)
            if item is not _OPEN:
                top.items.append(item)
        return result[0]

    def _close(self, frame: _Frame) -> Any:
        if not frame.is_dict:
            return frame.items
        pairs = frame.items
        it = iter(pairs)
        try:
            plain = dict(zip(it, it))
        except TypeError:
            plain = None
        if plain is not None and 2 * len(plain) == len(pairs) and python_keys_agree(plain):
            return plain
        it = iter(pairs)
        return t.Dictionary(list(zip(it, it)), key_rules=self.rules)

    def _value(self, stack: list[_Frame], store: Callable[[Any], None], where: str) -> Any:
        r = self.r
        at = r.pos
        self.values_read += 1
        r.made += 1
        if r.made > r.budget:
            r.charge(0, where, at)
        code = r.read_u32("Variant type")
        row = BY_ID.get(code)
        if row is None or self.fmt not in row.formats:
            raise r.fail(f"{where}: unknown Variant type {code} in a format {self.fmt} file", at)
        payload = row.payload
        if payload is Payload.ARRAY or payload is Payload.DICTIONARY:
            is_dict = payload is Payload.DICTIONARY
            n = r.read_u32("container size") & 0x7FFFFFFF
            if n * (8 if is_dict else 4) > len(r.data) - r.pos:
                raise r.fail(f"{where}: {row.type} of {n} elements runs past the end of the file", at)
            if len(stack) >= MAX_DEPTH:  # the same bound as the writer's
                raise r.fail(f"{where}: containers nested deeper than {MAX_DEPTH} levels", at)
            stack.append(_Frame(2 * n if is_dict else n, is_dict, store))
            return _OPEN
        return _LEAVES[payload](self, row, where, at)

    # -- leaves ----------------------------------------------------------------------------

    def _none(self, row: RsrcId, where: str, at: int) -> Any:
        return BY_NAME[row.type].cls() if row.type != "Nil" else None

    def _number(self, row: RsrcId, where: str, at: int) -> Any:
        kind = {Payload.BOOL: I32, Payload.INT32: I32, Payload.INT64: I64, Payload.REAL: REAL, Payload.DOUBLE: F64,
                Payload.RID: I32}[row.payload]
        (x,) = self.r.read_numbers(kind, 1, row.type)
        if row.payload is Payload.BOOL:
            return x != 0
        if row.payload is Payload.RID:
            return t.RID(x & 0xFFFFFFFF)
        return x

    def _string(self, row: RsrcId, where: str, at: int) -> Any:
        text = self.r.read_string(row.type)
        return t.StringName(text) if row.type == "StringName" else text

    def _math(self, row: RsrcId, where: str, at: int) -> Any:
        spec = BY_NAME[row.type]
        assert spec.build is not None
        return spec.build(self.r.read_numbers(spec.component or REAL, spec.count, row.type))

    def _node_path(self, row: RsrcId, where: str, at: int) -> Any:
        r = self.r
        counts = r.read_numbers(I32, 1, "NodePath counts")[0] & 0xFFFFFFFF
        if r.order == ">":
            names, subnames = counts >> 16, counts & 0xFFFF
        else:
            names, subnames = counts & 0xFFFF, counts >> 16
        absolute = bool(subnames & 0x8000)
        subnames &= 0x7FFF
        if self.fmt < 3:
            subnames += 1  # the Godot 2 property part
        r.charge(names + subnames, where)
        parts = [self._name(where) for _ in range(names + subnames)]
        return t.NodePath(names=parts[:names], subnames=parts[names:], absolute=absolute)

    def _name(self, where: str) -> str:
        r = self.r
        at = r.pos
        word = r.read_u32("NodePath name")
        if word & 0x80000000:
            n = word & 0x7FFFFFFF
            return r.text(r.data[r.need(n, "NodePath name"):r.pos], "NodePath name")
        if word >= len(self.strings):
            raise r.fail(f"{where}: NodePath name index {word} is past the string table ({len(self.strings)})", at)
        return self.strings[word]

    def _object(self, row: RsrcId, where: str, at: int) -> Any:
        r = self.r
        kind = r.read_u32("Object kind")
        if kind == OBJECT_EMPTY:
            self.empty_objects.add(self.values_read)
            return None
        if kind == OBJECT_EXTERNAL_RESOURCE:  # the old form: type and path inline
            return ExtResource(r.read_string("external type"), r.read_string("external path"), None, None)
        index = r.read_u32("resource index")
        if kind == OBJECT_EXTERNAL_RESOURCE_INDEX:
            if index >= len(self.external):
                raise r.fail(f"{where}: external resource {index} is past the table ({len(self.external)})", at)
            return self.external[index]
        if kind == OBJECT_INTERNAL_RESOURCE:
            if self.named_ids:
                if index >= len(self.resources):
                    raise r.fail(f"{where}: internal resource {index} is past the table ({len(self.resources)})", at)
                return self.resources[index]
            found = self.by_local.get(f"local://{index}")
            if found is None:
                raise r.fail(f"{where}: no internal resource local://{index}", at)
            return found
        raise r.fail(f"{where}: unknown Object kind {kind}", at)

    def _image(self, row: RsrcId, where: str, at: int) -> Any:
        """Godot 2's Image Variant: empty (the loader gives null), or raw pixels as the value
        model's :class:`~godot_formats.core.types.Image` (the format number as written)."""
        r = self.r
        encoding = r.read_u32("Image encoding")
        if encoding == 0:
            return None
        if encoding != 1:
            raise r.fail(f"{where}: a Godot 2 Image stored as {'PNG' if encoding == 2 else 'WebP'} (encoding "
                         f"{encoding}) is not read: its pixels would need an image decoder", at)
        width, height, mipmaps, fmt = (r.read_u32(f"Image {name}") for name in ("width", "height", "mipmaps",
                                                                                "format"))
        n = r.read_u32("Image data length")
        start = r.need(n, "Image data")
        r.need(-n & 3, "Image data padding")
        return t.Image(format=fmt, mipmaps=mipmaps, width=width, height=height, data=r.data[start:start + n])

    def _input_event(self, row: RsrcId, where: str, at: int) -> Any:
        """Godot 2's InputEvent Variant: the savers wrote its type only (always 0, none)."""
        return t.InputEvent(type=self.r.read_u32("InputEvent type"))

    def _bytes(self, row: RsrcId, where: str, at: int) -> Any:
        r = self.r
        n = r.read_u32("PackedByteArray length")
        start = r.need(n, "PackedByteArray")
        r.need(-n & 3, "PackedByteArray padding")
        return r.data[start:start + n]

    def _packed(self, row: RsrcId, where: str, at: int) -> Any:
        spec = BY_NAME[row.type]
        r = self.r
        n = r.count(f"{row.type} size", spec.width * 4)
        self.packed_seen = True
        value = spec.cls()
        value.data = r.read_array(spec.component or REAL, n * spec.width, row.type)  # 'd' for a real_t double
        return value

    def _strings(self, row: RsrcId, where: str, at: int) -> Any:
        r = self.r
        n = r.count("PackedStringArray size", 4)
        r.charge(n, where)
        return t.PackedStringArray([r.read_string("PackedStringArray element") for _ in range(n)])


_OPEN = object()
_LEAVES: dict[Payload, Callable[[_Parser, RsrcId, str, int], Any]] = {
    Payload.NONE: _Parser._none, Payload.BOOL: _Parser._number, Payload.INT32: _Parser._number,
    Payload.INT64: _Parser._number, Payload.REAL: _Parser._number, Payload.DOUBLE: _Parser._number,
    Payload.RID: _Parser._number, Payload.STRING: _Parser._string, Payload.MATH: _Parser._math,
    Payload.NODE_PATH: _Parser._node_path, Payload.OBJECT: _Parser._object, Payload.BYTES: _Parser._bytes,
    Payload.IMAGE: _Parser._image, Payload.INPUT_EVENT: _Parser._input_event,
    Payload.PACKED: _Parser._packed, Payload.STRINGS: _Parser._strings,
}


# --- writing ----------------------------------------------------------------------------------

#: The id each type is written with (the first row of that type: INT before INT64 ...).
_ID_OF: dict[str, RsrcId] = {}
for _row in RSRC_IDS:
    _ID_OF.setdefault(_row.type, _row)


class _Writer:
    """``write_variant`` with an explicit stack, in the file's byte order."""

    def __init__(self, rf: ResourceFile, fmt: int, big_endian: bool, real_is_double: bool,
                 strings: dict[str, int], internal: dict[int, int], external: dict[int, int],
                 empty_objects: set[int]) -> None:
        self.rf, self.fmt, self.strings = rf, fmt, strings
        self.order = ">" if big_endian else "<"
        self.real = F64 if real_is_double else F32
        self.internal, self.external, self.empty_objects = internal, external, empty_objects
        self.values_written = 0

    def u32(self, out: bytearray, x: int) -> None:
        out += struct.pack(self.order + "I", x & 0xFFFFFFFF)

    def numbers(self, out: bytearray, kind: str, values: Any) -> None:
        code = _NUMBER[self.real if kind == REAL else kind]
        out += struct.pack(f"{self.order}{len(values)}{code}", *values)

    def string(self, out: bytearray, text: str) -> None:
        raw = text.encode("utf-8", "surrogatepass")
        self.u32(out, len(raw) + 1)
        out += raw + b"\0"

    def variant(self, out: bytearray, value: Any, where: str) -> None:
        stack: list[Iterator[Any]] = [iter((value,))]
        while stack:
            item = next(stack[-1], _DONE)
            if item is _DONE:
                stack.pop()
                continue
            children = self.one(out, item, where)
            if children is not None:
                if len(stack) > MAX_DEPTH:  # the root and MAX_DEPTH containers are open: one too many
                    raise EncodeError(f"{where}: containers nested deeper than {MAX_DEPTH} levels "
                                      "(one contains itself?)")
                stack.append(children)

    def one(self, out: bytearray, value: Any, where: str) -> Iterator[Any] | None:
        self.values_written += 1
        if value is None:
            if self.values_written in self.empty_objects:
                self.u32(out, _ID_OF["Object"].id)
                self.u32(out, OBJECT_EMPTY)
            else:
                self.u32(out, _ID_OF["Nil"].id)
            return None
        if isinstance(value, (Resource, ExtResource)):
            self.reference(out, value, where)
            return None
        spec = spec_for(value)
        if spec is None:
            raise EncodeError(f"{where}: a {type(value).__name__} has no Godot type")
        write = _BY_FAMILY.get(spec.family)
        if write is None:
            raise EncodeError(f"{where}: {spec.name} cannot be stored in a binary resource file")
        return write(self, out, value, spec, where)

    def reference(self, out: bytearray, value: Resource | ExtResource, where: str) -> None:
        self.u32(out, _ID_OF["Object"].id)
        if isinstance(value, Resource):
            index = self.internal.get(id(value))
            if index is None:
                raise EncodeError(f"{where}: a Resource that is not one of the file's resources")
            self.u32(out, OBJECT_INTERNAL_RESOURCE)
            self.u32(out, index)
            return
        index = self.external.get(id(value))
        if index is None:  # the old inline form
            self.u32(out, OBJECT_EXTERNAL_RESOURCE)
            self.string(out, value.type)
            self.string(out, value.path)
            return
        self.u32(out, OBJECT_EXTERNAL_RESOURCE_INDEX)
        self.u32(out, index)

    def _id(self, out: bytearray, name: str, where: str) -> RsrcId:
        row = _ID_OF.get(name)
        if row is None or self.fmt not in row.formats:
            raise EncodeError(f"{where}: format {self.fmt} binary resources have no {name}")
        self.u32(out, row.id)
        return row

    def _bool(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        self._id(out, "bool", where)
        self.u32(out, 1 if value else 0)

    def _int(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        value = int(value)
        if -0x80000000 <= value <= 0x7FFFFFFF:
            self._id(out, "int", where)
            self.numbers(out, I32, (value,))
        elif -(1 << 63) <= value < 1 << 63:
            self.u32(out, 40)
            self.numbers(out, I64, (value,))
        else:
            raise EncodeError(f"{where}: int {value} does not fit in 64 bits")

    def _float(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        value = float(value)
        if t.float32(value) == value or value != value:  # the engine: double(float(d)) != d -> DOUBLE
            self._id(out, "float", where)
            self.numbers(out, REAL, (value,))
        else:
            self.u32(out, 41)
            self.numbers(out, F64, (value,))

    def _string(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        self._id(out, spec.name, where)
        self.string(out, str(value))

    def _math(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        self._id(out, spec.name, where)
        self.numbers(out, spec.component or REAL, spec.parts(value))

    def _node_path(self, out: bytearray, value: t.NodePath, spec: TypeSpec, where: str) -> None:
        self._id(out, "NodePath", where)
        names, subnames = list(value.names), list(value.subnames)
        subcount = len(subnames) - (1 if self.fmt < 3 else 0)
        out += struct.pack(self.order + "HH", len(names), max(subcount, 0) | (0x8000 if value.absolute else 0))
        for part in names + subnames:
            index = self.strings.get(part)
            if index is None:
                raw = part.encode("utf-8")
                self.u32(out, (len(raw) + 1) | 0x80000000)
                out += raw + b"\0"
            else:
                self.u32(out, index)

    def _record(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        if spec.name == "RID":
            self._id(out, "RID", where)
            self.u32(out, value.id)
        elif spec.name in ("Callable", "Signal"):
            self._id(out, spec.name, where)
        else:
            raise EncodeError(f"{where}: {spec.name} cannot be stored in a binary resource file")

    def _object(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        raise EncodeError(f"{where}: only Resources can be stored as Objects in a resource file, not {value!r}")

    def _array(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> Iterator[Any]:
        self._id(out, "Array", where)
        self.u32(out, len(value))
        return iter(list(value))

    def _dictionary(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> Iterator[Any]:
        self._id(out, "Dictionary", where)
        self.u32(out, len(value))
        return (x for pair in list(value.items()) for x in pair)

    def _packed(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        self._id(out, spec.name, where)
        if spec.component == U8:
            raw = bytes(value)
            self.u32(out, len(raw))
            out += raw + b"\0" * (-len(raw) & 3)
            return
        data = value.data
        self.u32(out, len(data) // spec.width)
        self.numbers(out, spec.component or REAL, list(data))

    def _strings(self, out: bytearray, value: Any, spec: TypeSpec, where: str) -> None:
        self._id(out, "PackedStringArray", where)
        self.u32(out, len(value))
        for text in value:
            self.string(out, text)


_DONE = object()
_BY_FAMILY: dict[Family, Callable[..., Iterator[Any] | None]] = {
    Family.BOOL: _Writer._bool, Family.INT: _Writer._int, Family.FLOAT: _Writer._float,
    Family.STRING: _Writer._string, Family.MATH: _Writer._math, Family.NODE_PATH: _Writer._node_path,
    Family.RECORD: _Writer._record, Family.OBJECT: _Writer._object, Family.ARRAY: _Writer._array,
    Family.DICTIONARY: _Writer._dictionary, Family.PACKED: _Writer._packed, Family.STRINGS: _Writer._strings,
}


def _string_table(rf: ResourceFile, resources: list[Resource]) -> list[str]:
    """The file's string table, then every property name and NodePath part it lacks, in the order
    the engine's ``_find_resources`` meets them."""
    table = list(rf.layout.get("strings", ()))
    seen = set(table)

    def add(name: str) -> None:
        if name not in seen:
            seen.add(name)
            table.append(name)

    for res in resources:
        for name, value in res.properties.items():
            add(name)
            for v in values_in(value):
                if isinstance(v, t.NodePath):
                    for part in (*v.names, *v.subnames):
                        add(part)
    return table


def write_binary(rf: ResourceFile, *, version: int | None = None, byteorder: str | None = None,
                 compression: str | bool | None = None, big_endian: bool | None = None,
                 compressed: bool | None = None) -> bytes:
    """The ``.res`` bytes of ``rf``: the engine's own for a file read unchanged, byte for byte
    (string table order, resource ids, the reserved words, RSCC blocks); ``version`` (3 to 6)
    writes another format version (the values must be ones that version has); ``byteorder``
    (``"little"``, ``"big"``) and ``compression`` (a truthy value: RSCC, as the engine's saver
    compresses) another layout (``big_endian=``, ``compressed=``: the same, by their older names)."""
    if byteorder is not None:
        if byteorder not in ("little", "big"):
            raise EncodeError(f"byteorder is 'little' or 'big', not {byteorder!r}")
        big_endian = byteorder == "big"
    if compression is not None:
        compressed = bool(compression)
    fmt = rf.version if version is None and rf.format == "binary" else (version or (3 if rf.engine == 3 else 6))
    if fmt not in (3, 4, 5, 6):
        raise EncodeError(f"binary resources are written in format 3 (Godot 3) or 4 to 6 (Godot 4), not {fmt}")
    same = rf.format == "binary" and fmt == rf.version and "strings" in rf.layout  # read from a file
    big = rf.byteorder == "big" if big_endian is None else big_endian
    rscc = bool(rf.compression if compressed is None else compressed)
    header = {**_fresh_header(rf, fmt), **rf.header} if same else _fresh_header(rf, fmt)
    resources = [*rf.resources, rf.main]
    strings = _string_table(rf if same else ResourceFile(rf.main, layout={}), resources)
    named = fmt >= 4 and bool(header.get("flags", 0) & FLAG_NAMED_SCENE_IDS)
    paths = _local_paths(resources, named)
    internal = {id(res): (i if named else int(paths[i][8:])) for i, res in enumerate(resources)}
    real_double = bool(header.get("use_real64")) or bool(header.get("flags", 0) & FLAG_REAL_T_IS_DOUBLE)
    w = _Writer(rf, fmt, big, real_double, {s: i for i, s in enumerate(strings)}, internal,
                {id(ext): i for i, ext in enumerate(rf.external)}, rf.layout.get("empty_objects", set()) if same
                else set())
    head = _header_bytes(w, rf, fmt, header, big)
    tables, patch = _tables(w, rf, strings, paths, bool(header.get("flags", 0) & FLAG_UIDS))
    body = bytearray()
    # In an RSCC file the offsets count from the decompressed stream, which has no magic.
    start = (0 if rscc else 4) + len(head) + len(tables)
    for at, res in zip(patch, resources):
        tables[at:at + 8] = struct.pack(w.order + "Q", start + len(body))
        w.string(body, res.type)
        w.u32(body, len(res.properties))
        for name, value in res.properties.items():
            w.u32(body, w.strings[name])
            w.variant(body, value, f"{res.id}:{name}")
    tail = rf.layout.get("tail", b"") if same else b""
    plain = bytes(head) + bytes(tables) + bytes(body) + RSRC_MAGIC + tail
    if not rscc:
        return RSRC_MAGIC + plain
    if same and plain == rf.layout.get("plain"):
        return bytes(rf.layout["source"])  # unchanged: the engine's own compressed blocks
    return write_gcpf(plain, rf.layout.get("gcpf") or GcpfInfo(mode=2, magic=RSCC_MAGIC))


def _tables(w: _Writer, rf: ResourceFile, strings: list[str], paths: list[str],
            uids: bool) -> tuple[bytearray, list[int]]:
    """The string table, the external and the internal tables; and where each offset goes."""
    tables = bytearray()
    w.u32(tables, len(strings))
    for s in strings:
        w.string(tables, s)
    w.u32(tables, len(rf.external))
    for ext in rf.external:
        w.string(tables, ext.type)
        w.string(tables, ext.path)
        if uids:
            tables += struct.pack(w.order + "Q", _NO_UID if ext.uid is None else ext.uid)
    w.u32(tables, len(paths))
    patch = []
    for path in paths:
        w.string(tables, path)
        patch.append(len(tables))
        tables += b"\0" * 8
    return tables, patch


def _local_paths(resources: list[Resource], named: bool) -> list[str]:
    """Each resource's path in the internal table: its own id where the file can hold it (without
    named ids, Godot 3's way and that of a Godot 4 file without the flag, a reference is the number
    in ``local://N``, so every id must be such a number, else all are numbered again from 1)."""
    ids = [str(res.id) if res.id is not None else "" for res in resources]
    paths = [i if i.startswith(("local://", "res://")) else f"local://{i}" for i in ids]
    if named:
        return [p if p != "local://" else f"local://{res.type}_{k + 1}" for k, (p, res) in
                enumerate(zip(paths, resources))]
    numbers = [p[8:] for p in paths]
    if all(_DECIMAL.fullmatch(n) for n in numbers) and len(set(map(int, numbers))) == len(numbers):
        return [f"local://{n}" for n in numbers]
    return [f"local://{k + 1}" for k in range(len(resources))]


def _fresh_header(rf: ResourceFile, fmt: int) -> dict[str, Any]:
    major = 3 if fmt == 3 else 4
    minor = {3: 2, 4: 0, 5: 2, 6: 6}[fmt]
    flags = 0 if fmt == 3 else FLAG_NAMED_SCENE_IDS | FLAG_UIDS
    script_class = rf.header.get("script_class")
    if script_class and fmt >= 5:
        flags |= FLAG_HAS_SCRIPT_CLASS
    return {"use_real64": 0, "godot_version": (major, minor), "format": fmt, "importmd_ofs": 0, "flags": flags,
            "uid_raw": 0xFFFFFFFFFFFFFFFF if rf.header.get("uid") is None else rf.header["uid"],
            "script_class": script_class if fmt >= 5 else None,
            "reserved": (0,) * (14 if fmt == 3 else 11)}


def _header_bytes(w: _Writer, rf: ResourceFile, fmt: int, header: dict[str, Any], big: bool) -> bytearray:
    out = bytearray(struct.pack("<I", 1 if big else 0))
    major, minor = header["godot_version"]
    for x in (header.get("use_real64", 0), major, minor, fmt):
        w.u32(out, x)
    w.string(out, rf.main.type)
    out += struct.pack(w.order + "Q", header.get("importmd_ofs", 0))
    if fmt >= 4:
        w.u32(out, header.get("flags", 0))
        out += struct.pack(w.order + "Q", header.get("uid_raw", 0xFFFFFFFFFFFFFFFF))
        if header.get("flags", 0) & FLAG_HAS_SCRIPT_CLASS:
            w.string(out, header.get("script_class") or "")
        w.numbers(out, I32, header.get("reserved", (0,) * 11))
    else:
        w.numbers(out, I32, header.get("reserved", (0,) * 14))
    return out


WRITERS["binary"] = write_binary
