"""Variant framing for files, sockets, asyncio streams and datagrams.

What the engines put around ``var_to_bytes`` (checked against Godot 3.2.3 and
4.6: the ``wire_*`` cases of ``fixtures/*/encode.jsonl`` and
``fixtures/*/stream.jsonl``)::

    FileAccess.store_var / File.store_var       u32 length L + L bytes of var_to_bytes
    StreamPeer.put_var (TCP, StreamPeerBuffer)  u32 length L + L bytes of var_to_bytes
    PacketPeerStream.put_var                    u32 length L + L bytes (always little-endian)
    PacketPeer.put_var (UDP, ENet, WebSocket)   one datagram = var_to_bytes, no length

The length is written with ``store_32``/``put_32``, so it follows
``FileAccess.big_endian`` / ``StreamPeer.big_endian`` (``byteorder="big"``);
the variant bytes themselves are always little-endian.  ``PacketPeerStream``
writes its length with ``encode_uint32`` and ignores ``big_endian``.

The reading side follows ``get_var``: a frame's value is decoded from the
frame's bytes only (a value that would run past its frame is an error) and
bytes left over inside a frame are ignored, as the engine ignores them.
Unlike the engine, which trusts the length and allocates it, every reader
here takes ``max_packet_size`` and refuses a larger announced length before
reading or allocating anything; and unlike the engine, which prints an error
and returns ``null``, a bad frame raises.

Two kinds of errors tell a caller whether the stream can still be used:
:class:`FramingError` (the framing itself is broken: a length over the limit,
or the data ends inside a frame, so where the next frame starts is unknown;
close the connection) and a plain :class:`~godot_formats.errors.DecodeError`
(the frame was read whole but its value is bad; the next frame can be read).

The framing rules (the prefix, the limits, the errors) are those of
:mod:`godot_formats.framing`, shared with save files and detection; this module
is the I/O around them.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import io
import socket
from typing import IO, Any, AsyncIterator, Callable, Iterator, Mapping, Protocol, TypedDict, TypeVar, Union, Unpack

import attrs

from ..core.codec import DEFAULT_MAX_DEPTH, Decoder, Encoder, decoder_for, encoder_for
from ..core.dialects import Dialect, get_dialect
from ..core.errors import DecodeError, EncodeError
from ..core.limits import MAX_PACKET_SIZE
from ..layers.framing import (
    MAX_FRAME_LENGTH,
    PREFIX_SIZE,
    Buffer,
    ByteOrder,
    FramingError,
    cut_error,
    cut_prefix_error,
    frame_bounds,
    frame_value,
    length_limit,
    read_length,
    read_payload,
)
from .attributes import Strict

__all__ = [
    "DEFAULT_MAX_PACKET_SIZE", "PREFIX_SIZE", "MAX_FRAME_LENGTH", "ByteOrder", "FramingError",
    "dumps_framed", "loads_framed", "decode_framed", "iter_framed", "write_framed", "read_framed",
    "FrameDecoder", "recv_value", "send_value", "VariantSocket",
    "read_value", "write_value", "read_values", "read_frame", "encode_packet", "decode_packet",
    "AsyncStreamPeer", "ReadOptions", "WriteOptions", "Options",
]

#: Default limit on one frame or packet: 8 MiB, the default of the engine's
#: ``PacketPeer.encode_buffer_max_size``, so anything a default-configured
#: engine can send as a packet fits, while a hostile 4 GiB length is refused
#: before a byte of it is read (:data:`godot_formats.core.limits.MAX_PACKET_SIZE`).
#: Raise it for big save files.
DEFAULT_MAX_PACKET_SIZE = MAX_PACKET_SIZE

DialectLike = Union[str, Dialect]


# -- the keywords every function here takes, written once ------------------------------------
# Each keyword is declared once, in a TypedDict of its own (type checkers check callers through
# ``**options: Unpack[...]``), with its default once, in Framing; ``takes`` shows them in each
# function's signature for help() and editors.


class _Objects(TypedDict, total=False):
    allow_objects: bool  # decode full Objects (their class names and properties) instead of refusing them


class _FullObjects(TypedDict, total=False):
    full_objects: bool  # write Objects with their properties (``var_to_bytes_with_objects``)


class _Order(TypedDict, total=False):
    byteorder: ByteOrder  # of the u32 length prefix (``big_endian``); the value is always little-endian


class _Size(TypedDict, total=False):
    max_packet_size: int  # the largest frame or packet accepted, checked before anything is read


class _Depth(TypedDict, total=False):
    max_depth: int  # the deepest nesting of containers read or written


class ReadOptions(_Objects, _Order, _Size, _Depth, total=False):
    """The keywords of the functions that read framed values."""


class WriteOptions(_FullObjects, _Order, _Depth, total=False):
    """The keywords of the functions that write framed values."""


class Options(ReadOptions, WriteOptions, total=False):
    """The keywords of the objects that do both (:class:`VariantSocket`)."""


class _PacketReadOptions(_Objects, _Size, _Depth, total=False):
    pass


class _PacketWriteOptions(_FullObjects, _Size, _Depth, total=False):
    pass


class _FrameOptions(_Order, _Size, total=False):
    pass


@attrs.frozen(slots=False)
class Framing:
    """One call's options, checked: every keyword's default is stated here and nowhere else.

    Made once per distinct set of options (:func:`framing` remembers them), with the codec and the
    length limit they give, so a call costs one dict lookup more than a hand-written signature."""

    dialect: Dialect
    allow_objects: bool = False
    full_objects: bool = False
    byteorder: ByteOrder = "little"
    max_packet_size: int = DEFAULT_MAX_PACKET_SIZE
    max_depth: int = DEFAULT_MAX_DEPTH

    @functools.cached_property
    def decoder(self) -> Decoder:
        return decoder_for(self.dialect, self.allow_objects, self.max_depth)

    @functools.cached_property
    def encoder(self) -> Encoder:
        return encoder_for(self.dialect, self.full_objects, self.max_depth)

    @functools.cached_property
    def limit(self) -> int:
        """The largest length a prefix may announce (``framing.length_limit``)."""
        return length_limit(self.max_packet_size, self.byteorder)


_DEFAULTS = {f.name: f.default for f in attrs.fields(Framing) if f.name != "dialect"}
#: The options of recent calls, checked: (dialect, accepted, options) -> their Framing.
_MADE: dict[tuple[Any, ...], Framing] = {}


def framing(dialect: DialectLike, options: Mapping[str, Any], accepted: type = Options) -> Framing:
    """The options of one call, as :class:`Framing`; a keyword not in ``accepted`` is a TypeError,
    as Python's own for an unexpected keyword argument."""
    d = get_dialect(dialect)  # by name each time: a name may be registered again to another dialect
    try:
        key = (d, accepted, *options.items())
        return _MADE[key]
    except (KeyError, TypeError):  # new options, or a value that cannot be a key (then it is refused below)
        pass
    unknown = [k for k in options if k not in accepted.__annotations__]
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    made = Framing(d, **options)
    made.limit  # noqa: B018  (checks max_packet_size and byteorder now, before the call does any work)
    if len(_MADE) >= 256:
        _MADE.clear()
    try:
        _MADE[key] = made
    except TypeError:
        pass
    return made


_F = TypeVar("_F", bound=Callable[..., Any])


def takes(accepted: type) -> Callable[[_F], _F]:
    """Show the keywords of ``accepted`` (a TypedDict above) in the function's signature, where
    its ``**options`` stand: what help(), ``inspect`` and editors show is the real call."""
    def show(fn: _F) -> _F:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_DEFAULTS[name],
                                   annotation=getattr(kind, "__forward_arg__", kind))
                   for name, kind in accepted.__annotations__.items()]
        fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        return fn
    return show


class _Receiver(Protocol):
    def recv(self, bufsize: int, /) -> bytes: ...


class _Sender(Protocol):
    def sendall(self, data: bytes, /) -> Any: ...


# -- shared pieces -----------------------------------------------------------------
# The framing rules (the prefix, the limits, the errors) are in .framing; what is left
# here is decoding a frame's payload and the I/O around it.


def _decode_payload(payload: Buffer, decoder: Decoder, base: int) -> Any:
    """Decode a frame read on its own, with error offsets counted from the stream's start."""
    try:
        return decoder.decode(payload)[0]
    except DecodeError as e:
        raise DecodeError(base + e.offset, **e.reason_in()) from None


def _read_frame(read: Callable[[int], bytes], base: int, decoder: Decoder, byteorder: str,
                max_packet_size: int) -> tuple[Any, int]:
    """Read one frame through ``read``; return the value and the frame's size.

    ``EOFError`` when the data ends before the frame's first byte.
    """
    payload = read_payload(read, base, byteorder, max_packet_size)
    return _decode_payload(payload, decoder, base + PREFIX_SIZE), PREFIX_SIZE + len(payload)


# -- bytes ---------------------------------------------------------------------------


@takes(WriteOptions)
def dumps_framed(value: Any, dialect: DialectLike = "godot4", **options: Unpack[WriteOptions]) -> bytes:
    """The bytes of ``store_var(value)`` / ``put_var(value)``: a u32 length, then the value."""
    f = framing(dialect, options, WriteOptions)
    return frame_value(f.encoder, value, f.byteorder)


@takes(ReadOptions)
def decode_framed(data: Buffer, dialect: DialectLike = "godot4", *, offset: int = 0,
                  **options: Unpack[ReadOptions]) -> tuple[Any, int]:
    """Decode the frame that starts at ``offset``; return ``(value, end)``, ``end`` being the next frame's offset."""
    view = data if isinstance(data, bytes) else memoryview(data).cast("B")
    f = framing(dialect, options, ReadOptions)
    return _decode_frame_at(view, offset, f.decoder, f.byteorder, f.limit)


def _decode_frame_at(view: bytes | memoryview, offset: int, decoder: Decoder, byteorder: str,
                     limit: int) -> tuple[Any, int]:
    start, end = frame_bounds(view, offset, byteorder, limit)
    # Decoded in place, bounded by the frame, so the value cannot run into the next one.
    return decoder.decode(view, start, end)[0], end


@takes(ReadOptions)
def loads_framed(data: Buffer, dialect: DialectLike = "godot4", **options: Unpack[ReadOptions]) -> Any:
    """Decode the first length-prefixed value, as one ``get_var`` call would.

    What follows the first frame is not looked at (use :func:`iter_framed` for
    every value).
    """
    return decode_framed(data, dialect, **options)[0]


@takes(ReadOptions)
def iter_framed(source: Buffer | IO[bytes], dialect: DialectLike = "godot4",
                **options: Unpack[ReadOptions]) -> Iterator[Any]:
    """Every value of a file written by repeated ``store_var`` calls (bytes or a binary file).

    Stops at the end of the data when it falls between two frames; data that
    ends inside a frame raises :class:`FramingError`.
    """
    f = framing(dialect, options, ReadOptions)  # options are checked now, not at the first next()
    decoder, limit = f.decoder, f.limit
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _iter_buffer(source, decoder, f.byteorder, limit)
    return _iter_file(source, decoder, f.byteorder, limit)


def _iter_buffer(data: Buffer, decoder: Decoder, byteorder: str, limit: int) -> Iterator[Any]:
    view = data if isinstance(data, bytes) else memoryview(data).cast("B")
    pos = 0
    while pos < len(view):
        value, pos = _decode_frame_at(view, pos, decoder, byteorder, limit)
        yield value


def _iter_file(fp: IO[bytes], decoder: Decoder, byteorder: str, limit: int) -> Iterator[Any]:
    pos = _position(fp)
    while True:
        try:
            value, size = _read_frame(fp.read, pos, decoder, byteorder, limit)
        except EOFError:
            return
        pos += size
        yield value


# -- files ---------------------------------------------------------------------------


def _position(fp: IO[bytes]) -> int:
    """Where reading starts, so error offsets are file offsets (0 for pipes)."""
    try:
        return fp.tell() if fp.seekable() else 0
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return 0


@takes(WriteOptions)
def write_framed(fp: IO[bytes], value: Any, dialect: DialectLike = "godot4", **options: Unpack[WriteOptions]) -> int:
    """``FileAccess.store_var``: write one length-prefixed value; return the bytes written."""
    frame = dumps_framed(value, dialect, **options)
    fp.write(frame)
    return len(frame)


@takes(ReadOptions)
def read_framed(fp: IO[bytes], dialect: DialectLike = "godot4", **options: Unpack[ReadOptions]) -> Any:
    """``FileAccess.get_var``: read one length-prefixed value from a binary file.

    Raises ``EOFError`` at the end of the file (nothing left before the next
    frame), :class:`FramingError` when the file ends inside a frame; offsets in
    errors are file positions when the file can tell them.
    """
    f = framing(dialect, options, ReadOptions)
    return _read_frame(fp.read, _position(fp), f.decoder, f.byteorder, f.limit)[0]


# -- incremental (sans I/O) ----------------------------------------------------------


class FrameDecoder(Strict):
    """Framed values from bytes that arrive in pieces (selectors, protocols, polling loops).

    ``feed()`` what arrives, then iterate to get every value completed so far::

        frames = FrameDecoder("godot4")
        while chunk := sock.recv(65536):
            frames.feed(chunk)
            for value in frames:
                handle(value)
        frames.close()        # FramingError if the peer stopped inside a frame

    An announced length over ``max_packet_size`` raises :class:`FramingError`
    as soon as its 4 bytes arrive, before its payload is buffered; after that
    the decoder stays broken.  A bad value raises a plain DecodeError after
    its frame was consumed, so iterating again goes on with the next frame.
    """

    __slots__ = ("_decoder", "_byteorder", "_limit", "_buffer", "_pos", "_consumed", "_length", "_broken")

    @takes(ReadOptions)
    def __init__(self, dialect: DialectLike = "godot4", **options: Unpack[ReadOptions]) -> None:
        f = framing(dialect, options, ReadOptions)
        self._decoder, self._byteorder, self._limit = f.decoder, f.byteorder, f.limit
        self._buffer = bytearray()
        self._pos = 0  # start of the first unread frame in self._buffer
        self._consumed = 0  # stream offset of self._buffer[self._pos]
        self._length: int | None = None  # announced length of the frame being filled
        self._broken: FramingError | None = None

    @property
    def position(self) -> int:
        """Bytes of the stream consumed as whole frames so far."""
        return self._consumed

    @property
    def pending(self) -> int:
        """Bytes buffered for frames not read yet."""
        return len(self._buffer) - self._pos

    def feed(self, data: Buffer) -> None:
        """Add bytes; raises :class:`FramingError` at once on an oversized length."""
        if self._broken is not None:
            raise self._broken
        if self._pos:  # drop what was read, once per feed rather than once per frame
            del self._buffer[:self._pos]
            self._pos = 0
        self._buffer += data
        self._check_length()

    def _check_length(self) -> int | None:
        if self._length is None and self.pending >= PREFIX_SIZE:
            try:
                self._length = read_length(self._buffer, self._pos, self._consumed, self._byteorder, self._limit)
            except FramingError as e:
                self._broken = e
                self._buffer.clear()
                self._pos = 0
                raise
        return self._length

    def __iter__(self) -> Iterator[Any]:
        if self._broken is not None:
            raise self._broken
        while True:
            length = self._check_length()
            if length is None or self.pending < PREFIX_SIZE + length:
                return
            start = self._pos + PREFIX_SIZE
            payload = bytes(self._buffer[start:start + length])
            base = self._consumed + PREFIX_SIZE
            self._pos = start + length
            self._consumed += PREFIX_SIZE + length
            self._length = None
            yield _decode_payload(payload, self._decoder, base)

    def close(self) -> None:
        """Declare the end of the stream: :class:`FramingError` if it ends inside a frame."""
        if self._broken is not None:
            raise self._broken
        if self.pending:
            if self._length is None:
                raise cut_prefix_error(self._consumed, self.pending)
            raise cut_error(self._consumed, self._length, self.pending - PREFIX_SIZE)


# -- blocking sockets ----------------------------------------------------------------


@takes(ReadOptions)
def recv_value(sock: _Receiver, dialect: DialectLike = "godot4", **options: Unpack[ReadOptions]) -> Any:
    """``StreamPeerTCP.get_var`` on a blocking socket: one framed value.

    Keeps calling ``recv`` until the frame is whole (a recv may return any
    number of bytes).  ``EOFError`` when the peer closed between values;
    :class:`FramingError` when it closed inside one.  Error offsets count from
    the start of this frame (:class:`VariantSocket` counts from the connection's).
    """
    f = framing(dialect, options, ReadOptions)
    return _read_frame(sock.recv, 0, f.decoder, f.byteorder, f.limit)[0]


@takes(WriteOptions)
def send_value(sock: _Sender, value: Any, dialect: DialectLike = "godot4", **options: Unpack[WriteOptions]) -> int:
    """``StreamPeerTCP.put_var`` on a blocking socket; return the bytes sent.

    ``sendall`` keeps sending until the kernel took every byte, however many
    each underlying ``send`` accepted.
    """
    frame = dumps_framed(value, dialect, **options)
    sock.sendall(frame)
    return len(frame)


class VariantSocket(Strict):
    """A blocking socket that speaks ``StreamPeerTCP.put_var``/``get_var``.

    ``get_var()`` raises ``EOFError`` once the peer has closed between values;
    iterating yields values until then.  Error offsets count from the first
    byte received on this connection.  Socket errors (a ``settimeout`` that
    expires, a reset) pass through unchanged; after one that struck inside a
    frame the connection is out of step and should be closed.
    """

    __slots__ = ("socket", "dialect", "_decoder", "_encoder", "_byteorder", "_limit", "received")

    @takes(Options)
    def __init__(self, sock: socket.socket, dialect: DialectLike = "godot4", **options: Unpack[Options]) -> None:
        f = framing(dialect, options, Options)
        self.socket = sock
        self.dialect = f.dialect
        self._decoder, self._encoder = f.decoder, f.encoder
        self._byteorder, self._limit = f.byteorder, f.limit
        self.received = 0  # bytes received as whole frames

    @classmethod
    def connect(cls, address: tuple[str, int], dialect: DialectLike = "godot4", *, timeout: float | None = None,
                **options: Unpack[Options]) -> VariantSocket:
        """Open a TCP connection (``socket.create_connection``) and wrap it."""
        return cls(socket.create_connection(address, timeout=timeout), dialect, **options)

    def get_var(self) -> Any:
        value, size = _read_frame(self.socket.recv, self.received, self._decoder, self._byteorder, self._limit)
        self.received += size
        return value

    def put_var(self, value: Any) -> int:
        frame = frame_value(self._encoder, value, self._byteorder)
        self.socket.sendall(frame)
        return len(frame)

    def __iter__(self) -> Iterator[Any]:
        while True:
            try:
                value = self.get_var()
            except EOFError:
                return
            yield value

    def close(self) -> None:
        self.socket.close()

    def __enter__(self) -> VariantSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- asyncio -------------------------------------------------------------------------


async def _read_payload_async(reader: asyncio.StreamReader, base: int, byteorder: str,
                              max_packet_size: int) -> bytes:
    try:
        prefix = await reader.readexactly(PREFIX_SIZE)
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            raise EOFError("no more framed values") from None
        raise cut_prefix_error(base, len(e.partial)) from None
    length = read_length(prefix, 0, base, byteorder, max_packet_size)
    try:
        # StreamReader gathers the payload as it arrives: memory follows what
        # the peer really sent, and the length was checked against the limit.
        payload = await reader.readexactly(length)
    except asyncio.IncompleteReadError as e:
        raise cut_error(base, length, len(e.partial)) from None
    return payload


async def _read_frame_async(reader: asyncio.StreamReader, base: int, decoder: Decoder, byteorder: str,
                            max_packet_size: int) -> tuple[Any, int]:
    payload = await _read_payload_async(reader, base, byteorder, max_packet_size)
    return _decode_payload(payload, decoder, base + PREFIX_SIZE), PREFIX_SIZE + len(payload)


@takes(_FrameOptions)
async def read_frame(reader: asyncio.StreamReader, **options: Unpack[_FrameOptions]) -> bytes:
    """The payload of one frame from an asyncio stream, not decoded.

    For decoding somewhere else than the event loop (a worker thread) with
    :func:`decode_packet`: a frame's payload is one value, as a datagram is.
    Raises like :func:`read_value` (``EOFError`` between frames,
    :class:`FramingError` for a length over ``max_packet_size`` or a stream
    that ends inside a frame), but never a plain DecodeError.
    """
    f = framing("godot4", options, _FrameOptions)
    return await _read_payload_async(reader, 0, f.byteorder, f.limit)


@takes(ReadOptions)
async def read_value(reader: asyncio.StreamReader, dialect: DialectLike = "godot4",
                     **options: Unpack[ReadOptions]) -> Any:
    """One framed value from an asyncio stream (``StreamPeerTCP.put_var`` on the other end).

    ``EOFError`` when the stream ended between values, :class:`FramingError`
    when it ended inside one or announced more than ``max_packet_size``; a
    plain DecodeError means the frame was consumed and the next can be read.
    Error offsets count from the start of this frame.
    """
    f = framing(dialect, options, ReadOptions)
    return (await _read_frame_async(reader, 0, f.decoder, f.byteorder, f.limit))[0]


@takes(ReadOptions)
async def read_values(reader: asyncio.StreamReader, dialect: DialectLike = "godot4",
                      **options: Unpack[ReadOptions]) -> AsyncIterator[Any]:
    """``async for value in read_values(reader)``: values until the stream ends between two.

    Error offsets count from the first byte this iterator read.
    """
    f = framing(dialect, options, ReadOptions)
    decoder, byteorder, limit = f.decoder, f.byteorder, f.limit
    pos = 0
    while True:
        try:
            value, size = await _read_frame_async(reader, pos, decoder, byteorder, limit)
        except EOFError:
            return
        pos += size
        yield value


@takes(WriteOptions)
async def write_value(writer: asyncio.StreamWriter, value: Any, dialect: DialectLike = "godot4", *,
                      drain: bool = True, **options: Unpack[WriteOptions]) -> int:
    """Send one framed value (what ``StreamPeerTCP.get_var`` reads); return its size.

    Waits for ``writer.drain()`` unless ``drain=False``, so a slow reader
    pushes back instead of filling memory.
    """
    frame = dumps_framed(value, dialect, **options)
    writer.write(frame)
    if drain:
        await writer.drain()
    return len(frame)


# -- datagrams -----------------------------------------------------------------------


@takes(_PacketWriteOptions)
def encode_packet(value: Any, dialect: DialectLike = "godot4", **options: Unpack[_PacketWriteOptions]) -> bytes:
    """The datagram ``PacketPeer.put_var`` sends (UDP, ENet, WebSocket): the value, no length.

    Like the engine (``encode_buffer_max_size``), refuses a value whose
    encoding is larger than ``max_packet_size``.
    """
    f = framing(dialect, options, _PacketWriteOptions)
    data = f.encoder.encode(value)
    if len(data) > f.max_packet_size:
        raise EncodeError(f"encoded value is {len(data)} bytes, more than max_packet_size ({f.max_packet_size})")
    return data


@takes(_PacketReadOptions)
def decode_packet(packet: Buffer, dialect: DialectLike = "godot4", **options: Unpack[_PacketReadOptions]) -> Any:
    """``PacketPeer.get_var``: one datagram is one value (bytes after it are ignored, as the engine does)."""
    f = framing(dialect, options, _PacketReadOptions)
    if len(packet) > f.max_packet_size:
        raise DecodeError(0, f"packet of {len(packet)} bytes is larger than max_packet_size ({f.max_packet_size})")
    return f.decoder.decode(packet)[0]


# -- StreamPeer primitives over asyncio ------------------------------------------------------


class AsyncStreamPeer(Strict):
    """``StreamPeerTCP``'s ``get_*`` on an asyncio stream, and its ``put_*`` through :attr:`out`.

    For protocols that mix primitives with Variants (a ``put_u16`` id, a ``put_utf8_string``,
    a ``put_var``)::

        peer = AsyncStreamPeer(reader, writer, "godot4")
        kind = await peer.get_u16()
        name = await peer.get_utf8_string()
        value = await peer.get_var()
        peer.out.put_u16(1)
        peer.out.put_var({"ok": True})
        await peer.send()                       # writes what out holds, waits for drain()

    Each ``get_*`` reads exactly the bytes it needs and decodes them with a
    :class:`~godot_formats.streampeer.StreamPeerBuffer`, so the bytes and values are the
    engine's (docs/primitives.md).  A length over ``max_packet_size`` is refused as soon as its
    4 bytes arrive.  ``EOFError`` when the stream ends before a call's first byte,
    :class:`FramingError` inside one; error offsets count from the first byte read here.
    ``big_endian`` applies to both directions, as ``StreamPeer.big_endian`` does: setting it sets
    :attr:`out`'s too.
    """

    __slots__ = ("reader", "writer", "dialect", "_big_endian", "allow_objects", "_limit", "received", "out")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None = None,
                 dialect: DialectLike = "godot4", *, big_endian: bool = False, allow_objects: bool = False,
                 max_packet_size: int = DEFAULT_MAX_PACKET_SIZE) -> None:
        from .streampeer import StreamPeerBuffer
        self.reader, self.writer = reader, writer
        self.dialect = get_dialect(dialect)
        self._big_endian = bool(big_endian)
        self.allow_objects = allow_objects
        self._limit = length_limit(max_packet_size, "little")
        self.received = 0
        #: The outgoing bytes: ``put_*`` into it, then :meth:`send`.
        self.out = StreamPeerBuffer(big_endian=big_endian, dialect=self.dialect)

    @property
    def big_endian(self) -> bool:
        """The byte order of the numbers and length prefixes, read and put (:attr:`out`'s too)."""
        return self._big_endian

    @big_endian.setter
    def big_endian(self, value: bool) -> None:
        self._big_endian = bool(value)
        self.out.big_endian = self._big_endian

    async def _exactly(self, n: int, start: int) -> bytes:
        try:
            data = await self.reader.readexactly(n)
        except asyncio.IncompleteReadError as e:
            if self.received == start and not e.partial:
                raise EOFError("the stream ended") from None
            raise FramingError(start, f"the stream ends inside a value, {len(e.partial)} of {n} byte(s) "
                                      f"after byte {self.received}") from None
        self.received += n
        return data

    def _run(self, data: bytes, start: int, call: str, *args: Any) -> Any:
        from .streampeer import StreamPeerBuffer
        peer = StreamPeerBuffer(data, big_endian=self.big_endian, dialect=self.dialect)
        try:
            return getattr(peer, call)(*args)
        except DecodeError as e:
            raise DecodeError(start + e.offset, **e.reason_in()) from None

    async def _fixed(self, size: int, call: str) -> Any:
        start = self.received
        return self._run(await self._exactly(size, start), start, call)

    async def _counted(self, call: str, *args: Any) -> Any:
        start = self.received
        prefix = await self._exactly(PREFIX_SIZE, start)
        length = read_length(prefix, 0, start, "big" if self.big_endian else "little", self._limit)
        payload = await self._exactly(length, start) if length else b""
        return self._run(prefix + payload, start, call, *args)

    async def get_8(self) -> int:
        return int(await self._fixed(1, "get_8"))

    async def get_u8(self) -> int:
        return int(await self._fixed(1, "get_u8"))

    async def get_16(self) -> int:
        return int(await self._fixed(2, "get_16"))

    async def get_u16(self) -> int:
        return int(await self._fixed(2, "get_u16"))

    async def get_32(self) -> int:
        return int(await self._fixed(4, "get_32"))

    async def get_u32(self) -> int:
        return int(await self._fixed(4, "get_u32"))

    async def get_64(self) -> int:
        return int(await self._fixed(8, "get_64"))

    async def get_u64(self) -> int:
        return int(await self._fixed(8, "get_u64"))

    async def get_float(self) -> float:
        return float(await self._fixed(4, "get_float"))

    async def get_double(self) -> float:
        return float(await self._fixed(8, "get_double"))

    async def get_half(self) -> float:
        return float(await self._fixed(2, "get_half"))

    async def get_string(self) -> str:
        return str(await self._counted("get_string"))

    async def get_utf8_string(self) -> str:
        return str(await self._counted("get_utf8_string"))

    async def get_var(self) -> Any:
        return await self._counted("get_var", self.allow_objects)

    async def get_data(self, size: int) -> bytes:
        """``size`` bytes (the engine's ``get_data(size)[1]``)."""
        start = self.received
        return await self._exactly(size, start) if size else b""

    async def send(self, drain: bool = True) -> int:
        """Write the bytes :attr:`out` holds, then empty it; return how many were sent."""
        if self.writer is None:
            raise ValueError("this AsyncStreamPeer has no writer")
        data = self.out.data_array
        self.out.clear()
        self.writer.write(data)
        if drain:
            await self.writer.drain()
        return len(data)
