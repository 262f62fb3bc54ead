"""Binary project settings (magic ``ECFG``): ``project.binary`` (Godot 3, 4) and ``engine.cfb`` (Godot 2).

Exported games carry their settings in this form, and ``ProjectSettings.save_custom("x.binary")``
writes it.  The layout (``_save_settings_binary`` / ``_load_settings_binary`` in every engine)::

    "ECFG"  u32 entry count
    per entry: u32 key length, key (UTF-8, no NUL, no padding),
               u32 value length, value = encode_variant(value, full_objects=true)

The values use full objects (input actions hold ``InputEventKey`` objects and the like);
they are read with ``allow_objects=True`` by default, as the engine does, and stay inert
data.  A value field may hold bytes after its Variant that the engine skips, and a Godot
2.1.1 file leaves padding bytes unwritten: so :func:`read_ecfg` keeps every entry's value
bytes in :class:`EcfgInfo`, and :func:`write_ecfg` writes a value that did not change with
the bytes it was read from.  Reading a file and writing it back is the same bytes.

**The key-length bug before Godot 3.3.3** (fixed by godot#49649): the engine wrote each key's
length in *characters* but its bytes as UTF-8, so a file with a non-ASCII key cannot be read
by any engine.  :func:`read_ecfg` recovers such a file (it is tried a second time with the
lengths taken as characters, if the first reading fails) and says so in
``EcfgInfo.key_length_bug``; :func:`write_ecfg` writes correct lengths unless asked to
reproduce the bug.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import attrs

from ..core.codec import Decoder, encoder_for
from ..core.dialects import Dialect, get_dialect
from ..core.errors import DecodeError, EncodeError, quoted
from ..core.limits import MAX_FILE_SIZE

__all__ = ["EcfgInfo", "read_ecfg", "write_ecfg", "MAGIC"]

MAGIC = b"ECFG"
_u32 = struct.Struct("<I")
_HEAD = struct.Struct("<4sI")


def _str_tuple(values: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in values)


def _int_tuple(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


@attrs.frozen
class EcfgInfo:
    """What a project settings file held besides the settings: enough to write it back exactly.

    ``keys`` are the entries in file order and ``value_bytes`` their value fields back to
    back (``value_sizes`` each), as read: what :func:`write_ecfg` writes for a setting whose
    value did not change, so odd encodings survive (slack after a Variant, the unwritten
    padding of Godot 2.1.1, an int written 64-bit).  They were read in ``dialect``; written
    in another, every value is encoded afresh.  ``key_length_bug``: the key lengths count
    characters, not bytes (Godot before 3.3.3, only visible with a non-ASCII key).
    ``trailing``: bytes after the last entry, which the engine never reads.

    Every field is a string, a number, a flat list or ``bytes``, so the description
    travels as JSON (``SaveFile.header``).
    """

    dialect: str = ""
    keys: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    value_sizes: tuple[int, ...] = attrs.field(default=(), converter=_int_tuple)
    value_bytes: bytes = attrs.field(default=b"", converter=bytes)
    key_length_bug: bool = attrs.field(default=False, converter=bool)
    trailing: bytes = attrs.field(default=b"", converter=bytes)

    def __attrs_post_init__(self) -> None:
        # An info rebuilt from JSON must still describe value fields that exist.
        if len(self.value_sizes) != len(self.keys) or any(n < 0 for n in self.value_sizes) \
                or sum(self.value_sizes) != len(self.value_bytes):
            raise ValueError("EcfgInfo: value_sizes must give one size per key, adding up to value_bytes")

    def original_values(self) -> dict[str, bytes]:
        """Each key's value field as it was in the file (a repeated key: its last, which the engine keeps)."""
        out: dict[str, bytes] = {}
        pos = 0
        for key, n in zip(self.keys, self.value_sizes):
            out[key] = self.value_bytes[pos:pos + n]
            pos += n
        return out


def read_ecfg(
    data: bytes | bytearray | memoryview,
    dialect: str | Dialect,
    *,
    allow_objects: bool = True,
    max_size: int = MAX_FILE_SIZE,
    strict: bool = False,
) -> tuple[dict[str, Any], EcfgInfo]:
    """The settings of an ``ECFG`` file (name -> value, in file order), and its :class:`EcfgInfo`.

    ``dialect`` is the Variant dialect of the values (``godot2`` for an ``engine.cfb``).
    ``allow_objects`` (default True, as the engine loads them) lets full Objects through
    as inert :class:`~godot_formats.types.Object` data.  A key given twice keeps its last
    value, as in the engine.

    Raises :class:`DecodeError` naming the byte offset and the entry: the magic, a count
    or length that the bytes left cannot hold (checked before anything is allocated), a
    key that is not UTF-8, a value that does not decode.  The engine skips an entry whose
    value does not decode; here the whole file is refused, since writing it back would
    lose that entry.

    ``strict=True`` also refuses bytes after a Variant inside its value field.  The engine
    skips them, but never writes any: so when the dialect is not known, a dialect that
    leaves some is the wrong one (Godot 4 "reads" a Godot 2 ``engine.cfb`` that way, taking
    an Array header for a StringName and skipping the rest).
    """
    d = get_dialect(dialect)
    size = memoryview(data).nbytes
    if size > max_size:  # before the copy below
        raise DecodeError(0, f"{size} bytes of input exceed max_size={max_size}")
    buf = bytes(data)
    if len(buf) < 8:
        raise DecodeError(0, f"an ECFG file starts with 8 bytes (magic and entry count), {len(buf)} given")
    magic, count = _HEAD.unpack_from(buf, 0)
    if magic != MAGIC:
        raise DecodeError(0, f"not a binary project settings file: magic {magic!r}, expected {MAGIC!r}")
    if count * 8 > len(buf) - 8:  # each entry has at least its two lengths
        raise DecodeError(4, f"entry count {count} needs at least {count * 8} bytes, {len(buf) - 8} left")
    decoder = Decoder(d, allow_objects=allow_objects, max_size=max_size)
    try:
        return _read_entries(buf, count, d, decoder, False, strict)
    except DecodeError as first:
        if buf.isascii():  # lengths in characters and in bytes are the same: nothing else to try
            raise
        try:
            return _read_entries(buf, count, d, decoder, True, strict)
        except DecodeError:
            raise first from None


def _read_entries(buf: bytes, count: int, d: Dialect, decoder: Decoder, in_characters: bool,
                  strict: bool) -> tuple[dict[str, Any], EcfgInfo]:
    end = len(buf)
    pos = 8
    settings: dict[str, Any] = {}
    keys: list[str] = []
    sizes: list[int] = []
    fields: list[bytes] = []
    bug = False
    for i in range(count):
        if end - pos < 4:
            raise DecodeError(pos, f"entry {i}: key length needs 4 bytes, {end - pos} left")
        n = _u32.unpack_from(buf, pos)[0]
        pos += 4
        if n > end - pos:
            raise DecodeError(pos - 4, f"entry {i}: key length {n} runs past the end: {end - pos} byte(s) left")
        size = _utf8_size(buf, pos, end, n) if in_characters else n
        if size is None:
            raise DecodeError(pos - 4, f"entry {i}: key of {n} characters runs past the end")
        try:
            key = buf[pos:pos + size].decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(pos + e.start, f"entry {i}: key is not UTF-8 ({e.reason})") from None
        bug = bug or size != n
        pos += size
        if end - pos < 4:
            raise DecodeError(pos, f"entry {i} ({quoted(key)}): value length needs 4 bytes, {end - pos} left")
        vlen = _u32.unpack_from(buf, pos)[0]
        pos += 4
        if vlen > end - pos:
            raise DecodeError(pos - 4, f"entry {i} ({quoted(key)}): value length {vlen} runs past the end: "
                                       f"{end - pos} byte(s) left")
        try:
            value, value_end = decoder.decode(buf, pos, pos + vlen)  # bytes after it: skipped, as by the engine
        except DecodeError as e:
            raise DecodeError(e.offset, **e.reason_in(f"entry {i} ({quoted(key)}): ")) from None
        if strict and value_end != pos + vlen:
            raise DecodeError(value_end, f"entry {i} ({quoted(key)}): {pos + vlen - value_end} byte(s) after the value "
                                         f"inside its {vlen}-byte field (strict)")
        settings.pop(key, None)  # a repeated key: the last value, in the last place
        settings[key] = value
        keys.append(key)
        sizes.append(vlen)
        fields.append(buf[pos:pos + vlen])
        pos += vlen
    info = EcfgInfo(d.name, tuple(keys), tuple(sizes), b"".join(fields), bug, buf[pos:])
    return settings, info


def _utf8_size(buf: bytes, pos: int, end: int, characters: int) -> int | None:
    """How many bytes from ``pos`` hold ``characters`` UTF-8 characters (None: the bytes end first).

    A character starts at every byte that is not a continuation byte (10xxxxxx), and
    valid UTF-8 has at most 4 bytes per character, so this reads no further; the text
    is checked as UTF-8 afterwards.
    """
    limit = min(end, pos + 4 * characters)
    seen = 0
    for j in range(pos, limit):
        if buf[j] & 0xC0 != 0x80:
            if seen == characters:
                return j - pos
            seen += 1
    return limit - pos if seen == characters else None


def write_ecfg(
    settings: Mapping[str, Any],
    info: EcfgInfo | None = None,
    dialect: str | Dialect = "godot4",
    *,
    key_length_bug: bool = False,
) -> bytes:
    """The ``ECFG`` bytes of ``settings`` (in the mapping's order), values with full objects.

    With the ``info`` of the file they were read from (same dialect), a setting whose value
    is unchanged is written with its original bytes, and the bytes after the last entry are
    kept: a file read and written back is the same bytes.  A changed or new value is
    encoded as the engine does (``encode_variant(value, full_objects=true)``).  The engine
    itself orders entries by section name, then registration order; ``read_ecfg`` gives
    the file's order, and new keys go where the mapping puts them.

    Key lengths are byte lengths (Godot 3.3.3 and later, and every engine reads them);
    ``key_length_bug=True`` writes them in characters as Godot 3.0-3.3.2 did, to
    reproduce such a file exactly (the engines cannot read one with a non-ASCII key).
    Raises :class:`EncodeError` (with the setting's name as path) for a value the
    dialect cannot hold.
    """
    d = get_dialect(dialect)
    encoder = encoder_for(d, True)
    same_dialect = info is not None and info.dialect == d.name
    originals = info.original_values() if info is not None and same_dialect else {}
    decoder = Decoder(d, allow_objects=True) if originals else None
    out = bytearray(_HEAD.pack(MAGIC, len(settings)))
    for key, value in settings.items():
        if not isinstance(key, str):
            raise EncodeError(f"a setting name is a String, not {type(key).__name__}", repr(key))
        try:
            raw_key = key.encode("utf-8", "surrogatepass" if d.utf8_surrogates else "strict")
        except UnicodeEncodeError:
            raise EncodeError("setting name has an unpaired surrogate", repr(key)) from None
        try:
            blob = encoder.encode(value)
        except EncodeError as e:
            raise EncodeError(path=f"[{quoted(key)}]{e.path}", **e.reason_in()) from None
        original = originals.get(key)
        if original is not None and decoder is not None and _unchanged(blob, original, decoder, encoder):
            blob = original
        out += _u32.pack(len(key) if key_length_bug else len(raw_key))
        out += raw_key
        out += _u32.pack(len(blob))
        out += blob
    if same_dialect and info is not None:
        out += info.trailing
    return bytes(out)


def _unchanged(blob: bytes, original: bytes, decoder: Decoder, encoder: Any) -> bool:
    """Whether ``blob`` (the new value, encoded) is the value the original field holds.

    Compared as the dialect encodes both, so an original written another way (slack,
    unwritten padding, a 64-bit small int) still counts as unchanged.
    """
    if original == blob:
        return True
    try:
        value, _ = decoder.decode(original)
        return bool(encoder.encode(value) == blob)
    except (DecodeError, EncodeError):
        return False
