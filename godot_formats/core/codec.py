"""The one reader and the one writer of Godot's binary Variant format.

Both are driven by a :class:`~godot_formats.dialects.Dialect`: a type id is
looked up in the dialect's table and dispatched through a table of payload
readers/writers keyed by Godot 4 type name, so every dialect shares the same
primitive code.

Both walk nested containers with an explicit stack instead of recursion:
a hostile blob of 200,000 nested arrays ends in a :class:`DecodeError` at the
depth limit, never in ``RecursionError``, and a count field is checked against
the bytes that are left before anything is allocated.
"""

from __future__ import annotations

import operator
import struct
import sys
from array import array
from functools import cache, lru_cache, partial
from itertools import chain, islice, repeat
from typing import Any, Iterator
from typing import Callable as _Fn

from . import accel
from . import types as t
from .dialects import UNSUPPORTED, Dialect
from .errors import DecodeError, EncodeError, Remedy
from .keys import KeyRules, Memo, python_keys_agree
from .limits import MAX_BUFFER_SIZE, MAX_DEPTH
from .registry import (
    BY_NAME,
    REGISTRY,
    Family,
    TypeSpec,
    for_each_row,
    is_array,
    is_dictionary,
    nesting_error,
    spec_for,
)
from .switches import FLAG_64, I32, I64, REAL, FloatFormat, IntFormat, ObjectFormat
from .wire import (
    _BIG_ENDIAN,
    COMPONENT_FORMATS,
    COUNT_MASK,
    INT32_MAX,
    NODE_PATH_NEW_FORMAT,
    PADDING,
    Name,
    Reader,
    Writer,
    _f32,
    _u64,
    byte_buffer,
    pack_u32,
    packed_layout,
    pad4,
    u32_at,
)

__all__ = ["Decoder", "Encoder", "decoder_for", "encoder_for", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_SIZE",
           "MARK_SMALL_INT64", "MARK_WIDE_REAL"]

#: The engines refuse values nested deeper than this (Variant::MAX_RECURSION_DEPTH): :data:`.limits.MAX_DEPTH`.
DEFAULT_MAX_DEPTH = MAX_DEPTH
#: The engines take a buffer length as an int32: no value is larger than this (:data:`.limits.MAX_BUFFER_SIZE`).
DEFAULT_MAX_SIZE = MAX_BUFFER_SIZE

# Marks (Decoder.decode_marked): what a decode met with the 64-bit flag, where sibling versions part
# (detection.sibling_marks), so that detection need not write the values again to tell them apart.
#: An int with the 64-bit flag that fits in 32 bits (Godot 3.0 writes every int so; 3.1+ only wide ones).
MARK_SMALL_INT64 = 1
#: A real-valued math type or packed vector with the 64-bit flag (a double build writes them so).
MARK_WIDE_REAL = 2

# Re-exported: explain and the tests read these from here.
__all__ += ["NODE_PATH_NEW_FORMAT", "COUNT_MASK", "INT32_MAX"]

# The primitive structs are the wire module's: one definition of the format's numbers.
_HEADER_I32 = struct.Struct("<Ii")
_HEADER_F32 = struct.Struct("<If")
_HEADER_U32 = struct.Struct("<II")
_NOTHING = struct.Struct("<")  # unpacks ()
_PADDING = PADDING
_BUFFER_TYPES = (bytes, bytearray, memoryview)
#: The classes a lone top-level value of is copied in one go (Encoder._lone_buffer): the
#: buffers, PackedStringArray and the packed arrays of the registry's rows.
_LONE_TYPES: set[type] = {*_BUFFER_TYPES, t.PackedStringArray}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if spec.family is Family.PACKED:
        _LONE_TYPES.update(spec.classes)

# Frame kinds of the decoder's explicit stack: an Array, a Dictionary waiting
# for a key or for a value, an Object, the top level.
_ARRAY, _PAIRS, _OBJECT, _TOP = 0, 1, 2, 3
_DICT = _PAIRS


def _dictionary(pairs: list[Any], types: tuple[Any, Any] | None, rules: KeyRules, memo: Memo) -> Any:
    """The Dictionary whose keys and values were read, in turn, into ``pairs``.

    A plain ``dict`` when Python's key equality is the engine's for these keys;
    otherwise a :class:`Dictionary` under the dialect's key rules.  ``memo``
    holds the identities of the containers already used as keys in this decode,
    so nested keys cost their size once (see :mod:`godot_formats.keys`).
    """
    it = iter(pairs)
    if types is not None:
        typed = t.TypedDictionary(types[0], types[1], key_rules=rules)
        typed._fill(zip(it, it), memo)
        return typed
    try:
        plain = dict(zip(it, it))
    except TypeError:  # a key Python cannot hash, such as an Array
        pass
    else:
        if 2 * len(plain) == len(pairs) and python_keys_agree(plain):
            return plain
    # Python merged keys that Godot keeps apart (1, 1.0 and true), could not hash
    # one, or would keep two NaNs apart: Godot's own key rules apply.  A key
    # repeated in the bytes is merged the engine's way: the last value wins.
    it = iter(pairs)
    result = t.Dictionary(key_rules=rules)
    result._fill(zip(it, it), memo)
    return result


def _utf8(raw: Any) -> str:
    return str(raw, "utf-8")


def _math_build(row: Any) -> tuple[struct.Struct, _Fn[[Any, Any], Any], Any]:
    """How a math value is read without the 64-bit flag: its numbers' struct, and how
    the value is built from them as ``make(arg, parts)``.  A vector, Quaternion or
    Color takes one C call (the numbers already have the component's type);
    anything else is built by its dialect's row (``row.from_wire``)."""
    narrow = struct.Struct(f"<{row.count}{'i' if row.component == I32 else 'f'}")
    if issubclass(row.cls, t.Components) and row.count == len(row.cls._fields):
        return narrow, tuple.__new__, row.cls
    return narrow, _apply, row.from_wire


def _apply(build: _Fn[[Any], Any], parts: Any) -> Any:
    return build(parts)


def _views_at(buf: Any, base: int, end: int) -> tuple[Any, Any, Any, int, int]:
    """The whole 32-bit words from ``base`` to ``end`` as u32, int32 and float32 (views, not
    copies), how many there are, and the byte offset of a String's text at word 0."""
    region = memoryview(buf)[base:base + (max(end - base, 0) & ~3)]
    if _BIG_ENDIAN:  # pragma: no cover - the wire is little-endian: swapped copies
        views = []
        for typecode in "Iif":
            swapped = array(typecode)
            swapped.frombytes(region)
            swapped.byteswap()
            views.append(memoryview(swapped))
        return views[0], views[1], views[2], len(views[0]), base + 8
    words = region.cast("I")
    return words, region.cast("i"), region.cast("f"), len(words), base + 8


#: Lengths up to this have rows in the tables below; a longer String or
#: PackedStringArray element is an IndexError there, which sends it to the table
#: reader (or the element-by-element writer), where its own size dwarfs the cost.
_TABLE_LENGTHS = 4096
#: The words of a String value of n bytes: header, length, text, padding.
_STRING_WORDS = tuple((n + 11) >> 2 for n in range(_TABLE_LENGTHS))
_PADDING_BITS = (0, 0xFFFFFF00, 0xFFFF0000, 0xFF000000)
_NUL_AND_PADDING_BITS = (0xFF000000, 0xFFFFFFFF, 0xFFFFFF00, 0xFFFF0000)


@cache
def _walk_tables(nul: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """How the PackedStringArray walk steps over an element of length n (in u32 words:
    the length word, the text, the padding), and the bits of the element's last word
    that must be zero: its padding, and in the layout where each length counts a
    final NUL, that NUL too.  A length of 0 has no NUL to count, so its step there
    runs off the end and the walk gives up.  Built on first use: the tables take
    milliseconds, and most programs never read a PackedStringArray.
    """
    steps = [1 << 62 if nul else 1] + [(n + 7) >> 2 for n in range(1, _TABLE_LENGTHS)]
    bits = _NUL_AND_PADDING_BITS if nul else _PADDING_BITS
    return tuple(steps), tuple(bits[n & 3] for n in range(_TABLE_LENGTHS))


@cache
def _join_tables(nul: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What goes before and after an ASCII PackedStringArray element of n characters,
    as latin-1 text: its length (counting the NUL where the layout has one), then the
    NUL and the padding.  Built on first use, like the walk's tables."""
    heads = tuple(struct.pack("<I", n + nul).decode("latin-1") for n in range(_TABLE_LENGTHS))
    return heads, tuple("\0" * (nul + (-(n + nul) & 3)) for n in range(_TABLE_LENGTHS))


def _string_elements_end(buf: Any, pos: int, count: int, end: int, nul: bool) -> int | None:
    """Where ``count`` length-prefixed, zero-padded elements from ``pos`` end.

    None if they run past ``end``, or are not exactly what the engine writes
    (padding that is not zero; with ``nul``, a length that does not count a
    final NUL), or are long: the element-by-element reader then decides.  This
    walk is what a PackedStringArray costs when its strings are kept in wire
    form, so it is as short as it can be: per element, one subscript for the
    length, two table lookups, and one subscript for the element's last word
    (``last`` is the same words one earlier, so ``last[j]`` is ``words[j - 1]``).
    """
    if _BIG_ENDIAN or pos < 4:  # pragma: no cover - a PackedStringArray's count precedes pos
        return None
    view = memoryview(buf)
    stop = pos + ((end - pos) & ~3)
    words, last = view[pos:stop].cast("I"), view[pos - 4:stop].cast("I")
    step, zero_bits = _walk_tables(nul)
    j = 0
    try:
        for _ in repeat(None, count):
            n = words[j]
            j += step[n]
            if last[j] & zero_bits[n]:
                return None
    except IndexError:
        return None
    finally:
        words.release()
        last.release()
    return pos + 4 * j


def _too_deep(pos: int, max_depth: int) -> DecodeError:
    return DecodeError(pos, nesting_error(max_depth, writing=False))


_pad4 = pad4


class Decoder:
    """Reads one value from bytes in one dialect: the reference reader.

    Shaped like ``pickle``'s ``_Unpickler``: one small reader per type (the registry
    rows' :mod:`~godot_formats.wire` functions), a dispatch table from wire id to
    reader built once from the dialect's type table, and an explicit stack of open
    containers (:class:`_Walk`) instead of recursion.

    ``allow_objects`` lets full Objects through (as inert :class:`~godot_formats.types.Object`
    data, never instantiated); without it they are refused, as the engines do.
    """

    def __init__(
        self,
        dialect: Dialect,
        *,
        allow_objects: bool = False,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_size: int = DEFAULT_MAX_SIZE,
        max_elements: int | None = None,
        backend: str | None = None,
    ) -> None:
        self.dialect = dialect
        self.allow_objects = allow_objects
        self.max_depth = max_depth
        self.max_size = max_size
        self.max_elements = max_elements
        self._key_rules = dialect.key_rules
        self._utf8_errors = "surrogatepass" if dialect.utf8_surrogates else "strict"
        self._padded_names = dialect.object_format == ObjectFormat.ENGINE
        self._math_plans: dict[str, tuple[struct.Struct, struct.Struct | None, _Fn[[Any, Any], Any], Any]] = {}
        # The dispatch tables: wire id -> payload reader (a leaf), or -> frame kind (a container).
        readers: list[_Fn[..., tuple[Any, int]] | None] = [None] * len(dialect.types)
        containers: dict[int, int] = {}
        for type_id, name in enumerate(dialect.types):
            kind = self._container_kind(name)
            if kind is not None:
                containers[type_id] = kind
            elif name == UNSUPPORTED:
                readers[type_id] = self._read_unsupported
            else:
                spec = BY_NAME[name]
                readers[type_id] = partial(spec.read, self, spec)  # type: ignore[arg-type,misc]
        self._readers = readers
        self._containers = containers
        self._fixed = self._fixed_table()
        self._builtin_container_types = [None if n in ("Nil", UNSUPPORTED) else t.ContainerType(n)
                                         for n in dialect.types]
        # Headers (type id, no flags) of int32, float32 and String, read by _Walk.leaves;
        # -1 where the dialect gives that header another meaning.
        int_id, float_id, string_id = (dialect.type_id(n) for n in ("int", "float", "String"))
        self._fast_headers = (
            int_id if int_id is not None and dialect.int_format != IntFormat.I64 else -1,
            float_id if float_id is not None and dialect.float_format != FloatFormat.F64 else -1,
            string_id if string_id is not None else -1,
        )
        # Headers of an untyped Array / Dictionary (no flag bits), opened by _Walk.leaves.
        array_id, dict_id = dialect.type_id("Array"), dialect.type_id("Dictionary")
        self._container_headers = (-1 if array_id is None else array_id, -1 if dict_id is None else dict_id)
        self._flag_marks = bytes(self._flag_mark(name) for name in dialect.types)
        self.backend = "c" if accel.choose(backend) else "python"
        self._c = _CReader(self).reader if self.backend == "c" else None
        #: What :func:`~godot_formats.api.loads` calls: the compiled ``Reader.loads`` (no Python
        #: frame for a small message, which costs about as much to reach as to read), or the reference.
        self.loads: _Fn[[Any], Any] = self._loads_reference
        if self._c is not None and type(max_size) is int and 0 <= max_size <= sys.maxsize:
            # (a max_size C cannot hold as a size, or a negative one, keeps the reference's checks)
            self._c.bind(max_size, self._dictionary_for, self._after_c)
            self.loads = self._c.loads

    def _flag_mark(self, name: str) -> int:
        """The mark a value of this type with the 64-bit flag leaves (see MARK_SMALL_INT64)."""
        spec = BY_NAME.get(name)
        if spec is None:
            return 0
        if spec.family is Family.INT:
            return MARK_SMALL_INT64
        if spec.family is Family.MATH:
            return MARK_WIDE_REAL if self.math_plan(spec)[1] is not None else 0
        if spec.family is Family.PACKED and spec.component == REAL and self.dialect.math_flag_64:
            return MARK_WIDE_REAL
        return 0

    def _container_kind(self, name: str) -> int | None:
        """The frame kind of a type whose elements the stack reads, or None for a leaf."""
        if name == UNSUPPORTED:
            return None
        family = BY_NAME[name].family
        if family is Family.ARRAY:
            return _ARRAY
        if family is Family.DICTIONARY:
            return _DICT
        if family is Family.OBJECT and self.dialect.object_format != ObjectFormat.HEADER:
            return _OBJECT
        return None

    def _fixed_table(self) -> dict[int, tuple[_Fn[[Any, Any], Any], Any, _Fn[[Any, int], Any], int]]:
        """The fixed-size values whose header has no flag bits, read by _Walk.leaves as
        ``make(arg, unpack(buf, payload offset))``: rows of C callables, so reading one
        costs no Python-level call."""
        fixed: dict[int, tuple[_Fn[[Any, Any], Any], Any, _Fn[[Any, int], Any], int]] = {}
        for type_id, name in enumerate(self.dialect.types):
            if name == "Nil":
                fixed[type_id] = (dict.get, {}, _NOTHING.unpack_from, 0)  # {}.get(()) is None
            elif name == "bool":
                fixed[type_id] = (operator.ne, (0,), u32_at, 1)  # (0,) != (n,)
            elif name and BY_NAME[name].family is Family.MATH:
                narrow, _, make, arg = self.math_plan(BY_NAME[name])
                fixed[type_id] = (make, arg, narrow.unpack_from, BY_NAME[name].count)
        return fixed

    def math_plan(self, spec: TypeSpec) -> tuple[struct.Struct, struct.Struct | None, _Fn[[Any, Any], Any], Any]:
        """How this dialect reads a math type: the narrow and wide structs of its numbers,
        and how the value is built from them (``make(arg, numbers)``)."""
        plan = self._math_plans.get(spec.name)
        if plan is None:
            row = self.dialect.math_type(spec.name)
            narrow, make, arg = _math_build(row)
            wide = struct.Struct(f"<{row.count}d") if row.component == REAL and self.dialect.math_flag_64 else None
            plan = self._math_plans[spec.name] = (narrow, wide, make, arg)
        return plan

    def _dictionary_for(self) -> _Fn[[list[Any], Any], Any]:
        """The compiled core's builder of the Dictionaries that are not plain dicts, for one
        decode (its memo lives that long); asked for only when the first is met."""
        return partial(_dictionary, rules=self._key_rules, memo={})

    # -- the main loop -------------------------------------------------------

    def decode(self, data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None) -> tuple[Any, int]:
        """Decode the value at ``offset``; return it and the offset just after it.

        ``end`` bounds the value (e.g. a frame inside a larger buffer) without copying.
        """
        return self._decode(data, offset, end, None)

    def _loads_reference(self, data: bytes | bytearray | memoryview) -> Any:
        return self._decode(data, 0, None, None)[0]

    def _after_c(self, data: bytes | bytearray | memoryview, tried: bool) -> Any:
        """What the compiled ``Reader.loads`` leaves to Python: an input other than bytes, or
        too large (``tried`` false: :meth:`decode` checks it), or bytes its walk gave up on
        (``tried``: the reference reads them, as :meth:`decode` would next)."""
        if not tried:
            return self._decode(data, 0, None, None)[0]
        return self._reference(data, 0, len(data), None)[0]

    def decode_marked(self, data: bytes | bytearray | memoryview, offset: int = 0,
                      end: int | None = None) -> tuple[Any, int, int]:
        """:meth:`decode`, and the marks (``MARK_*``, or-ed) of the values it read with the 64-bit flag:
        what detection needs to know whether a sibling version could have written these bytes."""
        marks: list[int] = []
        value, end = self._decode(data, offset, end, marks)
        return value, end, marks[0]

    def decode_run(self, data: bytes, spans: tuple[tuple[int, int], ...], first: int = 0, *,
                   stop_unread: bool = False) -> tuple[list[Any], list[int], int]:
        """The records at ``spans[first:]`` decoded in one call, in order, as :meth:`decode_marked`
        decodes each, up to the first the compiled core leaves to the reference (an error too, which
        the reference names) and, with ``stop_unread``, the first whose value leaves most of its span
        unread (``detection.mostly_unread``): their values, where each ends, and their marks or-ed.  ``len(values)``
        says how far it got: the caller reads the next record with :meth:`decode_marked`.  One call
        for a save's thousands of records, whose containers the GC meets once, when the run ends
        (the pure-Python backend reads none here: every record goes through the reference)."""
        if self._c is None or type(data) is not bytes:
            return [], [], 0
        if len(data) > self.max_size:  # a record over max_size is the reference's error
            over = next((k for k in range(first, len(spans)) if spans[k][1] - spans[k][0] > self.max_size), None)
            if over is not None:
                spans = spans[:over]
        return self._c.decode_run(data, spans, first, self._dictionary_for, stop_unread)  # type: ignore[no-any-return]

    def _decode(self, data: bytes | bytearray | memoryview, offset: int, end: int | None,
                marks: list[int] | None) -> tuple[Any, int]:
        buf = data if isinstance(data, bytes) else memoryview(data).cast("B")
        end = len(buf) if end is None else min(end, len(buf))
        if offset < 0:  # Python would count it from the end
            raise DecodeError(offset, "offset is negative")
        if end - offset > self.max_size:
            raise DecodeError(offset, f"{end - offset} bytes of input exceed max_size={self.max_size}")
        if self._c is not None:
            try:
                if marks is None:
                    return self._c.decode(buf, offset, end, self._dictionary_for)  # type: ignore[no-any-return]
                return self._c.decode(buf, offset, end, self._dictionary_for, marks)  # type: ignore[no-any-return]
            except accel.cdecode.Fallback:  # type: ignore[union-attr]
                pass  # something the compiled core leaves to the reference (its marks were not given): it decides
        return self._reference(buf, offset, end, marks)

    def _reference(self, buf: Any, offset: int, end: int, marks: list[int] | None) -> tuple[Any, int]:
        """The reference walk over checked bounds."""
        walk = _Walk(self, buf, offset, end)
        try:
            result = walk.run()
            if marks is not None:
                marks.append(walk.marks)
            return result
        finally:
            walk.release()  # let go of the input: a bytearray with views on it cannot be resized

    def too_many_elements(self, pos: int) -> DecodeError:
        return DecodeError(pos, f"more than max_elements={self.max_elements} Array elements, "
                                "Dictionary entries and Object properties")

    def open(self, kind: int, buf: Any, pos: int, header: int, end: int) -> tuple[tuple[Any, ...] | None, Any, int]:
        """Read a container's own fields; return a frame for its elements, or the finished value."""
        if kind == _OBJECT:
            return self._open_object(buf, pos, header, end)
        if kind == _ARRAY:
            return self._open_array(buf, pos, header, end)
        return self._open_dictionary(buf, pos, header, end)

    def _open_array(self, buf: Any, pos: int, header: int, end: int) -> tuple[tuple[Any, ...] | None, Any, int]:
        pos += 4
        element_type = None
        if self.dialect.typed_arrays and header & (3 << 16):
            element_type, pos = self._read_container_type(buf, pos, end, (header >> 16) & 3)
        count, pos = self._read_count(buf, pos, end, 4, "Array")
        items: list[Any] = [] if element_type is None else t.TypedArray(element_type)
        if count >= 16:
            pos = self._uniform_run(buf, pos, end, items, count)
        if len(items) == count:
            return None, items, pos
        return (_ARRAY, items, count, None), None, pos

    def _open_dictionary(self, buf: Any, pos: int, header: int, end: int) -> tuple[tuple[Any, ...] | None, Any, int]:
        pos += 4
        types = None
        if self.dialect.typed_dictionaries and header & (15 << 16):
            key_type, pos = self._read_container_type(buf, pos, end, (header >> 16) & 3)
            value_type, pos = self._read_container_type(buf, pos, end, (header >> 18) & 3)
            types = (key_type, value_type)
        count, pos = self._read_count(buf, pos, end, 8, "Dictionary")
        if count == 0:
            return None, (t.TypedDictionary(*types, key_rules=self._key_rules) if types else {}), pos
        return (_PAIRS, [], 2 * count, types), None, pos

    def _uniform_run(self, buf: Any, pos: int, end: int, items: list[Any], count: int) -> int:
        """An Array made only of int32s (or only of float32s) is read in one go, at C speed."""
        h_int, h_float, _ = self._fast_headers
        size = 8 * count
        if _BIG_ENDIAN or end - pos < size or u32_at(buf, pos)[0] not in (h_int, h_float):
            return pos
        first = u32_at(buf, pos)[0]
        # One view of the input, no copies: the headers are compared in one go and the
        # payloads become Python numbers in C.
        words = memoryview(buf)[pos:pos + size].cast("i" if first == h_int else "f")
        if words[0::2].tobytes() != bytes(buf[pos:pos + 4]) * count:
            return pos
        items.extend(words[1::2].tolist())
        return pos + size

    def _open_object(self, buf: Any, start: int, header: int, end: int) -> tuple[tuple[Any, ...] | None, Any, int]:
        pos = start + 4
        form = self.dialect.object_format
        if form == ObjectFormat.UNSUPPORTED:
            raise DecodeError(start, f"{self.dialect.name} has no Object encoding")
        # The engines flag the id form; the 4.x page has no flag, so the caller's
        # choice (allow_objects) is all that tells the two forms apart there.
        as_id = header & FLAG_64 if form == ObjectFormat.ENGINE else not self.allow_objects
        if as_id:
            if end - pos < 8:
                raise DecodeError(pos, f"Object id needs 8 bytes, {end - pos} left")
            object_id = _u64.unpack_from(buf, pos)[0]
            return None, (t.EncodedObjectAsID(object_id) if object_id else None), pos + 8
        if not self.allow_objects:
            raise DecodeError(start, "a full Object is only decoded with ", remedy=Remedy.ALLOW_OBJECTS)
        class_name, pos = self.read_string(buf, pos, end, "Object class name", self._padded_names)
        if not class_name:
            return None, None, pos  # what pre-3.2 engines and the 4.x page write for a null Object
        self.need(pos, end, 4, "Object property count")
        if u32_at(buf, pos)[0] > INT32_MAX:
            # The engines read the count as an int32: a negative one means no properties.
            return None, t.Object(class_name), pos + 4
        count, pos = self._read_count(buf, pos, end, 8, "Object property")
        obj = t.Object(class_name)
        if count == 0:
            return None, obj, pos
        name, pos = self.read_string(buf, pos, end, "property name", self._padded_names)
        return (_OBJECT, obj, count, name), None, pos

    # -- primitive readers, for the wire functions -----------------------------------------

    def need(self, pos: int, end: int, size: int, what: str) -> None:
        if end - pos < size:
            raise DecodeError(pos, f"{what} needs {size} bytes, {max(end - pos, 0)} left")

    def _read_count(self, buf: Any, pos: int, end: int, min_size: int, what: str) -> tuple[int, int]:
        if end - pos < 4:
            raise DecodeError(pos, f"{what} count needs 4 bytes, {max(end - pos, 0)} left")
        count = u32_at(buf, pos)[0] & COUNT_MASK
        left = end - pos - 4
        if count * min_size > left:
            raise DecodeError(pos, f"{what} count {count} needs at least {count * min_size} bytes, {left} left")
        return count, pos + 4

    def packed_count(self, buf: Any, pos: int, end: int, size: int, what: str) -> tuple[int, int]:
        """A packed array's element count, checked against the bytes left before anything is allocated."""
        self.need(pos, end, 4, f"{what} count")
        count = u32_at(buf, pos)[0]
        left = end - pos - 4
        if count > INT32_MAX or count * size > left:
            shown = count - (1 << 32) if count > INT32_MAX else count
            raise DecodeError(pos, f"{what} count {shown} needs {shown * size} bytes, {left} left")
        return count, pos + 4

    def read_string(self, buf: Any, pos: int, end: int, what: str = "String", padded: bool = True) -> tuple[str, int]:
        """A u32 byte length, UTF-8 bytes, zero padding to 4 (which must be present)."""
        if end - pos < 4:
            raise DecodeError(pos, f"{what} length needs 4 bytes, {max(end - pos, 0)} left")
        n = u32_at(buf, pos)[0]
        if n > INT32_MAX:
            raise DecodeError(pos, f"{what} length {n} is negative as an int32")
        stop = pos + 4 + n
        pad = _pad4(n) if padded else 0
        if stop + pad > end:
            raise DecodeError(pos, f"{what} length {n} (+{_pad4(n)} padding) runs past the end: "
                                   f"{end - pos - 4} byte(s) left")
        try:
            text = str(buf[pos + 4:stop], "utf-8", self._utf8_errors)
        except UnicodeDecodeError as e:
            raise DecodeError(pos + 4 + e.start, f"invalid UTF-8 in {what}: {e.reason}") from None
        return text, stop + pad

    def _read_container_type(self, buf: Any, pos: int, end: int, kind: int) -> tuple[t.ContainerType | None, int]:
        if kind == 0:
            return None, pos
        if kind == 1:
            return self._read_builtin_container_type(buf, pos, end)
        what = "container class name" if kind == 2 else "container script path"
        text, new_pos = self.read_string(buf, pos, end, what)
        if kind == 2:
            return t.ContainerType.of_class(text), new_pos
        if self.allow_objects and not text.startswith("res://"):
            raise DecodeError(pos, f"container script path {text!r} is not a res:// path")
        return t.ContainerType.of_script(text), new_pos

    def _read_builtin_container_type(self, buf: Any, pos: int, end: int) -> tuple[t.ContainerType | None, int]:
        if end - pos < 4:
            raise DecodeError(pos, f"container element type needs 4 bytes, {max(end - pos, 0)} left")
        type_id = u32_at(buf, pos)[0]
        if type_id >= self.dialect.variant_max:
            raise DecodeError(pos, f"container element type id {type_id} is not a type of {self.dialect.name}")
        name = self.dialect.types[type_id]
        if name == UNSUPPORTED:
            raise DecodeError(pos, f"container element type id {type_id} is not supported by {self.dialect.name}")
        if name == "Object" and not self.allow_objects:
            # What the engine does (_decode_container_type): without objects an
            # Object-typed container holds ids, so its class is EncodedObjectAsID.
            return t.ContainerType.of_class("EncodedObjectAsID"), pos + 4
        return self._builtin_container_types[type_id], pos + 4

    def _read_unsupported(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        """An id the dialect's table leaves empty: reserved, and unreadable in this dialect."""
        type_id = header & self.dialect.type_mask
        raise DecodeError(pos, f"type id {type_id} (header 0x{header:08x}) is not supported by {self.dialect.name} "
                               "(an empty slot in its type table)")

    def read_packed_strings(self, buf: Any, pos: int, end: int) -> tuple[Any, int]:
        """A PackedStringArray from its header at ``pos``: kept in wire form when it is plain
        ASCII (its strings are made when asked for), else read string by string."""
        pos += 4
        self.need(pos, end, 4, "PackedStringArray count")
        count = u32_at(buf, pos)[0]
        if count > INT32_MAX:  # a negative count: the engine's loop never runs
            count = 0
        left = end - pos - 4
        if count * 4 > left:
            raise DecodeError(pos, f"PackedStringArray count {count} needs at least {count * 4} bytes, {left} left")
        pos += 4
        nul = self.dialect.packed_string_nul
        stop = _string_elements_end(buf, pos, count, end, nul)
        if stop is not None:
            wire = bytes(buf[pos:stop])
            if wire.isascii():  # valid UTF-8 in every dialect: the strings can wait until asked for
                return t.PackedStringArray.from_wire(wire, count, nul), stop
        if type(buf) is bytes:
            quick = _strict_strings(buf, pos, count, end, nul)
            if quick is not None:
                return quick
        # Anything odd -- cut short, bad UTF-8, surrogates a dialect accepts -- is read
        # element by element, which raises or decodes by the dialect's rules.
        out: list[str] = []
        for _ in range(count):
            s, pos = self.read_string(buf, pos, end, "PackedStringArray element")
            out.append(s[:-1] if nul and s.endswith("\0") else s)
        return t.PackedStringArray(out), pos


def _strict_strings(buf: bytes, pos: int, count: int, end: int, nul: bool) -> tuple[Any, int] | None:
    """PackedStringArray elements read in one tight loop with strict ``bytes.decode`` (twice
    as fast as ``str(raw, "utf-8", errors)``, and the same text whenever it succeeds); None
    when anything is odd, for the element-by-element reader to decide."""
    out: list[str] = []
    add = out.append
    u32, text = u32_at, bytes.decode
    p = pos
    try:
        for _ in range(count):
            n = u32(buf, p)[0]
            q = p + 4 + n
            add(text(buf[p + 4:q - 1]) if nul and n and not buf[q - 1] else text(buf[p + 4:q]))
            p = q + (-n & 3)
    except (struct.error, IndexError, UnicodeDecodeError):
        return None
    if p > end:  # offsets only grow: an element ran past the end
        return None
    return t.PackedStringArray(out), p


def _string_parts(value: t.PackedStringArray, nul: bool) -> tuple[bytes, int] | list[str]:
    """What the compiled writer copies for a PackedStringArray: the bytes it was read from
    when it keeps them in this layout (with its count), else its strings."""
    wire = value.wire(nul)
    return (wire, len(value)) if wire is not None else value._strings()


class _CReader:
    """The compiled reader's tables, made from the same rows and dialect as the reference's.

    Each wire id gets a kind the compiled core reads itself (the commonest types) or 0:
    "call the reference's reader for this id".  See godot_formats/core/_cdecode.c.
    """

    def __init__(self, dec: Decoder, core: Any = None) -> None:
        """``core``: the compiled module (the process's by default; the C tests pass theirs, which
        they load even where the process runs the reference)."""
        core = accel.cdecode if core is None else core
        self.dec = dec
        d = dec.dialect
        #: The compiled core's kinds, by name (its KINDS: the one list of them).
        self.kind = {name: i for i, name in enumerate(core.KINDS)}
        self.table = table = tuple(self.entry(name) for name in d.types)
        self.reader = core.Reader(
            d.type_mask, table, tuple(dec._readers), self.typed_array_head, self.typed_dict_head,
            dec.max_depth, -1 if dec.max_elements is None else dec.max_elements, dec._flag_marks)

    def entry(self, name: str) -> tuple[int, Any]:
        d, k = self.dec.dialect, self.kind
        spec = BY_NAME.get(name)
        family = None if spec is None else spec.family
        simple = {"Nil": (k["NIL"], None), "bool": (k["BOOL"], None), "String": (k["STRING"], None),
                  "StringName": (k["STRING_NAME"], t.StringName), "PackedByteArray": (k["BYTES"], None),
                  "int": (k["INT"], 1 if d.int_format == IntFormat.I64 else 0),
                  "float": (k["FLOAT"], {FloatFormat.F32: 1, FloatFormat.F64: 2}.get(d.float_format, 0)),
                  "Array": (k["ARRAY"], d.typed_arrays), "Dictionary": (k["DICTIONARY"], d.typed_dictionaries)}
        if name in simple:
            return simple[name]
        if family is Family.MATH and spec is not None:
            _, wide, make, arg = self.dec.math_plan(spec)
            # The library's own classes live as long as it does (their module holds them): the core
            # may leave their instances untracked by the GC (see atomic_tuple_subclass in _cdecode.c).
            lasting = isinstance(arg, type) and arg.__module__ == t.__name__
            return k["MATH"], (make, arg, spec.count, spec.component == I32,
                               0 if wide is None else 1 if d.real_is_double else 2, lasting)
        if family is Family.PACKED and spec is not None and (spec.component != I64 or d.int64_array_count_size == 4):
            typecode, size = COMPONENT_FORMATS[spec.component or ""]
            return k["PACKED"], (spec.cls.from_bytes, typecode, size, spec.width)  # type: ignore[attr-defined]
        if name == "PackedStringArray":
            return k["STRINGS"], (t.PackedStringArray.from_wire, t.PackedStringArray, d.packed_string_nul)
        if family is Family.OBJECT and d.object_format == ObjectFormat.ENGINE:
            return k["OBJECT"], t.EncodedObjectAsID
        return k["PY"], None

    def typed_array_head(self, buf: Any, pos: int, header: int, end: int) -> tuple[list[Any], int, int]:
        """A typed Array's element type and count, read by the reference (_open_array's rules)."""
        dec = self.dec
        element_type, pos = dec._read_container_type(buf, pos + 4, end, (header >> 16) & 3)
        count, pos = dec._read_count(buf, pos, end, 4, "Array")
        return ([] if element_type is None else t.TypedArray(element_type)), count, pos

    def typed_dict_head(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int, int]:
        """A typed Dictionary's key and value types and count (_open_dictionary's rules)."""
        dec = self.dec
        key_type, pos = dec._read_container_type(buf, pos + 4, end, (header >> 16) & 3)
        value_type, pos = dec._read_container_type(buf, pos, end, (header >> 18) & 3)
        count, pos = dec._read_count(buf, pos, end, 8, "Dictionary")
        return (key_type, value_type), count, pos


class _Walk:
    """One decode in progress: the input's word views, the open containers and where we are.

    The input is read through three zero-copy views of 32-bit words (u32, int32,
    float32) indexed by a word number ``w``, because every field of the format is
    4-byte aligned relative to the value's start: reading a header is one subscript
    and a read past the end is an ``IndexError`` instead of a length check per value.
    The innermost open container is ``kind``/``items``/``add``/``left``/``key``; the
    outer ones wait on ``stack``.  :meth:`leaves` reads the values commonest in save
    data straight into that container; :meth:`one` reads anything else by the
    dialect's dispatch table, which knows every rule and raises the precise error.
    """

    __slots__ = ("dec", "buf", "end", "base", "words", "ints", "floats", "nw", "base8", "w", "stack", "kind",
                 "items", "add", "left", "key", "memo", "top", "elements_left", "text", "fast", "marks")

    def __init__(self, dec: Decoder, buf: Any, offset: int, end: int) -> None:
        self.dec, self.buf, self.end = dec, buf, end
        self.stack: list[tuple[Any, ...]] = []
        self.memo: Memo = {}  # identities of the containers used as keys so far
        self.top: list[Any] = []
        self.kind: int = _TOP
        self.items: Any = self.top
        self.add: Any = self.top.append
        self.left = 1
        self.key: Any = None
        # Elements of Arrays, Dictionaries and Objects still allowed (packed arrays hold no
        # Python object per element and do not count); -1: no limit.
        self.elements_left = dec.max_elements if dec.max_elements is not None else -1
        # Strict UTF-8 is all valid input needs; anything else (surrogates a dialect
        # accepts, errors) goes to the String reader, which knows the rules.
        self.text: _Fn[[Any], str] = bytes.decode if type(buf) is bytes else _utf8
        self.fast = (*dec._fast_headers, dec._fixed, *dec._container_headers)
        self.marks = 0  # Decoder.decode_marked: flagged values never take the fast paths, only one()
        self.w = 0
        self.rebase(offset)

    def rebase(self, pos: int) -> None:
        """Views of the words from ``pos`` (after an unaligned field, such as an unpadded name)."""
        if self.base_set():
            self.release()
        self.base = pos
        self.words, self.ints, self.floats, self.nw, self.base8 = _views_at(self.buf, pos, self.end)
        self.w = 0

    def base_set(self) -> bool:
        return hasattr(self, "words")

    def release(self) -> None:
        self.words.release()
        self.ints.release()
        self.floats.release()

    def moveto(self, pos: int) -> None:
        w, odd = divmod(pos - self.base, 4)
        if odd:
            self.rebase(pos)
        else:
            self.w = w

    def run(self) -> tuple[Any, int]:
        while True:
            if self.left:
                self.leaves()
                if self.left:
                    self.one()
            elif self.close():
                return self.top[0], self.base + 4 * self.w

    def leaves(self) -> None:
        """Read Strings, int32s, float32s, Nils, bools, flagless math values and the headers
        of small untyped Arrays and Dictionaries into the innermost container, until it is
        full or another kind of value comes: no Python call per value."""
        words, nw, w, left, add = self.words, self.nw, self.w, self.left, self.add
        buf, text, base8, payload = self.buf, self.text, self.base8, self.base + 4
        h_int, h_float, h_string, fixed, h_array, h_dict = self.fast
        string_words, ints, floats = _STRING_WORDS, self.ints, self.floats
        try:
            while True:
                while left:
                    header = words[w]
                    if header == h_string:
                        n = words[w + 1]
                        stop = w + string_words[n]  # a long one is an IndexError: the String reader
                        if stop > nw:
                            break
                        p = 4 * w + base8
                        add(text(buf[p:p + n]))
                        w = stop
                    elif header == h_int:
                        add(ints[w + 1])
                        w += 2
                    elif header == h_float:
                        add(floats[w + 1])
                        w += 2
                    elif header in fixed:  # Nil, bool, the math types
                        make, arg, unpack, size = fixed[header]
                        if w + 1 + size > nw:
                            break
                        add(make(arg, unpack(buf, 4 * w + payload)))
                        w += 1 + size
                    elif header == h_dict or header == h_array:
                        count = words[w + 1] & COUNT_MASK
                        wanted = 2 * count if header == h_dict else count
                        if wanted > nw - w - 2 or (header == h_array and count >= 16):  # too few bytes; maybe a run
                            break
                        w += 2
                        add, left = self.push(header == h_dict, count, add, left, 4 * w + payload - 4)
                        continue
                    else:
                        break
                    left -= 1
                else:  # the innermost container is full: an Array or Dictionary closes here
                    if self.kind >= _OBJECT:
                        break
                    add, left = self.pop()
                    continue
                break
        except (IndexError, UnicodeDecodeError):
            pass  # the table reader raises the precise error, or decodes the odd case
        self.w, self.left, self.add = w, left, add

    def pop(self) -> tuple[Any, int]:
        """Close the innermost Array or Dictionary; return where the parent's values go and
        how many more it wants."""
        value = self.items if self.kind == _ARRAY else _dictionary(self.items, self.key, self.dec._key_rules,
                                                                   self.memo)
        self.kind, self.items, add, left, self.key = self.stack.pop()
        add(value)
        return add, left - 1

    def push(self, pairs: bool, count: int, add: Any, left: int, pos: int) -> tuple[Any, int]:
        """Open an untyped Array or Dictionary whose count was read at ``pos - 4``; return
        where its values go and how many it wants (an empty one is done at once: the
        parent's)."""
        if not count:
            add({} if pairs else [])
            return add, left - 1
        if self.elements_left >= 0:
            self.elements_left -= count
            if self.elements_left < 0:
                raise self.dec.too_many_elements(pos - 8)
        self.stack.append((self.kind, self.items, add, left, self.key))
        if len(self.stack) > self.dec.max_depth:
            raise _too_deep(pos, self.dec.max_depth)
        items: list[Any] = []
        self.kind, self.items, self.key = (_PAIRS if pairs else _ARRAY), items, None
        return items.append, (2 * count if pairs else count)

    def one(self) -> None:
        """Read the next value by the dispatch table: a leaf, or a container's own fields."""
        dec, buf, end = self.dec, self.buf, self.end
        pos = self.base + 4 * self.w
        if end - pos < 4:
            raise DecodeError(pos, f"expected a 4-byte type header, {max(end - pos, 0)} byte(s) left")
        header = u32_at(buf, pos)[0]
        type_id = header & dec.dialect.type_mask
        reader = dec._readers[type_id] if type_id < len(dec._readers) else None
        if reader is not None:
            value, pos = reader(buf, pos, header, end)
            if header & FLAG_64:
                mark = dec._flag_marks[type_id]
                if mark != MARK_SMALL_INT64 or -0x80000000 <= value <= 0x7FFFFFFF:
                    self.marks |= mark
            self.add(value)
            self.left -= 1
        else:
            pos = self.open(type_id, header, pos)
        self.moveto(pos)

    def open(self, type_id: int, header: int, pos: int) -> int:
        dec = self.dec
        kind = dec._containers.get(type_id)
        if kind is None:
            raise DecodeError(pos, f"unknown type id {type_id} (header 0x{header:08x}); "
                                   f"{dec.dialect.name} has ids 0-{dec.dialect.variant_max - 1}")
        frame, value, end = dec.open(kind, self.buf, pos, header, self.end)
        if self.elements_left >= 0:
            self.count_elements(pos, kind, frame, value)
        if frame is None:
            self.add(value)
            self.left -= 1
            return end
        self.stack.append((self.kind, self.items, self.add, self.left, self.key))
        if len(self.stack) > dec.max_depth:
            raise _too_deep(end, dec.max_depth)
        self.kind, self.items, self.left, self.key = frame
        if self.kind == _OBJECT:  # key is the first property's name
            self.add, self.left, self.key = partial(self.items.properties.__setitem__, self.key), 1, self.left - 1
        else:
            self.add = self.items.append
        return end

    def count_elements(self, pos: int, kind: int, frame: tuple[Any, ...] | None, value: Any) -> None:
        if frame is not None:
            self.elements_left -= frame[2] // 2 if frame[0] == _PAIRS else frame[2]
        elif kind == _ARRAY:
            self.elements_left -= len(value)
        if self.elements_left < 0:
            raise self.dec.too_many_elements(pos)

    def close(self) -> bool:
        """The innermost container has all its values (an Object: maybe another property
        follows).  True when that was the top level: the decode is done."""
        kind = self.kind
        if kind == _TOP:
            return True
        if kind == _OBJECT and self.key:  # another property: its name, then its value
            dec = self.dec
            name, pos = dec.read_string(self.buf, self.base + 4 * self.w, self.end, "property name",
                                        dec._padded_names)
            self.add, self.left, self.key = partial(self.items.properties.__setitem__, name), 1, self.key - 1
            self.moveto(pos)
            return False
        if kind == _PAIRS:
            value = _dictionary(self.items, self.key, self.dec._key_rules, self.memo)
        else:
            value = self.items
        self.kind, self.items, self.add, self.left, self.key = self.stack.pop()
        self.add(value)
        self.left -= 1
        return False


@lru_cache(maxsize=64)
def decoder_for(
    dialect: Dialect,
    allow_objects: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_size: int = DEFAULT_MAX_SIZE,
    max_elements: int | None = None,
) -> Decoder:
    """A shared Decoder for these options (building one builds its tables)."""
    return Decoder(dialect, allow_objects=allow_objects, max_depth=max_depth, max_size=max_size,
                   max_elements=max_elements)


#: What a row writer raises for a value it cannot write (a user-built value of the wrong shape
#: included): the library's EncodeError, with the value's path.  The compiled writer has the same
#: list (_cencode.c, load_reference_errors).
_REFUSALS = (EncodeError, struct.error, OverflowError, TypeError, AttributeError, IndexError)


def _changed(container: Any) -> EncodeError:
    """The one wording, in both backends, of a container that changed size under the writer."""
    return EncodeError(f"a {'dict' if isinstance(container, dict) else 'list'} changed size while it was written")


def _check_counts(counted: list[tuple[int, Any, int]]) -> None:
    """Raise for the innermost container on the walk whose size is no longer the count written."""
    for _, container, count in reversed(counted):
        if len(container) != count:
            raise _Failed(container, _changed(container)) from None


def _pop(stack: list[Iterator[Any]], counted: list[tuple[int, Any, int]]) -> None:
    """A container's elements are all written: its count must still be true."""
    if counted and counted[-1][0] == len(stack):
        _, container, count = counted.pop()
        if len(container) != count:
            raise _Failed(container, _changed(container))
    stack.pop()


class Encoder:
    """Writes values as bytes in one dialect: the reference writer.

    A value's writer is its registry row's (:func:`~godot_formats.registry.spec_for`,
    by class then base classes); containers give back their children, which an
    explicit stack writes, so any depth up to ``max_depth`` is fine.

    ``full_objects`` writes :class:`~godot_formats.types.Object` values with
    their class and properties; without it such values are refused, because the
    engine would write an instance id that only means something in its own
    process (write :class:`~godot_formats.types.EncodedObjectAsID` for that).
    """

    #: What fills the padding after NodePath names.  The engines before 4.6.3
    #: leave it uninitialised (godot#44999); we write zeros, as 4.6.3+ does.
    node_path_padding = b"\0"

    def __init__(self, dialect: Dialect, *, full_objects: bool = False, max_depth: int = DEFAULT_MAX_DEPTH,
                 backend: str | None = None) -> None:
        self.dialect = dialect
        self.full_objects = full_objects
        self.max_depth = max_depth
        self._utf8_errors = "surrogatepass" if dialect.utf8_surrogates else "strict"
        self._headers = {name: dialect.type_id(name) for name in dialect.types if name}
        int_id, float_id, string_id = (dialect.type_id(n) for n in ("int", "float", "String"))
        # Headers of the values _write_leaves writes itself; -1 where the dialect writes them otherwise.
        self._fast_headers = (
            int_id if int_id is not None and dialect.int_format == IntFormat.AUTO else -1,
            float_id if float_id is not None and dialect.float_format == FloatFormat.AUTO else -1,
            string_id if string_id is not None else -1,
        )
        array_id, dict_id = dialect.type_id("Array"), dialect.type_id("Dictionary")
        self._container_headers = (-1 if array_id is None else array_id, -1 if dict_id is None else dict_id)
        self._math_plans: dict[str, tuple[bytes, struct.Struct, _Fn[[Any], Any]]] = {}
        self._packed_plans: dict[str, tuple[_Fn[[int], bytes], str]] = {}
        self._writers: dict[type, _Fn[[bytearray, Any], Iterator[Any] | None]] = {Name: self.write_raw_name}
        self.backend = "c" if accel.choose(backend) else "python"
        self._c = self._c_writer() if self.backend == "c" else None
        #: What :func:`~godot_formats.api.dumps` calls: the compiled ``Writer.dumps`` (no Python
        #: frame for a small message, which costs about as much to reach as to write), or encode.
        self.dumps: _Fn[[Any], bytes] = self.encode
        if self._c is not None:
            self._c.bind(_LONE_TYPES, self._after_c)
            self.dumps = self._c.dumps

    def _c_writer(self) -> Any:
        """The compiled writer, with this dialect's headers, number formats and vector types."""
        d = self.dialect
        headers = tuple(self._headers.get(n, -1) for n in ("Nil", "bool", "int", "float", "String", "Array",
                                                            "Dictionary"))
        int_mode = {IntFormat.AUTO: 0, IntFormat.FLAG64: 1, IntFormat.I64: 2, IntFormat.I32: 3}[d.int_format]
        float_mode = {FloatFormat.AUTO: 0, FloatFormat.FLAG64: 1, FloatFormat.F32: 2,
                      FloatFormat.F64: 3}[d.float_format]
        math: dict[type, tuple[bytes, int, int]] = {}
        for spec in REGISTRY:
            if spec.family is Family.MATH and issubclass(spec.cls, t.Components) and d.has(spec.name) \
                    and spec.parts is not None and spec.count == len(spec.cls._fields):
                header, fmt, _ = self.math_plan(spec)
                math[spec.cls] = (header, spec.count, "fid".index(fmt.format[-1]))
        nul = d.packed_string_nul
        strings = None if not d.has("PackedStringArray") else (
            t.PackedStringArray, self._headers["PackedStringArray"], nul, partial(_string_parts, nul=nul))
        return accel.cencode.Writer(headers, int_mode, float_mode, math, self._c_leaf,  # type: ignore[union-attr]
                                    self.max_depth, bytes_header=self._headers.get("PackedByteArray", -1),
                                    strings=strings)

    def _c_leaf(self, value: Any) -> bytes | tuple[bytes, list[Any]]:
        """A value the compiled writer does not know, by its row's writer: its bytes, or for a
        container with children still to write (a typed Array, a Dictionary that is not a
        dict, a full Object), its head's bytes and the children, for the compiled walk."""
        out = bytearray()
        children = self.writer(value)(out, value)
        return bytes(out) if children is None else (bytes(out), list(children))

    def writer(self, value: Any) -> _Fn[[bytearray, Any], Iterator[Any] | None]:
        """The writer of ``value``'s type (its registry row's), remembered per class."""
        cls = type(value)
        writer = self._writers.get(cls)
        if writer is None:
            spec = spec_for(value)
            if spec is None:
                raise EncodeError(f"cannot encode a {cls.__name__} ({t.value_repr(value, 60)})")
            writer = self._writers[cls] = partial(spec.write, self, spec)
        return writer

    def encode(self, value: Any) -> bytes:
        if type(value) in _LONE_TYPES:  # one set lookup: a small message pays no more
            lone = self._lone_buffer(value)
            if lone is not None:
                return lone
        if self._c is not None:
            try:
                return self._c.encode(value)  # type: ignore[no-any-return]
            except accel.cencode.Fallback:  # type: ignore[union-attr]
                pass  # something the compiled core leaves to the reference: it decides
            except accel.cencode.LeafError as e:  # type: ignore[union-attr]
                raise _located(e.args[1], value, e.args[0]) from None  # the reference's error, as it says it
        return self._encode_reference(value)

    def _after_c(self, value: Any, error: BaseException | None) -> bytes:
        """What the compiled ``Writer.dumps`` leaves to Python: a lone buffer (``error`` None:
        :meth:`encode` copies it once), or the value its writer gave up on (Fallback: the
        reference writes it) or refused (LeafError: the reference's error, with the path)."""
        if error is None:
            return self.encode(value)
        if isinstance(error, accel.cencode.LeafError):  # type: ignore[union-attr]
            raise _located(error.args[1], value, error.args[0]) from None
        return self._encode_reference(value)

    def _encode_reference(self, value: Any) -> bytes:
        out = bytearray()
        try:  # as encode_into's, without its frame: a value that encodes itself again recurses as deep as before
            self._write_all(out, [iter((value,))])
        except _Failed as failed:
            raise _located(failed.error, value, failed.value) from None
        return bytes(out)

    def encode_frames(self, values: list[Any], byteorder: str = "little") -> bytes | None:
        """``values`` as consecutive ``store_var`` records (each behind its u32 length), in one call
        and one buffer: a save's plaintext.  None when the compiled core leaves any of it to the
        reference (and always in the pure-Python backend): the caller writes record by record then,
        which also names the record of an error."""
        if self._c is None or type(values) is not list or byteorder not in ("little", "big"):
            return None
        try:
            return self._c.encode_frames(values, byteorder == "big")  # type: ignore[no-any-return]
        except (accel.cencode.Fallback, accel.cencode.LeafError):  # type: ignore[union-attr]
            return None

    def _lone_buffer(self, value: Any) -> bytes | None:
        """A lone big buffer (a PackedByteArray save, a packed array) is copied once,
        not into a bytearray and then out of it."""
        if type(value) in _BUFFER_TYPES:
            value = byte_buffer(value)
            n = memoryview(value).nbytes
            return self._join(_HEADER_U32.pack(self.header("PackedByteArray"), n), value, _PADDING[-n & 3])
        if type(value) is t.PackedStringArray and (wire := value.wire(self.dialect.packed_string_nul)) is not None:
            return self._join(_HEADER_U32.pack(self.header("PackedStringArray"), len(value)), wire)
        spec = spec_for(value) if isinstance(value, t.PackedArray) else None
        if spec is not None and self.dialect.has(spec.name) and not _BIG_ENDIAN:
            head, typecode = self.packed_plan(spec)
            if value.data.typecode == typecode:
                return self._join(head(len(value)), value.data)
        return None

    def _join(self, *parts: Any) -> bytes:
        """The parts' bytes in one new bytes object: the compiled core's concat (huge pages
        for a big one), or b"".join."""
        if self._c is not None:
            try:
                return accel.cencode.concat(*parts)  # type: ignore[union-attr, no-any-return]
            except accel.cencode.Fallback:  # type: ignore[union-attr]
                pass
        return b"".join(parts)

    def encode_into(self, out: bytearray, value: Any) -> None:
        """Append the encoding of ``value`` to ``out``."""
        if self._c is not None:
            try:
                out += self._c.encode(value)
                return
            except accel.cencode.Fallback:  # type: ignore[union-attr]
                pass  # the reference decides
            except accel.cencode.LeafError as e:  # type: ignore[union-attr]
                raise _located(e.args[1], value, e.args[0]) from None
        try:
            self._write_all(out, [iter((value,))])
        except _Failed as failed:
            raise _located(failed.error, value, failed.value) from None

    def _write_all(self, out: bytearray, stack: list[Iterator[Any]]) -> None:
        """Write the values on ``stack`` and everything inside them.

        Strings, int32s, float32-exact floats and untyped Arrays and Dictionaries (the
        commonest values in save data) are written inline, without a Python call per
        value; anything else by its registry row's writer, which gives back the children
        of a container for the stack.  A failure is raised as :class:`_Failed`, with the
        value that failed, for :meth:`encode_into` to name its path.
        """
        h_int, h_float, h_string = self._fast_headers
        h_array, h_dict = self._container_headers
        pack_int, pack_float, pack_len = _HEADER_I32.pack, _HEADER_F32.pack, _HEADER_U32.pack
        f32_pack, f32_unpack, elements, max_depth = _f32.pack, _f32.unpack, self.elements, self.max_depth
        writers, writer_for = self._writers, self.writer
        # The Arrays and Dictionaries written inline, with their counts: Python code a row writer
        # runs (a value's __index__ ...) could change one under the walk, and a count that is no
        # longer true must not be written (the bytes would read back as other values).
        counted: list[tuple[int, Any, int]] = []
        v: Any = None
        try:
            while stack:
                for v in stack[-1]:
                    tv = type(v)
                    if tv is str and v.isascii():
                        raw = v.encode()
                        out += pack_len(h_string, len(raw))
                        out += raw
                        out += _PADDING[-len(raw) & 3]
                    elif tv is int and -0x80000000 <= v <= 0x7FFFFFFF and h_int >= 0:
                        out += pack_int(h_int, v)
                    elif tv is float and h_float >= 0 and _exact_f32(v, f32_pack, f32_unpack):
                        out += pack_float(h_float, v)
                    elif tv is dict and h_dict >= 0 and v and len(stack) <= max_depth:
                        out += pack_len(h_dict, len(v))
                        stack.append(chain.from_iterable(v.items()))
                        counted.append((len(stack), v, len(v)))
                        break
                    elif tv is list and h_array >= 0 and len(stack) <= max_depth:
                        out += pack_len(h_array, len(v))
                        children = elements(out, v)
                        if children is not None:
                            stack.append(children)
                            counted.append((len(stack), v, len(v)))
                            break
                    else:
                        children = (writers.get(tv) or writer_for(v))(out, v)
                        if children is not None:
                            if len(stack) > max_depth:
                                raise EncodeError(nesting_error(max_depth))
                            stack.append(children)
                            break
                else:
                    _pop(stack, counted)
        except _REFUSALS as e:
            raise _Failed(v, e) from None
        except RuntimeError:  # "dictionary changed size during iteration", or the caller's own
            _check_counts(counted)
            raise

    def header(self, name: str) -> int:
        """The type id of ``name`` in this dialect (an EncodeError where it has none)."""
        type_id = self._headers.get(name)
        if type_id is None:
            raise EncodeError(f"{self.dialect.name} has no {name} type")
        return type_id

    # -- primitive writers, for the wire functions -----------------------------------------

    def string_bytes(self, value: str) -> bytes:
        try:
            return value.encode("utf-8", self._utf8_errors)
        except UnicodeEncodeError as e:
            raise EncodeError(f"string has an unpaired surrogate at index {e.start}") from None

    def write_string(self, out: bytearray, value: str, padding: bytes = b"\0") -> None:
        raw = self.string_bytes(value)
        out += pack_u32(len(raw))
        out += raw
        out += padding * _pad4(len(raw))

    def write_raw_name(self, out: bytearray, value: str) -> None:
        if self.dialect.object_format == ObjectFormat.ENGINE:
            self.write_string(out, value)
        else:  # the 4.x page's unpadded names
            raw = self.string_bytes(value)
            out += pack_u32(len(raw))
            out += raw

    def elements(self, out: bytearray, value: Any) -> Iterator[Any] | None:
        """The elements of an Array still to write: none when it was written in one go."""
        if len(value) >= 16 and self._uniform_elements(out, value):
            return None
        # At most the count written: a list that the caller's code grows while it is written ends
        # there (and is refused then, by _pop), as in the compiled core.
        return islice(value, len(value)) if value else None

    def _uniform_elements(self, out: bytearray, value: Any) -> bool:
        """Write a list made only of int32s (or only of float32-exact floats) at C speed.

        The (header, payload) pairs are built in one array and appended as a
        buffer: no intermediate bytes objects.
        """
        h_int, h_float, _ = self._fast_headers
        if _BIG_ENDIAN:  # pragma: no cover
            return False
        kinds = set(map(type, value))
        n = len(value)
        words: array[Any]
        try:
            if kinds == {int} and h_int >= 0:
                words = array("i", (h_int, 0)) * n
                words[1::2] = array("i", value)
            elif kinds == {float} and h_float >= 0:
                numbers = array("f", value)
                if array("d", numbers) != array("d", value):
                    return False  # some need 64 bits (or are NaN): the general path decides
                words = array("f", _HEADER_U32.pack(h_float, 0)) * n  # the header's bits, as they are
                words[1::2] = numbers
            else:
                return False
        except OverflowError:
            return False
        out += words
        return True

    def container_type(self, ct: t.ContainerType | None) -> tuple[int, bytes]:
        """The header kind bits and the bytes that describe one container type."""
        if ct is None:
            return 0, b""
        kind = ct.kind
        if kind == 1:
            return 1, pack_u32(self.header(ct.builtin))
        buf = bytearray()
        if not self.full_objects:
            # What the engine writes when objects travel as ids (godot#94379).
            self.write_string(buf, "EncodedObjectAsID")
            return 2, bytes(buf)
        self.write_string(buf, ct.script if kind == 3 else ct.class_name)  # type: ignore[arg-type]
        return kind, bytes(buf)

    def write_string_elements(self, out: bytearray, value: t.PackedStringArray) -> None:
        """A PackedStringArray's elements (after its header and count)."""
        nul = self.dialect.packed_string_nul
        wire = value.wire(nul)
        if wire is not None:  # read in this layout and unchanged: the bytes it was read from
            out += wire
            return
        if not self._ascii_elements(out, value, nul):
            self._elements_one_by_one(out, value, nul)

    def _ascii_elements(self, out: bytearray, value: t.PackedStringArray, nul: bool) -> bool:
        """Every piece of an ASCII body from a table, joined at C speed: no Python loop."""
        try:
            if not "".join(value).isascii():
                return False
        except TypeError:  # not all strings: the loop says which
            return False
        heads, ends = _join_tables(nul)
        lengths = list(map(len, value))
        try:
            body = "".join(chain.from_iterable(zip(map(heads.__getitem__, lengths), value,
                                                   map(ends.__getitem__, lengths))))
        except IndexError:  # a long string: the loop
            return False
        out += body.encode("latin-1")  # the heads' bytes as they are, the ASCII text as UTF-8
        return True

    def _elements_one_by_one(self, out: bytearray, value: t.PackedStringArray, nul: bool) -> None:
        # What follows each text: the engines' NUL (counted in the length), then padding.
        extra = 1 if nul else 0
        tails = (b"\0\0\0\0", b"\0\0\0", b"\0\0", b"\0") if extra else (b"", b"\0\0\0", b"\0\0", b"\0")
        for s in value:
            if not isinstance(s, str):
                raise EncodeError(f"PackedStringArray holds a {type(s).__name__}, not a String")
            try:
                raw = s.encode()  # strict UTF-8: the same bytes whenever it succeeds
            except UnicodeEncodeError:
                raw = self.string_bytes(s)
            n = len(raw)
            out += pack_u32(n + extra)
            out += raw
            out += tails[n & 3]

    def math_plan(self, spec: TypeSpec) -> tuple[bytes, struct.Struct, _Fn[[Any], Any]]:
        """How this dialect writes a math type: its header, its numbers' struct, how to get them."""
        plan = self._math_plans.get(spec.name)
        if plan is None:
            row = self.dialect.math_type(spec.name)
            wide = row.component == REAL and self.dialect.real_is_double
            fmt = struct.Struct(f"<{row.count}{'d' if wide else 'i' if row.component == I32 else 'f'}")
            header = pack_u32(self.header(spec.name) | (FLAG_64 if wide else 0))
            plan = self._math_plans[spec.name] = (header, fmt, row.to_wire)
        return plan

    def packed_plan(self, spec: TypeSpec) -> tuple[_Fn[[int], bytes], str]:
        """How this dialect writes a packed array: its header and count, and the typecode of its numbers."""
        plan = self._packed_plans.get(spec.name)
        if plan is None:
            wide = spec.component == REAL and self.dialect.real_is_double
            typecode, _, count_size = packed_layout(spec, wide, self.dialect.int64_array_count_size)
            header = pack_u32(self.header(spec.name) | (FLAG_64 if wide else 0))
            count = _u64.pack if count_size == 8 else pack_u32
            plan = self._packed_plans[spec.name] = ((lambda n: header + count(n)), typecode)
        return plan


class _Failed(Exception):
    """Inside the encoder: the value whose writer failed, and how."""

    def __init__(self, value: Any, error: Exception) -> None:
        super().__init__(value, error)
        self.value, self.error = value, error


def _located(error: Exception, root: Any, value: Any) -> EncodeError:
    """The library's error for a failed write, naming where ``value`` sits in ``root``."""
    if isinstance(error, EncodeError):
        if error.path or value is root:
            return error
        return EncodeError(path=_find_path(root, value) or "<inside>", **error.reason_in())
    # A field of the wrong type or range that no writer checks (a user-built value):
    # still only the library's error, with the path.
    reason = f"cannot encode a {type(value).__name__}: {error}"
    return EncodeError(reason, "" if value is root else _find_path(root, value) or "<inside>")


def _exact_f32(v: float, pack: _Fn[[float], bytes], unpack: _Fn[[bytes], tuple[float]]) -> bool:
    try:
        return unpack(pack(v))[0] == v
    except OverflowError:
        return False


@lru_cache(maxsize=64)
def encoder_for(dialect: Dialect, full_objects: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> Encoder:
    """A shared Encoder for these options."""
    return Encoder(dialect, full_objects=full_objects, max_depth=max_depth)


def _find_path(root: Any, target: Any, limit: int = 100_000) -> str:
    """The path (``[2]["key"]``) of the first place ``target`` sits in ``root``.

    Only used to explain an EncodeError, so it may be slow but never recurses.
    """
    todo: list[tuple[Any, str]] = [(root, "")]
    seen = 0
    while todo and seen < limit:
        node, path = todo.pop()
        seen += 1
        if node is target:
            return path
        if is_array(node):
            todo.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
        elif is_dictionary(node):
            for k, v in reversed(list(node.items())):
                shown = t.value_repr(k, 40)
                todo.append((v, f"{path}[{shown}]"))
                todo.append((k, f"{path}<key {shown}>"))
        elif isinstance(node, t.Object):
            todo.extend((v, f"{path}.{k}") for k, v in reversed(list(node.properties.items())))
    return ""


# wire.py's payload functions see the reader and the writer through the roles it declares (it
# cannot import this module): the type checker proves here that Decoder and Encoder play them.
_READER: type[Reader] = Decoder
_WRITER: type[Writer] = Encoder
