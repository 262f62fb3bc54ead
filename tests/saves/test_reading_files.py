"""Reading a file whole (``layers.files.read_at_most``), as ``gf.open`` and ``open_resource`` do: every
byte up to the limit, from where the file stands, whatever it says of its size."""

from __future__ import annotations

import io
import os
import tempfile
import threading
from pathlib import Path
from unittest import mock

import pytest

import godot_formats as gf
from godot_formats.core.errors import DecodeError
from godot_formats.layers.files import read_at_most
from godot_formats.saves.reading import read_bounded

DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "data.bin"
    p.write_bytes(DATA)
    return p


def test_a_file_is_read_whole_and_from_where_it_stands(path: Path) -> None:
    with open(path, "rb") as f:
        assert read_at_most(f, 1 << 30) == DATA
    with open(path, "rb") as f:
        f.seek(1000)
        assert read_at_most(f, 1 << 30) == DATA[1000:]
    with open(path, "rb", buffering=0) as f:
        assert read_at_most(f, 1 << 30) == DATA


@pytest.mark.parametrize("limit", [0, 1, 10, len(DATA) - 1, len(DATA), len(DATA) + 1])
def test_never_more_than_the_limit(path: Path, limit: int) -> None:
    with open(path, "rb") as f:
        assert read_at_most(f, limit) == DATA[:limit]


@pytest.mark.parametrize("limit", [len(DATA) // 2, len(DATA) - 1, len(DATA), len(DATA) * 2])
def test_a_file_that_grew_after_its_size_was_asked_is_read_to_its_end_or_the_limit(path: Path, limit: int) -> None:
    # fstat says 100 bytes; the file holds more by the time it is read.
    small = os.stat_result((0o100644, 0, 0, 1, 0, 0, 100, 0, 0, 0))
    with open(path, "rb") as f, mock.patch("godot_formats.layers.files.os.fstat", return_value=small):
        assert read_at_most(f, limit) == DATA[:limit]


def test_a_pipe_and_an_object_without_a_file_number_are_read_up_to_the_limit() -> None:
    assert read_at_most(io.BytesIO(DATA), 100) == DATA[:100]
    assert read_at_most(io.BytesIO(DATA), 1 << 30) == DATA
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, DATA), os.close(w)))
    writer.start()
    with os.fdopen(r, "rb") as f:
        assert read_at_most(f, 1 << 30) == DATA
    writer.join()


def test_an_empty_file_and_one_read_to_its_end_ask_for_a_byte(path: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with open(empty, "rb") as f:
        assert read_at_most(f, 1 << 30) == b""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        assert read_at_most(f, 1 << 30) == b""
        f.seek(len(DATA) + 100)  # past its end
        assert read_at_most(f, 1 << 30) == b""


def test_other_file_objects_are_only_asked_to_read() -> None:
    # Their fileno() and tell() are not called: a SpooledTemporaryFile would move itself to disk,
    # and an object's own fileno() may return or raise anything.
    spooled = tempfile.SpooledTemporaryFile(max_size=1 << 20)
    spooled.write(DATA)
    spooled.seek(0)
    assert read_at_most(spooled, 1 << 30) == DATA  # type: ignore[arg-type]
    assert not spooled._rolled  # type: ignore[attr-defined]  # still in memory
    odd = mock.Mock()
    odd.read.side_effect = lambda n: DATA[:n]
    odd.fileno.side_effect = RuntimeError("no file number here")
    assert read_at_most(odd, 100) == DATA[:100]
    odd.fileno.assert_not_called()
    assert gf.open(io.BytesIO(gf.dumps({"a": 1}, "godot3")), dialect="godot3").values == [{"a": 1}]


def test_gf_open_and_open_resource_read_through_it(path: Path, tmp_path: Path) -> None:
    save = tmp_path / "s.sav"
    values = [{"a": 1}, [1.5, "x"]]
    with gf.FileAccess.open(save, "w", dialect="godot3") as f:
        for v in values:
            f.store_var(v)
    assert gf.open(save, dialect="godot3").values == values
    with open(save, "rb") as f:  # an open file object, read from where it stands
        assert gf.open(f, dialect="godot3").values == values
    assert read_bounded(path)[0] == DATA
    with pytest.raises(DecodeError):
        read_bounded(path, max_size=len(DATA) - 1)
    with open(path, "rb") as f:
        with pytest.raises(DecodeError):
            read_bounded(f, max_size=len(DATA) - 1)
    res = tmp_path / "r.tres"
    res.write_text('[gd_resource type="Resource" format=2]\n\n[resource]\nvalue = 3\n')
    assert gf.open_resource(res).main.properties == {"value": 3}
    with open(res, "rb") as f:
        assert gf.open_resource(f).main.properties == {"value": 3}
