"""ConfigFiles in a batch run (``godot_formats.batch.convert``, issue 41): a game's folder of settings,
an encrypted Godot 3 ConfigFile (made by Godot 3.2.3), a JSON save and a damaged ConfigFile, on the
process pool: what needs no change is ``unchanged``, the JSON save is left alone with a note, the
damaged file fails naming its line, and the Godot 3 file becomes what Godot 4.6 writes for it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURES, read_jsonl

from godot_formats import batch
from godot_formats.batch.onefile import BatchOptions, convert_bytes
from godot_formats.layers.encryption import read_gdec

PASSWORD = "hunter2"
RECORDS = {r["name"]: r for f in sorted((FIXTURES / "containers").glob("*.jsonl")) for r in read_jsonl(f)}
G4_TEXT = bytes.fromhex(RECORDS["g4_enc_configfile"]["derived"]["plaintext_hex"])  # what Godot 4.6 saved
PLAIN4 = b'[player]\n\nname="Ann"\ngold=10\npos=Vector2(1, 2)\n'
KEYS3 = (b'[input]\n\njump=[Object(InputEventKey,"resource_local_to_scene":false,"resource_name":"","device":0,'
         b'"alt":false,"shift":true,"control":false,"meta":false,"command":false,"pressed":false,"scancode":65,'
         b'"physical_scancode":0,"unicode":0,"echo":false,"script":null)\n]\n')


def make_game(root: Path) -> None:
    root.mkdir()
    (root / "settings.cfg").write_bytes(PLAIN4)
    (root / "keys.cfg").write_bytes(KEYS3)
    (root / "enc.cfg").write_bytes(bytes.fromhex(RECORDS["g3_enc_configfile"]["file_hex"]))
    (root / "save.json").write_text(json.dumps({"gold": 10, "keys": ['[Object(InputEventKey,"scancode":65)]']}))
    (root / "broken.cfg").write_bytes(b'[player]\n\ngold=10\nname=\xff\xfe\n')


def test_a_game_folder_on_the_pool(tmp_path: Path) -> None:
    make_game(tmp_path / "in")
    result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2)
    rows = {r["path"]: r for r in result.rows}
    assert result.counts == {"converted": 2, "unchanged": 2, "failed": 1, "skipped": 0}
    assert rows["settings.cfg"]["status"] == "unchanged"
    assert (tmp_path / "out" / "settings.cfg").read_bytes() == PLAIN4
    json_row = rows["save.json"]
    assert json_row["status"] == "unchanged" and json_row["error"] is None
    assert "left alone" in json_row["detail"] and "$.keys[0] (InputEventKey)" in json_row["detail"]
    enc = rows["enc.cfg"]
    assert enc["status"] == "converted" and enc["source_dialect"] == "godot3"
    plain, info = read_gdec((tmp_path / "out" / "enc.cfg").read_bytes(), password=PASSWORD)
    assert plain == G4_TEXT and info.version == 4
    keys = (tmp_path / "out" / "keys.cfg").read_bytes()
    assert rows["keys.cfg"]["status"] == "converted" and b'"keycode":65' in keys and b"scancode" not in keys
    broken = rows["broken.cfg"]
    assert broken["status"] == "failed" and broken["error_kind"] == "bad input"
    assert broken["error"].startswith("damaged ConfigFile text at line 4, column 6")
    assert not (tmp_path / "out" / "broken.cfg").exists()


def test_convert_bytes_words_a_configfile_as_the_command_line_does() -> None:
    out, row = convert_bytes(KEYS3, name="keys.cfg", to="godot4")
    assert out is not None and row["status"] == "converted" and row["layers"] == "ConfigFile text"
    assert row["detail"].startswith("configfile, godot3 -> godot4")
    hostile = b'[a]\n\nhook=Object(Reference,"script":Resource( "user://evil.gd" ))\n'
    out, row = convert_bytes(hostile, name="h.cfg", to="godot4")
    assert out is None and row["error_kind"] == "bad input" and "--allow-scripts" in row["error"]
    opts = BatchOptions(to="godot4", policy="lossy", allow_scripts=True)
    out, row = convert_bytes(hostile, name="h.cfg", to="godot4", options=opts)
    assert out is not None and row["status"] == "converted" and row["losses"]
