"""The byte-level primitives of Godot's ``StreamPeer`` and ``FileAccess``: one table, one cursor.

Both engine classes write the same few things around Variants -- fixed-size numbers, strings with
a u32 length, ``put_var``/``store_var`` frames -- and differ only in their names.  This module
holds what they share, so :mod:`godot_formats.streampeer` and :mod:`godot_formats.fileaccess` are
thin layers of Godot's names over one implementation.  Everything here was measured on Godot 3.2.3
and 4.6 (``fixtures/primitives`` and the engine tests in ``tests/streams/test_primitives.py``):

* ``big_endian`` (Godot 3 ``File.endian_swap``) swaps the numbers and the u32 length in front of
  strings and Variants, never the Variant bytes themselves (``var_to_bytes`` is always
  little-endian).
* Writes cut a number to its width as a C cast does (``put_u8(300)`` writes 44, ``put_u16(-1)``
  writes ``ffff``), and a ``float`` too large for float32 becomes infinity.
* Reads return what the engine returns: a Godot ``int`` is 64-bit and signed, so ``get_u64``
  (and ``FileAccess.get_64``) of ``ffffffffffffffff`` is ``-1``.
* ``put_half``/``store_half`` use the engine's own ``Math::make_half_float``: it truncates
  instead of rounding, and writes subnormal halves (and ``-0.0``) as ``+0``.
* ``put_string`` writes one byte per character: Godot 3 the low 8 bits (Latin-1 for Latin-1
  text, ``€`` becomes ``0xac``), Godot 4 a space for anything that is not ASCII (and logs an
  error).  Either way :class:`NonAsciiWarning` is issued, or, with ``non_ascii="refuse"``, an
  :class:`~godot_formats.errors.EncodeError` is raised and nothing is written.
* Text reads stop at the first NUL and skip a UTF-8 byte order mark, as the engine's
  ``String::utf8`` does; invalid UTF-8 raises :class:`~godot_formats.errors.DecodeError` (the
  engines replace it with U+FFFD, 4.x, or return an empty string, 3.x).

Reading past the end raises :class:`~godot_formats.errors.DecodeError` naming the offset, and
nothing is consumed.  ``on_eof="zero"`` gives the engine's behaviour instead: the bytes that are
there are consumed, the missing ones read as zeros (``get_u32`` of ``01 02`` is 513, of nothing
0), and length-prefixed reads give what the engine gives (``""``, ``None``).  Every length read
from the data is checked against the bytes that are left before anything is allocated.
"""

from __future__ import annotations

import math
import struct
import warnings
from typing import Any, Literal, NamedTuple, Union

from ..core.codec import DEFAULT_MAX_DEPTH, Decoder, Encoder, decoder_for, encoder_for
from ..core.dialects import Dialect, get_dialect
from ..core.errors import DecodeError, EncodeError, GodotFormatsError
from ..layers.framing import MAX_FRAME_LENGTH
from .attributes import Strict

__all__ = [
    "OnEof", "NonAscii", "Primitive", "PRIMITIVES", "NonAsciiWarning", "ByteCursor",
    "half_bits", "half_value", "ERR_INVALID_PARAMETER",
]

OnEof = Literal["raise", "zero"]
NonAscii = Literal["warn", "refuse"]
Buffer = Union[bytes, bytearray, memoryview]
DialectLike = Union[str, Dialect]

#: Godot's ``Error`` value that ``get_data`` returns with a short read.
ERR_INVALID_PARAMETER = 31
#: The engines read a length with ``get_32`` into an ``int``: above this it is negative.
_INT32_MAX = 0x7FFFFFFF
_INT64_MIN = -(1 << 63)
_UINT64_END = 1 << 64
_BOM = b"\xef\xbb\xbf"


class NonAsciiWarning(UserWarning):
    """``put_string`` was given text that is not ASCII, so the engine's bytes are not the text's."""


class Primitive(NamedTuple):
    """One fixed-size number: how it is packed, and how the engine returns it when read."""

    size: int
    #: ``struct`` code used to write (after cutting the value to the width, for integers).
    write: str
    #: ``struct`` code of the value the engine returns: a Godot int is signed 64-bit.
    read: str


#: The numbers of StreamPeer (``put_u16``...) and FileAccess (``store_16``...), by StreamPeer's
#: suffix.  FileAccess's ``store_N``/``get_N`` are the unsigned rows, except that ``get_64``
#: returns the signed int as ``get_u64`` does.  ``half`` is packed by :func:`half_bits`.
PRIMITIVES: dict[str, Primitive] = {
    "8": Primitive(1, "B", "b"), "u8": Primitive(1, "B", "B"),
    "16": Primitive(2, "H", "h"), "u16": Primitive(2, "H", "H"),
    "32": Primitive(4, "I", "i"), "u32": Primitive(4, "I", "I"),
    "64": Primitive(8, "Q", "q"), "u64": Primitive(8, "Q", "q"),
    "float": Primitive(4, "f", "f"), "double": Primitive(8, "d", "d"),
    "half": Primitive(2, "H", "e"),
}
_STRUCTS = {(code, big): struct.Struct((">" if big else "<") + code)
            for p in PRIMITIVES.values() for code in (p.write, p.read) for big in (False, True)}


def half_bits(value: float) -> int:
    """The 16 bits of ``Math::make_half_float``: Godot's own conversion, not IEEE rounding.

    The value first becomes a float32 (``put_half`` takes a C ``float``); then the mantissa is
    truncated, magnitudes below 2^-14 give +0 (the engine drops subnormals, and the sign),
    and anything from 2^16 up gives infinity.  NaN gives ``0x7fff`` with the sign kept.
    """
    x: int = _STRUCTS[("I", False)].unpack(_float32(value))[0]
    sign = (x >> 31) << 15
    mantissa = x & 0x7FFFFF
    exponent = x & (0xFF << 23)
    if exponent >= 0x47800000:
        mantissa = 0x7FFFFF if mantissa and exponent == 0xFF << 23 else 0
        return sign | (0x1F << 10) | (mantissa >> 13)
    if exponent <= 0x38000000:
        return 0
    return sign | ((exponent - 0x38000000) >> 13) | (mantissa >> 13)


def half_value(bits: int) -> float:
    """The float ``get_half`` returns for 16 bits (``Math::half_to_float`` is exact, as IEEE's)."""
    return float(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])


def _float32(value: float) -> bytes:
    """A C ``(float)`` cast, little-endian: too large a value becomes infinity instead of an error."""
    try:
        return struct.pack("<f", value)
    except OverflowError:
        return struct.pack("<f", math.copysign(math.inf, value))


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} takes an int, not {type(value).__name__}")
    n = int(value)
    if not _INT64_MIN <= n < _UINT64_END:
        raise ValueError(f"{name}({n}): a Godot int is 64-bit, so this value cannot be written")
    return n


class ByteCursor(Strict):
    """A byte buffer with a position, read and written with the engine's primitives.

    The shared core of :class:`~godot_formats.streampeer.StreamPeerBuffer` and
    :class:`~godot_formats.fileaccess.FileAccess`.  ``big_endian`` may be changed at any time,
    as in Godot; it applies to the calls that follow.  An attribute it does not have is refused
    (:class:`~godot_formats.streams.attributes.Strict`): ``bigendian = True`` would otherwise be
    ignored without a word.
    """

    __slots__ = ("big_endian", "dialect", "on_eof", "non_ascii", "max_depth", "_data", "_pos", "_eof",
                 "_utf8_errors", "_decoders", "_encoders")

    def __init__(self, data: Buffer = b"", *, big_endian: bool = False, dialect: DialectLike = "godot4",
                 on_eof: OnEof = "raise", non_ascii: NonAscii = "warn", max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        if on_eof not in ("raise", "zero"):
            raise ValueError(f"on_eof must be 'raise' or 'zero', not {on_eof!r}")
        if non_ascii not in ("warn", "refuse"):
            raise ValueError(f"non_ascii must be 'warn' or 'refuse', not {non_ascii!r}")
        self.big_endian = bool(big_endian)
        self.dialect = get_dialect(dialect)
        self.on_eof: OnEof = on_eof
        self.non_ascii: NonAscii = non_ascii
        self.max_depth = max_depth
        self._data = bytearray(data)
        self._pos = 0
        self._eof = False
        self._utf8_errors = "surrogatepass" if self.dialect.utf8_surrogates else "strict"
        self._decoders: dict[bool, Decoder] = {}
        self._encoders: dict[bool, Encoder] = {}

    @property
    def _godot3(self) -> bool:
        return self.dialect.major < 4

    # -- raw bytes ---------------------------------------------------------------------------

    def _write(self, data: Buffer) -> None:
        """Write at the position (overwriting, then growing), as both engines do after a seek."""
        n = len(data)
        if n:
            if self._pos > len(self._data):  # after a seek past the end (FileAccess): the gap reads as zeros
                self._data.extend(bytes(self._pos - len(self._data)))
            self._data[self._pos:self._pos + n] = data
            self._pos += n

    def _short(self, n: int, what: str) -> DecodeError:
        left = max(len(self._data) - self._pos, 0)
        self._eof = True
        return DecodeError(self._pos, f"{what} needs {n} byte(s), {left} left (the data ends at byte "
                                      f"{len(self._data)})")

    def _read(self, n: int, what: str) -> bytes | None:
        """``n`` bytes, or (``on_eof="zero"``) the ones there are and None after consuming them."""
        end = self._pos + n
        if end <= len(self._data):
            out = bytes(self._data[self._pos:end])
            self._pos = end
            return out
        if self.on_eof == "raise":
            raise self._short(n, what)
        self._eof = True
        self._pos = max(self._pos, len(self._data))
        return None

    def _read_padded(self, n: int, what: str) -> bytes:
        """``n`` bytes; with ``on_eof="zero"``, what is left followed by zeros, as the engines read."""
        start = self._pos
        got = self._read(n, what)
        if got is not None:
            return got
        have = bytes(self._data[start:start + n]) if start < len(self._data) else b""
        return have + bytes(n - len(have))

    def _available(self) -> int:
        return max(len(self._data) - self._pos, 0)

    # -- numbers -----------------------------------------------------------------------------

    def _put_number(self, kind: str, value: Any, name: str) -> None:
        p = PRIMITIVES[kind]
        if kind in ("float", "double", "half"):
            if not isinstance(value, (int, float)):
                raise TypeError(f"{name} takes a float, not {type(value).__name__}")
            x = float(value)
            if kind == "half":
                self._write(_STRUCTS[(p.write, self.big_endian)].pack(half_bits(x)))
            elif kind == "float":
                raw = _float32(x)
                self._write(raw[::-1] if self.big_endian else raw)
            else:
                self._write(_STRUCTS[(p.write, self.big_endian)].pack(x))
            return
        n = _check_int(name, value) & ((1 << (8 * p.size)) - 1)
        self._write(_STRUCTS[(p.write, self.big_endian)].pack(n))

    def _get_number(self, kind: str, name: str) -> Any:
        p = PRIMITIVES[kind]
        raw = self._read_padded(p.size, name)
        value = _STRUCTS[(p.read, self.big_endian)].unpack(raw)[0]
        return float(value) if kind in ("float", "double", "half") else int(value)

    def _length(self, name: str) -> int | None:
        """A u32 length prefix, checked against the bytes after it; None (consumed) when it cannot be used.

        The engines read it with ``get_32``/``get_u32`` and allocate that much; here a length
        longer than the data is refused before anything is allocated.
        """
        at = self._pos
        n: int = self._get_number("u32", name)
        if self._eof and self.on_eof == "zero" and self._pos - at < 4:
            return None
        if n > _INT32_MAX or n > self._available():
            if self.on_eof == "raise":
                self._pos = at
                self._eof = True
                why = "a negative int32 for the engine" if n > _INT32_MAX else f"{self._available()} left after it"
                raise DecodeError(at, f"{name}: the length {n} at byte {at} is more than the data holds ({why})")
            self._eof = True
            self._pos = len(self._data) if n <= _INT32_MAX else self._pos
            return None
        return n

    # -- text ----------------------------------------------------------------------------------

    def _ascii_bytes(self, text: str, name: str) -> bytes:
        """``String::ascii()``: Godot 3 keeps the low 8 bits of each character, Godot 4 a space for non-ASCII."""
        if not isinstance(text, str):
            raise TypeError(f"{name} takes a str, not {type(text).__name__}")
        if text.isascii():
            return text.encode("ascii")
        first = next(i for i, c in enumerate(text) if ord(c) > 0x7F)
        if self.non_ascii == "refuse":
            raise EncodeError(f"{name} writes ASCII only, and character {first} is {text[first]!r} "
                              f"(U+{ord(text[first]):04X}); use put_utf8_string / store_pascal_string for text")
        if self._godot3:
            out = bytes(ord(c) & 0xFF for c in text)
            what = "Godot 3 writes the low 8 bits of each character (Latin-1), which its own get_string misreads"
        else:
            out = bytes(ord(c) if ord(c) <= 0x7F else 0x20 for c in text)
            what = "Godot 4 writes a space for each non-ASCII character (and logs an error)"
        warnings.warn(f"{name}({text!r}): not ASCII (character {first}); {what}. "
                      f"put_utf8_string / store_pascal_string write text", NonAsciiWarning, stacklevel=3)
        return out

    def _utf8_bytes(self, text: str, name: str) -> bytes:
        if not isinstance(text, str):
            raise TypeError(f"{name} takes a str, not {type(text).__name__}")
        try:
            return text.encode("utf-8", self._utf8_errors)
        except UnicodeEncodeError as e:
            raise EncodeError(f"{name}: the text has an unpaired surrogate at index {e.start}") from None

    def _parse_utf8(self, raw: bytes, at: int, name: str) -> str:
        """``String::utf8(bytes, n)``: a byte order mark is skipped, the text ends at the first NUL."""
        start = 3 if raw.startswith(_BOM) else 0
        nul = raw.find(0, start)
        stop = len(raw) if nul < 0 else nul
        try:
            return raw[start:stop].decode("utf-8", self._utf8_errors)
        except UnicodeDecodeError as e:
            raise DecodeError(at + start + e.start, f"{name}: invalid UTF-8 ({e.reason})") from None

    @staticmethod
    def _parse_latin1(raw: bytes) -> str:
        """``String(const char *)``: one character per byte, up to the first NUL.

        Godot 4 reads Latin-1; Godot 3 sign-extends bytes from 0x80 (``é`` comes back as
        character -23, which no ``str`` holds), so Latin-1, what Godot 3's ``put_string`` wrote,
        is returned for both.
        """
        nul = raw.find(0)
        return (raw if nul < 0 else raw[:nul]).decode("latin-1")

    def _put_counted(self, raw: bytes) -> None:
        self._put_number("u32", len(raw), "length")
        self._write(raw)

    def _get_counted(self, name: str, length: int | None) -> tuple[bytes, int] | None:
        """The bytes of a string: ``length`` of them, or as many as a u32 prefix says."""
        if length is None or length < 0:
            n = self._length(name)
            if n is None:
                return None
        else:
            n = length
            if n > self._available() and self.on_eof == "zero":
                self._read(n, name)
                return None
        at = self._pos
        raw = self._read(n, name)
        return (raw, at) if raw is not None else None

    # -- Variants ----------------------------------------------------------------------------

    def _encoder(self, full_objects: bool) -> Encoder:
        enc = self._encoders.get(full_objects)
        if enc is None:
            enc = self._encoders[full_objects] = encoder_for(self.dialect, full_objects, self.max_depth)
        return enc

    def _decoder(self, allow_objects: bool) -> Decoder:
        dec = self._decoders.get(allow_objects)
        if dec is None:
            dec = self._decoders[allow_objects] = decoder_for(self.dialect, allow_objects, self.max_depth)
        return dec

    def _put_var(self, value: Any, full_objects: bool) -> None:
        """``put_var``/``store_var``: ``put_32`` of the length (so ``big_endian`` applies), then ``var_to_bytes``."""
        data = self._encoder(bool(full_objects)).encode(value)
        if len(data) > MAX_FRAME_LENGTH:  # the framing rule (godot_formats.framing)
            raise EncodeError(f"the encoded value is {len(data)} bytes; the engine reads at most {MAX_FRAME_LENGTH}")
        self._put_counted(data)

    def _get_var(self, allow_objects: bool, name: str) -> Any:
        """``get_var``: a length, then a value decoded from that many bytes only (the rest is skipped)."""
        n = self._length(name)
        if n is None:
            return None
        start = self._pos
        payload = bytes(self._data[start:start + n])  # n was checked against what is there
        self._pos = start + n
        try:
            return self._decoder(bool(allow_objects)).decode(payload)[0]
        except DecodeError as e:
            raise DecodeError(start + e.offset, **e.reason_in(f"{name}: ")) from None

    # -- position ------------------------------------------------------------------------------

    def _need_godot4(self, name: str) -> None:
        if self._godot3:
            raise GodotFormatsError(f"{name} is Godot 4 only; {self.dialect.name} has no such call")
