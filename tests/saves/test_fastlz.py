"""FastLZ's compiled twin (godot_formats/core/_cfastlz.c) against the reference port (layers/fastlz.py).

The reference is the statement of the rules (and is checked against the engines' streams and
the C reference in tests/saves/test_compression.py); the compiled one must give the same bytes when
compressing, and the same bytes or the same error (class, byte offset, message) when
decompressing, for every input, and allocate no more than the caller's cap.  Hypothesis feeds
both random, repetitive and far-repeating inputs of the sizes where the rules change (under 4
bytes, the 12-byte tail, Godot's 4 KiB blocks, level 2 from 64 KiB), and damaged streams; the
engine-made FastLZ files are decoded and re-encoded by both.  The differential tests skip when
the compiled core is not built (or GODOT_FORMATS_PURE is set); the rest hold for either backend.
"""

from __future__ import annotations

import os
import random
import struct
import threading
import tracemalloc
from functools import partial
from typing import Any, Callable

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from godot_formats.core import accel
from godot_formats.core.errors import DecodeError
from godot_formats.layers import compression as cz
from godot_formats.layers import fastlz

needs_c = pytest.mark.skipif(accel.cfastlz is None, reason="the compiled FastLZ is not built in this install "
                             "(or GODOT_FORMATS_PURE is set): nothing to compare")

FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Sizes where the rules change: the sub-4-byte literal, the 12 bytes no match starts in, a
#: literal run's 32, Godot's 16-byte padding and 4 KiB blocks, level 2 from 64 KiB.
EDGE_SIZES = [0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17, 31, 32, 33, 64, 4095, 4096, 4097, 65535, 65536, 65537]


def make(size: int, kind: str, seed: int) -> bytes:
    """``size`` bytes of one kind: random, zeros, a short period, runs, text-like pieces, or a
    random block that repeats more than 8191 bytes later (level 2's far matches)."""
    rng = random.Random(seed)
    if kind == "random":
        return rng.randbytes(size)
    if kind == "zeros":
        return bytes(size)
    if kind == "period":
        return (rng.randbytes(rng.randrange(1, 9)) * (size + 1))[:size]
    if kind == "far":
        block = rng.randbytes(rng.choice([9000, 20000, 70000]))
        return (block + rng.randbytes(7) + block)[:size] if size > len(block) else block[:size]
    out = bytearray()
    words = [b"Godot", b"\x00\x00\x00\x00", b"player/", b"\x02\x00\x00\x00", rng.randbytes(3)]
    while len(out) < size:
        k = rng.randrange(4)
        if k == 0:
            out += bytes([rng.randrange(256)]) * rng.randrange(1, 600)  # runs
        elif k == 1 and len(out) > 300:
            i = rng.randrange(len(out) - 300)
            out += out[i : i + rng.randrange(3, 300)]  # near repeats
        elif k == 2:
            out += rng.choice(words)
        else:
            out += rng.randbytes(rng.randrange(1, 40))
    return bytes(out[:size])


KINDS = ["random", "zeros", "period", "far", "mixed"]


def inputs() -> st.SearchStrategy[bytes]:
    """Random and repetitive bytes, at the edge sizes and anywhere up to 70 KB."""
    sizes = st.one_of(st.sampled_from(EDGE_SIZES), st.integers(0, 300), st.integers(0, 70_000))
    made = st.builds(make, sizes, st.sampled_from(KINDS), st.integers(0, 2**32))
    repetitive = st.lists(st.sampled_from([b"a", b"ab", b"xyz0", b"\x00" * 9, b"Godot"]), max_size=400).map(b"".join)
    return st.one_of(made, st.binary(max_size=600), repetitive)


def outcome(fn: Callable[[], bytes]) -> tuple[Any, ...]:
    """What a call gives: its bytes, or its error's class, message and offset."""
    try:
        return ("ok", fn())
    except DecodeError as e:
        return (type(e).__name__, str(e), e.offset)
    except ValueError as e:
        return (type(e).__name__, str(e))


def both_decompress(stream: bytes, cap: Any) -> tuple[Any, ...]:
    """The two backends' outcome on one stream, which must be the same."""
    got = outcome(lambda: fastlz.decompress(stream, cap, backend="c"))
    want = outcome(lambda: fastlz.decompress(stream, cap, backend="python"))
    assert got == want, (stream[:64].hex(), len(stream), cap)
    return got


# --- compression: the same bytes -------------------------------------------------------------


@needs_c
@FUZZ
@given(inputs(), st.sampled_from([None, 1, 2]))
def test_compress_gives_the_reference_bytes(data: bytes, level: int | None) -> None:
    stream = fastlz.compress(data, level, backend="c")
    assert stream == fastlz.compress(data, level, backend="python")
    if data:
        assert fastlz.decompress(stream, len(data), backend="c") == data


@needs_c
@pytest.mark.parametrize("size", EDGE_SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_compress_at_the_edge_sizes(size: int, kind: str) -> None:
    data = make(size, kind, size)
    for level in (None, 1, 2):
        stream = fastlz.compress(data, level, backend="c")
        assert stream == fastlz.compress(data, level, backend="python"), (size, kind, level)
        if data:
            assert both_decompress(stream, size) == ("ok", data)
        else:
            assert stream == b""


@needs_c
def test_far_matches_and_long_runs_at_level_2() -> None:
    """Distances past 8191 (a marker and 16 bits), 255-chains of length, level 1's split matches."""
    block = random.Random(5).randbytes(30_000)
    for data in (block + block, block + bytes(100_000) + block[:5000], b"ab" * 50_000):
        for level in (1, 2):
            stream = fastlz.compress(data, level, backend="c")
            assert stream == fastlz.compress(data, level, backend="python")
            assert fastlz.decompress(stream, len(data), backend="c") == data


# --- decompression: the same bytes, or the same error ----------------------------------------


@needs_c
@FUZZ
@given(inputs(), st.sampled_from([1, 2]), st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)),
                                                   max_size=4),
       st.one_of(st.none(), st.integers(0, 2**20)), st.sampled_from(["exact", "less", "zero", "more", "huge"]))
def test_damaged_streams_give_the_reference_error(data: bytes, level: int, flips: list[tuple[int, int]],
                                                   cut: int | None, cap_kind: str) -> None:
    stream = bytearray(fastlz.compress(data, level, backend="python"))
    for pos, byte in flips:
        if stream:
            stream[pos % len(stream)] = byte
    if cut is not None:
        del stream[cut % (len(stream) + 1):]
    cap = {"exact": len(data), "less": max(len(data) - 1, 0), "zero": 0, "more": len(data) + 1000,
           "huge": 2**70}[cap_kind]
    result = both_decompress(bytes(stream), cap)
    if result[0] == "ok":
        assert len(result[1]) <= cap
    elif result[0] == "DecodeError":
        assert 0 <= result[2] <= len(stream)


@needs_c
@FUZZ
@given(st.binary(max_size=400), st.integers(0, 5000))
def test_random_bytes_give_the_reference_outcome(data: bytes, cap: int) -> None:
    both_decompress(data, cap)


@needs_c
@pytest.mark.parametrize("stream, cap", [
    (b"", 10), (b"", -1), (b"\x00a", -1), (b"\x40abc", 100), (b"\xe0abc", 100), (b"\x03ab", 100),
    (b"\x03abcd", 3), (b"\x00a\x20\x05", 100), (b"\x00a\xe0", 100), (b"\x00a\xe0\x05", 100),
    (b"\x00a\xe0\x05\x00", 100), (b"\x20a\xe0\xff", 100), (b"\x20a\xe0\xff\x01", 100),
    (b"\x20a\xff\xff", 100), (b"\x20a\xff\xff\x00", 100), (b"\x20a\xff\xff\x00\x00\x00", 100),
    (b"\x20a" + b"\xe0" + b"\xff" * 10_000 + b"\x01\x00", 1 << 20), (b"\x02abc", 2**64), (b"\x02abc", True),
    (b"\x02abc", 3.0), (b"\x02abc\x00", 3), (b"\x22abc\x00", 3), (b"\x00a\x00", 1),
], ids=lambda v: v.hex()[:24] if isinstance(v, bytes) else repr(v))
def test_each_refusal_is_the_references(stream: bytes, cap: Any) -> None:
    """Every message the decoder has, its offset, and the checks' order (empty before a negative cap)."""
    both_decompress(stream, cap)


@needs_c
def test_other_buffers_and_odd_arguments_are_taken_as_the_reference_takes_them() -> None:
    data = make(5000, "mixed", 1)
    stream = fastlz.compress(data)
    for buf in (bytearray(stream), memoryview(stream), bytes(stream)):
        assert fastlz.decompress(buf, len(data), backend="c") == data
        assert fastlz.compress(bytearray(data), backend="c") == stream
    for level in (2.0, True, 0, 3, "1", None):
        assert outcome(partial(fastlz.compress, data, level, backend="c")) == outcome(
            partial(fastlz.compress, data, level, backend="python"))
    assert accel.cfastlz is not None
    with pytest.raises(TypeError):
        accel.cfastlz.decompress(bytearray(stream), 10)  # the module itself takes only bytes: they cannot change
    with pytest.raises(TypeError):
        accel.cfastlz.compress(memoryview(data))


# --- the engines' own FastLZ files --------------------------------------------------------------

CONTAINERS = FIXTURES / "containers"
ENGINE = [r for name in ("godot3_containers.jsonl", "godot4_containers.jsonl") for r in read_jsonl(CONTAINERS / name)
          if r["container"] in ("compressed", "raw_compressed") and r["params"]["mode"] == cz.FASTLZ]
DAMAGED = [r for r in read_jsonl(FIXTURES / "damaged" / "godot3_damaged.jsonl") if r.get("layer") == "fastlz"]


def gcpf_blocks(data: bytes) -> list[tuple[bytes, int]]:
    """Each block of a GCPF file and the size it decompresses to."""
    _, _, block_size, total = struct.unpack_from("<4sIII", data)
    count = total // block_size + 1
    sizes = struct.unpack_from(f"<{count}I", data, 16)
    pos, out = 16 + 4 * count, []
    for i, size in enumerate(sizes):
        out.append((data[pos : pos + size], block_size if i < count - 1 else total % block_size))
        pos += size
    return out


def test_the_engine_fastlz_fixtures_are_here() -> None:
    assert len(ENGINE) >= 12 and len(DAMAGED) >= 3
    assert {r["container"] for r in ENGINE} == {"compressed", "raw_compressed"}


@needs_c
@pytest.mark.parametrize("record", ENGINE + DAMAGED, ids=[r["name"] for r in ENGINE + DAMAGED])
def test_engine_streams_decode_and_encode_alike(record: dict[str, Any]) -> None:
    """Every block of the engines' files: the same plaintext from both, and both write the engine's block."""
    data = bytes.fromhex(record["file_hex"])
    if record.get("container") == "raw_compressed":
        blocks = [(data, record["params"]["buffer_size"])]
    else:
        blocks = gcpf_blocks(data)
    for block, size in blocks:
        result = both_decompress(block, max(size, 16))  # the engine reads short blocks into 16 bytes
        assert result[0] == "ok"
        plain = result[1][:size]
        padded = plain + bytes(16 - len(plain)) if len(plain) < 16 else plain
        assert fastlz.compress(padded, backend="c") == fastlz.compress(padded, backend="python") == block
    if record.get("container") == "compressed" or record in DAMAGED:
        assert cz.write_gcpf(cz.read_gcpf(data)[0], cz.GcpfInfo()) == data


# --- memory, threads, backend choice ------------------------------------------------------------


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = outcome(fn)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("backend", ["c", "python"])
def test_a_bomb_stops_at_the_cap_without_allocating_it(backend: str) -> None:
    if backend == "c" and accel.cfastlz is None:
        pytest.skip("the compiled FastLZ is not built")
    # 40 KB that would make 10 MB: a 255-chain of length, then more of them.
    bomb = b"\x20a" + (b"\xe0" + b"\xff" * 20_000 + b"\x01\x00") * 2
    result, peak = _peak(lambda: fastlz.decompress(bomb, 1 << 20, backend=backend))
    assert result[0] == "DecodeError" and "would pass 1048576" in result[1]
    assert peak < (1 << 20) + 200_000  # the reference's bytearray stops at the cap; C allocates nothing


@needs_c
def test_the_compiled_decoder_allocates_the_result_once() -> None:
    data = make(3 << 20, "mixed", 7)
    stream = fastlz.compress(data, backend="c")
    result, peak = _peak(lambda: fastlz.decompress(stream, 1 << 40, backend="c"))
    assert result == ("ok", data)
    assert peak < len(data) + 64 * 1024  # exactly the output (plus the interpreter's small change)
    refused, peak = _peak(lambda: fastlz.decompress(stream, len(data) - 1, backend="c"))
    assert refused[0] == "DecodeError" and peak < 64 * 1024  # refused by the measuring pass: nothing allocated


@needs_c
def test_threads_share_the_compiled_core() -> None:
    """Large inputs release the GIL: several threads at once get what one gets alone."""
    data = [make(300_000, kind, i) for i, kind in enumerate(KINDS)]
    streams = [fastlz.compress(d, backend="python") for d in data]
    results: dict[int, tuple[bytes, bytes]] = {}

    def work(i: int) -> None:
        for _ in range(3):
            packed = fastlz.compress(data[i], backend="c")
            results[i] = (packed, fastlz.decompress(streams[i], len(data[i]), backend="c"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(data))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert [results[i] for i in range(len(data))] == list(zip(streams, data))


def test_the_backend_is_chosen_in_one_place() -> None:
    """accel.fastlz_core: None asks for the process's choice; "c" needs the compiled core."""
    assert accel.fastlz_core(None) is accel.cfastlz
    assert accel.fastlz_core("python") is None
    if accel.cfastlz is None:
        with pytest.raises(ValueError, match="not available"):
            fastlz.compress(b"abcd", backend="c")
    else:
        assert accel.fastlz_core("c") is accel.cfastlz
    with pytest.raises(ValueError, match="backend must be"):
        fastlz.decompress(b"\x00a", 1, backend="rust")
    if os.environ.get("GODOT_FORMATS_PURE", "") not in ("", "0"):
        assert accel.cfastlz is None


def test_both_backends_agree_on_a_small_save() -> None:
    """Whichever backend the process has, a compressed save reads back (the suite runs under both)."""
    plain = b"".join(struct.pack("<I", 8) + struct.pack("<II", 2, i) for i in range(2000))
    blob = cz.write_gcpf(plain, cz.GcpfInfo())
    assert cz.read_gcpf(blob)[0] == plain
    assert fastlz.decompress(fastlz.compress(plain), len(plain)) == plain


CORPUS = sorted((FIXTURES.parent / "fuzz" / "corpus-fastlz").glob("*"))


@needs_c
def test_the_fuzz_corpus_gives_the_reference_outcome() -> None:
    """fuzz/corpus-fastlz (seeds and what the sanitizer runs learnt): each input as a stream and as
    bytes to compress, as fuzz_compiled.py's FastLZ part checks them (fuzz/README.md)."""
    assert len(CORPUS) > 100
    for path in CORPUS:
        data = path.read_bytes()
        both_decompress(data, len(data) * 4 + 16)
        stream = fastlz.compress(data, backend="c")
        assert stream == fastlz.compress(data, backend="python"), path.name
        if data:
            assert both_decompress(stream, len(data) - 1)[0] == "DecodeError"
