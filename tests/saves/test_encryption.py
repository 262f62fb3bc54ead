"""Encrypted files (GDEC), judged by the engines: Godot 3.2.3 and 4.6 wrote every file compared here.

The fixtures are ``fixtures/containers/godot{3,4}_containers.jsonl`` (records with container
``encrypted``): ``file_hex`` is the engine's file, ``value_hex`` the engine's ``var_to_bytes`` of
each stored value, so the expected plaintext (the ``store_var`` frames) is built from engine
bytes, never from our encoder.  The engine tests at the end have the live engines read files
written here and write files (non-ASCII passwords, Godot 3's byte-swapped header) read here.
"""

from __future__ import annotations

import hashlib
import struct
import tracemalloc
from typing import Any

import attrs
import oracles
import pytest
from conftest import FIXTURES, GD3_FILE_HELPERS, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.layers.encryption import (
    GdecInfo,
    InvalidKeyError,
    PasswordRequiredError,
    WrongPasswordError,
    is_gdec,
    key_from_password,
    parse_key,
    read_gdec,
    write_gdec,
)
from godot_formats.streams.stream import dumps_framed, iter_framed

RECORDS: list[dict[str, Any]] = [
    r for name in ("godot3_containers.jsonl", "godot4_containers.jsonl")
    for r in read_jsonl(FIXTURES / "containers" / name) if r["container"] == "encrypted"
]
IDS = [r["name"] for r in RECORDS]

KEY_0TO31 = bytes(range(32))
KEY_SHA256 = hashlib.sha256(b"godot-formats").digest()
IV_A0 = bytes(range(0xA0, 0xB0))
UNICODE_PASSWORD = "pässwörd-ключ-🔑"
WRONG = "wrong password or damaged file"


def _record(name: str) -> dict[str, Any]:
    return next(r for r in RECORDS if r["name"] == name)


def _secret(rec: dict[str, Any]) -> dict[str, Any]:
    """The password or key the engine was given, as read_gdec/write_gdec keywords."""
    p = rec["params"]
    return {"password": p["password"]} if "password" in p else {"key": bytes.fromhex(p["key_hex"])}


def _version(rec: dict[str, Any]) -> int:
    return 3 if rec["engine"].startswith("godot-3") else 4


def _dialect(rec: dict[str, Any]) -> str:
    return f"godot{_version(rec)}"


def _frames(value_hexes: list[str]) -> bytes:
    """What store_var writes for these engine-encoded values: u32 LE length + the bytes, each."""
    return b"".join(struct.pack("<I", len(b)) + b for b in map(bytes.fromhex, value_hexes))


def _file(rec: dict[str, Any]) -> bytes:
    return bytes.fromhex(rec["file_hex"])


# -- keys ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("password", "key"), [
    ("", b"d41d8cd98f00b204e9800998ecf8427e"),
    ("hunter2", b"2ab96390c7dbe3439de74d0c9b0b1767"),
    (UNICODE_PASSWORD, b"d557047b7b2424212b983cbde3afb6ac"),  # research 2.1, from Godot 3.2.3's md5_text()
])
def test_key_from_password_worked_examples(password: str, key: bytes) -> None:
    assert key_from_password(password) == key


@pytest.mark.parametrize("rec", [r for r in RECORDS if "password" in r["params"]], ids=lambda r: r["name"])
def test_key_from_password_matches_engine_md5_text(rec: dict[str, Any]) -> None:
    p = rec["params"]
    assert p["password"].encode("utf-8").hex() == p["password_utf8_hex"]
    assert key_from_password(p["password"]) == p["derived_key_ascii"].encode("ascii")


def test_key_from_password_refuses_lone_surrogates() -> None:
    with pytest.raises(InvalidKeyError):
        key_from_password("a\ud800")


def test_parse_key() -> None:
    assert parse_key(KEY_0TO31.hex()) == KEY_0TO31
    assert parse_key(" " + KEY_0TO31.hex().upper() + "\n") == KEY_0TO31
    assert parse_key("0123456789abcdef0123456789abcdef") == b"0123456789abcdef0123456789abcdef"
    # 32 hex digits are 32 ASCII characters, not a 16-byte key: Godot only takes 32-byte keys.
    assert parse_key("00" * 16) == b"0" * 32
    for bad in ("", "00" * 15, "zz" * 32, "00" * 33, "é" * 32, "\t" * 32):
        with pytest.raises(InvalidKeyError):
            parse_key(bad)


@pytest.mark.parametrize("key", [b"", bytes(16), bytes(31), bytes(33), "0" * 32])
def test_unusable_keys_are_refused(key: Any) -> None:
    data = _file(_record("g3_enc_key_sha256"))
    with pytest.raises(InvalidKeyError):
        read_gdec(data, key=key)
    with pytest.raises(InvalidKeyError):
        write_gdec(b"", GdecInfo(), key=key)


def test_password_and_key_together_are_refused() -> None:
    with pytest.raises(InvalidKeyError, match="not both"):
        read_gdec(_file(_record("g3_enc_key_sha256")), key=KEY_SHA256, password="x")
    with pytest.raises(InvalidKeyError):
        write_gdec(b"", GdecInfo())


def test_keys_as_bytearray_and_memoryview() -> None:
    rec = _record("g3_enc_key_sha256")
    for key in (bytearray(KEY_SHA256), memoryview(KEY_SHA256)):
        assert read_gdec(_file(rec), key=key)[0] == _frames(rec["value_hex"])


# -- every engine file ---------------------------------------------------------------------------------


def test_fixture_inventory() -> None:
    """The fixtures this file is judged by (the research keeps some back to check us later)."""
    assert sum(_version(r) == 3 for r in RECORDS) >= 6
    assert sum(_version(r) == 4 for r in RECORDS) >= 7
    assert any(r["params"].get("password") == "" for r in RECORDS)
    assert any("key_hex" in r["params"] for r in RECORDS)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_engine_file_decrypts_to_engine_plaintext(rec: dict[str, Any]) -> None:
    plain, info = read_gdec(_file(rec), **_secret(rec))
    assert info.version == _version(rec)
    assert info.magic and not info.big_endian
    if info.version == 4:
        assert info.iv == _file(rec)[28:44]
        if rec["params"].get("iv_source") == "given":
            assert info.iv.hex() == rec["params"]["iv_hex"]
    if rec.get("payload") == "configfile_text":
        # ConfigFile.save_encrypted_pass: the engine's ConfigFile text (its MD5, checked by read_gdec,
        # is the engine's); the engine read this `pos` value back.
        text = plain.decode("utf-8")
        assert text.startswith("[player]\n")
        assert f"\npos={rec['readback'][0]}\n" in text
        return
    # store_var frames of the engine's own var_to_bytes output, value for value.
    assert plain == _frames(rec["value_hex"])
    expected = [gf.loads(bytes.fromhex(h), _dialect(rec)) for h in rec["value_hex"]]
    assert list(iter_framed(plain, _dialect(rec))) == expected


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_rewrite_reproduces_engine_file(rec: dict[str, Any]) -> None:
    plain, info = read_gdec(_file(rec), **_secret(rec))
    assert write_gdec(plain, info, **_secret(rec)) == _file(rec)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_engine_file_with_key_of_its_password(rec: dict[str, Any]) -> None:
    secret = _secret(rec)
    key = key_from_password(secret["password"]) if "password" in secret else secret["key"]
    assert read_gdec(_file(rec), key=key)[0] == read_gdec(_file(rec), **secret)[0]


@pytest.mark.parametrize("rec", [r for r in RECORDS if _version(r) == 4], ids=lambda r: r["name"])
def test_godot4_without_magic_as_in_pcks(rec: dict[str, Any]) -> None:
    bare = _file(rec)[4:]
    plain, info = read_gdec(bare, magic=False, **_secret(rec))
    assert plain == read_gdec(_file(rec), **_secret(rec))[0]
    assert info.version == 4 and not info.magic
    assert write_gdec(plain, info, **_secret(rec)) == bare
    with pytest.raises(gf.DecodeError, match="not a Godot encrypted file"):
        read_gdec(bare, **_secret(rec))  # never guessed


def test_is_gdec() -> None:
    assert all(is_gdec(_file(r)) for r in RECORDS)
    assert is_gdec(b"CEDG\0\0\0\1") and not is_gdec(b"GDE") and not is_gdec(b"GCPF....")


# -- the worked examples of the research (containers.md 2.2 and 2.3) ----------------------------------


def test_worked_example_godot3() -> None:
    plain = bytes.fromhex("0c000000" "04000000" "01000000" "78000000")  # store_var("x")
    expected = bytes.fromhex("47444543" "01000000" "69cb33b6171eea4058bb0bcf046a3d39" "1000000000000000"
                             "c0301a15cab1e18b9da7219807cce515")
    assert write_gdec(plain, GdecInfo.for_version(3), key=KEY_SHA256) == expected
    assert expected == _file(_record("g3_enc_key_sha256"))
    assert read_gdec(expected, key=KEY_SHA256) == (plain, GdecInfo(3))


def test_worked_example_godot4() -> None:
    plain = bytes.fromhex("0c000000" "04000000" "01000000" "78000000")
    expected = bytes.fromhex("47444543" "69cb33b6171eea4058bb0bcf046a3d39" "1000000000000000"
                             "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf" "c965e9c670bc0b5c062711e8381151cf")
    assert write_gdec(plain, GdecInfo.for_version(4, iv=IV_A0), key=KEY_SHA256) == expected
    assert expected == _file(_record("g4_enc_key_sha256_iv"))
    assert read_gdec(expected, key=KEY_SHA256) == (plain, GdecInfo(4, iv=IV_A0))


def test_worked_example_empty_godot3_file() -> None:
    expected = bytes.fromhex("47444543" "01000000" "d41d8cd98f00b204e9800998ecf8427e" "0000000000000000")
    assert write_gdec(b"", GdecInfo(3), password="hunter2") == expected == _file(_record("g3_enc_pass_nothing"))
    assert read_gdec(expected, password="anything") == (b"", GdecInfo(3))  # nothing to decrypt: MD5 of b""


def test_godot3_big_endian_header() -> None:
    # research 2.4: after File.endian_swap = true the header reads 43 45 44 47 00 00 00 01 ... (the
    # engine-made file is checked by test_godot3_engine_round_trip)
    plain = _frames(_record("g3_enc_key_sha256")["value_hex"])
    data = write_gdec(plain, GdecInfo(3, big_endian=True), key=KEY_SHA256)
    assert data[:8] == bytes.fromhex("4345444700000001")
    assert data[8:24] == hashlib.md5(plain).digest()
    assert data[24:32] == struct.pack(">Q", len(plain))
    assert data[32:] == _file(_record("g3_enc_key_sha256"))[32:]  # the ciphertext does not change
    assert read_gdec(data, key=KEY_SHA256) == (plain, GdecInfo(3, big_endian=True))


# -- refusals -------------------------------------------------------------------------------------------


# An empty plaintext has nothing to decrypt, so every key "works" (its MD5 is MD5(b"")), in the engines too.
@pytest.mark.parametrize("rec", [r for r in RECORDS if r["value_hex"] or r.get("payload")], ids=lambda r: r["name"])
def test_wrong_password(rec: dict[str, Any]) -> None:
    data = _file(rec)
    md5_at = 8 if _version(rec) == 3 else 4
    for kw in ({"password": "hunter3"}, {"key": bytes(32)}, {"password": UNICODE_PASSWORD}):
        with pytest.raises(WrongPasswordError) as e:
            read_gdec(data, **kw)
        assert e.value.reason == WRONG and WRONG in str(e.value)
        assert e.value.offset == md5_at
        assert isinstance(e.value, gf.DecodeError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_damaged_bytes_never_give_other_plaintext(rec: dict[str, Any]) -> None:
    data, secret = _file(rec), _secret(rec)
    plain = read_gdec(data, **secret)[0]
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x01
        try:
            got = read_gdec(bytes(bad), **secret)[0]
        except gf.DecodeError:
            continue
        # Only the zero padding of Godot 4's last block can change unnoticed (CFB, cut at the length).
        assert got == plain, i


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_missing_password_says_encrypted(rec: dict[str, Any]) -> None:
    with pytest.raises(PasswordRequiredError) as e:
        read_gdec(_file(rec))
    text = str(e.value)
    assert f"Godot {_version(rec)}" in text and "encrypted" in text
    assert "--password" in text and "--key" in text
    assert e.value.versions == (_version(rec),)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
@pytest.mark.parametrize("with_key", [True, False])
def test_every_cut_point_is_a_decode_error(rec: dict[str, Any], with_key: bool) -> None:
    data = _file(rec)
    secret = _secret(rec) if with_key else {}
    for cut in range(len(data)):
        with pytest.raises(gf.DecodeError) as e:
            read_gdec(data[:cut], **secret)
        assert not isinstance(e.value, PasswordRequiredError), cut  # refused before asking for a key


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_lying_length_fields(rec: dict[str, Any]) -> None:
    data, secret = _file(rec), _secret(rec)
    at = 24 if _version(rec) == 3 else 20
    (n,) = struct.unpack_from("<Q", data, at)
    for claim in (n + 16, n + 4096, 2**31, 2**32 + n, 2**63, 2**64 - 1):
        bad = data[:at] + struct.pack("<Q", claim) + data[at + 8:]
        with pytest.raises(gf.DecodeError) as e:
            read_gdec(bad, **secret)
        assert e.value.offset == at and "length field" in e.value.reason, claim
    for claim in {max(n - 1, 0), n - n % 16, 0} - {n}:
        bad = data[:at] + struct.pack("<Q", claim) + data[at + 8:]
        with pytest.raises(WrongPasswordError):  # fits the file, fails the MD5
            read_gdec(bad, **secret)


@pytest.mark.parametrize("mode", [0, 2, 0x01000000, 2**32 - 1])
def test_godot3_mode_other_than_1(mode: int) -> None:
    data = _file(_record("g3_enc_pass_hunter2"))
    bad = data[:4] + struct.pack("<I", mode) + data[8:]
    with pytest.raises(gf.DecodeError) as e:
        read_gdec(bad, password="hunter2")
    assert e.value.offset == 4 and "mode" in e.value.reason


@pytest.mark.parametrize("data", [b"", b"G", b"GDE", b"GDEC", b"CEDG" + bytes(20), b"GCPF" + bytes(60),
                                  b"\0" * 100, b"ECFG" + bytes(40)])
def test_not_encrypted_or_too_short(data: bytes) -> None:
    with pytest.raises(gf.DecodeError):
        read_gdec(data, key=KEY_0TO31)
    with pytest.raises(gf.DecodeError):
        read_gdec(data, key=KEY_0TO31, magic=False)


@pytest.mark.parametrize(("name", "at"), [("g3_enc_key_sha256", 24), ("g4_enc_key_sha256_iv", 20)])
def test_huge_length_is_refused_before_allocating(name: str, at: int) -> None:
    data = _file(_record(name))
    data = (data[:at] + struct.pack("<Q", 2**63) + data[at + 8:])[:48]  # a 48-byte file claiming 2^63 bytes
    tracemalloc.start()
    try:
        with pytest.raises(gf.DecodeError) as e:
            read_gdec(data, key=KEY_SHA256)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e.value.offset == at
    assert peak < 64 * 1024, f"{peak} bytes allocated to refuse a 48-byte file"


def test_max_size() -> None:
    data = _file(_record("g4_enc_key_0to31_iv"))
    assert read_gdec(data, key=KEY_0TO31, max_size=len(data))[0]
    with pytest.raises(gf.DecodeError, match="max_size") as e:
        read_gdec(data, key=KEY_0TO31, max_size=len(data) - 1)
    assert e.value.offset == 0


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_trailing_bytes_are_ignored_like_the_engine(rec: dict[str, Any]) -> None:
    plain, info = read_gdec(_file(rec), **_secret(rec))
    assert read_gdec(_file(rec) + b"\0" * 16 + b"junk", **_secret(rec)) == (plain, info)


def test_file_fitting_both_layouts() -> None:
    """A crafted header that fits Godot 3 (n = 0) and Godot 4 (n = 16) alike: the key must decide.

    Engine files cannot be ambiguous (a Godot 4 reading of a Godot 3 length is at least 2^32
    unless n is 0), so neither MD5 matches here; the exact-size layout (Godot 4) is reported.
    """
    data = (b"GDEC" + struct.pack("<I", 1) + bytes(12) + struct.pack("<I", 16) + struct.pack("<Q", 0)
            + bytes(12) + bytes(16))
    assert len(data) == 60
    with pytest.raises(PasswordRequiredError, match="Godot 3 or 4") as e:
        read_gdec(data)
    assert e.value.versions == (3, 4)
    with pytest.raises(WrongPasswordError) as w:
        read_gdec(data, key=KEY_0TO31)
    assert w.value.offset == 4


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([b"GDEC", b"CEDG", b""]), st.binary(max_size=120), st.booleans())
def test_random_bytes_give_only_decode_errors(head: bytes, tail: bytes, magic: bool) -> None:
    try:
        read_gdec(head + tail, key=KEY_0TO31, magic=magic)
    except gf.DecodeError:
        pass


# -- writing, round trips, migration ------------------------------------------------------------------


def test_gdec_info_is_checked() -> None:
    with pytest.raises(ValueError):
        GdecInfo(version=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        GdecInfo(3, iv=IV_A0)
    with pytest.raises(ValueError):
        GdecInfo(3, magic=False)
    with pytest.raises(ValueError):
        GdecInfo(4, big_endian=True)
    with pytest.raises(ValueError):
        GdecInfo(4, iv=bytes(15))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        GdecInfo().version = 3  # type: ignore[misc]
    assert GdecInfo.for_version(4) == GdecInfo(4, iv=None, magic=True)


def test_fresh_iv_per_write() -> None:
    a = write_gdec(b"same", GdecInfo.for_version(4), password="hunter2")
    b = write_gdec(b"same", GdecInfo.for_version(4), password="hunter2")
    assert a[:28] == b[:28] and a[28:44] != b[28:44]
    assert read_gdec(a, password="hunter2")[0] == read_gdec(b, password="hunter2")[0] == b"same"


@pytest.mark.parametrize("rec", [r for r in RECORDS if _version(r) == 3], ids=lambda r: r["name"])
def test_godot3_file_migrated_to_godot4_layout(rec: dict[str, Any]) -> None:
    plain, _ = read_gdec(_file(rec), **_secret(rec))
    new = write_gdec(plain, GdecInfo.for_version(4), **_secret(rec))
    assert len(new) == len(_file(rec)) + 12  # no mode field, a 16-byte IV
    back, info = read_gdec(new, **_secret(rec))
    assert back == plain and info.version == 4 and info.iv == new[28:44]


def test_godot3_save_migrated_to_godot4_bytes() -> None:
    """Decrypt the 3.2.3 save, convert its frames, encrypt for 4.x: the plaintext is 4.6's own."""
    g3, g4 = _record("g3_enc_pass_hunter2"), _record("g4_enc_pass_hunter2")
    plain, _ = read_gdec(_file(g3), password="hunter2")
    frames = b"".join(dumps_framed(gf.convert_value(v, "godot3", "godot4")[0], "godot4")
                      for v in iter_framed(plain, "godot3"))
    new = write_gdec(frames, GdecInfo.for_version(4), password="hunter2")
    assert read_gdec(new, password="hunter2")[0] == read_gdec(_file(g4), password="hunter2")[0]


_secrets = st.one_of(st.binary(min_size=32, max_size=32).map(lambda k: {"key": k}),
                     st.text(max_size=20).filter(lambda s: not any(0xD800 <= ord(c) < 0xE000 for c in s))
                     .map(lambda p: {"password": p}))
_infos = st.one_of(
    st.builds(GdecInfo, version=st.just(3), big_endian=st.booleans()),
    st.builds(GdecInfo, version=st.just(4), iv=st.none() | st.binary(min_size=16, max_size=16),
              magic=st.booleans()),
)


@settings(deadline=None)
@given(st.binary(max_size=300), _infos, _secrets)
def test_write_read_round_trip(plain: bytes, info: GdecInfo, secret: dict[str, Any]) -> None:
    data = write_gdec(plain, info, **secret)
    header = 32 if info.version == 3 else 40 + 4 * info.magic
    assert len(data) == header + -(-len(plain) // 16) * 16
    back, got = read_gdec(data, magic=info.magic, **secret)
    assert back == plain
    assert attrs.evolve(got, iv=None) == attrs.evolve(info, iv=None)
    if info.iv is not None:
        assert got == info
    assert write_gdec(back, got, **secret) == data


@settings(deadline=None)
@given(st.binary(max_size=200), st.binary(min_size=32, max_size=32), st.binary(min_size=16, max_size=16))
def test_cfb_matches_an_independent_cfb128(plain: bytes, key: bytes, iv: bytes) -> None:
    """Cross-check of the ECB-built CFB-128 with the library's own CFB (where this version still has it)."""
    try:
        from cryptography.hazmat.decrepit.ciphers.modes import CFB  # type: ignore[import-not-found,unused-ignore]
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    except ImportError:
        pytest.skip("no cryptography.hazmat.decrepit CFB in this version")
    padded = plain + bytes(-len(plain) % 16)
    enc = Cipher(algorithms.AES(key), CFB(iv)).encryptor()
    assert write_gdec(plain, GdecInfo(4, iv=iv), key=key)[44:] == enc.update(padded) + enc.finalize()


# -- the live engines ----------------------------------------------------------------------------------


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
def test_godot4_engine_round_trip() -> None:
    """Godot 4.6 opens 4.x files written here and writes one (non-ASCII password) read here.

    Files go in as hex inside the script (written to user:// by the engine) and come back as hex
    on stdout.  A: the 3.2.3 save decrypted, converted and re-encrypted here with the non-ASCII
    password (``open_encrypted_with_pass``); B: raw key, fresh IV (``open_encrypted``); C: the
    engine writes ``store_var`` of its own values with that password; D: B with bytes after it,
    which the engine ignores as read_gdec does.
    """
    g3, g4 = _record("g3_enc_pass_hunter2"), _record("g4_enc_key_0to31_iv")
    plain3, _ = read_gdec(_file(g3), password="hunter2")
    migrated = b"".join(dumps_framed(gf.convert_value(v, "godot3", "godot4")[0], "godot4")
                        for v in iter_framed(plain3, "godot3"))
    file_a = write_gdec(migrated, GdecInfo.for_version(4), password=UNICODE_PASSWORD)
    file_b = write_gdec(_frames(g4["value_hex"]), GdecInfo.for_version(4), key=KEY_0TO31)
    values = "[" + ", ".join(f'bytes_to_var("{h}".hex_decode())' for h in g4["value_hex"]) + "]"
    script = f"""extends Node
func dump(tag: String, f: FileAccess) -> void:
	if f == null:
		print("@@%s FAILED %d" % [tag, FileAccess.get_open_error()])
		return
	while f.get_position() < f.get_length():
		print("@@%s %s" % [tag, var_to_bytes(f.get_var()).hex_encode()])
	f.close()
func put(path: String, hex: String) -> void:
	var w := FileAccess.open(path, FileAccess.WRITE)
	w.store_buffer(hex.hex_decode())
	w.close()
func _ready() -> void:
	var pw := "{UNICODE_PASSWORD.encode().hex()}".hex_decode().get_string_from_utf8()
	put("user://a.bin", "{file_a.hex()}")
	put("user://b.bin", "{file_b.hex()}")
	dump("A", FileAccess.open_encrypted_with_pass("user://a.bin", FileAccess.READ, pw))
	dump("B", FileAccess.open_encrypted("user://b.bin", FileAccess.READ, "{KEY_0TO31.hex()}".hex_decode()))
	put("user://d.bin", "{(file_b + b"trailing junk").hex()}")
	dump("D", FileAccess.open_encrypted("user://d.bin", FileAccess.READ, "{KEY_0TO31.hex()}".hex_decode()))
	var c := FileAccess.open_encrypted_with_pass("user://c.bin", FileAccess.WRITE, pw)
	for v in {values}:
		c.store_var(v)
	c.close()
	print("@@C " + FileAccess.get_file_as_bytes("user://c.bin").hex_encode())
	get_tree().quit()
"""
    out = oracles.godot4_run(script)
    lines = [line.split(" ", 1) for line in out.splitlines() if line.startswith("@@")]
    got = {tag: [rest for t, rest in lines if t == tag] for tag in ("@@A", "@@B", "@@C", "@@D")}
    assert got["@@A"] == g4["value_hex"], out
    assert got["@@B"] == g4["value_hex"], out
    assert got["@@D"] == g4["value_hex"], out
    [c_hex] = got["@@C"]
    engine_file = bytes.fromhex(c_hex)
    plain, info = read_gdec(engine_file, password=UNICODE_PASSWORD)
    assert plain == _frames(g4["value_hex"]) and info.version == 4
    assert write_gdec(plain, info, password=UNICODE_PASSWORD) == engine_file
    with pytest.raises(WrongPasswordError):
        read_gdec(engine_file, password="hunter2")




@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_engine_round_trip() -> None:
    """Godot 3.2.3 opens 3.x files written here (byte-swapped header too) and writes two read here.

    A: non-ASCII password, header written big-endian (read with ``endian_swap = true``); B: raw key,
    little-endian; C and D: the engine writes ``store_var`` of its own values with that password,
    with and without ``endian_swap``; D: B with bytes after it, which the engine ignores as
    read_gdec does.
    """
    g3 = _record("g3_enc_key_0to31")
    frames = _frames(g3["value_hex"])
    file_a = write_gdec(frames, GdecInfo(3, big_endian=True), password=UNICODE_PASSWORD)
    file_b = write_gdec(frames, GdecInfo(3), key=KEY_0TO31)
    values = "[" + ", ".join(f'bytes2var(unhex("{h}"))' for h in g3["value_hex"]) + "]"
    script = f"""extends SceneTree
{GD3_FILE_HELPERS}func dump(tag, f, err):
	if err != OK:
		print("@@%s FAILED %d" % [tag, err])
		return
	while f.get_position() < f.get_len():
		print("@@%s %s" % [tag, var2bytes(f.get_var()).hex_encode()])
	f.close()
func _init():
	var pw = unhex("{UNICODE_PASSWORD.encode().hex()}").get_string_from_utf8()
	put("user://a.bin", "{file_a.hex()}")
	put("user://b.bin", "{file_b.hex()}")
	var a = File.new()
	a.endian_swap = true
	dump("A", a, a.open_encrypted_with_pass("user://a.bin", File.READ, pw))
	var b = File.new()
	dump("B", b, b.open_encrypted("user://b.bin", File.READ, unhex("{KEY_0TO31.hex()}")))
	put("user://d.bin", "{(file_b + b"trailing junk").hex()}")
	var d = File.new()
	dump("D", d, d.open_encrypted("user://d.bin", File.READ, unhex("{KEY_0TO31.hex()}")))
	for swap in [false, true]:
		var c = File.new()
		c.endian_swap = swap
		c.open_encrypted_with_pass("user://c.bin", File.WRITE, pw)
		for v in {values}:
			c.store_var(v)
		c.close()
		print("@@C " + hexfile("user://c.bin"))
	quit()
"""
    out = oracles.godot3_run(script)
    lines = [line.split(" ", 1) for line in out.splitlines() if line.startswith("@@")]
    got = {tag: [rest for t, rest in lines if t == tag] for tag in ("@@A", "@@B", "@@C", "@@D")}
    assert got["@@A"] == g3["value_hex"], out
    assert got["@@B"] == g3["value_hex"], out
    assert got["@@D"] == g3["value_hex"], out
    little, swapped = (bytes.fromhex(h) for h in got["@@C"])
    assert swapped[:8] == bytes.fromhex("4345444700000001")
    for engine_file, big in ((little, False), (swapped, True)):
        plain, info = read_gdec(engine_file, password=UNICODE_PASSWORD)
        assert plain == frames and info == GdecInfo(3, big_endian=big)
        assert write_gdec(plain, info, password=UNICODE_PASSWORD) == engine_file
