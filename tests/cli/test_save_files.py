"""The command line on save files as games write them: every command opens
the layers (encrypted, compressed, base64, store_var framing, project settings) through gf.open.

Every file here is one an engine wrote (fixtures/containers: Godot 3.2.3 and 4.6), or made
from engine values; the engine tests at the end have the real engines read what the commands
wrote.  Most tests run ``tool.main`` in this process (the console script is tested by
test_cli_dump.py and test_cli_convert.py); ``edit`` runs a real editor process.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
import sys
import textwrap
from pathlib import Path
from typing import Any

import oracles
import pytest
from conftest import FIXTURES, GD3_FILE_HELPERS, cli, read_jsonl
from conftest import run_main as main

import godot_formats as gf
from godot_formats import tool
from godot_formats.layers.encryption import read_gdec
from godot_formats.views import jsonform

CONTAINERS = FIXTURES / "containers"
RECORDS = {r["name"]: r for f in sorted(CONTAINERS.glob("*.jsonl")) for r in read_jsonl(f)}
u = struct.Struct("<I").pack
PASSWORD_ENV = "GODOT_FORMATS_PASSWORD"


def have_compression() -> bool:
    try:
        import godot_formats.layers.compression  # noqa: F401
    except ImportError:
        return False
    return True


def have_module(name: str) -> bool:
    try:
        __import__(f"godot_formats.{name}")
    except ImportError:
        return False
    return True


def one_error(result: tuple[int, str, str], command: str) -> str:
    status, _, err = result
    assert status == 1, result
    assert err.count("\n") == 1 and err.startswith(f"godot-formats {command}: "), err
    assert "Traceback" not in err
    return err


def fixture_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.sav"
    path.write_bytes(bytes.fromhex(RECORDS[name]["file_hex"]))
    return path


def credentials(name: str) -> list[str]:
    params = RECORDS[name].get("params") or {}
    if "password" in params:
        return ["--password", params["password"]]
    if "key_hex" in params:
        return ["--key", params["key_hex"]]
    return []


def engine_values(name: str, dialect: str) -> list[Any]:
    return [gf.loads(bytes.fromhex(h), dialect, allow_objects=True) for h in RECORDS[name]["value_hex"]]


# -- dump, then load: the same file, byte for byte ----------------------------------------------------------

#: Files that are not a save file by themselves.
NOT_OPENED = {
    "g4_frame_truncated": "a truncated frame (the damaged-file tests below)",
}


def _roundtrip_cases() -> list[Any]:
    out = []
    for name, r in RECORDS.items():
        if r["container"] == "raw_compressed":
            continue  # bare streams have no header: unwrap --compressed MODE (below)
        marks = []
        if r["container"] == "compressed":
            marks.append(pytest.mark.skipif(not have_compression(), reason="compression.py not there yet"))
        if r["container"] == "project_binary":
            marks.append(pytest.mark.skipif(not have_module("layers.project_settings"),
                                            reason="project_settings.py not there yet"))
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", _roundtrip_cases())
@pytest.mark.parametrize("form", ["--json", "--text"])
def test_dump_then_load_gives_back_the_same_file(tmp_path: Path, name: str, form: str) -> None:
    src = fixture_file(tmp_path, name)
    extra = [*credentials(name), *(["--allow-objects"] if "objects" in name else [])]
    status, out, err = main("dump", src, form, *extra)
    if name in NOT_OPENED:
        assert status == 1 and "cut after" in err
        return
    if name.startswith("g2_") and form == "--text":
        # Godot 2's text can't be checked against an engine here: refused, with the way out.
        assert status == 1 and "godot2 has no text form" in err and "--json" in err
        return
    assert status == 0, err
    view = tmp_path / ("view.json" if form == "--json" else "view.txt")
    view.write_text(out, encoding="utf-8")
    again = tmp_path / "again.sav"
    status, _, load_err = main("load", view, "-o", again, *extra)
    if name == "py_cmp_m4_brotli1":  # unchanged: its own bytes back; changed, refused (Godot cannot write Brotli)
        assert status == 0 and again.read_bytes() == src.read_bytes(), load_err
        return
    assert status == 0, load_err
    same = again.read_bytes() == src.read_bytes()
    if form == "--text" and "the text form does not keep every bit" in err:
        return  # said on stderr: the text is not the value exactly (sorted keys, rounded floats)
    assert same, (name, form)
    # and the values are the engine's
    if RECORDS[name].get("value_hex") and RECORDS[name]["container"] != "project_binary":
        dialect = "godot3" if RECORDS[name]["engine"].startswith("godot-3") else "godot4"
        sf = gf.open(src, allow_objects=True, **_api_credentials(name), dialect=dialect)
        assert [gf.dumps(v, dialect, allow_objects=True) for v in sf.values] == \
            [bytes.fromhex(h) for h in RECORDS[name]["value_hex"]]


def _api_credentials(name: str) -> dict[str, Any]:
    params = RECORDS[name].get("params") or {}
    if "password" in params:
        return {"password": params["password"]}
    if "key_hex" in params:
        return {"key": bytes.fromhex(params["key_hex"])}
    return {}


def test_the_views_record_the_layers(tmp_path: Path) -> None:
    src = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    status, out, _ = main("dump", src, "--json", "--password", "hunter2")
    header = json.loads(out[:out.index("\n}\n") + 2])
    assert header["godot_formats_save"] == 1 and header["container"] == "store_var"
    assert header["dialect"] == "godot3" and header["encryption"]["version"] == 3 and header["records"] == 2
    assert "hunter2" not in out and "2ab96390" not in out  # never the password, never the key
    status, out, _ = main("dump", src, "--password", "hunter2")
    first = out.splitlines()[0]
    assert first.startswith("; godot-formats save: {") and json.loads(first[len("; godot-formats save: "):]) == header
    assert "; record 2 of 2" in out.splitlines()
    # --no-header: the values alone
    status, out, _ = main("dump", src, "--password", "hunter2", "--no-header", "--json", "--compact")
    assert [json.loads(line) for line in out.splitlines()][1] == "i:7"


def test_text_header_is_a_comment_to_our_parser() -> None:
    from godot_formats.views.text import from_text

    # The engines skip it too (checked with Godot 3.2.3's str2var and 4.6's str_to_var when this was written).
    assert from_text('; godot-formats save: {"a": 1}\n[1, 2]', "godot4") == [1, 2]


def test_an_encrypted_save_needs_its_password_to_be_written_back(tmp_path: Path) -> None:
    src = fixture_file(tmp_path, "g4_enc_pass_hunter2")
    _, out, _ = main("dump", src, "--json", env={PASSWORD_ENV: "hunter2"})
    (tmp_path / "v.json").write_text(out)
    err = one_error(main("load", tmp_path / "v.json", "-o", tmp_path / "x.sav"), "load")
    assert "password" in err and not (tmp_path / "x.sav").exists()
    assert main("load", tmp_path / "v.json", "-o", tmp_path / "x.sav", env={PASSWORD_ENV: "hunter2"})[0] == 0
    assert (tmp_path / "x.sav").read_bytes() == src.read_bytes()  # the IV kept: nothing changed
    # an edited value: a fresh IV (never one IV for two plaintexts), readable with the password
    (tmp_path / "v.json").write_text(out.replace('"i:7"', '"i:8"'))
    assert main("load", tmp_path / "v.json", "-o", tmp_path / "y.sav", "--password", "hunter2")[0] == 0
    new = (tmp_path / "y.sav").read_bytes()
    assert new[28:44] != src.read_bytes()[28:44]
    assert gf.open(new, password="hunter2").values[1] == 8


# -- the problems under "Why" ----------------------------------------------------------------------------------


def test_load_never_overwrites_without_overwrite(tmp_path: Path) -> None:
    """load -o never replaces a Godot 3 save with an unframed Godot 4 blob unasked."""
    save = fixture_file(tmp_path, "g3_frame_slack")
    _, out, _ = main("dump", save, "--json")
    (tmp_path / "v.json").write_text(out.replace('"i:7"', '"i:70"'))
    err = one_error(main("load", tmp_path / "v.json", "-o", save), "load")
    assert "--overwrite" in err and save.read_bytes() == bytes.fromhex(RECORDS["g3_frame_slack"]["file_hex"])
    assert main("load", tmp_path / "v.json", "-o", save, "--overwrite")[0] == 0
    sf = gf.open(save)
    assert sf.values == [70, 5] and sf.container == "store_var"
    assert sf.to_bytes()[:4] == bytes.fromhex(RECORDS["g3_frame_slack"]["file_hex"])[:4]  # framed, as before


def test_json_that_does_not_parse_is_an_error_never_godot_text(tmp_path: Path) -> None:
    for bad in ('{"type": "Vector2", "args": [1, 2],}', '["i:1", ]', '"no prefix"x', '[1, 2]'):
        err = one_error(_load_stdin(bad), "load")
        assert "JSON" in err or "json" in err, err
    # text that does not start like JSON is Godot text; --from text reads anything as text
    status, out, _ = _load_stdin_result("Vector2(1.5, -2)")
    assert status == 0 and bytes.fromhex(out.strip()) == gf.dumps(gf.Vector2(1.5, -2))
    status, out, _ = _load_stdin_result("[1, 2]", "--from", "text")
    assert status == 0 and bytes.fromhex(out.strip()) == gf.dumps([1, 2])


def _load_stdin_result(text: str, *args: str) -> tuple[int, str, str]:
    p = cli("load", "-", "--hex", *args, stdin=text.encode())
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def _load_stdin(text: str) -> tuple[int, str, str]:
    return _load_stdin_result(text)


def test_small_ambiguous_saves_are_never_one_guess(tmp_path: Path) -> None:
    """store_var({"abcde": 1, "x": 2}) shows as a Dictionary, not a Transform3D; store_var(Color(1, 0, 0))
    as a Color."""
    def store_var(v: Any) -> bytes:
        blob = gf.dumps(v, "godot3")
        return u(len(blob)) + blob

    cases = {
        "dict.sav": (store_var({"abcde": 1, "x": 2}), {"abcde": 1, "x": 2}, "Transform3D("),
        "color.sav": (store_var(gf.Color(1, 0, 0)), gf.Color(1, 0, 0), "Plane("),
        "bare.bin": (gf.dumps({"abcde": 1, "x": 2}, "godot3"), {"abcde": 1, "x": 2}, "Transform3D("),
    }
    for file, (data, value, wrong) in cases.items():
        path = tmp_path / file
        path.write_bytes(data)
        for form in ("--text", "--json"):
            status, out, err = main("dump", path, form)
            assert status == 1 and out == "", (file, err)
            lines = err.splitlines()
            assert lines[0].startswith("godot-formats dump: ambiguous: ") and "--dialect" in lines[0]
            assert any(line.startswith("  --dialect godot3") for line in lines[1:])
            assert any(line.startswith("  --dialect godot4") and wrong in line for line in lines[1:])
        status, out, err = main("dump", path, "--dialect", "godot3", "--json", "--no-header")
        assert status == 0 and jsonform.loads_json_documents(out) == [value]


def test_big_endian_framed_saves_and_headers(tmp_path: Path) -> None:
    """A big-endian framed save and a file with a 4-byte header show their values (not null, not 84)."""
    path = fixture_file(tmp_path, "g4_frame_big_endian")
    status, out, _ = main("dump", path, "--json", "--no-header", "--compact")
    assert status == 0 and out.splitlines() == ['"i:7"', '"s:hi"']
    status, out, _ = main("dump", path, "--json")
    assert '"byteorder": "big"' in out
    # store_32(2) then store_var(...): a 4-byte header before the records is not a save we can frame
    blob = gf.dumps({"name": "Ann", "hp": 97, "inventory": ["sword", "shield"]}, "godot3")
    headed = tmp_path / "headed.sav"
    headed.write_bytes(u(2) + u(len(blob)) + blob)
    status, out, err = main("dump", headed)
    assert status == 1 and out == "" and "84" not in err.split(":", 2)[-1].split()[:1]
    assert "record 1" in err and "frame of 2 bytes" in err


def _cut_save() -> tuple[bytes, int]:
    frames = b"".join(u(len(p)) + p for p in (gf.dumps("first", "godot3"), gf.dumps([1, 2, 3], "godot3")))
    long = gf.dumps("x" * 1190, "godot3")
    return frames + u(len(long)) + long[:596], len(frames)


@pytest.mark.parametrize("command", [["dump"], ["dump", "--json"], ["convert", "--to", "godot4", "-o", "OUT"],
                                     ["set", "PATH", "1", "--record", "1"], ["edit"]])
def test_a_damaged_save_gets_its_real_cause_in_the_same_words(tmp_path: Path, command: list[str]) -> None:
    """A cut multi-record save is diagnosed as cut (not "unknown type id 176"), and its intact records kept."""
    data, where = _cut_save()
    path = tmp_path / "cut.sav"
    path.write_bytes(data)
    args = [command[0], path, *[str(tmp_path / "out.sav") if a == "OUT" else a for a in command[1:]]]
    if command[0] == "set":
        args = ["set", path, "x", "1", "--record", "1"]
    status, out, err = main(*args, env={"EDITOR": "false"})
    assert status == 1 and "Traceback" not in err
    expected = (f"at byte {where}: record 3: frame of 1200 bytes is cut after 596 byte(s) (the data ends at byte "
                f"{len(data)}); records 1 to 2 are intact (--salvage keeps them)")
    assert expected in (err + out), err + out
    assert path.read_bytes() == data and not (tmp_path / "out.sav").exists()


def test_salvage_keeps_every_intact_record(tmp_path: Path) -> None:
    data, _ = _cut_save()
    path = tmp_path / "cut.sav"
    path.write_bytes(data)
    status, out, err = main("dump", path, "--salvage", "--json", "--no-header", "--compact")
    assert status == 0 and out.splitlines() == ['"s:first"', '["i:1","i:2","i:3"]']
    assert "kept the 2 intact record(s)" in err and "cut after 596" in err


def test_dialect_aliases_of_the_readme(tmp_path: Path) -> None:
    """The command line takes every dialect alias: godot3.5, godot4.6 ..."""
    path = tmp_path / "v.bin"
    path.write_bytes(gf.dumps(gf.Vector2(1, 2), "godot3"))
    status, out, _ = main("dump", path, "--dialect", "godot3.5", "--no-header")
    assert status == 0 and out == "Vector2( 1, 2 )\n"
    status, _, err = main("convert", path, "--from", "godot3.1", "--to", "godot4.6", "-o", tmp_path / "v4.bin")
    assert status == 0, err
    assert (tmp_path / "v4.bin").read_bytes() == gf.dumps(gf.Vector2(1, 2), "godot4")
    with pytest.raises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
        tool.main(["dump", str(path), "--dialect", "godot9"])
    assert e.value.code == 2


# -- convert migrates the layers ------------------------------------------------------------------------------


def test_convert_migrates_an_encrypted_godot3_save_to_what_godot4_writes(tmp_path: Path) -> None:
    src = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    out = tmp_path / "new.sav"
    status, report, _ = main("convert", src, "--password", "hunter2", "--from", "godot3", "--to", "godot4", "-o", out)
    assert status == 0 and "converted" in report and "encrypted" in report
    new = out.read_bytes()
    assert new[:4] == b"GDEC" and len(new) == len(bytes.fromhex(RECORDS["g4_enc_pass_hunter2"]["file_hex"]))
    # The plaintext is what Godot 4.6 itself encrypted for the same save (store_var frames of its values).
    plain, info = read_gdec(new, password="hunter2")
    engine_plain, _ = read_gdec(bytes.fromhex(RECORDS["g4_enc_pass_hunter2"]["file_hex"]), password="hunter2")
    assert info.version == 4 and plain == engine_plain
    # without the password: one line, nothing written
    status, report, _ = main("convert", src, "--to", "godot4", "-o", tmp_path / "no.sav")
    assert status == 1 and "password" in report and not (tmp_path / "no.sav").exists()


@pytest.mark.skipif(not have_compression(), reason="compression.py not there yet")
def test_convert_keeps_a_compressed_save_compressed(tmp_path: Path) -> None:
    src = fixture_file(tmp_path, "g3_cmp_m1_save")
    out = tmp_path / "new.sav"
    assert main("convert", src, "--to", "godot4", "-o", out)[0] == 0
    sf = gf.open(out)
    assert sf.compression.mode == 1 and sf.dialect.major == 4
    assert [gf.dumps(v, "godot4") for v in sf.values] == [bytes.fromhex(h) for h in
                                                          RECORDS["g4_cmp_m1_save"]["value_hex"]]


# -- unwrap and wrap ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["g3_enc_pass_hunter2", "g3_enc_key_0to31", "g4_enc_key_0to31_iv",
                                  "g4_enc_pass_hunter2", "g3_marshalls_b64_save",
                                  pytest.param("g4_cmp_m2_multiblock", marks=pytest.mark.skipif(
                                      not have_compression(), reason="compression.py not there yet")),
                                  pytest.param("g3_cmp_m0_multiblock", marks=pytest.mark.skipif(
                                      not have_compression(), reason="compression.py not there yet"))])
def test_unwrap_then_wrap_like_the_original(tmp_path: Path, name: str) -> None:
    src = fixture_file(tmp_path, name)
    inner = tmp_path / "inner.bin"
    status, _, err = main("unwrap", src, *credentials(name), "-o", inner)
    assert status == 0, err
    sf = gf.open(src, **_api_credentials(name))
    assert gf.open(inner.read_bytes(), dialect=sf.dialect).values == sf.values
    again = tmp_path / "again.sav"
    assert main("wrap", inner, "--like", src, *credentials(name), "-o", again)[0] == 0
    assert again.read_bytes() == src.read_bytes()  # the same bytes: the IV kept for the same plaintext
    one_error(main("wrap", inner, "--like", src, *credentials(name), "-o", again), "wrap")  # exists


def test_wrap_encrypts_as_each_engine_does(tmp_path: Path) -> None:
    inner = tmp_path / "inner.bin"
    inner.write_bytes(read_gdec(bytes.fromhex(RECORDS["g3_enc_pass_hunter2"]["file_hex"]), password="hunter2")[0])
    for engine, version in (("godot3", 3), ("godot4", 4)):
        out = tmp_path / f"{engine}.sav"
        assert main("wrap", inner, "--encrypt", engine, "-o", out, env={PASSWORD_ENV: "hunter2"})[0] == 0
        plain, info = read_gdec(out.read_bytes(), password="hunter2")
        assert plain == inner.read_bytes() and info.version == version
    assert main("wrap", inner, "--encrypt", "godot3", "-o", tmp_path / "g3.sav", "--overwrite",
                env={PASSWORD_ENV: "hunter2"})[0] == 0
    assert (tmp_path / "g3.sav").read_bytes() == bytes.fromhex(RECORDS["g3_enc_pass_hunter2"]["file_hex"])
    err = one_error(main("wrap", inner, "--encrypt", "godot4", "-o", tmp_path / "x.sav"), "wrap")
    assert "password" in err


@pytest.mark.skipif(not have_compression(), reason="compression.py not there yet")
def test_wrap_compresses_as_open_compressed_does(tmp_path: Path) -> None:
    for name, mode in (("g4_cmp_m1_multiblock", "deflate"), ("g4_cmp_m3_save", "gzip"),
                       ("g4_cmp_m0_exact4096", "fastlz"), ("g4_cmp_m2_save", "zstd")):
        src = fixture_file(tmp_path, name)
        inner = tmp_path / f"{name}.bin"
        assert main("unwrap", src, "-o", inner)[0] == 0
        out = tmp_path / f"{name}.again"
        assert main("wrap", inner, "--compress", mode, "-o", out)[0] == 0
        assert out.read_bytes() == src.read_bytes(), name


def test_unwrap_says_what_it_did_and_refuses_plain_files(tmp_path: Path) -> None:
    err = one_error(main("unwrap", fixture_file(tmp_path, "g3_frame_slack"), "-o", tmp_path / "x"), "unwrap")
    assert "no layer" in err and not (tmp_path / "x").exists()
    err = one_error(main("unwrap", fixture_file(tmp_path, "g3_enc_pass_hunter2"), "-o", tmp_path / "x",
                         "--password", "wrong"), "unwrap")
    assert "wrong password or damaged file" in err and not (tmp_path / "x").exists()


@pytest.mark.skipif(not have_compression(), reason="compression.py not there yet")
def test_unwrap_a_bare_compressed_stream(tmp_path: Path) -> None:
    r = RECORDS["g4_pba_compress_m1"]
    src = fixture_file(tmp_path, "g4_pba_compress_m1")
    assert main("unwrap", src, "--compressed", "deflate", "-o", tmp_path / "x")[0] == 0
    assert len((tmp_path / "x").read_bytes()) == r["params"]["buffer_size"]
    assert gf.loads((tmp_path / "x").read_bytes(), "godot4") == engine_values("g4_pba_compress_m1", "godot4")[0]


# -- detect reports the layers ------------------------------------------------------------------------------


def test_detect_reports_the_layers(tmp_path: Path) -> None:
    enc = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    status, out, _ = main("detect", "--json", enc, env={PASSWORD_ENV: "hunter2"})
    report = json.loads(out)
    assert status == 0 and report["verdict"].startswith("godot3")
    assert report["layers"]["encryption"] == "godot3" and report["layers"]["container"] == "store_var"
    assert report["layers"]["records"] == 2
    status, out, _ = main("detect", enc)
    assert "needs a password" in out
    big = fixture_file(tmp_path, "g4_frame_big_endian")
    status, out, _ = main("detect", big)
    assert status == 0 and "big-endian lengths" in out
    if have_compression():
        status, out, _ = main("detect", fixture_file(tmp_path, "g4_cmp_m2_save"))
        assert "compressed (Zstd), store_var, 2 records" in out


def test_explain_looks_inside_the_layers(tmp_path: Path) -> None:
    status, out, _ = main("explain", fixture_file(tmp_path, "g3_enc_pass_hunter2"), "--password", "hunter2")
    lines = out.splitlines()
    assert status == 0 and lines[0].startswith("# encrypted (Godot 3, AES-256-ECB): offsets below are in those")
    assert "store_var record 1: length prefix" in out


# -- edit and set ----------------------------------------------------------------------------------------------


def editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR: a Python script that edits the file named by its argument."""
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\ntext = p.read_text()\n"
                      + textwrap.dedent(body))
    return f"{sys.executable} {script}"


def test_edit_changes_a_value_and_keeps_the_layers_and_a_backup(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    before = save.read_bytes()
    ed = editor(tmp_path, """
        assert text.startswith("; godot-formats edit: ")
        p.write_text(text.replace('"gold": 12345678901', '"gold": 5'))
        """)
    status, _, err = main("edit", save, env={"EDITOR": ed, PASSWORD_ENV: "hunter2"})
    assert status == 0, err
    sf = gf.open(save, password="hunter2")
    assert sf.values[0]["gold"] == 5 and sf.encryption.version == 3 and sf.dialect.major == 3
    assert (tmp_path / f"{save.name}.bak").read_bytes() == before
    # untouched floats and key order: the rest of the record is the engine's value exactly
    expected = engine_values("g3_enc_pass_hunter2", "godot3")
    expected[0]["gold"] = 5
    assert [gf.dumps(v, "godot3") for v in sf.values] == [gf.dumps(v, "godot3") for v in expected]
    # a second edit: the first backup is never replaced
    status, _, err = main("edit", save, env={"EDITOR": editor(tmp_path, """
        p.write_text(text.replace('"gold": 5', '"gold": 6'))
        """), PASSWORD_ENV: "hunter2"})
    assert status == 0 and (tmp_path / f"{save.name}.bak").read_bytes() == before
    assert gf.open((tmp_path / f"{save.name}.bak.1").read_bytes(), password="hunter2").values[0]["gold"] == 5


def test_edit_json(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g4_frame_slack")
    ed = editor(tmp_path, """
        p.write_text(text.replace('"i:5"', '"i:50"'))
        """)
    assert main("edit", save, "--json", env={"EDITOR": ed})[0] == 0
    sf = gf.open(save)
    assert sf.values == [7, 50] and sf.to_bytes()[:12] == bytes.fromhex(RECORDS["g4_frame_slack"]["file_hex"])[:12]


def test_edit_goes_back_to_the_editor_with_the_error(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g4_frame_slack")
    calls = tmp_path / "calls"
    ed = editor(tmp_path, f"""
        calls = pathlib.Path({str(calls)!r})
        n = int(calls.read_text()) if calls.exists() else 0
        calls.write_text(str(n + 1))
        if n == 0:
            p.write_text(text.replace("5", "Vector2(1,"))
        else:
            assert text.startswith("; error: "), text
            p.write_text(text.replace("Vector2(1,", "6"))
        """)
    status, _, err = main("edit", save, env={"EDITOR": ed})
    assert status == 0, err
    assert calls.read_text() == "2" and gf.open(save).values == [7, 6]


def test_edit_without_a_change_writes_nothing(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g3_frame_slack")
    ed = editor(tmp_path, "pass\n")
    status, _, err = main("edit", save, env={"EDITOR": ed})
    assert status == 0 and "no change" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["editor.py", save.name]
    # invalid, then saved unchanged: gives up, nothing written
    ed = editor(tmp_path, """
        if not text.startswith("; error"):
            p.write_text(text + "garbage(")
        """)
    err = one_error(main("edit", save, env={"EDITOR": ed}), "edit")
    assert "not written" in err and save.read_bytes() == bytes.fromhex(RECORDS["g3_frame_slack"]["file_hex"])
    # an editor that fails: nothing written
    err = one_error(main("edit", save, env={"EDITOR": "false"}), "edit")
    assert "status 1" in err


def test_set(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g4_enc_pass_hunter2")
    env = {PASSWORD_ENV: "hunter2"}
    status, _, err = main("set", save, "player", '"Bob"', "--record", "1", env=env)
    assert status == 0 and '"Ann" -> "Bob"' in err
    status, _, err = main("set", save, "inventory[1]", '"elixir"', "--record", "1", env=env)
    assert status == 0
    status, _, err = main("set", save, '["flags"].met_king', "false", "--record", "1", env=env)
    assert status == 0
    status, _, err = main("set", save, "", "8", "--record", "2", env=env)
    assert status == 0
    sf = gf.open(save, password="hunter2")
    assert sf.values[0]["player"] == "Bob" and sf.values[0]["inventory"] == ["sword", "elixir", "key"]
    assert sf.values[0]["flags"]["met_king"] is False and sf.values[1] == 8
    assert sf.encryption.version == 4 and sorted(p.name for p in tmp_path.iterdir()) == [
        save.name, f"{save.name}.bak", f"{save.name}.bak.1", f"{save.name}.bak.2", f"{save.name}.bak.3"]
    # one line for each mistake, nothing written
    before = save.read_bytes()
    assert "give --record N" in one_error(main("set", save, "hp", "1", env=env), "set")
    assert "out of range" in one_error(main("set", save, "inventory[7]", "1", "--record", "1", env=env), "set")
    assert "no such key" in one_error(main("set", save, "nope.x", "1", "--record", "1", env=env), "set")
    assert "at character" in one_error(main("set", save, "hp", "Vector2(", "--record", "1", env=env), "set")
    assert save.read_bytes() == before
    status, _, err = main("set", save, "hp", "100", "--record", "1", env=env)
    assert status == 0 and "from float to int" in err


# -- the real engines ---------------------------------------------------------------------------------------------



@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_reads_an_edited_encrypted_save(tmp_path: Path) -> None:
    """edit (Godot text in $EDITOR) on a 3.2.3 encrypted save; the real Godot 3 get_var reads the edit."""
    save = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    ed = editor(tmp_path, """
        p.write_text(text.replace('"gold": 12345678901', '"gold": 42').replace('"level": 7', '"level": 8'))
        """)
    assert main("edit", save, env={"EDITOR": ed, PASSWORD_ENV: "hunter2"})[0] == 0
    plain = save.read_bytes()
    script = f"""extends SceneTree
{GD3_FILE_HELPERS}
func _init():
	var w = File.new()
	w.open("user://edited.sav", File.WRITE)
	w.store_buffer(unhex("{plain.hex()}"))
	w.close()
	var f = File.new()
	var err = f.open_encrypted_with_pass("user://edited.sav", File.READ, "hunter2")
	print("@@ERR %d" % err)
	while err == OK and f.get_position() < f.get_len():
		print("@@V " + var2str(f.get_var()).replace("\\n", " "))
	f.close()
	quit()
"""
    out = oracles.godot3_run(script)
    lines = [line for line in out.splitlines() if line.startswith("@@")]
    assert lines[0] == "@@ERR 0", out
    values = [line[4:] for line in lines[1:]]
    assert len(values) == 2 and '"gold": 42' in values[0] and '"level": 8' in values[0] and values[1] == "7"
    expected = [v.replace("\n", " ") for v in RECORDS["g3_enc_pass_hunter2"]["values"]]
    assert values[0] == expected[0].replace('"gold": 12345678901', '"gold": 42').replace('"level": 7', '"level": 8')


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
def test_godot4_reads_a_converted_godot3_encrypted_save(tmp_path: Path) -> None:
    """convert --from godot3 --to godot4 with the password: Godot 4.6's open_encrypted_with_pass + get_var
    reads the values Godot 4.6 wrote itself for the same save (its var_to_bytes)."""
    src = fixture_file(tmp_path, "g3_enc_pass_hunter2")
    out_file = tmp_path / "new.sav"
    assert main("convert", src, "--from", "godot3", "--to", "godot4", "-o", out_file,
                env={PASSWORD_ENV: "hunter2"})[0] == 0
    script = f"""extends Node
func _ready() -> void:
	var w := FileAccess.open("user://new.sav", FileAccess.WRITE)
	w.store_buffer("{out_file.read_bytes().hex()}".hex_decode())
	w.close()
	var f := FileAccess.open_encrypted_with_pass("user://new.sav", FileAccess.READ, "hunter2")
	if f == null:
		print("@@FAILED %d" % FileAccess.get_open_error())
	else:
		while f.get_position() < f.get_length():
			print("@@V " + var_to_bytes(f.get_var()).hex_encode())
		f.close()
	get_tree().quit()
"""
    out = oracles.godot4_run(script)
    got = [line[4:] for line in out.splitlines() if line.startswith("@@")]
    assert got == RECORDS["g4_enc_pass_hunter2"]["value_hex"], out


def test_an_editor_that_saves_bytes_that_are_not_utf8_is_one_line(tmp_path: Path) -> None:
    save = fixture_file(tmp_path, "g4_frame_slack")
    before = save.read_bytes()
    ed = editor(tmp_path, """
        p.write_bytes(text.encode() + b"\\xff\\xfe")
        """)
    status, _, err = main("edit", save, env={"EDITOR": ed})
    assert status == 1 and "not UTF-8" in err and "internal error" not in err
    assert save.read_bytes() == before and [p.name for p in tmp_path.iterdir() if ".bak" in p.name] == []


def test_edit_of_a_deeply_nested_record(tmp_path: Path) -> None:
    """The untouched parts of an edited value are matched up without recursion: a record nested
    1,000 levels deep (past Python's own recursion limit) edits like a flat one."""
    depth = 1000
    value = u(19) + u(2) + u(2) + u(7) + u(3) + struct.pack("<f", 1.1)  # [7, the float32 nearest 1.1]
    for _ in range(depth):
        value = u(19) + u(1) + value  # an Array of one element (Godot 3 wire format: type 19, count)
    value = u(19) + u(2) + value + u(2) + u(7)  # the record: [the deep Array, 7]
    save = tmp_path / "deep.sav"
    save.write_bytes(u(len(value)) + value)
    ed = editor(tmp_path, """
        body = "".join(line for line in text.splitlines(True) if not line.startswith(";"))  # not the header's path
        assert body.count("7") == 2, body
        p.write_text(text[::-1].replace("7", "8", 1)[::-1])  # the last 7: the outer one
        """)
    status, _, err = main("edit", save, "--dialect", "godot3", env={"EDITOR": ed})
    assert status == 0, err
    after = gf.open(save, dialect="godot3").values
    assert after[0][-1] == 8
    # everything else as it was, the float32 included (the text shows 1.1, the file keeps its bits)
    assert save.read_bytes()[4:-4] == (u(len(value)) + value)[4:-4]
