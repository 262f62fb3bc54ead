"""FastLZ 0.5.0, the block compressor behind Godot's ``COMPRESSION_FASTLZ``.

A pure-Python port of ``fastlz.c`` 0.5.0 (FastLZ by Ariya Hidayat, MIT
licence; the copy Godot vendors as ``thirdparty/misc/fastlz.c`` since 3.2.2).
No package on PyPI fits: ``fastlz`` bundles 0.1.0 (which picks other matches,
so it cannot write engine-identical blocks) and adds its own length prefix.

Why a port and not "an LZ77 that FastLZ can read": a rewritten save file is
only byte-identical to the engine's if the compressor makes the very same
choices, so :func:`compress` follows the C code step by step (hash, match
search, run handling, length splitting); the tests compare it with every
FastLZ stream in the engine-made fixtures.

The stream format, for the decoder: the first byte's top three bits are the
level minus one (0 = level 1, 1 = level 2); the rest is a sequence of
instructions.  A control byte below 32 is a literal run of ``ctrl + 1`` bytes
that follow; otherwise it is a match of ``(ctrl >> 5) + 2`` bytes (7 means more
length bytes follow: one in level 1, a 255-terminated chain in level 2) at a
distance of ``(ctrl & 31) << 8 | next byte`` + 1 (level 2: the distance byte
255 with high bits 31 means a 16-bit distance follows, plus 8191).

The decoder is strict where the C code is unchecked or returns 0: every byte
it needs must be there, a match may not reach before the start of the output,
and the output may not pass ``max_output``; each of these raises
:class:`~godot_formats.errors.DecodeError` at the offset of the instruction in
the compressed stream.  Where the C decoder stops by design, so does this one
(level 1 stops when fewer than two bytes remain, so a lone trailing byte is
ignored as the engine ignores it).  Time and memory are linear: every
instruction consumes input, and the output never grows past ``max_output``.

The compiled core has the same two functions in C (``godot_formats/core/_cfastlz.c``, 100 to
250 times faster): :func:`compress` and :func:`decompress` use it when it is built (see
:mod:`godot_formats.core.accel`; ``GODOT_FORMATS_PURE=1`` turns it off), and
:func:`reference_compress` / :func:`reference_decompress`, the code below, stay the statement
of the rules.  The C twin gives the same bytes and the same errors for every input
(tests/saves/test_fastlz.py, and fuzz/fuzz_compiled.py under AddressSanitizer); anything it does
not take as it is (a level or cap that is not a plain int) goes to the reference.
"""

from __future__ import annotations

__all__ = ["compress", "decompress", "reference_compress", "reference_decompress", "LEVEL2_THRESHOLD"]

from ..core import accel
from ..core.errors import DecodeError

_MAX_COPY = 32
_MAX_LEN = 264
_MAX_L1_DISTANCE = 8192
_MAX_L2_DISTANCE = 8191
_MAX_FARDISTANCE = 65535 + _MAX_L2_DISTANCE - 1
_HASH_SIZE = 1 << 13
_HASH_MASK = _HASH_SIZE - 1
#: The decoder's distance (high bits 31, distance byte 255) that says a level 2
#: far match's 16-bit distance follows.
_FAR_MARKER = (31 << 8) + 1 + 255

#: ``fastlz_compress`` picks level 2 from this input size up (Godot calls it,
#: so bare ``PackedByteArray.compress`` streams of 64 KiB or more are level 2).
LEVEL2_THRESHOLD = 65536


def compress(data: bytes, level: int | None = None, *, backend: str | None = None) -> bytes:
    """Compress ``data`` exactly as FastLZ 0.5.0's C code does (:func:`reference_compress`).

    The compiled core does the work where it is built; ``backend`` ("c" or "python", None
    for the process's choice) picks one for this call.
    """
    core = accel.cfastlz if backend is None else accel.fastlz_core(backend)
    if core is None or level not in (None, 1, 2):
        return reference_compress(data, level)  # an odd level: the reference says what is wrong
    return core.compress(data if type(data) is bytes else bytes(data), level)  # type: ignore[no-any-return]


def decompress(data: bytes, max_output: int, *, backend: str | None = None) -> bytes:
    """Decompress one FastLZ stream of at most ``max_output`` bytes (:func:`reference_decompress`).

    The compiled core does the work where it is built, with the same errors; ``backend``
    picks one for this call as in :func:`compress`.
    """
    core = accel.cfastlz if backend is None else accel.fastlz_core(backend)
    if core is None or type(max_output) is not int:
        return reference_decompress(data, max_output)
    return core.decompress(data if type(data) is bytes else bytes(data), max_output)  # type: ignore[no-any-return]


def reference_compress(data: bytes, level: int | None = None) -> bytes:
    """Compress ``data`` exactly as FastLZ 0.5.0's C code does.

    ``level`` None chooses as ``fastlz_compress`` does (1 below 64 KiB, else
    2); 1 or 2 force ``fastlz_compress_level``.  Empty input gives empty
    output, as in C.  Godot's zero padding of short inputs is not applied
    here; it belongs to the engine's wrapper (``godot_formats.compression``).
    """
    if level is None:
        level = 1 if len(data) < LEVEL2_THRESHOLD else 2
    if level not in (1, 2):
        raise ValueError(f"FastLZ level must be 1 or 2, not {level!r}")
    src = bytes(data)
    n = len(src)
    if n < 4:
        # The C code's "sanity check": one literal run (no level marker).
        return bytes([n - 1]) + src if n else b""
    return bytes(_compress(src, level == 2))


def _compress(src: bytes, level2: bool) -> bytearray:
    """The shared body of ``fastlz1_compress`` and ``fastlz2_compress``.

    Variable names follow the C code (``ip``, ``anchor``, ``ref``, ``copy``)
    so the two can be read side by side; indices replace pointers.  The match
    search and the literal bytes stay inline because they run once per input
    byte; only work done once per match (extending it, writing it) is in
    helpers.
    """
    n = len(src)
    ip_bound = n - 2
    ip_limit = n - 12 - 1
    htab = [0] * _HASH_SIZE
    out = bytearray((_MAX_COPY - 1, src[0], src[1]))
    copy = 2
    ip = 2
    max_distance = _MAX_FARDISTANCE if level2 else _MAX_L1_DISTANCE
    write_match = _write_match_level2 if level2 else _write_match_level1

    while ip < ip_limit:
        anchor = ip
        length = 3
        if level2 and src[ip] == src[ip - 1] and src[ip] == src[ip + 1] and src[ip + 1] == src[ip + 2]:
            # Level 2 checks for a run before hashing (and leaves the table alone).
            distance = 1
            ref = anchor - 1 + 3
        else:
            v = src[ip] | src[ip + 1] << 8
            hval = (v ^ (src[ip + 1] | src[ip + 2] << 8) ^ (v >> 3)) & _HASH_MASK
            ref = htab[hval]
            htab[hval] = anchor
            distance = anchor - ref
            if (
                distance == 0
                or distance >= max_distance
                or src[ref] != src[ip]
                or src[ref + 1] != src[ip + 1]
                or src[ref + 2] != src[ip + 2]
                # Far matches need at least 5 bytes.
                or (
                    level2
                    and distance >= _MAX_L2_DISTANCE
                    and (src[ip + 3] != src[ref + 3] or src[ip + 4] != src[ref + 4])
                )
            ):
                out.append(src[anchor])
                ip = anchor + 1
                copy += 1
                if copy == _MAX_COPY:
                    copy = 0
                    out.append(_MAX_COPY - 1)
                continue
            ref += 3
            if level2 and distance >= _MAX_L2_DISTANCE:
                ref += 2
                length += 2

        distance -= 1
        ip = _match_end(src, anchor + length, ref, distance, ip_bound) - 3
        # The pending literal run's control byte was written before its length was
        # known: patch it, or take it back if the run stayed empty.
        if copy:
            out[len(out) - copy - 1] = copy - 1
        else:
            del out[-1]
        copy = 0
        write_match(out, ip - anchor, distance)  # the length is biased: 1 means 3 bytes

        # Update the hash at the match boundary (two positions).
        for _ in range(2):
            v = src[ip] | src[ip + 1] << 8
            htab[(v ^ (src[ip + 1] | src[ip + 2] << 8) ^ (v >> 3)) & _HASH_MASK] = ip
            ip += 1

        out.append(_MAX_COPY - 1)

    _finish(src, out, ip, copy, ip_bound)
    if level2:
        out[0] |= 1 << 5
    return out


def _match_end(src: bytes, ip: int, ref: int, distance: int, ip_bound: int) -> int:
    """Where a match that holds up to ``ip`` ends: one past the first differing byte (or ``ip_bound``).

    The two loops differ where the C code does: a run (``distance`` 0, the
    biased distance) stops *at* the differing byte, any other match one past
    it, and makes its first 8 comparisons without the bound check (safe since
    ``ip < ip_limit``).  The output depends on these quirks, so they are kept.
    """
    if distance == 0:
        x = src[ip - 1]
        while ip < ip_bound:
            if src[ref] != x:
                break
            ref += 1
            ip += 1
        return ip
    for _ in range(8):
        same = src[ref] == src[ip]
        ref += 1
        ip += 1
        if not same:
            return ip
    while ip < ip_bound:
        same = src[ref] == src[ip]
        ref += 1
        ip += 1
        if not same:
            break
    return ip


def _write_match_level1(out: bytearray, length: int, distance: int) -> None:
    """A level 1 match; lengths over 262 are split into several matches, as the C code does."""
    while length > _MAX_LEN - 2:
        out += bytes(((7 << 5) + (distance >> 8), _MAX_LEN - 2 - 7 - 2, distance & 255))
        length -= _MAX_LEN - 2
    if length < 7:
        out += bytes(((length << 5) + (distance >> 8), distance & 255))
    else:
        out += bytes(((7 << 5) + (distance >> 8), length - 7, distance & 255))


def _write_match_level2(out: bytearray, length: int, distance: int) -> None:
    """A level 2 match: any length (a 255-chain), and distances from 8191 on as 16 bits after a marker."""
    if distance < _MAX_L2_DISTANCE:
        high = distance >> 8
        tail = bytes((distance & 255,))
    else:
        distance -= _MAX_L2_DISTANCE
        high = 31
        tail = bytes((255, distance >> 8, distance & 255))
    if length < 7:
        out.append((length << 5) + high)
    else:
        out.append((7 << 5) + high)
        length -= 7
        out += b"\xff" * (length // 255)
        out.append(length % 255)
    out += tail


def _finish(src: bytes, out: bytearray, ip: int, copy: int, ip_bound: int) -> None:
    """The bytes after the last place a match may start (about a dozen), as literals, and the last run closed.

    The C code stops searching 12 bytes before the end so that its unchecked
    comparisons stay inside the input; what is left is copied as is.
    """
    while ip <= ip_bound + 1:
        out.append(src[ip])
        ip += 1
        copy += 1
        if copy == _MAX_COPY:
            copy = 0
            out.append(_MAX_COPY - 1)
    if copy:
        out[len(out) - copy - 1] = copy - 1
    else:
        del out[-1]


def reference_decompress(data: bytes, max_output: int) -> bytes:
    """Decompress one FastLZ stream (level 1 or 2) of at most ``max_output`` bytes.

    Unlike ``fastlz_decompress``, which returns 0 for every problem (and
    reads past the input in a few places), each problem raises
    :class:`DecodeError` with the offset of the instruction in ``data``:
    an unknown level, an instruction cut short by the end of the input, a
    match that starts before the output does, or output beyond
    ``max_output``.  The caller decides whether the length is right (Godot
    keeps the first ``buffer_size`` bytes).
    """
    src = bytes(data)
    if not src:
        raise DecodeError(0, "empty FastLZ stream")
    if max_output < 0:
        raise ValueError("max_output must not be negative")
    level = (src[0] >> 5) + 1
    if level > 2:
        raise DecodeError(0, f"unknown FastLZ level {level} (the first byte's top bits must be 0 or 1)")
    return bytes(_decode(src, level == 2, max_output))


def _decode(src: bytes, level2: bool, max_output: int) -> bytearray:
    """The instruction loop of ``fastlz1_decompress`` / ``fastlz2_decompress``.

    Literal runs and ordinary matches are handled inline (they are most of
    the instructions); the rarer long lengths and far distances, which
    differ between the levels, are read by helpers.
    """
    n = len(src)
    # The C loops stop when fewer than two bytes remain (level 1) or none (level 2).
    last = n - 1 if level2 else n - 2
    read_length = _long_length_level2 if level2 else _long_length_level1
    out = bytearray()
    ip = 1
    ctrl = src[0] & 31
    while True:
        at = ip - 1  # the instruction's offset, for errors
        if ctrl >= 32:
            length = (ctrl >> 5) + 2
            if length == 9:
                extra, ip = read_length(src, ip, at)
                length += extra
            if ip >= n:
                raise DecodeError(at, "FastLZ match cut short: its distance byte is missing")
            back = ((ctrl & 31) << 8) + 1 + src[ip]
            ip += 1
            if level2 and back == _FAR_MARKER:
                back, ip = _far_distance(src, ip, at)
            have = len(out)
            if have + length > max_output:
                raise DecodeError(at, f"FastLZ output would pass {max_output} bytes")
            if back > have:
                raise DecodeError(at, f"FastLZ match reaches {back} bytes back, before the start of the output")
            start = have - back
            if back >= length:
                out += out[start : start + length]
            else:
                # Overlapping copy: the last ``back`` bytes repeat.
                period = out[start:]
                out += (period * (length // back + 1))[:length]
        else:
            ctrl += 1
            if len(out) + ctrl > max_output:
                raise DecodeError(at, f"FastLZ output would pass {max_output} bytes")
            if ip + ctrl > n:
                raise DecodeError(at, f"FastLZ literal run of {ctrl} bytes cut short ({n - ip} left)")
            out += src[ip : ip + ctrl]
            ip += ctrl
        if ip > last:
            return out
        ctrl = src[ip]
        ip += 1


def _long_length_level1(src: bytes, ip: int, at: int) -> tuple[int, int]:
    """Level 1's one extra length byte, and where the instruction goes on."""
    if ip > len(src) - 2:
        raise DecodeError(at, "FastLZ match cut short: its length byte is missing")
    return src[ip], ip + 1


def _long_length_level2(src: bytes, ip: int, at: int) -> tuple[int, int]:
    """Level 2's extra length: bytes added up to the first that is not 255."""
    n = len(src)
    extra = 0
    while True:
        if ip > n - 2:
            raise DecodeError(at, "FastLZ match cut short: its length bytes are missing")
        code = src[ip]
        ip += 1
        extra += code
        if code != 255:
            return extra, ip


def _far_distance(src: bytes, ip: int, at: int) -> tuple[int, int]:
    """A level 2 far match's distance (16 bits after the marker, plus 8191), and where the instruction goes on."""
    if ip >= len(src) - 2:
        raise DecodeError(at, "FastLZ far match cut short: its 16-bit distance is missing")
    return (src[ip] << 8 | src[ip + 1]) + _MAX_L2_DISTANCE + 1, ip + 2
