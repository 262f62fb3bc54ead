"""Compression: bare ``PackedByteArray.compress`` streams, GCPF files and the FastLZ port.

The engine is the judge: every compressed file and stream that Godot 3.2.3 and 4.6 wrote
(``fixtures/containers``) must decompress to the engine's own ``var2bytes`` bytes (framed as
``store_var`` frames for files), and compressing that plaintext again must give the engine's
bytes, with one known exception (Zstd in 3.2.3, an older libzstd; see ``OLDER_LIBZSTD``).
Untrusted input gives only ``DecodeError``, never allocates more than the input can hold, and a
decompression bomb stops at the block's size.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import random
import struct
import tracemalloc
import zlib
from typing import Any, Callable

import attrs
import brotli
import pytest
import zstandard
from conftest import FIXTURES, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core.errors import DecodeError, EncodeError
from godot_formats.layers import compression as cz
from godot_formats.layers import fastlz

CONTAINERS = FIXTURES / "containers"
ENGINE_FILES = {"godot3": "godot3_containers.jsonl", "godot4": "godot4_containers.jsonl"}
RECORDS = [
    r for engine, name in ENGINE_FILES.items() for r in read_jsonl(CONTAINERS / name)
    if r["container"] in ("compressed", "raw_compressed")
]
GCPF = [r for r in RECORDS if r["container"] == "compressed"]
BARE = [r for r in RECORDS if r["container"] == "raw_compressed"]
PYTHON_MADE = read_jsonl(CONTAINERS / "python_made_read_by_engine.jsonl")
BY_NAME = {r["name"]: r for r in RECORDS}

#: Godot 3.2.3 bundles an older libzstd than ``zstandard`` (godot#42174, #77344): for the
#: 376-byte save it picks other blocks (232 bytes against our 233), in the GCPF block and as a
#: bare stream.  Reading is unaffected; for these only decoding is compared.  (The bare stream
#: is among the cases held back from this checkout, so only the first is here.)
OLDER_LIBZSTD = {"g3_cmp_m2_save", "g3_pba_compress_m2"}

#: Records whose NodePath padding is uninitialised memory in 4.6 (fixtures/containers/README.md):
#: compared by decoded value, not by bytes.
NODEPATH_PADDING = {"g4_cmp_m1_g4types", "g4_enc_key_g4types_iv"}

FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["name"] for r in records]


def values(record: dict[str, Any]) -> list[bytes]:
    return [bytes.fromhex(v) for v in record["value_hex"]]


def store_var_frames(record: dict[str, Any]) -> bytes:
    """The plaintext of an ``open_compressed`` file: ``store_var`` = u32 LE length + var2bytes."""
    return b"".join(struct.pack("<I", len(v)) + v for v in values(record))


def split_frames(plaintext: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(plaintext):
        (n,) = struct.unpack_from("<I", plaintext, pos)
        out.append(plaintext[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def dialect_of(record: dict[str, Any]) -> str:
    return "godot3" if record["engine"].startswith("godot-3") else "godot4"


def file_of(record: dict[str, Any]) -> bytes:
    return bytes.fromhex(record["file_hex"])


def assert_engine_plaintext(record: dict[str, Any], plaintext: bytes) -> None:
    if record["name"] in NODEPATH_PADDING:
        dialect = dialect_of(record)
        assert [gf.loads(f, dialect) for f in split_frames(plaintext)] == [gf.loads(v, dialect) for v in values(record)]
    else:
        assert plaintext == store_var_frames(record)


def test_the_fixtures_cover_every_mode_in_both_engines() -> None:
    for engine in ("godot-3", "godot-4"):
        modes = {r["params"]["mode"] for r in GCPF if r["engine"].startswith(engine)}
        assert modes == {0, 1, 2, 3}, engine
    assert {r["params"]["mode"] for r in BARE} >= {0, 1, 2, 3}


# --- engine files ---------------------------------------------------------------------------


@pytest.mark.parametrize("record", GCPF, ids=ids(GCPF))
def test_engine_gcpf_decompresses_to_the_engine_plaintext(record: dict[str, Any]) -> None:
    data = file_of(record)
    plaintext, info = cz.read_gcpf(data)
    assert_engine_plaintext(record, plaintext)
    assert info.mode == record["params"]["mode"]
    assert (info.magic, info.block_size) == (b"GCPF", 4096)
    assert struct.unpack_from("<I", data, 12)[0] == len(plaintext)


@pytest.mark.parametrize("record", GCPF, ids=ids(GCPF))
def test_engine_gcpf_rewrites_byte_for_byte(record: dict[str, Any]) -> None:
    data = file_of(record)
    plaintext, info = cz.read_gcpf(data)
    ours = cz.write_gcpf(plaintext, info)
    if record["name"] in OLDER_LIBZSTD:
        assert cz.read_gcpf(ours)[0] == plaintext
        return
    assert ours.hex() == data.hex()


@pytest.mark.parametrize("record", BARE, ids=ids(BARE))
def test_engine_bare_stream_decompresses_and_recompresses(record: dict[str, Any]) -> None:
    data, mode, size = file_of(record), record["params"]["mode"], record["params"]["buffer_size"]
    (value,) = values(record)
    assert cz.decompress(data, mode, size) == value
    ours = cz.compress(value, mode)
    if record["name"] in OLDER_LIBZSTD:
        assert cz.decompress(ours, mode, size) == value
    else:
        assert ours.hex() == data.hex()


def test_engine_gzip_os_byte_is_kept() -> None:
    record = BY_NAME["g4_cmp_m3_multiblock"]
    plaintext, info = cz.read_gcpf(file_of(record))
    assert info.gzip_os == 3
    windows = cz.write_gcpf(plaintext, attrs.evolve(info, gzip_os=11))
    again, info11 = cz.read_gcpf(windows)
    assert again == plaintext and info11.gzip_os == 11
    assert cz.write_gcpf(again, info11) == windows


def test_rscc_magic_has_the_same_layout() -> None:
    data = file_of(BY_NAME["g4_cmp_m2_multiblock"])
    rscc = b"RSCC" + data[4:-4] + b"RSCC"
    plaintext, info = cz.read_gcpf(rscc)
    assert info.magic == b"RSCC" and plaintext == store_var_frames(BY_NAME["g4_cmp_m2_multiblock"])
    assert cz.write_gcpf(plaintext, info) == rscc


@pytest.mark.parametrize("record", PYTHON_MADE, ids=ids(PYTHON_MADE))
def test_python_made_brotli_files_that_godot_4_6_read(record: dict[str, Any]) -> None:
    data = file_of(record)
    plaintext, info = cz.read_gcpf(data)
    assert info.mode == cz.BROTLI
    # The engine read each back with get_var; its var_to_str is in "values".
    assert [gf.to_text(gf.loads(f, "godot4"), "godot4") for f in split_frames(plaintext)] == record["values"]
    with pytest.raises(EncodeError, match="cannot write Brotli"):
        cz.write_gcpf(plaintext, info)
    with pytest.raises(EncodeError, match="cannot write Brotli"):
        cz.compress(plaintext, cz.BROTLI)
    # What this writer makes with the opt-in is what the engine was shown to read.
    assert cz.write_gcpf(plaintext, info, allow_brotli_write=True) == data


# --- the mode table and bare-stream API ------------------------------------------------------


def test_mode_table() -> None:
    assert [(m.id, m.name, m.engine_writes) for m in cz.MODES] == [  # FileAccess.COMPRESSION_*
        (0, "FastLZ", True), (1, "Deflate", True), (2, "Zstd", True), (3, "Gzip", True), (4, "Brotli", False)]
    with pytest.raises(ValueError, match="unknown compression mode"):
        cz.mode_info(5)
    assert cz.GcpfInfo(mode=cz.ZSTD).mode_name == "Zstd"
    with pytest.raises(ValueError, match="unknown compression mode"):
        cz.GcpfInfo(mode=7)


@pytest.mark.parametrize("mode", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 4096, 70_000])
def test_bare_round_trip_and_sizes(mode: int, size: int) -> None:
    data = random.Random(size).randbytes(size // 2) + bytes(size - size // 2)
    stream = cz.compress(data, mode, allow_brotli_write=True)
    assert cz.decompress(stream, mode, size) == data
    with pytest.raises(DecodeError):
        cz.decompress(stream, mode, size + 17)
    if size > 16:
        with pytest.raises(DecodeError):
            cz.decompress(stream, mode, size - 1)
        with pytest.raises(DecodeError):
            cz.decompress(stream, mode, max_size=size - 1)
    got = cz.decompress(stream, mode, max_size=size + 100)
    assert got == (data + bytes(16 - size) if mode == cz.FASTLZ and size < 16 else data)


@pytest.mark.parametrize("options", [
    {"mode": 1, "level": 10}, {"mode": 3, "level": -2}, {"mode": 2, "level": 23}, {"mode": 0, "level": 1},
    {"mode": 2, "zstd_window_log": 32}, {"mode": 3, "gzip_os": 256}, {"mode": 9},
])
def test_bad_write_options_are_encode_errors(options: dict[str, Any]) -> None:
    with pytest.raises(EncodeError):
        cz.compress(b"data", **options)


def test_bare_decompress_wants_exactly_one_size() -> None:
    stream = cz.compress(b"abc", cz.DEFLATE)
    with pytest.raises(TypeError):
        cz.decompress(stream, cz.DEFLATE)
    with pytest.raises(TypeError):
        cz.decompress(stream, cz.DEFLATE, 3, max_size=3)


def test_fastlz_level_2_for_bare_streams_of_64_kib() -> None:
    data = reference_sample()
    stream = cz.compress(data, cz.FASTLZ)
    assert stream[0] >> 5 == 1  # level 2 marker
    assert cz.compress(data[:65535], cz.FASTLZ)[0] >> 5 == 0
    assert cz.decompress(stream, cz.FASTLZ, len(data)) == data


def test_missing_optional_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def without_zstd(name: str, package: str | None = None) -> Any:
        if name == "zstandard":
            raise ImportError("no zstandard")
        return real(name, package)

    data = file_of(BY_NAME["g4_cmp_m2_save"])
    monkeypatch.setattr(importlib, "import_module", without_zstd)
    with pytest.raises(DecodeError, match="'zstandard' package"):
        cz.read_gcpf(data)
    with pytest.raises(EncodeError, match="'zstandard' package"):
        cz.compress(b"x", cz.ZSTD)
    # Files in other modes do not need it.
    assert cz.read_gcpf(file_of(BY_NAME["g4_cmp_m1_save"]))[0]


# --- FastLZ -----------------------------------------------------------------------------------


def reference_sample() -> bytes:
    """98,452 bytes with words, runs, near and far repeats (distances past 8191: level 2's long form)."""
    rng = random.Random(20261123)
    words = [rng.randbytes(rng.randrange(3, 24)) for _ in range(64)]
    out = bytearray(rng.randbytes(9000))
    while len(out) < 96 * 1024:
        k = rng.randrange(4)
        if k == 0:
            out += rng.choice(words)
        elif k == 1:
            out += bytes([rng.randrange(256)]) * rng.randrange(1, 600)
        elif k == 2:
            i = rng.randrange(len(out) - 300)
            out += out[i : i + rng.randrange(5, 300)]
        else:
            out += rng.randbytes(rng.randrange(1, 40))
    return bytes(out)


#: SHA-256 and size of what the C reference (``fastlz.c`` of ariya/FastLZ tag 0.5.0, built for
#: this check; the engines vendor the same code) makes of ``reference_sample()``.  The engine
#: fixtures hold level-1 streams only (GCPF blocks are 4 KiB), so level 2 is pinned here.
C_REFERENCE = {
    1: (25271, "1f0de6255b9dc8a8d94545e14a6d23dabe7ec978e13a896d934475d36eddb9f8"),
    2: (16860, "5214372002a2f957a879d9001bcc6ad8a4e0da25fd3836bb9142a6f5f8e1e0f1"),
}


@pytest.mark.parametrize("level", [1, 2])
def test_fastlz_matches_the_c_reference(level: int) -> None:
    data = reference_sample()
    assert len(data) == 98452
    stream = fastlz.compress(data, level)
    assert (len(stream), hashlib.sha256(stream).hexdigest()) == C_REFERENCE[level]
    assert fastlz.decompress(stream, len(data)) == data
    assert fastlz.compress(data) == fastlz.compress(data, 2)  # >= 64 KiB picks level 2


def test_fastlz_short_inputs_are_one_literal_run() -> None:
    assert fastlz.compress(b"") == b""
    assert fastlz.compress(b"abc", 2) == b"\x02abc"
    assert fastlz.decompress(b"\x02abc", 3) == b"abc"


def fastlz_inputs() -> st.SearchStrategy[bytes]:
    repetitive = st.lists(st.sampled_from([b"a", b"ab", b"xyz0", b"\x00" * 9, b"Godot"]), max_size=400).map(b"".join)
    return st.one_of(st.binary(max_size=600), repetitive,
                     st.tuples(st.binary(min_size=1, max_size=40), st.integers(1, 300)).map(lambda t: t[0] * t[1]))


@FUZZ
@given(fastlz_inputs(), st.sampled_from([1, 2]))
def test_fastlz_round_trip(data: bytes, level: int) -> None:
    stream = fastlz.compress(data, level)
    if data:
        assert fastlz.decompress(stream, len(data)) == data
        with pytest.raises(DecodeError):
            fastlz.decompress(stream, len(data) - 1)


@FUZZ
@given(st.binary(min_size=0, max_size=300), st.integers(0, 5000))
def test_fastlz_random_bytes_give_only_decode_error(data: bytes, cap: int) -> None:
    try:
        out = fastlz.decompress(data, cap)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)
    else:
        assert len(out) <= cap


def test_fastlz_decoder_refusals() -> None:
    with pytest.raises(DecodeError, match="before the start"):
        fastlz.decompress(b"\x00a\x20\x05", 100)  # 'a', then a match 6 bytes back
    with pytest.raises(DecodeError, match="unknown FastLZ level") as e:
        fastlz.decompress(b"\x40abc", 100)
    assert e.value.offset == 0
    with pytest.raises(DecodeError, match="cut short") as e:
        fastlz.decompress(b"\x03ab", 100)
    assert e.value.offset == 0
    with pytest.raises(DecodeError, match="would pass 3"):
        fastlz.decompress(b"\x03abcd", 3)
    # A level-2 length chain of 255s is bounded by the output cap, not allocated.
    chain = b"\x20a" + b"\xe0" + b"\xff" * 10_000 + b"\x01\x00"
    with pytest.raises(DecodeError, match="would pass"):
        fastlz.decompress(chain, 1 << 20)


# --- hostile GCPF files and streams ----------------------------------------------------------

MULTIBLOCK = ["g3_cmp_m0_multiblock", "g4_cmp_m1_multiblock", "g4_cmp_m2_multiblock", "g4_cmp_m3_multiblock"]


@pytest.mark.parametrize("name", MULTIBLOCK)
def test_every_truncation_of_a_file_is_a_decode_error(name: str) -> None:
    data = file_of(BY_NAME[name])
    for cut in range(len(data)):
        with pytest.raises(DecodeError) as e:
            cz.read_gcpf(data[:cut])
        assert 0 <= e.value.offset <= cut
    with pytest.raises(DecodeError, match="trailing magic .* missing"):
        cz.read_gcpf(data[:-4] + b"\0\0\0\0")
    with pytest.raises(DecodeError, match="after the trailing magic"):
        cz.read_gcpf(data + b"\0")


def with_block(data: bytes, index: int, block: bytes) -> bytes:
    """``data`` with block ``index`` replaced and the size table fixed to match."""
    total = struct.unpack_from("<I", data, 12)[0]
    count = total // 4096 + 1
    sizes = list(struct.unpack_from(f"<{count}I", data, 16))
    pos = 16 + 4 * count + sum(sizes[:index])
    body = data[:pos] + block + data[pos + sizes[index] :]
    sizes[index] = len(block)
    return body[:16] + struct.pack(f"<{count}I", *sizes) + body[16 + 4 * count :]


@pytest.mark.parametrize("name", MULTIBLOCK)
def test_every_truncated_block_is_refused_with_its_index(name: str) -> None:
    data = file_of(BY_NAME[name])
    count = struct.unpack_from("<I", data, 12)[0] // 4096 + 1
    sizes = struct.unpack_from(f"<{count}I", data, 16)
    first = 16 + 4 * count
    for index in range(count):
        start = first + sum(sizes[:index])
        block = data[start : start + sizes[index]]
        for cut in range(len(block)):
            with pytest.raises(DecodeError, match=f"block {index} of {count}") as e:
                cz.read_gcpf(with_block(data, index, block[:cut]))
            assert start <= e.value.offset <= start + cut


@pytest.mark.parametrize("record", BARE, ids=ids(BARE))
def test_every_truncation_of_a_bare_stream_is_a_decode_error(record: dict[str, Any]) -> None:
    data, mode, size = file_of(record), record["params"]["mode"], record["params"]["buffer_size"]
    for cut in range(len(data)):
        with pytest.raises(DecodeError):
            cz.decompress(data[:cut], mode, size)


def test_a_block_of_the_wrong_size_is_refused() -> None:
    data = file_of(BY_NAME["g4_cmp_m1_exact4096"])
    plaintext, _ = cz.read_gcpf(data)
    short = with_block(data, 0, cz.compress(plaintext[:4095], cz.DEFLATE))
    with pytest.raises(DecodeError, match="block 0 of 2 .*4095 bytes, not 4096"):
        cz.read_gcpf(short)
    longer = with_block(data, 1, cz.compress(b"x", cz.DEFLATE))
    with pytest.raises(DecodeError, match="block 1 of 2"):
        cz.read_gcpf(longer)


def peak_of(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
    except DecodeError:
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def header(mode: int = 1, block: int = 4096, total: int = 0, magic: bytes = b"GCPF") -> bytes:
    return magic + struct.pack("<III", mode, block, total)


@pytest.mark.parametrize(("blob", "offset", "reason"), [
    (b"GCP", 3, "truncated GCPF header"),
    (header(magic=b"GDEC"), 0, "not a compressed file"),
    (header(mode=5), 4, "unknown compression mode"),
    (header(block=0) + b"\0" * 12, 8, "block size 0"),
    (header(total=cz.DEFAULT_MAX_SIZE + 1), 12, "over max_size"),
    (header(block=1, total=200_000_000), 16, "block sizes do not fit"),
    (header(total=0) + struct.pack("<I", 0xFFFF_FFFF) + b"GCPF", 16, "the blocks need"),
    (header(total=10) + struct.pack("<I", 3) + b"abc" + b"GCPF", 20, "block 0 of 1"),
])
def test_lying_headers_are_refused_before_allocating(blob: bytes, offset: int, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason) as e:
        cz.read_gcpf(blob)
    assert e.value.offset == offset
    assert peak_of(lambda: cz.read_gcpf(blob)) < 64 * 1024


def test_max_size_is_the_callers() -> None:
    data = file_of(BY_NAME["g4_cmp_m1_multiblock"])
    with pytest.raises(DecodeError, match="over max_size=10000"):
        cz.read_gcpf(data, max_size=10_000)
    assert len(cz.read_gcpf(data, max_size=10_376)[0]) == 10_376


BOMB_SIZE = 32 * 1024 * 1024


@pytest.fixture(scope="module")
def bombs() -> dict[int, bytes]:
    """32 MiB of zeros in each mode's stream: a few KiB that claim to be one 4 KiB block."""
    zeros = bytes(BOMB_SIZE)
    return {
        cz.DEFLATE: zlib.compress(zeros, 9),
        cz.GZIP: cz.compress(zeros, cz.GZIP, level=9),
        cz.ZSTD: zstandard.ZstdCompressor(level=3, write_content_size=False).compress(zeros),
        cz.BROTLI: brotli.compress(zeros, quality=5),
        cz.FASTLZ: fastlz.compress(bytes(1 << 20), 2),
    }


@pytest.mark.parametrize("mode", [0, 1, 2, 3, 4])
def test_a_bomb_in_a_block_stops_at_the_block_size(mode: int, bombs: dict[int, bytes]) -> None:
    bomb = bombs[mode]
    blob = header(mode=mode, total=4095) + struct.pack("<I", len(bomb)) + bomb + b"GCPF"
    with pytest.raises(DecodeError, match="block 0 of 1") as e:
        cz.read_gcpf(blob)
    assert e.value.offset >= 20
    # One Zstd RLE block (128 KiB) or one Brotli output chunk may pass the cap, never 32 MiB.
    assert peak_of(lambda: cz.read_gcpf(blob)) < 3 * len(blob) + 1024 * 1024
    with pytest.raises(DecodeError):
        cz.decompress(bomb, mode, max_size=4096)


def test_a_zstd_frame_claiming_a_huge_size_allocates_nothing() -> None:
    # Single-segment frame header with an 8-byte content size of 2**40, then a raw empty block.
    frame = bytes.fromhex("28b52ffd") + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00"
    with pytest.raises(DecodeError, match="claims 1099511627776 bytes"):
        cz.decompress(frame, cz.ZSTD, max_size=1 << 30)
    assert peak_of(lambda: cz.decompress(frame, cz.ZSTD, max_size=1 << 30)) < 64 * 1024


def rle_blocks(count: int, size: int) -> bytes:
    """Zstd RLE blocks (3-byte header + 1 byte each), the last one marked last."""
    return b"".join(struct.pack("<I", size << 3 | 1 << 1 | (i == count - 1))[:3] + b"a" for i in range(count))


def test_a_zstd_frame_that_outgrows_its_content_size_stops_there() -> None:
    # Content size 4000 (2-byte field, minus 256), window 1 KiB, then 2000 RLE blocks of 1000 bytes.
    frame = bytes.fromhex("28b52ffd") + bytes([0x40, 0x00]) + struct.pack("<H", 4000 - 256) + rle_blocks(2000, 1000)
    # Fed in doubling slices, libzstd or the cap stops it first: either way, at the size.
    with pytest.raises(DecodeError, match="Zstd frame is corrupt|more than 4000 bytes"):
        cz.decompress(frame, cz.ZSTD, 4000)
    assert peak_of(lambda: cz.decompress(frame, cz.ZSTD, 4000)) < 512 * 1024
    # The same blocks with a frame header that gives no size: stopped by the cap.
    unsized = bytes.fromhex("28b52ffd") + bytes([0x00, 0x00]) + rle_blocks(2000, 1000)
    with pytest.raises(DecodeError, match="more than 4000 bytes"):
        cz.decompress(unsized, cz.ZSTD, max_size=4000)
    assert peak_of(lambda: cz.decompress(unsized, cz.ZSTD, max_size=4000)) < 512 * 1024
    assert cz.decompress(unsized, cz.ZSTD, max_size=2_000_000) == b"a" * 2_000_000


@FUZZ
@given(st.sampled_from(cz.MODES), st.binary(max_size=200), st.integers(0, 5000))
def test_random_bytes_into_every_mode_give_only_decode_error(mode: cz.Mode, data: bytes, size: int) -> None:
    try:
        assert len(cz.decompress(data, mode.id, size)) == size
    except DecodeError:
        pass
    try:
        assert len(cz.decompress(data, mode.id, max_size=size)) <= size
    except DecodeError:
        pass


@FUZZ
@given(st.sampled_from(sorted(BY_NAME)), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)),
                                                  min_size=1, max_size=4))
def test_damaged_engine_files_give_only_decode_error(name: str, flips: list[tuple[int, int]]) -> None:
    record = BY_NAME[name]
    data = bytearray(file_of(record))
    for pos, byte in flips:
        data[pos % len(data)] = byte
    try:
        if record["container"] == "compressed":
            cz.read_gcpf(bytes(data))
        else:
            cz.decompress(bytes(data), record["params"]["mode"], record["params"]["buffer_size"])
    except DecodeError:
        pass


def test_write_gcpf_layout_and_empty_last_block() -> None:
    for total in (0, 1, 4095, 4096, 8192, 8193):
        plaintext = os.urandom(total)
        for mode in (0, 1, 2, 3):
            data = cz.write_gcpf(plaintext, cz.GcpfInfo(mode=mode))
            count = struct.unpack_from("<I", data, 12)[0] // 4096 + 1
            assert count == total // 4096 + 1
            assert data[:4] == data[-4:] == b"GCPF"
            assert cz.read_gcpf(data) == (plaintext, cz.GcpfInfo(mode=mode))
    with pytest.raises(ValueError):
        cz.GcpfInfo(block_size=0)
    with pytest.raises(ValueError):
        cz.GcpfInfo(magic=b"GDEC")


def test_many_small_zstd_frames_cost_what_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each frame is given at most about twice its own size (not the whole rest of the block
    for every frame, which would come back as unused_data: quadratic)."""
    zstandard = pytest.importorskip("zstandard")
    from godot_formats.layers import compression

    fed: list[int] = []

    class CountingObj:
        def __init__(self, obj: Any) -> None:
            self.obj = obj

        def decompress(self, chunk: bytes) -> bytes:
            fed.append(len(chunk))
            return self.obj.decompress(chunk)  # type: ignore[no-any-return]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.obj, name)

    class CountingDctx:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.dctx = zstandard.ZstdDecompressor(*args, **kwargs)

        def decompressobj(self) -> CountingObj:
            return CountingObj(self.dctx.decompressobj())

    class Proxy:
        def __getattr__(self, name: str) -> Any:
            return CountingDctx if name == "ZstdDecompressor" else getattr(zstandard, name)

    monkeypatch.setattr(compression, "_module", lambda *args, **kwargs: Proxy())
    empty = zstandard.ZstdCompressor(write_content_size=True).compress(b"")
    for frames in (1000, 4000):
        fed.clear()
        assert compression.decompress(empty * frames, compression.ZSTD, size=0) == b""
        # linear: the first frame is given the whole block once, no later slice holds the rest of it
        assert len(fed) == frames and sum(fed) <= len(empty) * frames + 2 * 64 * frames
    payload = bytes(range(256)) * 4000
    one = zstandard.ZstdCompressor(write_content_size=True).compress(payload)
    fed.clear()
    assert compression.decompress(one * 3, compression.ZSTD, size=3 * len(payload)) == payload * 3
    assert sum(fed) <= 3 * len(one) + 3 * 2 * len(one) + 3 * 64


# --- a file's blocks on several threads -------------------------------------------------------

def _save_like(size: int) -> bytes:
    """Compressible, varied plaintext of ``size`` bytes (a store_var save's mix of text and numbers)."""
    rng = random.Random(size)
    words = [b"player", b"score", b"\x00\x00\x00\x04", b"inventory", bytes(range(40)), b"\x02\x00\x00\x00"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + rng.randbytes(rng.randrange(4))
    return bytes(out[:size])


@pytest.mark.parametrize("mode", [cz.DEFLATE, cz.GZIP, cz.ZSTD, cz.FASTLZ])
def test_threads_write_and_read_the_same_bytes_as_one_thread(mode: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over PARALLEL_MIN_BYTES: the same file from 1, 2 and 3 threads (each block is its own
    stream; the one-thread bytes are the engine's, as the fixture tests show), read back alike."""
    plain = _save_like(cz.PARALLEL_MIN_BYTES + 4096 * 7 + 123)
    info = cz.GcpfInfo(mode=mode)
    files = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(cz, "BLOCK_THREADS", threads)
        files[threads] = cz.write_gcpf(plain, info)
        assert cz.read_gcpf(files[threads]) == (plain, info)
    assert files[1] == files[2] == files[3]


def test_the_first_damaged_block_in_file_order_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two damaged blocks far apart: the error names the first in file order whatever BLOCK_THREADS
    says (reads stay on one thread, see Mode.threaded; the shares' own ordering is tested below)."""
    plain = _save_like(cz.PARALLEL_MIN_BYTES * 2)
    data = bytearray(cz.write_gcpf(plain, cz.GcpfInfo(mode=cz.DEFLATE)))
    count = len(plain) // 4096 + 1
    sizes = struct.unpack_from(f"<{count}I", data, 16)
    starts = [16 + 4 * count + sum(sizes[:i]) for i in range(count)]
    for i in (count * 3 // 4, count // 3):  # the later one first: order of damage does not matter
        data[starts[i] + 5] ^= 0xFF
    errors = []
    for threads in (1, 2, 4):
        monkeypatch.setattr(cz, "BLOCK_THREADS", threads)
        with pytest.raises(DecodeError) as info:
            cz.read_gcpf(bytes(data))
        errors.append((info.value.offset, str(info.value)))
    assert errors[0] == errors[1] == errors[2]
    assert f"block {count // 3} of {count}" in errors[0][1]


def _counting_share(failing: int | None = None) -> tuple[Any, list[int]]:
    """A share function over blocks 0..n-1 giving ``2 * i``; block ``failing`` raises KeyError."""
    seen: list[int] = []

    def share(lo: int, hi: int, stopped: Callable[[], bool]) -> list[int]:
        out = []
        for i in range(lo, hi):
            if stopped():
                break
            seen.append(i)
            if i == failing:
                raise KeyError(i)
            out.append(i * 2)
        return out

    return share, seen


def test_an_error_in_another_threads_share_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cz, "BLOCK_THREADS", 2)
    row = cz.mode_info(cz.DEFLATE)
    share, seen = _counting_share(failing=7)
    with pytest.raises(KeyError):
        cz._in_shares(share, 10, row, cz.PARALLEL_MIN_BYTES)
    assert 8 not in seen  # the second share stopped at its own first error
    share, _ = _counting_share()
    assert cz._in_shares(share, 10, row, cz.PARALLEL_MIN_BYTES) == [i * 2 for i in range(10)]


def _only_one_thread_starts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``Thread.start`` works once, then raises as at a thread limit; the threads that started."""
    import threading

    started: list[threading.Thread] = []
    real_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if started:
            raise RuntimeError("can't start new thread")
        started.append(self)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    return started


def test_a_thread_that_cannot_start_leaves_its_share_to_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thread limits, or an interpreter shutting down (an atexit handler saving a file): the
    shares whose thread did not start run in the caller's thread, and the outcome is the loop's."""
    started = _only_one_thread_starts(monkeypatch)
    monkeypatch.setattr(cz, "BLOCK_THREADS", 4)
    share, seen = _counting_share()
    assert cz._in_shares(share, 40, cz.mode_info(cz.GZIP), cz.PARALLEL_MIN_BYTES) == [i * 2 for i in range(40)]
    assert sorted(seen) == list(range(40)) and len(started) == 1
    plain = _save_like(cz.PARALLEL_MIN_BYTES * 2)
    started.clear()
    data = cz.write_gcpf(plain, cz.GcpfInfo(mode=cz.DEFLATE))
    started.clear()
    assert cz.read_gcpf(data)[0] == plain


def test_one_thread_is_a_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """``one_thread()`` (the batch workers'): no thread is made inside it, and it ends with the block."""
    import threading

    made = []
    monkeypatch.setattr(cz, "BLOCK_THREADS", 3)
    monkeypatch.setattr(threading.Thread, "start", lambda self: made.append(self))  # never runs: must not be needed
    share, _ = _counting_share()
    with cz.one_thread():
        assert cz._in_shares(share, 30, cz.mode_info(cz.GZIP), cz.PARALLEL_MIN_BYTES) == [i * 2 for i in range(30)]
    assert made == []
    monkeypatch.undo()
    monkeypatch.setattr(cz, "BLOCK_THREADS", 3)
    seen_threads = set()

    def share2(lo: int, hi: int, stopped: Callable[[], bool]) -> list[int]:
        seen_threads.add(threading.current_thread().name)  # names, not idents: an ident is reused
        return list(range(lo, hi))

    assert cz._in_shares(share2, 30, cz.mode_info(cz.GZIP), cz.PARALLEL_MIN_BYTES) == list(range(30))
    assert cz._in_shares(share2, 30, cz.mode_info(cz.ZSTD), cz.PARALLEL_MIN_BYTES) == list(range(30))
    assert seen_threads == {threading.current_thread().name, "gcpf-blocks-1", "gcpf-blocks-2"}  # Zstd: none


def test_ctrl_c_in_the_callers_share_stops_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt in the caller's thread stops every other share at its next block (they
    used to run to their ends, the interrupt waiting for them) and is raised."""
    import threading
    import time

    monkeypatch.setattr(cz, "BLOCK_THREADS", 2)
    outcome: list[str] = []

    def share(lo: int, hi: int, stopped: Callable[[], bool]) -> list[int]:
        if lo == 0:
            raise KeyboardInterrupt
        for _ in range(30_000):  # at most 30 s: the test fails rather than hangs
            if stopped():
                outcome.append("stopped")
                return []
            time.sleep(0.001)
        outcome.append("ran to its end")
        return []

    with pytest.raises(KeyboardInterrupt):
        cz._in_shares(share, 10, cz.mode_info(cz.DEFLATE), cz.PARALLEL_MIN_BYTES)
    assert outcome == ["stopped"]
    assert not [t for t in threading.enumerate() if t.name.startswith("gcpf-blocks")]


def test_a_hostile_size_table_costs_no_more_than_the_header_tuple() -> None:
    """A file of 1,000,000 zero block sizes (block size 1): the first block is refused, and reading
    held no table of offsets (one Python int each, 10x the file) before trying it."""
    count = 1_000_000
    data = struct.pack("<4sIII", b"GCPF", cz.DEFLATE, 1, count - 1) + bytes(4 * count) + b"GCPF"
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="block 0 of"):
            cz.read_gcpf(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(data)


@pytest.mark.slow
def test_many_tiny_valid_blocks_cost_no_object_per_block() -> None:
    """A legal file of 200,000 two-byte FastLZ blocks: the plaintext is gathered in one buffer, as
    the engine does (the shares' version had held one bytes object per block: 19x the file)."""
    count, bs = 200_000, 2
    block, last = bytes([0x01]) + b"ab", cz.compress(b"", cz.FASTLZ)
    sizes = struct.pack(f"<{count}I", *([len(block)] * (count - 1) + [len(last)]))
    head = struct.pack("<4sIII", b"GCPF", cz.FASTLZ, bs, bs * (count - 1))
    data = head + sizes + block * (count - 1) + last + b"GCPF"
    tracemalloc.start()
    try:
        plain, _ = cz.read_gcpf(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert plain == b"ab" * (count - 1)
    assert peak < 3 * len(data)


def test_ctrl_c_while_a_thread_starts_stops_the_started_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt inside ``Thread.start`` (it waits for the thread): the shares already
    started stop at their next block and are joined before it goes up."""
    import threading
    import time

    real_start = threading.Thread.start
    calls = []

    def start(self: threading.Thread) -> None:
        calls.append(self)
        real_start(self)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start)
    monkeypatch.setattr(cz, "BLOCK_THREADS", 3)
    done: list[int] = []

    def share(lo: int, hi: int, stopped: Callable[[], bool]) -> list[int]:
        for i in range(lo, hi):
            if stopped():
                break
            time.sleep(0.001)
            done.append(i)
        return []

    with pytest.raises(KeyboardInterrupt):
        cz._in_shares(share, 30_000, cz.mode_info(cz.DEFLATE), cz.PARALLEL_MIN_BYTES)
    assert not [t for t in threading.enumerate() if t.name.startswith("gcpf-blocks")]
    assert len(done) < 30_000


def test_ctrl_c_in_a_share_the_caller_runs_for_a_thread_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Share 2 runs in the caller's thread (its thread could not start) and is interrupted; share 1
    fails: the KeyboardInterrupt is raised, not lost behind the other share's error."""
    _only_one_thread_starts(monkeypatch)
    monkeypatch.setattr(cz, "BLOCK_THREADS", 3)

    def share(lo: int, hi: int, stopped: Callable[[], bool]) -> list[int]:
        if lo == 10:
            raise ValueError("damaged block in share 1")
        if lo == 20:
            raise KeyboardInterrupt
        return list(range(lo, hi))

    with pytest.raises(KeyboardInterrupt):
        cz._in_shares(share, 30, cz.mode_info(cz.DEFLATE), cz.PARALLEL_MIN_BYTES)
