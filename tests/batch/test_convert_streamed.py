"""``godot-formats convert FOLDER... --out-dir OUT`` streams the listing: each file is
checked as it is listed and converted before the tree is walked whole, with the lines, order,
summary and exit status of the run planned whole first; the shapes that need the whole plan keep it.
The saves are the engine's (test_cli_convert's corpus).  No timing: the blocking listing waits on an
event that only the first file's outcome sets."""

from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_convert_detect import framed, g3, g4, in_process, same_as_engine

from godot_formats.commands import convert as convert_command
from godot_formats.commands.convert_batch import count_entries
from godot_formats.layers.files import TEMP_MARK


def _tree(root: Path) -> Path:
    """Engine saves with every kind of line: converted, unchanged, a loss under --to godot3, bad
    bytes, a symlink, a symlinked folder, a FIFO, a leftover temporary file."""
    (root / "slots").mkdir(parents=True)
    (root / "game.sav").write_bytes(g3("save_game"))
    (root / "slots" / "slot1.sav").write_bytes(framed(g3("save_slots")))
    (root / "slots" / "multi.sav").write_bytes(framed(g3("settings"), g3("rid_empty")))
    (root / "broken.sav").write_bytes(b"\xff\xff\xff\xff")
    (root / "godot4.sav").write_bytes(g4("down_save_game_godot4"))  # 7 losses as Godot 3
    (root / "slots" / "link.sav").symlink_to("slot1.sav")
    (root / "linked-folder").symlink_to(root / "slots")
    os.mkfifo(root / "slots" / "pipe.sav")
    (root / "slots" / f".slot1.sav{TEMP_MARK}abc123.tmp").write_bytes(b"half")
    return root


def _planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every run plan the whole tree first, as before the listing was streamed."""
    monkeypatch.setattr(convert_command, "streamable", lambda args: False)


def _streamed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a run that would plan the whole tree fail loudly."""
    def no_plan(args: argparse.Namespace) -> Any:
        raise AssertionError("planned whole")

    monkeypatch.setattr(convert_command, "plan", no_plan)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("policy", ["strict", "lossy"])
def test_a_streamed_run_prints_what_the_planned_run_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], jobs: str,
                                                         policy: str) -> None:
    saves = _tree(tmp_path / "saves")
    other = tmp_path / "other"
    other.mkdir()
    (other / "keys.sav").write_bytes(g3("object_keybinds", objects=True))
    runs = {}
    for how in ("planned", "streamed"):
        out = saves / "slots" / f"v3-{how}"  # made inside the input, before the listing meets it
        with monkeypatch.context() as patch:
            (_planned if how == "planned" else _streamed_only)(patch)
            status, lines, err = in_process(capsys, "convert", saves, other, "--to", "godot3", "--out-dir", out,
                                            "--policy", policy, "--jobs", jobs)
        assert err == ""
        runs[how] = status, [line.replace(str(out), "OUT") for line in lines]
        shutil.rmtree(out)
    assert runs["streamed"] == runs["planned"]
    status, lines = runs["streamed"]
    assert status == 1 and not [line for line in lines if "OUT:" in line], lines
    assert lines[-1] == ("10 file(s): 0 converted, 3 unchanged, 3 failed, 4 skipped" if policy == "strict" else
                         "10 file(s): 1 converted, 3 unchanged, 2 failed, 4 skipped"), lines
    # The background count of the progress line counts the same entries as the listing gives lines.
    assert count_entries([str(saves), str(other)], convert_command._real(saves / "slots" / "v3")) == 10


def _blocking_walk(monkeypatch: pytest.MonkeyPatch, wait: Any) -> None:
    """The listing gives its first file, then waits on ``wait`` before the rest."""
    real = convert_command._walk

    def walk(folder: Path, exclude: Path | None) -> Iterator[tuple[Path, Any]]:
        entries = real(folder, exclude)
        yield next(entries)
        assert wait.wait(120), "the first file was not converted before the listing went on"
        yield from entries

    monkeypatch.setattr(convert_command, "_walk", walk)


def test_the_first_file_is_converted_before_the_listing_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    saves = tmp_path / "saves"
    saves.mkdir()
    for i in range(3):
        (saves / f"game{i}.sav").write_bytes(g3("save_game"))
    printed = threading.Event()
    real = convert_command.printable

    def printable(text: str) -> str:
        printed.set()  # the first outcome's line: set before the listing goes on
        return real(text)

    monkeypatch.setattr(convert_command, "printable", printable)
    _blocking_walk(monkeypatch, printed)
    status, lines, _ = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", tmp_path / "out",
                                  "--jobs", "1")
    assert status == 0 and lines[-1] == "3 file(s): 3 converted, 0 unchanged, 0 failed, 0 skipped", lines
    assert lines[0].startswith(f"converted  {saves / 'game0.sav'}: godot3 -> godot4 -> ")


@pytest.mark.skipif(sys.platform != "linux", reason="the workers inherit the patch and the event by fork")
def test_on_the_pool_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    saves = tmp_path / "saves"
    saves.mkdir()
    for i in range(3):
        (saves / f"game{i}.sav").write_bytes(g3("save_game"))
    converted = multiprocessing.get_context("fork").Event()  # set in a worker, once it converted a file
    real = convert_command.converted

    def convert_bytes(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        converted.set()
        return done

    monkeypatch.setattr(convert_command, "converted", convert_bytes)
    _blocking_walk(monkeypatch, converted)
    status, lines, _ = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", tmp_path / "out",
                                  "--jobs", "2")
    assert status == 0 and lines[-1] == "3 file(s): 3 converted, 0 unchanged, 0 failed, 0 skipped", lines
    same_as_engine((tmp_path / "out" / "saves" / "game0.sav").read_bytes(), g4("save_game"))


@pytest.mark.parametrize("linked", ["b", "a"])
def test_two_outputs_resolving_to_one_file_the_first_listed_is_converted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          linked: str) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, name in ((a, "save_game"), (b, "settings")):
        folder.mkdir()
        (folder / "game.sav").write_bytes(g3(name))
    out = tmp_path / "out"
    real = "a" if linked == "b" else "b"
    (out / real).mkdir(parents=True)
    (out / linked).symlink_to(out / real)  # out/a/game.sav and out/b/game.sav are one file
    args = ("convert", a, b, "--to", "godot4", "--out-dir", out, "--jobs", "1")
    with monkeypatch.context() as patch:
        _planned(patch)  # planned whole: both refused, before anything is written
        status, lines, _ = in_process(capsys, *args)
    assert status == 1 and lines[-1] == "2 file(s): 0 converted, 0 unchanged, 2 failed, 0 skipped", lines
    assert not (out / "a" / "game.sav").exists()
    _streamed_only(monkeypatch)  # streamed: the first is written before the second is listed
    status, lines, _ = in_process(capsys, *args)
    assert status == 1 and lines[-1] == "2 file(s): 1 converted, 0 unchanged, 1 failed, 0 skipped", lines
    assert lines[1] == (f"failed     {b / 'game.sav'}: {out / 'b' / 'game.sav'} is also the output of "
                        f"{a / 'game.sav'}, listed first; nothing written (convert them to different places)")
    same_as_engine((out / real / "game.sav").read_bytes(), g4("save_game"))
    assert (b / "game.sav").read_bytes() == g3("settings")


def test_one_folder_named_twice_through_a_symlink_is_converted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (a / "game.sav").write_bytes(g3("save_game"))
    (tmp_path / "b").symlink_to(a)
    runs = {}
    for how in ("planned", "streamed"):
        out = tmp_path / how
        (out / "a").mkdir(parents=True)
        (out / "b").symlink_to(out / "a")
        with monkeypatch.context() as patch:
            (_planned if how == "planned" else _streamed_only)(patch)
            status, lines, _ = in_process(capsys, "convert", a, tmp_path / "b", "--to", "godot4", "--out-dir", out)
        runs[how] = status, [line.replace(str(out), "OUT") for line in lines]
    assert runs["streamed"] == runs["planned"]
    assert runs["streamed"][1][1:] == [f"skipped    {tmp_path / 'b' / 'game.sav'}: the same file as {a / 'game.sav'}, "
                                       "named twice (converted once)",
                                       "2 file(s): 1 converted, 0 unchanged, 0 failed, 1 skipped"]


def test_the_root_folder_s_outputs_sit_straight_in_the_out_dir_and_a_clash_names_the_first(tmp_path: Path) -> None:
    # "/" has no name: its files' outputs are OUT/<path> (no OUT/<name>/), so an output through a
    # symlink that meets one of them names that file from its path alone (it was a KeyError).
    out = tmp_path / "OUT"
    (out / "x").mkdir(parents=True)
    (out / "y").symlink_to(out / "x")
    checks = convert_command.Destinations(out, ["/"])
    first = convert_command.Job(Path("/x/a.sav"), "/x/a.sav", out / "x" / "a.sav")
    assert checks.check(first) is first
    second = checks.check(convert_command.Job(Path("/y/a.sav"), "/y/a.sav", out / "y" / "a.sav"))
    assert second.refused == convert_command.Outcome(
        "failed", f"{out / 'y' / 'a.sav'} is also the output of /x/a.sav, listed first; nothing written "
                  "(convert them to different places)")
    # A named folder's outputs still name their folder's file.
    named = convert_command.Destinations(out, [str(tmp_path / "x")])
    assert named.check(convert_command.Job(tmp_path / "x" / "a.sav", "x/a.sav", out / "x" / "a.sav")).refused is None
    clash = named.check(convert_command.Job(tmp_path / "z" / "a.sav", "z/a.sav", out / "y" / "a.sav"))
    assert clash.refused is not None and f"the output of {tmp_path / 'x' / 'a.sav'}," in clash.refused.detail


def test_an_output_resolving_outside_the_out_dir_is_refused_as_listed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    saves = tmp_path / "saves"
    saves.mkdir()
    (saves / "game.sav").write_bytes(g3("save_game"))
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    out.mkdir()
    (out / "saves").symlink_to(elsewhere)
    _streamed_only(monkeypatch)
    status, lines, _ = in_process(capsys, "convert", saves, "--to", "godot4", "--out-dir", out, "--jobs", "2")
    assert status == 1 and lines == [
        f"failed     {saves / 'game.sav'}: the output {out / 'saves' / 'game.sav'} resolves to "
        f"{elsewhere / 'game.sav'}, outside --out-dir {out}; nothing written",
        "1 file(s): 0 converted, 0 unchanged, 1 failed, 0 skipped"]
    assert list(elsewhere.iterdir()) == []


def _args(*inputs: Path, out_dir: Path | None = None, output: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(inputs=[str(i) for i in inputs], out_dir=str(out_dir) if out_dir else None,
                              output=output)


def test_the_shapes_that_keep_the_whole_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    a, b, inside = tmp_path / "a" / "saves", tmp_path / "b" / "saves", out / "in"
    for folder in (a, b, inside):
        folder.mkdir(parents=True)
        (folder / "game.sav").write_bytes(g3("save_game"))
    streamable = convert_command.streamable
    assert streamable(_args(a, out_dir=out)) and streamable(_args(a, tmp_path / "b", out_dir=out))
    assert streamable(_args(tmp_path, out_dir=out))  # the out-dir inside the input: the listing skips it
    assert not streamable(_args(a, b, out_dir=out))  # one name twice: one output folder
    assert not streamable(_args(a, inside, out_dir=out))  # an input inside the out-dir
    assert not streamable(_args(out, out_dir=out))
    assert not streamable(_args(a, a / "game.sav", out_dir=out))  # a file
    assert not streamable(_args(a))  # in place
    assert not streamable(_args(a, output="x.sav")) and not streamable(_args(Path("-"), out_dir=out))

    def no_listing(args: argparse.Namespace) -> Any:
        raise AssertionError("streamed")

    monkeypatch.setattr(convert_command, "listing", no_listing)
    # The lines of the run before the listing was streamed (the same command, run then).
    status, lines, _ = in_process(capsys, "convert", a, inside, a / "game.sav", "--to", "godot4", "--out-dir", out)
    assert status == 1 and lines[-1] == "3 file(s): 2 converted, 0 unchanged, 1 failed, 0 skipped", lines
    assert lines[1] == f"failed     {inside / 'game.sav'}: {inside / 'game.sav'} would replace the input; " \
                       "use --overwrite"
    status, lines, _ = in_process(capsys, "convert", a, b, "--to", "godot4", "--out-dir", tmp_path / "two")
    assert status == 1 and lines[-1] == "2 file(s): 0 converted, 0 unchanged, 2 failed, 0 skipped", lines
    assert all("neither is written" in line for line in lines[:2])


def test_the_progress_line_shows_the_rate_until_the_count_is_in() -> None:
    stream = io.StringIO()
    progress = convert_command.Progress(None, "always", stream)
    progress.show(3, "saves/game.sav")
    assert stream.getvalue().startswith("\r3/? ") and "/s saves/game.sav" in stream.getvalue()
    progress._counted(6)
    progress.show(4, "saves/next.sav")
    last = stream.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("[#############.......] 4/6 ") and " ETA " in last
    progress.show(7, "done")  # a count a little short (a file added meanwhile) never overflows the bar
    assert stream.getvalue().rsplit("\r", 1)[-1].startswith("[####################] 7/6 ")
    quiet = convert_command.Progress(None, "never", io.StringIO())
    quiet.counting(["."], None)  # off: no count is started, nothing drawn
    quiet.show(1, "x")
    assert quiet.total is None and quiet.stream.getvalue() == ""  # type: ignore[attr-defined]


CRASHING = """
import os, sys, time
import godot_formats.commands.convert as c
parent, real = os.getpid(), c.convert_one
def convert_one(job, args, step=c.no_step):
    name = job.source.name if job.source else ""
    if os.getpid() != parent and "crash" in name:
        time.sleep(1); os._exit(9)   # the pool breaks while the slow file holds the other worker
    if os.getpid() != parent and "slow" in name:
        time.sleep(4)
    return real(job, args, step)
c.convert_one = convert_one
from godot_formats.tool import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the workers inherit the patch by fork")
def test_a_broken_pool_never_removes_an_output_through_a_refused_file(tmp_path: Path) -> None:
    """``b/0.sav``'s output resolves to ``a/0.sav``'s (``out/b`` is a symlink to ``out/a``): it is
    refused, never written.  When a worker dies while it waits, the files in flight are tidied before
    their solo retries, and a refused file's tidy removed ``a/0.sav``'s converted output (its line
    said converted).  A refused file is never tidied."""
    import subprocess

    for name in ("0.sav", "1crash.sav", "2slow.sav", "3.sav"):
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "a" / name).write_bytes(framed(g3("save_slots")))  # engine-made records
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "0.sav").write_bytes(framed(g3("settings")))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "b").symlink_to("a")
    proc = subprocess.run([sys.executable, "-c", CRASHING, "convert", "a", "b", "--to", "godot4", "--out-dir", "out",
                           "--jobs", "2"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1, proc.stderr
    assert any(line.startswith("failed     b/0.sav: ") and "also the output of a/0.sav" in line for line in lines)
    converted = [line.split(": ", 1)[0].split()[-1] for line in lines if line.startswith("converted")]
    assert sorted(converted) == ["a/0.sav", "a/2slow.sav", "a/3.sav"], proc.stdout
    for name in converted:
        assert (tmp_path / "out" / name).is_file()  # every output its line names is there
