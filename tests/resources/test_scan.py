"""The code scanner: every way a save makes Godot run code is found, by one walk, and nothing the
scanner cannot read is called clean.

The files of fixtures/resources/hostile/proven/ were written by the real engines, and
tests/engine/test_engines_run_hostile_saves.py shows each engine running the payload of every file marked
``engine_runs_code``: the verdicts checked here are the engines' own.  The rest are built here from
the value model, for the shapes no engine writes on its own (a NUL in a name, an upper-case
extension, every scheme of path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

import godot_formats as gf
from godot_formats.core import classdb
from godot_formats.core import types as t
from godot_formats.core.errors import DecodeError, EncodeError, GodotFormatsError
from godot_formats.resources import ExtResource, Resource, ResourceFile, read_text, write_binary
from godot_formats.resources.opening import resource_form, scan_file, scan_resource
from godot_formats.resources.scan import scan_value
from godot_formats.tool import main

PROVEN = FIXTURES / "resources" / "hostile" / "proven"


def _verdicts() -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for engine in ("godot3", "godot4"):
        expected = json.loads((PROVEN / engine / "expected.json").read_text(encoding="utf-8"))["files"]
        out += [(PROVEN / engine / name, entry) for name, entry in sorted(expected.items())]
    return out


VERDICTS = _verdicts()
SCANNED = [(p, e) for p, e in VERDICTS if not p.name.endswith(".gd")]  # the .gd files are the second files
RESOURCE_FILES = [(p, e) for p, e in SCANNED if not p.name.endswith(".cfg")]


@pytest.mark.parametrize("path, expected", SCANNED, ids=lambda v: f"{v.parent.name}/{v.name}"
                         if isinstance(v, Path) else "")
def test_the_scanner_flags_every_file_the_engines_run(path: Path, expected: dict[str, Any]) -> None:
    found = gf.scan_file(path)
    assert bool(found) == (expected["verdict"] == "hostile"), (expected["why"], found)
    if path.suffix != ".cfg":
        assert scan_resource(path) == found  # the resource door says the same


def test_every_hostile_case_of_the_issue_is_among_the_fixtures() -> None:
    names = {f"{p.parent.name}/{p.name}" for p, e in VERDICTS if e.get("engine_runs_code")}
    for engine in ("godot3", "godot4"):
        for stem in ("ref_user.tres", "ref_user.res", "ref_user_c.res", "ref_user_array.tres", "ref_user_dict.tres",
                     "ref_user_meta.res", "literal_array.tres", "literal_dict.tres", "comment_head.tres",
                     "blank_head.tres", "crlf.tres", "inline_object.tres", "inline_nested.tres"):
            assert f"{engine}/{stem}" in names
    assert {"godot3/nul_name.tres", "godot4/typed_array.tres", "godot4/typed_array_literal.tres",
            "godot4/typed_dict.tres", "godot4/typed_dict_literal.tres", "godot3/settings.cfg",
            "godot4/settings.cfg"} <= names


def test_a_reference_outside_res_is_named_with_where_it_was_found() -> None:
    [f] = scan_resource(PROVEN / "godot4" / "literal_dict.tres")
    assert f.kind == "resource-outside-project"
    assert "user://payload.tres" in f.where and "the main resource.data['k']" in f.where
    assert "Godot loads that file" in f.message and "runs whatever script it holds" in f.message


def test_an_inline_object_at_any_depth_is_found() -> None:
    kinds = {(f.kind, f.where) for f in scan_resource(PROVEN / "godot4" / "inline_nested.tres")}
    assert ("object-with-script", "sub-resource s1 (Resource).data[0]['k'].script") in kinds
    assert ("embedded-script", "sub-resource s1 (Resource).data[0]['k'].script") in kinds


def _file(*props: tuple[str, Any], external: list[ExtResource] | None = None, subs: list[Resource] | None = None,
          main_type: str = "Resource") -> ResourceFile:
    return ResourceFile(Resource(main_type, dict(props), None), subs or [], external or [], engine=4,
                        format="text", version=3)


@pytest.mark.parametrize("path, outside", [
    ("user://a.tres", True), ("user://x.png", True), ("/tmp/a.res", True), ("C:\\saves\\a.res", True),
    ("C:/saves/a.res", True), ("\\\\host\\a.res", True), ("a.tres", True), ("../a.tres", True), ("", True),
    ("http://example.invalid/a.tres", True), ("uid://abc", True), ("res://../a.tres", True),
    ("res://a/../../a.tres", True), ("res://data/a.tres", False), ("res://a.gd", False),
    ("res://a.tres\0/../../x", False), ("user\0://a.tres", True),
])
def test_every_path_outside_res_can_carry_code(path: str, outside: bool) -> None:
    found = scan_value(["x", {"k": ExtResource("Resource", path)}])
    assert bool(found) == outside, found
    assert (classdb.outside_project(path) is not None) == outside


@pytest.mark.parametrize("path", ["user://evil.GD", "user://evil.Gd", "user://evil.gdc", "user://evil.GDE",
                                  "user://a.TSCN", "user://lib.gdnlib", "user://x.gdextension"])
def test_code_extensions_are_compared_without_case(path: str) -> None:
    [f] = scan_value(ExtResource("Resource", path))
    assert f.kind == "script-outside-project"


def test_a_scene_inside_res_is_a_code_class_whatever_its_case() -> None:
    assert [f.kind for f in scan_value(ExtResource("Resource", "res://level.TSCN"))] == ["code-class"]
    assert scan_value(ExtResource("Resource", "res://data.tres")) == []


@pytest.mark.parametrize("name", sorted(classdb.CODE_CLASSES))
def test_every_code_class_is_found_as_a_resource_an_object_and_with_a_nul(name: str) -> None:
    for type_name in (name, name + "\0", name + "\0junk"):
        assert scan(_file(subs=[Resource(type_name, {}, "1")]))
        assert scan_value(t.Object(type_name, {}))
        assert scan_value([{"k": t.Object(type_name, {})}])


def test_a_property_name_cut_at_a_nul_is_the_property_godot3_sets() -> None:
    res = Resource("Resource", {"script/source\0": "extends Resource"}, "1")
    assert [f.kind for f in scan(_file(subs=[res]))] == ["embedded-script"]
    obj = t.Object("Reference", {"script\0x": t.Object("Resource", {})})
    assert "object-with-script" in [f.kind for f in scan_value(obj)]


def test_typed_containers_are_walked_for_their_scripts() -> None:
    arr = t.TypedArray(t.ContainerType.of_script("user://x.gd"), [])
    d = t.TypedDictionary(t.ContainerType("int"), t.ContainerType.of_script("/abs/y.gd"))
    kinds = [(f.kind, f.where) for f in scan_value({"a": [arr], "d": d})]
    assert ("script-outside-project", "<value>['a'][0] (element type's script)") in kinds
    assert ("script-outside-project", "<value>['d'] (value type's script)") in kinds
    inside = t.TypedArray(t.ContainerType.of_script("res://x.gd"), [])
    assert scan_value(inside) == []


def test_a_godot4_object_script_path_is_a_reference() -> None:
    found = scan_value(t.Object("RefCounted", {"script": "user://x.gd"}))
    assert {f.kind for f in found} == {"script-outside-project", "object-with-script"}


def scan(rf: ResourceFile) -> list[Any]:
    from godot_formats.resources.scan import scan as scan_rf

    return scan_rf(rf)


def test_the_walk_is_iterative_and_visits_shared_values_once() -> None:
    deep: Any = t.Object("GDScript", {})
    for _ in range(20_000):  # twenty times the interpreter's recursion limit
        deep = [deep]
    # where it is, in bounded text: the first and the last steps (a path is never copied level by level)
    assert [f.where for f in scan_value(deep)] == ["<value>" + "[0]" * 8 + "..." + "[0]" * 8]
    shallow = [[{"k": t.Object("GDScript", {})}]]
    assert [f.where for f in scan_value(shallow)] == ["<value>[0][0]['k']"]
    shared = [t.Object("Reference", {"script": t.Object("GDScript", {})})]
    loop: list[Any] = [shared, shared]
    loop.append(loop)
    assert len(scan_value(loop)) == 2  # the object-with-script and its script, once


def _reference_in_a_container() -> ResourceFile:
    ext = ExtResource("Resource", "user://p.tres", None, 0)
    return ResourceFile(Resource("Resource", {"data": [{"k": ext}]}, "local://1"), [], [ext], engine=3, version=3)


@pytest.mark.parametrize("version", [3, 4, 5, 6])
@pytest.mark.parametrize("compressed", [None, "zstd", "deflate", "fastlz"])
def test_a_reference_outside_res_is_found_in_every_binary_form(version: int, compressed: str | None) -> None:
    data = write_binary(_reference_in_a_container(), version=version, compressed=compressed)
    assert [f.kind for f in scan_resource(data)] == ["resource-outside-project"]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_reference_outside_res_is_found_in_every_text_format(version: int) -> None:
    from godot_formats.resources.text import write_text

    rf = _reference_in_a_container()
    rf.external[0].id, rf.main.id = 1, None
    assert [f.kind for f in scan_resource(write_text(rf, version=version))] == ["resource-outside-project"]


def test_a_godot2_inline_reference_outside_res_is_found() -> None:
    """Godot 2.1's binary form names an external resource inline (OBJECT_EXTERNAL_RESOURCE: type
    and path in the value), in a property or an Array."""
    import struct

    from test_binary import _godot2_file

    def u32(*n: int) -> bytes:
        return struct.pack(f"<{len(n)}I", *n)

    def string(s: str) -> bytes:
        return u32(len(s.encode())) + s.encode()

    ref = u32(24, 1) + string("Resource") + string("user://p.tres")
    data = _godot2_file([("direct", ref), ("listed", u32(30, 1) + ref)])
    found = scan_resource(data)
    assert [f.kind for f in found] == ["resource-outside-project"] and "user://p.tres" in found[0].where


# -- reading the text as the engines read it --------------------------------------------------------------

@pytest.mark.parametrize("head", [b"; comment\n", b"\n" * 70, b"\xef\xbb\xbf", b"\xef\xbb\xbf; c\r\n\r\n",
                                  b" \t\r\n;a\n;b\n\x01\n", b"\n" * 5000 + b"; x" * 3 + b"\n"])
def test_whatever_the_engines_skip_before_the_header_is_skipped(head: bytes) -> None:
    body = (PROVEN / "godot3" / "comment_head.tres").read_bytes().split(b"\n\n", 1)[1]
    assert resource_form(head + body) == "text"
    if b"\x01" not in head:
        assert [f.kind for f in scan_resource(head + body)] == ["embedded-script"]


def test_crlf_files_are_read() -> None:
    rf = read_text((PROVEN / "godot4" / "crlf.tres").read_bytes())
    assert rf.main.properties["hp"] == 5


@pytest.mark.parametrize("data", [b"", b"; only a comment\n", b"[gd_scene format=3]\n", b"\x00" * 100,
                                  b"RSRC" + b"\xff" * 60,
                                  b"[gd_resource type=\"Resource\" format=3]\n[resource]\nx = ("])
def test_a_file_the_scanner_cannot_read_raises_and_is_never_clean(data: bytes) -> None:
    with pytest.raises(GodotFormatsError):
        scan_file(data)
    with pytest.raises(DecodeError):
        scan_resource(data)


# -- other kinds of file: ConfigFile text, saves of Variants ---------------------------------------------

CONFIG_CODE = (b'; settings\n[input]\n\nmove_left={\n"events": [ Object(InputEventKey,"script":null,"scancode":65) ]\n}'
               b'\n\n[mods]\nloader=Object(Reference,"script":Object(GDScript,"script/source":"func _init(): pass"))\n'
               b'icon=Resource("user://mod/icon.tres")\n')


def test_configfile_text_is_scanned_value_by_value() -> None:
    found = scan_file(CONFIG_CODE)
    assert {(f.kind, f.where.split(".")[0].split(":")[0]) for f in found} >= {
        ("object-with-script", "[mods] loader"), ("embedded-script", "[mods] loader"),
        ("resource-outside-project", "[mods] icon")}
    assert not any("[input]" in f.where for f in found)  # an InputEventKey without a script is data
    clean = b'[display]\nwindow/size/width=1280\n[input]\nui_x={"deadzone": 0.5, "events": []}\n'
    assert scan_file(clean) == []
    assert scan_file(b'config_version=5\n\n[application]\nconfig/name="x"\nrun/main_scene="res://main.tscn"\n') == []


def test_a_godot3_configfile_is_read_in_godot3_text() -> None:
    assert scan_file(b"[a]\nv=PoolIntArray( 1, 2 )\nq=Vector2( 1, 2 )\n") == []
    assert scan_file(b"[a]\nv=PoolIntArray( 1, 2 )\no=Object(GDScript,\"script/source\":\"\")\n")


def test_saves_of_variants_are_scanned_with_full_objects() -> None:
    code = gf.dumps(t.Object("Reference", {"script": t.Object("GDScript", {"script/source": "x"})}), "godot3",
                    allow_objects=True)
    save = len(code).to_bytes(4, "little") + code
    assert {f.kind for f in scan_file(save)} == {"object-with-script", "embedded-script"}
    assert scan_file(gf.dumps({"gold": 5}, "godot4")) == []


def test_an_encrypted_save_is_scanned_with_its_password() -> None:
    path = FIXTURES.parent / "examples" / "saves" / "godot3_encrypted.sav"
    with pytest.raises(DecodeError):
        scan_file(path)
    assert scan_file(path, password="hunter2") == []


# -- following references into user:// --------------------------------------------------------------------

def test_user_dir_scans_the_second_file_too(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "payload.tres").write_bytes((PROVEN / "godot4" / "payload.tres").read_bytes())
    save = PROVEN / "godot4" / "ref_user.res"
    alone = scan_resource(save)
    followed = scan_resource(save, user_dir=user)
    assert followed[:len(alone)] == alone
    [inner] = followed[len(alone):]
    assert inner.kind == "embedded-script" and inner.file == "user://payload.tres"
    assert str(inner).startswith("embedded-script: in user://payload.tres: ")


def test_user_dir_follows_transitively_without_loops_and_names_missing_files(tmp_path: Path) -> None:
    def text(ref: str) -> bytes:
        return (f'[gd_resource type="Resource" load_steps=2 format=2]\n\n[ext_resource path="{ref}" type="Resource" '
                'id=1]\n\n[resource]\ndata = ExtResource( 1 )\n').encode()

    (tmp_path / "a.tres").write_bytes(text("user://b.tres"))
    (tmp_path / "b.tres").write_bytes(text("c.tres"))  # relative: beside b.tres, in user://
    (tmp_path / "c.tres").write_bytes(text("user://a.tres"))  # back to the start
    (tmp_path / "d.tres").write_bytes(text("user://missing.tres"))
    found = scan_resource(tmp_path / "a.tres", user_dir=tmp_path)
    assert [(f.file, f.kind) for f in found] == [
        (None, "resource-outside-project"), ("user://b.tres", "resource-outside-project"),
        ("user://c.tres", "resource-outside-project")]
    missing = scan_resource(tmp_path / "d.tres", user_dir=tmp_path)
    assert [f.kind for f in missing] == ["resource-outside-project", "reference-not-scanned"]
    outside = tmp_path / "e.tres"
    outside.write_bytes(text("user://../../etc/passwd"))
    assert [f.kind for f in scan_resource(outside, user_dir=tmp_path)] == ["resource-outside-project"]


def test_the_scan_command_follows_user_dir_and_exits_by_what_it_found(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "payload.tres").write_bytes((PROVEN / "godot3" / "payload.tres").read_bytes())
    save = str(PROVEN / "godot3" / "ref_user.tres")
    assert main(["scan", "--user-dir", str(tmp_path), "--json", save]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["file"] for f in doc["findings"]] == [None, "user://payload.tres"]
    assert main(["scan", str(PROVEN / "godot3" / "clean.res")]) == 0
    bad = tmp_path / "bad.tres"
    bad.write_bytes(b"; nothing but a comment\n")
    assert main(["scan", str(bad), save]) == 2
    captured = capsys.readouterr()
    assert "cannot be scanned" in captured.err and "resource-outside-project" in captured.out


# -- the same walk gates the writers and the engine ------------------------------------------------------------

@pytest.mark.parametrize("path", [p for p, e in RESOURCE_FILES if e["verdict"] == "hostile"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_writers_refuse_what_the_scanner_finds(path: Path) -> None:
    rf = gf.open_resource(path)
    with pytest.raises(EncodeError, match="carries code"):
        rf.to_bytes()
    assert rf.to_bytes(allow_scripts=True) == path.read_bytes() or rf.notes


@pytest.mark.parametrize("path", [p for p, e in VERDICTS if e["verdict"] == "hostile"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_engine_run_refuses_every_hostile_file_before_any_engine_starts(
        path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "load.gd"
    script.write_text("extends SceneTree\nfunc _init():\n\tquit()\n")
    engine = path.parent.name
    assert main(["engine", "run", "--engine", engine, str(script), str(path)]) == 1
    err = capsys.readouterr().err
    assert "not given to the engine" in err and "--run-embedded-code" in err


def test_engine_run_refuses_a_file_the_scanner_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "load.gd"
    script.write_text("extends SceneTree\nfunc _init():\n\tquit()\n")
    blanks = tmp_path / "blanks.tres"
    blanks.write_bytes(b"\n" * 70 + (PROVEN / "godot4" / "payload.tres").read_bytes())  # the old gate's blind spot
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x00\x01garbage")
    for f in (blanks, odd):
        assert main(["engine", "run", "--engine", "godot4", str(script), str(f)]) == 1
        assert "not given to the engine" in capsys.readouterr().err
