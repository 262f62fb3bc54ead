"""``set`` and ``edit`` write a file back without losing anyone's update: a lock and a
compare-and-swap around the replace, the backup is the version replaced and is whole or absent,
and special files are refused before they are opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import godot_formats as gf
from godot_formats.commands import common
from godot_formats.layers.framing import join_frames

PROCESSES = 6
ROUNDS = 4


def _cli(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "godot_formats", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_concurrent_sets_lose_no_update(tmp_path: Path) -> None:
    save = tmp_path / "save.sav"
    save.write_bytes(join_frames([gf.dumps({"start": 0}, "godot3")]))
    for r in range(ROUNDS):
        procs = [subprocess.Popen([sys.executable, "-m", "godot_formats", "set", str(save), f'["k{r}_{i}"]', str(i),
                                   "--dialect", "godot3"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(PROCESSES)]
        results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
        for p in procs:
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    stream.close()
        written = [err for code, err in results if code == 0]
        assert len(written) == PROCESSES, results  # every set reads the file again when another got there first
    final = gf.open(save, dialect="godot3").values[0]
    assert final == {"start": 0, **{f"k{r}_{i}": i for r in range(ROUNDS) for i in range(PROCESSES)}}
    # One backup per write, each the exact version that write replaced: they chain, key by key.
    backups = sorted((p for p in tmp_path.iterdir() if ".bak" in p.name), key=lambda p: len(
        gf.open(p, dialect="godot3").values[0]))
    assert len(backups) == ROUNDS * PROCESSES
    sizes = [len(gf.open(p, dialect="godot3").values[0]) for p in backups]
    assert sizes == list(range(1, ROUNDS * PROCESSES + 1))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_the_backup_is_the_version_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save = tmp_path / "save.sav"
    first = gf.dumps({"gold": 1}, "godot3")
    save.write_bytes(first)
    # Another process changes the file between our read and our write: nothing is written, no backup.
    with pytest.raises(common.FileChangedError):
        changed = gf.dumps({"gold": 2}, "godot3")
        save.write_bytes(changed)
        common.write_back(save, first, gf.dumps({"gold": 3}, "godot3"))
    assert save.read_bytes() == changed and [p.name for p in tmp_path.iterdir()] == ["save.sav"]
    kept = common.write_back(save, changed, gf.dumps({"gold": 4}, "godot3"))
    assert kept.read_bytes() == changed and gf.loads(save.read_bytes(), "godot3") == {"gold": 4}


def test_a_backup_is_whole_or_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that dies half-way (here: the disk fills) leaves no backup and no temporary file."""
    save = tmp_path / "save.sav"
    data = gf.dumps({"gold": 1}, "godot3")
    save.write_bytes(data)
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        common.write_back(save, data, gf.dumps({"gold": 2}, "godot3"))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert "backup" in str(info.value) and str(tmp_path) in str(info.value)  # names the file
    assert [p.name for p in tmp_path.iterdir()] == ["save.sav"] and save.read_bytes() == data


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_special_files_are_refused_before_they_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.sav"
    os.mkfifo(fifo)
    for args in (["set", fifo, "", "1"], ["edit", fifo]):
        p = _cli(*args, timeout=60)  # a FIFO opened for reading would block until a writer comes
        assert p.returncode == 1 and "not a regular file" in p.stderr, (args, p.stderr)
