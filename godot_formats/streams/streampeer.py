"""Godot's ``StreamPeerBuffer``, call for call: what a GDScript peer puts, read here, and back.

Protocols between games and servers seldom send Variants alone: a ``put_u16`` message id, a
``put_utf8_string`` name, then ``put_var``.  :class:`StreamPeerBuffer` has every ``put_*`` and
``get_*`` of Godot's ``StreamPeer`` with the engine's names and bytes, so GDScript reads across
one to one.  The rules (byte order, width cuts, ``put_string``, reads past the end) are those of
:mod:`godot_formats.primitives`; docs/primitives.md shows a client and a server.
"""

from __future__ import annotations

from typing import Any

from .primitives import ERR_INVALID_PARAMETER, Buffer, ByteCursor, DialectLike, NonAscii, OnEof

__all__ = ["StreamPeerBuffer"]

_OK = 0


class StreamPeerBuffer(ByteCursor):
    """Godot's ``StreamPeerBuffer``: a byte array with a position, read and written with ``StreamPeer`` calls.

    ``StreamPeerBuffer(data)`` reads received bytes (``get_u16()``, ``get_utf8_string()``,
    ``get_var()``...); ``StreamPeerBuffer()`` builds bytes to send (``put_*``, then
    ``data_array``).  Writes go at the position, overwriting and then growing, as in the engine.

    ``big_endian`` swaps the numbers and the u32 lengths in front of strings and Variants, never
    the Variant bytes.  ``dialect`` picks the engine (``"godot3"``, ``"godot4"``, ...): it decides
    the Variant format, ``put_string`` of non-ASCII text (see ``non_ascii``), and whether
    ``put_half``/``get_half`` exist (Godot 4 only).  ``on_eof="raise"`` (the default) raises
    :class:`~godot_formats.errors.DecodeError` for a read past the end, consuming nothing;
    ``on_eof="zero"`` does what the engine does (zeros, ``""``, ``None``; the position moves to
    the end).  ``get_u64`` returns a Godot int (signed 64-bit), as the engine does.  Any other
    attribute is refused with the name it likely meant (``bigendian`` → ``big_endian``).
    """

    __slots__ = ()

    def __init__(self, data: Buffer = b"", *, big_endian: bool = False, dialect: DialectLike = "godot4",
                 on_eof: OnEof = "raise", non_ascii: NonAscii = "warn") -> None:
        super().__init__(data, big_endian=big_endian, dialect=dialect, on_eof=on_eof, non_ascii=non_ascii)

    def __repr__(self) -> str:
        return (f"<StreamPeerBuffer {self.get_size()} bytes at {self._pos}, {self.dialect.name}"
                f"{', big_endian' if self.big_endian else ''}>")

    # -- the buffer ------------------------------------------------------------------------------

    @property
    def data_array(self) -> bytes:
        """Every byte of the buffer; setting it replaces them and moves to the start, as in Godot."""
        return bytes(self._data)

    @data_array.setter
    def data_array(self, data: Buffer) -> None:
        self._data = bytearray(data)
        self._pos = 0

    def get_size(self) -> int:
        return len(self._data)

    def get_position(self) -> int:
        return self._pos

    def get_available_bytes(self) -> int:
        return self._available()

    def seek(self, position: int) -> None:
        """Move to ``position``, 0 to ``get_size()`` (the engine refuses others with an error; here ValueError)."""
        if not 0 <= position <= len(self._data):
            raise ValueError(f"seek({position}): the position must be 0..{len(self._data)}")
        self._pos = position

    def resize(self, size: int) -> None:
        """Cut or zero-extend the buffer; the position is kept (the engine keeps it too)."""
        if size < 0:
            raise ValueError(f"resize({size}): the size must not be negative")
        if size < len(self._data):
            del self._data[size:]
        else:
            self._data.extend(bytes(size - len(self._data)))

    def clear(self) -> None:
        self._data = bytearray()
        self._pos = 0

    def duplicate(self) -> StreamPeerBuffer:
        """A copy with the same bytes and settings, at position 0 (``StreamPeerBuffer.duplicate``)."""
        return StreamPeerBuffer(self._data, big_endian=self.big_endian, dialect=self.dialect, on_eof=self.on_eof,
                                non_ascii=self.non_ascii)

    # -- put -------------------------------------------------------------------------------------

    def put_8(self, value: int) -> None:
        self._put_number("8", value, "put_8")

    def put_u8(self, value: int) -> None:
        self._put_number("u8", value, "put_u8")

    def put_16(self, value: int) -> None:
        self._put_number("16", value, "put_16")

    def put_u16(self, value: int) -> None:
        self._put_number("u16", value, "put_u16")

    def put_32(self, value: int) -> None:
        self._put_number("32", value, "put_32")

    def put_u32(self, value: int) -> None:
        self._put_number("u32", value, "put_u32")

    def put_64(self, value: int) -> None:
        self._put_number("64", value, "put_64")

    def put_u64(self, value: int) -> None:
        self._put_number("u64", value, "put_u64")

    def put_float(self, value: float) -> None:
        self._put_number("float", value, "put_float")

    def put_double(self, value: float) -> None:
        self._put_number("double", value, "put_double")

    def put_half(self, value: float) -> None:
        """Godot 4's ``put_half``: ``Math::make_half_float`` (truncating; subnormals become +0)."""
        self._need_godot4("put_half")
        self._put_number("half", value, "put_half")

    def put_string(self, text: str) -> None:
        """A u32 length and one byte per character: ASCII only (see ``non_ascii``); text goes with put_utf8_string."""
        self._put_counted(self._ascii_bytes(text, "put_string"))

    def put_utf8_string(self, text: str) -> None:
        """A u32 byte length and the UTF-8 bytes."""
        self._put_counted(self._utf8_bytes(text, "put_utf8_string"))

    def put_var(self, value: Any, full_objects: bool = False) -> None:
        """A u32 length (``put_32``: ``big_endian`` applies) and ``var_to_bytes(value)`` (always little-endian)."""
        self._put_var(value, full_objects)

    def put_data(self, data: Buffer) -> int:
        """Write the bytes; returns Godot's ``Error`` (always ``OK``, 0)."""
        self._write(memoryview(data).cast("B"))
        return _OK

    def put_partial_data(self, data: Buffer) -> list[Any]:
        """Write the bytes; returns ``[Error, bytes sent]`` as Godot does (a buffer takes them all)."""
        view = memoryview(data).cast("B")
        self._write(view)
        return [_OK, len(view)]

    # -- get -------------------------------------------------------------------------------------

    def get_8(self) -> int:
        return int(self._get_number("8", "get_8"))

    def get_u8(self) -> int:
        return int(self._get_number("u8", "get_u8"))

    def get_16(self) -> int:
        return int(self._get_number("16", "get_16"))

    def get_u16(self) -> int:
        return int(self._get_number("u16", "get_u16"))

    def get_32(self) -> int:
        return int(self._get_number("32", "get_32"))

    def get_u32(self) -> int:
        return int(self._get_number("u32", "get_u32"))

    def get_64(self) -> int:
        return int(self._get_number("64", "get_64"))

    def get_u64(self) -> int:
        """The engine's ``get_u64``: a Godot int, so 2**63 and above come back negative (mask to get them)."""
        return int(self._get_number("u64", "get_u64"))

    def get_float(self) -> float:
        return float(self._get_number("float", "get_float"))

    def get_double(self) -> float:
        return float(self._get_number("double", "get_double"))

    def get_half(self) -> float:
        self._need_godot4("get_half")
        return float(self._get_number("half", "get_half"))

    def get_string(self, bytes: int = -1) -> str:  # noqa: A002  (Godot's parameter name)
        """``bytes`` bytes (or a u32 length, then that many) as one character each, up to a NUL.

        Godot 4 reads them as Latin-1; Godot 3 reads bytes from 0x80 as negative characters,
        so Latin-1 (what Godot 3's ``put_string`` wrote) is returned for both.
        """
        got = self._get_counted("get_string", bytes)
        return "" if got is None else self._parse_latin1(got[0])

    def get_utf8_string(self, bytes: int = -1) -> str:  # noqa: A002
        """``bytes`` bytes (or a u32 length, then that many) of UTF-8, up to a NUL, a leading BOM skipped."""
        got = self._get_counted("get_utf8_string", bytes)
        return "" if got is None else self._parse_utf8(got[0], got[1], "get_utf8_string")

    def get_var(self, allow_objects: bool = False) -> Any:
        """A ``put_var`` frame: the value is decoded from the frame's bytes only; slack after it is skipped."""
        return self._get_var(allow_objects, "get_var")

    def get_data(self, bytes: int) -> list[Any]:  # noqa: A002
        """``[Error, data]`` as Godot returns it: ``[0, bytes]``.

        Past the end: DecodeError, or with ``on_eof="zero"`` the engine's
        ``[ERR_INVALID_PARAMETER, data]``, the missing bytes zero and the position at the end.
        """
        if bytes < 0:
            raise ValueError(f"get_data({bytes}): the count must not be negative")
        short = bytes > self._available()
        data = self._read_padded(bytes, "get_data")
        return [ERR_INVALID_PARAMETER if short else _OK, data]

    def get_partial_data(self, bytes: int) -> list[Any]:  # noqa: A002
        """``[Error, data]``: up to ``bytes`` bytes, as many as there are (never an error, as in Godot)."""
        if bytes < 0:
            raise ValueError(f"get_partial_data({bytes}): the count must not be negative")
        n = min(bytes, self._available())
        data = _copy(self._data, self._pos, n)
        self._pos += n
        return [_OK, data]


def _copy(data: bytearray, start: int, n: int) -> bytes:
    """A copy of ``n`` bytes from ``start`` (a helper, since ``bytes`` is shadowed by Godot's parameter name)."""
    return bytes(data[start:start + n])
