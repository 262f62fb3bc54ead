"""ConfigFiles on the command line (issue 41): every command treats ConfigFile text, plain or
``save_encrypted_pass``, as a document of sections and keys, as it treats saves and resources.

The encrypted files are the engines' own (fixtures/containers: ``g3_enc_configfile`` made by Godot
3.2.3, ``g4_enc_configfile`` by Godot 4.6, password "hunter2", holding the same game state); their
plaintexts, recorded beside them, are what each engine's ConfigFile.save wrote.  The small plain
texts are written here in each engine's layout.  Commands run in this process (``tool.main``), ``edit``
with a real editor process.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, cli, read_jsonl
from conftest import run_main as main

import godot_formats as gf
from godot_formats.layers.encryption import key_from_password, read_gdec, write_gdec

PASSWORD = "hunter2"
RECORDS = {r["name"]: r for f in sorted((FIXTURES / "containers").glob("*.jsonl")) for r in read_jsonl(f)}
#: What Godot 3.2.3 and 4.6 wrote (ConfigFile.save_encrypted_pass) for one game state, decrypted.
G3_TEXT = bytes.fromhex(RECORDS["g3_enc_configfile"]["derived"]["plaintext_hex"])
G4_TEXT = bytes.fromhex(RECORDS["g4_enc_configfile"]["derived"]["plaintext_hex"])

PLAIN4 = b'[player]\n\nname="Ann"\ngold=10\npos=Vector2(1, 2)\n\n[input]\n\njump=[]\n'
DAMAGED = b'[player]\n\nname="Ann"\ngold=10\nx=\xff\xfe\n[later]\n\ny=2\n'
KEY_BINDING4 = ('[Object(InputEventKey,"resource_local_to_scene":false,"resource_name":"","device":0,"window_id":0,'
                '"alt_pressed":false,"shift_pressed":true,"ctrl_pressed":false,"meta_pressed":false,"pressed":false,'
                '"keycode":65,"physical_keycode":0,"key_label":0,"unicode":0,"location":0,"echo":false,"script":null)\n]')
HOSTILE3 = b'[player]\n\nname="Ann"\nhook=Object(Reference,"script":Resource( "user://evil.gd" ))\n'


def engine_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.cfg"
    path.write_bytes(bytes.fromhex(RECORDS[name]["file_hex"]))
    return path


def plain_file(tmp_path: Path, data: bytes, name: str = "settings.cfg") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def encrypted_like(tmp_path: Path, name: str, plaintext: bytes, like: str = "g3_enc_configfile") -> Path:
    """``plaintext`` in the encryption layout of the engine's file ``like`` (same password)."""
    _, info = read_gdec(bytes.fromhex(RECORDS[like]["file_hex"]), password=PASSWORD)
    path = tmp_path / name
    path.write_bytes(write_gdec(plaintext, info, key=key_from_password(PASSWORD)))
    return path


def decrypted(path: Path) -> tuple[bytes, int]:
    plain, info = read_gdec(path.read_bytes(), password=PASSWORD)
    return plain, info.version


def editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR: a Python script that edits the file named by its argument."""
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\ntext = p.read_text()\n"
                      + textwrap.dedent(body))
    return f"{sys.executable} {script}"


# -- dump, detect, explain ----------------------------------------------------------------------------


@pytest.mark.parametrize("name, text", [("g3_enc_configfile", G3_TEXT), ("g4_enc_configfile", G4_TEXT)])
def test_dump_shows_an_encrypted_configfile_as_the_text_the_engine_wrote(tmp_path: Path, name: str,
                                                                         text: bytes) -> None:
    path = engine_file(tmp_path, name)
    status, out, err = main("dump", path, "--password", PASSWORD)
    assert status == 0, err
    header, _, shown = out.partition("\n")
    assert shown.encode() == text
    assert header.startswith("; godot-formats configfile: ")  # a comment to the engine: the view is ConfigFile text
    assert main("dump", path, "--password", PASSWORD, "--no-header")[1].encode() == text


def test_a_view_edited_and_loaded_is_the_file_with_that_change(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "g4_enc_configfile")
    status, out, _ = main("dump", path, "--password", PASSWORD)
    view = tmp_path / "view.txt"
    view.write_text(out.replace('name="Ann"', 'name="Bob"'))
    status, _, err = main("load", view, "-o", tmp_path / "new.cfg", "--password", PASSWORD)
    assert status == 0, err
    assert decrypted(tmp_path / "new.cfg") == (G4_TEXT.replace(b'name="Ann"', b'name="Bob"'), 4)
    view.write_text(out.replace('name="Ann"', 'name=Vector2(1,'))
    status, _, err = main("load", view, "-o", tmp_path / "bad.cfg", "--password", PASSWORD)
    # where the reader stops ("pos" after the cut value), as a line of the view the user edited
    assert status == 1 and "line 5, column 1" in err and not (tmp_path / "bad.cfg").exists()


def test_dump_json_holds_the_sections_losslessly(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "g3_enc_configfile")
    status, out, err = main("dump", path, "--json", "--password", PASSWORD)
    assert status == 0, err
    doc = json.loads(out)
    assert doc["godot_formats_configfile"] == 1 and doc["dialect"] == "godot3"
    assert doc["encryption"]["version"] == 3
    assert doc["sections"] == {"player": {"name": "s:Ann", "pos": {"type": "Vector2", "args": [12.5, -3.0]}}}


def test_dump_tree_of_a_plain_configfile(tmp_path: Path) -> None:
    status, out, err = main("dump", plain_file(tmp_path, PLAIN4), "--tree")
    assert status == 0, err
    assert '    "gold": int 10' in out.splitlines()


@pytest.mark.parametrize("name, dialect, layer", [("g3_enc_configfile", "godot3", "encrypted (Godot 3"),
                                                  ("g4_enc_configfile", "godot4", "encrypted (Godot 4")])
def test_detect_says_configfile_its_dialect_why_and_encryption(tmp_path: Path, name: str, dialect: str,
                                                               layer: str) -> None:
    path = engine_file(tmp_path, name)
    status, out, err = main("detect", path, "--password", PASSWORD)
    assert status == 0, err
    verdict, layers = out.splitlines()[:2]
    assert verdict == f"{path}: ConfigFile text: {dialect}"
    assert layers.startswith(f"  layers: {layer}") and "ConfigFile text: 1 section(s), 2 key(s)" in layers
    assert f"written by Godot {dialect[-1]}" in layers  # why
    status, out, _ = main("detect", path, "--password", PASSWORD, "--json")
    row = json.loads(out)
    assert status == 0 and row["verdict"] == f"ConfigFile text: {dialect}"
    assert row["layers"]["encryption"] == dialect and row["layers"]["keys"] == 2


def test_detect_of_a_plain_configfile(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    status, out, _ = main("detect", path)
    assert status == 0 and out.splitlines()[0] == f"{path}: ConfigFile text: godot4"


def test_explain_lists_each_entry_with_its_line_and_section(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    status, out, err = main("explain", path)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("# ConfigFile text, godot4")
    assert lines[1:] == ['     3  [player] name = "Ann"', "     4  [player] gold = 10",
                         "     5  [player] pos = Vector2(1, 2)", "     9  [input] jump = []"]


def test_explain_of_an_encrypted_configfile(tmp_path: Path) -> None:
    status, out, err = main("explain", engine_file(tmp_path, "g3_enc_configfile"), "--password", PASSWORD)
    assert status == 0, err
    assert out.splitlines()[1:] == ['     3  [player] name = "Ann"', "     4  [player] pos = Vector2( 12.5, -3 )"]


# -- damaged text: named as text, with its line and column; --salvage keeps what the engine keeps ----------


@pytest.mark.parametrize("encrypted", [False, True])
def test_a_damaged_configfile_is_named_by_line_and_column_everywhere(tmp_path: Path, encrypted: bool) -> None:
    path = encrypted_like(tmp_path, "d.cfg", DAMAGED) if encrypted else plain_file(tmp_path, DAMAGED, "d.cfg")
    said = "damaged ConfigFile text at line 5, column 3"
    for command in (["dump"], ["detect"], ["explain"]):
        status, out, err = main(*command, path, "--password", PASSWORD)
        assert status == 1, (command, out, err)
        assert said in out + err and "frame" not in out + err and "Traceback" not in err, (command, out, err)
    status, out, _ = main("convert", path, "--to", "godot4", "-o", tmp_path / "out.cfg", "--password", PASSWORD)
    assert status == 1 and f"failed     {path}: {said}" in out and not (tmp_path / "out.cfg").exists()


@pytest.mark.parametrize("encrypted", [False, True])
def test_salvage_keeps_the_keys_before_the_damaged_line_and_names_it(tmp_path: Path, encrypted: bool) -> None:
    path = encrypted_like(tmp_path, "d.cfg", DAMAGED) if encrypted else plain_file(tmp_path, DAMAGED, "d.cfg")
    status, out, err = main("dump", path, "--salvage", "--password", PASSWORD, "--no-header")
    assert status == 0, err
    assert out == '[player]\n\nname="Ann"\ngold=10\n'
    assert "note: damaged at line 5, column 3" in err
    status, out, err = main("dump", path, "--salvage", "--json", "--password", PASSWORD)
    assert status == 0 and json.loads(out)["sections"] == {"player": {"name": "s:Ann", "gold": "i:10"}}


# -- set -------------------------------------------------------------------------------------------------


def test_set_changes_only_that_line_and_keeps_a_backup(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    status, _, err = main("set", path, "player.gold", "99")
    assert status == 0, err
    assert path.read_bytes() == PLAIN4.replace(b"gold=10", b"gold=99")
    assert (tmp_path / "settings.cfg.bak").read_bytes() == PLAIN4
    assert "[player] gold: 10 -> 99" in err


def test_set_a_key_binding_as_godot_text(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    status, _, err = main("set", path, "input.jump", KEY_BINDING4)
    assert status == 0, err
    assert path.read_bytes() == PLAIN4.replace(b"jump=[]", b"jump=" + KEY_BINDING4.encode())
    jump = gf.open(path).get_value("input", "jump")
    assert jump[0].class_name == "InputEventKey" and jump[0].properties["keycode"] == 65


def test_set_json_value_and_a_new_section(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    assert main("set", path, '["audio bus"].volume', '"f:0.5"', "--json")[0] == 0
    doc = gf.open(path)
    assert doc.get_value("audio bus", "volume") == 0.5 and doc.get_value("player", "gold") == 10


@pytest.mark.parametrize("name, version", [("g3_enc_configfile", 3), ("g4_enc_configfile", 4)])
def test_set_in_an_encrypted_configfile_keeps_its_password_and_layout(tmp_path: Path, name: str,
                                                                      version: int) -> None:
    path = engine_file(tmp_path, name)
    before = path.read_bytes()
    status, _, err = main("set", path, "player.name", '"Bob"')  # no password: nothing written
    assert status == 1 and "--password" in err and path.read_bytes() == before
    status, _, err = main("set", path, "player.name", '"Bob"', "--password", PASSWORD)
    assert status == 0, err
    plain, written_version = decrypted(path)
    engine_text = G3_TEXT if version == 3 else G4_TEXT
    assert plain == engine_text.replace(b'name="Ann"', b'name="Bob"') and written_version == version


def test_set_refuses_what_is_not_section_and_key_and_writes_nothing(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    for args in (["player", "1"], ["player.gold", "--record", "1", "1"], ["nosuch.key.deeper", "1"],
                 ["player.pos.x", "5"]):
        status, _, err = main("set", path, *args)
        assert status == 1 and err.startswith("godot-formats set: "), (args, err)
    assert path.read_bytes() == PLAIN4 and not (tmp_path / "settings.cfg.bak").exists()


# -- edit ------------------------------------------------------------------------------------------------


def test_edit_shows_the_files_own_text_and_writes_back_what_was_saved(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    ed = editor(tmp_path, """
        assert text.startswith("; godot-formats edit: ") and text.endswith('jump=[]\\n')
        p.write_text(text.replace("gold=10", "gold=11 ; richer"))
        """)
    status, _, err = main("edit", path, env={"EDITOR": ed})
    assert status == 0, err
    assert path.read_bytes() == PLAIN4.replace(b"gold=10", b"gold=11 ; richer")
    assert gf.open(path).get_value("player", "gold") == 11


@pytest.mark.parametrize("name, version", [("g3_enc_configfile", 3), ("g4_enc_configfile", 4)])
def test_edit_an_encrypted_configfile_encrypts_it_again(tmp_path: Path, name: str, version: int) -> None:
    path = engine_file(tmp_path, name)
    ed = editor(tmp_path, """
        p.write_text(text.replace('name="Ann"', 'name="Bob"'))
        """)
    status, _, err = main("edit", path, "--password", PASSWORD, env={"EDITOR": ed})
    assert status == 0, err
    plain, written_version = decrypted(path)
    assert plain == (G3_TEXT if version == 3 else G4_TEXT).replace(b'name="Ann"', b'name="Bob"')
    assert written_version == version


def test_edit_refuses_text_that_does_not_parse_naming_line_and_column(tmp_path: Path) -> None:
    path = plain_file(tmp_path, PLAIN4)
    seen = tmp_path / "seen.txt"
    ed = editor(tmp_path, f"""
        pathlib.Path({str(seen)!r}).write_text(text)
        p.write_text(text.replace("gold=10", "gold=Vector2(1,"))
        """)
    status, _, err = main("edit", path, env={"EDITOR": ed})
    assert status == 1 and "not written" in err
    # The reader stops where "pos" follows the cut value: line 5 of the file, line 8 of the text saved (the three
    # lines edit puts on top are comments to it).
    assert "line 8, column 1" in err
    assert seen.read_text().startswith("; error: ConfigFile.load stops at line 8, column 1")
    assert path.read_bytes() == PLAIN4 and not (tmp_path / "settings.cfg.bak").exists()


def test_edit_without_a_change_writes_nothing(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "g4_enc_configfile")
    before = path.read_bytes()
    status, _, err = main("edit", path, "--password", PASSWORD, env={"EDITOR": editor(tmp_path, "")})
    assert status == 0 and "no change" in err and path.read_bytes() == before


# -- convert -----------------------------------------------------------------------------------------------


def test_convert_a_godot3_encrypted_configfile_gives_what_godot4_writes(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "g3_enc_configfile")
    out = tmp_path / "out.cfg"
    status, text, err = main("convert", path, "--to", "godot4", "-o", out, "--password", PASSWORD)
    assert status == 0, text + err
    assert text.startswith(f"converted  {path}: configfile, godot3 -> godot4")
    plain, version = decrypted(out)
    assert plain == G4_TEXT and version == 4  # what Godot 4.6 saved for the same game state


def test_convert_a_configfile_that_needs_no_change_is_unchanged(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "g4_enc_configfile")
    out = tmp_path / "out.cfg"
    status, text, _ = main("convert", path, "--to", "godot4", "-o", out, "--password", PASSWORD)
    assert status == 0 and text.startswith(f"unchanged  {path}: configfile, godot4 -> godot4")
    assert out.read_bytes() == path.read_bytes()


def test_convert_refuses_code_unless_allow_scripts(tmp_path: Path) -> None:
    path = plain_file(tmp_path, HOSTILE3)
    out = tmp_path / "out.cfg"
    status, text, _ = main("convert", path, "--to", "godot4", "-o", out)
    assert status == 1 and "--allow-scripts" in text and "[player] hook" in text and not out.exists()
    status, text, _ = main("convert", path, "--to", "godot4", "-o", out, "--allow-scripts", "--policy", "lossy")
    assert status == 0 and text.startswith(f"converted  {path}") and out.exists()


def test_a_folder_migration_of_a_game(tmp_path: Path) -> None:
    """Settings that need no change, a JSON save, and an encrypted Godot 3 settings file: none fails."""
    game = tmp_path / "game"
    game.mkdir()
    plain_file(game, PLAIN4, "settings.cfg")
    save = {"player": {"gold": 10, "jump": '[Object(InputEventKey,"scancode":65,"shift":true)]'}}
    (game / "save.json").write_text(json.dumps(save))
    engine_file(game, "g3_enc_configfile")
    status, text, err = main("convert", game, "--to", "godot4", "--out-dir", tmp_path / "out", "--password",
                             PASSWORD, "--jobs", "1")
    assert status == 0, text + err
    lines = {line.split()[1].rstrip(":"): line for line in text.splitlines() if line.startswith(("conv", "unch"))}
    assert lines[f"{game}/settings.cfg"].startswith("unchanged")
    json_line = lines[f"{game}/save.json"]
    assert json_line.startswith("unchanged") and "JSON" in json_line and "left alone" in json_line
    assert "$.player.jump (InputEventKey)" in json_line and "load" not in json_line
    assert lines[f"{game}/g3_enc_configfile.cfg"].startswith("converted")
    assert text.splitlines()[-1] == "3 file(s): 1 converted, 2 unchanged, 0 failed, 0 skipped"
    assert (tmp_path / "out" / "game" / "save.json").read_bytes() == (game / "save.json").read_bytes()
    assert decrypted(tmp_path / "out" / "game" / "g3_enc_configfile.cfg") == (G4_TEXT, 4)


def test_the_hint_for_a_json_save_no_longer_points_at_load(tmp_path: Path) -> None:
    path = plain_file(tmp_path, b'{"player": {"gold": 10}}', "save.json")
    status, _, err = main("dump", path)
    assert status == 1 and "JSON" in err and "load FILE -o OUT" not in err and "a migration leaves it alone" in err


# -- scan ---------------------------------------------------------------------------------------------------


def test_scan_reads_an_encrypted_configfile_with_its_password(tmp_path: Path) -> None:
    path = encrypted_like(tmp_path, "hostile.cfg", HOSTILE3)
    status, _, err = main("scan", path)
    assert status == 2 and "cannot be scanned" in err  # without the password: never called clean
    status, out, _ = main("scan", path, "--password", PASSWORD)
    assert status == 1
    assert f"{path}: object-with-script: [player] hook.script: " in out
    status, out, _ = main("scan", engine_file(tmp_path, "g3_enc_configfile"), "--password", PASSWORD)
    assert status == 0 and out == ""


def test_a_folder_migration_leaves_plain_text_alone_and_salvages_when_told(tmp_path: Path) -> None:
    games = tmp_path / "game"
    games.mkdir()
    (games / "README.md").write_bytes(b"# notes\nhello\n")
    (games / "bad.cfg").write_bytes(b"[a]\n\nx=Vector2( 1, 2 )\ny=[1, 2\n")
    status, out, err = main("convert", str(games), "--to", "godot4", "--out-dir", str(tmp_path / "out"))
    said = out + err
    assert status == 1 and "unchanged  " in said and "README.md" in said and "left alone" in said
    assert "damaged ConfigFile text at line 5" in said  # without --salvage: failed, named as text
    status, out, err = main("convert", str(games), "--to", "godot4", "--out-dir", str(tmp_path / "out2"),
                            "--salvage", "--policy", "lossy")
    assert status == 0, out + err
    [written] = (tmp_path / "out2").rglob("bad.cfg")
    doc = gf.open(written)
    assert doc.get_value("a", "x") == gf.Vector2(1, 2) and not doc.has_section_key("a", "y")
    assert "is damaged" in out + err  # the loss of the damaged tail is listed


def test_dump_and_load_keep_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = plain_file(tmp_path, b'[a]\nx="\xffok"\n')
    shown = cli("dump", path)  # bytes: the view holds the file's own bytes
    assert shown.returncode == 0 and b'x="\xffok"' in shown.stdout
    view = tmp_path / "view.txt"
    view.write_bytes(shown.stdout)
    status, _, err = main("load", str(view), "-o", str(tmp_path / "back.cfg"))
    assert status == 0, err
    assert (tmp_path / "back.cfg").read_bytes() == b'[a]\nx="\xffok"\n'


def test_explain_shows_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = plain_file(tmp_path, b'[a]\nx="\xffok"\n')
    status, out, err = main("explain", path)
    assert status == 0 and '[a] x = "\\xffok"' in out, err
