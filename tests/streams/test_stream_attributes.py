"""The stream classes refuse attributes they do not have, naming the one meant, and take Godot 3's
names: ``f.endian_swap = True`` and ``b.bigendian = True`` were kept and ignored, and the
numbers came out little-endian without a word."""

from __future__ import annotations

import asyncio
import copy
import io
import pickle
import socket
from collections.abc import Iterator
from typing import Any

import pytest

import godot_formats as gf
from godot_formats.streams.attributes import GODOT3_NAMES, Strict
from godot_formats.streams.stream import AsyncStreamPeer, FrameDecoder, VariantSocket

KINDS = ["StreamPeerBuffer", "FileAccess", "FrameDecoder", "VariantSocket", "AsyncStreamPeer"]


@pytest.fixture(params=KINDS)
def obj(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One instance of each stream class (their sockets and event loop closed afterwards)."""
    a, b = socket.socketpair()
    loop = asyncio.new_event_loop()
    made = {"StreamPeerBuffer": lambda: gf.StreamPeerBuffer(),
            "FileAccess": lambda: gf.FileAccess.open(io.BytesIO(), "w"),
            "FrameDecoder": lambda: FrameDecoder("godot4"),
            "VariantSocket": lambda: VariantSocket(b),
            "AsyncStreamPeer": lambda: AsyncStreamPeer(asyncio.StreamReader(loop=loop))}
    try:
        yield made[request.param]()
    finally:
        a.close()
        b.close()
        loop.close()


def test_an_unknown_attribute_is_refused_naming_the_closest(obj: Any) -> None:
    with pytest.raises(AttributeError, match=r"has no attribute 'recieved'; did you mean 'received'\?|"
                                             r"has no attribute 'recieved' \(it has: "):
        obj.recieved = 1
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        obj.no_such_thing = 1
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        obj.no_such_thing  # noqa: B018 - reading is refused in the same words
    assert "no_such_thing" not in dir(obj)
    if hasattr(obj, "get_var"):
        with pytest.raises(AttributeError, match=r"did you mean 'get_var'\?"):
            obj.get_vra  # noqa: B018


def test_a_typo_of_big_endian_names_big_endian() -> None:
    b = gf.StreamPeerBuffer()
    with pytest.raises(AttributeError, match=r"StreamPeerBuffer has no attribute 'bigendian'; did you mean "
                                             r"'big_endian'\?"):
        b.bigendian = True  # type: ignore[attr-defined]
    b.put_u32(1)
    assert b.data_array == b"\x01\x00\x00\x00"  # nothing changed


def test_godot3_file_names_are_aliases_on_file_access(tmp_path: Any) -> None:
    """Godot 3.2's File: the property ``endian_swap`` and ``get_len()`` (Godot 4: big_endian, get_length)."""
    path = tmp_path / "f.bin"
    with gf.FileAccess.open(path, "w") as f:
        f.endian_swap = True  # type: ignore[attr-defined]
        assert f.big_endian is True and f.endian_swap is True  # type: ignore[attr-defined]
        f.store_32(1)
        assert f.get_len() == 4  # type: ignore[attr-defined]
    assert path.read_bytes() == b"\x00\x00\x00\x01"
    f = gf.FileAccess.open(path, "r")
    assert "endian_swap" in dir(f) and "get_len" in dir(f)
    assert GODOT3_NAMES["FileAccess"] == {"endian_swap": "big_endian", "get_len": "get_length"}


def test_a_godot3_name_of_another_class_points_to_this_ones() -> None:
    """StreamPeer's byte order was always ``big_endian``: File's Godot 3 name on a StreamPeerBuffer is
    refused (Godot 3 had no such name there) and the message names ``big_endian``."""
    with pytest.raises(AttributeError, match="did you mean 'big_endian'"):
        gf.StreamPeerBuffer().endian_swap = True  # type: ignore[attr-defined]


def test_names_the_classes_have_still_work() -> None:
    b = gf.StreamPeerBuffer()
    b.big_endian = True
    b.data_array = b"\x00\x01"
    assert b.get_u16() == 1
    b.on_eof = "zero"
    assert b.get_u16() == 0
    with pytest.raises(AttributeError, match="read-only"):
        b.get_size = 5  # type: ignore[method-assign]


def test_async_stream_peer_big_endian_applies_to_out_too() -> None:
    """Godot's StreamPeer.big_endian is one setting for both directions; set after construction it
    used to leave ``out`` little-endian."""
    loop = asyncio.new_event_loop()
    try:
        peer = AsyncStreamPeer(asyncio.StreamReader(loop=loop))
        peer.big_endian = True
        peer.out.put_u16(1)
        assert peer.out.data_array == b"\x00\x01"
    finally:
        loop.close()


def test_copy_and_pickle_keep_working() -> None:
    b = gf.StreamPeerBuffer(b"\x01\x02", big_endian=True)
    for other in (copy.copy(b), copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        assert other.big_endian and other.data_array == b"\x01\x02"


def test_a_subclass_without_slots_takes_any_attribute_as_python_classes_do() -> None:
    class Mine(gf.StreamPeerBuffer):
        pass

    m = Mine()
    m.note = "mine"  # type: ignore[attr-defined]
    assert m.note == "mine"  # type: ignore[attr-defined]
    assert isinstance(m, Strict)
