"""Resource saves on the command line and through gf.open: scan, detect, and the one reading."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES

import godot_formats as gf
from godot_formats.core.errors import NotBinaryError
from godot_formats.tool import main

RESOURCES = FIXTURES / "resources"


def test_scan_prints_one_line_per_finding_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    hostile = RESOURCES / "hostile" / "godot4" / "emb_nested_c.res"
    clean = RESOURCES / "hostile" / "godot4" / "clean_c.res"
    assert main(["scan", str(clean)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["scan", str(clean), str(hostile)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith(f"{hostile}: embedded-script: sub-resource")
    assert main(["scan", "--json", str(hostile)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"][0]["kind"] == "embedded-script"


def test_scan_names_a_file_it_cannot_read_and_goes_on(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    bad = RESOURCES / "godot3" / "save_data.gd"
    clean = RESOURCES / "godot3" / "save.res"
    assert main(["scan", str(bad), str(clean)]) == 2  # never called clean
    err = capsys.readouterr().err
    assert str(bad) in err and "cannot be scanned" in err and "not a resource file" in err


def test_a_scan_never_runs_the_engine_or_the_code() -> None:
    """The scanner runs in a process where importing an engine driver would fail loudly."""
    code = ("import sys; sys.modules['godot_formats.oracle'] = None; import godot_formats as gf; "
            f"print(len(gf.scan_resource({str(RESOURCES / 'hostile' / 'godot3' / 'emb_main_c.res')!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr


@pytest.mark.parametrize("name, said", [
    ("godot3/save.res", "resource: Godot 3 binary format 3"),
    ("godot3/save_be.res", "resource: Godot 3 binary format 3, big-endian"),
    ("godot4/save_c.res", "resource: Godot 4 binary format 6 (Zstd)"),
])
def test_detect_tells_a_resource_save_by_its_header(name: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", str(RESOURCES / name)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{RESOURCES / name}: {said}"


@pytest.mark.parametrize("name", ["godot3/save.res", "godot4/save_c.res", "godot3/save.tres"])
def test_gf_open_names_a_resource_save_and_where_to_read_it(name: str) -> None:
    """gf.open opens it (one door); read as a save, it is named as what it is and where it is read."""
    doc = gf.open(RESOURCES / name)  # one door: the kind is told from the bytes
    assert doc.kind == "resource" and isinstance(doc, gf.ResourceFile)
    with pytest.raises(NotBinaryError, match="`gf.open` reads it") as info:
        gf.open(RESOURCES / name, kind="save")  # read as a save, it is no save: the error says what it is
    assert info.value.kind == "resource"


def test_dump_shows_a_resource_save_as_json_and_as_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    path = RESOURCES / "godot4" / "save_c.res"
    assert main(["dump", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == 4 and doc["compression"] == "Zstd"
    assert doc["main"]["properties"]["level"] == "i:12"
    assert doc["main"]["properties"]["inner"] == {"type": "SubResource", "id": doc["resources"][0]["id"],
                                                  "class": "Resource"}
    assert main(["dump", "--tree", str(path)]) == 0
    tree = capsys.readouterr().out.splitlines()
    assert tree[0] == "binary resource, Godot 4, format 6, Zstd"
    assert "  inner: SubResource local://Resource_bc5hj (Resource)" in tree


def test_convert_migrates_a_resource_save_and_keeps_its_compression(tmp_path: object,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    out = Path(str(tmp_path)) / "save4.res"
    assert main(["convert", str(RESOURCES / "godot3" / "all_c.res"), "--to", "godot4", "-o", str(out)]) == 0
    rf = gf.open_resource(out)
    assert (rf.engine, rf.version, rf.compression) == (4, 6, "Zstd")
    assert rf.main.properties["metadata/note"] == "meta value"
    # Godot 4 -> 3 loses data: strict refuses and lists it, --policy lossy writes it
    back = Path(str(tmp_path)) / "save3.res"
    assert main(["convert", str(RESOURCES / "godot4" / "all.res"), "--to", "godot3", "-o", str(back)]) == 1
    assert "would lose: main:vector2i_v" in capsys.readouterr().out and not back.exists()
    assert main(["convert", str(RESOURCES / "godot4" / "all.res"), "--to", "godot3", "--policy", "lossy",
                 "-o", str(back)]) == 0
    assert gf.open_resource(back).engine == 3
    assert main(["convert", str(RESOURCES / "godot3" / "save.res"), "--to", "godot3", "--format", "binary",
                 "-o", str(Path(str(tmp_path)) / "x.res")]) == 0
    assert main(["convert", str(FIXTURES / "godot3" / "encode.jsonl"), "--to", "godot4", "--format", "text",
                 "-o", str(Path(str(tmp_path)) / "y")]) == 1


# -- set, edit, explain and convert on resource saves ------------------------------------------------

from pathlib import Path  # noqa: E402

from test_save_files import editor  # noqa: E402
from test_save_files import main as run  # noqa: E402


def _copy(tmp_path: Path, name: str) -> Path:
    out = tmp_path / Path(name).name
    out.write_bytes((RESOURCES / name).read_bytes())
    return out


def _changed_bytes(a: bytes, b: bytes) -> int:
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))


@pytest.mark.parametrize("name", ["godot3/save.res", "godot3/save.tres", "godot4/save.tres", "godot3/save_c.res"])
def test_set_changes_one_property_in_the_files_own_form(tmp_path: Path, name: str) -> None:
    path = _copy(tmp_path, name)
    before = path.read_bytes()
    status, _, err = run("set", path, "level", "13")
    assert status == 0 and "level: 12 -> 13" in err and "the old file is" in err
    after = gf.open_resource(path)
    assert after.main.properties["level"] == 13 and after.format == gf.open_resource(before).format
    assert Path(str(path) + ".bak").read_bytes() == before
    if not name.endswith("_c.res"):  # one int changed in place: one byte of the file (a digit of the text)
        assert _changed_bytes(before, path.read_bytes()) == 1


def test_set_walks_into_sub_resources_and_starts_at_one(tmp_path: Path) -> None:
    path = _copy(tmp_path, "godot3/save.res")
    assert run("set", path, "inner.note", '"bye"')[0] == 0
    assert gf.open_resource(path).main.properties["inner"].properties["note"] == "bye"
    status, _, err = run("set", path, "note", '"again"', "--resource", "1")
    assert status == 0 and err.startswith('sub-resource 1: note: "bye" -> "again"')
    assert gf.open_resource(path).resources[0].properties["note"] == "again"
    status, _, err = run("set", path, "hp", "5")
    assert status == 0 and "(new property)" in err and "only if the resource's class or script has it" in err
    assert gf.open_resource(path).main.properties["hp"] == 5


@pytest.mark.parametrize(("args", "message"), [
    (["level", "1", "--record", "1"], "--record is for store_var saves"),
    (["level", "1", "--resource", "9"], "--resource 9: no sub-resource has that id"),
    (["", "1"], "PATH is empty"),
    (["script.path", "1"], "an external resource (res://save_data.gd) is another file"),
    (["items.x", "1"], "an Array is indexed with [N]"),
])
def test_set_on_a_resource_refuses_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    path = _copy(tmp_path, "godot3/save.res")
    before = path.read_bytes()
    status, _, err = run("set", path, *args)
    assert status != 0 and message in err and "Traceback" not in err
    assert path.read_bytes() == before and not Path(str(path) + ".bak").exists()


def test_a_file_with_an_embedded_script_is_written_only_with_allow_scripts(tmp_path: Path) -> None:
    path = _copy(tmp_path, "hostile/godot4/emb_nested_c.res")
    before = path.read_bytes()
    status, _, err = run("set", path, "x", "1")
    assert status == 1 and "allow_scripts" in err and path.read_bytes() == before
    assert run("set", path, "x", "1", "--allow-scripts")[0] == 0
    assert gf.open_resource(path).main.properties["x"] == 1
    assert gf.scan_resource(path)  # the script is still there, copied, never run


@pytest.mark.parametrize("name", ["godot3/all.res", "godot3/all_be.res", "godot4/all.res", "godot3/all.tres",
                                  "godot4/all.tres"])
def test_edit_shows_tres_text_and_writes_the_files_own_form(tmp_path: Path, name: str) -> None:
    path = _copy(tmp_path, name)
    before = path.read_bytes()
    ed = editor(tmp_path, """
        assert text.startswith("; godot-formats edit: ") and "\\nint_small = -7\\n" in text
        p.write_text(text.replace("\\nint_small = -7\\n", "\\nint_small = -8\\n"))
        """)
    status, _, err = run("edit", path, env={"EDITOR": ed})
    assert status == 0, err
    after = path.read_bytes()
    assert gf.open_resource(after).main.properties["int_small"] == -8
    assert gf.open_resource(after).format == gf.open_resource(before).format
    # Everything else keeps its bytes: the string table, ids, order and every float's bits.
    assert _changed_bytes(before, after) == 1


def test_edit_without_a_change_writes_nothing_and_bad_text_comes_back(tmp_path: Path) -> None:
    path = _copy(tmp_path, "godot3/save.res")
    before = path.read_bytes()
    status, _, err = run("edit", path, env={"EDITOR": editor(tmp_path, "")})
    assert status == 0 and "no change" in err and path.read_bytes() == before
    ed = editor(tmp_path, """
        if "; godot-formats edit: error:" not in text and "error:" not in text:
            p.write_text(text.replace("level = 12", "level = Vector2("))
        else:
            assert text.startswith("; error: ")
            p.write_text(text.replace("level = Vector2(", "level = 20"))
        """)
    status, _, err = run("edit", path, env={"EDITOR": ed})
    assert status == 0, err
    assert gf.open_resource(path).main.properties["level"] == 20


@pytest.mark.parametrize("name", ["godot3/save.res", "godot3/save_c.res", "godot4/all.res"])
def test_explain_lists_every_field_of_a_res_in_file_order(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = (RESOURCES / name).read_bytes()
    assert main(["explain", str(RESOURCES / name)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line[:6].strip().isdigit()]
    offsets = [int(line.split()[0]) for line in rows]
    assert offsets == sorted(offsets) and offsets[0] == 0
    rf = gf.open_resource(data)
    for res in (*rf.resources, rf.main):
        assert any(f"resource {res.id}: type:" in line for line in rows)
        for prop in res.properties:
            assert any("property name index: " in line and line.endswith(f"({prop})") for line in rows), prop
    if name.endswith("_c.res"):
        assert out[0].startswith("# RSCC: a compressed resource")


def test_explain_of_a_damaged_res_lists_up_to_the_damage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.res"
    cut.write_bytes((RESOURCES / "godot3" / "save.res").read_bytes()[:600])
    assert main(["explain", str(cut)]) == 1
    captured = capsys.readouterr()
    assert "property name index: 11 (tr)" in captured.out
    assert "at byte 557: Transform3D: 48 byte(s) needed, 43 left" in captured.err


def test_explain_of_a_tres_names_each_section_and_property_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(RESOURCES / "godot3" / "save.tres")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "# Godot 3 text resource, format 2: main resource Resource"
    assert "    3  external resource 1: Script at res://inner.gd (never loaded)" in out
    assert "   13    level: int 12" in out


def test_convert_writes_an_embedded_script_only_with_allow_scripts(tmp_path: Path) -> None:
    src = _copy(tmp_path, "hostile/godot4/emb_nested_c.res")
    out = tmp_path / "out.tres"
    status, report, _ = run("convert", src, "--to", "godot4", "--format", "text", "-o", out)
    assert status == 1 and "pass --allow-scripts to write it anyway" in report and not out.exists()
    status, _, err = run("convert", src, "--to", "godot4", "--format", "text", "-o", out, "--allow-scripts")
    assert status == 0, err
    assert gf.scan_resource(out) and out.read_bytes().startswith(b"[gd_resource")


def test_an_output_name_chooses_the_form_as_the_engines_saver_does(tmp_path: Path) -> None:
    """``-o X.res`` writes binary and ``-o X.tres`` text, as ResourceSaver picks its saver by
    extension (a text file named .res would not load: the binary loader claims .res); ``--format``
    still decides when given, and a save back into its own file keeps its own form."""
    src = RESOURCES / "godot3" / "all.tres"
    assert main(["convert", str(src), "--to", "godot4", "--format", "binary", "-o", str(tmp_path / "want.bin")]) == 0
    want = (tmp_path / "want.bin").read_bytes()
    assert main(["convert", str(src), "--to", "godot4", "-o", str(tmp_path / "out.res")]) == 0
    assert (tmp_path / "out.res").read_bytes() == want
    assert main(["convert", str(src), "--to", "godot4", "--format", "text", "-o", str(tmp_path / "text.res")]) == 0
    assert (tmp_path / "text.res").read_bytes().startswith(b"[gd_resource")
    # the API: save() under another name takes its extension's form; back in its own place, its own
    rf = gf.open_resource(RESOURCES / "godot3" / "all.res")
    rf.save(tmp_path / "all.tres")
    assert (tmp_path / "all.tres").read_bytes() == rf.to_bytes(format="text")
    odd = tmp_path / "odd.res"
    odd.write_bytes(src.read_bytes())  # a text file named .res: saved back, it stays as it was
    gf.open_resource(odd).save()
    assert odd.read_bytes() == src.read_bytes()
