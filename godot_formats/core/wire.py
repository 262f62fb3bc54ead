"""One payload reader and one payload writer per Godot type: the wire half of each registry row.

Every reader has the shape ``read(dec, spec, buf, pos, header, end) -> (value, next_pos)``:
``pos`` is the offset of the value's 4-byte header (already read into ``header``),
``end`` bounds the bytes it may use.  Every writer has the shape
``write(enc, spec, out, value) -> children | None``: it appends the header and the
payload to ``out`` and, for a container, returns the children still to write, which the
encoder's explicit stack takes from there.  ``dec`` and ``enc`` are the
:class:`~godot_formats.codec.Decoder` and :class:`~godot_formats.codec.Encoder` of one
dialect: they hold the dialect's switches and the primitive reads and writes (strings,
counts), so a function here only says what is particular to its type, in the order the
engine's ``decode_variant``/``encode_variant`` has it.

Containers (Array, Dictionary, a full Object) have readers of their *fields* only (see
:func:`open_array` ...): their elements are read by the decoder's stack, never by recursion.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, Protocol

from . import types as t
from .errors import DecodeError, EncodeError, Remedy
from .switches import FLAG_64, I32, I64, REAL, FloatFormat, IntFormat, ObjectFormat, RidFormat

__all__ = [
    "NODE_PATH_NEW_FORMAT", "COUNT_MASK", "INT32_MAX", "pad4", "u32_at", "pack_u32", "u64_field", "int_text",
    "float32_bytes", "Name", "Switches", "Row", "Reader", "Writer",
]


# --- what a payload function sees of its row, its dialect and its reader or writer -----------------
# The codec (codec.py) and the rows (registry.py) stand above this module and hand themselves to
# its functions: these protocols say what the functions use of them, so that this module imports
# neither (not even for the type checker, which would make a circle of it); codec.py and registry.py
# have the type checker prove that Decoder, Encoder and TypeSpec play the roles.  A plan's ``spec``
# is Any: the codec's plans take its own TypeSpec, which a parameter typed Row would refuse.

class Switches(Protocol):
    """What a payload function reads of a :class:`~godot_formats.core.dialects.Dialect`."""

    @property
    def name(self) -> str: ...
    @property
    def int_format(self) -> IntFormat: ...
    @property
    def float_format(self) -> FloatFormat: ...
    @property
    def real_is_double(self) -> bool: ...
    @property
    def rid_format(self) -> RidFormat: ...
    @property
    def object_format(self) -> ObjectFormat: ...
    @property
    def node_path_old_format(self) -> bool: ...
    @property
    def math_flag_64(self) -> bool: ...
    @property
    def int64_array_count_size(self) -> int: ...
    @property
    def typed_arrays(self) -> bool: ...
    @property
    def typed_dictionaries(self) -> bool: ...


class Row(Protocol):
    """What a payload function reads of its type's row (a :class:`~godot_formats.core.registry.TypeSpec`)."""

    @property
    def name(self) -> str: ...
    @property
    def cls(self) -> type: ...
    @property
    def component(self) -> str | None: ...
    @property
    def width(self) -> int: ...


class Reader(Protocol):
    """What a reader uses of the :class:`~godot_formats.core.codec.Decoder` that calls it."""

    @property
    def dialect(self) -> Switches: ...
    def need(self, pos: int, end: int, size: int, what: str) -> None: ...
    def packed_count(self, buf: Any, pos: int, end: int, size: int, what: str) -> tuple[int, int]: ...
    def read_string(self, buf: Any, pos: int, end: int, what: str = ..., padded: bool = ...) -> tuple[str, int]: ...
    def read_packed_strings(self, buf: Any, pos: int, end: int) -> tuple[Any, int]: ...
    def math_plan(self, spec: Any) -> tuple[struct.Struct, struct.Struct | None, Callable[[Any, Any], Any], Any]: ...


class Writer(Protocol):
    """What a writer uses of the :class:`~godot_formats.core.codec.Encoder` that calls it."""

    @property
    def dialect(self) -> Switches: ...
    @property
    def full_objects(self) -> bool: ...
    @property
    def node_path_padding(self) -> bytes: ...
    def header(self, name: str) -> int: ...
    def write_string(self, out: bytearray, value: str, padding: bytes = ...) -> None: ...
    def write_raw_name(self, out: bytearray, value: str) -> None: ...
    def elements(self, out: bytearray, value: Any) -> Iterator[Any] | None: ...
    def container_type(self, ct: t.ContainerType | None) -> tuple[int, bytes]: ...
    def write_string_elements(self, out: bytearray, value: t.PackedStringArray) -> None: ...
    def math_plan(self, spec: Any) -> tuple[bytes, struct.Struct, Callable[[Any], Any]]: ...
    def packed_plan(self, spec: Any) -> tuple[Callable[[int], bytes], str]: ...


NODE_PATH_NEW_FORMAT = 0x80000000
COUNT_MASK = 0x7FFFFFFF  # bit 31 of Array/Dictionary counts was the old "shared" flag
INT32_MAX = 0x7FFFFFFF

_u32 = struct.Struct("<I")
_i32 = struct.Struct("<i")
_u64 = struct.Struct("<Q")
_i64 = struct.Struct("<q")
_f32 = struct.Struct("<f")
_f64 = struct.Struct("<d")
u32_at = _u32.unpack_from
pack_u32 = _u32.pack
_BIG_ENDIAN = sys.byteorder == "big"
PADDING = (b"", b"\0", b"\0\0", b"\0\0\0")
#: array typecode and byte size of each fixed-width component kind.
COMPONENT_FORMATS = {"f32": ("f", 4), I32: ("i", 4), I64: ("q", 8), "f64": ("d", 8), REAL: ("f", 4)}


def pad4(n: int) -> int:
    """Bytes of zero padding after ``n`` bytes: every field of the format starts 4-aligned."""
    return -n & 3


class Name(str):
    """A raw string (an Object property name, a class name) inside the writer's value stream:
    written without a type header, unlike a String value."""

    __slots__ = ()


def int_text(value: int) -> str:
    """An int for a message: in full when short (Python refuses to print ints past 4300 digits)."""
    return str(value) if value.bit_length() <= 128 else f"of {value.bit_length()} bits"


def u64_field(value: int, what: str) -> int:
    if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
        raise EncodeError(f"{what} {int_text(value)} is not a 64-bit unsigned int")
    return value


def float32_bytes(parts: Any) -> bytes:
    """float32 bytes of numbers that may overflow: C casts those to inf, as the engine does."""
    data = array("f", parts)
    if _BIG_ENDIAN:  # pragma: no cover
        data.byteswap()
    return data.tobytes()


# --- scalars -------------------------------------------------------------------------------

def read_nil(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    return None, pos + 4


def write_nil(enc: Writer, spec: Row, out: bytearray, value: Any) -> None:
    out += pack_u32(enc.header(spec.name))


def read_bool(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    dec.need(pos + 4, end, 4, "bool")
    return u32_at(buf, pos + 4)[0] != 0, pos + 8


def write_bool(enc: Writer, spec: Row, out: bytearray, value: bool) -> None:
    out += pack_u32(enc.header("bool"))
    out += b"\1\0\0\0" if value else b"\0\0\0\0"


def read_int(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    if header & FLAG_64 or dec.dialect.int_format == IntFormat.I64:
        dec.need(pos + 4, end, 8, "64-bit int")
        return _i64.unpack_from(buf, pos + 4)[0], pos + 12
    dec.need(pos + 4, end, 4, "int")
    return _i32.unpack_from(buf, pos + 4)[0], pos + 8


def write_int(enc: Writer, spec: Row, out: bytearray, value: int) -> None:
    fmt = enc.dialect.int_format
    value = int(value)  # an int subclass (IntEnum ...) is written as its number
    if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
        raise EncodeError(f"int {int_text(value)} does not fit in 64 bits")
    fits32 = -0x80000000 <= value <= 0x7FFFFFFF
    if fmt == IntFormat.I32 and not fits32:
        raise EncodeError(f"int {int_text(value)} does not fit in 32 bits ({enc.dialect.name} has no 64-bit int)")
    if fmt == IntFormat.I64:
        out += pack_u32(enc.header("int"))
        out += _i64.pack(value)
    elif fits32 and fmt != IntFormat.FLAG64:
        out += pack_u32(enc.header("int"))
        out += _i32.pack(value)
    else:
        out += pack_u32(enc.header("int") | FLAG_64)
        out += _i64.pack(value)


def read_float(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    fmt = dec.dialect.float_format
    if (header & FLAG_64 and fmt != FloatFormat.F32) or fmt == FloatFormat.F64:
        dec.need(pos + 4, end, 8, "64-bit float")
        return _f64.unpack_from(buf, pos + 4)[0], pos + 12
    dec.need(pos + 4, end, 4, "float")
    return _f32.unpack_from(buf, pos + 4)[0], pos + 8


def write_float(enc: Writer, spec: Row, out: bytearray, value: float) -> None:
    fmt = enc.dialect.float_format
    value = float(value)
    if fmt == FloatFormat.F64:
        out += pack_u32(enc.header("float"))
        out += _f64.pack(value)
        return
    if fmt in (FloatFormat.AUTO, FloatFormat.F32):
        # float32 whenever it round-trips exactly; NaN never does, so it is always 64-bit.
        try:
            narrow = _f32.pack(value)
        except OverflowError:
            narrow = float32_bytes((value,))  # C casts overflow to inf
        if fmt == FloatFormat.F32 or _f32.unpack(narrow)[0] == value:
            out += pack_u32(enc.header("float"))
            out += narrow
            return
    out += pack_u32(enc.header("float") | FLAG_64)
    out += _f64.pack(value)


# --- strings and names ---------------------------------------------------------------------

def read_string(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    return dec.read_string(buf, pos + 4, end)


def write_string(enc: Writer, spec: Row, out: bytearray, value: str) -> None:
    out += pack_u32(enc.header("String"))
    enc.write_string(out, value)


def read_string_name(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    text, pos = dec.read_string(buf, pos + 4, end, "StringName")
    return t.StringName(text), pos


def write_string_name(enc: Writer, spec: Row, out: bytearray, value: str) -> None:
    out += pack_u32(enc.header("StringName"))
    enc.write_string(out, value)


def read_node_path(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    pos += 4
    dec.need(pos, end, 4, "NodePath name count")
    if not u32_at(buf, pos)[0] & NODE_PATH_NEW_FORMAT:
        if dec.dialect.node_path_old_format:
            text, pos = dec.read_string(buf, pos, end, "NodePath")
            return t.NodePath(text), pos
        raise DecodeError(pos, "NodePath in the old string format (bit 31 of the name count clear)")
    dec.need(pos, end, 12, "NodePath header")
    name_count, subname_count, flags = struct.unpack_from("<III", buf, pos)
    name_count &= COUNT_MASK
    if flags & 2:  # obsolete "property" flag: one more subname follows
        subname_count += 1
    total = name_count + subname_count
    left = end - pos - 12
    if total * 4 > left:
        raise DecodeError(pos, f"NodePath announces {total} names, {left} bytes left")
    pos += 12
    parts = []
    for _ in range(total):
        part, pos = dec.read_string(buf, pos, end, "NodePath name")
        parts.append(part)
    return t.NodePath(names=parts[:name_count], subnames=parts[name_count:], absolute=bool(flags & 1)), pos


def write_node_path(enc: Writer, spec: Row, out: bytearray, value: t.NodePath) -> None:
    out += pack_u32(enc.header("NodePath"))
    out += struct.pack("<III", len(value.names) | NODE_PATH_NEW_FORMAT, len(value.subnames), int(value.absolute))
    for part in chain(value.names, value.subnames):
        enc.write_string(out, part, enc.node_path_padding)


# --- references ----------------------------------------------------------------------------

def read_rid(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    rid_format = dec.dialect.rid_format
    if rid_format == RidFormat.NONE:
        return t.RID(), pos + 4
    if rid_format == RidFormat.UNSUPPORTED:
        raise DecodeError(pos, f"{dec.dialect.name} has no RID encoding")
    dec.need(pos + 4, end, 8, "RID")
    return t.RID(_u64.unpack_from(buf, pos + 4)[0]), pos + 12


def write_rid(enc: Writer, spec: Row, out: bytearray, value: t.RID) -> None:
    rid_format = enc.dialect.rid_format
    if rid_format == RidFormat.UNSUPPORTED:
        raise EncodeError(f"{enc.dialect.name} has no RID encoding")
    out += pack_u32(enc.header("RID"))
    if rid_format == RidFormat.U64:
        out += _u64.pack(u64_field(value.id, "RID id"))


def read_callable(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    return t.Callable(), pos + 4


def write_callable(enc: Writer, spec: Row, out: bytearray, value: t.Callable) -> None:
    out += pack_u32(enc.header("Callable"))


def read_signal(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    name, pos = dec.read_string(buf, pos + 4, end, "Signal name")
    dec.need(pos, end, 8, "Signal object id")
    return t.Signal(name, _u64.unpack_from(buf, pos)[0]), pos + 8


def write_signal(enc: Writer, spec: Row, out: bytearray, value: t.Signal) -> None:
    out += pack_u32(enc.header("Signal"))
    enc.write_string(out, value.name)
    out += _u64.pack(u64_field(value.object_id, "Signal object id"))


# --- Objects -------------------------------------------------------------------------------

def read_object_header(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    """Godot 2's encoder writes an Object as its type header alone: it reads back as null."""
    return None, pos + 4


def write_object(enc: Writer, spec: Row, out: bytearray, value: Any) -> Iterator[Any] | None:
    if isinstance(value, t.EncodedObjectAsID):
        _write_object_id(enc, out, value)
        return None
    if not enc.full_objects:
        raise EncodeError(f"Object {value.class_name} is only written with ", remedy=Remedy.FULL_OBJECTS,
                          then=" (an instance id is written from EncodedObjectAsID)")
    if enc.dialect.object_format == ObjectFormat.HEADER:
        raise EncodeError(f"{enc.dialect.name} cannot write a full Object: its encoder writes the type header alone")
    out += pack_u32(_object_header(enc, False))
    enc.write_raw_name(out, Name(value.class_name))
    props = value.properties
    out += pack_u32(len(props))
    if not props:
        return None
    return chain.from_iterable((Name(k), v) for k, v in props.items())


def _object_header(enc: Writer, as_id: bool) -> int:
    form = enc.dialect.object_format
    if form == ObjectFormat.UNSUPPORTED:
        raise EncodeError(f"{enc.dialect.name} has no Object encoding")
    return enc.header("Object") | (FLAG_64 if as_id and form == ObjectFormat.ENGINE else 0)


def _write_object_id(enc: Writer, out: bytearray, value: t.EncodedObjectAsID) -> None:
    form = enc.dialect.object_format
    if form == ObjectFormat.HEADER:  # Godot 2 writes no id: the header alone
        u64_field(value.object_id, "object id")
        out += pack_u32(enc.header("Object"))
        return None
    if form == ObjectFormat.DOCS4 and enc.full_objects:
        raise EncodeError("the 4.x page's Object forms cannot mix ids with full objects")
    out += pack_u32(_object_header(enc, True))
    out += _u64.pack(u64_field(value.object_id, "object id"))
    return None


# --- containers: their own fields; the elements go through the encoder's stack ---------------

def write_array(enc: Writer, spec: Row, out: bytearray, value: Any) -> Iterator[Any] | None:
    if isinstance(value, t.TypedArray):
        if not enc.dialect.typed_arrays:
            raise EncodeError(f"{enc.dialect.name} has no typed Arrays (Godot 4.3+)")
        kind, info = enc.container_type(value.element_type)
        out += pack_u32(enc.header("Array") | kind << 16)
        out += info
    else:
        out += pack_u32(enc.header("Array"))
    out += pack_u32(len(value))
    return enc.elements(out, value)


def write_dictionary(enc: Writer, spec: Row, out: bytearray, value: Any) -> Iterator[Any] | None:
    typed = isinstance(value, t.TypedDictionary) and (value.key_type is not None or value.value_type is not None)
    if typed:
        if not enc.dialect.typed_dictionaries:
            raise EncodeError(f"{enc.dialect.name} has no typed Dictionaries (Godot 4.4+)")
        key_kind, key_info = enc.container_type(value.key_type)
        value_kind, value_info = enc.container_type(value.value_type)
        out += pack_u32(enc.header("Dictionary") | key_kind << 16 | value_kind << 18)
        out += key_info
        out += value_info
    else:
        out += pack_u32(enc.header("Dictionary"))
    out += pack_u32(len(value))
    return chain.from_iterable(value.items()) if value else None


# --- math types ----------------------------------------------------------------------------

def read_math(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    narrow, wide, make, arg = dec.math_plan(spec)
    s = wide if (wide is not None and header & FLAG_64) else narrow
    if end - pos - 4 < s.size:
        raise DecodeError(pos + 4, f"{spec.name} needs {s.size} bytes, {max(end - pos - 4, 0)} left")
    parts: Any = s.unpack_from(buf, pos + 4)
    if s is wide and not dec.dialect.real_is_double:
        # A single-precision engine reads doubles into its 32-bit real_t, so values
        # that differ only beyond float32 become equal (and may merge as keys).
        parts = array("f", parts).tolist()
    return make(arg, parts), pos + 4 + s.size


def write_math(enc: Writer, spec: Row, out: bytearray, value: Any) -> None:
    header, fmt, parts_of = enc.math_plan(spec)
    out += header
    parts = parts_of(value)
    try:
        out += fmt.pack(*parts)
    except OverflowError:
        if not fmt.format.endswith("f"):
            raise EncodeError(f"{spec.name} component out of range: {value!r}") from None
        out += float32_bytes(parts)  # C casts overflow to inf, as the engine does
    except struct.error as e:
        raise EncodeError(f"{spec.name} component out of range: {value!r} ({e})") from None


# --- packed arrays -------------------------------------------------------------------------

def read_packed_bytes(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    count, start = dec.packed_count(buf, pos + 4, end, 1, "PackedByteArray")
    # The engine does not require the final padding to be present.
    return bytes(buf[start:start + count]), min(start + count + pad4(count), end)


def byte_buffer(value: Any) -> Any:
    """A PackedByteArray value as one contiguous buffer: a strided memoryview's bytes copied
    in order (bytearray += and b"".join take only contiguous ones); a released one refused."""
    if type(value) is memoryview:
        try:
            return value if value.c_contiguous else value.tobytes()
        except ValueError:
            raise EncodeError("cannot encode a released memoryview") from None
    return value


def write_packed_bytes(enc: Writer, spec: Row, out: bytearray, value: Any) -> None:
    value = byte_buffer(value)
    out += pack_u32(enc.header("PackedByteArray"))
    n = memoryview(value).nbytes
    out += pack_u32(n)
    out += value
    out += PADDING[-n & 3]


def packed_layout(spec: Row, wide: bool, count_size_64: int) -> tuple[str, int, int]:
    """(array typecode, bytes per number, bytes of the count) of a packed array's payload."""
    typecode, size = ("d", 8) if wide else COMPONENT_FORMATS[spec.component or ""]
    return typecode, size, (count_size_64 if spec.component == I64 else 4)


def read_packed(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    d = dec.dialect
    wide = spec.component == REAL and d.math_flag_64 and bool(header & FLAG_64)
    tc, size, count_size = packed_layout(spec, wide, d.int64_array_count_size)
    step = size * spec.width
    pos += 4
    if count_size == 8:  # a documentation page's 8-byte length field
        dec.need(pos, end, 8, f"{spec.name} count")
        count = _u64.unpack_from(buf, pos)[0]
        start, left = pos + 8, end - pos - 8
        if count * step > left:
            raise DecodeError(pos, f"{spec.name} count {count} needs {count * step} bytes, {left} left")
    else:
        count, start = dec.packed_count(buf, pos, end, step, spec.name)
    stop = start + count * step
    cls: Any = spec.cls
    packed = cls.from_bytes(memoryview(buf)[start:stop], tc)  # one copy: into the array
    if tc == "d" and spec.component == REAL and not d.real_is_double:
        packed.data = array("f", packed.data)  # into the engine's 32-bit real_t
    return packed, stop


def write_packed(enc: Writer, spec: Row, out: bytearray, value: t.PackedArray) -> None:
    head, typecode = enc.packed_plan(spec)
    out += head(len(value))
    if value.data.typecode == typecode and not _BIG_ENDIAN:
        out += value.data  # the array's own buffer: no intermediate copy
    else:
        out += value.to_bytes(typecode)


def read_packed_strings(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    return dec.read_packed_strings(buf, pos, end)


def write_packed_strings(enc: Writer, spec: Row, out: bytearray, value: t.PackedStringArray) -> None:
    out += pack_u32(enc.header("PackedStringArray"))
    out += pack_u32(len(value))
    enc.write_string_elements(out, value)


# --- Godot 2 ---------------------------------------------------------------------------------

def read_image(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    """Godot 2: format, mipmaps, width, height, data length, data, padding to 4."""
    pos += 4
    dec.need(pos, end, 20, "Image header")
    fmt, mipmaps, width, height, n = struct.unpack_from("<5I", buf, pos)
    start = pos + 20
    if n > end - start:  # checked before the data is copied
        raise DecodeError(pos + 16, f"Image data length {n} runs past the end: {end - start} byte(s) left")
    # Like a PackedByteArray's, the final padding need not be present.
    return t.Image(fmt, mipmaps, width, height, bytes(buf[start:start + n])), min(start + n + pad4(n), end)


def write_image(enc: Writer, spec: Row, out: bytearray, value: t.Image) -> None:
    out += pack_u32(enc.header("Image"))
    n = len(value.data)
    out += struct.pack("<5I", value.format, value.mipmaps, value.width, value.height, n)
    out += value.data
    out += PADDING[-n & 3]  # zeros; the engine leaves these bytes unwritten


def read_input_event(dec: Reader, spec: Row, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
    """Godot 2: u32 event type, u32 device, u32 size, then the type's payload words.

    How many payload words follow is decided by the event type, as the engine's
    decoder does; the size word is kept but not trusted.
    """
    pos += 4
    dec.need(pos, end, 12, "InputEvent header")
    kind, device, size = struct.unpack_from("<3I", buf, pos)
    words = t.INPUT_EVENT_PAYLOAD_WORDS.get(kind, 0)
    dec.need(pos + 12, end, 4 * words, f"InputEvent ({t.InputEvent(kind).type_name}) payload")
    payload = struct.unpack_from(f"<{words}I", buf, pos + 12)
    event = t.InputEvent(kind, device, payload, None if size == 12 + 4 * words else size)
    return event, pos + 12 + 4 * words


def write_input_event(enc: Writer, spec: Row, out: bytearray, value: t.InputEvent) -> None:
    out += pack_u32(enc.header("InputEvent"))
    payload = value.payload
    words = t.INPUT_EVENT_PAYLOAD_WORDS.get(value.type, 0)
    if len(payload) != words:
        raise EncodeError(f"InputEvent {value.type_name} has {words} payload word(s), not {len(payload)}")
    size = 12 + 4 * words if value.size is None else value.size
    out += struct.pack(f"<3I{words}I", value.type, value.device, size, *payload)
