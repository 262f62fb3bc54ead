"""Godot's compression: the bare streams of ``PackedByteArray.compress`` and ``GCPF`` files.

Both engines compress with ``Compression::compress(mode)``; a bare stream is
that output alone (no header, no size: the reader must know the size, as
``decompress(buffer_size, mode)`` does), and ``FileAccess.open_compressed``
(``FileAccessCompressed``) cuts the plaintext into blocks of 4096 bytes and
compresses each into one independent stream::

    magic "GCPF" (or "RSCC", compressed resources) | u32 mode | u32 block size
    | u32 total size T | u32 compressed size of each block, T // block + 1 of them
    | the blocks | magic again

``T // block + 1`` blocks means a total that is a multiple of the block size
(or 0) ends with an *empty* block, still compressed and stored.  The engine
never reads the trailing magic; it is checked here because its absence is the
surest sign of a truncated file.

The modes are a table (:data:`MODES`), one row per ``FileAccess.COMPRESSION_*``
value, with the exact stream parameters of a default-settings engine, so that
re-compressing a file's plaintext gives the engine's bytes (checked against the
Godot 3.2.3 and 4.6 files in ``fixtures/containers``; Zstd output depends on
the libzstd version, and 3.2.3's older one made one block differently).  The
project settings ``compression/formats/*/compression_level`` change the bytes
and cannot be seen in a file: pass ``level`` to match a game that set them.

Reading untrusted files: every size in the header is checked against the
file's length before anything is allocated; the total is capped by
``max_size``; each block is decompressed with an output cap of its expected
size, so a decompression bomb stops after that many bytes; every block must
decompress to exactly its expected size.  Everything wrong raises
:class:`~godot_formats.errors.DecodeError` with the byte offset in the file.
``zstandard`` and ``brotli`` are imported only when a stream needs them.
"""

from __future__ import annotations

__all__ = [
    "FASTLZ", "DEFLATE", "ZSTD", "GZIP", "BROTLI", "MODES", "Mode", "mode_info",
    "GCPF_MAGIC", "RSCC_MAGIC", "DEFAULT_BLOCK_SIZE", "DEFAULT_MAX_SIZE", "GcpfInfo",
    "compress", "decompress", "read_gcpf", "write_gcpf", "BLOCK_THREADS", "one_thread",
]

import contextlib
import contextvars
import importlib
import os
import struct
import threading
import zlib
from typing import Any, Callable, Iterator, Optional, TypeVar

import attrs

from ..core.errors import DecodeError, EncodeError, SizeLimitError
from ..core.limits import MAX_FILE_SIZE
from . import fastlz
from .layer import Layer

FASTLZ = 0
DEFLATE = 1
ZSTD = 2
GZIP = 3
BROTLI = 4

GCPF_MAGIC = b"GCPF"
#: Compressed binary resources (``.res`` saved with compression) use the same class and layout.
RSCC_MAGIC = b"RSCC"
_MAGICS = (GCPF_MAGIC, RSCC_MAGIC)
DEFAULT_BLOCK_SIZE = 4096
#: Default cap on a GCPF file's plaintext: every kind of file's (:data:`..core.limits.MAX_FILE_SIZE`);
#: a hostile header cannot make a reader produce more.
DEFAULT_MAX_SIZE = MAX_FILE_SIZE

#: zlib's ``OS_CODE`` in the engines' builds (Unix and the web build); Windows
#: builds write 10 or 11 and Apple ones 7 or 19, so a rewrite keeps the file's own.
DEFAULT_GZIP_OS = 3
#: Godot's ``Compression::zstd_level`` default.
_ZSTD_DEFAULT_LEVEL = 3
#: ``ZSTD_WINDOWLOG_LIMIT_DEFAULT``, the largest window libzstd (and so the
#: engine, unless long-distance matching is on) accepts by default.
_ZSTD_MAX_WINDOW = 1 << 27
#: Zstd frames with no content size may declare any window up to the limit;
#: the decoder's buffer is allocated from it, so for small outputs the window
#: is capped at this much (and at the output cap when that is larger).
_ZSTD_SMALL_WINDOW = 1 << 23
#: The most a Zstd input byte can expand to (an RLE block: 4 bytes make
#: 128 KiB).  Input is fed in slices small enough that one slice cannot pass
#: the output cap by more than one such block.
_ZSTD_MAX_RATIO = 1 << 15

_HEADER = struct.Struct("<4sIII")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


#: How many threads compress one GCPF file's blocks, in the modes that gain from it
#: (:attr:`Mode.threaded`: Deflate, Gzip): the blocks are independent streams, so on two cores a
#: large file is compressed in about two thirds of the time (zlib's own work is most of a write).
#: :func:`one_thread` sets 1 for a context: pools whose processes or threads already keep every
#: core busy (the batch workers) use it.
BLOCK_THREADS = max(1, min(4, _cores()))
#: Files with less plaintext than this stay on one thread: starting threads costs more than it saves.
PARALLEL_MIN_BYTES = 256 * 1024
_THREADS: contextvars.ContextVar[int | None] = contextvars.ContextVar("block_threads", default=None)

_R = TypeVar("_R")
#: ``share(lo, hi, stopped)``: the results of blocks ``lo`` to ``hi - 1``, in order, asking
#: ``stopped()`` before each block (True: give up, the file's outcome is decided elsewhere).
_Share = Callable[[int, int, Callable[[], bool]], list[_R]]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Every GCPF file written in this context (this thread, this task) compressed on one thread."""
    token = _THREADS.set(1)
    try:
        yield
    finally:
        _THREADS.reset(token)


def _never() -> bool:
    return False


def _in_shares(share: _Share[_R], count: int, row: Mode, size: int) -> list[_R]:
    """``share(0, count, ...)``, cut into contiguous shares run on up to :data:`BLOCK_THREADS`
    threads when ``row`` gains from them and ``size`` bytes are worth it.

    The outcome is the loop's: the results in order, or the first exception in block order (a
    share stops at its own first; the shares after a failed one stop at their next block, the
    ones before it run on, since an error of theirs would come first).  A Ctrl-C (any exception
    that is not an ``Exception``) stops every share at its next block and is raised first, once
    the threads are done.  A thread that cannot start (a limit, an interpreter shutting down)
    leaves its share to the caller's thread.
    """
    override = _THREADS.get()
    n = min(BLOCK_THREADS if override is None else override, count)
    if n <= 1 or not row.threaded or size < PARALLEL_MIN_BYTES:
        return share(0, count, _never)
    bounds = [count * k // n for k in range(n + 1)]
    results: list[list[_R]] = [[] for _ in range(n)]
    errors: list[BaseException | None] = [None] * n
    failed = [n]  # the first share that failed
    interrupted = [False]
    lock = threading.Lock()

    def run(k: int) -> None:
        try:
            results[k] = share(bounds[k], bounds[k + 1], lambda: interrupted[0] or failed[0] < k)
        except Exception as e:  # noqa: BLE001 - raised in the caller's thread below, in order
            errors[k] = e
            with lock:
                failed[0] = min(failed[0], k)
        except BaseException as e:  # a Ctrl-C in the caller's thread: everything stops
            errors[k] = e
            interrupted[0] = True

    threads: list[threading.Thread] = []
    try:
        for k in range(1, n):
            threads.append(threading.Thread(target=run, args=(k,), name=f"gcpf-blocks-{k}", daemon=True))
            try:
                threads[-1].start()
            except RuntimeError:  # "can't start new thread": this share and the rest run here
                threads.pop()
                break
        for k in (0, *range(len(threads) + 1, n)):
            if not interrupted[0]:
                run(k)
        for t in threads:
            t.join()
    except BaseException:  # a Ctrl-C while a thread started or in a join: stop the shares, then go
        interrupted[0] = True
        for t in threads:
            if t.ident is not None:  # started
                t.join()
        raise
    for error in sorted((e for e in errors if e is not None), key=lambda e: isinstance(e, Exception)):
        raise error
    return [r for part in results for r in part]


# --- one stream per mode ------------------------------------------------------------------

_Compress = Callable[[bytes, Optional[int], int, Optional[int]], bytes]
_Decompress = Callable[[bytes | memoryview, int], bytes]


def _module(name: str, mode: str, reading: bool) -> Any:
    """Import an optional package, or say which one is missing and why."""
    try:
        return importlib.import_module(name)
    except ImportError:
        what = f"{mode} streams need the '{name}' package (pip install {name})"
        if reading:
            raise DecodeError(0, what) from None
        raise EncodeError(what) from None


def _fastlz_compress(data: bytes, level: int | None, gzip_os: int, window_log: int | None) -> bytes:
    """``Compression::compress`` for FastLZ: inputs under 16 bytes are zero-padded to 16."""
    if len(data) < 16:
        data = data + bytes(16 - len(data))
    return fastlz.compress(data)


def _fastlz_decompress(data: bytes | memoryview, cap: int) -> bytes:
    # The engine decompresses short blocks into a 16-byte buffer: allow that much.
    return fastlz.decompress(bytes(data), max(cap, 16))


def _deflate_compress(data: bytes, level: int | None, gzip_os: int, window_log: int | None) -> bytes:
    """``deflateInit2(level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY)``: a zlib-wrapped stream."""
    c = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 15, 8)
    return c.compress(data) + c.flush()


def _gzip_compress(data: bytes, level: int | None, gzip_os: int, window_log: int | None) -> bytes:
    """The same with windowBits 31; byte 9 (OS) is zlib's build constant, so it is set here."""
    if not 0 <= gzip_os <= 255:
        raise EncodeError(f"gzip OS byte must be 0..255, not {gzip_os}")
    c = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 31, 8)
    out = bytearray(c.compress(data) + c.flush())
    out[9] = gzip_os
    return bytes(out)


def _zlib_decompress(wbits: int, name: str) -> _Decompress:
    def run(data: bytes | memoryview, cap: int) -> bytes:
        d = zlib.decompressobj(wbits)
        try:
            out = d.decompress(data, cap + 1)
        except zlib.error as e:
            raise DecodeError(0, f"{name} stream is corrupt ({e})") from None
        if len(out) > cap:
            raise DecodeError(0, f"{name} stream decompresses to more than {cap} bytes")
        if not d.eof:
            raise DecodeError(len(data), f"{name} stream ends early (truncated)")
        if d.unused_data:
            at = len(data) - len(d.unused_data)
            raise DecodeError(at, f"{len(d.unused_data)} bytes after the end of the {name} stream")
        return out

    return run


#: Zstd contexts, per thread (a context is not thread-safe): made once, not once per GCPF block.
_ZSTD_CONTEXTS = threading.local()


def _zstd_compress(data: bytes, level: int | None, gzip_os: int, window_log: int | None) -> bytes:
    """``ZSTD_compressCCtx``: content size in the header, no checksum, no dictionary.

    ``window_log`` set = the engine's long-distance matching setting on, with
    that ``window_log_size``.
    """
    zstd = _module("zstandard", "Zstd", reading=False)
    lvl = _ZSTD_DEFAULT_LEVEL if level is None else level
    return bytes(_zstd_compressor(zstd, lvl, window_log).compress(data))


def _zstd_compressor(zstd: Any, level: int, window_log: int | None) -> Any:
    """A compression context for these settings (see :func:`_zstd_reused`)."""
    def make() -> Any:
        if window_log is None:
            return zstd.ZstdCompressor(level=level, write_content_size=True, write_checksum=False)
        params = zstd.ZstdCompressionParameters.from_level(
            level, enable_ldm=True, window_log=window_log, write_content_size=True, write_checksum=False)
        return zstd.ZstdCompressor(compression_params=params)

    return _zstd_reused((zstd.ZstdCompressor, level, window_log), make)


def _zstd_reused(key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """The Zstd context for ``key``, one per thread (a context is not thread-safe), made by ``make``
    the first time and reused: making one per GCPF block cost more than the block itself."""
    contexts: dict[tuple[Any, ...], Any] | None = getattr(_ZSTD_CONTEXTS, "by_key", None)
    if contexts is None:
        contexts = _ZSTD_CONTEXTS.by_key = {}
    context = contexts.get(key)
    if context is None:
        context = contexts[key] = make()
    return context


#: The first slice of a Zstd frame given to the decompressor, and the largest (the slices double).
_ZSTD_FIRST_FEED = 64
_ZSTD_MAX_FEED = 1 << 20


def _zstd_context(zstd: Any, window: int) -> Any:
    """A decompression context for ``window`` (see :func:`_zstd_reused`)."""
    return _zstd_reused((zstd.ZstdDecompressor, window), lambda: zstd.ZstdDecompressor(max_window_size=window))


def _zstd_decompress(data: bytes | memoryview, cap: int) -> bytes:
    """Frames back to back (as ``ZSTD_decompressDCtx`` reads them), at most ``cap`` bytes.

    ``zstandard``'s one-shot ``decompress`` allocates what the frame header
    claims (and ignores ``max_output_size`` when a size is there), so the
    frames go to a decompression object instead: the first frame whose header
    gives its size gets the whole block at once (a GCPF block is one frame: one
    call), every later frame slices that double from 64 bytes, so that the bytes
    after a frame are never copied more than about the frame's own size (many
    small frames in a block stay linear, one copy of the block more): a frame
    whose header gives its size (every frame Godot writes) once that size is
    checked against the cap, since libzstd stops a frame that outgrows its
    size; a frame without one in slices small enough that the output is
    checked every 128 KiB.
    """
    zstd = _module("zstandard", "Zstd", reading=True)
    window = min(_ZSTD_MAX_WINDOW, max(_ZSTD_SMALL_WINDOW, 1 << max(cap - 1, 1).bit_length()))
    dctx = _zstd_context(zstd, window)
    out = bytearray()
    pos = 0
    first = True
    while True:
        try:
            params = zstd.get_frame_parameters(data[pos : pos + 18])
        except zstd.ZstdError as e:
            raise DecodeError(pos, f"not a Zstd frame header ({e})") from None
        known = params.content_size != zstd.CONTENTSIZE_UNKNOWN
        if known and len(out) + params.content_size > cap:
            raise DecodeError(pos, f"Zstd frame claims {params.content_size} bytes, more than the {cap} expected")
        obj = dctx.decompressobj()
        frame_start = pos
        # The first frame gets the whole block at once (a GCPF block is one frame: one call, no
        # copy of what follows); the frames after it, slices that double.
        step = len(data) if first and known else _ZSTD_FIRST_FEED
        first = False
        try:
            while not obj.eof and pos < len(data):
                # Slices that double: a frame costs at most about twice its own size, whatever follows
                # it (the whole rest of the block for each of many small frames was quadratic). libzstd
                # refuses a frame's output past its content size (checked above); a frame without one
                # gets slices small enough that its output is checked every 128 KiB.
                feed = step if known else min(step, max(4, (cap - len(out)) // _ZSTD_MAX_RATIO))
                out += obj.decompress(data[pos : pos + feed])
                pos = min(pos + feed, len(data))
                step = min(step * 2, _ZSTD_MAX_FEED)
                if len(out) > cap:
                    raise DecodeError(frame_start, f"Zstd stream decompresses to more than {cap} bytes")
        except zstd.ZstdError as e:
            raise DecodeError(frame_start, f"Zstd frame is corrupt ({e})") from None
        if not obj.eof:
            raise DecodeError(len(data), "Zstd stream ends early (truncated)")
        pos -= len(obj.unused_data)
        if pos >= len(data):
            return bytes(out)


def _brotli_compress(data: bytes, level: int | None, gzip_os: int, window_log: int | None) -> bytes:
    brotli = _module("brotli", "Brotli", reading=False)
    return bytes(brotli.compress(data, quality=11 if level is None else level))


def _brotli_decompress(data: bytes | memoryview, cap: int) -> bytes:
    """``BrotliDecoderDecompress`` into a buffer of ``cap`` bytes."""
    brotli = _module("brotli", "Brotli", reading=True)
    d = brotli.Decompressor()
    try:
        # The buffer stops growing near the limit (it may pass it by one internal chunk).
        out = d.process(data, output_buffer_limit=cap + 1)
    except brotli.error as e:
        raise DecodeError(0, f"Brotli stream is corrupt ({e})") from None
    if len(out) > cap:
        raise DecodeError(0, f"Brotli stream decompresses to more than {cap} bytes")
    if not d.is_finished():
        raise DecodeError(len(data), "Brotli stream ends early (truncated)")
    return bytes(out)


@attrs.frozen
class Mode:
    """One ``FileAccess.COMPRESSION_*`` mode.

    ``engine_writes`` is False for Brotli: Godot 4 reads it but its
    ``Compression::compress`` refuses ("Only brotli decompression is
    supported"), so a file written here in that mode has no engine original.
    """

    id: int
    name: str
    compress: _Compress
    decompress: _Decompress
    engine_writes: bool
    package: str | None
    #: The ``level`` values the stream library takes (None: the mode has no level).
    levels: tuple[int, int] | None
    #: Whether writing a file's blocks gains from threads (:data:`BLOCK_THREADS`): zlib lets go of
    #: the GIL while it compresses, and a 4 kB block at the default level is ~40 us of work.
    #: Measured on 2 cores (a 5 MB save, median of 9): Deflate writes 61 -> 42 ms, Gzip 76 -> 47;
    #: Zstd's blocks are too quick (18 -> 24 ms: the threads spend it handing the GIL over), and
    #: so is every decompression (reads are never threaded: Zstd 15 -> 29 ms, Deflate 17 -> 20).
    threaded: bool = False


#: The modes, by id (``FileAccess.COMPRESSION_FASTLZ`` … ``COMPRESSION_BROTLI``).
MODES: tuple[Mode, ...] = (
    # FastLZ: the compiled core keeps the GIL for inputs under 64 kB (a block is over in microseconds).
    Mode(FASTLZ, "FastLZ", _fastlz_compress, _fastlz_decompress, True, None, None, False),
    Mode(DEFLATE, "Deflate", _deflate_compress, _zlib_decompress(15, "Deflate"), True, None, (-1, 9), True),
    Mode(ZSTD, "Zstd", _zstd_compress, _zstd_decompress, True, "zstandard", (-(1 << 17), 22), False),
    Mode(GZIP, "Gzip", _gzip_compress, _zlib_decompress(31, "Gzip"), True, None, (-1, 9), True),
    Mode(BROTLI, "Brotli", _brotli_compress, _brotli_decompress, False, "brotli", (0, 11), False),
)
#: ``ZSTD_WINDOWLOG_MIN`` .. ``ZSTD_WINDOWLOG_MAX_64``.
_ZSTD_WINDOW_LOGS = (10, 31)
_BY_ID = {m.id: m for m in MODES}


def mode_info(mode: int) -> Mode:
    """The table row of a mode id; ``ValueError`` for ids Godot does not have."""
    try:
        return _BY_ID[mode]
    except (KeyError, TypeError):
        raise ValueError(f"unknown compression mode {mode!r} (Godot's are 0..4)") from None


def _writable(mode: int, allow_brotli_write: bool, level: int | None, window_log: int | None) -> Mode:
    """The row of a mode to write, after checking the options against it (EncodeError, not the libraries' own)."""
    try:
        row = mode_info(mode)
    except ValueError as e:
        raise EncodeError(str(e)) from None
    if not row.engine_writes and not allow_brotli_write:
        raise EncodeError(
            f"Godot cannot write {row.name} (mode {mode}); it only reads it. "
            "Pass allow_brotli_write=True to write a stream only Godot 4 can read")
    if level is not None:
        if row.levels is None:
            raise EncodeError(f"{row.name} has no compression level")
        if not row.levels[0] <= level <= row.levels[1]:
            raise EncodeError(f"{row.name} level must be {row.levels[0]}..{row.levels[1]}, not {level}")
    if window_log is not None and not _ZSTD_WINDOW_LOGS[0] <= window_log <= _ZSTD_WINDOW_LOGS[1]:
        raise EncodeError(f"zstd_window_log must be {_ZSTD_WINDOW_LOGS[0]}..{_ZSTD_WINDOW_LOGS[1]}, not {window_log}")
    return row


# --- bare streams -------------------------------------------------------------------------


def compress(data: bytes, mode: int, *, level: int | None = None, gzip_os: int = DEFAULT_GZIP_OS,
             zstd_window_log: int | None = None, allow_brotli_write: bool = False) -> bytes:
    """``PackedByteArray.compress(mode)``: one bare stream, as a default-settings engine writes it.

    ``level`` is the game's ``compression/formats/{zlib,gzip,zstd}/compression_level``
    (None = the engine default); ``gzip_os`` the gzip header's OS byte (keep the
    one of the file being rewritten); ``zstd_window_log`` the
    ``window_log_size`` of a game with Zstd long-distance matching on.
    """
    row = _writable(mode, allow_brotli_write, level, zstd_window_log)
    return row.compress(bytes(data), level, gzip_os, zstd_window_log)


def _exactly(row: Mode, data: bytes | memoryview, size: int) -> bytes:
    """One stream that must give ``size`` bytes, as ``decompress(buffer_size)`` expects.

    FastLZ streams of inputs under 16 bytes hold the engine's zero padding;
    like the engine (which reads them through a 16-byte buffer), the first
    ``size`` bytes are kept.
    """
    out = row.decompress(data, size)
    if len(out) == size:
        return out
    if row.id == FASTLZ and size < len(out) <= 16:
        return out[:size]
    raise DecodeError(len(data), f"{row.name} stream decompresses to {len(out)} bytes, not {size}")


def decompress(data: bytes, mode: int, size: int | None = None, *, max_size: int | None = None) -> bytes:
    """Decompress one bare stream (``PackedByteArray.decompress`` / ``decompress_dynamic``).

    Give ``size``, the exact uncompressed size (a bare stream does not
    store it): a stream that gives another size is refused.  Or give
    ``max_size`` for any size up to that, like the engine's
    ``decompress_dynamic`` (the engine allows that for Deflate, Gzip and
    Brotli only; here every mode works, but a FastLZ stream of an input
    under 16 bytes comes back with the engine's zero padding, 16 bytes).  Offsets in
    errors are in ``data``.
    """
    row = mode_info(mode)
    if (size is None) == (max_size is None):
        raise TypeError("give exactly one of size (the exact size) and max_size (a limit)")
    data = bytes(data)
    if size is not None:
        if size < 0:
            raise ValueError("size must not be negative")
        return _exactly(row, data, size)
    assert max_size is not None
    if max_size < 0:
        raise ValueError("max_size must not be negative")
    out = row.decompress(data, max_size)
    if len(out) > max_size:  # FastLZ's 16-byte padding
        raise SizeLimitError(len(data), f"{row.name} stream decompresses to {len(out)} bytes, more than {max_size}")
    return out


# --- GCPF files ---------------------------------------------------------------------------


def _check_mode(instance: Any, attribute: Any, value: int) -> None:
    mode_info(value)


def _check_magic(instance: Any, attribute: Any, value: bytes) -> None:
    if value not in _MAGICS:
        raise ValueError(f"magic must be one of {_MAGICS}, not {value!r}")


def _check_block_size(instance: Any, attribute: Any, value: int) -> None:
    if not 1 <= value <= 0xFFFFFFFF:
        raise ValueError(f"block_size must be 1..2**32-1, not {value}")


@attrs.frozen
class GcpfInfo:
    """What, besides the plaintext, makes a GCPF file: enough to write it again byte for byte.

    ``mode``, ``block_size``, ``magic`` and ``gzip_os`` are read from the
    file; ``level`` and ``zstd_window_log`` (the game's compression project
    settings) cannot be, and stay at the engine defaults unless set.
    """

    mode: int = attrs.field(default=FASTLZ, validator=_check_mode)  # open_compressed's default
    block_size: int = attrs.field(default=DEFAULT_BLOCK_SIZE, validator=_check_block_size)
    magic: bytes = attrs.field(default=GCPF_MAGIC, validator=_check_magic)
    gzip_os: int = DEFAULT_GZIP_OS
    level: int | None = None
    zstd_window_log: int | None = None

    @property
    def mode_name(self) -> str:
        """The mode's name in :data:`MODES` ("FastLZ", "Deflate", "Zstd", "Gzip", "Brotli")."""
        return mode_info(self.mode).name


def read_gcpf(data: bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> tuple[bytes, GcpfInfo]:
    """The plaintext of a GCPF (or RSCC) file, and what is needed to write it back.

    The plaintext of ``open_compressed`` files is ``store_var`` frames (see
    :mod:`godot_formats.stream`).  Refuses, with the file offset: a wrong
    magic, an unknown mode, block size 0, a total over ``max_size``, a size
    table or blocks that do not fit the file (checked before any block is
    read), a block that does not decompress to exactly its share of the
    total, a missing trailing magic (a truncated file) and bytes after it
    (:func:`read_gcpf_prefix` reads such a file as the engine does).
    """
    plaintext, info, end = read_gcpf_prefix(data, max_size=max_size)
    if end != len(data):
        raise DecodeError(end, f"{len(data) - end} bytes after the trailing magic")
    return plaintext, info


def gcpf_header_size(data: bytes) -> int:
    """How many of the first bytes of ``data`` a compressed file's header takes: magic, mode, block
    size and total size (16 bytes), then one u32 size per block, as many as the header's own
    fields say (one when they cannot say).  The blocks and the trailing magic follow."""
    if len(data) < _HEADER.size:
        return _HEADER.size
    _, _, block_size, total = _HEADER.unpack_from(data)
    return _HEADER.size + 4 * (total // block_size + 1 if block_size else 1)


def read_gcpf_prefix(data: bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> tuple[bytes, GcpfInfo, int]:
    """:func:`read_gcpf` of the compressed file ``data`` starts with, and where it ends.

    The engine reads the header, the size table and the blocks, and nothing after them, so
    bytes after the trailing magic are not its business (nor this function's): the caller
    keeps them.
    """
    data = bytes(data)
    n = len(data)
    if n < _HEADER.size:
        raise DecodeError(n, f"truncated GCPF header: {n} of {_HEADER.size} bytes")
    magic, mode, block_size, total = _HEADER.unpack_from(data)
    if magic not in _MAGICS:
        raise DecodeError(0, f"not a compressed file: magic {magic!r}, expected b'GCPF' or b'RSCC'")
    try:
        row = mode_info(mode)
    except ValueError as e:
        raise DecodeError(4, str(e)) from None
    if block_size == 0:
        raise DecodeError(8, "block size 0")
    if total > max_size:
        raise SizeLimitError(12, f"uncompressed size {total} is over max_size={max_size}")
    count = total // block_size + 1
    table = _HEADER.size
    first = table + 4 * count
    if first + 4 > n:
        raise DecodeError(table, f"{count} block sizes do not fit in a file of {n} bytes (truncated?)")
    sizes = struct.unpack_from(f"<{count}I", data, table)
    end = first + sum(sizes)
    if end + 4 > n:
        raise DecodeError(table, f"the blocks need {end + 4 - first} bytes after the size table, "
                                 f"the file has {n - first} (truncated?)")
    if data[end : end + 4] != magic:
        raise DecodeError(end, f"trailing magic {magic!r} missing (truncated or damaged file)")

    gzip_os = data[first + 9] if row.id == GZIP and sizes[0] >= 10 else DEFAULT_GZIP_OS
    out = bytearray()  # one buffer, not an object per block: a legal file may have 1-byte blocks
    pos = first
    view = memoryview(data)  # the blocks are read in place, not copied out first
    for i, csize in enumerate(sizes):  # one thread: see Mode.threaded
        want = block_size if i < count - 1 else total % block_size
        try:
            out += _exactly(row, view[pos : pos + csize], want)
        except DecodeError as e:
            raise DecodeError(pos + e.offset, f"block {i} of {count} (at byte {pos}): {e.reason}") from None
        pos += csize
    return bytes(out), GcpfInfo(mode=mode, block_size=block_size, magic=magic, gzip_os=gzip_os), end + 4


def write_gcpf(plaintext: bytes, info: GcpfInfo, *, allow_brotli_write: bool = False) -> bytes:
    """A GCPF file as ``FileAccess.open_compressed`` + ``close()`` writes it.

    Every block, the empty last one included when the size is a multiple
    of the block size, is compressed as the engine does; with the info of
    :func:`read_gcpf` the engine's own file comes back (see the module note
    on Zstd).  Brotli needs ``allow_brotli_write=True``: no engine writes
    it, Godot 4 reads it.
    """
    row = _writable(info.mode, allow_brotli_write, info.level, info.zstd_window_log)
    plaintext = bytes(plaintext)
    total = len(plaintext)
    if total > 0xFFFFFFFF:
        raise EncodeError(f"GCPF stores the size as u32: {total} bytes is too much")
    bs = info.block_size

    def share(lo: int, hi: int, stopped: Callable[[], bool]) -> list[bytes]:
        out = []
        for i in range(lo, hi):
            if stopped():
                break
            out.append(row.compress(plaintext[i * bs : (i + 1) * bs], info.level, info.gzip_os,
                                    info.zstd_window_log))
        return out

    blocks = _in_shares(share, total // bs + 1, row, total)
    header = _HEADER.pack(info.magic, info.mode, bs, total)
    sizes = struct.pack(f"<{len(blocks)}I", *(len(b) for b in blocks))
    return b"".join([header, sizes, *blocks, info.magic])


# -- the layer's row -----------------------------------------------------------------------------


@attrs.frozen
class BareStream:
    """The layer of a bare ``PackedByteArray.compress(mode)`` stream: one stream, no header."""

    mode: int

    @property
    def mode_name(self) -> str:
        return f"{mode_info(self.mode).name} (bare stream)"


def _write_layer(plaintext: bytes, info: Any, key: bytes | None) -> bytes:
    if isinstance(info, BareStream):
        return compress(plaintext, info.mode)
    return write_gcpf(plaintext, info)


def describe(info: Any) -> str:
    """The layer in words: ``compressed (Zstd)``."""
    return f"compressed ({info.mode_name})"


#: The compression layer (``FileAccessCompressed``): ``GCPF``, or ``RSCC`` for a compressed resource
#: (same layout); a bare stream has no magic and is named by the caller (``compressed=``).
LAYER = Layer("compression", (GCPF_MAGIC, RSCC_MAGIC),
              lambda data, key, max_size: read_gcpf_prefix(data, max_size=max_size), _write_layer, describe,
              "of the decompressed data", "compressed", gcpf_header_size, lambda info: None)
