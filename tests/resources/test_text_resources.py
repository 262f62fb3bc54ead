"""Text resources (``.tres``): godot_formats.resources.text against files the engines wrote.

The fixtures (fixtures/resources/, README there) were saved by Godot 3.2.3 and Godot 4.6 with
``ResourceSaver.save``; the scripts that saved them are beside them.  A few were made by hand and
loaded by the engines (evil*.tres, oldsave.tres, compat.tres).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import TEXT, values

from godot_formats.core import types as t
from godot_formats.core.errors import EncodeError, GodotFormatsError, ResourceFormatError, TextDecodeError
from godot_formats.resources.model import ExtResource, Resource, ResourceFile
from godot_formats.resources.text import FORMAT_ENGINES, read_text, uid_from_text, uid_to_text, write_text
from godot_formats.views.text import from_text, to_text
from godot_formats.views.text.parser import read_value

HERE = FIXTURES / "resources"
ALL_TRES = sorted(HERE.glob("godot*/**/*.tres"))
#: File -> (the engine's output it must equal, the name the engine saved it under).
ENGINE_MADE = {
    "godot4/save.tres": ("out.txt", "user://save.tres"),
    "godot4/resaved_from_godot3.tres": ("out2.txt", "user://resaved.tres"),
    "godot4/a.tres": ("out3.txt", "user://a.tres"),
    "godot4/b.tres": ("out3.txt", "user://b.tres"),
    "godot4/c.tres": ("out3.txt", "user://c.tres"),
}


def _read(name: str) -> bytes:
    return (HERE / name).read_bytes()


def _id(path: Path) -> str:
    return str(path.relative_to(HERE))


# -- the fixtures ------------------------------------------------------------------------------------


def test_the_fixtures_are_there() -> None:
    assert len(ALL_TRES) >= 10
    assert {_id(p) for p in ALL_TRES} >= set(ENGINE_MADE) | {"godot3/save.tres"}


@pytest.mark.parametrize("name", sorted(ENGINE_MADE))
def test_the_godot4_fixtures_are_what_the_engine_printed(name: str) -> None:
    """Each 4.6 file is, byte for byte, the hex the engine printed right after saving it."""
    out, saved_as = ENGINE_MADE[name]
    log = (HERE / "godot4" / out).read_text(encoding="utf-8")
    m = re.search(rf"^@@FILE {re.escape(saved_as)} (\d+) ([0-9a-f]+)$", log, re.M)
    assert m is not None
    assert bytes.fromhex(m.group(2)) == _read(name) and int(m.group(1)) == len(_read(name))


@pytest.mark.parametrize("path", ALL_TRES, ids=_id)
def test_every_fixture_round_trips_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    rf = read_text(data)
    assert write_text(rf) == data
    assert rf.format == "text" and rf.engine == FORMAT_ENGINES[rf.version]
    assert write_text(rf, version=rf.version) == data
    # and from the text, as str
    assert write_text(read_text(data.decode("utf-8"))) == data


# -- the values: what the scripts set ------------------------------------------------------------------


def _check_save(rf: ResourceFile) -> dict[str, Any]:
    """What save_data.gd / inner.gd and run.gd (main.gd) set, in either engine's file."""
    props = rf.main.properties
    assert rf.main.type == rf.header["type"] == "Resource"
    assert props["player_name"] == "Ann" and props["level"] == 12 and props["gold"] == 1.5
    assert props["pos"] == t.Vector2(1, 2)
    assert props["items"] == ["sword", 42]
    assert props["stats"] == {"big": 5000000000, "hp": 10}
    assert props["pool"] == t.PackedInt32Array([1, 2, 3])
    assert props["col"] == t.Color(1, 0, 0, 1)
    assert props["np"] == t.NodePath("a/b:c")
    assert props["tr"] == from_text("Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)")
    # the inner sub-resource: one object, with its own script
    assert len(rf.resources) == 1
    inner = rf.resources[0]
    assert props["inner"] is inner
    assert inner.type == "Resource" and inner.properties == {"script": inner.script, "note": "hello"}
    assert [(e.type, e.path) for e in rf.external] == [("Script", "res://inner.gd"), ("Script", "res://save_data.gd")]
    assert inner.script is rf.external[0] and rf.main.script is rf.external[1]
    assert list(props)[0] == "script"  # file order
    return props


def test_godot3_save_values() -> None:
    rf = read_text(_read("godot3/save.tres"))
    assert (rf.engine, rf.version) == (3, 2)
    assert rf.header == {"type": "Resource", "load_steps": 4, "script_class": None, "uid": None}
    _check_save(rf)
    assert [e.id for e in rf.external] == [1, 2] and rf.resources[0].id == 1
    assert not rf.notes


def test_godot4_save_values() -> None:
    rf = read_text(_read("godot4/save.tres"))
    assert (rf.engine, rf.version) == (4, 3)
    assert rf.header == {"type": "Resource", "load_steps": None, "script_class": "SaveData", "uid": None}
    props = _check_save(rf)
    assert props["typed"] == t.TypedArray("int", [7, 8])
    assert props["sn"] == t.StringName("name") and isinstance(props["sn"], t.StringName)
    assert props["v4"] == t.Vector4(1, 2, 3, 4)
    assert [e.id for e in rf.external] == ["1", "2"] and rf.resources[0].id == "Resource_bc5hj"


def test_format_4_base64_and_the_compat_form() -> None:
    """4.6 wrote format 3 for 3 bytes and format 4 (every PackedByteArray base64) once a 65-byte
    array was there; the two are the same values."""
    a, b = read_text(_read("godot4/a.tres")), read_text(_read("godot4/b.tres"))
    assert (a.version, b.version) == (3, 4)
    assert a.main.properties["metadata/small"] == b.main.properties["metadata/small"] == b"\x01\x02\x03"
    assert b.main.properties["metadata/big"] == bytes(range(65))
    assert write_text(a, version=4) == b'[gd_resource type="Resource" format=4]\n\n[resource]\n' \
                                       b'metadata/small = PackedByteArray("AQID")\n'
    as_3 = write_text(b, version=3).decode()
    assert "metadata/small = PackedByteArray(1, 2, 3)\n" in as_3 and "format=3]" in as_3
    assert "PackedByteArray(0, 1, 2," in as_3
    c = read_text(_read("godot4/c.tres"))
    assert c.main.properties["metadata/v4"] == t.PackedVector4Array([t.Vector4(1, 2, 3, 4)])


def test_the_engines_choice_of_format_for_a_model_from_elsewhere() -> None:
    """A model that is not a text file's gets the engine's format: 4 only when a value needs it."""
    b = read_text(_read("godot4/b.tres"))
    for rf, expected in ((b, 4), (read_text(_read("godot4/a.tres")), 3), (read_text(_read("godot4/c.tres")), 4)):
        rf.format, rf.version, rf.layout = "binary", 6, {}
        assert f"format={expected}]".encode() in write_text(rf)
    b.main.properties = {"nested": [{"k": bytes(65)}]}
    assert b"format=4]" in write_text(b)
    b.main.properties = {"nested": [{"k": bytes(64)}]}
    assert b"format=3]" in write_text(b)
    g3 = read_text(_read("godot3/save.tres"))
    g3.format, g3.version = "binary", 3
    assert write_text(g3) == _read("godot3/save.tres")


def test_an_embedded_script_is_data() -> None:
    """evil*.tres run code when an engine loads them; here the script is a sub-resource's text."""
    for name, ident in (("godot3/evil3.tres", 1), ("godot4/evil.tres", "1")):
        rf = read_text(_read(name))
        (script,) = rf.resources
        assert script.type == "GDScript" and script.id == ident
        assert rf.main.script is script and rf.main.properties["hp"] == 9
        source = script.properties["script/source"]
        assert source.startswith("extends Resource\nvar hp = 5\n") and "func _init():\n\t" in source


def test_the_godot3_files_godot4_read() -> None:
    compat = read_text(_read("godot4/compat.tres"))
    material, gradient, texture = compat.resources
    assert (material.type, gradient.type, texture.type) == ("SpatialMaterial", "Gradient", "GradientTexture")
    assert gradient.properties == {} and texture.properties["gradient"] is gradient
    assert compat.main.properties["metadata/a"] is material and compat.main.properties["resource_name"] == "holder"
    old = read_text(_read("godot4/oldsave.tres"))
    assert old.main.script.path == "res://old/save_data.gd"


# -- one engine's file in the other's style ------------------------------------------------------------


def test_godot4_save_written_as_godot3_is_godot3s_file() -> None:
    """Godot 4's save, written as format 2, is what Godot 3.2.3 saved for the same script (once the
    Godot 4-only values are gone: the value text of Godot 3 has no typed Array, StringName, Vector4)."""
    rf = read_text(_read("godot4/save.tres"))
    with pytest.raises(EncodeError, match=r"\[resource\] typed: godot3 has no typed Arrays"):
        write_text(rf, version=2)
    for name in ("typed", "sn", "v4"):
        del rf.main.properties[name]
    assert write_text(rf, version=2) == _read("godot3/save.tres")


def test_godot3_save_written_as_godot4_is_what_godot4_resaved() -> None:
    """Godot 3's save as format 3 is what 4.6 wrote when it loaded and saved that file again (its
    script adds three variables and a class name, which the model is given here)."""
    rf = read_text(_read("godot3/save.tres"))
    rf.header["script_class"] = "SaveData"
    rf.main.properties.update(typed=t.TypedArray("int", [7, 8]), sn=t.StringName("name"), v4=t.Vector4(1, 2, 3, 4))
    assert write_text(rf, version=3) == _read("godot4/resaved_from_godot3.tres")
    as_4 = write_text(rf, version=4)
    assert as_4.startswith(b'[gd_resource type="Resource" script_class="SaveData" format=4]\n')


def test_a_godot4_file_made_with_an_editor_keeps_its_ids() -> None:
    data = (b'[gd_resource type="Resource" script_class="S" load_steps=3 format=3 uid="uid://bb"]\n\n'
            b'[ext_resource type="Script" uid="uid://0" path="res://s.gd" id="1_x4k2p"]\n\n'
            b'[sub_resource type="Resource" id="Resource_abcde"]\nscript = ExtResource("1_x4k2p")\n\n'
            b'[resource]\nscript = ExtResource("1_x4k2p")\nsub = SubResource("Resource_abcde")\n')
    rf = read_text(data)
    assert rf.header["uid"] == 35 and rf.header["load_steps"] == 3 and rf.external[0].uid == 25
    assert write_text(rf) == data
    as_3 = write_text(rf, version=2).decode()
    assert as_3.startswith('[gd_resource type="Resource" load_steps=3 format=2]\n\n'
                           '[ext_resource path="res://s.gd" type="Script" id=1]\n')
    assert "sub = SubResource( 1 )" in as_3 and "uid" not in as_3


def test_uid_text_is_the_engines() -> None:
    assert [uid_to_text(n) for n in (0, 25, 35, -1)] == ["uid://a", "uid://0", "uid://bb", "uid://<invalid>"]
    for n in (0, 1, 33, 34, 2**63 - 1, 123456789012345):
        assert uid_from_text(uid_to_text(n)) == n
    assert uid_from_text("uid://<invalid>") is None and uid_from_text("res://x") is None
    assert uid_from_text("uid://A") is None
    assert uid_from_text("uid://z") == 25  # the engine reads 'z' as '0' (its base is 34)
    assert uid_from_text("uid://" + "8" * 40) == (uid_from_text("uid://" + "8" * 40) or 0) & (2**63 - 1)


def test_what_a_hand_made_file_says_beyond_the_model_is_kept() -> None:
    """Attribute order, unknown attributes, a value's own spelling, blank lines: written back."""
    data = ('\ufeff[gd_resource format=3 type="Resource" future=[1, 2] uid="uid://z"]\n'
            '[ext_resource id=7 path="res://a.gd" type="Script"]\n\n\n'
            '[sub_resource type="Resource" id=01]\n"odd name" = 1\n'
            '[resource]\nr = ExtResource(7)\ns = SubResource(1)\no = Object(Node,"a":1,"script":null)\n\n\n')
    rf = read_text(data)
    assert rf.external[0].id == 7 and rf.resources[0].id == 1 and rf.header["uid"] == 25
    assert rf.resources[0].properties == {"odd name": 1}
    assert write_text(rf) == data.encode("utf-8")
    rf.header["uid"] = 26  # changed: its own text again
    assert b'uid="uid://1"' in write_text(rf)


def test_comments_are_dropped_with_a_note_and_crlf_line_ends_kept() -> None:
    data = b'[gd_resource type="Resource" format=3]\r\n; a comment\r\n\r\n[resource]\r\nb = 1 ; why\r\n'
    rf = read_text(data)
    assert rf.main.properties == {"b": 1} and any("comment" in n for n in rf.notes)
    assert write_text(rf) == b'[gd_resource type="Resource" format=3]\r\n\r\n[resource]\r\nb = 1\r\n'
    text = b'[gd_resource type="Resource" format=3]\r\n\r\n[resource]\r\ns = "a\r\nb"\r\n'
    rf = read_text(text)  # a string's own line end is the engine's value: "a\r\nb", as it reads it
    assert rf.main.properties == {"s": "a\r\nb"} and write_text(rf) == text


def test_references_nested_and_typed() -> None:
    """Resources inside containers, as Dictionary keys, a typed Array of a script class (the engine
    writes its script as an ExtResource), Resource("path"), a sub-resource naming itself."""
    data = (b'[gd_resource type="Resource" load_steps=3 format=3]\n\n'
            b'[ext_resource type="Script" path="res://a.gd" id="1_abc"]\n\n'
            b'[sub_resource type="Resource" id="R_1"]\nme = SubResource("R_1")\n\n'
            b'[resource]\nd = {\nSubResource("R_1"): [ExtResource("1_abc")]\n}\n'
            b'ta = Array[ExtResource("1_abc")]([SubResource("R_1")])\n'
            b'r = Resource("res://other.tres")\nr2 = Resource("res://other.tres")\n')
    rf = read_text(data)
    sub, ext = rf.resources[0], rf.external[0]
    props = rf.main.properties
    assert sub.properties["me"] is sub
    assert list(props["d"].items()) == [(sub, [ext])]
    assert props["ta"].element_type == t.ContainerType.of_script("res://a.gd") and props["ta"][0] is sub
    assert props["r"] is props["r2"] and props["r"].path == "res://other.tres" and props["r"] not in rf.external
    assert write_text(rf) == data
    del props["ta"]
    assert b'r = Resource( "res://other.tres" )' in write_text(rf, version=2)


def test_the_value_parser_hook() -> None:
    """read_value reads one value in place and says where it ends; without a resolver the
    references of a resource file are refused, with one they are the resolver's."""
    text = 'x = [ExtResource("1"), SubResource( 2 ), Resource("res://a")] ; rest'
    with pytest.raises(TextDecodeError, match="resource file"):
        read_value(text, 4)
    seen: list[tuple[str, tuple[Any, ...]]] = []
    value, end = read_value(text, 4, resources=lambda kind, args: seen.append((kind, args)) or kind)
    assert value == ["ExtResource", "SubResource", "Resource"] and text[end:] == " ; rest"
    assert seen == [("ExtResource", ("1",)), ("SubResource", (2,)), ("Resource", ("res://a",))]

    def refuse(kind: str, args: tuple[Any, ...]) -> Any:
        raise ValueError("no such thing")
    with pytest.raises(TextDecodeError, match=r"line 2, column 3\): no such thing"):
        read_value('\n  ExtResource("9")', 0, resources=refuse)
    assert from_text('Array[Resource("res://a.gd")]([])') == t.TypedArray(t.ContainerType.of_script("res://a.gd"), [])


def test_the_value_writer_hook() -> None:
    marker = object()
    assert to_text([marker, {"k": marker}], "godot3", resources=lambda v: "REF" if v is marker else None) \
        == '[ REF, {\n"k": REF\n} ]'
    with pytest.raises(EncodeError, match="cannot write a object"):
        to_text([marker], "godot4")
    assert to_text([b"\x01\x02\x03", b""], base64_bytes=True) == '[PackedByteArray("AQID"), PackedByteArray()]'
    typed = t.TypedArray(t.ContainerType.of_script("res://a.gd"), [])
    assert to_text(typed) == 'Array[Resource("res://a.gd")]([])'
    assert to_text(typed, resources=lambda v: 'ExtResource("1")') == 'Array[ExtResource("1")]([])'


# -- refusals ------------------------------------------------------------------------------------------

HEAD = '[gd_resource type="Resource" format=3]\n\n'
HEAD3 = '[gd_resource type="Resource" format=2]\n\n'
MALFORMED = [
    ("", 1, "starts with a [gd_resource"),
    ("\n\n   \n", 4, "starts with a [gd_resource"),
    ("x = 1\n", 1, "starts with a [gd_resource"),
    ('[resource]\n', 1, "not [resource"),
    ('[gd_resource type="Resource"]\n[resource]\n', 1, "no format="),
    ('[gd_resource type="Resource" format=5]\n[resource]\n', 1, "format=5"),
    ('[gd_resource type="Resource" format="3"]\n[resource]\n', 1, "format in the [gd_resource] tag must be an integer"),
    ('[gd_resource format=3]\n[resource]\n', 1, "no type="),
    ('[gd_resource type="Resource" format=3\n', 2, "expected an attribute name or ']'"),
    ('[gd_resource type="Resource" format=3 format=3]\n', 1, "format is given twice"),
    ('[gd_resource type="Resource" format=3] x\n', 1, "unexpected text after the [gd_resource] tag"),
    (HEAD + "x = 1\n[resource]\n", 3, "a property outside"),
    (HEAD + '[ext_resource type="Script" path="res://a.gd" id="1"]\nx = 1\n', 4, "a property outside"),
    (HEAD + '[sub_resource type="Resource" id="1"]\n[ext_resource type="Script" path="res://a" id="1"]\n', 4,
     "external resources come first"),
    (HEAD + '[node name="A"]\n', 3, "unexpected tag [node]"),
    (HEAD + "[resource]\nx = 1\n[sub_resource type=\"Resource\" id=\"1\"]\n", 5, "after [resource]"),
    (HEAD + "[resource]\n[resource]\n", 4, "after [resource]"),
    (HEAD + '[gd_resource type="Resource" format=3]\n', 3, "a second file header"),
    (HEAD + '[sub_resource type="Resource" id="1"]\nx = 1\n', 5, "ends without a [resource]"),
    (HEAD, 3, "ends without a [resource]"),
    (HEAD + '[ext_resource type="Script" path="res://a" id="1"]\n[ext_resource type="Script" path="res://b" id=1]\n',
     4, "a second [ext_resource] with the id 1"),
    (HEAD + '[sub_resource type="Resource" id="a"]\n[sub_resource type="Resource" id="a"]\n', 4,
     "a second [sub_resource]"),
    (HEAD + '[ext_resource type="Script" id="1"]\n', 3, "has no path="),
    (HEAD + '[sub_resource type="Resource" id=1.5]\n', 3, "must be an integer or a string"),
    (HEAD + '[resource]\nx = ExtResource("2")\n', 4, 'ExtResource(\'2\') names no [ext_resource]'),
    (HEAD + '[sub_resource type="Resource" id="a"]\nx = SubResource("b")\n\n[sub_resource type="Resource" id="b"]\n',
     4, "names no [sub_resource] above it"),
    (HEAD + "[resource]\nx = SubResource(1.5)\n", 4, "expected an id"),
    (HEAD + "[resource]\nx = Vector2(1,\n", 5, "expected a number in Vector2()"),
    (HEAD + "[resource]\nx = 1 2\n", 4, "unexpected text after the value of 'x'"),
    (HEAD + "[resource]\nx 1\n", 4, "expected '=' after the property name 'x'"),
    (HEAD + '[resource]\n"" = 1\n', 4, "a non-empty string"),
    (HEAD + "[resource]\n= 1\n", 4, "expected a property name"),
    (HEAD + "[resource]\nx = \n", 5, "expected a value"),
    (HEAD + '[resource]\nx = "never closed\n', 4, "unterminated string"),
    (HEAD3 + "[resource]\nx = &\"sn\"\n", 4, "Godot 3 has no StringName"),
    (HEAD + "[resource]\nx = [\n" + "[" * 5000 + "\n", 5, "nested deeper"),
]


@pytest.mark.parametrize(("text", "line", "message"), MALFORMED)
def test_malformed_files_are_refused_naming_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ResourceFormatError) as info:
        read_text(text.encode("utf-8"))
    assert info.value.line == line, str(info.value)
    assert message in str(info.value) and f"line {line}," in str(info.value)


def test_a_scene_is_refused() -> None:
    scene = (b'[gd_scene load_steps=2 format=3]\n\n[ext_resource type="Script" path="res://main.gd" id="1"]\n\n'
             b'[node name="Main" type="Node"]\nscript = ExtResource("1")\n')
    with pytest.raises(ResourceFormatError, match=r"line 1, column 1\): this is a scene \(\[gd_scene") as info:
        read_text(scene)
    assert isinstance(info.value, ValueError) and isinstance(info.value, GodotFormatsError)


def test_bytes_that_are_not_utf8_are_refused_naming_the_line() -> None:
    with pytest.raises(ResourceFormatError, match=r"line 4, column 6\): the file is not UTF-8") as info:
        read_text(HEAD.encode() + b"[resource]\nx = \"\xff\"\n")
    assert info.value.offset == len(HEAD) + len('[resource]\nx = "')


def test_what_the_writer_refuses() -> None:
    rf = read_text(_read("godot4/save.tres"))
    with pytest.raises(EncodeError, match="formats are 1"):
        write_text(rf, version=5)
    with pytest.raises(EncodeError, match="not Godot 3.2's"):
        write_text(rf, text_version="3.2")
    stray = Resource("Resource")
    rf.main.properties["stray"] = stray
    with pytest.raises(EncodeError, match=r"\[resource\] stray: .* is not one of the file's sub-resources"):
        write_text(rf)
    del rf.main.properties["stray"]
    later = Resource("Resource", {}, "later")
    rf.resources.append(later)
    rf.resources[0].properties["later"] = later
    with pytest.raises(EncodeError, match="used above its"):
        write_text(rf)
    rf.resources[0].properties.pop("later")
    rf.main.properties[""] = 1
    with pytest.raises(EncodeError, match="non-empty string"):
        write_text(rf)
    del rf.main.properties[""]
    rf.main.properties["s"] = "\ud800"
    with pytest.raises(EncodeError, match="lone surrogate"):
        write_text(rf)
    del rf.main.properties["s"]
    rf.resources.append(rf.resources[0])
    with pytest.raises(EncodeError, match="listed twice"):
        write_text(rf)


def test_property_names_are_quoted_as_the_engine_quotes_them() -> None:
    names = ["plain/name_1", "with space", 'q"uote', "semi;colon", "br[ack]et", "eq=ual", "héllo", "tab\tx", "back\\s"]
    rf = ResourceFile(Resource("Resource", {n: i for i, n in enumerate(names)}), format="text", version=3)
    text = write_text(rf).decode()
    assert "\nplain/name_1 = 0\n" in text and '\n"with space" = 1\n' in text and '\n"q\\"uote" = 2\n' in text
    assert "\nback\\s = 8\n" in text and '\n"tab\tx" = 7\n' in text  # a backslash is printable ASCII
    assert list(read_text(text).main.properties) == names


def test_a_model_made_by_hand_gets_the_engines_ids() -> None:
    script = ExtResource("Script", "res://s.gd")
    inner = Resource("Resource", {"script": script})
    rf = ResourceFile(Resource("Resource", {"a": inner, "b": [inner]}), [inner], [script], format="text", version=3)
    text = write_text(rf).decode()
    sub_id = re.search(r'\[sub_resource type="Resource" id="(Resource_[a-y0-8]{5})"\]', text)
    assert sub_id is not None and f'a = SubResource("{sub_id.group(1)}")' in text
    assert '[ext_resource type="Script" path="res://s.gd" id="1"]' in text
    assert write_text(rf) == text.encode()  # the same model, the same file
    back = read_text(text)
    assert back.main.properties["b"][0] is back.main.properties["a"] is back.resources[0]
    as_3 = write_text(rf, version=2).decode()
    assert "a = SubResource( 1 )" in as_3 and "load_steps=3 format=2]" in as_3


def test_godot3_writes_a_rid_as_nothing_and_reads_it_back() -> None:
    rf = ResourceFile(Resource("Resource", {"rid": t.RID(), "after": 1}), format="text", version=2)
    data = write_text(rf)
    assert b"\nrid = \nafter = 1\n" in data
    assert read_text(data).main.properties == {"rid": t.RID(), "after": 1}


# -- properties ----------------------------------------------------------------------------------------

NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=8)


def _text_is_settled(value: Any, dialect: str) -> bool:
    """Whether the value's text reads back to a value with the same text.  Not so for a few values
    (Godot 3 orders Array keys of a Dictionary as ties, so their order follows the input's): the
    text tests cover values; this file's property is about the file around them."""
    try:
        text = to_text(value, dialect)
        return to_text(from_text(text, dialect), dialect) == text
    except (EncodeError, TextDecodeError):
        return False


@st.composite
def resource_files(draw: st.DrawFn, version: int) -> ResourceFile:
    """A model of a whole file: external resources, sub-resources referring to earlier ones (and to
    themselves) from anywhere in their values, and a main resource; ids left to the writer."""
    dialect = "godot3" if version <= 2 else "godot4"
    value = values(dialect, max_leaves=6).filter(lambda v: _text_is_settled(v, dialect))
    external = [ExtResource(draw(st.sampled_from(["Script", "Texture2D", "Resource"])), "res://" + draw(TEXT))
                for _ in range(draw(st.integers(0, 3)))]
    resources: list[Resource] = []

    def filled(res: Resource, known: list[Any]) -> Resource:
        refs = st.sampled_from(known) if known else st.nothing()
        for name in draw(st.lists(NAMES, max_size=4, unique=True)):
            res.properties[name] = draw(value | refs | st.lists(refs, min_size=1, max_size=2))
        return res

    for _ in range(draw(st.integers(0, 3))):
        res = Resource(draw(st.sampled_from(["Resource", "Gradient", "GDScript"])))
        resources.append(filled(res, external + resources + [res]))
    main = filled(Resource("Resource"), external + resources)
    header = {"script_class": draw(st.none() | st.just("Cls")), "uid": draw(st.none() | st.integers(0, 2**63 - 1))}
    return ResourceFile(main, resources, external, engine=FORMAT_ENGINES[version], format="text", version=version,
                        header=header)


@pytest.mark.parametrize("version", [2, 3, 4])
@given(data=st.data())
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_write_then_read_is_stable(version: int, data: st.DataObject) -> None:
    """What write_text writes, read_text reads back to a model that writes the same bytes, with
    the same resources in the same places."""
    rf = data.draw(resource_files(version))
    try:
        first = write_text(rf)
    except EncodeError:
        assume(False)  # a value the text form cannot hold (the text tests cover those)
    back = read_text(first)
    assert write_text(back) == first
    assert [r.type for r in back.resources] == [r.type for r in rf.resources]
    assert [(e.type, e.path) for e in back.external] == [(e.type, e.path) for e in rf.external]
    mapping = {id(a): b for a, b in zip([*rf.external, *rf.resources], [*back.external, *back.resources])}
    for old, new in zip([*rf.resources, rf.main], [*back.resources, back.main]):
        assert list(new.properties) == list(old.properties)
        for name, value in old.properties.items():
            if id(value) in mapping:
                assert new.properties[name] is mapping[id(value)]


@given(st.sampled_from(ALL_TRES), st.lists(st.tuples(st.integers(0, 700), st.sampled_from(
    list('[]()"=;\n \t{}:,&#\\') + ["ExtResource(", "SubResource(", "\xff", "Resource(", "id=", "format=9"])),
    min_size=1, max_size=4))
@settings(deadline=None)
def test_damaged_files_raise_only_the_librarys_errors(path: Path, edits: list[tuple[int, str]]) -> None:
    text = path.read_text(encoding="utf-8")
    for pos, piece in edits:
        text = text[:pos] + piece + text[pos + 1:]
    try:
        rf = read_text(text.encode("utf-8", "surrogatepass"))
    except ResourceFormatError:
        return
    try:
        first = write_text(rf)
    except EncodeError:
        return
    assert write_text(read_text(first)) == first


# -- a Godot 3 .res written as text is the engine's own .tres ---------------------------------------

AS_TEXT = HERE / "godot3" / "as_text"  # each godot3/*.res loaded and saved as .tres by Godot 3.2.3
_EXT_LINE = re.compile(r'\[ext_resource path="([^"]*)" type="[^"]*" id=(\d+)\]')


def _typed_object_properties() -> set[str]:
    """The properties the fixtures' scripts declare as ``Resource``: the engine's text saver leaves
    such a property out when it is null, which it knows from the script; the ``.res`` holds a
    plain null (Nil) for it, so nothing in the file tells it from an untyped null."""
    names: set[str] = set()
    for script in (HERE / "godot3").glob("*.gd"):
        names |= set(re.findall(r"^export var (\w+): *Resource\b", script.read_text(), re.M))
    return names


def _with_our_ext_ids(engine: str, ours: str) -> str:
    """The engine's file with its external resources numbered as ours are (matched by path): an
    editor build such as the oracle numbers them by where each script sits in memory."""
    engine_ids = {m.group(2): m.group(1) for m in _EXT_LINE.finditer(engine)}
    our_ids = {m.group(1): m.group(2) for m in _EXT_LINE.finditer(ours)}
    new = {old: our_ids[path] for old, path in engine_ids.items()}
    engine = re.sub(r"ExtResource\( (\d+) \)", lambda m: f"ExtResource( {new[m.group(1)]} )", engine)
    lines = engine.split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith("[ext_resource")]
    renumbered = [_EXT_LINE.sub(lambda m: f'{m.group(0)[:m.start(2) - m.start(0)]}{new[m.group(2)]}]', lines[i])
                  for i in at]
    renumbered.sort(key=lambda line: int(_EXT_LINE.search(line).group(2)))  # type: ignore[union-attr]
    for i, line in zip(at, renumbered):
        lines[i] = line
    return "\n".join(lines)


@pytest.mark.parametrize("name", ["all", "all_fresh", "all_c", "obj", "save", "save_c", "as_text/graph"])
def test_a_godot3_res_written_as_text_is_the_engines_tres(name: str) -> None:
    """Sub-resources in the engine's save order (properties sorted by name, children first), their
    ids the binary file's subindexes, every value's text: byte for byte, once the two things no
    ``.res`` records are set aside (ext ids by memory address, typed nulls by the script)."""
    import godot_formats as gf

    ours = gf.open_resource(HERE / "godot3" / f"{name}.res").to_bytes(format="text").decode()
    typed = _typed_object_properties()
    ours = "\n".join(line for line in ours.split("\n")
                     if not (line.endswith(" = null") and line.split(" = ")[0] in typed))
    engine = (AS_TEXT / f"{Path(name).name}.tres").read_text(encoding="utf-8")
    assert ours == _with_our_ext_ids(engine, ours)
    if name in ("obj", "save", "save_c"):  # nothing set aside at all
        full = gf.open_resource(HERE / "godot3" / f"{name}.res").to_bytes(format="text").decode()
        assert full == engine


@pytest.mark.parametrize("name", ["all_be", "save_be"])
def test_the_engines_text_of_a_big_endian_res_is_its_misreading(name: str) -> None:
    """The engine reads the elements of a big-endian file's packed arrays byte-swapped, and saves
    what it read: our text of the file is the values written, and the engine's is ours with each
    element of each swapped array byte-swapped, which the note says."""
    import struct

    import godot_formats as gf

    rf = gf.open_resource(HERE / "godot3" / f"{name}.res")
    assert any("byte-swapped" in note for note in rf.notes)
    engine = (AS_TEXT / f"{name}.tres").read_text(encoding="utf-8")

    def swapped(x: float, code: str) -> float:
        return struct.unpack("<" + code, struct.pack(">" + code, x))[0]  # type: ignore[no-any-return]

    seen = 0
    for prop, ours in rf.main.properties.items():
        if isinstance(ours, t.PackedInt32Array):
            misread: Any = t.PackedInt32Array([swapped(x, "i") for x in ours])
        elif isinstance(ours, t.PackedFloat32Array):
            misread = t.PackedFloat32Array([swapped(x, "f") for x in ours])
        elif isinstance(ours, (t.PackedVector2Array, t.PackedVector3Array, t.PackedColorArray)):
            misread = type(ours)([type(v)(*(swapped(c, "f") for c in v)) for v in ours])
        else:
            continue
        seen += 1
        assert f"\n{prop} = {to_text(misread, 'godot3')}\n" in engine
        assert f"\n{prop} = {to_text(ours, 'godot3')}\n" in rf.to_bytes(format="text").decode()
    assert seen == (5 if name == "all_be" else 1)


def test_the_engine_reads_a_res_rid_as_an_int() -> None:
    """Godot 3.2.3's binary loader gives a RID property back as the int it stored (129), and its
    text saver then writes ``129``; the same resource saved as ``.tres`` by the engine wrote
    nothing for the RID, which is our text of the ``.res``."""
    import godot_formats as gf

    ours = gf.open_resource(HERE / "godot3" / "rid.res").to_bytes(format="text")
    assert ours == _read("godot3/rid.tres")
    assert b"\nrid_v = 129\n" in (AS_TEXT / "rid.tres").read_bytes() and b"\nrid_v = \n" in ours
