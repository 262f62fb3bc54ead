"""Save files as games write them: the layers around the Variants, peeled off and put back.

A file is read from the outside in, the way ``tarfile.open`` reads a ``.tar.gz``:

1. the **container**: an encrypted file (``GDEC``, :mod:`godot_formats.encryption`), a
   compressed file (``GCPF``, :mod:`godot_formats.compression`), project settings
   (``ECFG``, :mod:`godot_formats.project_settings`), ``Marshalls.variant_to_base64``
   text, or none;
2. the **framing** of what is inside: ``store_var`` records (a u32 length, little-endian,
   or big-endian after ``File.endian_swap``/``FileAccess.big_endian``, then the Variant,
   then possibly bytes the engine skips), or one bare ``var_to_bytes`` value;
3. the **dialect** of the Variants, detected or given.

:func:`open` returns a :class:`SaveFile` whose ``values`` are the records and whose
other fields name each layer.  :meth:`SaveFile.save` puts the layers back: a file
saved without a change is the same bytes, and a file saved in another dialect migrates
its layers too (a Godot 3 encrypted save becomes a Godot 4 encrypted save with the same
password).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Union

import attrs

from .base64form import sniff_base64
from .codec import DEFAULT_MAX_DEPTH, decoder_for, encoder_for
from .conversion import convert_value
from .detection import PRIOR, UNLISTED_ENGINES, detect
from .dialects import Dialect, get_dialect
from .errors import DecodeError, EncodeError, Loss
from .files import write_atomic
from .framing import PREFIX_SIZE, Frame, FramingError, join_frames, scan_frames
from .keys import same_value

__all__ = ["SaveFile", "Record", "open", "AmbiguousDialectError", "DEFAULT_MAX_FILE_SIZE"]

#: The largest plaintext (after decryption and decompression) a file may hold unless the
#: caller says otherwise: decompression bombs stop here.
DEFAULT_MAX_FILE_SIZE = 1 << 30

FileLike = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]


class AmbiguousDialectError(DecodeError):
    """Several engine versions read the file completely, as different values: the caller must choose."""

    def __init__(self, candidates: Sequence[str]) -> None:
        self.candidates = list(candidates)
        super().__init__(0, f"ambiguous: {' and '.join(self.candidates)} each read this file completely, as "
                            f"different values; choose one with dialect= (--dialect on the command line)")


@attrs.define
class Record:
    """One ``store_var`` record as read: where it was, and its bytes, for an exact rewrite."""

    offset: int  # of its length prefix, in the plaintext
    payload: bytes  # the frame's bytes after the prefix: the Variant and any slack
    value_end: int  # where the Variant ends inside ``payload``; the rest is slack the engine skips


@attrs.define(eq=False)
class SaveFile:
    """A save file: its values, and every layer that was around them.

    ``values``: the records in file order (for project settings, one mapping of setting
    name to value).  ``container``: ``"store_var"``, ``"var_to_bytes"`` (one bare
    value), ``"project_settings"``, ``"base64"``, or ``"text"`` (the ``ConfigFile`` text of
    ``ConfigFile.save_encrypted_pass``: one ``str``).  ``encryption`` and ``compression``
    hold the layer's own description (:class:`~godot_formats.encryption.GdecInfo`,
    :class:`~godot_formats.compression.GcpfInfo`) or None.  ``byteorder`` is that of the
    ``store_var`` length prefixes.
    """

    values: list[Any]
    dialect: Dialect
    container: str
    byteorder: str = "little"
    encryption: Any = None
    compression: Any = None
    settings_info: Any = None
    allow_objects: bool = False
    path: Path | None = None
    damage: DecodeError | None = None  # what ended a salvaged file
    _raw: bytes = b""
    _plaintext: bytes = b""
    _records: list[Record] = attrs.field(factory=list)
    _key: bytes | None = None
    _plaintext_md5: str | None = None  # from a header: the plaintext its IV was used for

    # -- describing -------------------------------------------------------------------

    @property
    def layers(self) -> dict[str, Any]:
        """Every layer, outside in, as plain data (what the JSON and text views record)."""
        out: dict[str, Any] = {"container": self.container, "dialect": self.dialect.name}
        if self.container == "store_var":
            out["byteorder"] = self.byteorder
            out["records"] = len(self.values)
        if self.encryption is not None:
            out["encryption"] = f"godot{self.encryption.version}"
        if self.compression is not None:
            out["compression"] = self.compression.mode_name
        return out

    def header(self) -> dict[str, Any]:
        """Everything but the values that :meth:`from_header` needs to write this file again:
        the layers with their parameters (a Godot 4 IV, a gzip OS byte) and each record's
        slack.  JSON-ready; the key or password is never part of it."""
        out: dict[str, Any] = {"godot_formats_save": 1, "container": self.container,
                               "dialect": self.dialect.name, "byteorder": self.byteorder}
        out["plaintext_md5"] = hashlib.md5(self._plaintext).hexdigest()  # "the same bytes as before?"
        if self.encryption is not None:
            out["encryption"] = _info_to_json(self.encryption)
        if self.compression is not None:
            out["compression"] = _info_to_json(self.compression)
            if isinstance(self.compression, BareStream):
                out["compression"]["bare"] = True
            elif self._raw and self.encryption is None and not self._rewraps_exactly():
                # Compressed by another library version than ours (Godot 3.2.3's older zstd), or in a mode
                # only read here (Brotli): the file's own bytes, given back while the plaintext is unchanged.
                out["compression"]["as_read"] = base64.b64encode(self._raw).decode("ascii")
        if self.settings_info is not None:
            out["settings"] = _info_to_json(self.settings_info)
        slack = [r.payload[r.value_end:].hex() for r in self._records] if self.container == "store_var" else []
        if any(slack):
            out["slack"] = slack
        return out

    def _rewraps_exactly(self) -> bool:
        try:
            return self._wrap(self._plaintext, self.dialect, None, None) == self._raw
        except EncodeError:
            return False

    @classmethod
    def from_header(cls, header: dict[str, Any], values: list[Any], *, password: str | None = None,
                    key: bytes | None = None, allow_objects: bool = False) -> SaveFile:
        """A save file to write ``values`` with the layers a :meth:`header` describes.

        Values equal to what a record held keep that record's slack; the IV of a Godot 4
        file is kept only if the plaintext is the same bytes (it never encrypts two
        plaintexts).
        """
        if not isinstance(header, dict) or header.get("godot_formats_save") != 1:
            raise DecodeError(0, "not a godot-formats save header")
        try:
            d = get_dialect(header["dialect"])
            container = header["container"]
            if container not in ("store_var", "var_to_bytes", "project_settings", "base64", "text"):
                raise ValueError(f"unknown container {container!r}")
            encryption = compression = settings = None
            raw = b""
            md5 = header.get("plaintext_md5")
            if md5 is not None and not isinstance(md5, str):
                raise ValueError("plaintext_md5 is hex text")
            if "encryption" in header:
                from .encryption import GdecInfo
                encryption = _info_from_json(GdecInfo, header["encryption"])
            if "compression" in header:
                from .compression import GcpfInfo
                layer: Any = BareStream if header["compression"].get("bare") else GcpfInfo
                compression = _info_from_json(layer, header["compression"])
                as_read = header["compression"].get("as_read")
                raw = base64.b64decode(as_read, validate=True) if isinstance(as_read, str) else b""
            if "settings" in header:
                from .project_settings import EcfgInfo
                settings = _info_from_json(EcfgInfo, header["settings"])
            byteorder = header.get("byteorder", "little")
            if byteorder not in ("little", "big"):
                raise ValueError(f"byteorder {byteorder!r}")
            slack = [bytes.fromhex(h) for h in header.get("slack", [])]
        except (KeyError, ValueError, TypeError, binascii.Error) as e:
            raise DecodeError(0, f"a save header that cannot be used: {e}") from None
        encoder = encoder_for(d, allow_objects)
        records = []
        for i, v in enumerate(values if container == "store_var" else []):
            extra = slack[i] if i < len(slack) else b""
            try:
                blob = encoder.encode(v)
            except EncodeError:
                blob = b""
            records.append(Record(0, blob + extra, len(blob)))
        use_key = key
        if use_key is None and password is not None:
            from .encryption import key_from_password
            use_key = key_from_password(password)
        sf = cls(list(values), d, container, byteorder=byteorder, encryption=encryption, compression=compression,
                 settings_info=settings, allow_objects=allow_objects, records=records, key=use_key,
                 plaintext_md5=md5, raw=raw)
        return sf

    # -- writing ------------------------------------------------------------------------

    def to_bytes(self, *, dialect: str | Dialect | None = None, password: str | None = None,
                 key: bytes | None = None, policy: str = "strict") -> tuple[bytes, list[Loss]]:
        """The file's bytes with the current values, and every change a dialect conversion made.

        Unchanged values in the same dialect keep their original bytes (slack included), and
        an unchanged plaintext gives back the original file exactly.  In another dialect the
        values are converted (``policy`` as in :func:`godot_formats.convert_value`) and the
        layers migrate: an encrypted file is encrypted for the target engine with the same
        key (a fresh IV for Godot 4), a compressed one stays compressed in the same mode.
        """
        target = self.dialect if dialect is None else get_dialect(dialect)
        losses: list[Loss] = []
        values = self.values
        if target != self.dialect:
            converted = []
            for i, v in enumerate(values):
                new, lost = convert_value(v, self.dialect, target, policy=policy)
                converted.append(new)
                losses += [attrs.evolve(loss, path=_record_path(i, len(values)) + loss.path) for loss in lost]
            values = converted
        plaintext = self._plaintext_of(values, target)
        same = plaintext == self._plaintext or (
            self._plaintext_md5 is not None and hashlib.md5(plaintext).hexdigest() == self._plaintext_md5)
        if self._raw and same and target == self.dialect and password is None and key is None:
            return self._raw, losses
        return self._wrap(plaintext, target, password, key), losses

    def save(self, file: FileLike | None = None, *, dialect: str | Dialect | None = None,
             password: str | None = None, key: bytes | None = None, policy: str = "strict",
             overwrite: bool = False) -> list[Loss]:
        """Write the file (atomically) to ``file``, or back where it was read from.

        An existing file other than the one this was read from is only replaced with
        ``overwrite=True``.  Returns the changes a dialect conversion made (see :meth:`to_bytes`).
        """
        data, losses = self.to_bytes(dialect=dialect, password=password, key=key, policy=policy)
        if file is None:
            if self.path is None:
                raise ValueError("this save file was not read from a path: give save() a file")
            file = self.path
        elif isinstance(file, (str, os.PathLike)) and Path(file).exists() and not overwrite and not (
                self.path is not None and Path(file).resolve() == self.path.resolve()):
            raise FileExistsError(17, "exists; pass overwrite=True to replace it", str(file))
        if isinstance(file, (str, os.PathLike)):
            write_atomic(Path(file), data)
        elif hasattr(file, "write"):
            file.write(data)
        else:
            raise TypeError("save() writes to a path or a binary file object")
        return losses

    def _plaintext_of(self, values: list[Any], target: Dialect) -> bytes:
        if self.container == "project_settings":
            from .project_settings import write_ecfg
            # A file of Godot 3.2.3's key-length bug (unreadable by that engine itself) comes back as it
            # was when nothing changed; written anew, it is fixed.
            info = self.settings_info
            if info.key_length_bug and target == self.dialect:
                as_read = write_ecfg(values[0], info, target, key_length_bug=True)
                if as_read == self._plaintext or hashlib.md5(as_read).hexdigest() == self._plaintext_md5:
                    return as_read
            return write_ecfg(values[0], info, target)
        if self.container == "text":
            return str(values[0]).encode("utf-8")
        encoder = encoder_for(target, self.allow_objects, DEFAULT_MAX_DEPTH)
        blobs = []
        for i, v in enumerate(values):
            try:
                blob = encoder.encode(v)
            except EncodeError as e:
                raise EncodeError(e.reason, _record_path(i, len(values)) + e.path) from None
            if i < len(self._records) and target == self.dialect:
                record = self._records[i]
                if record.payload[:record.value_end] == blob:
                    blob = record.payload  # unchanged: its slack too
            blobs.append(blob)
        if self.container == "store_var":
            return join_frames(blobs, self.byteorder)
        if self.container == "base64":
            return base64.b64encode(blobs[0])
        return blobs[0]

    def _wrap(self, plaintext: bytes, target: Dialect, password: str | None, key: bytes | None) -> bytes:
        data = plaintext
        if isinstance(self.compression, BareStream):
            from .compression import compress
            data = compress(data, self.compression.mode)
        elif self.compression is not None:
            from .compression import write_gcpf
            data = write_gcpf(data, self.compression)
        if self.encryption is not None:
            from .encryption import GdecInfo, key_from_password, write_gdec
            use_key = key if key is not None else key_from_password(password) if password is not None else self._key
            if use_key is None:
                raise EncodeError("the file is encrypted: give the password or key to write it")
            version = 3 if target.major <= 3 else 4
            info = self.encryption
            same = plaintext == self._plaintext or hashlib.md5(plaintext).hexdigest() == self._plaintext_md5
            if info.version != version:
                info = GdecInfo.for_version(version)  # the target engine's layout, a fresh IV
            elif not same and info.iv is not None:
                info = attrs.evolve(info, iv=None)  # a fresh IV: never one IV for two plaintexts
            data = write_gdec(data, info, key=use_key)
        return data


def _info_to_json(info: Any) -> dict[str, Any]:
    """A layer's attrs description as JSON: bytes as hex strings."""
    out: dict[str, Any] = {}
    for field in attrs.fields(type(info)):
        v = getattr(info, field.name)
        out[field.name] = v.hex() if isinstance(v, (bytes, bytearray)) else v
    return out


def _info_from_json(cls: Any, data: dict[str, Any]) -> Any:
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__} is described by an object")
    kwargs = {}
    for field in attrs.fields(cls):
        if field.name in data:
            v = data[field.name]
            kwargs[field.name] = bytes.fromhex(v) if isinstance(v, str) and "bytes" in str(field.type) else v
    return cls(**kwargs)


def _record_path(i: int, n: int) -> str:
    return f"<record {i + 1} of {n}>" if n > 1 else ""


# -- reading -----------------------------------------------------------------------------

def _read_all(file: FileLike) -> tuple[bytes, Path | None]:
    if isinstance(file, (bytes, bytearray, memoryview)):
        return bytes(file), None
    if isinstance(file, (str, os.PathLike)):
        path = Path(file)
        return path.read_bytes(), path
    if hasattr(file, "read"):
        data = file.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("open() needs a binary file object")
        return bytes(data), None
    raise TypeError(f"open() reads a path, bytes or a binary file object, not {type(file).__name__}")


def open(file: FileLike, *, password: str | None = None, key: bytes | None = None,
         dialect: str | Dialect | None = None, allow_objects: bool = False,
         max_size: int = DEFAULT_MAX_FILE_SIZE, salvage: bool = False,
         compressed: str | int | None = None) -> SaveFile:
    """Open a save file of any engine version and layer; see the module docstring.

    ``password`` or ``key`` (32 bytes) opens an encrypted file.  ``dialect`` skips
    detection; without it an ambiguous file raises :class:`AmbiguousDialectError`.
    ``salvage`` keeps every intact record of a damaged ``store_var`` file and records
    what ended it in ``damage``, instead of raising.  ``compressed`` names the mode
    (``"deflate"``, ``2`` ...) of a bare ``PackedByteArray.compress`` stream, which has
    no header to recognise it by.  Every failure is a
    :class:`~godot_formats.DecodeError` naming the offset (in the file, or in the
    decrypted/decompressed data, as the message says).
    """
    raw, path = _read_all(file)
    data = raw
    encryption: Any = None
    compression: Any = None
    use_key = None
    decrypted = decrypt_layer(raw, password=password, key=key, max_size=max_size)
    decompressed = decompress_layer(raw, max_size=max_size) if decrypted is None else None
    if decrypted is not None:
        data, encryption, use_key = decrypted
    elif decompressed is not None:
        data, compression = decompressed
    elif compressed is not None:
        from .compression import decompress
        mode = _mode_id(compressed)
        data = decompress(raw, mode, max_size=max_size)
        compression = BareStream(mode)
    if data[:4] == b"ECFG":
        return _open_settings(raw, data, path, dialect, encryption, compression, use_key, max_size)
    container = "store_var"
    base64_text = sniff_base64(data)
    if base64_text is not None:
        data, container = base64_text, "base64"
    return _open_variants(raw, data, path, container, dialect, allow_objects, encryption, compression, use_key,
                          salvage)


#: The magics of the two layers Godot's FileAccess puts around a file (``CEDG``: a Godot 3
#: header written after ``endian_swap``; ``RSCC``: a compressed resource, same layout).
GDEC_MAGICS = (b"GDEC", b"CEDG")
GCPF_MAGICS = (b"GCPF", b"RSCC")


def decrypt_layer(data: bytes, *, password: str | None = None, key: bytes | None = None,
                  max_size: int = DEFAULT_MAX_FILE_SIZE) -> tuple[bytes, Any, bytes | None] | None:
    """The plaintext, :class:`~godot_formats.encryption.GdecInfo` and key of an encrypted file,
    or None when ``data`` is not one.  Shared by :func:`open` and the command line."""
    if bytes(data[:4]) not in GDEC_MAGICS:
        return None
    from .encryption import key_from_password, read_gdec
    use_key = key if key is not None else key_from_password(password) if password is not None else None
    plaintext, info = read_gdec(data, key=use_key, max_size=max_size)
    return plaintext, info, use_key


def decompress_layer(data: bytes, *, max_size: int = DEFAULT_MAX_FILE_SIZE) -> tuple[bytes, Any] | None:
    """The contents and :class:`~godot_formats.compression.GcpfInfo` of a compressed file, or None
    when ``data`` is not one.  Shared by :func:`open` and the command line."""
    if bytes(data[:4]) not in GCPF_MAGICS:
        return None
    from .compression import read_gcpf
    return read_gcpf(data, max_size=max_size)


@attrs.frozen
class BareStream:
    """The layer of a bare ``PackedByteArray.compress(mode)`` stream: one stream, no header."""

    mode: int

    @property
    def mode_name(self) -> str:
        from .compression import mode_info
        return f"{mode_info(self.mode).name} (bare stream)"


def _mode_id(mode: str | int) -> int:
    from .compression import MODES
    for m in MODES:
        names = (m.name.lower(), f"compression_{m.name}".lower())
        if mode == m.id or (isinstance(mode, str) and mode.lower() in names):
            return m.id
    raise ValueError(f"unknown compression mode {mode!r}; one of {', '.join(m.name for m in MODES)}")


def _records(data: bytes, frames: list[Frame]) -> list[Record]:
    return [Record(pos, data[pos + PREFIX_SIZE:pos + PREFIX_SIZE + size], size) for pos, size in frames]


def _frames(data: bytes, byteorder: str) -> list[Record] | None:
    """The records when ``store_var`` frames tile ``data`` exactly, else None."""
    frames, broken = scan_frames(data, byteorder)
    return None if broken is not None else _records(data, frames)


def _damage(data: bytes, byteorder: str) -> tuple[list[Record], FramingError]:
    """Where ``store_var`` framing breaks: the intact records before it, and the cause."""
    frames, broken = scan_frames(data, byteorder)
    assert broken is not None, "only asked about data whose frames do not tile it"
    return _records(data, frames), broken


@attrs.frozen
class _Opening:
    """What one :func:`open` knows besides the records: the layers every SaveFile it returns carries."""

    raw: bytes
    data: bytes
    path: Path | None
    dialect: str | Dialect | None
    allow_objects: bool
    encryption: Any
    compression: Any
    use_key: bytes | None

    @property
    def prefer(self) -> int | None:
        """The container's own engine version: an encrypted file says which engine wrote it."""
        return self.encryption.version if self.encryption is not None else None

    def layers_only(self, values: list[Any], container: str) -> SaveFile:
        """A file whose layers hold no Variant (nothing, or ``ConfigFile`` text): its dialect is the container's."""
        d = get_dialect(self.dialect) if self.dialect is not None else get_dialect(f"godot{self.prefer or 4}")
        return SaveFile(values, d, container, encryption=self.encryption, compression=self.compression,
                        path=self.path, raw=self.raw, plaintext=self.data, key=self.use_key)

    def one_value(self, bare: tuple[Dialect, Any, int], container: str) -> SaveFile:
        d, value, end = bare
        return SaveFile([value], d, container, encryption=self.encryption, compression=self.compression,
                        allow_objects=self.allow_objects, path=self.path, raw=self.raw, plaintext=self.data,
                        records=[Record(0, self.data, end)], key=self.use_key)


def _open_variants(raw: bytes, data: bytes, path: Path | None, container: str, dialect: str | Dialect | None,
                   allow_objects: bool, encryption: Any, compression: Any, use_key: bytes | None,
                   salvage: bool) -> SaveFile:
    at = _Opening(raw, data, path, dialect, allow_objects, encryption, compression, use_key)
    early = _open_without_records(at)
    if early is not None:
        return early
    records, byteorder = _framing_of(data, container)
    damage = None
    if records is None:
        bare = _bare_value(data, dialect, allow_objects)
        if bare is not None:
            return at.one_value(bare, container if container == "base64" else "var_to_bytes")
        records, damage = _intact_records(data, container, salvage)
    return _open_records(at, records, byteorder, damage, container)


def _open_without_records(at: _Opening) -> SaveFile | None:
    """The files that are not ``store_var`` records: an empty container, ``ConfigFile`` text, a bare stream."""
    layered = at.encryption is not None or at.compression is not None
    if not at.data and layered:
        # Opened for writing and closed: a container of nothing, no record in it.
        return at.layers_only([], "store_var")
    text = _config_text(at.data) if layered else None
    if text is not None:
        return at.layers_only([text], "text")
    if isinstance(at.compression, BareStream):
        # One var_to_bytes value; FastLZ gives at least 16 bytes (the engine pads shorter input), so bytes
        # after the value are the padding: read as the engine's decompress(buffer_size) would.
        bare = _bare_value(at.data, at.dialect, at.allow_objects, trailing=True)
        if bare is None:
            raise DecodeError(0, "the decompressed stream holds no value in any engine version")
        return at.one_value(bare, "var_to_bytes")
    return None


def _framing_of(data: bytes, container: str) -> tuple[list[Record] | None, str]:
    """The records and their byte order, when ``store_var`` frames tile the data in either order."""
    if container != "base64":  # base64 text holds one var_to_bytes value
        for byteorder in ("little", "big"):
            records = _frames(data, byteorder)
            if records is not None:
                return records, byteorder
    return None, "little"


def _intact_records(data: bytes, container: str, salvage: bool) -> tuple[list[Record], FramingError]:
    """A damaged file's records before the damage, when ``salvage`` asks for them; else the error."""
    if container == "base64":
        raise DecodeError(0, "base64 text that holds no complete value")
    intact, damage = _damage(data, "little")
    if intact and salvage:
        return intact, damage
    if intact:
        raise FramingError(damage.offset, f"{damage.reason}; records 1 to {len(intact)} are intact "
                                          "(salvage=True, --salvage on the command line, keeps them)")
    raise damage


def _open_records(at: _Opening, records: list[Record], byteorder: str, damage: FramingError | None,
                  container: str) -> SaveFile:
    try:
        chosen = _choose_dialect([r.payload for r in records], at.dialect, at.allow_objects, at.prefer)
    except AmbiguousDialectError:
        raise
    except DecodeError:
        bare = None if damage is not None else _bare_value(at.data, at.dialect, at.allow_objects)
        if bare is None:
            raise
        return at.one_value(bare, "var_to_bytes")
    values = _decode_records(records, chosen, at.allow_objects)
    if damage is None and container != "base64" and any(r.value_end != len(r.payload) for r in records):
        # Frames that only read with slack lose to a complete reading of the whole file as one
        # value (var_to_bytes([1, 2, 3]) starts with 28 = its length - 4, and would read as a
        # framed float followed by 20 bytes of "slack").
        bare = _bare_value(at.data, at.dialect, at.allow_objects)
        if bare is not None:
            return at.one_value(bare, "var_to_bytes")
    return SaveFile(values, chosen, "store_var", byteorder=byteorder, encryption=at.encryption,
                    compression=at.compression, allow_objects=at.allow_objects, path=at.path, damage=damage,
                    raw=at.raw, plaintext=at.data, records=records, key=at.use_key)


def _decode_records(records: list[Record], chosen: Dialect, allow_objects: bool) -> list[Any]:
    """Each record's value; where it ends in its frame is kept, so the slack after it can be written back."""
    decoder = decoder_for(chosen, allow_objects)
    values = []
    for i, r in enumerate(records):
        try:
            value, r.value_end = decoder.decode(r.payload)
        except DecodeError as e:
            where = f"record {i + 1} of {len(records)}: " if len(records) > 1 else ""
            raise DecodeError(r.offset + PREFIX_SIZE + e.offset, f"{where}{e.reason}") from None
        values.append(value)
    return values


def _config_text(data: bytes) -> str | None:
    """The text of a ``ConfigFile.save_encrypted[_pass]`` file (``[section]`` and ``key=value`` lines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    first = text.lstrip()[:1]
    return text if first in ("[", ";") and "\0" not in text else None


def _bare_value(data: bytes, dialect: str | Dialect | None, allow_objects: bool,
                trailing: bool = False) -> tuple[Dialect, Any, int] | None:
    """A file that is one ``var_to_bytes`` value, read completely (or followed by ``trailing``
    bytes), as (dialect, value, end), or None."""
    if dialect is not None:
        d = get_dialect(dialect)
        try:
            value, end = decoder_for(d, allow_objects).decode(data)
        except DecodeError:
            return None
        return (d, value, end) if trailing or end == len(data) else None
    candidates = [c for c in detect(data) if (c.complete or trailing) and not c.framed and c.confidence > 0]
    if not candidates:
        return None
    readers = [get_dialect(c.dialect) for c in candidates if c.ambiguous] or [get_dialect(candidates[0].dialect)]
    d = _pick(readers, [data], allow_objects)
    value, end = decoder_for(d, allow_objects).decode(data)
    return d, value, end


def _choose_dialect(payloads: list[bytes], dialect: str | Dialect | None, allow_objects: bool,
                    prefer: int | None = None) -> Dialect:
    """The dialect of the records: given, or the one engine version that reads them.

    Several versions may read small files completely.  When they all read the same
    values the best-ranked is taken (the values do not depend on the choice); when
    they read different values the file is ambiguous and the caller must choose.
    Frames with slack (bytes after the Variant, which ``get_var`` skips) cannot
    decode "completely", so without a complete reading every engine version is
    tried with slack allowed.
    """
    if dialect is not None:
        return get_dialect(dialect)
    candidates = [c for c in detect(join_frames(payloads)) if c.framed and c.complete]
    if candidates:
        return _pick([get_dialect(c.dialect) for c in candidates if c.ambiguous] or
                     [get_dialect(candidates[0].dialect)], payloads, allow_objects, prefer)
    readers = [d for d in (get_dialect(n) for n in PRIOR) if _reads_all(d, payloads, allow_objects)]
    if not readers:
        # No version reads every record: the error that got furthest is the useful one.
        raise _first_error(payloads, allow_objects)
    return _pick(readers, payloads, allow_objects, prefer)


def _reads_all(d: Dialect, payloads: list[bytes], allow_objects: bool) -> bool:
    decoder = decoder_for(d, allow_objects)
    try:
        for p in payloads:
            decoder.decode(p)
    except DecodeError:
        return False
    return True


def _pick(readers: list[Dialect], payloads: list[bytes], allow_objects: bool, prefer: int | None = None) -> Dialect:
    """The first reader (of the ``prefer`` major version, if one is: the container's own version),
    unless another major version reads other values (then: ambiguous)."""
    first = next((d for d in readers if d.major == prefer), readers[0])
    majors = {d.major for d in readers}
    if len(majors) > 1:
        values = {d.name: [decoder_for(d, allow_objects).decode(p)[0] for p in payloads] for d in readers}
        if not all(len(v) == len(values[first.name]) and all(map(same_value, v, values[first.name]))
                   for v in values.values()):
            # Listed versions first: an unlisted one (Godot 2) is the rarer guess, named last.
            raise AmbiguousDialectError(sorted(values, key=lambda name: (name in UNLISTED_ENGINES, name)))
    return first


def _first_error(payloads: list[bytes], allow_objects: bool) -> DecodeError:
    best: DecodeError | None = None
    offset = 0
    for d in ("godot4", "godot3"):
        decoder = decoder_for(get_dialect(d), allow_objects)
        offset = 0
        for i, p in enumerate(payloads):
            try:
                decoder.decode(p)
            except DecodeError as e:
                err = DecodeError(offset + 4 + e.offset, f"record {i + 1} of {len(payloads)}, as {d}: {e.reason}")
                if best is None or err.offset > best.offset:
                    best = err
                break
            offset += 4 + len(p)
    return best or DecodeError(0, "no engine version reads this file")


def _open_settings(raw: bytes, data: bytes, path: Path | None, dialect: str | Dialect | None, encryption: Any,
                   compression: Any, use_key: bytes | None, max_size: int) -> SaveFile:
    from .project_settings import read_ecfg
    names = [dialect] if dialect is not None else ["godot4", "godot3", "godot2"]
    errors = []
    for name in names:
        d = get_dialect(name)
        try:
            settings, info = read_ecfg(data, d, allow_objects=True, max_size=max_size, strict=dialect is None)
        except DecodeError as e:
            errors.append((d.name, e))
            continue
        return SaveFile([settings], d, "project_settings", encryption=encryption, compression=compression,
                        settings_info=info, allow_objects=True, path=path, raw=raw, plaintext=data, key=use_key)
    name, err = max(errors, key=lambda pair: pair[1].offset)
    raise DecodeError(err.offset, f"project settings, as {name}: {err.reason}")
