"""Godot's encrypted files (magic ``GDEC``): read them, write them byte for byte.

What ``File.open_encrypted[_with_pass]`` (Godot 2/3), ``FileAccess.open_encrypted[_with_pass]``
(Godot 4) and ``ConfigFile.save_encrypted[_pass]`` write around the plaintext (for ``store_var``
saves, the plaintext is the u32-length-prefixed frames of :mod:`godot_formats.stream`; for
``ConfigFile``, its text).  Layouts (docs: ``docs/research/containers.md`` section 2; checked
against every file in ``fixtures/containers``)::

    Godot 2.x-3.x  "GDEC" | u32 mode = 1 | MD5 16 | u64 length n | AES-256-ECB(plaintext, zero padded)
    Godot 4.x      "GDEC" | MD5 16 | u64 length n | IV 16 | AES-256-CFB128(IV, plaintext, zero padded)

The MD5 is of the unpadded plaintext and ``n`` its unpadded length; the padding is zero bytes up
to a multiple of 16 (never stripped by value: the plaintext is cut at ``n``).  A Godot 3 file
written after ``File.endian_swap = true`` has its header fields big-endian (it starts ``CEDG``);
a Godot 4 file inside an encrypted PCK has no magic (``magic=False``).  The two versions are
told apart by their sizes: ``32 + pad16(n)`` with mode 1 is Godot 3, ``44 + pad16(n)`` is
Godot 4; should a crafted file fit both, the key decides (the layout whose MD5 matches).

A password becomes the key the way the engine's ``String.md5_text()`` does: the 32 ASCII
characters of the lowercase hex MD5 of the password's UTF-8 bytes (not the 16-byte digest).

Why CFB-128 is built here on the ECB primitive: ``cryptography`` deprecated ``modes.CFB`` in 48
and moves it out of ``primitives``; ECB stays.  Decrypting CFB needs no chaining (each keystream
block is the encryption of the previous *ciphertext* block), so it is one ECB call over
``IV || C[:-16]`` and one XOR; encrypting is sequential, one 16-byte ECB call per block.

Hostile files: every length field is checked against the bytes present before anything is
allocated (the u64 length can claim 2^64 bytes), and every refusal is a
:class:`~godot_formats.errors.DecodeError` naming the offset of the field that was wrong.  A
wrong password and a damaged file look the same by design (both fail the MD5):
:class:`WrongPasswordError`, never garbage plaintext.  Like the engine, bytes after the
encrypted data are ignored (a PCK holds other files after each one).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import struct
from typing import Any, Union

import attrs

from ..core.errors import DecodeError, InvalidKeyError, PasswordRequiredError, WrongPasswordError
from ..core.limits import MAX_FILE_SIZE
from .layer import Layer

__all__ = [
    "KEY_SIZE", "IV_SIZE", "DEFAULT_MAX_SIZE", "GdecInfo", "WrongPasswordError", "PasswordRequiredError",
    "InvalidKeyError", "key_from_password", "parse_key", "is_gdec", "read_gdec", "write_gdec",
]

Buffer = Union[bytes, bytearray, memoryview]

#: AES-256: the engines refuse any other key size (``ERR_INVALID_PARAMETER``).
KEY_SIZE = 32
#: Godot 4's IV, stored in the file; ``open_encrypted`` (4.4+) refuses any other size.
IV_SIZE = 16
#: Refuse larger inputs unless asked: every kind of file's limit (:data:`..core.limits.MAX_FILE_SIZE`).
DEFAULT_MAX_SIZE = MAX_FILE_SIZE

_BLOCK = 16
# The engines store the magic with store_32(0x43454447): "GDEC" little-endian, "CEDG" swapped.
_MAGIC = 0x43454447
_MAGIC_LE = b"GDEC"
_MAGIC_BE = b"CEDG"
_MODE_AES256 = 1  # Godot 3's only mode (MODE_WRITE_AES256); the reader refuses 0 and >= 2
_V3_HEADER = 32  # magic, mode, MD5, u64 length
_V4_HEADER = 40  # MD5, u64 length, IV (plus 4 with the magic)

_WRONG = "wrong password or damaged file"


def _check_version(_inst: object, _attr: object, value: object) -> None:
    if value not in (3, 4):
        raise ValueError(f"version must be 3 or 4 (Godot 3.x ECB or Godot 4.x CFB), not {value!r}")


@attrs.frozen
class GdecInfo:
    """How an encrypted file is laid out, so that it can be written again exactly.

    ``read_gdec`` returns the info of the file it read: writing the same plaintext back with it
    and the same key reproduces the file byte for byte (Godot 4: because ``iv`` is the file's).
    ``iv=None`` means a fresh random IV at every write, as the engine does; use it (for example
    ``GdecInfo.for_version(4)``, or ``attrs.evolve(info, iv=None)``) for changed data, since
    reusing an IV with one key shows where two plaintexts differ.
    """

    #: 3: Godot 2.x-3.x (AES-256-ECB, mode field); 4: Godot 4.x (AES-256-CFB128 with an IV).
    version: int = attrs.field(default=4, validator=_check_version)
    #: Godot 3 only: header written after ``File.endian_swap = true`` (starts ``CEDG``).
    big_endian: bool = False
    #: Godot 4 only: the 16-byte IV, or None for a fresh ``os.urandom(16)`` at each write.
    iv: bytes | None = None
    #: False for the Godot 4 layout without the magic, as inside encrypted PCKs.
    magic: bool = True

    def __attrs_post_init__(self) -> None:
        if self.version == 3:
            if self.iv is not None:
                raise ValueError("a Godot 3 encrypted file has no IV (it is AES-256-ECB)")
            if not self.magic:
                raise ValueError("a Godot 3 encrypted file always starts with its magic")
        else:
            if self.big_endian:
                raise ValueError("a Godot 4 encrypted file has a little-endian header")
            if self.iv is not None and (not isinstance(self.iv, bytes) or len(self.iv) != IV_SIZE):
                raise ValueError(f"the IV must be {IV_SIZE} bytes or None (fresh), not {self.iv!r}")

    @classmethod
    def for_version(cls, version: int, *, big_endian: bool = False, iv: bytes | None = None,
                    magic: bool = True) -> GdecInfo:
        """The layout a given engine writes: ``for_version(4)`` migrates a Godot 3 file (fresh IV per write)."""
        return cls(version=version, big_endian=big_endian, iv=iv, magic=magic)


# -- keys ------------------------------------------------------------------------------------


def _md5(data: Buffer) -> bytes:
    # A checksum of the format, not a security measure: allowed on FIPS builds too.
    return hashlib.md5(data, usedforsecurity=False).digest()


def key_from_password(password: str) -> bytes:
    """The 32-byte key Godot derives from a password (``pass.md5_text()``, every version).

    That is the 32 ASCII characters of the lowercase hex MD5 of the UTF-8 bytes, so the key has
    128 bits of entropy at most: ``key_from_password("") == b"d41d8cd98f00b204e9800998ecf8427e"``.
    """
    if not isinstance(password, str):
        raise InvalidKeyError(f"a password is a str, not {type(password).__name__}")
    try:
        raw = password.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidKeyError(f"the password is not valid Unicode (character {e.start}: lone surrogate)") from None
    return hashlib.md5(raw, usedforsecurity=False).hexdigest().encode("ascii")


def parse_key(text: str) -> bytes:
    """A key as a user types it (e.g. ``--key``): 64 hex digits, or 32 ASCII characters as such.

    The second form is what games pass as ``"...32 chars...".to_ascii_buffer()`` (and what a
    password turns into); the two cannot be confused, their lengths differ.
    """
    t = text.strip()
    if len(t) == 2 * KEY_SIZE:
        try:
            return bytes.fromhex(t)
        except ValueError:
            pass
    elif len(t) == KEY_SIZE and t.isascii() and t.isprintable():
        return t.encode("ascii")
    raise InvalidKeyError(f"a key is {2 * KEY_SIZE} hex digits or {KEY_SIZE} ASCII characters ({KEY_SIZE} bytes,"
                          f" AES-256); got {len(t)} characters")


def _resolve_key(key: Buffer | None, password: str | None) -> bytes | None:
    if key is not None and password is not None:
        raise InvalidKeyError("give a password or a key, not both")
    if password is not None:
        return key_from_password(password)
    if key is None:
        return None
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise InvalidKeyError(f"a key is {KEY_SIZE} bytes, not {type(key).__name__} "
                              "(key_from_password turns a password into one, parse_key a hex string)")
    raw = bytes(key)
    if len(raw) != KEY_SIZE:
        raise InvalidKeyError(f"a key is {KEY_SIZE} bytes (AES-256), not {len(raw)}")
    return raw


# -- AES -----------------------------------------------------------------------------------------


def _pad16(n: int) -> int:
    return -(-n // _BLOCK) * _BLOCK


@functools.cache
def _aes() -> tuple[Any, Any, Any, Any]:
    """``cryptography``'s Cipher, algorithms, modes and CFB, imported the first time a file is
    decrypted or encrypted: opening a save that is not encrypted never pays for it."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    cfb: Any
    try:  # cryptography 43+ keeps CFB here (its old place warns, and goes in 49)
        from cryptography.hazmat.decrepit.ciphers.modes import CFB as cfb
    except ImportError:  # pragma: no cover - cryptography 42
        cfb = modes.CFB
    return Cipher, algorithms, modes, cfb


def _ecb_decrypt(key: bytes, data: Buffer) -> bytes:
    Cipher, algorithms, modes, _ = _aes()  # noqa: N806
    d = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return bytes(d.update(data) + d.finalize())


def _ecb_encrypt(key: bytes, *parts: Buffer) -> list[bytes]:
    """The ciphertext of ``parts`` one after the other, in pieces for the caller's one join (no
    padded copy of a large plaintext)."""
    Cipher, algorithms, modes, _ = _aes()  # noqa: N806
    e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return [*map(e.update, parts), e.finalize()]


def _cfb_decrypt(key: bytes, iv: bytes, data: memoryview) -> bytes:
    """CFB-128 decryption (mbedtls_aes_crypt_cfb128 from iv_off 0), by OpenSSL in one pass."""
    Cipher, algorithms, _, CFB = _aes()  # noqa: N806
    d = Cipher(algorithms.AES(key), CFB(iv)).decryptor()
    return bytes(d.update(data) + d.finalize())


def _cfb_encrypt(key: bytes, iv: bytes, *parts: Buffer) -> list[bytes]:
    """CFB-128 encryption (mbedtls_aes_crypt_cfb128 from iv_off 0 over whole blocks): C_i = P_i XOR E(C_i-1),
    by OpenSSL in one pass (it was a Python loop over the blocks), in pieces as :func:`_ecb_encrypt`."""
    Cipher, algorithms, _, CFB = _aes()  # noqa: N806
    e = Cipher(algorithms.AES(key), CFB(iv)).encryptor()
    return [*map(e.update, parts), e.finalize()]


# -- reading ---------------------------------------------------------------------------------------


@attrs.frozen
class _Layout:
    """One way to read the header: where each field is and what it says."""

    info: GdecInfo
    md5_at: int
    md5: bytes
    length: int
    start: int  # first ciphertext byte

    @property
    def end(self) -> int:
        return self.start + _pad16(self.length)


def _v3_layout(data: memoryview, big_endian: bool) -> _Layout | DecodeError:
    order = ">" if big_endian else "<"
    if len(data) < _V3_HEADER:
        return DecodeError(len(data), f"a Godot 3 encrypted header is {_V3_HEADER} bytes; the file ends after"
                                      f" {len(data)}")
    (mode,) = struct.unpack_from(order + "I", data, 4)
    if mode != _MODE_AES256:
        return DecodeError(4, f"Godot 3 encryption mode {mode}; the engine writes and reads only 1 (AES-256)")
    (n,) = struct.unpack_from(order + "Q", data, 24)
    layout = _Layout(GdecInfo(3, big_endian=big_endian), 8, bytes(data[8:24]), n, _V3_HEADER)
    return layout if layout.end <= len(data) else _too_long(24, n, layout.end, len(data))


def _v4_layout(data: memoryview, magic: bool) -> _Layout | DecodeError:
    base = 4 if magic else 0
    if len(data) < base + _V4_HEADER:
        return DecodeError(len(data), f"a Godot 4 encrypted header is {base + _V4_HEADER} bytes; the file ends"
                                      f" after {len(data)}")
    (n,) = struct.unpack_from("<Q", data, base + 16)
    iv = bytes(data[base + 24:base + _V4_HEADER])
    layout = _Layout(GdecInfo(4, iv=iv, magic=magic), base, bytes(data[base:base + 16]), n, base + _V4_HEADER)
    return layout if layout.end <= len(data) else _too_long(base + 16, n, layout.end, len(data))


def _too_long(offset: int, n: int, need: int, have: int) -> DecodeError:
    return DecodeError(offset, f"the length field says {n} bytes of plaintext, which take {need} bytes of file;"
                               f" the file has {have}")


def _layouts(data: memoryview, magic: bool) -> list[_Layout]:
    """Every layout the header fits, most likely first; raises DecodeError when none fits."""
    if not magic:
        found = _v4_layout(data, magic=False)
        if isinstance(found, DecodeError):
            raise found
        return [found]
    head = bytes(data[:4])
    if head == _MAGIC_BE:
        found = _v3_layout(data, big_endian=True)
        if isinstance(found, DecodeError):
            raise found
        return [found]
    if head != _MAGIC_LE:
        raise DecodeError(0, f"not a Godot encrypted file: it starts {head.hex()}, not 47444543 ('GDEC')"
                             + ("" if len(data) >= 4 else f" (only {len(data)} bytes)"))
    v3, v4 = _v3_layout(data, big_endian=False), _v4_layout(data, magic=True)
    fits = [lay for lay in (v3, v4) if isinstance(lay, _Layout)]
    if not fits:
        # Report the version the file looks most like: mode 1 (as a Godot 4 MD5 that is a 1-in-2^32
        # chance) or a Godot 3 length that matches the size make it a Godot 3 file.
        assert isinstance(v3, DecodeError) and isinstance(v4, DecodeError)
        if len(data) < _V3_HEADER:
            raise DecodeError(len(data), f"an encrypted header is {_V3_HEADER} (Godot 3) or 4 + {_V4_HEADER}"
                                         f" (Godot 4) bytes; the file ends after {len(data)}")
        mode, n3 = struct.unpack_from("<I", data, 4)[0], struct.unpack_from("<Q", data, 24)[0]
        raise v3 if mode == _MODE_AES256 or _V3_HEADER + _pad16(n3) == len(data) else v4
    # Engine-written files have nothing after the data: prefer the layout whose size is exact.
    fits.sort(key=lambda lay: lay.end != len(data))
    return fits


def _version_text(layouts: list[_Layout]) -> str:
    versions = sorted({lay.info.version for lay in layouts})
    if versions == [3]:
        return "Godot 3, AES-256-ECB"
    if versions == [4]:
        return "Godot 4, AES-256-CFB"
    return "Godot 3 or 4"


def _decrypt(layout: _Layout, data: memoryview, key: bytes) -> bytes | None:
    """The plaintext, or None when its MD5 is not the file's."""
    body = data[layout.start:layout.end]
    if layout.info.version == 3:
        plain = _ecb_decrypt(key, body)
    else:
        assert layout.info.iv is not None
        plain = _cfb_decrypt(key, layout.info.iv, body)
    if len(plain) != layout.length:
        plain = plain[:layout.length]
    return plain if hmac.compare_digest(_md5(plain), layout.md5) else None


def gdec_size(info: GdecInfo, length: int) -> int:
    """The bytes an encrypted file of ``length`` plaintext bytes takes: the engine reads no further,
    so whatever follows (another file appended, say) is not part of it."""
    if info.version == 3:
        return _V3_HEADER + _pad16(length)
    return (4 if info.magic else 0) + _V4_HEADER + _pad16(length)


def read_gdec(
    data: Buffer,
    *,
    password: str | None = None,
    key: Buffer | None = None,
    magic: bool = True,
    max_size: int = DEFAULT_MAX_SIZE,
) -> tuple[bytes, GdecInfo]:
    """Decrypt an encrypted Godot file; return ``(plaintext, info)``.

    Give the ``password`` of ``open_encrypted_with_pass`` / ``save_encrypted_pass`` or the
    32-byte ``key`` of ``open_encrypted`` / ``save_encrypted``.  The version is detected (Godot 3
    little- or big-endian header, Godot 4); ``magic=False`` reads the Godot 4 layout without
    the magic, as stored inside encrypted PCKs (never guessed: it would match any bytes).
    Inputs over ``max_size`` bytes are refused before any work.

    Raises :class:`WrongPasswordError` (a ``DecodeError``) when the MD5 does not match,
    :class:`PasswordRequiredError` when the file is encrypted and neither was given,
    ``DecodeError`` for anything malformed, :class:`InvalidKeyError` for an unusable key.
    """
    k = _resolve_key(key, password)
    view = memoryview(data).cast("B")
    if len(view) > max_size:
        raise DecodeError(0, f"the input is {len(view)} bytes, over max_size={max_size}")
    layouts = _layouts(view, magic)
    if k is None:
        raise PasswordRequiredError(0, f"the file is encrypted ({_version_text(layouts)}): it needs a password or "
                                       "key: give ", tuple(sorted({lay.info.version for lay in layouts})))
    for layout in layouts:
        plain = _decrypt(layout, view, k)
        if plain is not None:
            return plain, layout.info
    raise WrongPasswordError(layouts[0].md5_at, _WRONG)


def gdec_header_size(data: Buffer) -> int:
    """How many of the first bytes of ``data`` an encrypted header takes: 32 for a Godot 3 one
    written byte-swapped (``CEDG``), else 44 (Godot 4: magic, MD5, length, IV), since whether a
    ``GDEC`` file is Godot 3's (32 bytes) is known only once its MD5 matches; no error of a Godot 3
    header points past its byte 32 anyway (they are at bytes 0, 4, 24 or where the file ends)."""
    return _V3_HEADER if bytes(memoryview(data).cast("B")[:4]) == _MAGIC_BE else 4 + _V4_HEADER


def gdec_data_start(info: GdecInfo) -> int:
    """Where the encrypted data starts in the file: AES-256 ECB and CFB keep positions, so byte ``i``
    of the plaintext is the file's byte ``gdec_data_start(info) + i``."""
    if info.version == 3:
        return _V3_HEADER
    return (4 if info.magic else 0) + _V4_HEADER


def is_gdec(data: Buffer) -> bool:
    """Whether ``data`` starts like an encrypted Godot file (``GDEC``, or ``CEDG`` when byte-swapped).

    A cheap sniff for detection; only :func:`read_gdec` checks the rest.
    """
    return bytes(memoryview(data).cast("B")[:4]) in (_MAGIC_LE, _MAGIC_BE)


# -- writing ---------------------------------------------------------------------------------------


def write_gdec(plaintext: Buffer, info: GdecInfo, *, key: Buffer | None = None, password: str | None = None) -> bytes:
    """The encrypted file the engine would write for ``plaintext`` with this layout and key.

    Give the 32-byte ``key`` (or a ``password``, derived as the engine does).  With ``info``
    from :func:`read_gdec` and the same key, an engine file is reproduced byte for byte; with
    ``iv=None`` a Godot 4 file gets a fresh random IV, as every engine save does.
    """
    k = _resolve_key(key, password)
    if k is None:
        raise InvalidKeyError("writing an encrypted file needs a key or a password")
    plain = bytes(plaintext)
    n = len(plain)
    padding = bytes(_pad16(n) - n)
    digest = _md5(plain)
    if info.version == 3:
        order = ">" if info.big_endian else "<"
        header = struct.pack(order + "II", _MAGIC, _MODE_AES256) + digest + struct.pack(order + "Q", n)
        return b"".join([header, *_ecb_encrypt(k, plain, padding)])
    iv = info.iv if info.iv is not None else os.urandom(IV_SIZE)
    header = (struct.pack("<I", _MAGIC) if info.magic else b"") + digest + struct.pack("<Q", n) + iv
    return b"".join([header, *_cfb_encrypt(k, iv, plain, padding)])


# -- the layer's row -----------------------------------------------------------------------------


def _read_layer(data: bytes, key: bytes | None, max_size: int) -> tuple[bytes, GdecInfo, int]:
    plaintext, info = read_gdec(data, key=key, max_size=max_size)
    return plaintext, info, gdec_size(info, len(plaintext))


def describe(info: GdecInfo) -> str:
    """The layer in words: ``encrypted (Godot 3, AES-256-ECB, big-endian header)``."""
    return (f"encrypted (Godot {info.version}, {'AES-256-ECB' if info.version == 3 else 'AES-256-CFB'}"
            f"{', big-endian header' if info.big_endian else ''})")


#: The encryption layer (``FileAccessEncrypted``): ``GDEC``, or ``CEDG`` for a Godot 3 header written
#: after ``endian_swap``.
LAYER = Layer("encryption", (b"GDEC", b"CEDG"), _read_layer,
              lambda plaintext, info, key: write_gdec(plaintext, info, key=key), describe,
              "of the decrypted data", "encrypted", gdec_header_size, gdec_data_start)
