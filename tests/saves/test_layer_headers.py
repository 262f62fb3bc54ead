"""A damaged field of an encrypted or compressed file's header is named as the header's, at its byte in
the file (not ``at byte 24 of the decrypted data``, an offset the reader could not place). The files
are the engine-made examples with one header field broken."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import godot_formats as gf
from godot_formats.core import errors
from godot_formats.layers.encryption import GdecInfo, write_gdec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "saves"
ENCRYPTED = (EXAMPLES / "godot3_encrypted.sav").read_bytes()  # Godot 3.2.3, password hunter2
COMPRESSED = (EXAMPLES / "godot3_compressed.sav").read_bytes()  # Godot 3.2.3, FastLZ


def _with(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def _error(data: bytes, **options: str) -> gf.DecodeError:
    with pytest.raises(gf.DecodeError) as info:
        gf.open(data, **options)  # type: ignore[arg-type]
    return info.value


@pytest.mark.parametrize("data, offset, reason", [
    (_with(COMPRESSED, 4, "<I", 99), 4, "unknown compression mode 99"),
    (_with(COMPRESSED, 8, "<I", 0), 8, "block size 0"),
    (_with(COMPRESSED, 12, "<I", 10**8), 12, "uncompressed size 100000000"),
    (_with(COMPRESSED, 16, "<I", 10**6), 16, "the blocks need"),
    (COMPRESSED[:10], 10, "truncated GCPF header"),
], ids=["mode", "block size", "size", "size table", "cut"])
def test_a_compressed_files_header_error_says_header_and_file_byte(data: bytes, offset: int, reason: str) -> None:
    e = _error(data)
    assert e.offset == offset and e.where == " of the file, in the compressed file's header"
    assert str(e).startswith(f"at byte {offset} of the file, in the compressed file's header: {reason}"), str(e)


@pytest.mark.parametrize("data, offset, reason", [
    (_with(ENCRYPTED, 24, "<Q", 10**9), 24, "the length field says 1000000000 bytes"),
    (_with(ENCRYPTED, 4, "<I", 7), 4, "Godot 3 encryption mode 7"),
    (ENCRYPTED[:20], 20, "an encrypted header is 32 (Godot 3) or 4 + 40 (Godot 4) bytes"),
], ids=["length", "mode", "cut"])
def test_an_encrypted_files_header_error_says_header_and_file_byte(data: bytes, offset: int, reason: str) -> None:
    e = _error(data, password="hunter2")
    assert str(e).startswith(f"at byte {offset} of the file, in the encrypted file's header: {reason}"), str(e)


@pytest.mark.parametrize("version, start", [(3, 32), (4, 44)])
def test_a_header_inside_an_encrypted_file_names_its_byte_in_the_file(version: int, start: int) -> None:
    """A compressed file stored encrypted: its header is in the decrypted data, and AES ECB and CFB
    keep positions, so the file's own byte is known too."""
    data = write_gdec(_with(COMPRESSED, 8, "<I", 0), GdecInfo(version), password="pw")
    e = _error(data, password="pw")
    assert str(e) == (f"at byte 8 of the decrypted data (byte {start + 8} of the file), in the compressed "
                      "layer's header: block size 0")


def test_errors_after_the_header_and_password_errors_are_not_called_header_errors() -> None:
    e = _error(COMPRESSED[:-4] + b"XXXX")  # the trailing magic, after the blocks
    assert e.where == "" and e.offset == len(COMPRESSED) - 4 and "trailing magic" in str(e), str(e)
    wrong = _error(ENCRYPTED, password="not it")
    assert isinstance(wrong, errors.WrongPasswordError) and wrong.where == ""
    needs = _error(ENCRYPTED)
    assert isinstance(needs, errors.PasswordRequiredError) and needs.where == ""


def test_damage_inside_the_data_keeps_naming_the_decrypted_bytes() -> None:
    """A damaged record inside the layers: its offset is in the plaintext, and the message says so
    (``str(e)`` now says it too, not only the command line)."""
    body = struct.pack("<I", 8) + struct.pack("<II", 99, 0)  # a record of an unknown type
    data = write_gdec(body, GdecInfo(3), password="pw")
    e = _error(data, password="pw", dialect="godot3")
    assert e.where == " of the decrypted data" and "of the decrypted data: " in str(e)


def test_file_access_says_the_same(tmp_path: Path) -> None:
    path = tmp_path / "c.sav"
    path.write_bytes(_with(COMPRESSED, 8, "<I", 0))
    with pytest.raises(gf.DecodeError, match=r"^at byte 8 of the file, in the compressed file's header: block "
                                             r"size 0$"):
        gf.FileAccess.open(path, "r", compression=gf.FileAccess.COMPRESSION_FASTLZ)
