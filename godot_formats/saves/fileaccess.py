"""Godot's ``FileAccess`` (Godot 3: ``File``), call for call, through the encrypted and compressed layers.

Many saves are not a bare ``store_var``: a ``store_32`` version, a ``store_pascal_string`` name,
then ``store_var``.  :class:`FileAccess` reads and writes such files with the engine's own calls
and bytes.  ``FileAccess.open(path, "r", password=...)`` opens what
``open_encrypted_with_pass`` wrote (``key=`` for ``open_encrypted``, ``compression=`` for
``open_compressed``), so a custom layout inside an encrypted file reads the same way.

The whole file is read (decrypted, decompressed) into memory when it is opened, and written when
it is closed: encrypted or compressed as the engine does on ``close()``, and atomically (the old
file or the new one, never half of one, :func:`godot_formats.files.write_atomic`).  The rules
of the numbers and strings are those of :mod:`godot_formats.primitives`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Iterable, Literal, Union

from ..core.types import PackedStringArray
from ..layers import compression as _compression
from ..layers.encryption import KEY_SIZE, GdecInfo, InvalidKeyError, read_gdec, write_gdec
from ..layers.files import write_atomic
from ..streams.primitives import Buffer, ByteCursor, DialectLike, NonAscii, OnEof
from .reading import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_RATIO

__all__ = ["FileAccess", "ModeFlags"]

ModeFlags = Literal["r", "w"]
FileLike = Union[str, "os.PathLike[str]", IO[bytes]]


class FileAccess(ByteCursor):
    """Godot's ``FileAccess`` / Godot 3's ``File``: open with :meth:`open`, use as a context manager.

    Numbers: ``store_8``/``16``/``32``/``64`` cut the value to the width; ``get_8``/``16``/``32``
    return it unsigned and ``get_64`` signed (a Godot int), as the engine does.
    ``store_real``/``get_real`` are float32, or float64 in a ``real_t=double`` dialect
    (``godot4-double``); ``store_half``/``get_half`` are Godot 4 only.  ``big_endian`` (3.x:
    ``endian_swap``) swaps the numbers and the u32 lengths of ``store_pascal_string`` and
    ``store_var``, never the Variant bytes; it may be changed at any time.

    Text: ``store_string``/``store_line`` write UTF-8; ``get_line`` reads up to ``\\n`` or NUL
    (Godot 4 also ends a line at ``\\r`` or ``\\r\\n``; Godot 3 drops every ``\\r``);
    ``get_csv_line`` joins lines while a quote is open, as the engine does (Godot 3 also reads
    ``""`` outside quotes as a quote).  ``get_line`` and ``get_csv_line`` never raise at the end
    of the file: like the engine, they return what was there and set :meth:`eof_reached`.

    Reads past the end: see :mod:`godot_formats.primitives` (``on_eof``).  ``get_buffer(n)``
    with fewer than ``n`` bytes left raises too; with ``on_eof="zero"`` it returns what is left
    (Godot 3: padded with zeros to ``n``, as 3.x does), so the GDScript habit
    ``get_buffer(get_length())`` after a header needs ``get_length() - get_position()`` here.

    Godot 3's names work too (``f.endian_swap = True``, ``f.get_len()``:
    :data:`~godot_formats.streams.attributes.GODOT3_NAMES`); any other unknown attribute is
    refused with the name it likely meant, never kept and ignored.
    """

    __slots__ = ("_file", "_mode", "_key", "encryption", "compression", "_closed")

    READ: ModeFlags = "r"
    WRITE: ModeFlags = "w"
    COMPRESSION_FASTLZ = _compression.FASTLZ
    COMPRESSION_DEFLATE = _compression.DEFLATE
    COMPRESSION_ZSTD = _compression.ZSTD
    COMPRESSION_GZIP = _compression.GZIP
    COMPRESSION_BROTLI = _compression.BROTLI

    #: The encrypted layer the file was read with, or will be written with (None: not encrypted).
    encryption: GdecInfo | None
    #: The compressed layer (None: not compressed).
    compression: _compression.GcpfInfo | None

    def __init__(self, file: FileLike, mode: ModeFlags, data: bytes, *, big_endian: bool, dialect: DialectLike,
                 key: bytes | None, encryption: GdecInfo | None, compression: _compression.GcpfInfo | None,
                 on_eof: OnEof, non_ascii: NonAscii) -> None:
        """Use :meth:`open`."""
        super().__init__(data, big_endian=big_endian, dialect=dialect, on_eof=on_eof, non_ascii=non_ascii)
        self._file = file
        self._mode = mode
        self._key = key
        self.encryption = encryption
        self.compression = compression
        self._closed = False

    @classmethod
    def open(
        cls,
        file: FileLike,
        mode: ModeFlags,
        *,
        big_endian: bool = False,
        dialect: DialectLike = "godot4",
        password: str | None = None,
        key: Buffer | None = None,
        compression: int | _compression.GcpfInfo | None = None,
        on_eof: OnEof = "raise",
        non_ascii: NonAscii = "warn",
        max_size: int = DEFAULT_MAX_FILE_SIZE,
        max_ratio: int = DEFAULT_MAX_RATIO,
    ) -> FileAccess:
        """Open a file (a path, or a binary file object) for reading (``"r"``) or writing (``"w"``).

        ``password`` / ``key`` (32 bytes): ``open_encrypted_with_pass`` / ``open_encrypted``.
        Reading detects the Godot 3 or Godot 4 layout (and a byte-swapped Godot 3 header);
        writing uses the dialect's engine (Godot 3: AES-256-ECB; Godot 4: AES-256-CFB with a
        fresh IV).  ``big_endian`` is that of the calls inside, as Godot 4's ``big_endian`` and
        Godot 3's ``endian_swap`` set *after* ``open_encrypted`` are (measured on 3.2.3:
        ``endian_swap`` set *before* it swaps the encrypted header only, and leaves the calls
        inside little-endian).  To write such a header, set ``f.encryption =
        GdecInfo(3, big_endian=True)`` before closing.
        ``compression``: ``open_compressed`` with a ``COMPRESSION_*`` mode or a
        :class:`~godot_formats.compression.GcpfInfo`; reading uses the file's own mode, as the
        engine does.  An engine opens a file encrypted or compressed, never both, and so
        does this.  A file (or its plaintext) over ``max_size`` bytes is refused before it is
        read whole, and a compressed one that would decompress to more than ``max_ratio`` times its
        size (as :func:`godot_formats.open` does).  ``"w"`` writes nothing until :meth:`close` (or the end of a ``with``
        block without an exception); then it replaces the file atomically.
        """
        if mode not in ("r", "w"):
            raise ValueError(f"mode must be 'r' (FileAccess.READ) or 'w' (FileAccess.WRITE), not {mode!r}")
        if (password is not None or key is not None) and compression is not None:
            raise ValueError("Godot opens a file encrypted (open_encrypted) or compressed (open_compressed), not both")
        if password is not None and key is not None:
            raise InvalidKeyError("give a password or a key, not both")
        raw_key = _key(password, key)
        gcpf = _gcpf_info(compression, mode)
        from ..core.dialects import get_dialect
        d = get_dialect(dialect)
        if mode == "w":
            enc = None
            if raw_key is not None:
                enc = GdecInfo.for_version(3 if d.major < 4 else 4)
            return cls(file, mode, b"", big_endian=big_endian, dialect=d, key=raw_key, encryption=enc,
                       compression=gcpf, on_eof=on_eof, non_ascii=non_ascii)
        from .reading import LAYER_BY_NAME, read_bounded, read_layer
        raw, _ = read_bounded(file, max_size)  # the same size-bounded read as gf.open's, the same budgets
        enc = None
        layer = LAYER_BY_NAME["encryption"] if raw_key is not None else \
            LAYER_BY_NAME["compression"] if gcpf is not None else None
        if layer is not None:  # the layer the call names, as the engine's open_encrypted / open_compressed
            if raw_key is not None and bytes(raw[:4]) not in layer.magics:
                raw, enc = read_gdec(raw, key=raw_key, max_size=max_size)  # its own error for a wrong magic
            else:
                raw, info, _ = read_layer(layer, raw, raw_key, max_size, max_ratio)
                enc, gcpf = (info, None) if raw_key is not None else (None, info)
        return cls(file, mode, raw, big_endian=big_endian, dialect=d, key=raw_key, encryption=enc,
                   compression=gcpf, on_eof=on_eof, non_ascii=non_ascii)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._data)} bytes at {self._pos}"
        return f"<FileAccess {self.get_path()!r} {self._mode!r} {state}, {self.dialect.name}>"

    # -- open, close -----------------------------------------------------------------------------

    def __enter__(self) -> FileAccess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None and self._mode == "w":
            self._closed = True  # a write that failed half-way leaves the old file as it was
            return
        self.close()

    def close(self) -> None:
        """Write the file (``"w"``): encrypted or compressed as the engine's ``close()`` does, atomically."""
        if self._closed:
            return
        self._closed = True
        if self._mode != "w":
            return
        out = bytes(self._data)
        if self.compression is not None:
            out = _compression.write_gcpf(out, self.compression)
        elif self.encryption is not None:
            out = write_gdec(out, self.encryption, key=self._key)
        if isinstance(self._file, (str, os.PathLike)):
            write_atomic(Path(self._file), out)
        else:
            self._file.write(out)

    def flush(self) -> None:
        """Nothing to do: the bytes reach the file at :meth:`close` (that is what makes the write atomic)."""

    def is_open(self) -> bool:
        return not self._closed

    def get_path(self) -> str:
        if isinstance(self._file, (str, os.PathLike)):
            return os.fspath(self._file)
        return str(getattr(self._file, "name", ""))

    # -- position --------------------------------------------------------------------------------

    def get_position(self) -> int:
        return self._pos

    def get_length(self) -> int:
        return len(self._data)

    def eof_reached(self) -> bool:
        """True once a read asked for more than was left (not merely at the end), as in the engine."""
        return self._eof

    def seek(self, position: int) -> None:
        """Move to ``position`` (past the end too: a write there fills the gap with zeros); clears eof."""
        if position < 0:
            raise ValueError(f"seek({position}): the position must not be negative")
        self._pos = position
        self._eof = False

    def seek_end(self, position: int = 0) -> None:
        """Move to ``position`` bytes from the end (0 or negative)."""
        self.seek(len(self._data) + position)

    # -- mode checks on the shared core -----------------------------------------------------------

    def _check(self, mode: ModeFlags, what: str) -> None:
        if self._closed:
            raise ValueError(f"{what}: the file is closed")
        if self._mode != mode:
            doing = "reading" if self._mode == "r" else "writing"
            raise io.UnsupportedOperation(f"{what}: the file is open for {doing}")

    def _read(self, n: int, what: str) -> bytes | None:
        self._check("r", what)
        return super()._read(n, what)

    def _write(self, data: Buffer) -> None:
        self._check("w", "store")
        super()._write(data)

    # -- store -----------------------------------------------------------------------------------

    def store_8(self, value: int) -> None:
        self._put_number("u8", value, "store_8")

    def store_16(self, value: int) -> None:
        self._put_number("u16", value, "store_16")

    def store_32(self, value: int) -> None:
        self._put_number("u32", value, "store_32")

    def store_64(self, value: int) -> None:
        self._put_number("u64", value, "store_64")

    def store_float(self, value: float) -> None:
        self._put_number("float", value, "store_float")

    def store_double(self, value: float) -> None:
        self._put_number("double", value, "store_double")

    def store_real(self, value: float) -> None:
        """``real_t``: float32, or float64 in a ``real_t=double`` dialect."""
        self._put_number("double" if self.dialect.real_is_double else "float", value, "store_real")

    def store_half(self, value: float) -> None:
        self._need_godot4("store_half")
        self._put_number("half", value, "store_half")

    def store_pascal_string(self, text: str) -> None:
        """A u32 byte length (``store_32``), then the UTF-8 bytes."""
        self._put_counted(self._utf8_bytes(text, "store_pascal_string"))

    def store_string(self, text: str) -> None:
        """The UTF-8 bytes, nothing else."""
        self._write(self._utf8_bytes(text, "store_string"))

    def store_line(self, line: str) -> None:
        self._write(self._utf8_bytes(line, "store_line") + b"\n")

    def store_csv_line(self, values: Iterable[str], delim: str = ",") -> None:
        """One line; a value holding a quote, the delimiter or ``\\n`` is quoted, its quotes doubled."""
        if not isinstance(delim, str) or len(delim) != 1:
            raise ValueError(f"store_csv_line: the delimiter must be one character, not {delim!r}")
        out = []
        for value in values:
            if '"' in value or delim in value or "\n" in value:
                value = '"' + value.replace('"', '""') + '"'
            out.append(value)
        self.store_line(delim.join(out))

    def store_var(self, value: Any, full_objects: bool = False) -> None:
        """A u32 length (``store_32``: ``big_endian`` applies), then ``var_to_bytes(value)`` (always little-endian)."""
        self._put_var(value, full_objects)

    def store_buffer(self, data: Buffer) -> None:
        self._write(memoryview(data).cast("B"))

    # -- get -------------------------------------------------------------------------------------

    def get_8(self) -> int:
        return int(self._get_number("u8", "get_8"))

    def get_16(self) -> int:
        return int(self._get_number("u16", "get_16"))

    def get_32(self) -> int:
        return int(self._get_number("u32", "get_32"))

    def get_64(self) -> int:
        """A Godot int: 2**63 and above come back negative, as in the engine."""
        return int(self._get_number("64", "get_64"))

    def get_float(self) -> float:
        return float(self._get_number("float", "get_float"))

    def get_double(self) -> float:
        return float(self._get_number("double", "get_double"))

    def get_real(self) -> float:
        return float(self._get_number("double" if self.dialect.real_is_double else "float", "get_real"))

    def get_half(self) -> float:
        self._need_godot4("get_half")
        return float(self._get_number("half", "get_half"))

    def get_pascal_string(self) -> str:
        got = self._get_counted("get_pascal_string", None)
        return "" if got is None else self._parse_utf8(got[0], got[1], "get_pascal_string")

    def get_var(self, allow_objects: bool = False) -> Any:
        return self._get_var(allow_objects, "get_var")

    def get_buffer(self, length: int) -> bytes:
        """``length`` bytes (see the class notes for a file that has fewer)."""
        if length < 0:
            raise ValueError(f"get_buffer({length}): the length must not be negative")
        start = self._pos
        got = self._read(length, "get_buffer")
        if got is not None:
            return got
        have = bytes(self._data[start:start + length]) if start < len(self._data) else b""
        return have + bytes(length - len(have)) if self._godot3 else have

    def get_line(self) -> str:
        """The next line, without its end; at the end of the file what is left (and eof is reached)."""
        self._check("r", "get_line")
        data, pos, end = self._data, self._pos, len(self._data)
        start = pos
        line = bytearray()
        godot4 = not self._godot3
        while True:
            if pos >= end:
                self._eof = True
                break
            c = data[pos]
            pos += 1
            if c == 0x0A or c == 0x00:
                break
            if c == 0x0D:
                if godot4:  # Godot 4 ends a line at \r, and reads \r\n as one end
                    if pos < end and data[pos] == 0x0A:
                        pos += 1
                    break
                continue  # Godot 3 drops every \r
            line.append(c)
        self._pos = pos
        return self._parse_utf8(bytes(line), start, "get_line")

    def get_csv_line(self, delim: str = ",") -> PackedStringArray:
        """The next CSV record, which may span lines inside quotes (the engine's own parser, per version)."""
        if not isinstance(delim, str) or len(delim) != 1:
            raise ValueError(f"get_csv_line: the delimiter must be one character, not {delim!r}")
        if delim == '"' and not self._godot3:
            raise ValueError("get_csv_line: Godot 4 does not take the double quote as a delimiter")
        self._check("r", "get_csv_line")
        line = ""
        while not self._eof:
            line += self.get_line() + "\n"
            if line.count('"') % 2 == 0:
                break
        line = line[:-1]
        fields: list[str] = []
        current: list[str] = []
        in_quote = False
        i = 0
        while i < len(line):
            c = line[i]
            if not in_quote and c == delim:
                fields.append("".join(current))
                current = []
            elif c == '"':
                # Godot 4 reads "" as a quote inside quotes only; Godot 3 anywhere.
                if line[i + 1:i + 2] == '"' and (in_quote or self._godot3):
                    current.append('"')
                    i += 1
                else:
                    in_quote = not in_quote
            else:
                current.append(c)
            i += 1
        fields.append("".join(current))
        return PackedStringArray(fields)

    def get_as_text(self, skip_cr: bool = False) -> str:
        """The whole file as text; the position is kept and eof cleared (the engine seeks back).

        Godot 4: the UTF-8 of every byte (a leading BOM skipped, up to a NUL; ``skip_cr``
        drops ``\\r``).  Godot 3: its lines (``get_line``, so without ``\\r``, a NUL ending a
        line) joined with ``\\n``.
        """
        self._check("r", "get_as_text")
        if not self._godot3:
            text = self._parse_utf8(bytes(self._data), 0, "get_as_text")
            return text.replace("\r", "") if skip_cr else text
        original = self._pos
        self.seek(0)
        parts = []
        line = self.get_line()
        while not self._eof:
            parts.append(line)
            line = self.get_line()
        parts.append(line)
        self.seek(original)
        return "\n".join(parts)


def _key(password: str | None, key: Buffer | None) -> bytes | None:
    """The AES key of ``open_encrypted_with_pass`` / ``open_encrypted``, checked when the file is opened."""
    if password is not None:
        from ..layers.encryption import key_from_password
        return key_from_password(password)
    if key is None:
        return None
    raw = bytes(memoryview(key).cast("B"))
    if len(raw) != KEY_SIZE:
        raise InvalidKeyError(f"a key is {KEY_SIZE} bytes (AES-256), not {len(raw)}")
    return raw


def _gcpf_info(compression: int | _compression.GcpfInfo | None, mode: ModeFlags) -> _compression.GcpfInfo | None:
    if compression is None or isinstance(compression, _compression.GcpfInfo):
        info = compression
    elif isinstance(compression, bool) or not isinstance(compression, int):
        raise TypeError(f"compression is a COMPRESSION_* mode or a GcpfInfo, not {compression!r}")
    else:
        info = _compression.GcpfInfo(mode=compression)
    if info is not None and mode == "w" and not _compression.mode_info(info.mode).engine_writes:
        raise ValueError(f"Godot cannot write {info.mode_name} files (it only reads them)")
    return info
