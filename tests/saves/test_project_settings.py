"""Binary project settings (ECFG): the engines' own files read to the engines' values and written back.

Every expectation comes from engine-made files (fixtures/containers/): ``project.binary`` from
``ProjectSettings.save_custom`` in Godot 3.2.3 and 4.6 (``value_hex``: the same engine's
``var2bytes`` of each value, ``values``: its ``var2str``), and ``engine.cfb`` files exported by
Godot 2.1.1-2.1.6, whose values are in the Godot 2 dialect.
"""

from __future__ import annotations

import struct
import tracemalloc
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.layers.project_settings import EcfgInfo, read_ecfg, write_ecfg
from godot_formats.migration import convert_value

CONTAINERS = FIXTURES / "containers"
DIALECT = {"godot3_containers.jsonl": "godot3", "godot4_containers.jsonl": "godot4",
           "godot2_engine_cfb.jsonl": "godot2"}


def _records(*files: str) -> list[Any]:
    out = []
    for name in files:
        for r in read_jsonl(CONTAINERS / name):
            if r["container"] == "project_binary":
                out.append(pytest.param(DIALECT[name], r, id=r["name"]))
    return out


PROJECT_BINARY = _records("godot3_containers.jsonl", "godot4_containers.jsonl")
ENGINE_CFB = _records("godot2_engine_cfb.jsonl")
ALL_FILES = PROJECT_BINARY + ENGINE_CFB


def _file(record: dict[str, Any]) -> bytes:
    return bytes.fromhex(record["file_hex"])


def test_the_fixtures_are_there() -> None:
    names = {p.values[1]["name"] for p in ALL_FILES}  # type: ignore[index]
    assert {"g3_project_binary", "g3_project_binary_unicode_key", "g4_project_binary"} <= names
    assert len(ENGINE_CFB) >= 5


# -- Godot 3 and 4 project.binary ----------------------------------------------------------------

@pytest.mark.parametrize("dialect, record", PROJECT_BINARY)
def test_project_binary_reads_to_the_engine_values(dialect: str, record: dict[str, Any]) -> None:
    settings_, info = read_ecfg(_file(record), dialect)
    assert list(settings_) == record["keys"]
    assert list(info.keys) == record["keys"] and info.dialect == dialect
    # value_hex: the engine's var2bytes of each value; values: its var2str (same order).
    for key, engine_hex in zip(record["keys"], record["value_hex"]):
        assert gf.dumps(settings_[key], dialect, allow_objects=True).hex() == engine_hex, key
    for key, text in zip(record["keys"], record["values"]):
        assert gf.to_text(settings_[key], dialect) == text, key
    for key, text in record["settings"].items():  # what the script set
        assert gf.to_text(settings_[key], dialect) == text, key


@pytest.mark.parametrize("dialect, record", ALL_FILES)
def test_a_file_read_and_written_back_is_the_same_bytes(dialect: str, record: dict[str, Any]) -> None:
    data = _file(record)
    settings_, info = read_ecfg(data, dialect)
    assert write_ecfg(settings_, info, dialect, key_length_bug=info.key_length_bug) == data
    assert info.trailing == b""


def test_the_godot3_key_length_bug_is_read_recorded_and_fixed_on_write() -> None:
    # 3.2.3 wrote len("custom/ключ") = 11 characters, then its 15 UTF-8 bytes.
    record = next(p.values[1] for p in PROJECT_BINARY if p.id == "g3_project_binary_unicode_key")  # type: ignore[index]
    data = _file(record)
    buggy = struct.pack("<I", 11) + "custom/ключ".encode()
    assert buggy in data
    settings_, info = read_ecfg(data, "godot3")
    assert info.key_length_bug
    assert list(settings_) == record["keys"]
    assert settings_["custom/ключ"] == "значение" and settings_["zz_top"] == "level"
    for key, text in record["settings"].items():
        assert gf.to_text(settings_[key], "godot3") == text
    # Written by default as 3.3.3+ writes it: the same file with the length in bytes.
    fixed = write_ecfg(settings_, info, "godot3")
    assert fixed == data.replace(buggy, struct.pack("<I", 15) + "custom/ключ".encode())
    again, info2 = read_ecfg(fixed, "godot3")
    assert again == settings_ and not info2.key_length_bug
    # ... and with key_length_bug=True as 3.2.3 wrote it.
    assert write_ecfg(settings_, info, "godot3", key_length_bug=True) == data


def test_a_correct_file_with_a_non_ascii_key_is_not_taken_for_the_bug() -> None:
    record = next(p.values[1] for p in PROJECT_BINARY if p.id == "g4_project_binary")  # type: ignore[index]
    settings_, info = read_ecfg(_file(record), "godot4")
    assert "custom/ключ" in settings_ and not info.key_length_bug


# -- Godot 2 engine.cfb ----------------------------------------------------------------------------

def _mask_string_array_padding(blob: bytes) -> bytes:
    """A Godot 2 StringArray with its padding bytes zeroed: the 2.x encoder never writes them."""
    out = bytearray(blob)
    count = struct.unpack_from("<I", blob, 4)[0]
    pos = 8
    for _ in range(count):
        n = struct.unpack_from("<I", blob, pos)[0]
        pos += 4 + n
        pad = -n & 3
        out[pos:pos + pad] = bytes(pad)
        pos += pad
    return bytes(out)


@pytest.mark.parametrize("dialect, record", ENGINE_CFB)
def test_godot2_engine_cfb_reads(dialect: str, record: dict[str, Any]) -> None:
    settings_, info = read_ecfg(_file(record), "godot2")
    assert list(settings_) == record["keys"] and len(settings_) == 20
    kinds = {type(v) for v in settings_.values()}
    assert kinds == {str, int, bool, list, t.PackedStringArray}
    assert isinstance(settings_["display/width"], int) and isinstance(settings_["image_loader/repeat"], bool)
    for key, value in settings_.items():
        if key.startswith("input/"):
            assert value and all(isinstance(e, t.InputEvent) for e in value), key
            assert {e.type_name for e in value} <= {"KEY", "JOYSTICK_BUTTON"}
    remap = settings_["remap/all"]
    assert all(s.startswith("res://") for s in remap) and not any("\0" in s for s in remap)
    # Each value, written afresh, is the engine's bytes but for the StringArray padding it never wrote.
    for key, engine_hex in zip(record["keys"], record["value_hex"]):
        engine = bytes.fromhex(engine_hex)
        ours = gf.dumps(settings_[key], "godot2")
        if key == "remap/all":
            assert ours == _mask_string_array_padding(engine)
        else:
            assert ours == engine, key
    # The whole file without its info (every value encoded afresh): the same, masked alike.
    fresh = write_ecfg(settings_, None, "godot2")
    assert len(fresh) == len(_file(record))
    masked = _file(record).replace(bytes.fromhex(record["value_hex"][record["keys"].index("remap/all")]),
                                   _mask_string_array_padding(bytes.fromhex(
                                       record["value_hex"][record["keys"].index("remap/all")])))
    assert fresh == masked


def test_godot2_input_events_hold_the_engine_fields() -> None:
    record = next(p.values[1] for p in ENGINE_CFB if p.id == "g2_engine_cfb_211_platformer")  # type: ignore[index]
    settings_, _ = read_ecfg(_file(record), "godot2")
    key, button = settings_["input/move_left"]
    # KEY: modifier mask 0, scancode KEY_LEFT (SPKEY | 0x0F); JOYSTICK_BUTTON: index 14.
    assert key == t.InputEvent(1, 0, (0, 0x0100000F)) and key.type_name == "KEY"
    assert button == t.InputEvent(5, 0, (14,)) and button.type_name == "JOYSTICK_BUTTON"
    assert gf.dumps(key, "godot2").hex() == "13000000" "01000000" "00000000" "14000000" "00000000" "0f000001"
    assert settings_["application/name"] == "Platformer" and settings_["display/width"] == 800


def test_godot2_settings_convert_with_the_input_events_reported() -> None:
    record = next(p.values[1] for p in ENGINE_CFB if p.id == "g2_engine_cfb_216_platformer")  # type: ignore[index]
    settings_, _ = read_ecfg(_file(record), "godot2")
    for target in ("godot3", "godot4"):
        with pytest.raises(gf.ConversionError) as info:
            convert_value(settings_, "godot2", target)
        paths = {loss.path for loss in info.value.losses}
        assert '["input/move_left"][0]' in paths
        new, losses = convert_value(settings_, "godot2", target, policy="lossy")
        assert all("InputEvent" in loss.reason for loss in losses)
        assert new["input/move_left"] == [None, None] and new["display/width"] == 800
        assert new["remap/all"] == settings_["remap/all"]
        gf.dumps(new, target, allow_objects=True)


# -- writing ------------------------------------------------------------------------------------

def test_changed_and_new_settings_are_encoded_the_rest_kept() -> None:
    record = next(p.values[1] for p in ENGINE_CFB if p.id == "g2_engine_cfb_211_platformer")  # type: ignore[index]
    data = _file(record)
    settings_, info = read_ecfg(data, "godot2")
    settings_["display/width"] = 1024
    settings_["custom/é"] = "x"
    out = write_ecfg(settings_, info, "godot2")
    again, info2 = read_ecfg(out, "godot2")
    assert again == settings_ and list(again)[-1] == "custom/é"
    # remap/all was not changed: its original bytes (garbage padding and all) are still there.
    original = bytes.fromhex(record["value_hex"][record["keys"].index("remap/all")])
    assert original in out and struct.unpack_from("<I", out, 4)[0] == 21
    # Mutating a value read from the file in place is a change too.
    settings_["input/jump"].append(t.InputEvent(1, 0, (0, 32)))
    again, _ = read_ecfg(write_ecfg(settings_, info, "godot2"), "godot2")
    assert len(again["input/jump"]) == 3


def test_another_dialect_encodes_everything_afresh() -> None:
    record = next(p.values[1] for p in PROJECT_BINARY if p.id == "g3_project_binary")  # type: ignore[index]
    settings_, info = read_ecfg(_file(record), "godot3")
    out = write_ecfg(settings_, info, "godot4")
    again, _ = read_ecfg(out, "godot4")
    assert again == settings_
    assert gf.dumps(settings_["game/save/tint"], "godot4") in out  # Color is id 20 in Godot 4, 14 in Godot 3


def test_ecfg_info_travels_as_json_fields() -> None:
    record = next(p.values[1] for p in PROJECT_BINARY if p.id == "g4_project_binary")  # type: ignore[index]
    settings_, info = read_ecfg(_file(record), "godot4")
    rebuilt = EcfgInfo(info.dialect, list(info.keys), list(info.value_sizes), info.value_bytes,
                       info.key_length_bug, info.trailing)
    assert rebuilt == info and write_ecfg(settings_, rebuilt, "godot4") == _file(record)
    with pytest.raises(ValueError):
        EcfgInfo("godot4", ["a"], [5], b"1234")


def test_values_that_cannot_be_written_name_the_setting() -> None:
    with pytest.raises(gf.EncodeError) as info:
        write_ecfg({"a/b": [1, 2**40]}, None, "godot2")
    assert "'a/b'" in info.value.path and "32 bits" in info.value.reason
    with pytest.raises(gf.EncodeError):
        write_ecfg({"k": t.InputEvent(1, 0, (0, 65))}, None, "godot3")


def test_full_objects_are_written_and_read_as_inert_data() -> None:
    event = gf.Object("InputEventKey", {"resource_local_to_scene": False, "scancode": 65})
    data = write_ecfg({"input/a": {"deadzone": 0.5, "events": [event]}}, None, "godot3")
    assert read_ecfg(data, "godot3")[0]["input/a"]["events"] == [event]
    with pytest.raises(gf.DecodeError, match="entry 0 .'input/a'.*allow_objects"):
        read_ecfg(data, "godot3", allow_objects=False)


# -- hostile input ---------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("dialect, record", ALL_FILES)
def test_every_truncation_is_a_decode_error(dialect: str, record: dict[str, Any]) -> None:
    data = _file(record)
    for cut in range(len(data)):
        with pytest.raises(gf.DecodeError) as info:
            read_ecfg(data[:cut], dialect)
        assert 0 <= info.value.offset <= cut


@settings(deadline=None)
@given(index=st.integers(0, len(ALL_FILES) - 1), at=st.integers(0, 10_000), byte=st.integers(0, 255))
def test_a_changed_byte_is_read_or_refused_with_a_decode_error(index: int, at: int, byte: int) -> None:
    dialect, record = ALL_FILES[index].values  # type: ignore[misc]
    data = bytearray(_file(record))
    data[at % len(data)] = byte
    try:
        settings_, info = read_ecfg(bytes(data), dialect)
    except gf.DecodeError:
        return
    write_ecfg(settings_, info, dialect, key_length_bug=info.key_length_bug)


def _refused_with_little_memory(data: bytes, offset: int) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(gf.DecodeError) as info:
            read_ecfg(data, "godot4")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.offset == offset, info.value
    assert peak < 64 * 1024, f"{peak} bytes allocated to refuse {len(data)} bytes"


def test_lying_counts_and_lengths_are_refused_before_allocating() -> None:
    u32 = struct.Struct("<I").pack
    _refused_with_little_memory(b"ECFG" + u32(0xFFFFFFFF) + bytes(16), 4)  # entry count
    _refused_with_little_memory(b"ECFG" + u32(1) + u32(0x7FFFFFFF) + bytes(8), 8)  # key length
    _refused_with_little_memory(b"ECFG" + u32(1) + u32(1) + b"k" + u32(0xFFFFFFF0) + bytes(8), 13)  # value length
    # A value that claims 2^31-1 Array elements inside a correct value length.
    value = u32(28) + u32(0x7FFFFFFF)
    _refused_with_little_memory(b"ECFG" + u32(1) + u32(1) + b"k" + u32(len(value)) + value, 21)


def test_bad_files_name_the_entry_and_offset() -> None:
    u32 = struct.Struct("<I").pack
    with pytest.raises(gf.DecodeError, match="not a binary project settings file"):
        read_ecfg(b"GDEC" + bytes(12), "godot4")
    with pytest.raises(gf.DecodeError) as info:
        read_ecfg(b"ECFG" + u32(2) + u32(1) + b"a" + u32(8) + gf.dumps(1) + u32(1) + b"b" + u32(4) + u32(99), "godot4")
    assert info.value.offset == 34 and "entry 1 ('b')" in info.value.reason
    with pytest.raises(gf.DecodeError, match="entry 0: key is not UTF-8"):
        read_ecfg(b"ECFG" + u32(1) + u32(1) + b"\xff" + u32(8) + gf.dumps(1), "godot4")
    with pytest.raises(gf.DecodeError, match="max_size"):
        read_ecfg(b"ECFG" + bytes(100), "godot4", max_size=50)


def test_slack_and_trailing_bytes_survive_a_rewrite() -> None:
    u32 = struct.Struct("<I").pack
    # A value field with 4 bytes the engine skips after the Variant, then 3 bytes after the last entry.
    data = b"ECFG" + u32(1) + u32(1) + b"a" + u32(12) + gf.dumps(7) + b"\xde\xad\xbe\xef" + b"end"
    settings_, info = read_ecfg(data, "godot4")
    assert settings_ == {"a": 7} and info.trailing == b"end"
    assert write_ecfg(settings_, info, "godot4") == data
    settings_["a"] = 8
    assert write_ecfg(settings_, info, "godot4") == b"ECFG" + u32(1) + u32(1) + b"a" + u32(8) + gf.dumps(8) + b"end"


# -- the godot2 dialect itself (it is not in gf.dialect_names(), so the suites that loop over
# -- the listed dialects do not reach it: these are its round-trip and hostile-input checks) -------

def _godot2_values() -> st.SearchStrategy[Any]:
    import strategies

    u32s = st.integers(0, 2**32 - 1)
    events = st.sampled_from(range(10)).flatmap(lambda kind: st.builds(
        t.InputEvent, st.just(kind), u32s,
        st.lists(u32s, min_size=t.INPUT_EVENT_PAYLOAD_WORDS.get(kind, 0),
                 max_size=t.INPUT_EVENT_PAYLOAD_WORDS.get(kind, 0)).map(tuple),
        st.none() | u32s))
    images = st.builds(t.Image, u32s, u32s, u32s, u32s, st.binary(max_size=9))
    return st.one_of(strategies.values("godot2", max_leaves=8), st.lists(events | images, max_size=3))


def test_godot2_is_found_by_name_but_not_listed() -> None:
    d = gf.get_dialect("godot2")
    assert gf.get_dialect("godot2.1") is d and d.major == 2 and d.variant_max == 29
    assert "godot2" not in gf.dialect_names()  # no 2.x engine here: detect() tries it after the listed ones
    assert d.type_id("Image") == 15 and d.type_id("InputEvent") == 19 and d.type_id("PackedColorArray") == 28


@settings(deadline=None)
@given(value=_godot2_values())
def test_godot2_values_round_trip(value: Any) -> None:
    blob = gf.dumps(value, "godot2")
    decoded, end = gf.decode(blob + b"\xee" * 4, "godot2")
    assert end == len(blob)
    assert gf.dumps(decoded, "godot2") == blob


@settings(deadline=None)
@given(data=st.binary(max_size=64), objects=st.booleans())
def test_godot2_random_bytes_decode_or_raise_decode_error(data: bytes, objects: bool) -> None:
    try:
        gf.decode(data, "godot2", allow_objects=objects)
    except gf.DecodeError as e:
        assert 0 <= e.offset <= len(data)


def test_godot2_image_and_input_event_bytes() -> None:
    image = t.Image(4, 0, 1, 1, b"\x01\x02\x03")
    blob = gf.dumps(image, "godot2")
    assert blob.hex() == "0f000000" "04000000" "00000000" "01000000" "01000000" "03000000" "01020300"
    assert gf.decode(blob, "godot2") == (image, 28)
    assert gf.decode(blob[:-1], "godot2") == (image, 27)  # like a RawArray, the last padding may be missing
    for cut in range(len(blob) - 1):
        with pytest.raises(gf.DecodeError):
            gf.decode(blob[:cut], "godot2")
    with pytest.raises(gf.DecodeError, match="Image data length 4294967295"):
        gf.decode(blob[:20] + b"\xff\xff\xff\xff", "godot2")
    # An event whose size word is not what the engine writes keeps it; the payload follows the type.
    odd = bytes.fromhex("13000000" "05000000" "02000000" "63000000" "0e000000")
    event, end = gf.decode(odd, "godot2")
    assert event == t.InputEvent(5, 2, (14,), 0x63) and end == len(odd)
    assert gf.dumps(event, "godot2") == odd
    with pytest.raises(gf.DecodeError, match="JOYSTICK_BUTTON"):
        gf.decode(odd[:-1], "godot2")
    with pytest.raises(gf.EncodeError, match="payload word"):
        gf.dumps(t.InputEvent(1, 0, (65,)), "godot2")


def test_godot2_headers_and_old_forms() -> None:
    u32 = struct.Struct("<I").pack
    # The 2.x decoder compares the whole header with VARIANT_MAX: no flags, so no 64-bit int.
    with pytest.raises(gf.DecodeError, match="unknown type id"):
        gf.decode(u32(2 | 1 << 16) + bytes(8), "godot2")
    assert gf.dumps(2**31 - 1, "godot2") == u32(2) + u32(2**31 - 1)
    assert gf.dumps(0.1, "godot2") == u32(3) + struct.pack("<f", 0.1)  # REAL is 32-bit
    # RID and Object: the header alone; an Object reads as null.
    assert gf.decode(u32(18) + u32(7), "godot2", allow_objects=True) == (None, 4)
    assert gf.decode(u32(17), "godot2") == (t.RID(), 4)
    assert gf.dumps(t.EncodedObjectAsID(5), "godot2") == u32(18)
    with pytest.raises(gf.EncodeError, match="full Object"):
        gf.dumps(gf.Object("Node"), "godot2", allow_objects=True)
    # The "shared" bit 31 of Array and Dictionary counts is masked.
    assert gf.loads(u32(21) + u32(0x80000001) + u32(2) + u32(7), "godot2") == [7]
    assert gf.loads(u32(20) + u32(0x80000000), "godot2") == {}
    # NodePath: the old plain-string form, and the property flag (read as one more subname).
    assert gf.loads(u32(16) + u32(3) + b"a/b\0", "godot2") == gf.NodePath("a/b")
    prop = u32(16) + u32(0x80000001) + u32(0) + u32(2) + u32(1) + b"a\0\0\0" + u32(1) + b"p\0\0\0"
    assert gf.loads(prop, "godot2") == gf.NodePath("a:p")


@pytest.mark.parametrize("dialect, record", ENGINE_CFB)
def test_strict_reading_tells_the_godot2_dialect_apart(dialect: str, record: dict[str, Any]) -> None:
    data = _file(record)
    read_ecfg(data, "godot4")  # Godot 4 takes the Array headers for StringNames and skips the rest ...
    for other in ("godot4", "godot3"):
        with pytest.raises(gf.DecodeError, match="after the value"):  # ... which strict reading refuses
            read_ecfg(data, other, strict=True)
    assert read_ecfg(data, "godot2", strict=True)[1] == read_ecfg(data, "godot2")[1]


def test_an_error_quotes_a_bounded_prefix_of_a_huge_key() -> None:
    """A 4 MB key makes an error message of a bounded size (not one four times the key)."""
    key = "k" * 4_000_000
    data = b"ECFG" + struct.pack("<I", 1) + struct.pack("<I", len(key)) + key.encode() + struct.pack("<I", 100) + \
        b"\x02\0\0\0"
    with pytest.raises(gf.DecodeError) as info:
        gf.open(data)
    assert len(str(info.value)) < 400 and "(4000000 characters)" in str(info.value)
