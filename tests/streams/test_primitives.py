"""StreamPeerBuffer and FileAccess, judged by the engines.

``fixtures/primitives/primitives.jsonl`` holds call sequences the real engines ran (Godot 3.2.3
and 4.6): ``hex`` is the engine's bytes of the ``put_*``/``store_*`` calls, ``readback_hex`` its
``var_to_bytes`` of the Array of what its ``get_*`` calls read back.  Every sequence must be written
byte for byte here and read back to the same values.  The engine tests at the end run mixed
sequences through both live engines, in both byte orders and in both directions.
"""

from __future__ import annotations

import io
import math
import re
import struct
import warnings
from pathlib import Path
from typing import Any

import oracles
import pytest
from conftest import FIXTURES, GD3_FILE_HELPERS, budget, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.layers.encryption import GdecInfo, read_gdec
from godot_formats.streams.primitives import NonAsciiWarning, half_bits

RECORDS = read_jsonl(FIXTURES / "primitives" / "primitives.jsonl")
_CALL = re.compile(r"^(\w+)\((.*)\)(?:\[(\d+)\])?$", re.DOTALL)
_PACKED_CALL = re.compile(r"\b((?:Pool|Packed)\w*Array)\(\s*\[")


# -- running the GDScript call strings of the fixtures ---------------------------------------------


def _gdscript_args(text: str) -> str:
    """``PackedByteArray([1, 2])`` (GDScript) -> ``PackedByteArray(1, 2)`` (var_to_str, which from_text reads)."""
    out, pos = [], 0
    for m in _PACKED_CALL.finditer(text):
        if m.start() < pos:
            continue
        depth, i, quote = 1, m.end(), False
        while depth:
            c = text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == '"':
                    quote = False
            elif c == '"':
                quote = True
            elif c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
            i += 1
        # text[i - 1] is the closing "]", followed by ")"
        out.append(text[pos:m.start()] + m.group(1) + "(" + text[m.end():i - 1])
        pos = i
    return "".join(out) + text[pos:]


def call(obj: Any, expr: str, dialect: str) -> Any:
    """Run one GDScript call string (``put_var({"a": 1}, true)``, ``get_data(3)[1]``) on ``obj``."""
    m = _CALL.match(expr.strip())
    assert m, expr
    name, args, index = m.groups()
    values = gf.from_text("[" + _gdscript_args(args) + "]", dialect) if args.strip() else []
    result = getattr(obj, name)(*values)
    return result[int(index)] if index is not None else result


def _run_writes(rec: dict[str, Any], target: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for w in rec["writes"]:
            call(target, w, rec["dialect"])
    return caught


def _read_all(rec: dict[str, Any], source: Any) -> list[Any]:
    return [call(source, r, rec["dialect"]) for r in rec["reads"]]


def _open_write(path: Path, rec: dict[str, Any], **kw: Any) -> gf.FileAccess:
    return gf.FileAccess.open(path, "w", big_endian=rec["big_endian"], dialect=rec["dialect"], **kw)


def _open_read(path: Path, rec: dict[str, Any], **kw: Any) -> gf.FileAccess:
    return gf.FileAccess.open(path, "r", big_endian=rec["big_endian"], dialect=rec["dialect"], **kw)


# -- the fixtures ------------------------------------------------------------------------------------


def test_fixtures_cover_both_engines_and_apis() -> None:
    kinds = {(r["dialect"], r["api"]) for r in RECORDS}
    assert {("godot3", "StreamPeerBuffer"), ("godot3", "File"), ("godot4", "StreamPeerBuffer"),
            ("godot4", "FileAccess")} <= kinds


@pytest.mark.parametrize("rec", RECORDS, ids=[r["name"] for r in RECORDS])
def test_engine_sequence_written_byte_for_byte(rec: dict[str, Any], tmp_path: Path) -> None:
    if rec["api"] == "StreamPeerBuffer":
        peer = gf.StreamPeerBuffer(big_endian=rec["big_endian"], dialect=rec["dialect"])
        caught = _run_writes(rec, peer)
        written = peer.data_array
    else:
        path = tmp_path / "f.bin"
        with _open_write(path, rec) as f:
            caught = _run_writes(rec, f)
        written = path.read_bytes()
    assert written.hex() == rec["hex"]
    if rec.get("errors"):  # the engine logged an error: so do we, as a warning
        assert any(issubclass(w.category, NonAsciiWarning) for w in caught)


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["reads"]], ids=lambda r: r["name"])
def test_engine_bytes_read_back_to_what_the_engine_read(rec: dict[str, Any], tmp_path: Path) -> None:
    data = bytes.fromhex(rec["hex"])
    if rec["api"] == "StreamPeerBuffer":
        got = _read_all(rec, gf.StreamPeerBuffer(data, big_endian=rec["big_endian"], dialect=rec["dialect"]))
    else:
        path = tmp_path / "f.bin"
        path.write_bytes(data)
        with _open_read(path, rec) as f:
            got = _read_all(rec, f)
    assert gf.dumps(got, rec["dialect"]).hex() == rec["readback_hex"]
    assert gf.to_text(got, rec["dialect"]) == rec["readback_text"]


def test_put_string_non_ascii_follows_each_engine_or_refuses() -> None:
    for dialect, expected in (("godot3", "0500000068e96c6c6f"), ("godot4", "0500000068206c6c6f")):
        peer = gf.StreamPeerBuffer(dialect=dialect)
        with pytest.warns(NonAsciiWarning):
            peer.put_string("héllo")
        assert peer.data_array.hex() == expected
        strict = gf.StreamPeerBuffer(dialect=dialect, non_ascii="refuse")
        with pytest.raises(gf.EncodeError, match="ASCII"):
            strict.put_string("héllo")
        assert strict.data_array == b""
    # Godot 3.2.3 keeps the low 8 bits of any character (measured: "€😀" -> ac 00); Godot 4.6 spaces.
    for dialect, expected in (("godot3", "02000000ac00"), ("godot4", "020000002020")):
        peer = gf.StreamPeerBuffer(dialect=dialect)
        with pytest.warns(NonAsciiWarning):
            peer.put_string("€😀")
        assert peer.data_array.hex() == expected


# -- behaviour measured on the engines (3.2.3 and 4.6 agree unless said) ---------------------------


def test_widths_are_cut_as_the_engine_casts() -> None:
    """Measured: put_u8(300) put_8(-129) put_u16(-1) put_float(1e300) put_u64(-1)."""
    for dialect in ("godot3", "godot4"):
        peer = gf.StreamPeerBuffer(dialect=dialect)
        peer.put_u8(300), peer.put_8(-129), peer.put_u16(-1), peer.put_float(1e300), peer.put_u64(-1)
        assert peer.data_array.hex() == "2c7fffff0000807fffffffffffffffff"
        assert gf.StreamPeerBuffer(b"\xff" * 8, dialect=dialect).get_u64() == -1


@pytest.mark.parametrize("value, bits", [
    (0.0, 0), (-0.0, 0), (1e-6, 0), (-1e-6, 0), (2.0 ** -14, 0x0400), (0.00006, 0), (65504.0, 0x7BFF),
    (65519.0, 0x7BFF), (65520.0, 0x7BFF), (70000.0, 0x7C00), (-70000.0, 0xFC00), (math.inf, 0x7C00),
    (math.nan, 0x7FFF), (1e300, 0x7C00), (0.333, 0x3553),
])
def test_half_is_godot4_make_half_float(value: float, bits: int) -> None:
    """Every pair measured on Godot 4.6 (truncation, subnormals and -0 to +0, NaN 7fff)."""
    assert half_bits(value) == bits
    assert gf.StreamPeerBuffer(struct.pack("<H", 1)).get_half() == 2.0 ** -24  # reading is exact


def test_big_endian_swaps_lengths_not_variant_bytes() -> None:
    """Measured on both engines: put_var's length is put_32, so it swaps; the Variant does not."""
    peer = gf.StreamPeerBuffer(big_endian=True)
    peer.put_var([1, "a"])
    peer.put_16(-2)
    peer.put_utf8_string("hé")
    assert peer.data_array.hex() == ("0000001c" + gf.dumps([1, "a"], "godot4").hex() + "fffe" + "00000003"
                                     + "68c3a9")
    peer.seek(0)
    assert [peer.get_var(), peer.get_16(), peer.get_utf8_string()] == [[1, "a"], -2, "hé"]


def test_strings_end_at_nul_and_skip_a_bom() -> None:
    """Measured: get_string and get_utf8_string stop at NUL; a UTF-8 BOM is skipped; get_string is Latin-1."""
    assert gf.StreamPeerBuffer(bytes.fromhex("0400000061006263")).get_string() == "a"
    assert gf.StreamPeerBuffer(bytes.fromhex("06000000efbbbf610062")).get_utf8_string() == "a"
    assert gf.StreamPeerBuffer(bytes.fromhex("0200000068e9")).get_string() == "hé"
    with pytest.raises(gf.DecodeError) as e:
        gf.StreamPeerBuffer(bytes.fromhex("0200000061ff")).get_utf8_string()
    assert e.value.offset == 5


def test_data_calls_return_what_godot_returns() -> None:
    peer = gf.StreamPeerBuffer()
    assert peer.put_partial_data(b"\x01\x02") == [0, 2]
    assert peer.put_data(b"\x03") == 0
    peer.seek(0)
    assert peer.get_partial_data(8) == [0, b"\x01\x02\x03"]
    lenient = gf.StreamPeerBuffer(b"\xff\0\0\0", on_eof="zero")
    assert lenient.get_data(8) == [31, b"\xff" + bytes(7)] and lenient.get_position() == 4  # measured


def test_on_eof_zero_is_the_engine() -> None:
    """Measured: a u32 from 2 bytes is those bytes and zeros, position at the end; cut frames give null/""."""
    peer = gf.StreamPeerBuffer(b"\x01\x02", on_eof="zero")
    assert peer.get_u32() == 513 and peer.get_position() == 2
    assert peer.get_u8() == 0
    peer = gf.StreamPeerBuffer(bytes.fromhex("0a000000aabb"), on_eof="zero")
    assert peer.get_var() is None and peer.get_position() == 6
    peer = gf.StreamPeerBuffer(bytes.fromhex("05000000616263"), on_eof="zero")
    assert peer.get_string() == "" and peer.get_position() == 7


def test_write_after_seek_overwrites() -> None:
    peer = gf.StreamPeerBuffer()
    peer.put_32(0)
    peer.put_u8(7)
    peer.seek(0)
    peer.put_32(5)
    assert peer.data_array == b"\x05\0\0\0\x07"
    assert peer.get_available_bytes() == 1 and peer.get_size() == 5
    with pytest.raises(ValueError):
        peer.seek(6)


CSV_TEXT = bytes.fromhex("612c222262222c630d0a780d79007a0a22710a72222c730a")  # a,""b",c\r\nx\ry\0z\n"q\nr",s\n


@pytest.mark.parametrize("dialect, csv1, lines, text", [
    # measured on Godot 3.2.3: \r dropped everywhere, "" is a quote even outside quotes, NUL ends a line
    ("godot3", ["a", '"b,c\nxy\nz\nq'], ['r",s', ""], 'a,""b",c\nxy\nz\n"q\nr",s\n'),
    # Godot 4.6 ends a line at \r too and reads "" as a quote only inside quotes
    ("godot4", ["a", "b,c\nx\ny\nz\nq"], ['r",s', ""], None),
])
def test_lines_and_csv_follow_each_engine(dialect: str, csv1: list[str], lines: list[str], text: str | None,
                                          tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(CSV_TEXT)
    with gf.FileAccess.open(path, "r", dialect=dialect) as f:
        assert list(f.get_csv_line()) == csv1
        assert [f.get_line(), f.get_line()] == lines
        assert f.eof_reached()
        assert list(f.get_csv_line()) == [""]
        if text is not None:
            assert f.get_as_text() == text
            assert not f.eof_reached() and f.get_position() == len(CSV_TEXT)


def test_get_as_text_per_engine(tmp_path: Path) -> None:
    """Measured on ef bb bf 'ab' 00 'c' \\r\\n 'd': Godot 3 "ab\\nc\\nd", Godot 4 "ab"."""
    path = tmp_path / "t.txt"
    path.write_bytes(bytes([0xEF, 0xBB, 0xBF, 0x61, 0x62, 0, 0x63, 0x0D, 0x0A, 0x64]))
    with gf.FileAccess.open(path, "r", dialect="godot3") as f:
        assert f.get_as_text() == "ab\nc\nd"
        assert f.get_line() == "ab"
    with gf.FileAccess.open(path, "r", dialect="godot4") as f:
        assert f.get_as_text() == "ab"
        assert f.get_line() == "ab"


def test_get_buffer_past_the_end(tmp_path: Path) -> None:
    """Measured: Godot 3.2.3 get_buffer(1000) of 24 bytes gives 1000 (zero padded), Godot 4.6 gives 24."""
    path = tmp_path / "b.bin"
    path.write_bytes(b"x" * 24)
    for dialect, size in (("godot3", 1000), ("godot4", 24)):
        with gf.FileAccess.open(path, "r", dialect=dialect, on_eof="zero") as f:
            assert len(f.get_buffer(1000)) == size and f.eof_reached() and f.get_32() == 0
        with gf.FileAccess.open(path, "r", dialect=dialect) as f:
            with pytest.raises(gf.DecodeError):
                f.get_buffer(1000)
            assert f.get_position() == 0 and f.eof_reached()


def test_half_is_godot4_only() -> None:
    with pytest.raises(gf.GodotFormatsError, match="Godot 4 only"):
        gf.StreamPeerBuffer(dialect="godot3").put_half(1.0)
    with pytest.raises(gf.GodotFormatsError, match="Godot 4 only"):
        gf.StreamPeerBuffer(b"\0\0", dialect="godot3").get_half()


def test_real_follows_real_t(tmp_path: Path) -> None:
    for dialect, size in (("godot4", 4), ("godot4-double", 8), ("godot3", 4)):
        with gf.FileAccess.open(tmp_path / "r.bin", "w", dialect=dialect) as f:
            f.store_real(0.1)
        with gf.FileAccess.open(tmp_path / "r.bin", "r", dialect=dialect) as f:
            assert f.get_length() == size
            assert f.get_real() == (0.1 if size == 8 else struct.unpack("<f", struct.pack("<f", 0.1))[0])


# -- files: modes, layers, atomic writes -------------------------------------------------------------


def test_write_is_atomic_and_only_on_success(tmp_path: Path) -> None:
    path = tmp_path / "save.dat"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with gf.FileAccess.open(path, gf.FileAccess.WRITE) as f:
            f.store_32(1)
            raise RuntimeError("the game crashed half-way")
    assert path.read_bytes() == b"old"
    with gf.FileAccess.open(path, gf.FileAccess.WRITE) as f:
        f.store_32(1)
        assert path.read_bytes() == b"old"  # nothing is written before close
    assert path.read_bytes() == b"\x01\0\0\0"
    assert [p.name for p in tmp_path.iterdir()] == ["save.dat"]


def test_modes_are_enforced(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    with gf.FileAccess.open(path, "w") as f:
        with pytest.raises(io.UnsupportedOperation):
            f.get_8()
    with gf.FileAccess.open(path, "r") as f:
        with pytest.raises(io.UnsupportedOperation):
            f.store_8(1)
    with pytest.raises(ValueError):
        f.get_8()  # closed
    with pytest.raises(ValueError):
        gf.FileAccess.open(path, "rw")  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect, version", [("godot3", 3), ("godot4", 4)])
@pytest.mark.parametrize("big_endian", [False, True])
def test_encrypted_save_with_a_custom_layout(dialect: str, version: int, big_endian: bool, tmp_path: Path) -> None:
    path = tmp_path / "save.enc"
    with gf.FileAccess.open(path, "w", dialect=dialect, password="hunter2", big_endian=big_endian) as f:
        f.store_32(3)
        f.store_pascal_string("Ædith")
        f.store_var({"gold": 10})
    plain, info = read_gdec(path.read_bytes(), password="hunter2")
    assert info.version == version and not info.big_endian  # big_endian is the calls', not the header's
    assert plain[:4] == (b"\0\0\0\x03" if big_endian else b"\x03\0\0\0")
    with gf.FileAccess.open(path, "r", dialect=dialect, password="hunter2", big_endian=big_endian) as f:
        assert [f.get_32(), f.get_pascal_string(), f.get_var()] == [3, "Ædith", {"gold": 10}]
        assert isinstance(f.encryption, GdecInfo)
    with pytest.raises(gf.DecodeError):
        gf.FileAccess.open(path, "r", dialect=dialect, password="wrong")


@pytest.mark.parametrize("mode", [gf.FileAccess.COMPRESSION_FASTLZ, gf.FileAccess.COMPRESSION_DEFLATE,
                                  gf.FileAccess.COMPRESSION_ZSTD, gf.FileAccess.COMPRESSION_GZIP])
def test_compressed_save(mode: int, tmp_path: Path) -> None:
    path = tmp_path / "save.gcpf"
    with gf.FileAccess.open(path, "w", compression=mode) as f:
        f.store_line("x" * 5000)
        f.store_var([1, 2])
    assert path.read_bytes()[:4] == b"GCPF"
    with gf.FileAccess.open(path, "r", compression=gf.FileAccess.COMPRESSION_FASTLZ) as f:  # the file's mode wins
        assert f.get_line() == "x" * 5000 and f.get_var() == [1, 2]
        assert f.compression is not None and f.compression.mode == mode


def test_encrypted_and_compressed_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        gf.FileAccess.open(tmp_path / "x", "w", password="a", compression=0)


def test_file_objects(tmp_path: Path) -> None:
    out = io.BytesIO()
    with gf.FileAccess.open(out, "w", dialect="godot3") as f:
        f.store_16(513)
    assert out.getvalue() == b"\x01\x02"
    with gf.FileAccess.open(io.BytesIO(b"\x01\x02"), "r") as f:
        assert f.get_16() == 513


def test_store_past_the_end_fills_with_zeros(tmp_path: Path) -> None:
    with gf.FileAccess.open(tmp_path / "g.bin", "w") as f:
        f.seek(3)
        f.store_8(1)
        assert f.get_length() == 4
    assert (tmp_path / "g.bin").read_bytes() == b"\0\0\0\x01"


# -- hostile input ------------------------------------------------------------------------------------


def _huge(prefix: int = 0xFFFFFFF0) -> bytes:
    return struct.pack("<I", prefix) + b"abc"


@pytest.mark.parametrize("call_name", ["get_string", "get_utf8_string", "get_var"])
def test_huge_lengths_refused_before_allocating_streampeer(call_name: str) -> None:
    for length in (0xFFFFFFF0, 0x7FFFFFFF, 1 << 30, 4):
        peer = gf.StreamPeerBuffer(_huge(length))
        with pytest.raises(gf.DecodeError) as e:
            getattr(peer, call_name)()
        assert e.value.offset == 0 and "length" in e.value.reason
        assert peer.get_position() == 0
        lenient = gf.StreamPeerBuffer(_huge(length), on_eof="zero")
        assert getattr(lenient, call_name)() in ("", None)


@pytest.mark.parametrize("call_name", ["get_pascal_string", "get_var"])
def test_huge_lengths_refused_before_allocating_file(call_name: str, tmp_path: Path) -> None:
    path = tmp_path / "h.bin"
    path.write_bytes(_huge())
    with gf.FileAccess.open(path, "r") as f:
        with pytest.raises(gf.DecodeError) as e:
            getattr(f, call_name)()
        assert e.value.offset == 0
    with gf.FileAccess.open(path, "r") as f:
        with pytest.raises(gf.DecodeError):
            f.get_buffer(1 << 40)  # refused before anything is allocated


def test_reads_past_the_end_name_the_offset() -> None:
    peer = gf.StreamPeerBuffer(b"\x01\x02\x03\x04\x05")
    peer.get_u32()
    with pytest.raises(gf.DecodeError) as e:
        peer.get_u16()
    assert e.value.offset == 4 and peer.get_position() == 4
    with pytest.raises(gf.DecodeError):
        peer.get_data(2)
    with pytest.raises(gf.DecodeError):
        peer.get_string(9)
    assert peer.get_u8() == 5


def test_bad_variant_in_frame_names_its_offset() -> None:
    bad = struct.pack("<I", 8) + struct.pack("<II", 4, 100)  # a String claiming 100 bytes in an 8-byte frame
    peer = gf.StreamPeerBuffer(b"\0\0" + bad)
    peer.get_u16()
    with pytest.raises(gf.DecodeError) as e:
        peer.get_var()
    assert e.value.offset >= 6


# -- round trips -------------------------------------------------------------------------------------

INT_RANGES = {"8": (-128, 127), "u8": (0, 255), "16": (-(1 << 15), (1 << 15) - 1), "u16": (0, 65535),
              "32": (-(1 << 31), (1 << 31) - 1), "u32": (0, (1 << 32) - 1), "64": (-(1 << 63), (1 << 63) - 1),
              "u64": (0, (1 << 63) - 1)}
finite = st.floats(allow_nan=False)


# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None)
@given(kind=st.sampled_from(sorted(INT_RANGES)), data=st.data(), big_endian=st.booleans(),
       dialect=st.sampled_from(["godot3", "godot4"]))
def test_streampeer_ints_round_trip(kind: str, data: st.DataObject, big_endian: bool, dialect: str) -> None:
    lo, hi = INT_RANGES[kind]
    value = data.draw(st.integers(lo, hi))
    peer = gf.StreamPeerBuffer(big_endian=big_endian, dialect=dialect)
    getattr(peer, f"put_{kind}")(value)
    size = {"8": 1, "16": 2, "32": 4, "64": 8}[kind.lstrip("u")]
    raw = value.to_bytes(size, "big" if big_endian else "little", signed=value < 0)
    assert peer.data_array == raw
    peer.seek(0)
    assert getattr(peer, f"get_{kind}")() == value and peer.get_available_bytes() == 0


# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None)
@given(value=finite, big_endian=st.booleans())
def test_streampeer_floats_round_trip(value: float, big_endian: bool) -> None:
    peer = gf.StreamPeerBuffer(big_endian=big_endian)
    peer.put_double(value), peer.put_float(value), peer.put_half(value)
    peer.seek(0)
    assert peer.get_double() == value
    f32 = peer.get_float()
    assert math.isinf(f32) or f32 == struct.unpack("<f", struct.pack("<f", value))[0]
    half = peer.get_half()
    assert half_bits(half) == half_bits(value)  # a half read back writes the same bits


# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")),
       ascii_text=st.text(st.characters(max_codepoint=0x7F, blacklist_characters="\0")),
       value=st.recursive(st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 63) - 1) | st.text(),
                          lambda inner: st.lists(inner, max_size=4), max_leaves=8),
       big_endian=st.booleans(), dialect=st.sampled_from(["godot3", "godot4"]))
def test_streampeer_strings_and_vars_round_trip(text: str, ascii_text: str, value: Any, big_endian: bool,
                                                dialect: str) -> None:
    peer = gf.StreamPeerBuffer(big_endian=big_endian, dialect=dialect)
    peer.put_utf8_string(text)
    peer.put_string(ascii_text)
    peer.put_var(value)
    peer.seek(0)
    assert peer.get_utf8_string() == text.removeprefix("\ufeff")  # a leading BOM is skipped, as the engine does
    assert peer.get_string() == ascii_text
    assert peer.get_var() == value


# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(40), deadline=None)
@given(ints=st.tuples(st.integers(0, 255), st.integers(0, 65535), st.integers(0, (1 << 32) - 1),
                      st.integers(-(1 << 63), (1 << 63) - 1)),
       reals=st.tuples(finite, finite, finite),
       text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\r\n")),
       fields=st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\r")),
                       min_size=1, max_size=4),
       blob=st.binary(max_size=20), big_endian=st.booleans(), dialect=st.sampled_from(["godot3", "godot4"]))
def test_fileaccess_round_trip(ints: tuple[int, int, int, int], reals: tuple[float, float, float], text: str,
                               fields: list[str], blob: bytes, big_endian: bool, dialect: str) -> None:
    out = io.BytesIO()
    with gf.FileAccess.open(out, "w", big_endian=big_endian, dialect=dialect) as f:
        f.store_8(ints[0]), f.store_16(ints[1]), f.store_32(ints[2]), f.store_64(ints[3])
        f.store_double(reals[0]), f.store_float(reals[1]), f.store_real(reals[2])
        if dialect == "godot4":
            f.store_half(reals[0])
        f.store_pascal_string(text)
        f.store_line(text)
        f.store_csv_line(fields, ";")
        f.store_var(text)
        f.store_buffer(blob)
    with gf.FileAccess.open(io.BytesIO(out.getvalue()), "r", big_endian=big_endian, dialect=dialect) as f:
        assert [f.get_8(), f.get_16(), f.get_32(), f.get_64()] == list(ints)
        assert f.get_double() == reals[0]
        f.get_float(), f.get_real()
        if dialect == "godot4":
            assert half_bits(f.get_half()) == half_bits(reals[0])
        plain = text.removeprefix("\ufeff")
        assert f.get_pascal_string() == plain and f.get_line() == plain
        got = list(f.get_csv_line(";"))
        # Godot 3 reads "" as a quote anywhere, its quoting's opening and closing quotes too, so a
        # field holding any quote does not come back (engine behaviour; fileaccess.get_csv_line).
        if dialect == "godot4" or not any('"' in f_ for f_ in fields):
            assert [g.removeprefix("\ufeff") for g in got] == [x.removeprefix("\ufeff") for x in fields] or \
                fields[0].startswith("\ufeff")
        assert f.get_var() == text and f.get_buffer(len(blob)) == blob
        assert f.get_position() == f.get_length() and not f.eof_reached()


# -- the live engines ---------------------------------------------------------------------------------

SPB_G4 = {
    "writes": ["put_8(-5)", "put_u8(250)", "put_16(-300)", "put_u16(65000)", "put_32(-70000)",
               "put_u32(4000000000)", "put_64(-5000000000)", "put_u64(-2)", "put_float(0.1)",
               "put_double(-0.1)", "put_half(-0.333)", "put_string(\"ascii\")",
               "put_utf8_string(\"wörld ✓\")", "put_var({\"a\": [1, 2.5, \"x\"], \"v\": Vector3(1, 2, 3)})",
               "put_var(PackedStringArray([\"a\", \"b\"]))", "put_data(PackedByteArray([1, 2, 3]))"],
    "reads": ["get_8()", "get_u8()", "get_16()", "get_u16()", "get_32()", "get_u32()", "get_64()", "get_u64()",
              "get_float()", "get_double()", "get_half()", "get_string()", "get_utf8_string()", "get_var()",
              "get_var()", "get_data(3)[1]"],
}
FILE_G4 = {
    "writes": ["store_8(200)", "store_16(65535)", "store_32(4000000000)", "store_64(-2)", "store_float(1.5)",
               "store_double(0.1)", "store_real(0.25)", "store_half(2.5)", "store_pascal_string(\"päscal ✓\")",
               "store_line(\"line one\")", "store_csv_line(PackedStringArray([\"a\", \"b;c\", \"d\\\"e\"]), \";\")",
               "store_string(\"tail\\r\\nx\\n\")", "store_var({\"k\": [1, 2.5]})",
               "store_buffer(PackedByteArray([9, 8]))"],
    "reads": ["get_8()", "get_16()", "get_32()", "get_64()", "get_float()", "get_double()", "get_real()",
              "get_half()", "get_pascal_string()", "get_line()", "get_csv_line(\";\")", "get_line()", "get_line()",
              "get_var()", "get_buffer(2)"],
}


def _godot3_sequence(seq: dict[str, list[str]]) -> dict[str, list[str]]:
    """The same calls in Godot 3: Pool arrays, no half."""
    def conv(items: list[str]) -> list[str]:
        return [s.replace("Packed", "Pool") for s in items if "half" not in s]
    return {"writes": conv(seq["writes"]), "reads": conv(seq["reads"])}


SPB_G3, FILE_G3 = _godot3_sequence(SPB_G4), _godot3_sequence(FILE_G4)


def _gd_reads(var: str, reads: list[str], major: int) -> str:
    """GDScript that appends every read to ``got`` and prints var_to_bytes of it."""
    lines = ["\tgot = []"] + [f"\tgot.append({var}.{r})" for r in reads]
    to_bytes = "var_to_bytes" if major == 4 else "var2bytes"
    return "\n".join(lines) + f"\n\tprint(\"@@R \" + {to_bytes}(got).hex_encode())\n"


def _python_side(seq: dict[str, list[str]], dialect: str, big_endian: bool, api: str, tmp: Path
                 ) -> tuple[bytes, str]:
    """Our bytes of the writes, and our var_to_bytes of reading them back."""
    rec = {**seq, "dialect": dialect, "big_endian": big_endian}
    if api == "spb":
        peer = gf.StreamPeerBuffer(big_endian=big_endian, dialect=dialect)
        _run_writes(rec, peer)
        data = peer.data_array
        got = _read_all(rec, gf.StreamPeerBuffer(data, big_endian=big_endian, dialect=dialect))
    else:
        path = tmp / f"py-{dialect}-{big_endian}.bin"
        with _open_write(path, rec) as f:
            _run_writes(rec, f)
        data = path.read_bytes()
        with _open_read(path, rec) as f:
            got = _read_all(rec, f)
    return data, gf.dumps(got, dialect).hex()


def _check_engine_output(out: str, expected: list[tuple[bytes, str]]) -> None:
    """Each case prints @@W (the engine's bytes) then @@R (what it read from ours)."""
    tags = [line.split(" ", 1) for line in out.splitlines() if line.startswith("@@")]
    written = [rest.strip() for tag, rest in tags if tag == "@@W"]
    read = [rest.strip() for tag, rest in tags if tag == "@@R"]
    assert len(written) == len(read) == len(expected), out
    for (ours, readback), engine_bytes, engine_read in zip(expected, written, read):
        assert engine_bytes == ours.hex(), out   # the engine wrote what we write
        assert engine_read == readback, out      # the engine read from our bytes what we read


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
def test_godot4_engine_reads_ours_and_writes_the_same(tmp_path: Path) -> None:
    """Godot 4.6, both byte orders: StreamPeerBuffer and FileAccess (plain and encrypted) sequences.

    The engine writes each sequence with put_*/store_* (compared with our bytes) and reads our
    bytes with get_* (compared with what we read).  The encrypted file is ours, read by
    ``open_encrypted_with_pass``; the engine's own encrypted file is read here.
    """
    body, expected = [], []
    for big in (False, True):
        be = "true" if big else "false"
        ours, readback = _python_side(SPB_G4, "godot4", big, "spb", tmp_path)
        expected.append((ours, readback))
        body.append(f"\tvar w{int(big)} := StreamPeerBuffer.new()\n\tw{int(big)}.big_endian = {be}\n"
                    + "".join(f"\tw{int(big)}.{c}\n" for c in SPB_G4["writes"])
                    + f"\tprint(\"@@W \" + w{int(big)}.data_array.hex_encode())\n"
                    + f"\tvar r{int(big)} := StreamPeerBuffer.new()\n\tr{int(big)}.big_endian = {be}\n"
                    + f"\tr{int(big)}.data_array = \"{ours.hex()}\".hex_decode()\n"
                    + _gd_reads(f"r{int(big)}", SPB_G4["reads"], 4))
        ours, readback = _python_side(FILE_G4, "godot4", big, "file", tmp_path)
        expected.append((ours, readback))
        body.append(f"\tvar f{int(big)} := FileAccess.open(\"user://w.bin\", FileAccess.WRITE)\n"
                    f"\tf{int(big)}.big_endian = {be}\n"
                    + "".join(f"\tf{int(big)}.{c}\n" for c in FILE_G4["writes"])
                    + f"\tf{int(big)}.close()\n"
                    + "\tprint(\"@@W \" + FileAccess.get_file_as_bytes(\"user://w.bin\").hex_encode())\n"
                    + f"\tput(\"user://r.bin\", \"{ours.hex()}\")\n"
                    + f"\tvar g{int(big)} := FileAccess.open(\"user://r.bin\", FileAccess.READ)\n"
                    + f"\tg{int(big)}.big_endian = {be}\n"
                    + _gd_reads(f"g{int(big)}", FILE_G4["reads"], 4))
    enc = tmp_path / "enc.bin"
    rec = {**FILE_G4, "dialect": "godot4", "big_endian": True}
    with _open_write(enc, rec, password="pässword") as f:
        _run_writes(rec, f)
    script = ("extends Node\nvar got = []\nfunc put(path: String, hex: String) -> void:\n"
              "\tvar w := FileAccess.open(path, FileAccess.WRITE)\n\tw.store_buffer(hex.hex_decode())\n\tw.close()\n"
              "func _ready() -> void:\n" + "".join(body)
              + f"\tput(\"user://e.bin\", \"{enc.read_bytes().hex()}\")\n"
              + "\tvar e := FileAccess.open_encrypted_with_pass(\"user://e.bin\", FileAccess.READ, \"pässword\")\n"
              + "\te.big_endian = true\n" + _gd_reads("e", FILE_G4["reads"], 4).replace("@@R", "@@E")
              + "\tvar c := FileAccess.open_encrypted_with_pass(\"user://c.bin\", FileAccess.WRITE, \"pässword\")\n"
              + "\tc.big_endian = true\n" + "".join(f"\tc.{w}\n" for w in FILE_G4["writes"]) + "\tc.close()\n"
              + "\tprint(\"@@C \" + FileAccess.get_file_as_bytes(\"user://c.bin\").hex_encode())\n"
              + "\tget_tree().quit()\n")
    out = oracles.godot4_run(script)
    _check_engine_output(out, expected)
    [enc_read] = [line.split(" ", 1)[1].strip() for line in out.splitlines() if line.startswith("@@E ")]
    assert enc_read == expected[-1][1], out
    [c_hex] = [line.split(" ", 1)[1].strip() for line in out.splitlines() if line.startswith("@@C ")]
    (tmp_path / "c.bin").write_bytes(bytes.fromhex(c_hex))
    with _open_read(tmp_path / "c.bin", rec, password="pässword") as f:
        assert gf.dumps(_read_all(rec, f), "godot4").hex() == expected[-1][1]




@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_engine_reads_ours_and_writes_the_same(tmp_path: Path) -> None:
    """Godot 3.2.3, both byte orders (``endian_swap``): StreamPeerBuffer and File, plain and encrypted.

    Encrypted files: ``endian_swap`` set after ``open_encrypted_with_pass`` swaps the calls inside
    (our ``big_endian``); set before it, it swaps only the header and leaves the calls
    little-endian (file D, read here with ``big_endian=False`` and rewritten byte for byte).
    """
    body, expected = [], []
    for big in (False, True):
        be, n = ("true" if big else "false"), int(big)
        ours, readback = _python_side(SPB_G3, "godot3", big, "spb", tmp_path)
        expected.append((ours, readback))
        body.append(f"\tvar w{n} = StreamPeerBuffer.new()\n\tw{n}.big_endian = {be}\n"
                    + "".join(f"\tw{n}.{c}\n" for c in SPB_G3["writes"])
                    + f"\tprint(\"@@W \" + w{n}.data_array.hex_encode())\n"
                    + f"\tvar r{n} = StreamPeerBuffer.new()\n\tr{n}.big_endian = {be}\n"
                    + f"\tr{n}.data_array = unhex(\"{ours.hex()}\")\n"
                    + _gd_reads(f"r{n}", SPB_G3["reads"], 3))
        ours, readback = _python_side(FILE_G3, "godot3", big, "file", tmp_path)
        expected.append((ours, readback))
        body.append(f"\tvar f{n} = File.new()\n\tf{n}.endian_swap = {be}\n\tf{n}.open(\"user://w.bin\", File.WRITE)\n"
                    + "".join(f"\tf{n}.{c}\n" for c in FILE_G3["writes"])
                    + f"\tf{n}.close()\n\tprint(\"@@W \" + hexfile(\"user://w.bin\"))\n"
                    + f"\tput(\"user://r.bin\", \"{ours.hex()}\")\n"
                    + f"\tvar g{n} = File.new()\n\tg{n}.endian_swap = {be}\n\tg{n}.open(\"user://r.bin\", File.READ)\n"
                    + _gd_reads(f"g{n}", FILE_G3["reads"], 3))
    enc = tmp_path / "enc.bin"
    rec = {**FILE_G3, "dialect": "godot3", "big_endian": True}
    with _open_write(enc, rec, password="hunter2") as f:
        _run_writes(rec, f)
    assert enc.read_bytes()[:4] == b"GDEC"
    script = ("extends SceneTree\nvar got = []\n" + GD3_FILE_HELPERS + "func _init():\n" + "".join(body)
              + f"\tput(\"user://e.bin\", \"{enc.read_bytes().hex()}\")\n"
              + "\tvar e = File.new()\n"
              + "\te.open_encrypted_with_pass(\"user://e.bin\", File.READ, \"hunter2\")\n\te.endian_swap = true\n"
              + _gd_reads("e", FILE_G3["reads"], 3).replace("@@R", "@@E")
              + "\tvar c = File.new()\n"
              + "\tc.open_encrypted_with_pass(\"user://c.bin\", File.WRITE, \"hunter2\")\n\tc.endian_swap = true\n"
              + "".join(f"\tc.{w}\n" for w in FILE_G3["writes"]) + "\tc.close()\n"
              + "\tprint(\"@@C \" + hexfile(\"user://c.bin\"))\n"
              + "\tvar d = File.new()\n\td.endian_swap = true\n"
              + "\td.open_encrypted_with_pass(\"user://d.bin\", File.WRITE, \"hunter2\")\n"
              + "".join(f"\td.{w}\n" for w in FILE_G3["writes"]) + "\td.close()\n"
              + "\tprint(\"@@D \" + hexfile(\"user://d.bin\"))\n\tquit()\n")
    out = oracles.godot3_run(script)
    _check_engine_output(out, expected)
    [enc_read] = [line.split(" ", 1)[1].strip() for line in out.splitlines() if line.startswith("@@E ")]
    assert enc_read == expected[-1][1], out
    [c_hex] = [line.split(" ", 1)[1].strip() for line in out.splitlines() if line.startswith("@@C ")]
    engine_file = bytes.fromhex(c_hex)
    assert engine_file == enc.read_bytes()  # ECB has no IV: the engine's encrypted file is ours, byte for byte
    (tmp_path / "c.bin").write_bytes(engine_file)
    with _open_read(tmp_path / "c.bin", rec, password="hunter2") as f:
        assert gf.dumps(_read_all(rec, f), "godot3").hex() == expected[-1][1]
    [d_hex] = [line.split(" ", 1)[1].strip() for line in out.splitlines() if line.startswith("@@D ")]
    swapped_header = bytes.fromhex(d_hex)
    assert swapped_header[:4] == b"CEDG"
    little = {**rec, "big_endian": False}
    (tmp_path / "d.bin").write_bytes(swapped_header)
    with _open_read(tmp_path / "d.bin", little, password="hunter2") as f:
        assert gf.dumps(_read_all(little, f), "godot3").hex() == expected[1][1]  # the little-endian File sequence
    with _open_write(tmp_path / "d2.bin", little, password="hunter2") as f:
        _run_writes(little, f)
        f.encryption = GdecInfo(3, big_endian=True)
    assert (tmp_path / "d2.bin").read_bytes() == swapped_header


def test_async_stream_peer_reads_a_mixed_message_in_pieces() -> None:
    """The docs example: put_u16, put_utf8_string, put_var, arriving a byte at a time."""
    import asyncio

    from godot_formats.streams.stream import AsyncStreamPeer, FramingError

    msg = gf.StreamPeerBuffer(big_endian=True)
    msg.put_u16(7), msg.put_utf8_string("Ædith"), msg.put_var({"hp": 3}), msg.put_half(1.5)

    async def run() -> None:
        reader = asyncio.StreamReader()
        for b in msg.data_array:
            reader.feed_data(bytes([b]))
        reader.feed_data(struct.pack(">I", 1 << 30))  # a hostile length
        reader.feed_eof()
        peer = AsyncStreamPeer(reader, None, "godot4", big_endian=True, max_packet_size=1 << 20)
        assert [await peer.get_u16(), await peer.get_utf8_string(), await peer.get_var(), await peer.get_half()] \
            == [7, "Ædith", {"hp": 3}, 1.5]
        with pytest.raises(FramingError) as e:
            await peer.get_var()
        assert e.value.offset == len(msg.data_array)
        with pytest.raises(EOFError):
            await peer.get_u8()

    asyncio.run(run())
