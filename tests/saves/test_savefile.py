"""Save files as games write them (godot_formats.saves.savefile, gf.open, gf.load/gf.dump).

Expected values come from the engines: fixtures/containers/*.jsonl hold files written by
Godot 3.2.3 and 4.6 with the values they hold (``values``: the engine's var2str /
var_to_str; ``value_hex``: its var_to_bytes), and fixtures/godot*/stream.jsonl the
bytes of ``File.store_var`` sequences.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import oracles
import pytest
from conftest import FIXTURES, read_jsonl

import godot_formats as gf
from godot_formats.saves.savefile import AmbiguousDialectError

CONTAINERS = FIXTURES / "containers"
u = struct.Struct("<I").pack


def _records(engine: str, *kinds: str) -> list[dict[str, Any]]:
    return [r for r in read_jsonl(CONTAINERS / f"{engine}_containers.jsonl") if r["container"] in kinds]


def _engine_values(record: dict[str, Any], dialect: str) -> list[Any]:
    return [gf.loads(bytes.fromhex(h), dialect, allow_objects=True) for h in record["value_hex"]]


# -- framing: one or many records, either byte order, slack, base64 ------------------------

@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_plain_and_base64_files_open_to_the_engines_values(engine: str) -> None:
    for r in _records(engine, "plain", "base64"):
        data = bytes.fromhex(r["file_hex"])
        if r["name"].endswith("frame_truncated"):
            continue  # below
        sf = gf.open(data, allow_objects=True, dialect=engine if r["value_hex"] else None)
        if r["value_hex"]:
            assert [gf.dumps(v, engine, allow_objects=True) for v in sf.values] == \
                [bytes.fromhex(h) for h in r["value_hex"]], r["name"]
        assert sf.to_bytes() == data, r["name"]  # written back as it was


def test_slack_and_big_endian_frames() -> None:
    for engine in ("godot3", "godot4"):
        by_name = {r["name"]: r for r in _records(engine, "plain")}
        slack = by_name[f"{engine[:1]}{engine[-1]}_frame_slack"]
        sf = gf.open(bytes.fromhex(slack["file_hex"]))
        assert sf.values == [7, 5] and sf.container == "store_var" and sf.byteorder == "little"
        big = by_name[f"{engine[:1]}{engine[-1]}_frame_{'endian_swap' if engine == 'godot3' else 'big_endian'}"]
        sf = gf.open(bytes.fromhex(big["file_hex"]))
        assert sf.values == [7, "hi"] and sf.byteorder == "big"
        sf.values[0] = 8  # a change rewrites that record in the same framing
        out = sf.to_bytes()
        assert out[:12] == b"\0\0\0\x08" + u(2) + u(8) and gf.open(out).values == [8, "hi"]


def test_a_cut_multi_record_save_names_the_record_and_salvages_the_rest() -> None:
    """A damaged save is diagnosed as damaged (not "unknown type id 176"), and what is intact recovered."""
    frames = b"".join(u(len(p)) + p for p in (gf.dumps("first", "godot3"), gf.dumps([1, 2, 3], "godot3")))
    long = gf.dumps("x" * 1190, "godot3")
    data = frames + u(len(long)) + long[:596]
    with pytest.raises(gf.DecodeError, match=r"record 3: frame of 1200 bytes is cut after 596 byte\(s\).*"
                                             r"records 1 to 2 are intact") as info:
        gf.open(data)
    assert info.value.offset == len(frames)
    sf = gf.open(data, salvage=True)
    assert sf.values == ["first", [1, 2, 3]] and "cut after 596" in str(sf.damage)


def test_engine_truncated_frame() -> None:
    r = {x["name"]: x for x in _records("godot4", "plain")}["g4_frame_truncated"]
    with pytest.raises(gf.DecodeError, match="frame of 100 bytes is cut after 8"):
        gf.open(bytes.fromhex(r["file_hex"]))


def test_ambiguous_files_are_refused_unless_a_dialect_is_given() -> None:
    """store_var(Color(1,0,0)) dumps as a Color, not a Plane."""
    data = u(20) + gf.dumps(gf.Color(1, 0, 0), "godot3")
    with pytest.raises(AmbiguousDialectError, match="ambiguous: .*godot3.*godot4"):
        gf.open(data)
    assert gf.open(data, dialect="godot3").values == [gf.Color(1, 0, 0)]
    assert gf.open(data, dialect="godot4").values == [gf.Plane(gf.Vector3(1, 0, 0), 1)]
    # Readings that agree are no ambiguity: the value does not depend on the choice.
    assert gf.open(u(8) + u(2) + u(7)).values == [7]


def test_ambiguity_names_the_listed_versions_first() -> None:
    """Godot 2 reads a Color as Godot 3 does (ids 0-14 are shared): it is one more reading, named last."""
    data = u(20) + gf.dumps(gf.Color(1, 0, 0), "godot3")
    with pytest.raises(AmbiguousDialectError) as info:
        gf.open(data)
    names = info.value.candidates
    assert names[-1] == "godot2" and names.index("godot3") < names.index("godot4")
    assert str(info.value).startswith("at byte 0: ambiguous: godot3 and ")
    assert gf.open(data, dialect="godot2").values == [gf.Color(1, 0, 0)]


def _godot2_engine_variants() -> list[bytes]:
    """The Variants of an engine.cfb Godot 2.1.6 exported: "ECFG", a count, then per setting a
    u32-length key and a u32-length ``encode_variant`` (Godot 2.1 core/globals.cpp)."""
    record = read_jsonl(CONTAINERS / "godot2_engine_cfb.jsonl")[-1]
    data = bytes.fromhex(record["file_hex"])
    pos, out = 8, []
    for _ in range(struct.unpack_from("<I", data, 4)[0]):
        pos += 4 + struct.unpack_from("<I", data, pos)[0]
        n = struct.unpack_from("<I", data, pos)[0]
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_a_store_var_file_of_godot2_variants_opens_as_godot2(byteorder: str) -> None:
    """Godot 2.1's ``File.store_var`` is ``store_32`` of the length, then ``encode_variant``:
    records of the engine's own Variants (InputEvent Arrays, StringArrays) only Godot 2 reads."""
    variants = _godot2_engine_variants()
    prefix = struct.Struct("<I" if byteorder == "little" else ">I")
    data = b"".join(prefix.pack(len(v)) + v for v in variants)
    sf = gf.open(data)
    assert (sf.dialect.name, sf.container, sf.byteorder) == ("godot2", "store_var", byteorder)
    assert len(sf.values) == len(variants)
    assert all(gf.dumps(v, "godot2") == blob for v, blob in zip(sf.values, variants))
    assert sf.to_bytes() == data
    # Each record alone: those with ids 0-14 read the same in Godot 3 and 4, so "auto" reads them.
    assert [gf.loads(blob, "auto") for blob in variants] == sf.values


# -- gf.load / gf.dump are get_var / store_var ---------------------------------------------

@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_dump_writes_what_store_var_writes(engine: str) -> None:
    rec = {r["name"]: r for r in read_jsonl(FIXTURES / engine / "stream.jsonl")}["file_store_var_sequence"]
    buf = io.BytesIO()
    for v in ("hi", 7, [1, 2.5, "x"], None):
        gf.dump(v, buf, engine)
    assert buf.getvalue().hex() == rec["hex"]
    buf.seek(0)
    assert [gf.load(buf, engine) for _ in range(4)] == ["hi", 7, [1, 2.5, "x"], None]
    with pytest.raises(EOFError):
        gf.load(buf, engine)


def test_load_reads_a_real_store_var_save() -> None:
    """gf.load on a real store_var save reads it, or says what to do."""
    r = {x["name"]: x for x in _records("godot3", "plain")}["g3_frame_slack"]
    buf = io.BytesIO(bytes.fromhex(r["file_hex"]))
    assert [gf.load(buf, "godot3"), gf.load(buf, "godot3")] == [7, 5]


def test_loads_auto_detects_or_says_ambiguous() -> None:
    for engine in ("godot3", "godot4"):
        [save] = [r for r in _records(engine, "base64")]
        blob = bytes.fromhex(save["value_hex"][0])
        assert gf.loads(blob, "auto") == gf.loads(blob, engine)
    with pytest.raises(AmbiguousDialectError):
        gf.loads(gf.dumps(gf.Color(1, 0, 0), "godot3"), "auto")
    # An int, a String: Godot 4, 3 and 2 read the same value, so "auto" reads it.
    for value in (7, "hi", gf.Vector3(1, 2, 3)):
        blob = gf.dumps(value, "godot3")
        assert {"godot2", "godot3"} <= {c.dialect for c in gf.detect(blob) if c.ambiguous}
        assert gf.loads(blob, "auto") == value


# -- writing: never over a file unasked, atomically ------------------------------------------

def test_save_refuses_to_replace_another_file(tmp_path: Path) -> None:
    src = tmp_path / "a.sav"
    other = tmp_path / "b.sav"
    src.write_bytes(u(8) + u(2) + u(7))
    other.write_bytes(b"keep me")
    sf = gf.open(src)
    sf.values[0] = 9
    with pytest.raises(FileExistsError):
        sf.save(other)
    assert other.read_bytes() == b"keep me"
    sf.save(other, overwrite=True)
    assert gf.open(other).values == [9]
    sf.save()  # back where it came from: that is what save() without a file means
    assert gf.open(src).values == [9]


def test_layers_are_described() -> None:
    sf = gf.open(u(8) + u(2) + u(7) + u(12) + gf.dumps("hi", "godot4"), dialect="godot4")
    assert sf.layers == {"container": "store_var", "dialect": "godot4", "byteorder": "little", "records": 2}
    json.dumps(sf.layers)


# -- encrypted saves -----------------------------------------------------------------------

def _open_kwargs(record: dict[str, Any]) -> dict[str, Any]:
    p = record["params"]
    return {"password": p["password"]} if "password" in p else {"key": bytes.fromhex(p["key_hex"])}


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_every_engine_encrypted_file_opens_and_rewrites_exactly(engine: str) -> None:
    for r in _records(engine, "encrypted"):
        data = bytes.fromhex(r["file_hex"])
        sf = gf.open(data, allow_objects=True, **_open_kwargs(r))
        assert sf.encryption.version == int(engine[-1]), r["name"]
        if sf.kind == "configfile":  # ConfigFile.save_encrypted_pass: a ConfigFile document (issue 41)
            assert sf.text.startswith("[player]")
        else:
            assert [gf.dumps(v, engine) for v in sf.values] == [bytes.fromhex(h) for h in r["value_hex"]], r["name"]
        assert sf.to_bytes() == data, r["name"]


def test_a_godot3_encrypted_save_migrates_to_what_godot4_writes() -> None:
    """Decrypt (ECB), convert, encrypt for Godot 4 (CFB, fresh IV) with the same password: the records
    are the bytes Godot 4.6 itself wrote for the same values (its own encrypted save of them)."""
    from godot_formats.layers.encryption import read_gdec
    r3 = {r["name"]: r for r in _records("godot3", "encrypted")}["g3_enc_pass_hunter2"]
    r4 = {r["name"]: r for r in _records("godot4", "encrypted")}["g4_enc_pass_hunter2"]
    sf = gf.open(bytes.fromhex(r3["file_hex"]), password="hunter2")
    converted, losses = sf.convert("godot4")
    assert losses == []
    out = converted.to_bytes()
    plaintext, info = read_gdec(out, password="hunter2")
    assert info.version == 4 and len(info.iv) == 16
    assert [gf.dumps(v, "godot4") for v in gf.open(out, password="hunter2").values] == \
        [bytes.fromhex(h) for h in r4["value_hex"]]
    again = sf.to_bytes(dialect="godot4")
    assert again[28:44] != out[28:44]  # a fresh IV each time: never one IV for two plaintexts


def test_wrong_or_missing_password_says_so() -> None:
    from godot_formats.layers.encryption import PasswordRequiredError, WrongPasswordError
    r = {r["name"]: r for r in _records("godot3", "encrypted")}["g3_enc_pass_hunter2"]
    data = bytes.fromhex(r["file_hex"])
    with pytest.raises(WrongPasswordError, match="wrong password or damaged file"):
        gf.open(data, password="hunter3")
    with pytest.raises(PasswordRequiredError, match="password"):
        gf.open(data)


# -- the real Godot 4.6 reads what a migration wrote -----------------------------------------


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
def test_godot4_reads_migrated_godot3_saves_as_its_own_values() -> None:
    """Godot 3.2.3's encrypted save and its compressed saves (every mode), migrated with
    ``SaveFile.save(dialect="godot4")``, opened by Godot 4.6 with ``open_encrypted_with_pass`` /
    ``open_compressed`` and read with ``get_var``: the engine's ``var_to_bytes`` of what it read
    equals its own ``var_to_bytes`` of the same save (fixtures g4_*_save, g4_enc_pass_hunter2)."""
    g3 = {r["name"]: r for r in read_jsonl(CONTAINERS / "godot3_containers.jsonl")}
    g4 = {r["name"]: r for r in read_jsonl(CONTAINERS / "godot4_containers.jsonl")}
    files = {"enc": gf.open(bytes.fromhex(g3["g3_enc_pass_hunter2"]["file_hex"]), password="hunter2")}
    for mode in ("m0", "m1", "m2", "m3"):
        files[mode] = gf.open(bytes.fromhex(g3[f"g3_cmp_{mode}_save"]["file_hex"]))
    migrated = {tag: sf.to_bytes(dialect="godot4") for tag, sf in files.items()}
    assert all(data[:4] == (b"GDEC" if tag == "enc" else b"GCPF") for tag, data in migrated.items())
    opens = "\n".join(
        f'\tput("user://{tag}.bin", "{data.hex()}")\n'
        + (f'\tdump("{tag}", FileAccess.open_encrypted_with_pass("user://{tag}.bin", FileAccess.READ, "hunter2"))'
           if tag == "enc" else
           f'\tdump("{tag}", FileAccess.open_compressed("user://{tag}.bin", FileAccess.READ, {tag[1]}))')
        for tag, data in migrated.items())
    script = f"""extends Node
func dump(tag: String, f: FileAccess) -> void:
\tif f == null:
\t\tprint("@@%s FAILED %d" % [tag, FileAccess.get_open_error()])
\t\treturn
\twhile f.get_position() < f.get_length():
\t\tprint("@@%s %s" % [tag, var_to_bytes(f.get_var()).hex_encode()])
\tf.close()
func put(path: String, hex: String) -> void:
\tvar w := FileAccess.open(path, FileAccess.WRITE)
\tw.store_buffer(hex.hex_decode())
\tw.close()
func _ready() -> void:
{opens}
\tget_tree().quit()
"""
    out = oracles.godot4_run(script)
    got: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("@@"):
            tag, rest = line[2:].split(" ", 1)
            got.setdefault(tag, []).append(rest)
    assert got["enc"] == g4["g4_enc_pass_hunter2"]["value_hex"], out
    for mode in ("m0", "m1", "m2", "m3"):
        assert got[mode] == g4[f"g4_cmp_{mode}_save"]["value_hex"], (mode, out)


# -- compressed saves and bare compressed streams --------------------------------------------

@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_every_engine_compressed_file_opens_and_rewrites_exactly(engine: str) -> None:
    for r in _records(engine, "compressed"):
        data = bytes.fromhex(r["file_hex"])
        sf = gf.open(data, dialect=engine)
        assert sf.compression.mode == int(r["params"]["mode"]), r["name"]
        assert [gf.dumps(v, engine) for v in sf.values] == [bytes.fromhex(h) for h in r["value_hex"]], r["name"]
        assert sf.to_bytes() == data, r["name"]


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_bare_compressed_streams_open_given_their_mode(engine: str) -> None:
    for r in _records(engine, "raw_compressed"):
        sf = gf.open(bytes.fromhex(r["file_hex"]), compressed=int(r["params"]["mode"]), dialect=engine)
        assert sf.container == "var_to_bytes"
        assert [gf.dumps(v, engine) for v in sf.values] == [bytes.fromhex(h) for h in r["value_hex"]], r["name"]


# -- every layer is untrusted ------------------------------------------------------------------

def _all_files() -> list[tuple[str, bytes, dict[str, Any]]]:
    out = []
    for engine in ("godot3", "godot4"):
        for r in read_jsonl(CONTAINERS / f"{engine}_containers.jsonl"):
            kw = _open_kwargs(r) if r["container"] == "encrypted" else {}
            out.append((r["name"], bytes.fromhex(r["file_hex"]), kw))
    return out


@pytest.mark.slow
def test_cut_and_flipped_files_give_only_the_librarys_errors() -> None:
    """Every engine file, cut at 40 points and with single bytes changed at 40 places: a value or one of
    our errors (a ValueError subclass), never another exception, and never a hang."""
    for _name, data, kw in _all_files():
        cuts = sorted({len(data) * i // 40 for i in range(40)})
        variants = [data[:c] for c in cuts]
        variants += [data[:p] + bytes([data[p] ^ 0x5A]) + data[p + 1:] for p in cuts if p < len(data)]
        for blob in variants:
            try:
                gf.open(blob, allow_objects=True, **kw)
            except gf.GodotFormatsError:
                pass
            except (AmbiguousDialectError, EOFError):
                pass


def test_layers_refuse_lying_sizes_before_allocating() -> None:
    import tracemalloc
    lying = [
        b"GCPF" + u(1) + u(4096) + u(0xFFFFFFFF) + u(10) + b"\0" * 10 + b"GCPF",  # 4 GiB claimed
        b"GDEC" + u(1) + b"\0" * 16 + struct.pack("<Q", 2**62),  # Godot 3 layout, 2**62 bytes claimed
        b"GDEC" + b"\0" * 16 + struct.pack("<Q", 2**62) + b"\0" * 16 + b"\0" * 16,
        u(0x7FFFFFF0) + u(2),  # a store_var frame claiming 2 GiB
    ]
    for blob in lying:
        tracemalloc.start()
        try:
            with pytest.raises(gf.DecodeError):
                gf.open(blob, password="x")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, (blob[:8], peak)


def test_a_decompression_bomb_is_refused_by_max_size() -> None:
    import tracemalloc
    import zlib
    small = zlib.compress(b"\0" * 4096, 9)
    total = 16 << 20  # 16 MiB of zeros in 4097 well-formed blocks: an 80 KB file
    blocks = total // 4096 + 1
    data = b"GCPF" + u(1) + u(4096) + u(total) + u(len(small)) * (blocks - 1) + u(8) + small * (blocks - 1) \
        + zlib.compress(b"") + b"GCPF"
    with pytest.raises(gf.DecodeError, match="max_size"):
        gf.open(data, max_size=1 << 20)
    bomb = zlib.compress(b"\0" * (32 << 20), 9)  # one block that inflates to 32 MiB instead of 12 bytes
    data = b"GCPF" + u(1) + u(4096) + u(12) + u(len(bomb)) + bomb + b"GCPF"
    tracemalloc.start()
    try:
        with pytest.raises(gf.DecodeError):
            gf.open(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


# -- project settings ------------------------------------------------------------------------

def test_every_project_settings_file_opens_in_its_engines_dialect_and_rewrites_exactly() -> None:
    files = [(r, "godot3") for r in _records("godot3", "project_binary")]
    files += [(r, "godot4") for r in _records("godot4", "project_binary")]
    files += [(r, "godot2") for r in read_jsonl(CONTAINERS / "godot2_engine_cfb.jsonl")]
    assert len(files) >= 8
    for r, engine in files:
        data = bytes.fromhex(r["file_hex"])
        sf = gf.open(data)
        assert sf.container == "project_settings" and sf.dialect.name == engine, r["name"]
        settings = sf.values[0]
        assert isinstance(settings, dict) and len(settings) >= 7
        assert sf.to_bytes() == data, r["name"]


def test_the_323_key_length_bug_is_kept_as_read_and_fixed_by_a_change() -> None:
    r = {x["name"]: x for x in _records("godot3", "project_binary")}["g3_project_binary_unicode_key"]
    data = bytes.fromhex(r["file_hex"])
    sf = gf.open(data)
    key = next(k for k in sf.values[0] if not k.isascii())
    assert sf.to_bytes() == data
    sf.values[0][key] = "changed"
    fixed = sf.to_bytes()
    raw = key.encode()
    assert struct.pack("<I", len(raw)) + raw in fixed  # the length in bytes, as 3.3.3 and later write it
    assert gf.open(fixed).values[0][key] == "changed"
