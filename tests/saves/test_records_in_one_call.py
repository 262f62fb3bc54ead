"""A save's records read, converted and written in one call each: the same values, ends,
marks, errors, losses and bytes as record by record, under either backend.

The compiled core reads a run of records (``Decoder.decode_run``) and writes one
(``Encoder.encode_frames``); a record it leaves to the reference ends a run and is read through the
reference, so what a file reads as is what reading it record by record gives.  The expected values
here are that record-by-record reading, which the engine tests pin (tests/test_engine_*).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

import godot_formats as gf
from godot_formats.core.codec import Decoder, decoder_for, encoder_for
from godot_formats.core.dialects import get_dialect
from godot_formats.core.errors import DecodeError
from godot_formats.core.keys import same_value
from godot_formats.layers.framing import join_frames, scan_frames
from godot_formats.saves.detection import LOST, Layout, mostly_unread, read_layout


def _by_record(dialect: str, data: bytes, layout: Layout, past_errors: bool) -> tuple[Any, ...]:
    """read_layout's answer, record by record through decode_marked (what it did before runs)."""
    decoder = decoder_for(get_dialect(dialect), True)
    vals: list[Any] = []
    ends: list[int] = []
    lost = []
    marks = 0
    error = failed = None
    for i, (start, end) in enumerate(layout.spans):
        try:
            value, value_end, mark = decoder.decode_marked(data, start, end)
        except DecodeError as e:
            error, failed = (e, i) if error is None else (error, failed)
            if not past_errors:
                break
            lost.append((i, str(e)))
            vals.append(LOST)
            ends.append(end)
            continue
        if mostly_unread(start, end, value_end) and not past_errors:
            error, failed = DecodeError(value_end, "mostly unread"), i
            break
        vals.append(value)
        ends.append(value_end)
        marks |= mark
    return vals, ends, marks, None if error is None else (error.offset, failed), lost


def _as_read(dialect: str, data: bytes, layout: Layout, past_errors: bool) -> tuple[Any, ...]:
    a = read_layout(get_dialect(dialect), data, layout, past_errors=past_errors)
    return (list(a.values), list(a.ends), a.marks, None if a.error is None else (a.error.offset, a.failed),
            [(i, str(e)) for i, e in a.lost])


def _same(x: tuple[Any, ...], y: tuple[Any, ...]) -> bool:
    return len(x[0]) == len(y[0]) and all(a is b or same_value(a, b) for a, b in zip(x[0], y[0])) and x[1:] == y[1:]


def _records(rng: random.Random, n: int) -> list[Any]:
    return [{"id": i, "name": f"player {i}", "pos": gf.Vector3(i, 2.5, -3), "tags": ["a", "b"][:rng.randrange(3)],
             "hp": rng.random(), "big": rng.choice([1, 1 << 40])} for i in range(n)]


@pytest.mark.parametrize("dialect", ["godot3", "godot4", "godot3.0", "godot2"])
@pytest.mark.parametrize("past_errors", [False, True])
def test_a_run_reads_what_record_by_record_reads(dialect: str, past_errors: bool) -> None:
    rng = random.Random(22)
    blobs = [gf.dumps(v, "godot4" if dialect == "godot2" else dialect) for v in _records(rng, 300)]
    blobs[40] = blobs[40] + b"\0" * 4  # slack the engine skips
    blobs[120] = b"\xff\0\0\0" + blobs[120][4:]  # a bad type id: the reference's error
    blobs[200] = blobs[200][:8] + b"\0" * (len(blobs[200]) * 2)  # a value that leaves its frame mostly unread
    data = join_frames(blobs)
    layout = Layout.frames(data)
    assert layout is not None
    assert _same(_as_read(dialect, data, layout, past_errors), _by_record(dialect, data, layout, past_errors))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["godot3", "godot4"]), st.data())
def test_runs_over_any_records(dialect: str, data: st.DataObject) -> None:
    items = data.draw(st.lists(values(dialect, 6), min_size=1, max_size=8))
    blobs = []
    for v in items:
        try:
            blobs.append(gf.dumps(v, dialect))
        except gf.EncodeError:
            blobs.append(b"\x01\0\0\0\x01\0\0\0")
    raw = bytearray(join_frames(blobs))
    for _ in range(data.draw(st.integers(0, 3))):  # damage inside the payloads, never the prefixes
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    layout = Layout.frames(bytes(raw))
    if layout is None:
        return
    for past_errors in (False, True):
        assert _same(_as_read(dialect, bytes(raw), layout, past_errors),
                     _by_record(dialect, bytes(raw), layout, past_errors))


def test_decode_run_stops_before_a_record_it_leaves_to_the_reference() -> None:
    decoder: Decoder = decoder_for(get_dialect("godot3"), False)
    blobs = [gf.dumps(i, "godot3") for i in range(5)]
    blobs[3] = b"\xff\0\0\0"
    data = join_frames(blobs)
    layout = Layout.frames(data)
    assert layout is not None
    got, ends, _ = decoder.decode_run(data, layout.spans)
    if gf.backend == "python":
        assert got == [] and ends == []  # the reference reads record by record
    else:
        assert got == [0, 1, 2] and ends == [s + 8 for s, _ in layout.spans[:3]]
        assert decoder.decode_run(data, layout.spans, 4)[0] == [4]


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_encode_frames_writes_what_join_frames_writes(dialect: str, byteorder: str) -> None:
    encoder = encoder_for(get_dialect(dialect), False)
    items = [*_records(random.Random(5), 200), b"x" * 1001, [], {}, None, "text"]
    framed = encoder.encode_frames(items, byteorder)
    if gf.backend == "python":
        assert framed is None
        return
    assert framed == join_frames([encoder.encode(v) for v in items], byteorder)
    assert encoder.encode_frames([], byteorder) == b""
    assert encoder.encode_frames([object()], byteorder) is None  # the reference's error, with its record


def test_migration_names_the_record_of_a_loss() -> None:
    """Records converted in one call: each loss still names its record, strict lists them all."""
    records: list[Any] = [{"id": i, "speed": 0.5} for i in range(30)]
    records[17] = {"id": 17, "name": gf.StringName("hero")}  # Godot 3 has no StringName
    records[21] = {"id": 21, "names": [gf.StringName("a"), "b"]}
    data = join_frames([gf.dumps(v, "godot4") for v in records])
    sf = gf.open(data, dialect="godot4")
    converted, losses = sf.convert("godot3", policy="lossy")
    assert [loss.path for loss in losses] == ['<record 18 of 30>["name"]', '<record 22 of 30>["names"][0]']
    assert converted.values[17] == {"id": 17, "name": "hero"} and converted.values[3] is sf.values[3]
    with pytest.raises(gf.ConversionError) as caught:
        sf.convert("godot3")
    assert [loss.path for loss in caught.value.losses] == [loss.path for loss in losses]
    same, none = gf.open(join_frames([gf.dumps(v, "godot4") for v in records[:5]]),
                         dialect="godot4").convert("godot3")
    assert none == [] and same.values == records[:5]


@settings(deadline=None)
@given(st.lists(st.binary(max_size=12), max_size=6), st.binary(max_size=6), st.sampled_from(["little", "big"]))
def test_the_frames_are_the_scans(payloads: list[bytes], tail: bytes, byteorder: str) -> None:
    """Layout.frames (one compiled scan when built) finds what framing.scan_frames finds."""
    data = b"".join(len(p).to_bytes(4, byteorder) + p for p in payloads) + tail
    frames, broken = scan_frames(data, byteorder)
    expected = None if broken is not None else tuple((pos + 4, pos + 4 + size) for pos, size in frames)
    layout = Layout.frames(data, byteorder)
    assert (None if layout is None else layout.spans) == expected
