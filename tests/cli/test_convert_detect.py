"""The installed ``godot-formats convert`` and ``detect`` commands, on real engine files in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, assert_same_bytes, cli, engine_cases, node_path_pad_mask, read_jsonl

import godot_formats as gf
from godot_formats import tool
from godot_formats.commands import convert as convert_command
from godot_formats.saves.detection import split_store_var

CORPUS = {c["name"]: c for c in read_jsonl(FIXTURES / "conversion" / "corpus.jsonl")}
def run(*args: str | Path, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return cli(*args, stdin=stdin, cwd=cwd)


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
    assert any("broken.sav: at byte 0: no engine dialect reads this file" in line for line in failed)
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
    # Bytes Godot 2 reads as the same value as Godot 3 (ids 0-14, no flags) are ambiguous between them too.
    assert any(line.endswith("store_var.bin: ambiguous: godot4 (store_var framed) | godot3 (store_var framed) "
                             "| godot2 (store_var framed)") for line in lines), lines
    proc = run("detect", "--json", saves / "game.sav")
    report = json.loads(proc.stdout)
    assert report["verdict"] == "godot3" and report["candidates"][0]["complete"]
    bad = saves / "bad.bin"
    bad.write_bytes(b"\xff")
    proc = run("detect", bad, "--all")
    assert proc.returncode == 1 and b"unknown" in proc.stdout and b"does not decode" in proc.stdout


# -- hostile input, second round: one bad file never stops the batch; every output lands where
# -- it should, or nowhere; every entry of a folder gets a line ------------------------------------------------


def in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, list[str], str]:
    """``main`` run in this process (so a test can plant a bug): (exit status, stdout lines, stderr)."""
    status = tool.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def test_a_bug_on_one_file_is_one_line_and_the_batch_goes_on(saves: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # A RecursionError from a deeply nested key, say: whatever the library's bug, the command
    # reports the file and converts the others. Here a real RecursionError, raised for one file's bytes.
    (saves / "deep.sav").write_bytes(g3("vector3"))
    real = convert_command.converted

    def buggy(blob: bytes, *args: Any, **kwargs: Any) -> Any:
        def recurse(n: int) -> int:
            return recurse(n + 1) + 1
        if blob == g3("vector3"):
            recurse(0)
        return real(blob, *args, **kwargs)

    monkeypatch.setattr(convert_command, "converted", buggy)
    out = tmp_path / "out"
    status, lines, err = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", out)
    assert status == 1 and err == ""
    deep = [line for line in lines if "deep.sav" in line]
    assert len(deep) == 1 and deep[0].startswith("failed")
    assert "internal error (RecursionError: maximum recursion" in deep[0]
    assert lines[-1] == "5 file(s): 3 converted, 1 unchanged, 1 failed, 0 skipped"
    assert not (out / "saves" / "deep.sav").exists()
    same_as_engine((out / "saves" / "game.sav").read_bytes(), g4("save_game"))  # the others are converted
    assert not [line for line in lines if "Traceback" in line]


def test_a_bug_outside_the_batch_is_still_one_line(saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    def buggy(*args: Any) -> Any:
        raise KeyError("oops")

    monkeypatch.setattr(convert_command, "_walk", buggy)
    status, lines, err = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", tmp_path / "out")
    assert status == 1 and lines == []
    assert err == "godot-formats convert: internal error (KeyError: 'oops'); please report it\n"
    assert not (tmp_path / "out").exists()
    monkeypatch.setenv("GODOT_FORMATS_TRACEBACK", "1")  # for whoever debugs it: the traceback on demand
    with pytest.raises(KeyError):
        tool.main(["convert", str(saves), "--to", "godot4", "--out-dir", str(tmp_path / "out")])


def test_two_inputs_with_one_output_are_both_refused_before_anything_is_written(tmp_path: Path) -> None:
    for parent, name in (("a", "save_game"), ("b", "settings")):
        (tmp_path / parent / "saves").mkdir(parents=True)
        (tmp_path / parent / "saves" / "game.sav").write_bytes(g3(name))
    out = tmp_path / "out"
    (out / "saves").mkdir(parents=True)
    (out / "saves" / "game.sav").write_bytes(b"keep me")
    (out / "game.sav").write_bytes(b"keep me too")
    a, b = tmp_path / "a" / "saves", tmp_path / "b" / "saves"
    for args in ((a / "game.sav", b / "game.sav"), (a, b)):  # two files, then two folders of the same name
        proc = run("convert", *args, "--to", "godot4", "--out-dir", out, "--overwrite")
        lines = proc.stdout.decode().splitlines()
        assert proc.returncode == 1, lines
        failed = [line for line in lines if line.startswith("failed")]
        assert len(failed) == 2 and all("is also the output of" in line and "neither is written" in line
                                        for line in failed), lines
        assert "0 converted, 0 unchanged, 2 failed" in lines[-1]
    assert (out / "saves" / "game.sav").read_bytes() == b"keep me"
    assert (out / "game.sav").read_bytes() == b"keep me too"
    assert (a / "game.sav").read_bytes() == g3("save_game") and (b / "game.sav").read_bytes() == g3("settings")


def test_the_same_file_named_twice_is_converted_once(saves: Path, tmp_path: Path) -> None:
    game = saves / "game.sav"
    (saves / "link.sav").symlink_to("game.sav")
    proc = run("convert", game, game, "--to", "godot4", "--out-dir", tmp_path / "out")
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 0, lines
    assert lines[1] == f"skipped    {game}: the same file as {game}, named twice (converted once)"
    assert lines[-1] == "2 file(s): 1 converted, 0 unchanged, 0 failed, 1 skipped"
    # In place: a symlink and its target are one file, converted once (not converted again, read as Godot 4).
    proc = run("convert", game, saves / "link.sav", "--from", "godot3", "--to", "godot4", "--overwrite")
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 0 and lines[-1] == "2 file(s): 1 converted, 0 unchanged, 0 failed, 1 skipped", lines
    same_as_engine(game.read_bytes(), g4("save_game"))


def test_an_output_that_would_replace_another_input_is_refused(saves: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "game.sav").write_bytes(g3("settings"))  # an input too: the folder out is converted into out/out
    proc = run("convert", saves / "game.sav", out, "--to", "godot4", "--out-dir", out, "--overwrite")
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1, lines
    assert lines[0] == (f"failed     {saves / 'game.sav'}: {out / 'game.sav'} is the input {out / 'game.sav'}, "
                        "which would be replaced before it is converted; nothing written")
    assert (out / "game.sav").read_bytes() == g3("settings")
    same_as_engine((out / "out" / "game.sav").read_bytes(), g4("settings"))


def test_outputs_never_leave_the_out_dir(saves: Path, tmp_path: Path) -> None:
    work = saves / "slots"
    before = {p for p in tmp_path.rglob("*")}
    for item in ("..", str(work / "..")):  # outputs named after the folder, never out/../...
        proc = run("convert", item, "--to", "godot4", "--out-dir", "out", cwd=work)
        assert proc.returncode == 0, proc.stdout.decode()
        assert "-> out/saves/game.sav" in proc.stdout.decode()
        assert {p for p in tmp_path.rglob("*") if p not in before and not p.is_relative_to(work / "out")} == set()
        same_as_engine((work / "out" / "saves" / "game.sav").read_bytes(), g4("save_game"))
        assert not (tmp_path / "game.sav").exists() and not (work / "game.sav").exists()
        shutil.rmtree(work / "out")
    # A symlink inside --out-dir that leads out of it is not followed out.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "saves").symlink_to(elsewhere)
    proc = run("convert", saves, "--to", "godot4", "--out-dir", out)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1 and lines[-1] == "4 file(s): 0 converted, 0 unchanged, 4 failed, 0 skipped", lines
    assert f"failed     {saves / 'game.sav'}: the output {out / 'saves' / 'game.sav'} resolves to " \
           f"{elsewhere / 'game.sav'}, outside --out-dir {out}; nothing written" in lines
    assert list(elsewhere.iterdir()) == []


def test_in_place_through_a_symlink_converts_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "game.sav"
    target.write_bytes(g3("save_game"))
    target.chmod(0o640)
    link = tmp_path / "game.sav"
    link.symlink_to(target)
    proc = run("convert", link, "--to", "godot4", "--overwrite")
    assert proc.returncode == 0, proc.stdout.decode()
    assert proc.stdout.decode().splitlines()[0] == \
        f"converted  {link}: godot3 -> godot4 (through the symlink, to {target})"
    assert link.is_symlink() and os.readlink(link) == str(target)
    same_as_engine(target.read_bytes(), g4("save_game"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in real_dir.iterdir()) == ["game.sav"]  # no temporary file left
    # A dangling symlink as the output is not written through (it would create a file wherever it points).
    dangling = tmp_path / "dangling.sav"
    dangling.symlink_to(tmp_path / "nowhere" / "x.sav")
    proc = run("convert", target, "--to", "godot3", "-o", dangling, "--overwrite")
    assert proc.returncode == 1 and b"dangling symlink" in proc.stdout
    assert not (tmp_path / "nowhere").exists() and dangling.is_symlink()


def test_folder_entries_that_are_not_regular_files_get_a_line_and_are_never_opened(saves: Path,
                                                                                   tmp_path: Path) -> None:
    slots = saves / "slots"
    (slots / "link.sav").symlink_to("slot1.sav")
    (saves / "linked-folder").symlink_to(slots)
    os.mkfifo(slots / "pipe.sav")  # opened for reading, it would block until a writer came
    out = tmp_path / "out"
    proc = run("convert", saves, "--to", "godot4", "--out-dir", out)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 0, lines
    assert f"skipped    {saves / 'linked-folder'}: a symlink, not followed (name it on the command line to " \
           "convert the file it points to)" in lines
    assert any(line.startswith(f"skipped    {slots / 'link.sav'}: a symlink, not followed") for line in lines)
    assert f"skipped    {slots / 'pipe.sav'}: a FIFO, not a regular file" in lines
    assert lines[-1] == "7 file(s): 3 converted, 1 unchanged, 0 failed, 3 skipped"
    assert sorted(p.name for p in (out / "saves").rglob("*")) == ["game.sav", "multi.sav", "slot1.sav", "slots",
                                                                  "store_var.bin"]
    # Named on the command line for in-place conversion, a FIFO is refused, not opened, not replaced.
    proc = run("convert", slots / "pipe.sav", "--to", "godot4", "--overwrite")
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines()[0] == \
        f"failed     {slots / 'pipe.sav'}: cannot write {slots / 'pipe.sav'}: not a regular file; refusing to " \
        "replace it"
    assert stat.S_ISFIFO((slots / "pipe.sav").stat().st_mode)


def test_an_out_dir_inside_the_input_folder_is_skipped_with_a_line(saves: Path) -> None:
    for _ in range(2):  # the second run finds the outputs of the first, and does not convert them again
        proc = run("convert", saves, "--to", "godot4", "--out-dir", saves / "v4", "--overwrite")
        lines = proc.stdout.decode().splitlines()
        assert proc.returncode == 0, lines
    assert f"skipped    {saves / 'v4'}: the output folder (--out-dir)" in lines
    assert lines[-1] == "5 file(s): 3 converted, 1 unchanged, 0 failed, 1 skipped"
    assert not (saves / "v4" / "saves" / "v4").exists()


def test_a_temporary_file_left_by_kill_9_is_recognised_and_skipped(saves: Path, tmp_path: Path) -> None:
    # A real leftover: a process killed by SIGKILL in write_atomic, after writing and before the rename.
    kill = ("import os, signal, sys; from pathlib import Path; from godot_formats import tool; "
            "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL); "
            "tool.write_atomic(Path(sys.argv[1]), Path(sys.argv[2]).read_bytes())")
    game = saves / "game.sav"
    proc = subprocess.run([sys.executable, "-c", kill, game, game], timeout=120)
    assert proc.returncode == -9
    leftovers = [p for p in saves.iterdir() if p.name.startswith(".game.sav.")]
    assert len(leftovers) == 1 and leftovers[0].read_bytes() == game.read_bytes()
    assert tool.is_temp_name(leftovers[0].name) and not tool.is_temp_name("game.sav")
    out = tmp_path / "out"
    proc = run("convert", saves, "--to", "godot4", "--out-dir", out)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 0, lines
    assert lines[0] == f"skipped    {leftovers[0]}: a temporary file left by an interrupted godot-formats write " \
                       "(delete it)"
    assert lines[-1] == "5 file(s): 3 converted, 1 unchanged, 0 failed, 1 skipped"
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_a_folder_that_cannot_be_read_is_a_failure_not_a_silence(saves: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:  # as for a folder without read permission (root reads them all)
        if Path(path).name == "slots":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    status, lines, _ = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", tmp_path / "out")
    assert status == 1
    assert f"failed     {saves / 'slots'}: cannot read the folder: Permission denied" in lines
    assert lines[-1] == "2 file(s): 1 converted, 0 unchanged, 1 failed, 0 skipped"


def test_file_names_that_are_not_text_stay_on_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "new\nline.sav").write_bytes(b"\xff")
    with open(os.path.join(os.fsencode(folder), b"bad\xffname.sav"), "wb") as f:
        f.write(g3("vector3"))
    proc = run("convert", folder, "--to", "godot4", "--out-dir", tmp_path / "out")
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1 and len(lines) == 3, lines
    assert lines[0].startswith(f"converted  {folder}/bad\\xffname.sav: godot3 -> godot4")
    assert lines[1].startswith(f"failed     {folder}/new\\nline.sav: at byte 0: no engine dialect reads this file")
    assert os.path.exists(os.path.join(os.fsencode(tmp_path), b"out/odd/bad\xffname.sav"))
    proc = run("detect", folder / "new\nline.sav")
    assert proc.stdout.decode().splitlines()[0].startswith(f"{folder}/new\\nline.sav: unknown (no engine dialect "
                                                           "reads it completely): at byte 0: ")


def test_standard_input_can_be_named_once(tmp_path: Path) -> None:
    proc = run("convert", "-", "-", "--to", "godot4", stdin=g3("quat"))
    assert proc.returncode == 2
    assert proc.stderr == b"godot-formats convert: standard input ('-') can only be read once\n"


def test_detect_reports_a_bad_file_and_goes_on(saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    game, missing = saves / "game.sav", tmp_path / "missing.sav"
    proc = run("detect", missing, saves, game)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [f"godot-formats detect: {missing}: No such file or directory",
                                                 f"godot-formats detect: {saves}: a directory, not a regular file"]
    assert proc.stdout.decode().splitlines()[0] == f"{game}: godot3"
    proc = run("detect", "--json", missing, game)
    reports = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert proc.returncode == 1
    assert reports[0] == {"file": str(missing), "error": "No such file or directory"}
    assert reports[1]["file"] == str(game) and reports[1]["verdict"] == "godot3"
    # A bug on one file: one line naming it and the exception, the next file still inspected.
    from godot_formats.commands import detect as detect_command
    real = detect_command.examine
    monkeypatch.setattr(detect_command, "examine",
                        lambda data, args: 1 // 0 if data == g3("save_game") else real(data, args))
    (tmp_path / "quat.sav").write_bytes(g3("quat"))
    status, lines, err = in_process(capsys, "detect", game, tmp_path / "quat.sav")
    assert status == 1
    assert err == f"godot-formats detect: {game}: internal error (ZeroDivisionError: integer division or modulo " \
                  "by zero); please report it\n"
    assert lines[0] == f"{tmp_path / 'quat.sav'}: ambiguous: godot3 | godot2"  # Quat is id 10 in both
