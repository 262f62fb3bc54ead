"""Framing (store_var, put_var, PacketPeer datagrams) against what the engines wrote and read.

Expected bytes and values come from the engines: the ``raw`` wire captures in
fixtures/*/encode.jsonl and fixtures/*/stream.jsonl (Godot 3.2.3 and 4.6, made
from fixtures/*/stream_catalog.json by the oracles).  The engine tests at the
end have a real engine read what we wrote.
"""

from __future__ import annotations

import asyncio
import io
import socket
import struct
import threading
from typing import Any, Callable

import oracles
import pytest
from conftest import engine_cases

import godot_formats as gf
from godot_formats.streams import stream
from godot_formats.streams.stream import FramingError

ENGINES = ("godot3", "godot4")
LIMIT = stream.DEFAULT_MAX_PACKET_SIZE


def _case(engine: str, name: str, kind: str = "stream") -> dict[str, Any]:
    return next(c for c in engine_cases(engine, kind) if c["name"] == name)


def _hex(engine: str, name: str, kind: str = "stream") -> bytes:
    return bytes.fromhex(_case(engine, name, kind)["hex"])


def _in(engine: str, name: str) -> bytes:
    return bytes.fromhex(_case(engine, name)["in_hex"])


def _engine_read(engine: str, name: str) -> Any:
    """What the engine's get_var calls returned (the case returns them as an Array)."""
    return gf.loads(_hex(engine, name), engine)


# -- the engines' wire captures in encode.jsonl ----------------------------------------

# The value each wire case sends, from its GDScript body; and which API framed it.
WIRE_VALUES: dict[str, tuple[str, Any]] = {
    "wire_file_store_var_str": ("framed", "hi"),
    "wire_file_store_var_int64": ("framed", 9223372036854775807),
    "wire_streampeerbuffer_put_var_str": ("framed", "hi"),
    "wire_streampeer_put_var_str": ("framed", "hi"),
    "wire_packetpeerstream_put_var_str": ("framed", "hi"),
    "wire_packetpeerstream_put_var_int": ("framed", 7),
    "wire_packetpeerudp_put_var_str": ("packet", "hi"),
}
WIRE_OBJECTS = {"wire_file_store_var_object_full", "wire_file_store_var_refcounted_full",
                "wire_streampeerbuffer_put_var_resource_full"}


def _wire_cases() -> list[Any]:
    params = []
    for engine in ENGINES:
        for case in engine_cases(engine):
            if case.get("raw"):
                params.append(pytest.param(engine, case, id=f"{engine}-{case['name']}"))
    return params


@pytest.mark.parametrize("engine, case", _wire_cases())
def test_engine_wire_capture(engine: str, case: dict[str, Any]) -> None:
    wire = bytes.fromhex(case["hex"])
    name = case["name"]
    if name in WIRE_OBJECTS:
        # store_var(obj, true) / put_var(obj, true): refused unless asked for, then exact.
        with pytest.raises(gf.DecodeError, match="allow_objects"):
            stream.loads_framed(wire, engine)
        value = stream.loads_framed(wire, engine, allow_objects=True)
        assert isinstance(value, gf.Object)
        assert stream.dumps_framed(value, engine, full_objects=True) == wire
        return
    if name not in WIRE_VALUES:
        # A capture added later: at least the engine's bytes must come back unchanged.
        if struct.unpack_from("<I", wire)[0] == len(wire) - 4:
            assert stream.dumps_framed(stream.loads_framed(wire, engine), engine) == wire
        else:
            assert stream.encode_packet(stream.decode_packet(wire, engine), engine) == wire
        return
    kind, value = WIRE_VALUES[name]
    if kind == "packet":
        assert stream.encode_packet(value, engine) == wire
        assert stream.decode_packet(wire, engine) == value
    else:
        assert stream.dumps_framed(value, engine) == wire
        assert stream.loads_framed(wire, engine) == value
        assert stream.decode_framed(wire, engine) == (value, len(wire))


# -- fixtures/*/stream.jsonl: writing ---------------------------------------------------

SEQUENCE = ["hi", 7, [1, 2.5, "x"], None]  # file_store_var_sequence's four store_var calls


@pytest.mark.parametrize("engine", ENGINES)
def test_store_var_sequence_file(engine: str, tmp_path: Any) -> None:
    wire = _hex(engine, "file_store_var_sequence")
    assert b"".join(stream.dumps_framed(v, engine) for v in SEQUENCE) == wire
    assert list(stream.iter_framed(wire, engine)) == SEQUENCE
    assert list(stream.iter_framed(bytearray(wire), engine)) == SEQUENCE
    assert list(stream.iter_framed(memoryview(wire), engine)) == SEQUENCE
    path = tmp_path / "save.bin"
    with open(path, "wb") as f:
        sizes = [stream.write_framed(f, v, engine) for v in SEQUENCE]
    assert path.read_bytes() == wire and sum(sizes) == len(wire)
    with open(path, "rb") as f:
        assert list(stream.iter_framed(f, engine)) == SEQUENCE
    with open(path, "rb") as f:
        assert [stream.read_framed(f, engine) for _ in SEQUENCE] == SEQUENCE
        with pytest.raises(EOFError):
            stream.read_framed(f, engine)
    with open(path, "rb", buffering=0) as raw:  # unbuffered: reads may come back short
        assert list(stream.iter_framed(raw, engine)) == SEQUENCE


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["file_store_var_big_endian", "streampeerbuffer_put_var_big_endian"])
def test_big_endian_prefix(engine: str, name: str) -> None:
    # FileAccess.big_endian / StreamPeer.big_endian swap the length only; the value stays little-endian.
    wire = _hex(engine, name)
    assert stream.dumps_framed("hi", engine, byteorder="big") + stream.dumps_framed(7, engine, byteorder="big") == wire
    assert list(stream.iter_framed(wire, engine, byteorder="big")) == ["hi", 7]
    out = io.BytesIO()
    stream.write_framed(out, "hi", engine, byteorder="big")
    stream.write_framed(out, 7, engine, byteorder="big")
    assert out.getvalue() == wire
    # Read as little-endian, the first prefix announces 0x0c000000 bytes: refused, nothing allocated.
    with pytest.raises(FramingError, match="max_packet_size"):
        stream.loads_framed(wire, engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_packetpeerstream_prefix_ignores_big_endian(engine: str) -> None:
    assert _hex(engine, "packetpeerstream_put_var_big_endian") == stream.dumps_framed("hi", engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_put_var_empty_values(engine: str) -> None:
    wire = _hex(engine, "streampeerbuffer_put_var_empty_string")
    assert stream.dumps_framed("", engine) + stream.dumps_framed([], engine) == wire
    assert list(stream.iter_framed(wire, engine)) == ["", []]


# -- fixtures/*/stream.jsonl: reading, as the engine's get_var reads --------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_get_var_sequence(engine: str) -> None:
    data = _in(engine, "streampeerbuffer_get_var_sequence")
    *values, position = _engine_read(engine, "streampeerbuffer_get_var_sequence")
    assert list(stream.iter_framed(data, engine)) == values
    assert position == len(data)


@pytest.mark.parametrize("engine", ENGINES)
def test_get_var_big_endian(engine: str) -> None:
    data = _in(engine, "streampeerbuffer_get_var_big_endian")
    first, second, position = _engine_read(engine, "streampeerbuffer_get_var_big_endian")
    value, end = stream.decode_framed(data, engine, byteorder="big")
    assert value == first
    assert stream.decode_framed(data, engine, offset=end, byteorder="big") == (second, position)


@pytest.mark.parametrize("engine", ENGINES)
def test_get_var_skips_bytes_left_in_a_frame(engine: str) -> None:
    data = _in(engine, "streampeerbuffer_get_var_trailing_in_frame")
    engine_read = _engine_read(engine, "streampeerbuffer_get_var_trailing_in_frame")  # [7, 16, "hi", 32]
    value, end = stream.decode_framed(data, engine)
    value2, end2 = stream.decode_framed(data, engine, offset=end)
    assert [value, end, value2, end2] == engine_read


@pytest.mark.parametrize("engine", ENGINES)
def test_get_var_value_running_past_its_frame(engine: str) -> None:
    # The engine fails (null) and has consumed the frame; we raise a plain DecodeError
    # (not a FramingError: the stream is still in step) and can go on after it.
    data = _in(engine, "streampeerbuffer_get_var_value_past_frame")
    result, position = _engine_read(engine, "streampeerbuffer_get_var_value_past_frame")
    assert result is None and _case(engine, "streampeerbuffer_get_var_value_past_frame")["errors"]
    with pytest.raises(gf.DecodeError) as info:
        stream.loads_framed(data, engine)
    assert not isinstance(info.value, FramingError)
    assert info.value.offset == 8  # the String's length field, just past the 4-byte frame
    frames = stream.FrameDecoder(engine)
    frames.feed(data)
    with pytest.raises(gf.DecodeError):
        list(frames)
    assert frames.position == position
    # The next frame is read from byte 8 on, as the engine's next get_var would
    # (here the rest of the String, so its 2-byte "frame" is too short in turn).
    with pytest.raises(gf.DecodeError, match="at byte 12"):
        list(frames)


@pytest.mark.parametrize("engine", ENGINES)
def test_packet_get_var_ignores_trailing_bytes(engine: str) -> None:
    data = _in(engine, "packetpeerstream_get_var_trailing")
    [value] = _engine_read(engine, "packetpeerstream_get_var_trailing")
    assert stream.loads_framed(data, engine) == value
    assert stream.decode_packet(data[4:], engine) == value


def test_udp_datagram_get_var_ignores_trailing_bytes() -> None:
    data = _in("godot3", "packetpeerudp_get_var_trailing")
    [value] = _engine_read("godot3", "packetpeerudp_get_var_trailing")
    assert stream.decode_packet(data, "godot3") == value == 7


@pytest.mark.parametrize("engine", ENGINES)
def test_file_cut_inside_a_frame(engine: str, tmp_path: Any) -> None:
    # The engine's get_var returns null and stops at the end of the file (byte 22);
    # we raise a FramingError naming the frame (byte 12) and where the data ends.
    data = _in(engine, "file_get_var_truncated")
    first, second, position, eof = _engine_read(engine, "file_get_var_truncated")
    assert (second, position, eof) == (None, len(data), True)
    path = tmp_path / "cut.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        assert stream.read_framed(f, engine) == first
        with pytest.raises(FramingError) as info:
            stream.read_framed(f, engine)
    assert info.value.offset == 12
    assert f"ends at byte {len(data)}" in str(info.value)
    seen = []
    with pytest.raises(FramingError, match="at byte 12"):
        for value in stream.iter_framed(data, engine):
            seen.append(value)
    assert seen == [first]


# -- truncation, offsets, EOF -----------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_every_cut_of_a_file(engine: str) -> None:
    wire = _hex(engine, "file_store_var_sequence")
    starts = [0]
    for v in SEQUENCE:
        starts.append(starts[-1] + len(stream.dumps_framed(v, engine)))
    for cut in range(len(wire)):
        data = wire[:cut]
        if cut in starts:  # between two frames: a shorter but well-formed file
            assert list(stream.iter_framed(data, engine)) == SEQUENCE[:starts.index(cut)]
            assert list(stream.iter_framed(io.BytesIO(data), engine)) == SEQUENCE[:starts.index(cut)]
            continue
        frame_start = max(s for s in starts if s < cut)
        for source in (data, io.BytesIO(data)):
            with pytest.raises(FramingError) as info:
                list(stream.iter_framed(source, engine))
            assert info.value.offset == frame_start, (cut, str(info.value))
        frames = stream.FrameDecoder(engine)
        frames.feed(data)
        assert list(frames) == SEQUENCE[:starts.index(frame_start)]
        with pytest.raises(FramingError):
            frames.close()


def test_decode_error_offsets_count_from_the_start_of_the_data() -> None:
    good = stream.dumps_framed("hi")
    bad = struct.pack("<I", 4) + struct.pack("<I", 0xFF)  # unknown type id in the second frame
    data = good + bad
    for source in (data, io.BytesIO(data)):
        with pytest.raises(gf.DecodeError, match="unknown type id") as info:
            list(stream.iter_framed(source))
        assert info.value.offset == len(good) + 4
    frames = stream.FrameDecoder()
    frames.feed(data)
    with pytest.raises(gf.DecodeError) as info:
        list(frames)
    assert info.value.offset == len(good) + 4


def test_empty_inputs() -> None:
    assert list(stream.iter_framed(b"")) == []
    assert list(stream.iter_framed(io.BytesIO())) == []
    with pytest.raises(EOFError):
        stream.read_framed(io.BytesIO())
    with pytest.raises(FramingError, match="no bytes left"):
        stream.loads_framed(b"")
    with pytest.raises(FramingError, match="length prefix"):
        stream.loads_framed(b"\x08\x00")
    with pytest.raises(gf.DecodeError, match="4-byte type header"):  # a zero-length frame
        stream.loads_framed(b"\x00\x00\x00\x00")
    with pytest.raises(gf.DecodeError):
        stream.decode_packet(b"")


def test_loads_framed_reads_one_frame() -> None:
    data = stream.dumps_framed(1) + stream.dumps_framed(2)
    assert stream.loads_framed(data) == 1
    assert stream.decode_framed(data, offset=12) == (2, 24)


def test_read_framed_offsets_are_file_positions() -> None:
    f = io.BytesIO(b"junk" + stream.dumps_framed(5) + b"\x10\x00\x00\x00\x02")
    f.seek(4)
    assert stream.read_framed(f) == 5
    with pytest.raises(FramingError, match="at byte 16"):
        stream.read_framed(f)


# -- max_packet_size ---------------------------------------------------------------------


class RecordingFile(io.RawIOBase):
    """A file that remembers every read size (to show nothing big was requested)."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)
        self.requests: list[int] = []

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        self.requests.append(len(b))
        return self._f.readinto(b)

    def read(self, size: int = -1) -> bytes:
        self.requests.append(size)
        return self._f.read(size)


def test_oversized_length_refused_before_reading() -> None:
    prefix = struct.pack("<I", LIMIT + 1)
    data = prefix + b"\x00" * 64
    with pytest.raises(FramingError, match="max_packet_size") as info:
        stream.loads_framed(data)
    assert info.value.offset == 0 and str(LIMIT + 1) in str(info.value)
    f = RecordingFile(data)
    with pytest.raises(FramingError):
        stream.read_framed(f)  # type: ignore[arg-type]
    assert f.requests == [4]  # the prefix, and nothing after it
    sock = FakeSocket(data)
    with pytest.raises(FramingError):
        stream.recv_value(sock)
    assert sock.requests == [4, 3, 2, 1]  # one byte per recv, and nothing after the prefix


def test_limit_boundary_and_custom_limit() -> None:
    frame = stream.dumps_framed("x" * 100)
    size = len(frame) - 4
    assert stream.loads_framed(frame, max_packet_size=size) == "x" * 100
    with pytest.raises(FramingError, match=f"more than max_packet_size \\({size - 1}\\)"):
        stream.loads_framed(frame, max_packet_size=size - 1)
    with pytest.raises(FramingError):
        list(stream.iter_framed(io.BytesIO(frame), max_packet_size=size - 1))
    frames = stream.FrameDecoder(max_packet_size=size - 1)
    with pytest.raises(FramingError):
        frames.feed(frame[:4])  # refused as soon as the prefix is there
    assert frames.pending == 0
    with pytest.raises(FramingError):
        frames.feed(frame[4:])  # and it stays broken
    with pytest.raises(ValueError, match="negative"):
        stream.loads_framed(frame, max_packet_size=-1)


def test_lengths_the_engine_reads_as_negative() -> None:
    # get_32() into an int: 2**31 and above can never be read by the engine.
    data = struct.pack("<I", 0x80000000) + b"\x00" * 8
    with pytest.raises(FramingError, match="signed 32-bit"):
        stream.loads_framed(data, max_packet_size=2**40)


def test_packet_limits() -> None:
    blob = b"\x01" * 2000
    assert stream.decode_packet(stream.encode_packet(blob, max_packet_size=2012), max_packet_size=2012) == blob
    with pytest.raises(gf.EncodeError, match="max_packet_size"):
        stream.encode_packet(blob, max_packet_size=1024)
    with pytest.raises(gf.DecodeError, match="max_packet_size"):
        stream.decode_packet(gf.dumps(blob), max_packet_size=1024)


def test_bad_byteorder() -> None:
    for call in (lambda: stream.dumps_framed(1, byteorder="network"),  # type: ignore[arg-type]
                 lambda: stream.loads_framed(b"\0" * 8, byteorder="BIG"),  # type: ignore[arg-type]
                 lambda: stream.FrameDecoder(byteorder="native")):  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="byteorder"):
            call()


# -- allow_objects is off everywhere -----------------------------------------------------


def test_full_objects_refused_by_every_reader() -> None:
    wire = _hex("godot4", "wire_file_store_var_refcounted_full", "encode")
    payload = wire[4:]
    readers: list[Callable[..., Any]] = [
        lambda **kw: stream.loads_framed(wire, **kw),
        lambda **kw: list(stream.iter_framed(wire, **kw)),
        lambda **kw: stream.read_framed(io.BytesIO(wire), **kw),
        lambda **kw: stream.recv_value(FakeSocket(wire), **kw),
        lambda **kw: asyncio.run(_read_one([wire], **kw)),
        lambda **kw: stream.decode_packet(payload, **kw),
        lambda **kw: _feed_all(stream.FrameDecoder(**kw), [wire]),
    ]
    for read in readers:
        with pytest.raises(gf.DecodeError, match="allow_objects"):
            read()
        value = read(allow_objects=True)
        assert gf.Object("RefCounted", {"script": None}) in (value if isinstance(value, list) else [value])


# -- blocking sockets --------------------------------------------------------------------


class FakeSocket:
    """recv() hands out at most ``chunk`` bytes per call, like a slow TCP connection."""

    def __init__(self, data: bytes, chunk: int | Callable[[int], int] = 1) -> None:
        self._data = data
        self._pos = 0
        self._chunk = chunk
        self.requests: list[int] = []
        self.sent = bytearray()

    def recv(self, n: int) -> bytes:
        self.requests.append(n)
        k = self._chunk(n) if callable(self._chunk) else self._chunk
        out = self._data[self._pos:self._pos + min(n, k)]
        self._pos += len(out)
        return out

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def close(self) -> None:
        pass


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_recv_one_byte_at_a_time(engine: str, chunk: int) -> None:
    wire = _hex(engine, "file_store_var_sequence")
    sock = FakeSocket(wire, chunk)
    assert [stream.recv_value(sock, engine) for _ in SEQUENCE] == SEQUENCE
    with pytest.raises(EOFError):
        stream.recv_value(sock, engine)
    peer = stream.VariantSocket(FakeSocket(wire, chunk), engine)  # type: ignore[arg-type]
    assert list(peer) == SEQUENCE
    assert peer.received == len(wire)


def test_recv_cut_inside_a_frame() -> None:
    wire = stream.dumps_framed("hi") + stream.dumps_framed([1, 2, 3])
    with stream.VariantSocket(FakeSocket(wire[:-3]), "godot4") as peer:  # type: ignore[arg-type]
        assert peer.get_var() == "hi"
        with pytest.raises(FramingError, match="at byte 16") as info:
            peer.get_var()
    assert f"ends at byte {len(wire) - 3}" in str(info.value)
    with pytest.raises(FramingError, match="length prefix"):
        stream.recv_value(FakeSocket(b"\x01\x00"))


def test_send_value_and_put_var_write_engine_frames() -> None:
    wire = _hex("godot3", "file_store_var_sequence")
    sock = FakeSocket(b"")
    sizes = [stream.send_value(sock, v, "godot3") for v in SEQUENCE]
    assert bytes(sock.sent) == wire and sum(sizes) == len(wire)
    peer = stream.VariantSocket(FakeSocket(b""), "godot3")  # type: ignore[arg-type]
    for v in SEQUENCE:
        peer.put_var(v)
    assert bytes(peer.socket.sent) == wire  # type: ignore[attr-defined]


def test_real_socketpair_partial_reads_and_writes() -> None:
    # A value far larger than the socket buffers: sendall must loop over partial
    # send()s, and the reader gets it in many recv()s.
    big = [bytes(range(256)) * 4096, "end", gf.PackedInt32Array(range(50_000))]  # ~1.2 MB
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    a.settimeout(10)
    b.settimeout(10)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with stream.VariantSocket(a) as peer:
                peer.put_var(big)
                peer.put_var({"cmd": "bye"})
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=writer)
    t.start()
    try:
        with stream.VariantSocket(b) as peer:
            assert peer.get_var() == big
            assert list(peer) == [{"cmd": "bye"}]
    finally:
        t.join(10)
    assert not errors and not t.is_alive()


# -- asyncio -------------------------------------------------------------------------------


def _reader(chunks: list[bytes], eof: bool = True) -> asyncio.StreamReader:
    """A StreamReader that already holds ``chunks`` (call inside a running loop)."""
    reader = asyncio.StreamReader()
    for c in chunks:
        reader.feed_data(c)
    if eof:
        reader.feed_eof()
    return reader


def _feed_all(frames: stream.FrameDecoder, chunks: list[bytes]) -> list[Any]:
    out: list[Any] = []
    for c in chunks:
        frames.feed(c)
        out.extend(frames)
    frames.close()
    return out


def _chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


async def _collect(reader: asyncio.StreamReader, engine: str, **kw: Any) -> list[Any]:
    return [v async for v in stream.read_values(reader, engine, **kw)]


async def _collect_chunks(chunks: list[bytes], engine: str = "godot4", **kw: Any) -> list[Any]:
    return await _collect(_reader(chunks), engine, **kw)


async def _read_one(chunks: list[bytes], **kw: Any) -> Any:
    return await stream.read_value(_reader(chunks), **kw)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [1, 5, 16, 4096])
def test_asyncio_reader_fed_in_chunks(engine: str, size: int) -> None:
    wire = _hex(engine, "file_store_var_sequence")

    async def main() -> list[Any]:
        reader = asyncio.StreamReader()

        async def feed() -> None:  # the bytes arrive while read_values waits for them
            for c in _chunked(wire, size):
                reader.feed_data(c)
                await asyncio.sleep(0)
            reader.feed_eof()

        feeder = asyncio.ensure_future(feed())
        values = await asyncio.wait_for(_collect(reader, engine), 10)
        await feeder
        return values

    assert asyncio.run(main()) == SEQUENCE
    assert _feed_all(stream.FrameDecoder(engine), _chunked(wire, size)) == SEQUENCE


def test_asyncio_eof_between_and_inside_values() -> None:
    wire = stream.dumps_framed("a") + stream.dumps_framed("b")
    assert asyncio.run(_collect_chunks([wire])) == ["a", "b"]
    assert asyncio.run(_collect_chunks([])) == []
    with pytest.raises(EOFError):
        asyncio.run(_read_one([]))
    assert len(wire) == 32
    for cut in (31, 24, 18):  # inside the payload / inside the prefix of the second frame
        with pytest.raises(FramingError, match="at byte 16") as info:
            asyncio.run(_collect_chunks([wire[:cut]]))
        assert f"ends at byte {cut}" in str(info.value) or "length prefix" in str(info.value)


def test_asyncio_oversized_length_refused_without_waiting() -> None:
    # Only the prefix arrives and the stream stays open: the reader must not wait
    # for (or buffer) the announced payload.
    async def main() -> None:
        reader = _reader([struct.pack("<I", 2**31 - 1)], eof=False)
        with pytest.raises(FramingError, match="max_packet_size"):
            await asyncio.wait_for(stream.read_value(reader), 5)
        reader = _reader([struct.pack("<I", 1000)], eof=False)
        with pytest.raises(FramingError, match=r"more than max_packet_size \(999\)"):
            await asyncio.wait_for(stream.read_value(reader, max_packet_size=999), 5)

    asyncio.run(main())


def test_asyncio_big_endian_and_write_value() -> None:
    wire = _hex("godot4", "streampeerbuffer_put_var_big_endian")

    async def main() -> bytes:
        assert await _collect(_reader([wire]), "godot4", byteorder="big") == ["hi", 7]
        received = bytearray()

        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            received.extend(await reader.read())
            writer.close()

        server = await asyncio.start_server(on_client, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            await stream.write_value(writer, "hi", "godot4", byteorder="big")
            await stream.write_value(writer, 7, "godot4", byteorder="big", drain=False)
            writer.close()
            await writer.wait_closed()
            for _ in range(500):
                if len(received) >= len(wire):
                    break
                await asyncio.sleep(0.01)
        return bytes(received)

    assert asyncio.run(main()) == wire


# -- the engine reads what we wrote ------------------------------------------------------

# (value, GDScript 3 literal, GDScript 4 literal)
ENGINE_READ_VALUES: list[tuple[Any, str, str]] = [
    ("hi", '"hi"', '"hi"'),
    (7, "7", "7"),
    (2**40, "1099511627776", "1099511627776"),
    (None, "null", "null"),
    ([1, 2.5, "x"], '[1, 2.5, "x"]', '[1, 2.5, "x"]'),
    ({"cmd": "ping", "t": 1}, '{"cmd": "ping", "t": 1}', '{"cmd": "ping", "t": 1}'),
    (gf.Vector2(1.5, -2.0), "Vector2(1.5, -2)", "Vector2(1.5, -2)"),
    (gf.Color(1.0, 0.5, 0.25, 1.0), "Color(1, 0.5, 0.25, 1)", "Color(1, 0.5, 0.25, 1)"),
    (gf.PackedInt32Array([1, -2, 3]), "PoolIntArray([1, -2, 3])", "PackedInt32Array([1, -2, 3])"),
    (b"\x00\x01\xff", "PoolByteArray([0, 1, 255])", "PackedByteArray([0, 1, 255])"),
]


def _gd_bytes(data: bytes, engine: str) -> str:
    cls = "PackedByteArray" if engine == "godot4" else "PoolByteArray"
    return f"{cls}([{', '.join(map(str, data))}])"


def _engine_read_body(engine: str, data: bytes, big: bool) -> list[str]:
    """GDScript that reads ``data`` with StreamPeerBuffer.get_var and with a file's get_var,
    and returns, per value, whether it equals the expected literal (compared as var2str)."""
    g4 = engine == "godot4"
    to_str = "var_to_str" if g4 else "var2str"
    literals = [lit4 if g4 else lit3 for _, lit3, lit4 in ENGINE_READ_VALUES]
    body = [f"var expected = [{', '.join(literals)}]", "var buf = StreamPeerBuffer.new()",
            f"buf.big_endian = {'true' if big else 'false'}", f"buf.data_array = {_gd_bytes(data, engine)}",
            "var out = []", "for e in expected:", f"\tout.append({to_str}(buf.get_var()) == {to_str}(e))",
            "out.append(buf.get_available_bytes())"]
    if g4:
        body += ['var f = FileAccess.open("user://ours.bin", FileAccess.WRITE)',
                 f"f.store_buffer({_gd_bytes(data, engine)})", "f.close()",
                 'f = FileAccess.open("user://ours.bin", FileAccess.READ)', f"f.big_endian = {str(big).lower()}"]
    else:
        body += ["var f = File.new()", 'f.open("user://ours.bin", File.WRITE)',
                 f"f.store_buffer({_gd_bytes(data, engine)})", "f.close()",
                 'f.open("user://ours.bin", File.READ)', f"f.endian_swap = {str(big).lower()}"]
    body += ["for e in expected:", f"\tout.append({to_str}(f.get_var()) == {to_str}(e))",
             "out.append(f.get_position())", "f.close()", "return out"]
    return body


def _engine_reads_our_frames(engine: str, run: Callable[..., list[dict[str, Any]]]) -> None:
    values = [v for v, _, _ in ENGINE_READ_VALUES]
    cases = []
    for big in (False, True):
        order: stream.ByteOrder = "big" if big else "little"
        data = b"".join(stream.dumps_framed(v, engine, byteorder=order) for v in values)
        body = _engine_read_body(engine, data, big)
        cases.append({"name": f"read_our_frames_{order}", "body": body, "len": len(data)})
    for case, rec in zip(cases, run([{k: c[k] for k in ("name", "body")} for c in cases])):
        assert rec["ok"], rec
        result = gf.loads(bytes.fromhex(rec["hex"]), engine)
        n = len(values)
        assert result[:n] == [True] * n, (case["name"], result)
        assert result[n] == 0  # StreamPeerBuffer consumed everything
        assert result[n + 1:2 * n + 1] == [True] * n, (case["name"], result)
        assert result[2 * n + 1] == case["len"]


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_reads_our_frames() -> None:
    _engine_reads_our_frames("godot3", oracles.godot3_encode)


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
def test_godot4_reads_our_frames() -> None:
    _engine_reads_our_frames("godot4", oracles.godot4_encode)


def test_the_keyword_block_is_written_once_and_shown_everywhere() -> None:
    """Every reading and writing function takes its keywords from one declaration (stream.py's
    TypedDicts and Framing's defaults), shows them in its signature and refuses a misspelt one."""
    import inspect

    from godot_formats.streams import stream as s

    functions = [s.dumps_framed, s.decode_framed, s.loads_framed, s.iter_framed, s.write_framed, s.read_framed,
                 s.FrameDecoder, s.recv_value, s.send_value, s.VariantSocket, s.read_frame, s.read_value,
                 s.read_values, s.write_value, s.encode_packet, s.decode_packet]
    defaults = {"allow_objects": False, "full_objects": False, "byteorder": "little",
                "max_packet_size": s.DEFAULT_MAX_PACKET_SIZE, "max_depth": s.DEFAULT_MAX_DEPTH}
    for fn in functions:
        params = inspect.signature(fn).parameters
        shown = {name: p.default for name, p in params.items() if name in defaults}
        assert shown and all(defaults[name] == value for name, value in shown.items()), fn
        assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in params.values()), fn
    with pytest.raises(TypeError, match="bytorder"):
        s.loads_framed(b"", "godot4", bytorder="big")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="byteorder"):
        s.encode_packet(1, "godot4", byteorder="big")  # type: ignore[call-arg]  # a datagram has no length
    assert s.loads_framed(b"\x00\x00\x00\x08\x02\x00\x00\x00\x07\x00\x00\x00", byteorder="big") == 7
