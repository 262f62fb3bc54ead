"""The ``store_var`` framing, in one place: a u32 length, then that many bytes, repeated.

``FileAccess.store_var``, ``StreamPeer.put_var`` and ``PacketPeerStream.put_var`` put a
Variant's bytes behind a 4-byte length.  The length follows ``big_endian``
(``File.endian_swap``, ``FileAccess.big_endian``, ``StreamPeer.big_endian``); the Variant
bytes are always little-endian.  The engine reads the length with ``get_32()`` into an
``int``, so 2**31 or more is a negative length it can never read back.

Two kinds of reader use that framing, and they need different rules, so both live here
next to each other rather than in the modules that use them:

* **streams** (``get_var`` on a file, a socket, an asyncio stream; :mod:`.stream`) trust
  nothing but the limit they were given: a length over ``max_packet_size`` (or one the
  engine reads as negative) is refused before a byte of it is read or allocated.  A frame
  of 0 bytes is well framed; its *value* is what is bad.
* **whole blobs** (is this a file of ``store_var`` records?  where is it damaged?;
  :mod:`.detection`, :mod:`.savefile`) ask that the frames tile the blob exactly and that
  each frame can hold a value (a Variant is at least its 4-byte header).

Every error here is a :class:`FramingError`: the framing is broken and where the next
frame starts is unknown.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Callable, Literal, Protocol, Union

from ..core.errors import EncodeError, FramingError

__all__ = [
    "PREFIX_SIZE", "MAX_FRAME_LENGTH", "MIN_RECORD_SIZE", "ByteOrder", "FramingError", "Frame",
    "prefix_struct", "length_limit", "read_length", "cut_error", "cut_prefix_error", "frame_bounds",
    "read_payload", "frame_value", "join_frames", "scan_frames", "split_frames",
]

#: Bytes of the length prefix in front of every framed value.
PREFIX_SIZE = 4

#: The engine reads the prefix with ``get_32()`` into an ``int``: a length of
#: 2**31 or more is negative there and can never be read back.
MAX_FRAME_LENGTH = 0x7FFFFFFF

#: The smallest frame a *file* of records can hold: a Variant is at least its header.
MIN_RECORD_SIZE = 4

ByteOrder = Literal["little", "big"]
Buffer = Union[bytes, bytearray, memoryview]

_PREFIX = {"little": struct.Struct("<I"), "big": struct.Struct(">I")}

# Bytes read per call while filling a frame: memory grows with what actually
# arrives, not with what a peer announced.
_CHUNK = 64 * 1024


class _EncodesInto(Protocol):
    def encode_into(self, out: bytearray, value: Any) -> None: ...


# -- the prefix -------------------------------------------------------------------------


def prefix_struct(byteorder: str) -> struct.Struct:
    """The prefix's layout; a wrong ``byteorder`` is the caller's mistake, so ``ValueError``."""
    try:
        return _PREFIX[byteorder]
    except KeyError:
        raise ValueError(f"byteorder must be 'little' or 'big', not {byteorder!r}") from None


def length_limit(max_packet_size: int, byteorder: str) -> int:
    """A stream reader's options, checked up front (not at the first frame); the effective length limit."""
    prefix_struct(byteorder)
    if max_packet_size < 0:
        raise ValueError(f"max_packet_size must not be negative, got {max_packet_size}")
    return min(max_packet_size, MAX_FRAME_LENGTH)


def read_length(buf: Buffer, pos: int, offset: int, byteorder: str, limit: int) -> int:
    """The length the prefix at ``buf[pos:]`` announces, refused before anything is read when too big.

    ``offset`` is the prefix's position in the whole stream, for the error.
    """
    length: int = prefix_struct(byteorder).unpack_from(buf, pos)[0]
    if length > MAX_FRAME_LENGTH:
        raise FramingError(offset, f"frame announces {length} bytes (0x{length:08x}), a negative length "
                                   f"for the engine, which reads it as a signed 32-bit int "
                                   f"(wrong byteorder, or not framed data?)")
    if length > limit:
        raise FramingError(offset, f"frame announces {length} bytes, more than max_packet_size "
                                   f"({limit}); refused before reading it")
    return length


def cut_error(offset: int, length: int, got: int) -> FramingError:
    """A frame whose payload the data does not hold whole (``got`` of ``length`` bytes)."""
    return FramingError(offset, f"frame of {length} bytes is cut after {got} byte(s) "
                                f"(the data ends at byte {offset + PREFIX_SIZE + got})")


def cut_prefix_error(offset: int, got: int) -> FramingError:
    """Data that ends ``got`` bytes into a length prefix."""
    return FramingError(offset, f"the data ends inside a length prefix ({got} of {PREFIX_SIZE} bytes)")


# -- reading one frame (streams) --------------------------------------------------------------


def frame_bounds(view: Buffer, offset: int, byteorder: str, limit: int) -> tuple[int, int]:
    """Where the payload of the frame at ``offset`` starts and ends inside ``view``.

    The caller decodes ``view[start:end]`` in place, bounded by the frame, so a value
    cannot run into the next frame; ``end`` is where the next frame starts.
    """
    left = len(view) - offset
    if left < PREFIX_SIZE:
        if left <= 0:
            raise FramingError(offset, "expected a 4-byte length prefix, no bytes left")
        raise cut_prefix_error(offset, left)
    length = read_length(view, offset, offset, byteorder, limit)
    start = offset + PREFIX_SIZE
    end = start + length
    if end > len(view):
        raise cut_error(offset, length, len(view) - start)
    return start, end


def _read_exactly(read: Callable[[int], bytes], n: int) -> bytes | bytearray:
    """Up to ``n`` bytes from a blocking ``read``; fewer only when the data ends."""
    first = read(min(n, _CHUNK)) or b""
    if len(first) >= n:
        return first
    buf = bytearray(first)
    while len(buf) < n:
        chunk = read(min(n - len(buf), _CHUNK))
        if not chunk:
            break
        buf += chunk
    return buf


def read_payload(read: Callable[[int], bytes], base: int, byteorder: str, limit: int) -> bytes | bytearray:
    """One frame's payload through a blocking ``read`` (a file's, a socket's ``recv``).

    ``EOFError`` when the data ends before the frame's first byte (between frames is
    where a stream may end); ``base`` is the frame's offset in the stream, for errors.
    """
    prefix = _read_exactly(read, PREFIX_SIZE)
    if len(prefix) < PREFIX_SIZE:
        if not prefix:
            raise EOFError("no more framed values")
        raise cut_prefix_error(base, len(prefix))
    length = read_length(prefix, 0, base, byteorder, limit)
    payload = _read_exactly(read, length) if length else b""
    if len(payload) < length:
        raise cut_error(base, length, len(payload))
    return payload


# -- writing ------------------------------------------------------------------------------


def _check_writable(length: int) -> None:
    """A frame the engine could not read back is refused rather than written."""
    if length > MAX_FRAME_LENGTH:
        raise EncodeError(f"encoded value is {length} bytes; a frame holds at most {MAX_FRAME_LENGTH}")


def frame_value(encoder: _EncodesInto, value: Any, byteorder: str = "little") -> bytes:
    """``store_var(value)``: the length, then the value, encoded straight after a hole for the length."""
    prefix = prefix_struct(byteorder)
    out = bytearray(PREFIX_SIZE)
    encoder.encode_into(out, value)
    length = len(out) - PREFIX_SIZE
    _check_writable(length)
    prefix.pack_into(out, 0, length)
    return bytes(out)


def join_frames(payloads: Sequence[bytes | bytearray], byteorder: str = "little") -> bytes:
    """Encoded values as consecutive ``store_var`` records: each preceded by its length."""
    prefix = prefix_struct(byteorder)
    parts: list[bytes | bytearray] = []
    for payload in payloads:
        _check_writable(len(payload))
        parts += (prefix.pack(len(payload)), payload)
    return b"".join(parts)


# -- whole blobs of records (files) ----------------------------------------------------------


#: One record of a blob: the offset of its length prefix, and the payload's size (the
#: payload is ``data[offset + PREFIX_SIZE:offset + PREFIX_SIZE + size]``).  A plain tuple:
#: save files hold thousands of records, and the scan is on every file's path.
Frame = tuple[int, int]


def scan_frames(data: Buffer, byteorder: str = "little") -> tuple[list[Frame], FramingError | None]:
    """The records of a ``store_var`` file, and what broke the framing (None: they tile ``data`` exactly).

    A blob without a single record is broken too (at its first byte): an empty file is
    not a file of records.  The errors name the record (counted from 1), since a save
    file's reader reports the intact ones before it.
    """
    unpack_from = prefix_struct(byteorder).unpack_from
    head, smallest = PREFIX_SIZE, MIN_RECORD_SIZE
    pos, end = 0, len(data)
    frames: list[Frame] = []
    while pos < end or not frames:
        if end - pos < head:
            return frames, FramingError(pos, f"record {len(frames) + 1}: the data ends {end - pos} byte(s) into "
                                             f"its {head}-byte length (file cut at byte {end})")
        size = unpack_from(data, pos)[0]
        if size < smallest or size > end - pos - head:
            return frames, _bad_record(len(frames) + 1, pos, size, end - pos - head)
        frames.append((pos, size))
        pos += head + size
    return frames, None


def _bad_record(k: int, pos: int, size: int, left: int) -> FramingError:
    """Why record ``k``, whose length announces ``size`` with ``left`` bytes after it, is not a frame."""
    if size < MIN_RECORD_SIZE:
        return FramingError(pos, f"record {k}: a frame of {size} bytes cannot hold a value")
    return FramingError(pos, f"record {k}: {cut_error(pos, size, left).reason}")


def split_frames(data: Buffer, byteorder: str = "little") -> list[bytes] | None:
    """The payloads, when ``store_var`` records tile ``data`` exactly (one record or several); else None."""
    buf = bytes(data)
    frames, broken = scan_frames(buf, byteorder)
    if broken is not None:
        return None
    return [buf[pos + PREFIX_SIZE:pos + PREFIX_SIZE + size] for pos, size in frames]
