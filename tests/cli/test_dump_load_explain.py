"""The installed ``godot-formats`` command: dump, load and explain on real engine files.

Every file here is bytes an engine wrote (fixtures/godot3: Godot 3.2.3, fixtures/godot4: 4.6),
copied to a temporary folder; the text output is checked against the engine's own var_to_str.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, engine_cases

import godot_formats as gf
from godot_formats.batch.onefile import told
from godot_formats.saves.detection import frame_store_var
from godot_formats.views.jsonform import loads_json_documents

EXE = shutil.which("godot-formats")

CASES = {engine: {c["name"]: c for c in engine_cases(engine)} for engine in ("godot3", "godot4")}


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return cli(*args, stdin=stdin, cwd=cwd)


def engine_file(tmp_path: Path, engine: str, name: str, key: str = "hex") -> Path:
    path = tmp_path / f"{engine}-{name}.bin"
    path.write_bytes(bytes.fromhex(CASES[engine][name][key]))
    return path


def one_error_line(p: subprocess.CompletedProcess[bytes], command: str) -> str:
    """A failure: exit status 1 and exactly one line on stderr, no traceback."""
    err = p.stderr.decode()
    assert p.returncode == 1, (p.returncode, err)
    assert err.count("\n") == 1 and err.startswith(f"godot-formats {command}: "), err
    assert "Traceback" not in err
    return err


# -- dump -----------------------------------------------------------------------------------------------

TEXT_CASES = [("godot4", "dict_nested"), ("godot4", "vector2_0_1"), ("godot4", "array_typed_int"),
              ("godot4", "packed_string"), ("godot4", "nodepath_absolute_subname"), ("godot4", "float_third"),
              ("godot4", "dict_typed_string_int"), ("godot3", "dict_mixed_keys"), ("godot3", "pv2a"),
              ("godot3", "transform"), ("godot3", "real_pi")]


@pytest.mark.parametrize("engine, name", TEXT_CASES)
def test_dump_prints_the_engines_own_text(tmp_path: Path, engine: str, name: str) -> None:
    path = engine_file(tmp_path, engine, name)
    p = run("dump", str(path), "--dialect", engine, "--no-header")
    assert p.returncode == 0, p.stderr
    expected = CASES[engine][name]["var_to_str" if engine == "godot4" else "var2str"]
    assert p.stdout.decode() == expected + "\n"


def test_dump_detects_the_dialect(tmp_path: Path) -> None:
    # PoolVector2Array only exists in Godot 3: auto detection must pick godot3 and its text
    p = run("dump", str(engine_file(tmp_path, "godot3", "pv2a")), "--no-header")
    assert p.returncode == 0 and p.stdout.decode() == CASES["godot3"]["pv2a"]["var2str"] + "\n"


def test_dump_json_is_the_lossless_form(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "godot4", "dict_nonstring_keys")
    p = run("dump", str(path), "--json", "--no-header")
    assert p.returncode == 0
    [value] = loads_json_documents(p.stdout)
    assert gf.dumps(value) == path.read_bytes()
    assert json.loads(p.stdout)["type"] == "Dictionary"
    compact = run("dump", str(path), "--json", "--compact", "--no-header").stdout.decode()
    assert compact.count("\n") == 1 and json.loads(compact) == json.loads(p.stdout)


def test_dump_tree(tmp_path: Path) -> None:
    p = run("dump", str(engine_file(tmp_path, "godot4", "dict_nested")), "--tree")
    assert p.returncode == 0
    assert p.stdout.decode().splitlines() == [
        "Dictionary, 2 entries",
        '  "a": Dictionary, 1 entry',
        '    "b": Array, 2 items',
        "      [0] int 1",
        "      [1] Dictionary, 1 entry",
        '        "c": null',
        '  "d": Array, 0 items',
    ]
    p = run("dump", str(engine_file(tmp_path, "godot3", "pia")), "--tree")
    assert p.stdout.decode().splitlines()[0].startswith("PoolIntArray, ")


def test_dump_reads_stdin() -> None:
    blob = bytes.fromhex(CASES["godot4"]["vector2"]["hex"])
    p = run("dump", "-", "--dialect", "godot4", "--no-header", stdin=blob)
    assert p.returncode == 0 and p.stdout.decode() == "Vector2(1.5, -2)\n"


def test_full_objects_need_allow_objects(tmp_path: Path) -> None:
    path = engine_file(tmp_path, "godot4", "object_resource_with_name", "hex_full_objects")
    err = one_error_line(run("dump", str(path), "--dialect", "godot4"), "dump")
    assert "--allow-objects" in err
    p = run("dump", str(path), "--dialect", "godot4", "--allow-objects", "--json", "--no-header")
    assert p.returncode == 0
    [value] = loads_json_documents(p.stdout)
    assert value.class_name == "Resource" and value.properties["resource_name"] == "hello"


# -- framing -------------------------------------------------------------------------------------------------


def test_store_var_files(tmp_path: Path) -> None:
    # FileAccess.store_var("hi") as Godot 4.6 wrote the file: a u32 length, then the value
    path = engine_file(tmp_path, "godot4", "wire_file_store_var_str")
    p = run("dump", str(path), "--no-header")
    assert p.returncode == 0 and p.stdout.decode() == '"hi"\n'
    p = run("dump", str(path), "--framing", "store_var", "--dialect", "godot4", "--no-header")
    assert p.stdout.decode() == '"hi"\n'
    one_error_line(run("dump", str(path), "--framing", "none", "--dialect", "godot4"), "dump")
    raw = engine_file(tmp_path, "godot4", "dict_str_int")
    err = one_error_line(run("dump", str(raw), "--framing", "store_var"), "dump")
    assert "not store_var framed" in err
    # a raw value whose first word happens to equal its length - 4 is still read raw
    tricky = tmp_path / "array.bin"
    tricky.write_bytes(gf.dumps([1, 2, 3]))
    assert int.from_bytes(tricky.read_bytes()[:4], "little") == len(tricky.read_bytes()) - 4
    assert run("dump", str(tricky), "--dialect", "godot4", "--no-header").stdout.decode() == "[1, 2, 3]\n"


def _all_values(engine: str) -> list[Any]:
    out = []
    for case in CASES[engine].values():
        if case.get("hex") and not case.get("raw"):
            out.append(gf.loads(bytes.fromhex(case["hex"]), engine))
    return out


@pytest.mark.parametrize("engine", ["godot4", "godot3"])
def test_every_fixture_value_dumps_to_json_and_loads_back_identically(tmp_path: Path, engine: str) -> None:
    """One save file holding every engine value as store_var records: dump --json, load, same bytes."""
    values = _all_values(engine)
    save = tmp_path / "save.dat"
    save.write_bytes(frame_store_var([gf.dumps(v, engine) for v in values]))
    dumped = run("dump", str(save), "--json")
    assert dumped.returncode == 0, dumped.stderr
    edited = tmp_path / "save.json"
    edited.write_bytes(dumped.stdout)
    out = tmp_path / "again.dat"
    p = run("load", str(edited), "--dialect", engine, "--framing", "store_var", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == save.read_bytes()
    # the same through pipes, base64 packed arrays
    dumped = run("dump", "-", "--json", "--base64", "--dialect", engine, "--framing", "store_var",
                 stdin=save.read_bytes())
    again = run("load", "-", "--dialect", engine, "--framing", "store_var", "--hex", stdin=dumped.stdout)
    assert again.returncode == 0 and bytes.fromhex(again.stdout.decode()) == save.read_bytes()


# -- load ------------------------------------------------------------------------------------------------------


def test_load_an_engine_blob_back_to_its_exact_bytes(tmp_path: Path) -> None:
    for name in ("dict_nonstring_keys", "array_typed_vector2", "packed_vector4", "float_0_1", "int_i64_min"):
        path = engine_file(tmp_path, "godot4", name)
        (tmp_path / "v.json").write_bytes(run("dump", str(path), "--json").stdout)
        p = run("load", str(tmp_path / "v.json"), "-o", str(tmp_path / "v.bin"), "--overwrite")
        assert p.returncode == 0 and (tmp_path / "v.bin").read_bytes() == path.read_bytes(), name


def test_load_godot_text(tmp_path: Path) -> None:
    # the engine's var2str text loads back to the engine's bytes (text that keeps everything:
    # both engines sort Dictionary keys in text, and Godot 3 keeps 6 digits of a float)
    for name in ("transform", "pv2a", "arr_nested"):
        case = CASES["godot3"][name]
        (tmp_path / "v.txt").write_text(case["var2str"], encoding="utf-8")
        p = run("load", str(tmp_path / "v.txt"), "--dialect", "godot3", "--hex")
        assert p.returncode == 0 and p.stdout.decode().strip() == case["hex"], name
    # from standard input, sniffed: not our JSON, so Godot text
    p = run("load", "-", "--hex", stdin=b"Vector2(1.5, -2)")
    assert p.stdout.decode().strip() == CASES["godot4"]["vector2"]["hex"]
    p = run("load", "-", "--hex", stdin=b'{"type": "Vector2", "args": [1.5, -2]}')
    assert p.stdout.decode().strip() == CASES["godot4"]["vector2"]["hex"]


def test_load_engine_json(tmp_path: Path) -> None:
    # what JSON.stringify(JSON.from_native(v)) printed in Godot 4.6 loads to the engine's bytes
    rec = next(json.loads(line) for line in (Path(__file__).resolve().parents[2] / "fixtures" / "godot4" /
                                              "json_from_native.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(line)["name"] == "dict_typed_int_vector2")
    p = run("load", "-", "--from", "json", "--hex", stdin=rec["json"].encode())
    assert p.returncode == 0 and p.stdout.decode().strip() == rec["hex_to_native"]


def test_load_store_var_framing_and_objects(tmp_path: Path) -> None:
    p = run("load", "-", "--framing", "store_var", "--hex", stdin=b'"s:hi"')
    assert p.stdout.decode().strip() == CASES["godot4"]["wire_file_store_var_str"]["hex"]
    err = one_error_line(run("load", "-", "--hex", stdin=b'"s:a" "s:b"'), "load")
    assert "--framing store_var" in err
    obj = b'{"type": "Resource", "props": ["resource_name", "s:n"]}'
    err = one_error_line(run("load", "-", "--hex", stdin=obj), "load")
    assert "--allow-objects" in err
    p = run("load", "-", "--hex", "--allow-objects", stdin=obj)
    assert p.returncode == 0
    assert gf.loads(bytes.fromhex(p.stdout.decode()), allow_objects=True).properties == {"resource_name": "n"}


def test_load_refuses_to_write_binary_to_a_terminal_and_writes_files_whole(tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    assert run("load", "-", "-o", str(out), stdin=b'"i:7"').returncode == 0
    assert out.read_bytes() == gf.dumps(7)
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]  # no temporary file left behind
    p = run("load", "-", stdin=b'"i:7"')  # stdout is a pipe here: the bytes go to it
    assert p.returncode == 0 and p.stdout == gf.dumps(7)


# -- explain ------------------------------------------------------------------------------------------------------


def test_explain(tmp_path: Path) -> None:
    p = run("explain", str(engine_file(tmp_path, "godot4", "dict_str_int")), "--dialect", "godot4")
    assert p.returncode == 0 and p.stderr == b""
    out = p.stdout.decode().splitlines()
    assert out[0].startswith("# godot4: ")
    assert out[1].split() == ["offset", "bytes", "meaning"]
    assert out[2].split() == ["0", "1b000000", "Dictionary", "(type", "27)"]
    assert out[-1].split()[1:] == ["end:", "the", "value", "is", "28", "bytes;", "no", "trailing", "bytes"]


def test_explain_store_var_and_stdin(tmp_path: Path) -> None:
    blob = bytes.fromhex(CASES["godot4"]["wire_file_store_var_int64"]["hex"])
    p = run("explain", "-", stdin=blob)
    assert p.returncode == 0
    out = p.stdout.decode().splitlines()
    assert "store_var record 1: length prefix 12" in out[2]
    assert "int (type 2), 64-bit" in out[3] and "int64: 9223372036854775807" in out[4]


def test_explain_malformed_lists_then_fails(tmp_path: Path) -> None:
    for case in engine_cases("godot4", "malformed")[::8]:  # a sample; tests/views/test_explain.py has them all
        path = tmp_path / "bad.bin"
        path.write_bytes(bytes.fromhex(case["in_hex"]))
        p = run("explain", str(path), "--dialect", "godot4")
        try:
            gf.loads(path.read_bytes())
        except gf.DecodeError as e:
            err = one_error_line(p, "explain")
            assert told(e) in err  # the error as the command line says it (its remedy as a flag)
            assert f"error: {e}" in p.stdout.decode().splitlines()[-1]
        else:
            assert p.returncode == 0, case["name"]


# -- bad input and help ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["dump", "explain"])
def test_bad_binary_input(tmp_path: Path, command: str) -> None:
    for blob in (b"", b"\x02\x00", bytes.fromhex("1c000000ffffff7f"), b"\xff" * 16):
        path = tmp_path / "bad.bin"
        path.write_bytes(blob)
        one_error_line(run(command, str(path)), command)
    one_error_line(run(command, str(tmp_path / "missing.bin")), command)


def test_bad_text_input(tmp_path: Path) -> None:
    for text in (b'{"a": 1', b"[1, ", b'"no prefix"x', b"\xff\xfe", b"Vector2(1)"):
        one_error_line(run("load", "-", "--hex", stdin=text), "load")
    one_error_line(run("load", "-", "--from", "json", "--hex", stdin=b"[1]"), "load")


@pytest.mark.parametrize("command", ["dump", "load", "explain"])
def test_help(command: str) -> None:
    p = run(command, "--help")
    assert p.returncode == 0
    text = p.stdout.decode()
    assert "examples:" in text and "--dialect" in text and f"godot-formats {command}" in text


def test_listed_in_the_main_help() -> None:
    text = run("--help").stdout.decode()
    for command in ("dump", "load", "explain"):
        assert command in text


def test_python_m_works_too() -> None:
    """A process (the rest of this module runs ``main`` in the test's own): ``python -m``."""
    p = subprocess.run([sys.executable, "-m", "godot_formats", "load", "-", "--hex"], input=b'"i:1"',
                       capture_output=True, timeout=120)
    assert p.stdout.decode().strip() == "0200000001000000"


@pytest.mark.skipif(EXE is None, reason="the godot-formats console script is not installed (pip install -e .)")
def test_the_console_script_runs_the_commands(tmp_path: Path) -> None:
    """A process: the installed entry point, what a user types, answers as ``main`` does here."""
    assert EXE is not None
    path = engine_file(tmp_path, "godot4", "vector2")
    p = subprocess.run([EXE, "dump", str(path), "--dialect", "godot4"], capture_output=True, timeout=120)
    assert (p.returncode, p.stdout) == (0, run("dump", str(path), "--dialect", "godot4").stdout)
    version = subprocess.run([EXE, "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout == f"godot-formats {gf.__version__}\n"


# -- hostile input: a bug is one line naming the file; no write replaces what is not a file ----------


@pytest.mark.parametrize("command, stage", [("dump", "_open"), ("explain", "resolve_input")])
def test_a_bug_is_one_line_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], command: str, stage: str) -> None:
    import importlib

    from godot_formats import tool

    module = importlib.import_module(f"godot_formats.commands.{command}")

    def recurse(*args: Any) -> Any:  # a real RecursionError, as a deeply nested key once raised
        return recurse(*args) + 1

    monkeypatch.setattr(module, stage, recurse)
    path = engine_file(tmp_path, "godot4", "dict_nested")
    assert tool.main([command, str(path)]) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"godot-formats {command}: {path}: internal error (RecursionError: maximum recursion depth")
    assert err.endswith("; please report it\n")


def test_load_never_replaces_what_is_not_a_regular_file(tmp_path: Path) -> None:
    import os
    import stat

    value = tmp_path / "v.json"
    value.write_text('"i:1"')
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path):  # a FIFO (/dev/null is the same case, for root), a folder
        err = one_error_line(run("load", str(value), "-o", str(target), "--overwrite"), "load")
        assert err == f"godot-formats load: not a regular file; refusing to replace it: {target}\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    # Through a symlink: the target is replaced, the link kept; the temporary file is recognisably ours.
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    (tmp_path / "link.bin").symlink_to(real)
    assert run("load", str(value), "-o", str(tmp_path / "link.bin")).returncode == 1  # exists: not unasked
    assert run("load", str(value), "-o", str(tmp_path / "link.bin"), "--overwrite").returncode == 0
    assert (tmp_path / "link.bin").is_symlink() and real.read_bytes() == gf.dumps(1, "godot4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bin", "pipe", "real.bin", "v.json"]


# -- output amplification: output bounded by the input, any depth -----------------------


class TestOutputBoundedByInput:
    """dump --json / --tree and explain print at most a constant times the input's bytes, at any depth.

    The bounds are the worst ratios benchmarks/amplification.py measured (docs/cli.md), rounded up.
    """

    BOUNDS = {("dump", "--json"): 20, ("dump", "--json", "--compact"): 7, ("dump", "--tree"): 25,
              ("dump", "--tree", "--max-elements", "0"): 25, ("explain",): 48}

    @staticmethod
    def shapes() -> dict[str, bytes]:
        def u(x: int) -> bytes:
            return x.to_bytes(4, "little")

        def chain(depth: int) -> bytes:
            return (u(28) + u(1)) * depth

        return {
            "arrays_1025_deep": chain(1024) + u(0),
            "dictionary_keys_1025_deep": (u(27) + u(1)) * 1024 + u(0) * 1025,
            "nils_at_the_cap": chain(31) + u(28) + u(2000) + u(0) * 2000,
            "nils_past_the_cap": chain(1000) + u(28) + u(2000) + u(0) * 2000,
            "floats_at_the_cap": chain(31) + u(32) + u(1000) + bytes.fromhex("ffff7f80") * 1000,
            "one_char_strings_past_the_cap": chain(1000) + u(34) + u(500) + (u(2) + b"a\0\0\0") * 500,
        }

    @pytest.mark.parametrize("shape", ["arrays_1025_deep", "dictionary_keys_1025_deep", "nils_at_the_cap",
                                       "nils_past_the_cap", "floats_at_the_cap", "one_char_strings_past_the_cap"])
    def test_every_view(self, tmp_path: Path, shape: str) -> None:
        data = self.shapes()[shape]
        path = tmp_path / f"{shape}.bin"
        path.write_bytes(data)
        for args, bound in self.BOUNDS.items():
            p = run(*args[:1], str(path), "--dialect", "godot4", *args[1:])
            assert p.returncode == 0 and p.stderr == b"", (args, p.stderr[-300:])
            assert len(p.stdout) <= bound * len(data), (args, len(p.stdout) / len(data))
            if args[1:2] == ("--json",):  # still lossless
                back = run("load", "-", "--hex", stdin=p.stdout)
                assert back.returncode == 0 and bytes.fromhex(back.stdout.decode()) == data

    def test_tree_of_deep_dictionary_keys(self, tmp_path: Path) -> None:
        # The tree once asked whether each key had children by listing them: recursion on the keys.
        path = tmp_path / "keys.bin"
        path.write_bytes(self.shapes()["dictionary_keys_1025_deep"])
        lines = run("dump", str(path), "--tree", "--dialect", "godot4").stdout.decode().splitlines()
        assert lines[:3] == ["Dictionary, 1 entry", "  key 0: Dictionary, 1 entry", "    key 0: Dictionary, 1 entry"]
        assert lines[33] == "  " * 32 + "(depth 33) key 0: Dictionary, 1 entry"
        assert "  " * 32 + "(depth 1024) null: null" in lines and lines[-1] == "  value 0: null"
