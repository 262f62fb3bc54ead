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
    assert main(["scan", str(bad), str(clean)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "not a resource file" in err


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
    with pytest.raises(NotBinaryError, match="open_resource") as info:
        gf.open(RESOURCES / name)
    assert info.value.kind == "resource"


def test_dump_shows_a_resource_save_as_json_and_as_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    path = RESOURCES / "godot4" / "save_c.res"
    assert main(["dump", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == 4 and doc["compressed"] == "Zstd"
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
    assert (rf.engine, rf.version, rf.compressed) == (4, 6, "Zstd")
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
