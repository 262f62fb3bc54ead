"""Named inputs that are not regular files: a FIFO with no writer, ``/dev/zero``, a socket, a folder.

Every entry point that takes a path reads it through one bounded read
(``godot_formats.layers.files.read_bounded``), which refuses them before a byte is read, with the
library's ``NotRegularFileError`` naming the file and what it is; a command says so in one line and
exits non-zero.  Before, a FIFO blocked ``gf.open``, ``gf.open_resource``, ``gf.scan_resource`` and
``dump`` forever, and ``gf.open("/dev/zero")`` read 1 GiB + 1 bytes, then raised a bare ``MemoryError``
under a 1 GiB cap.

Each case runs in a process of its own under an address-space cap with a hang guard (as
tests/hostile/test_probes.py runs its probes): a FIFO that blocked would end the child, not the run.
The guard is a bound far above any honest run, never a measure of speed.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import socket
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from capped import run_capped

import godot_formats as gf
from godot_formats.core import errors, limits
from godot_formats.layers import files

resource = pytest.importorskip("resource", reason="no resource limits on this system")

ROOT = Path(__file__).resolve().parents[2]
#: Address space a child may use: the interpreter and the library take about 150 MiB of it; reading
#: /dev/zero to the default max_size (1 GiB) would not fit.
MEMORY_CAP = 768 << 20
#: Seconds after which a child counts as hung (each takes about a second here).
HANG_GUARD = 120

#: What each special file is called in the library's message.
KINDS = {"fifo": "a FIFO", "zero": "a character device", "socket": "a socket", "folder": "a directory"}

#: The entry points that take a path, as the child calls them.
LIBRARY = {
    "gf.open": "gf.open(path)",
    "gf.open_resource": "gf.open_resource(path)",
    "gf.scan_resource": "gf.scan_resource(path)",
    "gf.scan_file": "gf.scan_file(path)",
    "gf.FileAccess.open": "gf.FileAccess.open(path, 'r', dialect='godot4')",
}

#: The commands that read a named input, with the arguments after FILE, and their exit status for a
#: file that cannot be read (scan: 2, "not known to be safe").
COMMANDS = {"dump": ([], 1), "detect": ([], 1), "explain": ([], 1), "scan": ([], 2), "set": (["", "1"], 1),
            "edit": ([], 1), "load": (["-o", "{out}"], 1), "unwrap": ([], 1), "wrap": (["--compress", "zstd"], 1)}

CHILD = """
import contextlib, io, json, os, sys
import godot_formats as gf
from godot_formats.tool import main

def library(call, path):
    try:
        eval(call, {"gf": gf, "path": path})
        return {"outcome": "result"}
    except gf.GodotFormatsError as e:
        return {"outcome": "library error", "error": type(e).__name__, "detail": str(e)}
    except BaseException as e:
        return {"outcome": "other", "error": type(e).__name__, "detail": str(e)[:300]}

def command(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code
        except BaseException as e:
            status, _ = "raised", err.write(f"{type(e).__name__}: {e}")
    return {"status": status, "stderr": err.getvalue()}
"""


def run_child(body: str) -> Any:
    """``body`` (which prints one JSON line last) in a process of its own, under the cap and the guard."""
    proc = run_capped(CHILD + textwrap.dedent(body), cap=MEMORY_CAP, guard=HANG_GUARD, env={"EDITOR": "true"},
                      what=" (a special file was read)")
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0 and out.strip(), f"the child ended with {proc.returncode}: {err[-2000:]}"
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def special() -> Iterator[dict[str, str]]:
    """One of each: a FIFO nobody writes to, /dev/zero, a bound AF_UNIX socket and a folder (in a short
    folder of their own: a socket's path has at most 107 bytes)."""
    if not hasattr(os, "mkfifo") or not hasattr(socket, "AF_UNIX") or not os.path.exists("/dev/zero"):
        pytest.skip("needs FIFOs, AF_UNIX sockets and /dev/zero (POSIX)")
    with tempfile.TemporaryDirectory(prefix="gf-special-") as where:
        fifo, sock, folder = os.path.join(where, "pipe.sav"), os.path.join(where, "sock.sav"), os.path.join(where, "d")
        os.mkfifo(fifo)
        os.mkdir(folder)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(sock)
            listener.listen(1)
            yield {"fifo": fifo, "zero": "/dev/zero", "socket": sock, "folder": folder}
        finally:
            listener.close()


@pytest.mark.parametrize("entry", list(LIBRARY))
def test_every_library_entry_point_refuses_special_files(entry: str, special: dict[str, str]) -> None:
    outcomes = run_child(f"""
        paths = {special!r}
        print(json.dumps({{kind: library({LIBRARY[entry]!r}, path) for kind, path in paths.items()}}))
    """)
    for kind, path in special.items():
        assert outcomes[kind] == {"outcome": "library error", "error": "NotRegularFileError",
                                  "detail": f"{path}: {KINDS[kind]}, not a regular file"}, (kind, outcomes[kind])


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_says_so_in_one_line(command: str, special: dict[str, str], tmp_path: Path) -> None:
    after, status = COMMANDS[command]
    after = [a.format(out=tmp_path / "out.bin") for a in after]
    outcomes = run_child(f"""
        paths = {special!r}
        print(json.dumps({{kind: command([{command!r}, path, *{after!r}]) for kind, path in paths.items()}}))
    """)
    for kind, path in special.items():
        said = f"{KINDS[kind]}, not a regular file"
        line = (f"godot-formats scan: {path}: cannot be scanned, so it is not known to be safe: {said}\n"
                if command == "scan" else f"godot-formats {command}: {path}: {said}\n")
        assert outcomes[kind] == {"status": status, "stderr": line}, (kind, outcomes[kind])
    assert not (tmp_path / "out.bin").exists()


def test_a_file_swapped_for_a_fifo_after_its_stat_is_refused_by_fstat(special: dict[str, str]) -> None:
    """The name is looked at before it is opened, and what was opened is looked at again: a FIFO put in
    place between the two (here: a stat that lies) is opened without blocking and refused."""
    outcome = run_child(f"""
        import stat
        from godot_formats.layers import files
        real = os.stat
        regular = real(sys.executable)
        def lying(path, *args, **kwargs):
            return regular if os.fspath(path) == {special["fifo"]!r} else real(path, *args, **kwargs)
        files.os.stat = lying
        print(json.dumps(library("gf.open(path)", {special["fifo"]!r})))
    """)
    assert outcome == {"outcome": "library error", "error": "NotRegularFileError",
                       "detail": f"{special['fifo']}: a FIFO, not a regular file"}


def test_a_reference_to_a_fifo_is_not_scanned_and_says_why(special: dict[str, str], tmp_path: Path) -> None:
    """``scan_file(..., user_dir=)`` follows references into user://: one that names a FIFO is reported as
    not scanned (the reason said), never read."""
    user = Path(special["fifo"]).parent
    save = user / "main.tres"
    save.write_text('[gd_resource type="Resource" format=3]\n\n'
                    '[ext_resource type="Resource" path="user://pipe.sav" id="1"]\n\n'
                    '[resource]\nnext = ExtResource("1")\n')
    found = run_child(f"""
        print(json.dumps([[f.kind, f.message] for f in gf.scan_file({str(save)!r}, user_dir={str(user)!r})]))
    """)
    assert [kind for kind, _ in found].count("reference-not-scanned") == 1, found
    message = next(message for kind, message in found if kind == "reference-not-scanned")
    assert message.endswith("a FIFO, not a regular file"), message


# -- over max_size: refused by size, never read -------------------------------------------------------


def test_a_regular_file_one_byte_over_the_default_is_refused_without_reading_it(tmp_path: Path) -> None:
    """A sparse file of MAX_FILE_SIZE + 1 bytes (no disk): reading it would need 1 GiB, over the cap."""
    big = tmp_path / "big.sav"
    with open(big, "wb") as f:
        f.truncate(limits.MAX_FILE_SIZE + 1)
    outcomes = run_child(f"""
        print(json.dumps({{entry: library(call, {str(big)!r}) for entry, call in {LIBRARY!r}.items()}}))
    """)
    for entry, outcome in outcomes.items():
        assert outcome == {"outcome": "library error", "error": "SizeLimitError",
                           "detail": f"at byte 0: the file is {limits.MAX_FILE_SIZE + 1} bytes, over "
                                     f"max_size={limits.MAX_FILE_SIZE}"}, entry


def test_one_byte_over_max_size_is_refused_before_a_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.sav"
    data = gf.dumps({"gold": 7}, "godot4")
    path.write_bytes(data)

    def never(*args: Any) -> bytes:
        raise AssertionError("read although its size is over max_size")

    monkeypatch.setattr(files, "read_at_most", never)
    for call in (gf.open, gf.open_resource, gf.scan_resource, gf.scan_file):
        with pytest.raises(gf.SizeLimitError, match=f"the file is {len(data)} bytes, over max_size={len(data) - 1}"):
            call(path, max_size=len(data) - 1)
    monkeypatch.undo()
    assert files.read_bounded(path, len(data)) == (data, path)


def test_a_file_object_over_max_size_is_refused_after_max_size_plus_one_bytes() -> None:
    data = gf.dumps({"gold": 7}, "godot4")

    class Counting(io.BytesIO):
        asked = 0

        def read(self, n: int | None = -1) -> bytes:
            Counting.asked += n if n is not None and n >= 0 else 1 << 62
            return super().read(n)

    for call in (gf.open, gf.open_resource, gf.scan_resource, gf.scan_file, files.read_bounded):
        Counting.asked = 0
        with pytest.raises(gf.SizeLimitError, match=f"more than max_size={len(data) - 1} bytes"):
            call(Counting(data), max_size=len(data) - 1)
        assert Counting.asked == len(data)  # max_size + 1: never the whole of an endless stream
    with pytest.raises(gf.SizeLimitError, match=f"the input is {len(data)} bytes, over max_size={len(data) - 1}"):
        gf.open(data, max_size=len(data) - 1)


# -- one read, one set of limits, one hierarchy of errors ---------------------------------------------


def test_there_is_one_bounded_read() -> None:
    from godot_formats.saves import reading

    assert reading.read_bounded is files.read_bounded
    assert issubclass(gf.NotRegularFileError, gf.GodotFormatsError) and issubclass(gf.NotRegularFileError, ValueError)


def test_every_entry_point_has_the_same_limits() -> None:
    """One default max_size for every kind of file, read from core/limits.py; max_ratio's default at the
    doors that open any kind is None, each kind's own bound (limits.MAX_RATIO for a save's layers,
    limits.RSCC_MAX_RATIO for a compressed resource)."""
    for call in (gf.open, gf.open_resource, gf.scan_resource, gf.scan_file, gf.FileAccess.open, files.read_bounded):
        parameters = inspect.signature(call).parameters
        assert parameters["max_size"].default == limits.MAX_FILE_SIZE, call
        if "max_ratio" in parameters:
            assert parameters["max_ratio"].default in (None, limits.MAX_RATIO), call
    assert inspect.signature(gf.open).parameters["max_ratio"].default is None
    assert {name for call in (gf.open, gf.open_resource, gf.scan_resource, gf.scan_file)
            for name in ("max_size", "max_ratio") if name not in inspect.signature(call).parameters} == set()


def test_the_whole_error_hierarchy_is_exported() -> None:
    """Users are told to catch DamagedFileError, WrongPasswordError, SizeLimitError ...: each is gf.<Name>."""
    hierarchy = {name for name, value in vars(errors).items()
                 if inspect.isclass(value) and issubclass(value, errors.GodotFormatsError)}
    assert {"DamagedFileError", "WrongPasswordError", "SizeLimitError", "ResourceFormatError",
            "NotRegularFileError"} <= hierarchy
    for name in hierarchy:
        assert getattr(gf, name) is getattr(errors, name), name
        assert name in gf.__all__, name
