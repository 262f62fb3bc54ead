"""Property-based fuzzing in the normal test run: mutated engine blobs and random bytes.

Every input is decoded in every registered dialect, with and without ``allow_objects``,
through :func:`test_hostile.check_blob`: only DecodeError may come out (its offset inside the
input), a decoded value writes back in the same dialect without error, and decoding is
deterministic.  The seeds are every blob the engines wrote or were fed (fixtures/).

Runs are reproducible (``derandomize``) so the suite does not flicker; set
``GF_FUZZ_EXPLORE=1`` to draw new examples each run, and ``GF_FUZZ_EXAMPLES`` to scale them.
The coverage-guided fuzzer for long runs is fuzz/fuzz_decode.py.
"""

from __future__ import annotations

import os
import struct
from functools import cache

from conftest import FIXTURES, budget, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_untrusted_bytes import check_blob

MAX_SEED = 16 * 1024
SCALE = float(os.environ.get("GF_FUZZ_EXAMPLES", "1"))
FUZZ = settings(
    deadline=None,
    derandomize=os.environ.get("GF_FUZZ_EXPLORE") != "1",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

#: u32 values that break counts and lengths: the int32 edges, the old "shared" bit, sizes
#: that overflow when multiplied by an element size, and the 64-bit header flag.
HOSTILE_WORDS = (0, 1, 2, 3, 4, 0x7F, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0x2_0000, 0x3_0000, 0x10_0000,
                 0x3FFF_FFFF, 0x4000_0000, 0x7FFF_FFFE, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001,
                 0xFFFF_FFFE, 0xFFFF_FFFF)


@cache
def seeds() -> tuple[bytes, ...]:
    """Every distinct blob in the engine fixtures (up to 16 KiB), smallest first."""
    found: set[bytes] = set()
    for path in sorted(FIXTURES.glob("godot*/*.jsonl")):
        for case in read_jsonl(path):
            for key in ("hex", "hex_full_objects", "in_hex"):
                text = case.get(key)
                if isinstance(text, str) and 0 < len(text) <= 2 * MAX_SEED:
                    found.add(bytes.fromhex(text))
    return tuple(sorted(found, key=lambda b: (len(b), b)))


def test_seed_count() -> None:
    assert len(seeds()) >= 400


def _examples(n: int) -> int:
    """The fuzzing budget of a test: ``n`` examples under the ``ci`` profile (several times a
    property test's, since these tests are the suite's fuzzer), the profile's share of them under
    ``dev``, times ``GF_FUZZ_EXAMPLES``."""
    return max(1, int(budget(n) * SCALE))


# --- mutations --------------------------------------------------------------------------------

@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A fixture blob with 1-4 mutations: bit flips, byte replacements, insertions, deletions,
    splices with another fixture, and aligned u32 fields (counts, lengths, headers) replaced."""
    pool = seeds()
    data = bytearray(draw(st.sampled_from(pool)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("flip", "byte", "insert", "delete", "splice", "word", "word")))
        n = len(data)
        at = draw(st.integers(0, n)) if n else 0
        if op == "flip" and n:
            i = min(at, n - 1)
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "byte" and n:
            data[min(at, n - 1)] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete" and n:
            del data[at:at + draw(st.integers(1, 16))]
        elif op == "splice":
            other = draw(st.sampled_from(pool))
            cut = draw(st.integers(0, len(other)))
            data[at:] = other[cut:]
        elif op == "word" and n >= 4:
            i = min(at // 4 * 4, n - 4)
            word = draw(st.sampled_from(HOSTILE_WORDS) | st.integers(0, 0xFFFF_FFFF))
            data[i:i + 4] = struct.pack("<I", word)
    return bytes(data)


@settings(FUZZ, max_examples=_examples(1200))
@given(mutated())
def test_mutated_fixture_blobs(data: bytes) -> None:
    check_blob(data)


@settings(FUZZ, max_examples=_examples(800))
@given(st.sampled_from(seeds()), st.data())
def test_counts_and_lengths_replaced(blob: bytes, draw: st.DataObject) -> None:
    """Every aligned u32 after the header is a candidate count or length: make it hostile."""
    if len(blob) < 8:
        blob += b"\0" * (8 - len(blob))
    i = draw.draw(st.integers(1, len(blob) // 4 - 1)) * 4
    word = draw.draw(st.sampled_from(HOSTILE_WORDS))
    check_blob(blob[:i] + struct.pack("<I", word) + blob[i + 4:])


@settings(FUZZ, max_examples=_examples(400))
@given(st.sampled_from(seeds()), st.sampled_from(seeds()), st.data())
def test_two_fixtures_spliced(a: bytes, b: bytes, draw: st.DataObject) -> None:
    cut_a = draw.draw(st.integers(0, len(a)))
    cut_b = draw.draw(st.integers(0, len(b)))
    check_blob(a[:cut_a] + b[cut_b:])


# --- random bytes -----------------------------------------------------------------------------

@settings(FUZZ, max_examples=_examples(800))
@given(st.binary(max_size=512))
def test_random_bytes(data: bytes) -> None:
    check_blob(data)


@st.composite
def random_words(draw: st.DrawFn) -> bytes:
    """Random u32 words biased towards small type ids and hostile counts: random bytes rarely
    get past the first header, these walk into containers."""
    word = st.one_of(st.integers(0, 40), st.integers(0, 40).map(lambda t: t | 1 << 16),
                     st.integers(0, 40).map(lambda t: t | 2 << 16 | 1 << 18), st.sampled_from(HOSTILE_WORDS),
                     st.integers(0, 0xFFFF_FFFF))
    words = draw(st.lists(word, max_size=64))
    return struct.pack(f"<{len(words)}I", *words) + draw(st.binary(max_size=3))


@settings(FUZZ, max_examples=_examples(700))
@given(random_words())
def test_random_words(data: bytes) -> None:
    check_blob(data)
