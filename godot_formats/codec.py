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
from itertools import chain, repeat
from typing import Any, Iterator
from typing import Callable as _Fn

from . import types as t
from .dialects import (
    F32,
    FLAG_64,
    I32,
    MATH_TYPES,
    PACKED_TYPES,
    REAL,
    UNSUPPORTED,
    Dialect,
    FloatFormat,
    IntFormat,
    ObjectFormat,
    RidFormat,
)
from .errors import DecodeError, EncodeError
from .keys import KeyRules, Memo, python_keys_agree

__all__ = ["Decoder", "Encoder", "decoder_for", "encoder_for", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_SIZE"]

#: The engines refuse values nested deeper than this (Variant::MAX_RECURSION_DEPTH).
DEFAULT_MAX_DEPTH = 1024
#: The engines take a buffer length as an int32: no value is larger than this.
DEFAULT_MAX_SIZE = 0x7FFFFFFF

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
i32_at = _i32.unpack_from
pack_u32 = _u32.pack

_BIG_ENDIAN = sys.byteorder == "big"
_HEADER_I32 = struct.Struct("<Ii")
_HEADER_F32 = struct.Struct("<If")
_HEADER_U32 = struct.Struct("<II")
_NOTHING = struct.Struct("<")  # unpacks ()
_PADDING = (b"", b"\0", b"\0\0", b"\0\0\0")
_BUFFER_TYPES = (bytes, bytearray, memoryview)
_COMPONENT_FORMATS = {F32: ("f", 4), I32: ("i", 4), "i64": ("q", 8), "f64": ("d", 8)}

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
    anything else is built by its table row."""
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
    return DecodeError(pos, f"value nested deeper than {max_depth} levels")


def _pad4(n: int) -> int:
    return (4 - n % 4) % 4


class Decoder:
    """Reads one value from bytes in one dialect.

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
    ) -> None:
        self.dialect = dialect
        self.allow_objects = allow_objects
        self.max_depth = max_depth
        self.max_size = max_size
        self.max_elements = max_elements
        self._key_rules = dialect.key_rules
        self._utf8_errors = "surrogatepass" if dialect.utf8_surrogates else "strict"
        readers: list[_Fn[..., tuple[Any, int]] | None] = [None] * len(dialect.types)
        containers: dict[int, int] = {}
        for type_id, name in enumerate(dialect.types):
            if name == "Array":
                containers[type_id] = _ARRAY
            elif name == "Dictionary":
                containers[type_id] = _DICT
            elif name == "Object" and dialect.object_format != ObjectFormat.HEADER:
                containers[type_id] = _OBJECT
            else:
                readers[type_id] = self._reader_for(name)
        self._readers = readers
        self._containers = containers
        # The fixed-size values whose header has no flag bits, read inline by
        # decode() as ``make(arg, unpack(buf, payload offset))``: rows of C
        # callables, so reading one costs no Python-level call.
        self._fixed: dict[int, tuple[_Fn[[Any, Any], Any], Any, _Fn[[Any, int], Any], int]] = {}
        for type_id, name in enumerate(dialect.types):
            if name == "Nil":
                self._fixed[type_id] = (dict.get, {}, _NOTHING.unpack_from, 0)  # {}.get(()) is None
            elif name == "bool":
                self._fixed[type_id] = (operator.ne, (0,), u32_at, 1)  # (0,) != (n,)
            elif name in MATH_TYPES:
                row = dialect.math_type(name)
                narrow, make, arg = _math_build(row)
                self._fixed[type_id] = (make, arg, narrow.unpack_from, row.count)
        self._padded_names = dialect.object_format == ObjectFormat.ENGINE
        self._builtin_container_types = [None if n in ("Nil", UNSUPPORTED) else t.ContainerType(n)
                                         for n in dialect.types]
        # Headers (type id, no flags) of int32, float32 and String, read inline by
        # decode(); -1 where the dialect gives that header another meaning.
        int_id, float_id, string_id = (dialect.type_id(n) for n in ("int", "float", "String"))
        self._fast_headers = (
            int_id if int_id is not None and dialect.int_format != IntFormat.I64 else -1,
            float_id if float_id is not None and dialect.float_format != FloatFormat.F64 else -1,
            string_id if string_id is not None else -1,
        )
        # Headers of an untyped Array / Dictionary (no flag bits), opened inline.
        array_id, dict_id = dialect.type_id("Array"), dialect.type_id("Dictionary")
        self._container_headers = (-1 if array_id is None else array_id, -1 if dict_id is None else dict_id)

    # -- the main loop -------------------------------------------------------

    def decode(self, data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None) -> tuple[Any, int]:
        """Decode the value at ``offset``; return it and the offset just after it.

        ``end`` bounds the value (e.g. a frame inside a larger buffer) without copying.

        Every field of the format is 4-byte aligned relative to the value's
        start, so the input is read through three zero-copy views of 32-bit words
        (as u32, int32 and float32), indexed by a word number ``w``: reading a
        header is one subscript, and a read past the end is an ``IndexError``
        instead of a length check per value.  The innermost open container lives
        in local variables (``kind``, ``items``, ``add``, ``left``, ``key``) and
        outer ones wait on ``stack``.  The inner loop reads the values commonest
        in save data (String, int, float, Nil, bool, the math types, and the
        headers of untyped Arrays and Dictionaries) straight into that
        container; anything else, and anything odd about
        those (cut short, not strict UTF-8), goes to the table readers, which
        know every rule and raise the precise :class:`DecodeError`.
        """
        buf = data if isinstance(data, bytes) else memoryview(data).cast("B")
        end = len(buf) if end is None else min(end, len(buf))
        if offset < 0:  # Python would count it from the end
            raise DecodeError(offset, "offset is negative")
        if end - offset > self.max_size:
            raise DecodeError(offset, f"{end - offset} bytes of input exceed max_size={self.max_size}")
        # Elements of Arrays, Dictionaries and Objects still allowed (packed arrays hold no
        # Python object per element and do not count).
        elements_left = self.max_elements if self.max_elements is not None else -1
        readers, containers = self._readers, self._containers
        n_readers = len(readers)
        mask, max_depth = self.dialect.type_mask, self.max_depth
        h_int, h_float, h_string = self._fast_headers
        h_array, h_dict = self._container_headers
        uniform, fixed, string_words = self._uniform_run, self._fixed, _STRING_WORDS
        # Strict UTF-8 is all valid input needs; anything else (surrogates a
        # dialect accepts, errors) goes to the table reader, which knows the rules.
        text: _Fn[[Any], str] = bytes.decode if type(buf) is bytes else _utf8
        stack: list[tuple[Any, ...]] = []
        memo: Memo = {}  # identities of the containers used as keys so far
        top: list[Any] = []
        kind: int = _TOP
        items: Any = top  # the innermost open container's list (or Object)
        add: Any = top.append  # where its next value goes
        left = 1  # values it still wants
        key: Any = None  # a Dictionary's types; how many more properties an Object has
        value: Any = None
        base = offset  # byte offset of word 0 (moves only after an unaligned field)
        words, ints, floats, nw, base8 = _views_at(buf, base, end)
        w = 0
        try:
            while True:
                try:
                    while left:
                        header = words[w]
                        if header == h_string:
                            n = words[w + 1]
                            stop = w + string_words[n]  # a long one is an IndexError: the table reader
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
                        elif header == h_array or header == h_dict:
                            count = words[w + 1] & COUNT_MASK
                            pairs = header == h_dict  # a Dictionary wants a key and a value per entry
                            if (2 * count if pairs else count) > nw - w - 2:
                                break
                            if elements_left >= 0:
                                elements_left -= count
                                if elements_left < 0:
                                    raise self._too_many_elements(base + 4 * w)
                            w += 2
                            value = []
                            if count >= 16 and not pairs:
                                w = (uniform(buf, base + 4 * w, end, value, count) - base) >> 2
                            if len(value) < count:
                                stack.append((kind, items, add, left, key))
                                if len(stack) > max_depth:
                                    raise _too_deep(base + 4 * w, max_depth)
                                kind, items, add = (_PAIRS if pairs else _ARRAY), value, value.append
                                left, key = (2 * count if pairs else count), None
                                continue
                            add({} if pairs else value)
                        elif header in fixed:  # Nil, bool, the math types
                            make, arg, unpack, size = fixed[header]
                            if w + 1 + size > nw:
                                break
                            add(make(arg, unpack(buf, 4 * w + base + 4)))
                            w += 1 + size
                        else:
                            break
                        left -= 1
                    else:
                        # The innermost container has all its values.
                        if kind == _ARRAY:
                            value = items
                        elif kind == _PAIRS:
                            value = _dictionary(items, key, self._key_rules, memo)
                        elif kind == _OBJECT:
                            if key:  # another property: its name, then its value
                                name, pos = self.read_string(buf, base + 4 * w, end, "property name",
                                                             self._padded_names)
                                add, left, key = partial(items.properties.__setitem__, name), 1, key - 1
                                w = (pos - base) >> 2
                                if (pos - base) & 3:
                                    base, w = pos, 0
                                    words, ints, floats, nw, base8 = _views_at(buf, base, end)
                                continue
                            value = items
                        else:  # _TOP
                            return top[0], base + 4 * w
                        kind, items, add, left, key = stack.pop()
                        add(value)
                        left -= 1
                        continue
                except (IndexError, UnicodeDecodeError):
                    pass  # the table reader below raises the precise error, or decodes the odd case
                # Any other value, by the dialect's tables.
                pos = base + 4 * w
                if end - pos < 4:
                    raise DecodeError(pos, f"expected a 4-byte type header, {max(end - pos, 0)} byte(s) left")
                header = u32_at(buf, pos)[0]
                type_id = header & mask
                reader = readers[type_id] if type_id < n_readers else None
                if reader is not None:
                    value, pos = reader(buf, pos, header, end)
                    add(value)
                    left -= 1
                else:
                    ckind = containers.get(type_id)
                    if ckind is None:
                        raise DecodeError(pos, f"unknown type id {type_id} (header 0x{header:08x}); "
                                               f"{self.dialect.name} has ids 0-{self.dialect.variant_max - 1}")
                    start = pos
                    frame, value, pos = self._open(ckind, buf, pos, header, end)
                    if elements_left >= 0:
                        if frame is not None:
                            elements_left -= frame[2] // 2 if frame[0] == _PAIRS else frame[2]
                        elif ckind == _ARRAY:
                            elements_left -= len(value)
                        if elements_left < 0:
                            raise self._too_many_elements(start)
                    if frame is None:
                        add(value)
                        left -= 1
                    else:
                        stack.append((kind, items, add, left, key))
                        if len(stack) > max_depth:
                            raise _too_deep(pos, max_depth)
                        kind, items, left, key = frame
                        if kind == _OBJECT:  # key is the first property's name
                            add, left, key = partial(items.properties.__setitem__, key), 1, left - 1
                        else:
                            add = items.append
                w = (pos - base) >> 2
                if (pos - base) & 3:  # an unaligned field (a page's unpadded name, a cut PackedByteArray)
                    base, w = pos, 0
                    words, ints, floats, nw, base8 = _views_at(buf, base, end)
        finally:
            # Let go of the input at once: a bytearray with views on it cannot be resized.
            words.release()
            ints.release()
            floats.release()

    def _too_many_elements(self, pos: int) -> DecodeError:
        return DecodeError(pos, f"more than max_elements={self.max_elements} Array elements, "
                                "Dictionary entries and Object properties")

    def _open(self, kind: int, buf: Any, pos: int, header: int, end: int) -> tuple[tuple[Any, ...] | None, Any, int]:
        """Read a container's own fields; return a frame for its elements, or the finished value."""
        start = pos
        pos += 4
        if kind == _OBJECT:
            return self._open_object(buf, start, header, end)
        d = self.dialect
        if kind == _ARRAY:
            element_type = None
            if d.typed_arrays and header & (3 << 16):
                element_type, pos = self._read_container_type(buf, pos, end, (header >> 16) & 3)
            count, pos = self._read_count(buf, pos, end, 4, "Array")
            items: list[Any] = [] if element_type is None else t.TypedArray(element_type)
            if count >= 16:
                pos = self._uniform_run(buf, pos, end, items, count)
            if len(items) == count:
                return None, items, pos
            return (_ARRAY, items, count, None), None, pos
        types = None
        if d.typed_dictionaries and header & (15 << 16):
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
            raise DecodeError(start, "a full Object is only decoded with allow_objects=True")
        padded = form == ObjectFormat.ENGINE
        class_name, pos = self.read_string(buf, pos, end, "Object class name", padded)
        if not class_name:
            return None, None, pos  # what pre-3.2 engines and the 4.x page write for a null Object
        self._need(pos, end, 4, "Object property count")
        if u32_at(buf, pos)[0] > INT32_MAX:
            # The engines read the count as an int32: a negative one means no properties.
            return None, t.Object(class_name), pos + 4
        count, pos = self._read_count(buf, pos, end, 8, "Object property")
        obj = t.Object(class_name)
        if count == 0:
            return None, obj, pos
        name, pos = self.read_string(buf, pos, end, "property name", padded)
        return (_OBJECT, obj, count, name), None, pos

    # -- primitive readers ---------------------------------------------------------

    def _read_count(self, buf: Any, pos: int, end: int, min_size: int, what: str) -> tuple[int, int]:
        if end - pos < 4:
            raise DecodeError(pos, f"{what} count needs 4 bytes, {max(end - pos, 0)} left")
        count = u32_at(buf, pos)[0] & COUNT_MASK
        left = end - pos - 4
        if count * min_size > left:
            raise DecodeError(pos, f"{what} count {count} needs at least {count * min_size} bytes, {left} left")
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
        what = "container class name" if kind == 2 else "container script path"
        text, new_pos = self.read_string(buf, pos, end, what)
        if kind == 2:
            return t.ContainerType.of_class(text), new_pos
        if self.allow_objects and not text.startswith("res://"):
            raise DecodeError(pos, f"container script path {text!r} is not a res:// path")
        return t.ContainerType.of_script(text), new_pos

    def _reader_for(self, name: str) -> _Fn[..., tuple[Any, int]]:
        """The payload reader for one type: a closure over the row of its table."""
        if name == UNSUPPORTED:
            return self._read_unsupported
        if name in MATH_TYPES:
            return self._math_reader(name)
        if name in PACKED_TYPES:
            return self._packed_reader(name)
        return getattr(self, "_read_" + name)  # type: ignore[no-any-return]

    def _need(self, pos: int, end: int, size: int, what: str) -> None:
        if end - pos < size:
            raise DecodeError(pos, f"{what} needs {size} bytes, {max(end - pos, 0)} left")

    def _read_unsupported(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        """An id the dialect's table leaves empty: reserved, and unreadable in this dialect."""
        type_id = header & self.dialect.type_mask
        raise DecodeError(pos, f"type id {type_id} (header 0x{header:08x}) is not supported by {self.dialect.name} "
                               "(an empty slot in its type table)")

    def _read_Nil(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        return None, pos + 4

    def _read_bool(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        self._need(pos + 4, end, 4, "bool")
        return u32_at(buf, pos + 4)[0] != 0, pos + 8

    def _read_int(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        if header & FLAG_64 or self.dialect.int_format == IntFormat.I64:
            self._need(pos + 4, end, 8, "64-bit int")
            return _i64.unpack_from(buf, pos + 4)[0], pos + 12
        self._need(pos + 4, end, 4, "int")
        return i32_at(buf, pos + 4)[0], pos + 8

    def _read_float(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        fmt = self.dialect.float_format
        if (header & FLAG_64 and fmt != FloatFormat.F32) or fmt == FloatFormat.F64:
            self._need(pos + 4, end, 8, "64-bit float")
            return _f64.unpack_from(buf, pos + 4)[0], pos + 12
        self._need(pos + 4, end, 4, "float")
        return _f32.unpack_from(buf, pos + 4)[0], pos + 8

    def _read_String(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        return self.read_string(buf, pos + 4, end)

    def _read_StringName(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        text, pos = self.read_string(buf, pos + 4, end, "StringName")
        return t.StringName(text), pos

    def _read_NodePath(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        pos += 4
        self._need(pos, end, 4, "NodePath name count")
        name_count = u32_at(buf, pos)[0]
        if name_count & NODE_PATH_NEW_FORMAT:
            self._need(pos, end, 12, "NodePath header")
        name_count, subname_count, flags = (name_count, 0, 0) if not name_count & NODE_PATH_NEW_FORMAT \
            else struct.unpack_from("<III", buf, pos)
        if not name_count & NODE_PATH_NEW_FORMAT:
            if self.dialect.node_path_old_format:
                text, pos = self.read_string(buf, pos, end, "NodePath")
                return t.NodePath(text), pos
            raise DecodeError(pos, "NodePath in the old string format (bit 31 of the name count clear)")
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
            part, pos = self.read_string(buf, pos, end, "NodePath name")
            parts.append(part)
        return t.NodePath(names=parts[:name_count], subnames=parts[name_count:], absolute=bool(flags & 1)), pos

    def _read_RID(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        rid_format = self.dialect.rid_format
        if rid_format == RidFormat.NONE:
            return t.RID(), pos + 4
        if rid_format == RidFormat.UNSUPPORTED:
            raise DecodeError(pos, f"{self.dialect.name} has no RID encoding")
        self._need(pos + 4, end, 8, "RID")
        return t.RID(_u64.unpack_from(buf, pos + 4)[0]), pos + 12

    def _read_Object(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        # Only dialects whose Object is the header alone (Godot 2) read it as a leaf: null.
        return None, pos + 4

    def _read_Image(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        """Godot 2: format, mipmaps, width, height, data length, data, padding to 4."""
        pos += 4
        self._need(pos, end, 20, "Image header")
        fmt, mipmaps, width, height, n = struct.unpack_from("<5I", buf, pos)
        start = pos + 20
        if n > end - start:  # checked before the data is copied
            raise DecodeError(pos + 16, f"Image data length {n} runs past the end: {end - start} byte(s) left")
        # Like a PackedByteArray's, the final padding need not be present.
        return t.Image(fmt, mipmaps, width, height, bytes(buf[start:start + n])), min(start + n + _pad4(n), end)

    def _read_InputEvent(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        """Godot 2: u32 event type, u32 device, u32 size, then the type's payload words.

        How many payload words follow is decided by the event type, as the
        engine's decoder does; the size word is kept but not trusted.
        """
        pos += 4
        self._need(pos, end, 12, "InputEvent header")
        kind, device, size = struct.unpack_from("<3I", buf, pos)
        words = t.INPUT_EVENT_PAYLOAD_WORDS.get(kind, 0)
        self._need(pos + 12, end, 4 * words, f"InputEvent ({t.InputEvent(kind).type_name}) payload")
        payload = struct.unpack_from(f"<{words}I", buf, pos + 12)
        event = t.InputEvent(kind, device, payload, None if size == 12 + 4 * words else size)
        return event, pos + 12 + 4 * words

    def _read_Callable(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        return t.Callable(), pos + 4

    def _read_Signal(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        name, pos = self.read_string(buf, pos + 4, end, "Signal name")
        self._need(pos, end, 8, "Signal object id")
        return t.Signal(name, _u64.unpack_from(buf, pos)[0]), pos + 8

    def _read_PackedByteArray(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        count, start = self._read_packed_count(buf, pos + 4, end, 1, "PackedByteArray")
        # The engine does not require the final padding to be present.
        return bytes(buf[start:start + count]), min(start + count + _pad4(count), end)

    def _read_PackedStringArray(self, buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
        pos += 4
        self._need(pos, end, 4, "PackedStringArray count")
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
        # One tight loop: strict bytes.decode (twice as fast as str(raw, "utf-8",
        # errors), and the same text whenever it succeeds).  Anything odd -- cut
        # short, bad UTF-8, surrogates a dialect accepts -- is left to the
        # element-by-element reader, which raises or decodes by the dialect's rules.
        if type(buf) is not bytes:
            return self._read_strings_one_by_one(buf, pos, count, end)
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
            return self._read_strings_one_by_one(buf, pos, count, end)
        if p > end:  # offsets only grow: an element ran past the end
            return self._read_strings_one_by_one(buf, pos, count, end)
        return t.PackedStringArray(out), p

    def _read_strings_one_by_one(self, buf: Any, pos: int, count: int, end: int) -> tuple[Any, int]:
        out: list[str] = []
        read = self.read_string
        nul = self.dialect.packed_string_nul
        for _ in range(count):
            s, pos = read(buf, pos, end, "PackedStringArray element")
            out.append(s[:-1] if nul and s.endswith("\0") else s)
        return t.PackedStringArray(out), pos

    def _read_packed_count(self, buf: Any, pos: int, end: int, size: int, what: str) -> tuple[int, int]:
        self._need(pos, end, 4, f"{what} count")
        count = u32_at(buf, pos)[0]
        left = end - pos - 4
        if count > INT32_MAX or count * size > left:
            shown = count - (1 << 32) if count > INT32_MAX else count
            raise DecodeError(pos, f"{what} count {shown} needs {shown * size} bytes, {left} left")
        return count, pos + 4

    def _math_reader(self, name: str) -> _Fn[..., tuple[Any, int]]:
        row = self.dialect.math_type(name)
        narrow, make, arg = _math_build(row)
        wide = struct.Struct(f"<{row.count}d") if row.component == REAL and self.dialect.math_flag_64 else None

        # A single-precision engine reads doubles into its 32-bit real_t, so values
        # that differ only beyond float32 become equal (and may merge as keys).
        narrow_doubles = not self.dialect.real_is_double

        def read(buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
            s = wide if (wide is not None and header & FLAG_64) else narrow
            if end - pos - 4 < s.size:
                raise DecodeError(pos + 4, f"{name} needs {s.size} bytes, {max(end - pos - 4, 0)} left")
            parts: Any = s.unpack_from(buf, pos + 4)
            if s is wide and narrow_doubles:
                parts = array("f", parts).tolist()
            return make(arg, parts), pos + 4 + s.size

        return read

    def _packed_reader(self, name: str) -> _Fn[..., tuple[Any, int]]:
        cls, component = PACKED_TYPES[name]
        if component in _COMPONENT_FORMATS:
            narrow_tc, narrow_size = _COMPONENT_FORMATS[component]
        else:  # REAL
            narrow_tc, narrow_size = "f", 4
        wide = component == REAL and self.dialect.math_flag_64
        count_size = self.dialect.int64_array_count_size if component == "i64" else 4
        width = cls.width
        narrow_doubles = component == REAL and not self.dialect.real_is_double

        def read(buf: Any, pos: int, header: int, end: int) -> tuple[Any, int]:
            tc, size = ("d", 8) if wide and header & FLAG_64 else (narrow_tc, narrow_size)
            pos += 4
            if count_size == 8:  # a documentation page's 8-byte length field
                self._need(pos, end, 8, f"{name} count")
                count = _u64.unpack_from(buf, pos)[0]
                start, left = pos + 8, end - pos - 8
                if count * size * width > left:
                    raise DecodeError(pos, f"{name} count {count} needs {count * size * width} bytes, {left} left")
            else:
                count, start = self._read_packed_count(buf, pos, end, size * width, name)
            stop = start + count * size * width
            packed = cls.from_bytes(memoryview(buf)[start:stop], tc)  # one copy: into the array
            if tc == "d" and narrow_doubles:
                packed.data = array("f", packed.data)  # into the engine's 32-bit real_t
            return packed, stop

        return read


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


class _Name(str):
    """A raw string (an Object property name) inside the writer's value stream."""

    __slots__ = ()


class Encoder:
    """Writes values as bytes in one dialect.

    ``full_objects`` writes :class:`~godot_formats.types.Object` values with
    their class and properties; without it such values are refused, because the
    engine would write an instance id that only means something in its own
    process (write :class:`~godot_formats.types.EncodedObjectAsID` for that).
    """

    def __init__(self, dialect: Dialect, *, full_objects: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.dialect = dialect
        self.full_objects = full_objects
        self.max_depth = max_depth
        self._utf8_errors = "surrogatepass" if dialect.utf8_surrogates else "strict"
        self._headers = {name: dialect.type_id(name) for name in dialect.types if name}
        nil_id = dialect.type_id("Nil")
        # Nil's header, written through the table like every other (b"": the dialect has no Nil).
        self._nil_header = b"" if nil_id is None else pack_u32(nil_id)
        int_id, float_id, string_id = (dialect.type_id(n) for n in ("int", "float", "String"))
        # Headers of the values written inline; -1 where the dialect writes them otherwise.
        self._fast_headers = (
            int_id if int_id is not None and dialect.int_format == IntFormat.AUTO else -1,
            float_id if float_id is not None and dialect.float_format == FloatFormat.AUTO else -1,
            string_id if string_id is not None else -1,
        )
        array_id, dict_id = dialect.type_id("Array"), dialect.type_id("Dictionary")
        self._container_headers = (-1 if array_id is None else array_id, -1 if dict_id is None else dict_id)
        writers: dict[type, _Fn[[bytearray, Any], Iterator[Any] | None]] = {
            type(None): self._write_nil,
            bool: self._write_bool,
            int: self._write_int,
            float: self._write_float,
            str: self._write_string,
            t.StringName: self._write_string_name,
            _Name: self._write_raw_name,
            list: self._write_array,
            tuple: self._write_array,
            t.TypedArray: self._write_typed_array,
            dict: self._write_dictionary,
            t.Dictionary: self._write_dictionary,
            t.TypedDictionary: self._write_typed_dictionary,
            bytes: self._write_bytes,
            bytearray: self._write_bytes,
            memoryview: self._write_bytes,
            t.NodePath: self._write_node_path,
            t.RID: self._write_rid,
            t.Object: self._write_object,
            t.EncodedObjectAsID: self._write_object_id,
            t.Callable: self._write_callable,
            t.Signal: self._write_signal,
            t.PackedStringArray: self._write_packed_strings,
            t.Image: self._write_image,
            t.InputEvent: self._write_input_event,
        }
        for name, row in MATH_TYPES.items():
            writers[row.cls] = self._math_writer(name)
        self._packed_heads: dict[type, tuple[_Fn[[int], bytes], str]] = {}
        for name, (cls, component) in PACKED_TYPES.items():
            writers[cls] = self._packed_writer(name, component)
        self._writers = writers

    def encode(self, value: Any) -> bytes:
        if type(value) in _BUFFER_TYPES:
            # A lone big buffer (a PackedByteArray save, an image) is copied once, not
            # into a bytearray and then out of it.
            n = memoryview(value).nbytes
            header = _HEADER_U32.pack(self._header("PackedByteArray"), n)
            return b"".join((header, value, _PADDING[-n & 3]))
        if type(value) is t.PackedStringArray and (wire := value.wire(self.dialect.packed_string_nul)) is not None:
            return b"".join((_HEADER_U32.pack(self._header("PackedStringArray"), len(value)), wire))
        packed = self._packed_heads.get(type(value))
        if packed is not None and value.data.typecode == packed[1] and not _BIG_ENDIAN:
            return b"".join((packed[0](len(value)), value.data))  # likewise a lone packed array
        out = bytearray()
        self.encode_into(out, value)
        return bytes(out)

    def encode_into(self, out: bytearray, value: Any) -> None:
        """Append the encoding of ``value`` to ``out``."""
        writers = self._writers
        h_int, h_float, h_string = self._fast_headers
        h_array, h_dict = self._container_headers
        elements = self._elements
        max_depth = self.max_depth
        pack_int, pack_float, pack_len = _HEADER_I32.pack, _HEADER_F32.pack, _HEADER_U32.pack
        f32_pack, f32_unpack = _f32.pack, _f32.unpack
        stack: list[Iterator[Any]] = [iter((value,))]
        v: Any = value
        try:
            while stack:
                for v in stack[-1]:
                    # The commonest values are written inline; the table writers
                    # handle everything else, and the odd cases of these three.
                    tv = type(v)
                    if tv is str:
                        try:
                            raw = v.encode()  # strict UTF-8; the writer handles surrogates
                        except UnicodeEncodeError:
                            pass
                        else:
                            out += pack_len(h_string, len(raw))
                            out += raw
                            out += _PADDING[-len(raw) & 3]
                            continue
                    elif tv is int:
                        if -0x80000000 <= v <= 0x7FFFFFFF and h_int >= 0:
                            out += pack_int(h_int, v)
                            continue
                    elif tv is float and h_float >= 0:
                        try:
                            if f32_unpack(f32_pack(v))[0] == v:
                                out += pack_float(h_float, v)
                                continue
                        except OverflowError:
                            pass
                    elif tv is dict and h_dict >= 0:  # untyped containers: what their writers do
                        out += pack_len(h_dict, len(v))
                        if not v:
                            continue
                        if len(stack) > max_depth:
                            raise EncodeError(f"value nested deeper than {max_depth} levels "
                                              "(a container that contains itself?)")
                        stack.append(chain.from_iterable(v.items()))
                        break
                    elif tv is list and h_array >= 0:
                        out += pack_len(h_array, len(v))
                        children = elements(out, v)
                        if children is None:
                            continue
                        if len(stack) > max_depth:
                            raise EncodeError(f"value nested deeper than {max_depth} levels "
                                              "(a container that contains itself?)")
                        stack.append(children)
                        break
                    writer = writers.get(tv) or self._writer_by_mro(v)
                    children = writer(out, v)
                    if children is not None:
                        if len(stack) > self.max_depth:
                            raise EncodeError(f"value nested deeper than {self.max_depth} levels "
                                              "(a container that contains itself?)")
                        stack.append(children)
                        break
                else:
                    stack.pop()
        except EncodeError as e:
            if not e.path and v is not value:
                raise EncodeError(e.reason, _find_path(value, v) or "<inside>") from None
            raise
        except (struct.error, OverflowError, TypeError, AttributeError) as e:
            # A field of the wrong type or range that no writer checks (a user-built value):
            # still only the library's error, with the path.
            reason = f"cannot encode a {type(v).__name__}: {e}"
            raise EncodeError(reason, "" if v is value else _find_path(value, v) or "<inside>") from None

    def _writer_by_mro(self, value: Any) -> _Fn[[bytearray, Any], Iterator[Any] | None]:
        for cls in type(value).__mro__[1:]:
            writer = self._writers.get(cls)
            if writer is not None:
                return writer
        raise EncodeError(f"cannot encode a {type(value).__name__} ({t.value_repr(value, 60)})")

    def _header(self, name: str) -> int:
        type_id = self._headers.get(name)
        if type_id is None:
            raise EncodeError(f"{self.dialect.name} has no {name} type")
        return type_id

    # -- payload writers ----------------------------------------------------------

    def _write_nil(self, out: bytearray, value: Any) -> None:
        out += self._nil_header or pack_u32(self._header("Nil"))  # the second raises: no Nil here

    def _write_bool(self, out: bytearray, value: bool) -> None:
        out += pack_u32(self._header("bool"))
        out += b"\1\0\0\0" if value else b"\0\0\0\0"

    def _write_int(self, out: bytearray, value: int) -> None:
        fmt = self.dialect.int_format
        if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
            raise EncodeError(f"int {_int_text(value)} does not fit in 64 bits")
        fits32 = -0x80000000 <= value <= 0x7FFFFFFF
        if fmt == IntFormat.I32 and not fits32:
            raise EncodeError(f"int {_int_text(value)} does not fit in 32 bits ({self.dialect.name} has no 64-bit int)")
        if fmt == IntFormat.I64:
            out += pack_u32(self._header("int"))
            out += _i64.pack(value)
        elif fits32 and fmt != IntFormat.FLAG64:
            out += pack_u32(self._header("int"))
            out += _i32.pack(value)
        else:
            out += pack_u32(self._header("int") | FLAG_64)
            out += _i64.pack(value)

    def _write_float(self, out: bytearray, value: float) -> None:
        fmt = self.dialect.float_format
        if fmt == FloatFormat.F64:
            out += pack_u32(self._header("float"))
            out += _f64.pack(value)
            return
        if fmt in (FloatFormat.AUTO, FloatFormat.F32):
            # float32 whenever it round-trips exactly; NaN never does, so it is always 64-bit.
            try:
                narrow = _f32.pack(value)
            except OverflowError:
                narrow = _float32_bytes((value,))  # C casts overflow to inf
            if fmt == FloatFormat.F32 or _f32.unpack(narrow)[0] == value:
                out += pack_u32(self._header("float"))
                out += narrow
                return
        out += pack_u32(self._header("float") | FLAG_64)
        out += _f64.pack(value)

    def _string_bytes(self, value: str) -> bytes:
        try:
            return value.encode("utf-8", self._utf8_errors)
        except UnicodeEncodeError as e:
            raise EncodeError(f"string has an unpaired surrogate at index {e.start}") from None

    #: What fills the padding after NodePath names.  The engines before 4.6.3
    #: leave it uninitialised (godot#44999); we write zeros, as 4.6.3+ does.
    node_path_padding = b"\0"

    def write_string(self, out: bytearray, value: str, padding: bytes = b"\0") -> None:
        raw = self._string_bytes(value)
        out += pack_u32(len(raw))
        out += raw
        out += padding * _pad4(len(raw))

    def _write_string(self, out: bytearray, value: str) -> None:
        out += pack_u32(self._header("String"))
        self.write_string(out, value)

    def _write_string_name(self, out: bytearray, value: str) -> None:
        out += pack_u32(self._header("StringName"))
        self.write_string(out, value)

    def _write_raw_name(self, out: bytearray, value: str) -> None:
        if self.dialect.object_format == ObjectFormat.ENGINE:
            self.write_string(out, value)
        else:  # the 4.x page's unpadded names
            raw = self._string_bytes(value)
            out += pack_u32(len(raw))
            out += raw

    def _write_node_path(self, out: bytearray, value: t.NodePath) -> None:
        out += pack_u32(self._header("NodePath"))
        out += struct.pack("<III", len(value.names) | NODE_PATH_NEW_FORMAT, len(value.subnames), int(value.absolute))
        for part in chain(value.names, value.subnames):
            self.write_string(out, part, self.node_path_padding)

    def _write_rid(self, out: bytearray, value: t.RID) -> None:
        rid_format = self.dialect.rid_format
        if rid_format == RidFormat.UNSUPPORTED:
            raise EncodeError(f"{self.dialect.name} has no RID encoding")
        out += pack_u32(self._header("RID"))
        if rid_format == RidFormat.U64:
            out += _u64.pack(_u64_field(value.id, "RID id"))

    def _object_header(self, as_id: bool) -> int:
        form = self.dialect.object_format
        if form == ObjectFormat.UNSUPPORTED:
            raise EncodeError(f"{self.dialect.name} has no Object encoding")
        return self._header("Object") | (FLAG_64 if as_id and form == ObjectFormat.ENGINE else 0)

    def _write_object_id(self, out: bytearray, value: t.EncodedObjectAsID) -> None:
        if self.dialect.object_format == ObjectFormat.HEADER:  # Godot 2 writes no id: the header alone
            _u64_field(value.object_id, "object id")
            out += pack_u32(self._header("Object"))
            return
        if self.dialect.object_format == ObjectFormat.DOCS4 and self.full_objects:
            raise EncodeError("the 4.x page's Object forms cannot mix ids with full objects")
        out += pack_u32(self._object_header(True))
        out += _u64.pack(_u64_field(value.object_id, "object id"))

    def _write_object(self, out: bytearray, value: t.Object) -> Iterator[Any] | None:
        if not self.full_objects:
            raise EncodeError(f"Object {value.class_name} is only written with full_objects=True "
                              "(an instance id is written from EncodedObjectAsID)")
        if self.dialect.object_format == ObjectFormat.HEADER:
            raise EncodeError(f"{self.dialect.name} cannot write a full Object: "
                              "its encoder writes the type header alone")
        out += pack_u32(self._object_header(False))
        self._write_raw_name(out, _Name(value.class_name))
        props = value.properties
        out += pack_u32(len(props))
        if not props:
            return None
        return chain.from_iterable((_Name(k), v) for k, v in props.items())

    def _write_image(self, out: bytearray, value: t.Image) -> None:
        out += pack_u32(self._header("Image"))
        n = len(value.data)
        out += struct.pack("<5I", value.format, value.mipmaps, value.width, value.height, n)
        out += value.data
        out += _PADDING[-n & 3]  # zeros; the engine leaves these bytes unwritten

    def _write_input_event(self, out: bytearray, value: t.InputEvent) -> None:
        out += pack_u32(self._header("InputEvent"))
        payload = value.payload
        words = t.INPUT_EVENT_PAYLOAD_WORDS.get(value.type, 0)
        if len(payload) != words:
            raise EncodeError(f"InputEvent {value.type_name} has {words} payload word(s), not {len(payload)}")
        size = 12 + 4 * words if value.size is None else value.size
        out += struct.pack(f"<3I{words}I", value.type, value.device, size, *payload)

    def _write_callable(self, out: bytearray, value: t.Callable) -> None:
        out += pack_u32(self._header("Callable"))

    def _write_signal(self, out: bytearray, value: t.Signal) -> None:
        out += pack_u32(self._header("Signal"))
        self.write_string(out, value.name)
        out += _u64.pack(_u64_field(value.object_id, "Signal object id"))

    def _write_array(self, out: bytearray, value: Any) -> Iterator[Any] | None:
        out += pack_u32(self._header("Array"))
        out += pack_u32(len(value))
        return self._elements(out, value)

    def _elements(self, out: bytearray, value: Any) -> Iterator[Any] | None:
        """The elements still to write: none when the Array was written in one go."""
        if len(value) >= 16 and self._uniform_elements(out, value):
            return None
        return iter(value) if value else None

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

    def _write_typed_array(self, out: bytearray, value: t.TypedArray) -> Iterator[Any] | None:
        if not self.dialect.typed_arrays:
            raise EncodeError(f"{self.dialect.name} has no typed Arrays (Godot 4.3+)")
        kind, info = self._container_type(value.element_type)
        out += pack_u32(self._header("Array") | kind << 16)
        out += info
        out += pack_u32(len(value))
        return self._elements(out, value)

    def _write_dictionary(self, out: bytearray, value: Any) -> Iterator[Any] | None:
        out += pack_u32(self._header("Dictionary"))
        out += pack_u32(len(value))
        return chain.from_iterable(value.items()) if value else None

    def _write_typed_dictionary(self, out: bytearray, value: t.TypedDictionary) -> Iterator[Any] | None:
        if value.key_type is None and value.value_type is None:
            return self._write_dictionary(out, value)
        if not self.dialect.typed_dictionaries:
            raise EncodeError(f"{self.dialect.name} has no typed Dictionaries (Godot 4.4+)")
        key_kind, key_info = self._container_type(value.key_type)
        value_kind, value_info = self._container_type(value.value_type)
        out += pack_u32(self._header("Dictionary") | key_kind << 16 | value_kind << 18)
        out += key_info
        out += value_info
        out += pack_u32(len(value))
        return chain.from_iterable(value.items()) if value else None

    def _container_type(self, ct: t.ContainerType | None) -> tuple[int, bytes]:
        """The header kind bits and the bytes that describe one container type."""
        if ct is None:
            return 0, b""
        kind = ct.kind
        if kind == 1:
            return 1, pack_u32(self._header(ct.builtin))
        buf = bytearray()
        if not self.full_objects:
            # What the engine writes when objects travel as ids (godot#94379).
            self.write_string(buf, "EncodedObjectAsID")
            return 2, bytes(buf)
        self.write_string(buf, ct.script if kind == 3 else ct.class_name)  # type: ignore[arg-type]
        return kind, bytes(buf)

    def _write_bytes(self, out: bytearray, value: Any) -> None:
        out += pack_u32(self._header("PackedByteArray"))
        n = memoryview(value).nbytes
        out += pack_u32(n)
        out += value
        out += b"\0" * _pad4(n)

    def _write_packed_strings(self, out: bytearray, value: t.PackedStringArray) -> None:
        out += pack_u32(self._header("PackedStringArray"))
        out += pack_u32(len(value))
        nul = self.dialect.packed_string_nul
        wire = value.wire(nul)
        if wire is not None:  # read in this layout and unchanged: the bytes it was read from
            out += wire
            return
        try:
            ascii_only = "".join(value).isascii()
        except TypeError:  # not all strings: the loop below says which
            ascii_only = False
        if ascii_only:
            # Every piece of the body from a table, joined at C speed: no Python loop.
            heads, ends = _join_tables(nul)
            lengths = list(map(len, value))
            try:
                body = "".join(chain.from_iterable(zip(map(heads.__getitem__, lengths), value,
                                                       map(ends.__getitem__, lengths))))
            except IndexError:  # a long string: the loop below
                pass
            else:
                out += body.encode("latin-1")  # the heads' bytes as they are, the ASCII text as UTF-8
                return
        # What follows each text: the engines' NUL (counted in the length), then padding.
        extra = 1 if nul else 0
        tails = (b"\0\0\0\0", b"\0\0\0", b"\0\0", b"\0") if extra else (b"", b"\0\0\0", b"\0\0", b"\0")
        string_bytes = self._string_bytes
        for s in value:
            if type(s) is not str and not isinstance(s, str):
                raise EncodeError(f"PackedStringArray holds a {type(s).__name__}, not a String")
            try:
                raw = s.encode()  # strict UTF-8: the same bytes whenever it succeeds
            except UnicodeEncodeError:
                raw = string_bytes(s)
            n = len(raw)
            out += pack_u32(n + extra)
            out += raw
            out += tails[n & 3]

    def _math_writer(self, name: str) -> _Fn[[bytearray, Any], None]:
        row = self.dialect.math_type(name)
        wide = row.component == REAL and self.dialect.real_is_double
        fmt = struct.Struct(f"<{row.count}{'d' if wide else 'i' if row.component == I32 else 'f'}")
        flag = FLAG_64 if wide else 0
        to_wire = row.to_wire
        is_float32 = fmt.format.endswith("f")

        type_id = self._headers.get(name)
        header = b"" if type_id is None else pack_u32(type_id | flag)

        def write(out: bytearray, value: Any) -> None:
            if not header:
                self._header(name)  # raises: the dialect has no such type
            out += header
            parts = to_wire(value)
            try:
                out += fmt.pack(*parts)
            except OverflowError:
                if not is_float32:
                    raise EncodeError(f"{name} component out of range: {value!r}") from None
                out += _float32_bytes(parts)  # C casts overflow to inf, as the engine does
            except struct.error as e:
                raise EncodeError(f"{name} component out of range: {value!r} ({e})") from None

        return write

    def _packed_writer(self, name: str, component: str) -> _Fn[[bytearray, Any], None]:
        wide = component == REAL and self.dialect.real_is_double
        if component == REAL:
            typecode = "d" if wide else "f"
        else:
            typecode = {F32: "f", I32: "i", "i64": "q", "f64": "d"}[component]
        flag = FLAG_64 if wide else 0
        count_size = self.dialect.int64_array_count_size if component == "i64" else 4

        def head(n: int) -> bytes:
            """The header and the element count."""
            return pack_u32(self._header(name) | flag) + (_u64.pack(n) if count_size == 8 else pack_u32(n))

        def write(out: bytearray, value: t.PackedArray) -> None:
            out += head(len(value))
            if value.data.typecode == typecode and not _BIG_ENDIAN:
                out += value.data  # the array's own buffer: no intermediate copy
            else:
                out += value.to_bytes(typecode)

        self._packed_heads[PACKED_TYPES[name][0]] = (head, typecode)
        return write


@lru_cache(maxsize=64)
def encoder_for(dialect: Dialect, full_objects: bool = False, max_depth: int = DEFAULT_MAX_DEPTH) -> Encoder:
    """A shared Encoder for these options."""
    return Encoder(dialect, full_objects=full_objects, max_depth=max_depth)


def _float32_bytes(parts: Any) -> bytes:
    data = array("f", parts)
    if _BIG_ENDIAN:  # pragma: no cover
        data.byteswap()
    return data.tobytes()


def _int_text(value: int) -> str:
    """An int for a message: in full when short (Python refuses to print ints past 4300 digits)."""
    return str(value) if value.bit_length() <= 128 else f"of {value.bit_length()} bits"


def _u64_field(value: int, what: str) -> int:
    if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
        raise EncodeError(f"{what} {_int_text(value)} is not a 64-bit unsigned int")
    return value


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
        if isinstance(node, (list, tuple)) and not isinstance(node, t.Components):
            todo.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, (dict, t.Dictionary)):
            for k, v in reversed(list(node.items())):
                shown = t.value_repr(k, 40)
                todo.append((v, f"{path}[{shown}]"))
                todo.append((k, f"{path}<key {shown}>"))
        elif isinstance(node, t.Object):
            todo.extend((v, f"{path}.{k}") for k, v in reversed(list(node.properties.items())))
    return ""
