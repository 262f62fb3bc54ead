"""Reading a file whole (``layers.files.read_at_most``), as ``gf.open`` and ``open_resource`` do: every
byte up to the limit, from where the file stands, whatever it says of its size."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import godot_formats as gf
from godot_formats.errors import DecodeError
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


class _Grows:
    """A file whose fstat says it holds ``said`` bytes and whose reads give ``data``: one that grew
    between the two."""

    def __init__(self, real: Any, data: bytes) -> None:
        self._real, self._data = real, io.BytesIO(data)

    def fileno(self) -> int:
        return int(self._real.fileno())

    def tell(self) -> int:
        return self._data.tell()

    def read(self, n: int) -> bytes:
        return self._data.read(n)


@pytest.mark.parametrize("limit", [len(DATA) * 2, len(DATA) * 5])
def test_a_file_that_grew_after_its_size_was_asked_is_read_to_its_end_or_the_limit(path: Path, limit: int) -> None:
    more = DATA * 3
    with open(path, "rb") as real:
        assert read_at_most(_Grows(real, more), limit) == more[:limit]  # type: ignore[arg-type]


def test_a_pipe_and_an_object_without_a_file_number_are_read_up_to_the_limit() -> None:
    assert read_at_most(io.BytesIO(DATA), 100) == DATA[:100]
    assert read_at_most(io.BytesIO(DATA), 1 << 30) == DATA
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, DATA), os.close(w)))
    writer.start()
    with os.fdopen(r, "rb") as f:
        assert read_at_most(f, 1 << 30) == DATA
    writer.join()


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
