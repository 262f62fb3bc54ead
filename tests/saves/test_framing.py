"""The store_var framing rules (godot_formats.layers.framing), on the files and streams the engines wrote.

Expected bytes come from the engines: ``file_store_var_sequence`` and the big-endian cases of
fixtures/*/stream.jsonl (Godot 3.2.3 and 4.6 ``store_var``), and the framing cases of
fixtures/containers (slack after a value, ``endian_swap``/``big_endian``, a cut frame).
Every module that frames (detection, save files, streams) must agree with these rules,
byte for byte and error for error.
"""

from __future__ import annotations

import io
import struct
from typing import Any

import pytest
from conftest import FIXTURES, engine_cases, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core.codec import encoder_for
from godot_formats.layers import framing
from godot_formats.layers.framing import (
    MAX_FRAME_LENGTH,
    PREFIX_SIZE,
    FramingError,
    cut_error,
    frame_bounds,
    frame_value,
    join_frames,
    length_limit,
    prefix_struct,
    read_length,
    read_payload,
    scan_frames,
    split_frames,
)
from godot_formats.saves import detection, savefile
from godot_formats.streams import stream

ENGINES = ("godot3", "godot4")
CONTAINERS = {r["name"]: r for e in ENGINES for r in read_jsonl(FIXTURES / "containers" / f"{e}_containers.jsonl")}


def _stream_case(engine: str, name: str) -> bytes:
    return bytes.fromhex(next(c for c in engine_cases(engine, "stream") if c["name"] == name)["hex"])


def _payloads(data: bytes, byteorder: str = "little") -> list[bytes]:
    frames, broken = scan_frames(data, byteorder)
    assert broken is None, broken
    return [data[pos + PREFIX_SIZE:pos + PREFIX_SIZE + size] for pos, size in frames]


# -- the engines' files ------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_engine_store_var_files_split_and_join_back(engine: str) -> None:
    """store_var("hi"), store_var(7), store_var([1, 2.5, "x"]), store_var(null): four records."""
    data = _stream_case(engine, "file_store_var_sequence")
    payloads = split_frames(data)
    assert payloads is not None and len(payloads) == 4
    assert [gf.loads(p, engine) for p in payloads] == ["hi", 7, [1, 2.5, "x"], None]
    assert payloads[-1] == b"\0\0\0\0"  # a Nil is the smallest record: MIN_RECORD_SIZE bytes
    assert join_frames(payloads) == data
    assert detection.split_store_var(data) == payloads and detection.frame_store_var(payloads) == data


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_big_endian_files(engine: str) -> None:
    data = _stream_case(engine, "file_store_var_big_endian")
    assert split_frames(data) is None  # as little-endian lengths they do not tile the file
    payloads = split_frames(data, "big")
    assert payloads is not None and [gf.loads(p, engine) for p in payloads] == ["hi", 7]
    assert join_frames(payloads, "big") == data
    name = "g3_frame_endian_swap" if engine == "godot3" else "g4_frame_big_endian"
    record = CONTAINERS[name]
    assert _payloads(bytes.fromhex(record["file_hex"]), "big") == [bytes.fromhex(h) for h in record["value_hex"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_slack_is_part_of_the_frame(engine: str) -> None:
    """store_32(12) + store_buffer(var_to_bytes(7) + 4 bytes) + store_var(5): the frame holds the slack."""
    record = CONTAINERS[f"{engine[:1]}{engine[-1]}_frame_slack"]
    data = bytes.fromhex(record["file_hex"])
    first, second = _payloads(data)
    assert first == bytes.fromhex(record["value_hex"][0]) + bytes.fromhex("efbeadde")
    assert second == bytes.fromhex(record["value_hex"][1])


def test_engine_truncated_frame_is_named_the_same_everywhere() -> None:
    """store_32(100) then 8 bytes: the frame is cut; each reader says so in its own words, at byte 0."""
    data = bytes.fromhex(CONTAINERS["g4_frame_truncated"]["file_hex"])
    frames, broken = scan_frames(data)
    assert frames == [] and broken is not None and broken.offset == 0
    assert broken.reason == "record 1: frame of 100 bytes is cut after 8 byte(s) (the data ends at byte 12)"
    with pytest.raises(FramingError) as info:
        frame_bounds(data, 0, "little", MAX_FRAME_LENGTH)
    assert info.value.reason == "frame of 100 bytes is cut after 8 byte(s) (the data ends at byte 12)"
    with pytest.raises(FramingError) as info:
        read_payload(io.BytesIO(data).read, 0, "little", MAX_FRAME_LENGTH)
    assert info.value.reason == cut_error(0, 100, 8).reason
    assert detection.split_store_var(data) is None


# -- the rules one by one ---------------------------------------------------------------------

def test_prefix_and_limits() -> None:
    assert prefix_struct("little").pack(1) == b"\1\0\0\0" and prefix_struct("big").pack(1) == b"\0\0\0\1"
    with pytest.raises(ValueError, match="byteorder must be 'little' or 'big', not 'middle'"):
        prefix_struct("middle")
    with pytest.raises(ValueError, match="must not be negative"):
        length_limit(-1, "little")
    assert length_limit(1 << 40, "big") == MAX_FRAME_LENGTH
    assert length_limit(10, "little") == 10


def test_read_length_refuses_before_reading() -> None:
    assert read_length(b"xx\x05\0\0\0", 2, 100, "little", 5) == 5
    with pytest.raises(FramingError, match=r"at byte 100: frame announces 6 bytes, more than max_packet_size \(5\)"):
        read_length(b"xx\x06\0\0\0", 2, 100, "little", 5)
    with pytest.raises(FramingError, match=r"frame announces 2147483648 bytes \(0x80000000\), a negative length"):
        read_length(b"\x80\0\0\0", 0, 0, "big", MAX_FRAME_LENGTH)


def test_frame_bounds() -> None:
    data = b"\x02\0\0\0ab" + b"\x00\0\0\0"
    assert frame_bounds(data, 0, "little", 100) == (4, 6)
    assert frame_bounds(data, 6, "little", 100) == (10, 10)  # an empty frame is well framed
    with pytest.raises(FramingError, match="at byte 10: expected a 4-byte length prefix, no bytes left"):
        frame_bounds(data, 10, "little", 100)
    with pytest.raises(FramingError, match=r"at byte 0: the data ends inside a length prefix \(3 of 4 bytes\)"):
        frame_bounds(data[:3], 0, "little", 100)


def test_read_payload_through_small_reads() -> None:
    data = join_frames([b"hello world", b"", b"x" * 70000])
    source = io.BytesIO(data)

    def read(n: int) -> bytes:
        return source.read(min(n, 3))  # a peer that sends 3 bytes at a time

    assert read_payload(read, 0, "little", 1 << 20) == b"hello world"
    assert read_payload(read, 15, "little", 1 << 20) == b""
    assert read_payload(read, 19, "little", 1 << 20) == b"x" * 70000
    with pytest.raises(EOFError):
        read_payload(read, len(data), "little", 1 << 20)
    with pytest.raises(FramingError, match=r"at byte 7: the data ends inside a length prefix \(2 of 4 bytes\)"):
        read_payload(io.BytesIO(b"\1\0").read, 7, "little", 100)


def test_writing() -> None:
    encoder = encoder_for(gf.get_dialect("godot4"))
    assert frame_value(encoder, "hi") == stream.dumps_framed("hi") == join_frames([gf.dumps("hi")])
    assert frame_value(encoder, 7, "big") == b"\0\0\0\x08" + gf.dumps(7)
    with pytest.raises(ValueError, match="byteorder"):
        frame_value(encoder, 7, "network")

    class Huge(bytes):
        def __len__(self) -> int:
            return MAX_FRAME_LENGTH + 1

    with pytest.raises(gf.EncodeError, match="a frame holds at most 2147483647"):
        join_frames([Huge(b"")])


def test_scan_names_the_record_that_breaks() -> None:
    good = join_frames([gf.dumps(1, "godot3"), gf.dumps("ab", "godot3")])
    frames, broken = scan_frames(b"")
    assert frames == [] and broken is not None
    assert str(broken) == "at byte 0: record 1: the data ends 0 byte(s) into its 4-byte length (file cut at byte 0)"
    frames, broken = scan_frames(good + b"\1\0")
    assert len(frames) == 2 and broken is not None and broken.offset == len(good)
    assert broken.reason == (
        f"record 3: the data ends 2 byte(s) into its 4-byte length (file cut at byte {len(good) + 2})")
    frames, broken = scan_frames(good + b"\3\0\0\0abc")
    assert broken is not None and broken.reason == "record 3: a frame of 3 bytes cannot hold a value"
    frames, broken = scan_frames(good + b"\x10\0\0\0abcd")
    assert broken is not None and broken.reason == (
        f"record 3: frame of 16 bytes is cut after 4 byte(s) (the data ends at byte {len(good) + 8})")
    assert split_frames(good + b"\0") is None and split_frames(good) is not None


# -- every module frames by the same rules ------------------------------------------------------

def test_the_old_names_are_the_framing_module_s() -> None:
    assert stream.FramingError is framing.FramingError and savefile.FramingError is framing.FramingError
    assert stream.PREFIX_SIZE == PREFIX_SIZE and stream.MAX_FRAME_LENGTH == MAX_FRAME_LENGTH
    assert issubclass(FramingError, gf.DecodeError)


blobs = st.one_of(
    st.binary(max_size=64),
    st.lists(st.binary(min_size=0, max_size=12), max_size=5).map(join_frames),
    st.tuples(st.lists(st.binary(min_size=4, max_size=12), min_size=1, max_size=5).map(join_frames),
              st.binary(max_size=6)).map(lambda pair: pair[0] + pair[1]),
)


@settings(deadline=None)
@given(blobs, st.sampled_from(["little", "big"]))
def test_file_scan_and_stream_reader_agree(data: bytes, byteorder: str) -> None:
    """Where the records tile a blob, a stream reader walks the same frames; where the scan finds
    them broken, the stream reader breaks at the same frame or reads a frame the file rules refuse
    (a frame under 4 bytes, which ``get_var`` reads as a bad value)."""
    frames, broken = scan_frames(data, byteorder)
    pos = 0
    walked: list[Any] = []
    try:
        while pos < len(data):
            start, end = frame_bounds(data, pos, byteorder, MAX_FRAME_LENGTH)
            walked.append((pos, end - start))
            pos = end
        stream_broken = None
    except FramingError as e:
        stream_broken = e
    if broken is None:
        assert walked == frames and stream_broken is None
        assert join_frames([data[p + 4:p + 4 + n] for p, n in frames], byteorder) == data
    else:
        assert walked[:len(frames)] == frames
        small = len(walked) > len(frames) and walked[len(frames)][1] < framing.MIN_RECORD_SIZE
        assert small or not data or (stream_broken is not None and stream_broken.offset == broken.offset)
    records = detection.Layout.frames(data, byteorder)  # what gf.open's reading takes for records
    assert (records is None) == (broken is not None)
    if byteorder == "little":
        assert detection.split_store_var(data) == split_frames(data)


@settings(deadline=None)
@given(st.lists(st.binary(min_size=4, max_size=40), min_size=1, max_size=6), st.sampled_from(["little", "big"]))
def test_split_undoes_join(payloads: list[bytes], byteorder: str) -> None:
    data = join_frames(payloads, byteorder)
    assert split_frames(data, byteorder) == payloads
    assert struct.unpack_from("<I" if byteorder == "little" else ">I", data)[0] == len(payloads[0])
