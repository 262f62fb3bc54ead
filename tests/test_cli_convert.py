"""The installed ``godot-formats convert`` and ``detect`` commands, on real engine files in tmp_path."""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, assert_same_bytes, engine_cases, node_path_pad_mask, read_jsonl

import godot_formats as gf
from godot_formats.commands import convert as convert_command
from godot_formats.detect import split_store_var

CORPUS = {c["name"]: c for c in read_jsonl(FIXTURES / "conversion" / "corpus.jsonl")}
EXE = [sys.executable, "-m", "godot_formats"]


def _exe() -> list[str]:
    """The installed console script when it is on PATH (it is, in the editable install), else -m."""
    from shutil import which

    found = which("godot-formats")
    return [found] if found else EXE


def run(*args: str | Path, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*_exe(), *map(str, args)], input=stdin, capture_output=True, cwd=cwd, timeout=120)


def g3(name: str, objects: bool = False) -> bytes:
    case = CORPUS[name]
    return bytes.fromhex(case["godot3_hex_full_objects" if objects else "godot3_hex"])


def g4(name: str, objects: bool = False) -> bytes:
    case = CORPUS[name]
    return bytes.fromhex(case["godot4_hex_full_objects" if objects else "godot4_hex"])


def framed(*payloads: bytes) -> bytes:
    return b"".join(struct.pack("<I", len(p)) + p for p in payloads)


def same_as_engine(ours: bytes, engine: bytes, dialect: str = "godot4") -> None:
    assert_same_bytes(ours, engine, node_path_pad_mask(gf.loads(ours, dialect), dialect, False))


@pytest.fixture
def saves(tmp_path: Path) -> Path:
    """A folder of Godot 3 save files as the engine wrote them."""
    root = tmp_path / "saves"
    (root / "slots").mkdir(parents=True)
    (root / "game.sav").write_bytes(g3("save_game"))
    (root / "slots" / "slot1.sav").write_bytes(framed(g3("save_slots")))             # File.store_var
    (root / "slots" / "multi.sav").write_bytes(framed(g3("settings"), g3("rid_empty"), g3("nodepath_long")))
    wire = next(c for c in engine_cases("godot3") if c["name"] == "wire_file_store_var_str")
    (root / "slots" / "store_var.bin").write_bytes(bytes.fromhex(wire["hex"]))      # a real store_var file
    return root


def test_folder_to_out_dir(saves: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = {p: p.read_bytes() for p in saves.rglob("*") if p.is_file()}
    proc = run("convert", saves, "--to", "godot4", "--out-dir", out)
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert "4 file(s): 3 converted, 1 unchanged, 0 failed" in text  # "hi" is the same in both
    assert "godot3 -> godot4, 3 store_var record(s)" in text
    same_as_engine((out / "saves" / "game.sav").read_bytes(), g4("save_game"))
    slot = (out / "saves" / "slots" / "slot1.sav").read_bytes()
    assert struct.unpack_from("<I", slot)[0] == len(slot) - 4  # the prefix is kept, recomputed
    same_as_engine(slot[4:], g4("save_slots"))
    multi = split_store_var((out / "saves" / "slots" / "multi.sav").read_bytes())
    assert multi is not None and len(multi) == 3
    same_as_engine(multi[0], g4("settings"))
    assert multi[1] == g4("rid_empty") and len(multi[1]) == 12  # Godot 3 RID: 4 bytes; Godot 4: 12
    same_as_engine(multi[2], g4("nodepath_long"))
    assert (out / "saves" / "slots" / "store_var.bin").read_bytes() == bytes.fromhex("0c000000040000000200000068690000")
    # Inputs untouched, no temporary files left anywhere.
    assert {p: p.read_bytes() for p in saves.rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_failures_are_reported_and_make_the_exit_status(saves: Path, tmp_path: Path) -> None:
    (saves / "broken.sav").write_bytes(b"\xff\xff\xff\xff")
    (saves / "godot4.sav").write_bytes(g4("down_save_game_godot4"))
    (saves / "keys.sav").write_bytes(g3("object_keybinds", objects=True))
    out = tmp_path / "out"
    proc = run("convert", saves, "--to", "godot3", "--out-dir", out)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    failed = [line for line in lines if line.startswith("failed")]
    assert len(failed) == 3, lines
    assert any("broken.sav: no engine dialect reads this file" in line for line in failed)
    assert any("godot4.sav: would lose data (7 change(s)" in line for line in failed)
    assert any("keys.sav" in line and "--allow-objects" in line for line in failed)
    assert sum(1 for line in lines if line.strip().startswith("would lose:")) == 7
    assert '    would lose: ["pos"]: godot3 has no Vector2i: written as a Vector2 with the same components' in lines
    assert not (out / "saves" / "godot4.sav").exists() and not (out / "saves" / "broken.sav").exists()
    assert "7 file(s): 0 converted, 4 unchanged, 3 failed" in lines[-1]


def test_lossy_policy_lists_what_it_changed(tmp_path: Path) -> None:
    src = tmp_path / "g4.sav"
    src.write_bytes(g4("down_save_game_godot4"))
    proc = run("convert", src, "--to", "godot3", "--policy", "lossy", "-o", tmp_path / "g3.sav")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert text.count("    loss: ") == 7 and '    loss: ["tags"]: typed Array[StringName] written untyped' in text
    assert (tmp_path / "g3.sav").read_bytes() == g3("down_save_game_godot4")


def test_full_objects_need_allow_objects(tmp_path: Path) -> None:
    src = tmp_path / "keys.sav"
    src.write_bytes(g3("object_keybinds", objects=True))
    proc = run("convert", src, "--to", "godot4", "--allow-objects", "-o", tmp_path / "keys4.sav")
    assert proc.returncode == 0, proc.stdout.decode()
    converted = gf.loads((tmp_path / "keys4.sav").read_bytes(), "godot4", allow_objects=True)
    jump = converted["actions"]["jump"]
    assert [o.class_name for o in jump] == ["InputEventKey", "InputEventJoypadButton"]
    assert jump[0].properties["keycode"] == 32


def test_never_overwrites_without_permission(saves: Path, tmp_path: Path) -> None:
    game = saves / "game.sav"
    original = game.read_bytes()
    proc = run("convert", game, "--to", "godot4")
    assert proc.returncode == 2 and b"--overwrite" in proc.stderr
    proc = run("convert", game, "--to", "godot4", "-o", game)
    assert proc.returncode == 1 and b"would replace the input; use --overwrite" in proc.stdout
    existing = tmp_path / "existing.sav"
    existing.write_bytes(b"keep me")
    proc = run("convert", game, "--to", "godot4", "-o", existing)
    assert proc.returncode == 1 and b"would replace an existing file" in proc.stdout
    assert existing.read_bytes() == b"keep me" and game.read_bytes() == original


def test_in_place_with_overwrite_is_atomic_and_keeps_permissions(saves: Path) -> None:
    game = saves / "game.sav"
    game.chmod(0o640)
    inode_before = game.stat().st_ino
    proc = run("convert", saves, "--to", "godot4", "--overwrite")
    assert proc.returncode == 0, proc.stdout.decode()
    same_as_engine(game.read_bytes(), g4("save_game"))
    assert stat.S_IMODE(game.stat().st_mode) == 0o640
    assert game.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert not list(saves.rglob("*.tmp"))
    # Converting again: already Godot 4, nothing to do, the files are not touched.
    mtime = game.stat().st_mtime_ns
    proc = run("convert", saves, "--to", "godot4", "--overwrite", "--from", "godot4")
    assert "0 converted, 4 unchanged" in proc.stdout.decode()
    assert game.stat().st_mtime_ns == mtime


def test_write_atomic_leaves_the_old_file_when_it_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "save.sav"
    dest.write_bytes(b"old")

    def boom(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        convert_command.write_atomic(dest, b"new")
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["save.sav"]


def test_framing_options(tmp_path: Path) -> None:
    raw = tmp_path / "raw.sav"
    raw.write_bytes(g3("save_game"))
    proc = run("convert", raw, "--to", "godot4", "--framing", "store_var", "-o", tmp_path / "x")
    assert proc.returncode == 1 and b"not store_var framed" in proc.stdout
    boxed = tmp_path / "boxed.sav"
    boxed.write_bytes(framed(g3("rid_empty")))
    proc = run("convert", boxed, "--from", "godot3", "--to", "godot4", "-o", tmp_path / "boxed4.sav")
    assert proc.returncode == 0
    assert (tmp_path / "boxed4.sav").read_bytes() == framed(g4("rid_empty"))
    # --framing none: the prefix is read as the first header (id 4, a String in both).
    proc = run("convert", boxed, "--from", "godot3", "--to", "godot4", "--framing", "none", "-o", tmp_path / "n")
    assert proc.returncode == 1


def test_ambiguous_files(tmp_path: Path) -> None:
    same = tmp_path / "int.sav"
    same.write_bytes(g3("int_i64_max"))  # an int: every version writes these bytes
    proc = run("convert", same, "--to", "godot4", "-o", tmp_path / "int4.sav")
    assert proc.returncode == 0 and b"also read as godot3: same result" in proc.stdout
    aabb = tmp_path / "aabb.sav"
    aabb.write_bytes(g3("aabb"))  # also a valid Godot 4 Transform2D
    proc = run("convert", aabb, "--to", "godot4", "-o", tmp_path / "aabb4.sav")
    assert proc.returncode == 1 and b"give --from" in proc.stdout
    proc = run("convert", aabb, "--from", "godot3", "--to", "godot4", "-o", tmp_path / "aabb4.sav")
    assert proc.returncode == 0
    same_as_engine((tmp_path / "aabb4.sav").read_bytes(), g4("aabb"))


def test_stdin_to_stdout_and_progress(tmp_path: Path) -> None:
    proc = run("convert", "-", "--from", "godot3", "--to", "godot4", stdin=g3("quat"))
    assert proc.returncode == 0 and proc.stdout == g4("quat")
    assert b"converted" in proc.stderr  # the report goes to stderr when stdout carries data
    (tmp_path / "a.sav").write_bytes(g3("vector3"))
    proc = run("convert", tmp_path / "a.sav", "--to", "godot4", "-o", tmp_path / "b.sav", "--progress", "always")
    assert b"\r[" in proc.stderr and b"1/1" in proc.stderr


def test_usage_errors(saves: Path, tmp_path: Path) -> None:
    proc = run("convert", saves, "--to", "godot4", "-o", tmp_path / "x")
    assert proc.returncode == 2 and b"--out-dir" in proc.stderr
    proc = run("convert", saves / "game.sav", "--to", "godot9", "-o", tmp_path / "x")
    assert proc.returncode == 2
    proc = run("convert", tmp_path / "missing.sav", "--to", "godot4", "-o", tmp_path / "x")
    assert proc.returncode == 1 and b"cannot read" in proc.stdout


def test_detect_command(saves: Path) -> None:
    proc = run("detect", saves / "game.sav", saves / "slots" / "store_var.bin")
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    assert lines[0].endswith("game.sav: godot3")
    assert any(line.endswith("store_var.bin: ambiguous: godot4 (store_var framed) | godot3 (store_var framed)")
               for line in lines)
    proc = run("detect", "--json", saves / "game.sav")
    report = json.loads(proc.stdout)
    assert report["verdict"] == "godot3" and report["candidates"][0]["complete"]
    bad = saves / "bad.bin"
    bad.write_bytes(b"\xff")
    proc = run("detect", bad, "--all")
    assert proc.returncode == 1 and b"unknown" in proc.stdout and b"does not decode" in proc.stdout
