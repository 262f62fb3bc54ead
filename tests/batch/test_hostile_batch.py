"""Hostile input, round 4 (issue 40): the batch engine against what a crash, a disk, a file system and a
stranger's file names can do.  Each case runs the command line in a process of its own, under a
memory cap (``RLIMIT_AS``) and a hang guard, as tests/hostile/test_probes.py does: the outcome is
the run's summary and rows, never "internal error", a hang, a file outside the output folder, or a
process left behind.  The inputs are the engine's own saves (fixtures/nodepath_padding)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from capped import Ended, run_capped
from test_batch import PASSWORD, make_inputs

from godot_formats import batch
from godot_formats.layers.files import host_tag

resource = pytest.importorskip("resource", reason="no resource limits on this system")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="Linux file and process rules")]

REPO = Path(__file__).resolve().parents[2]
#: Address space a run may use (the interpreter, the library, a pool's bookkeeping).
MEMORY_CAP = 1 << 30
#: Seconds after which a run counts as hung (each takes a few seconds here).
HANG_GUARD = 240

CHILD = """
import resource, signal, sys
{extra}
from godot_formats.tool import main
sys.exit(main(sys.argv[1:]))
"""


def run(*args: Any, extra: str = "") -> Ended:
    """``godot-formats ARGS`` in a child process under the memory cap and the hang guard."""
    return run_capped(CHILD.format(extra=textwrap.dedent(extra)), *map(str, args), cap=MEMORY_CAP, guard=HANG_GUARD,
                      env={"PYTHONPATH": str(REPO), "GODOT_FORMATS_PASSWORD": PASSWORD})


def rows(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_bytes().splitlines() if line.strip()]


def converted_all(proc: Ended, n: int) -> None:
    assert "internal error" not in proc.stdout + proc.stderr, proc.stderr
    assert f"{n} file(s):" in proc.stdout, proc.stdout + proc.stderr


def saves(root: Path, n: int = 6) -> list[str]:
    """``n`` of the engine's Godot 3 saves that convert to Godot 4 without loss."""
    make_inputs(root, random_file=False)
    keep = sorted(p for p in root.glob("*.sav") if p.name in ("plain.sav", "encrypted.sav", "zstd.sav",
                                                              "fastlz.sav", "big_endian.sav"))[:n]
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file() and path not in keep:
            path.unlink()
        elif path.is_dir():
            path.rmdir()
    return sorted(p.relative_to(root).as_posix() for p in keep)


# -- 1 and 9: a journal that a crash or a disk damaged ---------------------------------------------------------


DAMAGE = {
    "a last line cut inside a UTF-8 character": lambda good: good + '{"path": "caf\u00e9'.encode()[:-1],
    "a row whose path is not text": lambda good: good + b'{"path": [1], "status": "converted"}\n',
    "a line nested 100,000 deep": lambda good: good + b"[" * 100_000 + b"\n",
    "a line that is not JSON, then good rows": lambda good: b"\xff\xfe garbage\n" + good,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("resume", [True, False], ids=["resume", "no resume"])
def test_a_damaged_journal_is_read_around(tmp_path: Path, damage: str, resume: bool) -> None:
    keys = saves(tmp_path / "in")
    journal = tmp_path / "report.jsonl"
    first = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal)
    converted_all(first, len(keys))
    good = journal.read_bytes()
    kept = [r for r in rows(journal) if r["path"] != keys[0]]  # the first file's row lost: it is done again
    good = b"".join(json.dumps(r).encode() + b"\n" for r in kept)
    (tmp_path / "out" / "in" / keys[0]).unlink()
    journal.write_bytes(DAMAGE[damage](good))
    flags = ["--resume"] if resume else []
    again = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal,
                "--overwrite", *flags)
    converted_all(again, len(keys))
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "out" / "in" / keys[0]).exists()
    if resume:
        assert f"{len(keys) - 1} skipped" in again.stdout
    if resume and damage != "a last line cut inside a UTF-8 character":  # a torn last line is cut, not noted
        assert "note:" in again.stderr and "skipped" in again.stderr
    final = batch.read_journal(journal)
    assert sorted(final) == keys and all(batch.report.is_final(r) for r in final.values())
    for line in journal.read_bytes().splitlines():  # whole JSON lines for every reader after the run
        if line.strip() and not line.startswith((b"\xff", b"[")) and b'"path": [1]' not in line:
            json.loads(line)


def test_a_full_disk_ends_with_the_summary_and_a_whole_journal(tmp_path: Path) -> None:
    """The journal grows past what the disk takes (a file size limit stands in for the full disk): the
    run stops with its summary, the journal keeps whole lines, and --resume finishes the job."""
    keys = saves(tmp_path / "in")
    for i in range(40):  # enough rows that the journal outgrows the limit
        (tmp_path / "in" / f"copy{i:02}.sav").write_bytes((tmp_path / "in" / keys[0]).read_bytes())
    journal = tmp_path / "report.jsonl"
    limit = 6000  # bytes: every save fits, 40 rows do not
    extra = f"""
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as ENOSPC would
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    """
    full = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal,
               extra=extra)
    assert "internal error" not in full.stdout + full.stderr
    assert full.returncode == 1 and "file(s):" in full.stdout and "stopped: cannot write the journal" in full.stdout
    assert "cannot write the journal" in full.stderr
    for line in journal.read_bytes().splitlines():
        json.loads(line)
    done = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal,
               "--resume")
    converted_all(done, len(keys) + 40)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(batch.report.is_final(r) for r in batch.read_journal(journal).values())
    assert len(batch.read_journal(journal)) == len(keys) + 40


# -- 2: names that are not UTF-8 -------------------------------------------------------------------------


def test_a_name_that_is_not_utf8_gets_its_row_and_resumes(tmp_path: Path) -> None:
    keys = saves(tmp_path / "in", 2)
    bad = os.fsencode(tmp_path / "in") + b"/\xffbad.sav"
    with open(bad, "wb") as f:
        f.write((tmp_path / "in" / keys[0]).read_bytes())
    journal = tmp_path / "report.jsonl"
    first = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal)
    converted_all(first, 3)
    assert first.returncode == 0, first.stdout + first.stderr
    by_bytes = {r.get("path_bytes"): r for r in rows(journal)}
    row = by_bytes[b"\xffbad.sav".hex()]
    assert row["status"] == "converted" and row["path"] == "\\xffbad.sav"
    assert os.path.exists(os.fsencode(tmp_path / "out" / "in") + b"/\xffbad.sav")
    assert batch.key_of(row) == os.fsdecode(b"\xffbad.sav")  # the name exactly as the walk gives it
    again = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report", journal,
                "--resume")
    converted_all(again, 3)
    assert "3 skipped" in again.stdout, again.stdout
    parquet = pytest.importorskip("pyarrow.parquet")
    pq = tmp_path / "report.parquet"
    third = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out2", "--to", "godot4", "--report", pq)
    converted_all(third, 3)
    table = parquet.read_table(pq).to_pylist()
    assert {r["path_bytes"] for r in table} == {None, b"\xffbad.sav".hex()}


# -- 3: symlinked folders inside the output folder ------------------------------------------------------


@pytest.mark.parametrize("mode", [[], ["--jobs", "1"], ["--report", "REPORT"]], ids=["pool", "one process", "journal"])
def test_nothing_is_written_outside_out_dir_through_a_symlinked_folder(tmp_path: Path, mode: list[str]) -> None:
    (tmp_path / "in" / "d0").mkdir(parents=True)
    (tmp_path / "in" / "d1").mkdir()
    keys = saves(tmp_path / "src", 2)
    for key in keys:
        for d in ("d0", "d1"):
            (tmp_path / "in" / d / Path(key).name).write_bytes((tmp_path / "src" / key).read_bytes())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out" / "in").mkdir(parents=True)
    (tmp_path / "out" / "in" / "d0").symlink_to(elsewhere, target_is_directory=True)
    args = [a.replace("REPORT", str(tmp_path / "r.jsonl")) for a in mode]
    proc = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", *args)
    assert "internal error" not in proc.stdout + proc.stderr
    assert list(elsewhere.iterdir()) == []
    assert proc.returncode == 1
    refused = [line for line in proc.stdout.splitlines() if line.startswith("failed")]
    assert len(refused) == 2 and all("outside" in line and str(elsewhere) in line for line in refused), proc.stdout
    assert sorted(p.name for p in (tmp_path / "out" / "in" / "d1").iterdir()) == sorted(Path(k).name for k in keys)


# -- 4: two runs on one output folder -------------------------------------------------------------------


def test_a_temporary_file_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    keys = saves(tmp_path / "in", 2)
    out = tmp_path / "out" / "in"
    out.mkdir(parents=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        theirs = out / f".{keys[0]}.godot-formats-p{live.pid}h{host_tag()}_abc123.tmp"
        theirs.write_bytes(b"another run is writing this")
        stale = out / f".{keys[1]}.godot-formats-p{dead.pid}h{host_tag()}_abc123.tmp"
        stale.write_bytes(b"half a save")
        proc = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report",
                   tmp_path / "r.jsonl")
        converted_all(proc, 2)
        assert theirs.exists() and not stale.exists()
    finally:
        live.kill()
        live.wait()


# -- 5: workers die with their parent -------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(x) for x in (task / "children").read_text().split()]
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return state[state.rfind(b")") + 2:][:1] in (b"Z", b"X")


def test_workers_die_with_their_parent_killed_alone(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    keys = saves(tmp_path / "src", 1)
    data = (tmp_path / "src" / keys[0]).read_bytes()
    for i in range(3000):
        (tmp_path / "in" / f"s{i:04}.sav").write_bytes(data)
    parent = subprocess.Popen([sys.executable, "-m", "godot_formats", "convert", str(tmp_path / "in"), "--out-dir",
                               str(tmp_path / "out"), "--to", "godot4", "--jobs", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO), "GODOT_FORMATS_PASSWORD": PASSWORD})
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            workers = [c for c in _children(parent.pid) if not _gone(c)]
            time.sleep(0.05)
        assert len(workers) >= 2, "the pool never started"
        os.kill(parent.pid, signal.SIGKILL)  # the parent alone, not its process group
        parent.wait()
        deadline = time.monotonic() + 30
        while not all(_gone(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(w) for w in workers), "workers outlived their parent"
        assert parent.stderr is not None
        parent.stderr.read()  # a caller reading stderr to its end is not held by orphaned workers
    finally:
        parent.kill()
        for w in _children(parent.pid) if not _gone(parent.pid) else []:
            os.kill(w, signal.SIGKILL)


# -- 7: special files named as inputs -------------------------------------------------------------------


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "FIFO":
        os.mkfifo(tmp_path / "fifo.sav")
        return tmp_path / "fifo.sav"
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / "sock.sav"))
        return tmp_path / "sock.sav"
    return Path("/dev/zero")


@pytest.mark.parametrize("kind", ["FIFO", "socket", "/dev/zero"])
@pytest.mark.parametrize("mode", [["-o", "OUT"], ["--out-dir", "OUTDIR"], ["--out-dir", "OUTDIR", "--jobs", "2"]],
                         ids=["-o", "one process", "pool"])
def test_a_special_file_named_as_an_input_is_refused_at_once(tmp_path: Path, kind: str, mode: list[str]) -> None:
    path = _special(tmp_path, kind)
    keys = saves(tmp_path / "in", 1)
    inputs = [path] if mode[0] == "-o" else [path, tmp_path / "in" / keys[0]]
    args = [a.replace("OUTDIR", str(tmp_path / "out")).replace("OUT", str(tmp_path / "o.sav")) for a in mode]
    proc = run("convert", *inputs, "--to", "godot4", *args)
    assert "internal error" not in proc.stdout + proc.stderr and "MemoryError" not in proc.stderr
    lines = proc.stdout + proc.stderr
    what = {"FIFO": "FIFO", "socket": "socket", "/dev/zero": "character device"}[kind]
    assert f"failed     {path}: " in lines and what in lines, lines
    assert proc.returncode == 1
    if mode[0] != "-o":
        assert (tmp_path / "out" / keys[0]).exists()


@pytest.mark.parametrize("kind", ["FIFO", "/dev/zero"])
def test_batch_convert_refuses_a_special_file_among_its_keys(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    code = f"""
import json, sys
from godot_formats import batch
from godot_formats.layers.files import host_tag
result = batch.convert([{str(path)!r}], {str(tmp_path / 'out')!r}, to="godot4", workers=1,
                       report={str(tmp_path / 'r.jsonl')!r})
print(json.dumps(result.rows))
"""
    proc = run_capped(code, cap=MEMORY_CAP, guard=HANG_GUARD, env={"PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["status"] == "failed" and row["error_kind"] == "bad input" and "not a regular file" in row["error"] \
        or "FIFO" in row["error"] or "device" in row["error"], row


def test_a_worker_of_a_fork_server_lives_while_the_run_does() -> None:
    """A worker's watch asks whether the run's process lives, not whether it is the worker's parent:
    under ``forkserver`` (Python 3.14's default on Linux) the parent is the fork server."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from godot_formats.batch.signals import worker_start

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"), initializer=worker_start,
                               initargs=(os.getpid(),))
    try:
        assert pool.submit(os.getpid).result(timeout=HANG_GUARD) != os.getpid()
        time.sleep(1.5)  # past a few of the watch's looks
        assert pool.submit(sum, [1, 2]).result(timeout=HANG_GUARD) == 3
    finally:
        pool.shutdown()


def test_a_fifo_named_by_url_or_as_the_journal_is_refused_at_once(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    os.mkfifo(tmp_path / "fifo.sav")
    code = f"""
import json, sys
from godot_formats import batch
result = batch.convert(["file://{tmp_path / 'fifo.sav'}"], {str(tmp_path / 'out')!r}, to="godot4", workers=1,
                       report={str(tmp_path / 'r.jsonl')!r})
print(json.dumps(result.rows))
"""
    proc = run_capped(code, cap=MEMORY_CAP, guard=HANG_GUARD, env={"PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["status"] == "failed" and "FIFO" in row["error"], row
    os.mkfifo(tmp_path / "journal.jsonl")
    saves(tmp_path / "in", 1)
    again = run("convert", tmp_path / "in", "--out-dir", tmp_path / "o2", "--to", "godot4", "--report",
                tmp_path / "journal.jsonl", "--resume")
    assert again.returncode == 2 and "is a FIFO, not a regular file" in again.stderr, again.stderr


def test_a_temporary_file_of_another_host_goes_only_when_older_than_the_run(tmp_path: Path) -> None:
    """Another container on a shared volume has process ids of its own: its writer is not asked
    about, and its temporary file counts as stale only once it is older than the run."""
    from godot_formats.batch.output import remove_stale_temps

    dest = tmp_path / "a.sav"
    other = "0" * 8 if host_tag() != "0" * 8 else "1" * 8
    fresh = tmp_path / f".a.sav.godot-formats-p1h{other}_x.tmp"
    old = tmp_path / f".a.sav.godot-formats-p2h{other}_y.tmp"
    fresh.write_bytes(b"being written elsewhere")
    old.write_bytes(b"left by a dead run elsewhere")
    started = time.time()
    os.utime(old, (started - 3600, started - 3600))
    remove_stale_temps(dest, started - 60)
    assert fresh.exists() and not old.exists()
    remove_stale_temps(dest)  # no run start known: nothing of another host is removed
    assert fresh.exists()


def test_a_symlinked_output_file_is_written_through_inside_and_refused_outside(tmp_path: Path) -> None:
    """The one rule of every mode: an output that is a symlink is written through to its target when
    that resolves inside the output folder (the link kept), and refused when it leads out."""
    keys = saves(tmp_path / "in", 2)
    out = tmp_path / "out" / "in"
    out.mkdir(parents=True)
    (tmp_path / "out" / "kept.sav").write_bytes(b"old")
    (out / keys[0]).symlink_to(tmp_path / "out" / "kept.sav")
    (tmp_path / "elsewhere.sav").write_bytes(b"not ours")
    (out / keys[1]).symlink_to(tmp_path / "elsewhere.sav")
    proc = run("convert", tmp_path / "in", "--out-dir", tmp_path / "out", "--to", "godot4", "--report",
               tmp_path / "r.jsonl", "--overwrite")
    assert "internal error" not in proc.stdout + proc.stderr
    assert (out / keys[0]).is_symlink() and (tmp_path / "out" / "kept.sav").read_bytes() != b"old"
    assert (tmp_path / "elsewhere.sav").read_bytes() == b"not ours"
    refused = [line for line in proc.stdout.splitlines() if line.startswith("failed")]
    assert len(refused) == 1 and "outside" in refused[0], proc.stdout
