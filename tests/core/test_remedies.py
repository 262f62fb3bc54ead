"""Typed errors with remedies: the error that needs a remedy names it (``e.remedy``, a ``gf.Remedy``)
where it is raised, and the command line says it as its flag from one table (``REMEDY_FLAGS``),
never by reading the text of a message, and never by reading a file a second time to find out.

Each remedy is triggered by a real input: engine bytes from the fixtures (a full Object, an
encrypted save, a damaged ``store_var`` save, a save that converts with losses, bytes that two
engine versions read as different values), or a value read from them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, cli, engine_cases, read_jsonl

import godot_formats as gf
from godot_formats.batch.onefile import REMEDY_FLAGS, failure, located, told
from godot_formats.core.errors import Remedy
from godot_formats.saves import reading

PACKAGE = Path(gf.__file__).resolve().parent
G4_CASES = {c["name"]: c for c in engine_cases("godot4")}
CORPUS = {c["name"]: c for c in read_jsonl(FIXTURES / "conversion" / "corpus.jsonl")}
CONTAINERS = {r["name"]: r for r in read_jsonl(FIXTURES / "containers" / "godot4_containers.jsonl")}
DAMAGED = {r["name"]: r for r in read_jsonl(FIXTURES / "damaged" / "godot3_damaged.jsonl")}

#: Godot 4.6's var_to_bytes_with_objects of a Resource named "hello".
FULL_OBJECT = bytes.fromhex(G4_CASES["object_resource_with_name"]["hex_full_objects"])
#: Godot 3.2.3's var2bytes of AABB(1, 2, 3, 4, 5, 6): the same bytes are Godot 4's Transform2D(1, ..., 6).
AABB_G3 = bytes.fromhex(CORPUS["aabb"]["godot3_hex"])
#: Godot 4.6's var_to_bytes(""): also one store_var record (length 4) that holds null.
EMPTY_STRING = bytes.fromhex(G4_CASES["string_len0"]["hex"])


def error_of(call: Any, *args: Any, **kwargs: Any) -> gf.GodotFormatsError:
    with pytest.raises(gf.GodotFormatsError) as info:
        call(*args, **kwargs)
    return info.value


def readings_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the readings of a file (``reading._choose``: detection, one per file and layer)."""
    calls: list[int] = []
    choose = reading._choose

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return choose(*args, **kwargs)

    monkeypatch.setattr(reading, "_choose", counted)
    return calls


def test_the_vocabulary_is_data_and_every_remedy_has_its_flag() -> None:
    assert gf.Remedy is Remedy and "Remedy" in gf.__all__
    assert set(REMEDY_FLAGS) == set(Remedy)
    assert all(flag.startswith("--") for flag in REMEDY_FLAGS.values())
    assert gf.GodotFormatsError("x").remedy is None and gf.DecodeError(0, "x").remedy is None


# -- a full Object ---------------------------------------------------------------------------------


def test_a_refused_full_object_names_allow_objects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    e = error_of(gf.loads, FULL_OBJECT, "godot4")
    assert e.remedy is Remedy.ALLOW_OBJECTS and "allow_objects=True" in str(e)
    for options in ({}, {"dialect": "godot4"}):  # detected, or given: the reading's error names it
        e = error_of(reading.read, FULL_OBJECT, **options)
        assert isinstance(e, gf.DamagedFileError) and e.remedy is Remedy.ALLOW_OBJECTS, str(e)
        assert e.offset == 0 and e.dialect == "godot4"
    assert gf.loads(FULL_OBJECT, "godot4", allow_objects=True).properties["resource_name"] == "hello"
    path = tmp_path / "object.bin"
    path.write_bytes(FULL_OBJECT)
    calls = readings_counted(monkeypatch)
    p = cli("dump", path)
    err = p.stderr.decode()
    assert p.returncode == 1 and REMEDY_FLAGS[Remedy.ALLOW_OBJECTS] in err, err
    assert "allow_objects=True" not in err  # the library's words, said as the flag
    assert len(calls) == 1  # one reading: no second one to word the hint


def test_a_full_object_in_a_godot3_save_names_allow_objects_in_a_batch(tmp_path: Path) -> None:
    """Godot 3.2.3's var2bytes with objects of a keybinds value: convert reports the flag in its line."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "keys.sav").write_bytes(bytes.fromhex(CORPUS["object_keybinds"]["godot3_hex_full_objects"]))
    p = cli("convert", tmp_path / "in", "--to", "godot4", "--out-dir", tmp_path / "out")
    failed = [line for line in p.stdout.decode().splitlines() if line.startswith("failed")]
    assert p.returncode == 1 and len(failed) == 1 and REMEDY_FLAGS[Remedy.ALLOW_OBJECTS] in failed[0], failed


def test_writing_a_full_object_names_full_objects() -> None:
    value = gf.loads(FULL_OBJECT, "godot4", allow_objects=True)
    e = error_of(gf.dumps, value, "godot4")
    assert isinstance(e, gf.EncodeError) and e.remedy is Remedy.FULL_OBJECTS and "full_objects=True" in str(e)
    e = error_of(gf.dumps, {"r": [value]}, "godot4")  # the path it gets on its way out keeps the remedy
    assert isinstance(e, gf.EncodeError) and e.remedy is Remedy.FULL_OBJECTS and e.path == "['r'][0]"
    assert told(e) == f"['r'][0]: Object Resource is only written with {REMEDY_FLAGS[Remedy.FULL_OBJECTS]} " \
                      "(an instance id is written from EncodedObjectAsID)"
    assert gf.dumps(value, "godot4", allow_objects=True) == FULL_OBJECT


def test_load_of_a_full_object_names_the_flag() -> None:
    p = cli("dump", "-", "--dialect", "godot4", "--allow-objects", "--json", "--no-header", stdin=FULL_OBJECT)
    assert p.returncode == 0
    p = cli("load", "-", "--hex", stdin=p.stdout)
    err = p.stderr.decode()
    assert p.returncode == 1 and "--allow-objects" in err and "full_objects" not in err, err


# -- an encrypted file -----------------------------------------------------------------------------


def test_an_encrypted_file_without_its_password_names_password(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    record = CONTAINERS["g4_enc_pass_hunter2"]
    data = bytes.fromhex(record["file_hex"])
    e = error_of(reading.read, data)
    assert isinstance(e, gf.PasswordRequiredError) and e.remedy is Remedy.PASSWORD and e.versions == (4,)
    monkeypatch.delenv("GODOT_FORMATS_PASSWORD", raising=False)
    path = tmp_path / "enc.sav"
    path.write_bytes(data)
    p = cli("dump", path)
    err = p.stderr.decode()
    assert p.returncode == 1 and REMEDY_FLAGS[Remedy.PASSWORD] in err and "GODOT_FORMATS_PASSWORD" in err, err
    assert "password=" not in err
    p = cli("dump", path, env={"GODOT_FORMATS_PASSWORD": record["params"]["password"]})
    assert p.returncode == 0, p.stderr


# -- a damaged store_var file ----------------------------------------------------------------------


def test_a_damaged_save_names_salvage(tmp_path: Path) -> None:
    """Godot 3.2.3 wrote four records, record 2 with invalid UTF-8; its get_var reads the other three."""
    record = DAMAGED["plain_utf8"]
    data = bytes.fromhex(record["file_hex"])
    e = error_of(reading.read, data)
    assert isinstance(e, gf.DamagedFileError) and e.remedy is Remedy.SALVAGE and e.record == 2
    assert "salvage=True" in str(e)
    salvaged = reading.read(data, salvage=True)  # what the engine's get_var read: null for record 2
    assert salvaged.values == [gf.from_text(text, "godot3") for text in record["readback"]]
    path = tmp_path / "damaged.sav"
    path.write_bytes(data)
    p = cli("dump", path)
    err = p.stderr.decode()
    assert p.returncode == 1 and f"other record(s): {REMEDY_FLAGS[Remedy.SALVAGE]} keeps them)" in err, err


def test_cut_frames_name_salvage(tmp_path: Path) -> None:
    """The engine's file, cut inside its last frame: the intact records are kept with salvage."""
    data = bytes.fromhex(DAMAGED["plain_type_id"]["file_hex"])
    cut = data[:-6]
    e = error_of(reading.read, cut)
    assert e.remedy is Remedy.SALVAGE, str(e)
    path = tmp_path / "cut.sav"
    path.write_bytes(cut)
    p = cli("dump", path)
    assert p.returncode == 1 and f"{REMEDY_FLAGS[Remedy.SALVAGE]} keeps them" in p.stderr.decode()


# -- a strict conversion that would lose ---------------------------------------------------------


def test_a_lossy_conversion_names_policy_lossy(tmp_path: Path) -> None:
    blob = bytes.fromhex(CORPUS["down_save_game_godot4"]["godot4_hex"])
    e = error_of(gf.convert, blob, "godot4", "godot3")
    assert isinstance(e, gf.ConversionError) and e.remedy is Remedy.POLICY_LOSSY
    kind, text, losses = failure(e)
    assert kind == "would lose" and text.endswith(f"; {REMEDY_FLAGS[Remedy.POLICY_LOSSY]} applies them)")
    assert list(losses) == e.losses
    path = tmp_path / "g4.sav"
    path.write_bytes(blob)
    p = cli("convert", path, "--to", "godot3", "-o", tmp_path / "g3.sav")
    assert p.returncode == 1 and b"--policy lossy applies them" in p.stdout


# -- an ambiguous file ---------------------------------------------------------------------------


def test_an_ambiguous_file_names_the_dialect_and_carries_its_readings(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    e = error_of(reading.read, AABB_G3)
    assert isinstance(e, gf.AmbiguousDialectError) and e.remedy is Remedy.GIVE_DIALECT
    assert {"godot3", "godot4"} <= set(e.candidates) and len(e.readings) == len(e.candidates)
    by_dialect = dict(zip(e.candidates, e.readings))
    assert by_dialect["godot3"] == [gf.loads(AABB_G3, "godot3")] and type(by_dialect["godot3"][0]) is gf.AABB
    assert type(by_dialect["godot4"][0]) is gf.Transform2D
    path = tmp_path / "aabb.sav"
    path.write_bytes(AABB_G3)
    calls = readings_counted(monkeypatch)
    p = cli("dump", path)
    lines = p.stderr.decode().splitlines()
    assert p.returncode == 1 and lines[0].endswith("as different values; choose one with --dialect:"), lines
    assert any(line.startswith("  --dialect godot3: AABB(") for line in lines)
    assert any(line.startswith("  --dialect godot4: Transform2D(") for line in lines)
    assert len(calls) == 1  # the readings shown are the error's: the file is not read again


def test_two_framings_of_one_dialect_name_the_framing() -> None:
    e = error_of(reading.read, EMPTY_STRING, dialect="godot4")
    assert isinstance(e, gf.AmbiguousDialectError) and e.remedy is Remedy.GIVE_FRAMING
    assert sorted(zip(e.framings, map(tuple, e.readings))) == [(False, ("",)), (True, (None,))]
    p = cli("dump", "-", "--dialect", "godot4", stdin=EMPTY_STRING)
    lines = p.stderr.decode().splitlines()
    assert p.returncode == 1 and lines[0].endswith("choose one with --framing:"), lines
    assert '  --framing none: ""' in lines and any(line.startswith("  --framing store_var: null") for line in lines)


# -- the command line words remedies from the table alone ----------------------------------------


def test_located_errors_keep_their_remedy() -> None:
    e = error_of(gf.loads, FULL_OBJECT, "godot4")
    assert isinstance(e, gf.DecodeError)
    out = located(e)
    assert out.remedy is Remedy.ALLOW_OBJECTS and str(out) == told(e)
    assert str(out) == f"at byte 0: a full Object is only decoded with {REMEDY_FLAGS[Remedy.ALLOW_OBJECTS]}"
    assert failure(out) == ("bad input", str(out), ())  # said once: a located error is not worded again


#: How code reads a message's text to decide what to say (what the remedies replace).
MESSAGE_MATCHING = re.compile(r"in str\(\w+\)|in \w+\.reason\b|in reason\b|\.reason\.(?:replace|startswith|endswith)\(")


def test_the_command_line_reads_no_message_text() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
             for folder in ("commands", "batch") for path in sorted((PACKAGE / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if MESSAGE_MATCHING.search(line)]
    assert found == []


def test_the_message_matcher_finds_what_it_looks_for() -> None:
    for line in ('if "allow_objects" in str(e):', 'hint = "x" if "full_objects" in e.reason else ""',
                 'reason = e.reason.replace("a", "b")', 'if "password or key" in reason:',
                 "if not e.reason.startswith('expected the end'):"):
        assert MESSAGE_MATCHING.search(line), line
    assert not MESSAGE_MATCHING.search("reason = e.reason_with(REMEDY_FLAGS[e.remedy])")


def test_a_remedy_survives_every_rewording_on_the_way_up() -> None:
    """An error worded again on its way up (a stream's call, base64 text, a project setting, the text
    writer, the converter) keeps naming what would help."""
    import struct

    from godot_formats.core.types import Object
    from godot_formats.layers.base64form import base64_to_variant, variant_to_base64

    blob = gf.dumps(Object("Node", {"a": 1}), "godot4", allow_objects=True)
    peer = gf.StreamPeerBuffer(struct.pack("<I", len(blob)) + blob, dialect="godot4")
    with pytest.raises(gf.DecodeError) as info:
        peer.get_var()
    assert info.value.remedy is gf.Remedy.ALLOW_OBJECTS and "get_var: " in str(info.value)
    with pytest.raises(gf.DecodeError) as info:
        base64_to_variant(variant_to_base64(Object("Node", {"a": 1}), "godot4", True), "godot4")
    assert info.value.remedy is gf.Remedy.ALLOW_OBJECTS and "decoded byte" in str(info.value)
