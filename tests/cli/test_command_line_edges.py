"""The command line's edges, as a new user meets them: a closed pipe, record numbers,
``set``'s note, where a layer's header error is, progress inside a large file, the version.

The pipe tests run ``python -m godot_formats`` from the repository root (this tree's package), with
a real pipe whose reader goes away, as ``| head -1`` does.
"""

from __future__ import annotations

import contextlib
import io
import re
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_main as main

import godot_formats as gf
from godot_formats import tool
from godot_formats.layers.encryption import GdecInfo, write_gdec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "saves"


def store_var(*values: Any, dialect: str = "godot4") -> bytes:
    return b"".join(struct.pack("<I", len(b)) + b for b in (gf.dumps(v, dialect) for v in values))


@pytest.fixture(scope="module")
def big_save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A save whose every view is megabytes long: far more than a pipe holds (64 KiB on Linux)."""
    path = tmp_path_factory.mktemp("big") / "big.sav"
    path.write_bytes(store_var({f"key{i}": [i, f"text {i}", gf.Vector2(i, -i)] for i in range(30000)},
                               {"second": True}))
    return path


# -- a closed pipe ends every command quietly, as cat does ---------------------------------------------------


def _cut_pipe(*args: str) -> tuple[int, bytes, bytes]:
    """Run the command with its standard output read a little, then closed (``| head -c 100``)."""
    p = subprocess.Popen([sys.executable, "-m", "godot_formats", *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read()
    p.stderr.close()
    return p.wait(timeout=120), first, err


@pytest.mark.slow
@pytest.mark.parametrize("command", [["explain"], ["dump"], ["dump", "--tree"], ["dump", "--json"],
                                     ["convert", "--to", "godot3", "-o", "-"]],
                         ids=lambda c: " ".join(c))
def test_a_closed_pipe_ends_the_command_quietly(big_save: Path, command: list[str]) -> None:
    status, first, err = _cut_pipe(*command, str(big_save))
    assert first  # it did write
    assert status == tool.EXIT_BROKEN_PIPE == 141, (status, err)  # 128 + SIGPIPE: what a shell says for cat
    assert b"Broken pipe" not in err and b"Traceback" not in err and b"Exception ignored" not in err, err


def test_a_closed_pipe_after_the_last_write_is_quiet_too(tmp_path: Path) -> None:
    """The output is still in Python's buffer when the command returns: the flush fails inside main,
    not at the interpreter's exit (which would print 'Exception ignored')."""
    path = tmp_path / "small.sav"
    path.write_bytes(store_var([1, 2, 3]))
    p = subprocess.Popen([sys.executable, "-m", "godot_formats", "dump", str(path)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader is gone before the command writes anything
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=120) in (0, tool.EXIT_BROKEN_PIPE)  # 0 when the line fit before the reader left
    assert b"Broken pipe" not in err and b"Exception ignored" not in err, err


@pytest.mark.slow
def test_a_whole_output_still_exits_0(big_save: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "godot_formats", "dump", "--tree", str(big_save)], cwd=ROOT,
                       capture_output=True, timeout=120)
    assert p.returncode == 0 and p.stdout.count(b"\n") > 30000


# -- records count from 1 everywhere -------------------------------------------------------------------------


def test_every_view_counts_records_from_1(tmp_path: Path) -> None:
    path = tmp_path / "two.sav"
    path.write_bytes(store_var({"a": 1}, {"b": 2}))
    status, tree, _ = main("dump", "--tree", path)
    assert status == 0 and [line for line in tree.splitlines() if line.startswith("record")] == \
        ["record 1 of 2:", "record 2 of 2:"]
    status, text, _ = main("dump", path)
    assert status == 0 and "; record 1 of 2\n" in text and "; record 2 of 2\n" in text
    status, listing, _ = main("explain", path)
    assert status == 0 and "store_var record 1: length prefix" in listing and "record 0" not in listing
    status, _, err = main("set", path, "b", "3", "--record", "2")
    assert status == 0 and err.startswith("record 2: b: 2 -> 3")


def test_load_names_a_bad_value_by_its_record_from_1(tmp_path: Path) -> None:
    text = tmp_path / "two.txt"
    text.write_text('1\nObject(Node,"name":"x")\n')
    status, _, err = main("load", text, "-o", tmp_path / "out.sav", "--framing", "store_var", "--dialect", "godot4")
    assert status == 1 and err.startswith("godot-formats load: record 2: Object Node"), err


# -- set's note quotes what the user typed -------------------------------------------------------------------


@pytest.fixture()
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.sav"
    path.write_bytes(store_var({"hp": 2.5, "n": 3, "flag": True}))
    return path


@pytest.mark.parametrize("typed, hint", [("4", "write 4.0 for a float"), ("-7", "write -7.0 for a float"),
                                         ("  12 ", "write 12.0 for a float")])
def test_set_a_float_to_an_int_quotes_the_value_typed(mixed: Path, typed: str, hint: str) -> None:
    status, _, err = main("set", mixed, "hp", typed)
    assert status == 0 and f"the type changes from float to int ({hint})" in err, err
    assert "100.0" not in err


def test_set_hint_in_the_json_form(mixed: Path) -> None:
    status, _, err = main("set", mixed, "hp", '"i:12"', "--json")
    assert status == 0 and 'the type changes from float to int (write "f:12" for a float)' in err, err


@pytest.mark.parametrize("path, typed, change", [("hp", "true", "from float to bool"),
                                                 ("n", "4.5", "from int to float"),
                                                 ("hp", '"x"', "from float to str"),
                                                 ("flag", "1", "from bool to int")])
def test_set_says_nothing_of_floats_unless_a_float_became_an_int(mixed: Path, path: str, typed: str,
                                                                 change: str) -> None:
    status, _, err = main("set", mixed, path, typed)
    assert status == 0 and f"the type changes {change}\n" in err, err
    assert "for a float" not in err


# -- a layer's header error says it is the header, and where in the file ---------------------------------------


@pytest.mark.parametrize("command", ["dump", "explain", "detect", "unwrap"])
def test_every_command_says_a_layer_header_error_is_in_the_header(tmp_path: Path, command: str) -> None:
    broken = bytearray((EXAMPLES / "godot3_compressed.sav").read_bytes())
    struct.pack_into("<I", broken, 8, 0)  # the block size
    path = tmp_path / "c.sav"
    path.write_bytes(bytes(broken))
    nested = tmp_path / "e.sav"
    nested.write_bytes(write_gdec(bytes(broken), GdecInfo(3), password="pw"))
    _, out, err = main(command, path)
    assert "at byte 8 of the file, in the compressed file's header: block size 0" in out + err
    _, out, err = main(command, nested, "--password", "pw")
    assert ("at byte 8 of the decrypted data (byte 40 of the file), in the compressed layer's header: block size 0"
            in out + err)


# -- progress inside a large file --------------------------------------------------------------------------------


def test_progress_ticks_inside_a_slow_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """One large save used to show nothing for 20 s: the line now says what the file is doing and
    for how long (here a conversion made slow, and the ticker made fast)."""
    from godot_formats.commands import convert as convert_command

    real = convert_command.converted

    def slow(data: bytes, args: Any, step: Any = None, form: Any = None) -> Any:
        step("converting")
        time.sleep(0.6)
        return real(data, args, form=form)

    monkeypatch.setattr(convert_command, "converted", slow)
    monkeypatch.setattr(convert_command.Progress, "tick", 0.05)
    source = tmp_path / "big.sav"
    source.write_bytes(store_var({"a": 1.5}, dialect="godot3"))
    status = tool.main(["convert", str(source), "--to", "godot4", "-o", str(tmp_path / "out.sav"),
                        "--progress", "always"])
    out, err = capsys.readouterr()
    assert status == 0 and out.startswith("converted")
    frames = [f.strip() for f in err.split("\r") if f.strip()]
    assert any(re.fullmatch(r"\[\.{20}\] 0/1 .*big\.sav: converting, \d+ s", f) for f in frames), frames
    assert frames[-1] == "[####################] 1/1 done"


def test_progress_is_off_when_stderr_is_not_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "a.sav"
    source.write_bytes(store_var(1, dialect="godot3"))
    status = tool.main(["convert", str(source), "--to", "godot4", "-o", str(tmp_path / "b.sav")])
    _, err = capsys.readouterr()
    assert status == 0 and "\r" not in err


# -- one version: --version, the package, the build and the CHANGELOG agree ---------------------------------------


def test_the_version_is_said_the_same_everywhere() -> None:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        status = tool.main(["--version"])  # answered before any parser is built
    assert status == 0 and printed.getvalue() == f"godot-formats {gf.__version__}\n"
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stdout(io.StringIO()) as printed:
        tool.build_parser().parse_args(["--version"])  # the parser says the same (--help lists it)
    assert int(exit_info.value.code or 0) == 0 and printed.getvalue() == f"godot-formats {gf.__version__}\n"
    # pyproject.toml reads it from core/version.py: no second copy to forget
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert 'version = { attr = "godot_formats.core.version.__version__" }' in pyproject
    assert not re.search(r'^version = "', pyproject, re.M)
    # the CHANGELOG's top section is this version: "(unreleased)" while it is a .dev version
    top = re.search(r"^## (\S+)(.*)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert top is not None
    release, dev, rest = gf.__version__.partition(".dev")
    assert top.group(1) == release, (top.group(0), gf.__version__)
    assert ("unreleased" in top.group(2)) == bool(dev), (top.group(0), gf.__version__)
