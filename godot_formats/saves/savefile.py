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
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, ClassVar, Union

import attrs

from ..core.codec import DEFAULT_MAX_DEPTH, encoder_for
from ..core.dialects import Dialect, get_dialect
from ..core.errors import AmbiguousDialectError, ConversionError, DecodeError, EncodeError, LostRecord, Remedy
from ..layers.files import save_to
from ..layers.framing import PREFIX_SIZE, FramingError
from ..migration import POLICIES, Loss, convert_records
from .containers import container
from .detection import padding_runs, writes_as
from .reading import (
    DEFAULT_MAX_FILE_SIZE,
    DEFAULT_MAX_RATIO,
    LAYER_BY_NAME,
    LAYERS,
    BareStream,
    Reading,
    peel,
    read_bounded,
    read_peeled,
)

__all__ = ["SaveFile", "Record", "open", "AmbiguousDialectError", "DEFAULT_MAX_FILE_SIZE", "BareStream",
           "FramingError"]

FileLike = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]


@attrs.define
class Record:
    """One ``store_var`` record as read: where it was, and its bytes, for an exact rewrite."""

    offset: int  # of its length prefix, in the plaintext
    payload: bytes  # the frame's bytes after the prefix: the Variant and any slack
    value_end: int  # where the Variant ends inside ``payload``; the rest is slack the engine skips


class _Header(dict):  # type: ignore[type-arg]
    """``SaveFile.header``: a dict, which 0.3's callers called (``sf.header()``): that still gives it."""

    def __call__(self) -> dict[str, Any]:
        warnings.warn("SaveFile.header is a property since 0.4 (as ResourceFile.header is): use sf.header, "
                      "not sf.header(); the call goes in 0.5", DeprecationWarning, stacklevel=2)
        return self


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
    lost: list[LostRecord] = attrs.field(factory=list)  # salvaged records whose value was bad (None in values)
    why: str = ""  # how the dialect and framing were chosen
    also: list[str] = attrs.field(factory=list)  # other readings of the file that read the same values
    _raw: bytes = b""
    _plaintext: bytes = b""
    _records: list[Record] = attrs.field(factory=list)
    _spans: tuple[tuple[int, int], ...] = ()  # each record's (start, end) in _inner: records made when asked
    _ends: tuple[int, ...] = ()  # where each value ends
    _inner: bytes = b""
    _key: bytes | None = None
    _plaintext_md5: str | None = None  # from a header: the plaintext its IV was used for
    _trailing: dict[str, bytes] = attrs.field(factory=dict)  # bytes after a layer's end, per layer

    #: The document kind (:mod:`godot_formats.documents`): every document answers the same protocol.
    kind: ClassVar[str] = "save"

    @classmethod
    def from_reading(cls, reading: Reading, *, path: Path | None = None, allow_objects: bool = False) -> SaveFile:
        """The save file of a :class:`~godot_formats.reading.Reading`: its values as read, no decoding again."""
        peeled = reading.peeled
        return cls(reading.values, reading.dialect, reading.container, byteorder=reading.byteorder,
                   encryption=peeled.infos.get("encryption"), compression=peeled.infos.get("compression"),
                   settings_info=reading.settings_info,
                   allow_objects=allow_objects or container(reading.container).objects, path=path,
                   damage=reading.damage, lost=list(reading.lost), why=reading.why, also=list(reading.also),
                   raw=peeled.raw, plaintext=peeled.data, spans=reading.spans, ends=reading.ends,
                   inner=reading.inner, key=peeled.key, trailing=peeled.trailing)

    def _record_list(self) -> list[Record]:
        """Each record's place and bytes (made from the reading's spans the first time they are needed)."""
        if self._spans and not self._records:
            prefix = PREFIX_SIZE if container(self.container).framed else 0
            inner = self._inner
            self._records = [Record(start - prefix, inner[start:end], value_end - start)
                             for (start, end), value_end in zip(self._spans, self._ends)]
        return self._records

    # -- describing -------------------------------------------------------------------

    @property
    def layers(self) -> dict[str, Any]:
        """Every layer, outside in, as plain data (what the JSON and text views record)."""
        out: dict[str, Any] = {"container": self.container, "dialect": self.dialect.name}
        if container(self.container).framed:
            out["byteorder"] = self.byteorder
            out["records"] = len(self.values)
        if self.encryption is not None:
            out["encryption"] = f"godot{self.encryption.version}"
        if self.compression is not None:
            out["compression"] = self.compression.mode_name
        if self._trailing:
            out["trailing"] = {name: len(rest) for name, rest in self._trailing.items()}
        if self.lost:
            out["lost"] = [lost.record for lost in self.lost]
        return out

    @property
    def notes(self) -> list[str]:
        """What a reader should know that no value says: how the version and framing were told,
        which other readings agree, what ended a salvaged file and which records it lost."""
        out = [self.why] if self.why else []
        if self.also:
            out.append(f"the bytes also read as {', '.join(self.also)}, with the same values")
        if self.damage is not None:
            out.append(f"damaged: {self.damage}; the records before it were kept (salvage)")
        out += [f"record {lost.record} could not be read ({lost.error.reason}): read as null" for lost in self.lost]
        return out

    @property
    def header(self) -> _Header:
        """Everything but the values that :meth:`from_header` needs to write this file again:
        the layers with their parameters (a Godot 4 IV, a gzip OS byte) and each record's
        slack.  JSON-ready; the key or password is never part of it.  A dict, as
        ``ResourceFile.header`` is; calling it (``sf.header()``, 0.3) still works until 0.5, with a
        ``DeprecationWarning``."""
        return _Header(self._header())

    def _header(self) -> dict[str, Any]:
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
        if self._trailing:
            out["trailing"] = {name: rest.hex() for name, rest in self._trailing.items()}
        if self.lost:
            out["lost"] = [lost.record for lost in self.lost]  # damaged records, read as null
        slack = [r.payload[r.value_end:].hex() for r in self._record_list()] if container(self.container).framed else []
        if any(slack):
            out["slack"] = slack
        padding = self._padding()
        if padding:
            out["padding"] = padding
        return out

    def _padding(self) -> dict[str, dict[str, Any]]:
        """Each unchanged record's bytes that our encoding of its value lacks: the NodePath padding an
        engine left uninitialised (``8cbfff`` where we write zeros), by record number (from 1):
        ``{"value_md5": MD5 of our encoding of the value, "bytes": {offset in the value: hex}}``.
        With them :meth:`from_header` gives back the engine's bytes exactly, not only bytes the
        engine reads the same; the MD5 says whether a value given back is this one (an edited
        value is written as we write it, never with another value's padding)."""
        if not container(self.container).variants:
            return {}
        lost = {lost.record for lost in self.lost}
        encoder = encoder_for(self.dialect, self.allow_objects)
        out: dict[str, dict[str, Any]] = {}
        for i, (record, v) in enumerate(zip(self._record_list(), self.values)):
            runs = None if i + 1 in lost else padding_runs(v, self.dialect, record.payload[:record.value_end])
            if runs:
                out[str(i + 1)] = {"value_md5": hashlib.md5(encoder.encode(v)).hexdigest(),
                                   "bytes": {str(offset): run.hex() for offset, run in runs}}
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

        Each record keeps its slack, and an unchanged one its padding (what the engine left in
        a NodePath's padding: the header's ``padding``), so unchanged values give back the
        file's bytes exactly; the IV of a Godot 4 file is kept only if the plaintext is the same
        bytes (it never encrypts two plaintexts).
        """
        if not isinstance(header, dict) or header.get("godot_formats_save") != 1:
            raise DecodeError(0, "not a godot-formats save header")
        try:
            d = get_dialect(header["dialect"])
            holder = container(header["container"])
            encryption = compression = settings = None
            raw = b""
            md5 = header.get("plaintext_md5")
            if md5 is not None and not isinstance(md5, str):
                raise ValueError("plaintext_md5 is hex text")
            if "encryption" in header:
                from ..layers.encryption import GdecInfo
                encryption = _info_from_json(GdecInfo, header["encryption"])
            if "compression" in header:
                from ..layers.compression import GcpfInfo
                layer: Any = BareStream if header["compression"].get("bare") else GcpfInfo
                compression = _info_from_json(layer, header["compression"])
                as_read = header["compression"].get("as_read")
                raw = base64.b64decode(as_read, validate=True) if isinstance(as_read, str) else b""
            if "settings" in header:
                from ..layers.project_settings import EcfgInfo
                settings = _info_from_json(EcfgInfo, header["settings"])
            byteorder = header.get("byteorder", "little")
            if byteorder not in ("little", "big"):
                raise ValueError(f"byteorder {byteorder!r}")
            slack = [bytes.fromhex(h) for h in header.get("slack", [])]
            padding = _padding_from_json(header.get("padding", {}))
            trailing = {name: bytes.fromhex(h) for name, h in header.get("trailing", {}).items()
                        if name in LAYER_BY_NAME}
        except (KeyError, ValueError, TypeError, AttributeError, binascii.Error) as e:
            raise DecodeError(0, f"a save header that cannot be used: {e}") from None
        records = []
        if holder.variants and (any(slack) or padding):
            records = _records_for(values, encoder_for(d, allow_objects), slack, padding)
        use_key = key
        if use_key is None and password is not None:
            from ..layers.encryption import key_from_password
            use_key = key_from_password(password)
        sf = cls(list(values), d, holder.name, byteorder=byteorder, encryption=encryption, compression=compression,
                 settings_info=settings, allow_objects=allow_objects, records=records, key=use_key,
                 plaintext_md5=md5, raw=raw, trailing=trailing)
        return sf

    # -- writing ------------------------------------------------------------------------

    def to_bytes(self, *, dialect: str | Dialect | None = None, password: str | None = None,
                 key: bytes | None = None, policy: str = "strict") -> bytes:
        """The file's bytes with the current values.

        Unchanged values keep their original bytes (slack and the padding an engine left
        uninitialised included), and an unchanged plaintext gives back the original file
        exactly.  ``dialect`` writes another engine version through :meth:`convert`
        (``policy``; use :meth:`convert` or :meth:`save` to see what a lossy one changed), as
        :meth:`ResourceFile.to_bytes <godot_formats.resources.ResourceFile.to_bytes>` does.
        ``password`` or ``key`` encrypts with another key (an encrypted file is encrypted
        again with the key it was opened with otherwise).
        """
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")
        if dialect is not None and get_dialect(dialect) != self.dialect:
            converted, _ = self.convert(dialect, policy=policy)
            return converted.to_bytes(password=password, key=key)
        plaintext = self._plaintext_of(self.values, self.dialect)
        same = plaintext == self._plaintext or (
            self._plaintext_md5 is not None and hashlib.md5(plaintext).hexdigest() == self._plaintext_md5)
        if self._raw and same and password is None and key is None:
            return self._raw
        return self._wrap(plaintext, self.dialect, password, key)

    def convert(self, dialect: str | Dialect, *, policy: str = "strict") -> tuple[SaveFile, list[Loss]]:
        """This save for another engine version, and every change that made.

        The values are converted as :func:`godot_formats.convert_value` does, record by record:
        ``policy="strict"`` raises :class:`~godot_formats.ConversionError` listing the losses of
        every record at once (not only the first record's: a migration is fixed in one pass),
        ``"lossy"`` applies them and returns them.  The layers migrate: an encrypted file is
        encrypted for the target engine with the same key (Godot 4's layout with a fresh IV), a
        compressed one stays compressed in the same mode, framing and byte order stay.  The new
        file is not tied to the one read (``path`` is None: :meth:`save` needs a destination),
        and ``self`` is not changed; in the same dialect it is a copy that writes the same bytes.
        """
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")
        target = get_dialect(dialect)
        if target == self.dialect:
            return attrs.evolve(self, values=list(self.values), path=None), []
        values, losses = self._converted(target, policy)
        encryption = self.encryption
        version = 3 if target.major <= 3 else 4
        if encryption is not None and encryption.version != version:
            from ..layers.encryption import GdecInfo
            encryption = GdecInfo.for_version(version)  # the target engine's layout, a fresh IV
        settings = self.settings_info
        if settings is not None and settings.key_length_bug:
            settings = attrs.evolve(settings, key_length_bug=False)  # written anew, the bug is fixed
        converted = SaveFile(values, target, self.container, byteorder=self.byteorder, encryption=encryption,
                             compression=self.compression, settings_info=settings, allow_objects=self.allow_objects,
                             why=f"converted from {self.dialect.name}", key=self._key, trailing=dict(self._trailing))
        return converted, losses

    def _converted(self, target: Dialect, policy: str) -> tuple[list[Any], list[Loss]]:
        """The values in ``target``, and every change, of every record (strict: all listed, then refused)."""
        n = len(self.values)
        damaged = {r.record - 1: Loss(_record_path(r.record - 1, n), f"damaged in the file ({r.error.reason}): "
                                      "written as null, as get_var reads it", None, None)
                   for r in self.lost if r.record - 1 < n and self.values[r.record - 1] is None}
        converted, losses = convert_records(self.values, self.dialect, target, lambda i: _record_path(i, n), damaged)
        if losses and policy == "strict":
            raise ConversionError(losses)
        return converted, losses

    def save(self, file: FileLike | None = None, *, dialect: str | Dialect | None = None,
             password: str | None = None, key: bytes | None = None, policy: str = "strict",
             overwrite: bool = False) -> list[Loss]:
        """Write the file (atomically) to ``file``, or back where it was read from.

        An existing file other than the one this was read from is only replaced with
        ``overwrite=True``.  ``dialect`` migrates it (see :meth:`convert`); returns the changes
        that conversion made (``[]`` without one), as ``ResourceFile.save`` does.
        """
        saved, losses = (self, []) if dialect is None else self.convert(dialect, policy=policy)
        save_to(file, saved.to_bytes(password=password, key=key, policy=policy), origin=self.path,
                overwrite=overwrite, what="save file")
        return losses

    def _plaintext_of(self, values: list[Any], target: Dialect) -> bytes:
        holder = container(self.container)
        if holder.join is None:
            return _WRITES_ITS_VALUES[holder.name](self, values, target)
        encoder = encoder_for(target, self.allow_objects, DEFAULT_MAX_DEPTH)
        records = self._record_list()
        if holder.framed and (target != self.dialect or not records):
            # Nothing to compare with the records read: every record in one call (None: one by one).
            framed = encoder.encode_frames(values, self.byteorder)
            if framed is not None:
                return framed
        blobs = []
        for i, v in enumerate(values):
            try:
                blob = encoder.encode(v)
            except EncodeError as e:
                raise EncodeError(path=_record_path(i, len(values)) + e.path, **e.reason_in()) from None
            if i < len(records) and target == self.dialect:
                record = records[i]
                kept = record.payload[:record.value_end]
                if kept == blob or (v is None and any(lost.record == i + 1 for lost in self.lost)) or (
                        len(kept) == len(blob) and writes_as(v, target, kept)):  # padding the engine left as is
                    blob = record.payload  # unchanged: its slack too (a damaged record: its bytes as they were)
            blobs.append(blob)
        return holder.join(blobs, self.byteorder)

    def _wrap(self, plaintext: bytes, target: Dialect, password: str | None, key: bytes | None) -> bytes:
        """The layers put back, inside out (:data:`~godot_formats.reading.LAYERS`), each followed by the
        bytes that followed it in the file."""
        data = plaintext
        for layer in reversed(LAYERS):
            info = getattr(self, layer.name)
            if info is None:
                continue
            use_key = None
            if layer.name == "encryption":
                info, use_key = self._encryption_for(plaintext, target, password, key)
            data = layer.write(data, info, use_key) + self._trailing.get(layer.name, b"")
        return data

    def _encryption_for(self, plaintext: bytes, target: Dialect, password: str | None,
                        key: bytes | None) -> tuple[Any, bytes]:
        """The encryption layer for ``target`` (the target engine's layout) and its key."""
        from ..layers.encryption import GdecInfo, key_from_password
        use_key = key if key is not None else key_from_password(password) if password is not None else self._key
        if use_key is None:
            raise EncodeError("the file is encrypted: give ", remedy=Remedy.PASSWORD, then=" to write it")
        version = 3 if target.major <= 3 else 4
        info = self.encryption
        same = plaintext == self._plaintext or hashlib.md5(plaintext).hexdigest() == self._plaintext_md5
        if info.version != version:
            info = GdecInfo.for_version(version)  # the target engine's layout, a fresh IV
        elif not same and info.iv is not None:
            info = attrs.evolve(info, iv=None)  # a fresh IV: never one IV for two plaintexts
        return info, use_key


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


#: The containers whose values are Variants, each with its record (bytes kept for an exact rewrite).
def _settings_plaintext(sf: SaveFile, values: list[Any], target: Dialect) -> bytes:
    """A ``project.binary``: its one mapping as the engine writes it.  A file of Godot 3.2.3's
    key-length bug (unreadable by that engine itself) comes back as it was when nothing changed;
    written anew, it is fixed."""
    from ..layers.project_settings import write_ecfg

    info = sf.settings_info
    if info.key_length_bug and target == sf.dialect:
        as_read = write_ecfg(values[0], info, target, key_length_bug=True)
        if as_read == sf._plaintext or hashlib.md5(as_read).hexdigest() == sf._plaintext_md5:
            return as_read
    return write_ecfg(values[0], info, target)


#: How the containers whose values are no Variants write them (:attr:`Container.join` is None).
_WRITES_ITS_VALUES: dict[str, Callable[[SaveFile, list[Any], Dialect], bytes]] = {
    "project_settings": _settings_plaintext,
    "text": lambda sf, values, target: str(values[0]).encode("utf-8", "surrogateescape"),
}


#: A record's padding as a header carries it: the MD5 of our encoding of its value, and the runs.
_Padding = tuple[str, list[tuple[int, bytes]]]


def _padding_from_json(data: Any) -> dict[int, _Padding]:
    """A header's ``padding`` (see :meth:`SaveFile._padding`) by record index (from 0); ValueError,
    TypeError, KeyError or AttributeError for one that is not of that shape."""
    out: dict[int, _Padding] = {}
    for number, entry in data.items():
        index = int(number) - 1
        md5 = entry["value_md5"]
        runs = [(int(offset), bytes.fromhex(run)) for offset, run in entry["bytes"].items()]
        if not isinstance(md5, str) or index < 0 or any(offset < 0 for offset, _ in runs):
            raise ValueError(f"padding of record {number}: an MD5 that is not text, or a number below the first")
        out[index] = (md5, runs)
    return out


def _records_for(values: list[Any], encoder: Any, slack: list[bytes], padding: dict[int, _Padding]) -> list[Record]:
    """Records for values given anew: each value's encoding, with the record's padding put back when the
    value is the one the header describes (its encoding's MD5), then its slack."""
    records = []
    for i, v in enumerate(values):
        try:
            blob = encoder.encode(v)
        except EncodeError:
            blob = b""
        md5, runs = padding.get(i, ("", []))
        if runs and hashlib.md5(blob).hexdigest() == md5:
            patched = bytearray(blob)
            for offset, run in runs:
                patched[offset:offset + len(run)] = run
            blob = bytes(patched[:len(blob)])  # a run past the end (a header edited by hand) is cut off
        records.append(Record(0, blob + (slack[i] if i < len(slack) else b""), len(blob)))
    return records


# -- reading -----------------------------------------------------------------------------

def open(file: FileLike, *, password: str | None = None, key: bytes | None = None,
         dialect: str | Dialect | None = None, allow_objects: bool = False,
         max_size: int = DEFAULT_MAX_FILE_SIZE, salvage: bool = False,
         compressed: str | int | None = None, framing: str = "auto",
         max_ratio: int = DEFAULT_MAX_RATIO) -> SaveFile:
    """Open a save file of any engine version and layer; see the module docstring.

    ``password`` or ``key`` (32 bytes) opens an encrypted file.  ``dialect`` skips
    detection; without it an ambiguous file raises :class:`AmbiguousDialectError`, and a
    damaged one :class:`~godot_formats.errors.DamagedFileError` naming the record and byte.
    ``salvage`` keeps every readable record of a damaged ``store_var`` file, as the engine's
    ``get_var`` reads them (None for a bad record, listed in ``lost``), and records what
    ended it in ``damage``, instead of raising.  ``compressed`` names the mode
    (``"deflate"``, ``2`` ...) of a bare ``PackedByteArray.compress`` stream, which has
    no header to recognise it by.  A compressed layer may decompress to ``max_ratio`` times the
    file's size (1 MiB at least; ``max_ratio=0``: up to ``max_size``), so a decompression bomb
    stops with an error naming the budget.  ``framing`` (``auto``, ``none``, ``store_var``) says
    whether the file holds ``store_var`` records.  The file is read once
    (:func:`godot_formats.reading.read`); every failure is a
    :class:`~godot_formats.DecodeError` naming the offset (in the file, or in the
    decrypted/decompressed data, as the message says).  Its bytes are read as every entry
    point reads a file (:func:`~godot_formats.layers.files.read_bounded`): a named FIFO,
    device, socket or folder is refused before it is read
    (:class:`~godot_formats.NotRegularFileError`), and so is a file over ``max_size`` bytes
    (:class:`~godot_formats.SizeLimitError`).
    """
    raw, path = read_bounded(file, max_size)
    peeled = peel(raw, password=password, key=key, compressed=compressed, max_size=max_size, max_ratio=max_ratio)
    reading = read_peeled(peeled, dialect=dialect, framing=framing, allow_objects=allow_objects, salvage=salvage,
                          max_size=max_size)
    return SaveFile.from_reading(reading, path=path, allow_objects=allow_objects)
