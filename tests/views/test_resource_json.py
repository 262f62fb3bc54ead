"""``dump --json`` of resource saves (issue 40, item 8): every value the resource readers return has
a JSON form, at any depth they accept, and reads back to the same value.

Before, a resource nested 990 levels deep gave "internal error (RecursionError)" (``json.dumps``
recurses once per level), and a ``Resource("...")`` inside an ``Object(...)`` of a ``.tres`` gave
"cannot represent a ExtResource in JSON", though the file reads.  The inputs are built from those
shapes, byte by byte (binary) or as text, not with our writers; the round trips write every
engine-made fixture back from its JSON, byte for byte.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, run_main

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.resources import ExtResource, Resource
from godot_formats.resources.jsondoc import dumps_resource, reference_json, resource_json, value_from_json, value_json
from godot_formats.views.jsonform import JSONFormatError, dumps_form, from_json, loads_form, to_json

RESOURCES = FIXTURES / "resources"
u32 = struct.Struct("<I").pack

#: The deepest nesting the resource readers accept (binary and text): 1024 containers.
READER_DEPTH = 1024


def _string(text: str) -> bytes:
    raw = text.encode() + b"\0"
    return u32(len(raw)) + raw


def deep_res(levels: int, *, dictionaries: bool = False, leaf: bytes = u32(3) + u32(7)) -> bytes:
    """A Godot 3 ``.res`` (format 3) whose main resource's ``data`` is ``levels`` nested Arrays (or
    Dictionaries, each ``{"k": ...}``) around ``leaf`` (the int 7), laid out as
    ``ResourceFormatSaverBinaryInstance::save`` writes one."""
    one = (u32(26) + u32(1) + u32(5) + _string("k")) if dictionaries else (u32(30) + u32(1))
    header = u32(0) + u32(0) + u32(3) + u32(2) + u32(3) + _string("Resource") + b"\0" * 8 + b"\0" * 56
    tables = u32(1) + _string("data") + u32(0) + u32(1) + _string("local://0")
    start = 4 + len(header) + len(tables) + 8
    body = _string("Resource") + u32(1) + u32(0) + one * levels + leaf
    return b"RSRC" + header + tables + struct.pack("<Q", start) + body + b"RSRC"


def deep_tres(levels: int, *, dictionaries: bool = False) -> bytes:
    inner = '{"k": ' * levels + "7" + "}" * levels if dictionaries else "[" * levels + "7" + "]" * levels
    return f'[gd_resource type="Resource" format=2]\n\n[resource]\ndata = {inner}\n'.encode()


def _depth(obj: Any) -> int:
    """How deep JSON containers nest in ``obj`` (without recursion)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node if isinstance(node, list) else node.values()))
    return deepest


def _unwrap(value: Any, levels: int, dictionaries: bool) -> Any:
    for _ in range(levels):
        value = value["k"] if dictionaries else value[0]
    return value


# -- any depth the readers accept -----------------------------------------------------------------


@pytest.mark.parametrize("dictionaries", [False, True], ids=["arrays", "dictionaries"])
@pytest.mark.parametrize("levels", [990, 1000, READER_DEPTH])
def test_dump_json_of_a_deep_res(tmp_path: Path, levels: int, dictionaries: bool) -> None:
    path = tmp_path / "deep.res"
    path.write_bytes(deep_res(levels, dictionaries=dictionaries))
    rf = gf.open_resource(path)  # the reader takes it
    for compact in ([], ["--compact"]):
        status, out, err = run_main("dump", "--json", *compact, str(path))
        assert status == 0, err
        doc = loads_form(out)
        data = doc["main"]["properties"]["data"]
        assert _depth(data) == levels * (2 if dictionaries else 1)  # a Dictionary is {"type", "args": [...]}
        value = value_from_json(data, rf)
        assert _unwrap(value, levels, dictionaries) == 7
        rf.main.properties["data"] = value
        assert rf.to_bytes() == path.read_bytes()  # what the JSON says is what was read


@pytest.mark.parametrize("dictionaries", [False, True], ids=["arrays", "dictionaries"])
def test_dump_json_of_a_deep_tres(tmp_path: Path, dictionaries: bool) -> None:
    path = tmp_path / "deep.tres"
    path.write_bytes(deep_tres(1000, dictionaries=dictionaries))
    status, out, err = run_main("dump", "--json", str(path))
    assert status == 0, err
    rf = gf.open_resource(path)
    value = value_from_json(loads_form(out)["main"]["properties"]["data"], rf)
    assert _unwrap(value, 1000, dictionaries) == 7


def test_a_reference_at_the_bottom_of_1000_levels(tmp_path: Path) -> None:
    """A reference to an external resource under 1000 Arrays: the hook reaches any depth."""
    path = tmp_path / "deep_ref.tres"
    path.write_text('[gd_resource type="Resource" load_steps=2 format=2]\n\n'
                    '[ext_resource path="res://icon.png" type="Texture" id=1]\n\n'
                    "[resource]\ndata = " + "[" * 1000 + "ExtResource( 1 )" + "]" * 1000 + "\n")
    rf = gf.open_resource(path)
    status, out, err = run_main("dump", "--json", str(path))
    assert status == 0, err
    data = loads_form(out)["main"]["properties"]["data"]
    assert _unwrap(data, 1000, False) == {"type": "ExtResource", "class": "Texture", "path": "res://icon.png",
                                          "id": 1}
    assert _unwrap(value_from_json(data, rf), 1000, False) is rf.external[0]


def test_json_dumps_recursed_where_dumps_form_does_not() -> None:
    """The shape that broke: the standard library's writer stops near 1000 levels, ours does not."""
    form = to_json(_unwrap_build(1000))
    with pytest.raises(RecursionError):
        json.dumps(form, indent=2)
    compact = dumps_form(form, None)  # compared as text: == on 1000 nested lists recurses too
    assert compact == "[" * 1000 + '"i:7"' + "]" * 1000
    assert dumps_form(loads_form(dumps_form(form)), None) == compact
    assert _depth(loads_form(compact)) == 1000


def _unwrap_build(levels: int) -> list[Any]:
    value: list[Any] = [7]
    for _ in range(levels - 1):
        value = [value]
    return value


# -- every value the readers return has a JSON form -----------------------------------------------

OBJECT_WITH_REFERENCES = """[gd_resource type="Resource" load_steps=3 format=2]

[ext_resource path="res://icon.png" type="Texture" id=1]

[sub_resource type="Resource" id=2]
hp = 3

[resource]
data = Object(Reference,"script":null,"tex":ExtResource( 1 ),"other":Resource( "res://x.tres" ),"sub":SubResource( 2 ))
keyed = { SubResource( 2 ): [ Object(Reference,"script":null,"inner":ExtResource( 1 )) ] }
"""


def test_references_inside_an_object(tmp_path: Path) -> None:
    path = tmp_path / "object_refs.tres"
    path.write_text(OBJECT_WITH_REFERENCES)
    rf = gf.open_resource(path)
    status, out, err = run_main("dump", "--json", str(path))
    assert status == 0, err
    doc = loads_form(out)
    assert doc == json.loads(out)  # shallow: the standard library reads it too
    data = doc["main"]["properties"]["data"]
    assert data == {"type": "Reference", "props": [
        "script", None,
        "tex", {"type": "ExtResource", "class": "Texture", "path": "res://icon.png", "id": 1},
        "other", {"type": "ExtResource", "class": "Resource", "path": "res://x.tres", "id": None},
        "sub", {"type": "SubResource", "id": 2, "class": "Resource"}]}
    value = value_from_json(data, rf)
    assert isinstance(value, t.Object) and value.class_name == "Reference"
    assert value.properties["tex"] is rf.external[0] and value.properties["sub"] is rf.resources[0]
    other = value.properties["other"]
    assert isinstance(other, ExtResource) and (other.type, other.path, other.id) == ("Resource", "res://x.tres", None)
    keyed = value_from_json(doc["main"]["properties"]["keyed"], rf)
    (key, items), = keyed.items()
    assert key is rf.resources[0] and items[0].properties["inner"] is rf.external[0]
    for value in rf.main.properties.values():  # each reads back to what the file holds
        back = value_from_json(value_json(value), rf)
        assert to_json(back, default=reference_json) == to_json(value, default=reference_json)
    assert rf.to_bytes(format="text") == gf.open_resource(path).to_bytes(format="text")


def test_an_inline_reference_keeps_its_uid() -> None:
    ref = ExtResource("Texture2D", "res://a.png", 42)
    assert reference_json(ref) == {"type": "ExtResource", "class": "Texture2D", "path": "res://a.png", "id": None,
                                   "uid": 42}
    rf = gf.ResourceFile(Resource("Resource", {"a": ref}))
    back = value_from_json(reference_json(ref), rf)
    assert (back.type, back.path, back.uid, back.id) == ("Texture2D", "res://a.png", 42, None)


@pytest.mark.parametrize("obj, message", [
    ({"type": "SubResource", "id": "nope", "class": "Resource"}, "not one of the file's"),
    ({"type": "ExtResource", "id": 9, "class": "Texture", "path": "res://a.png"}, "not one of the file's"),
    ({"type": "ExtResource", "id": None, "class": "Texture"}, "needs a \"path\" string"),
    ({"type": "ExtResource", "id": [1], "class": "Texture", "path": "res://a"}, "id is a string"),
    ({"type": "Stranger"}, "unknown type 'Stranger'"),
])
def test_a_reference_that_is_not_the_files_is_refused_by_path(obj: dict[str, Any], message: str) -> None:
    rf = gf.open_resource(RESOURCES / "godot4" / "save_c.res")
    with pytest.raises(JSONFormatError, match=message) as info:
        value_from_json(["i:1", {"type": "Dictionary", "args": ["s:k", obj]}], rf)
    assert info.value.path.startswith("$[1].args[1]")


def test_without_the_hooks_a_reference_is_still_an_error() -> None:
    with pytest.raises(gf.EncodeError, match="cannot represent a ExtResource"):
        to_json([ExtResource("Texture", "res://a.png")])
    with pytest.raises(JSONFormatError, match="unknown type 'SubResource'"):
        from_json({"type": "SubResource", "id": 1})


# -- round trips of every engine-made resource ------------------------------------------------------

FILES = sorted(p for p in RESOURCES.rglob("*") if p.suffix in (".res", ".tres"))


@pytest.mark.parametrize("packed_base64", [False, True], ids=["lists", "base64"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(RESOURCES)))
def test_every_fixture_is_written_back_from_its_json(path: Path, packed_base64: bool) -> None:
    rf = gf.open_resource(path)
    before = rf.to_bytes(allow_scripts=True)
    doc = loads_form(dumps_resource(rf, packed_base64=packed_base64))
    assert doc == resource_json(rf, packed_base64=packed_base64)
    assert [r["id"] for r in doc["resources"]] == [r.id for r in rf.resources]
    for res, entry in zip((*rf.resources, rf.main), (*doc["resources"], doc["main"])):
        assert entry["type"] == res.type and list(entry["properties"]) == list(res.properties)
        for name in res.properties:
            res.properties[name] = value_from_json(entry["properties"][name], rf)
    assert rf.to_bytes(allow_scripts=True) == before


def test_the_command_prints_the_document() -> None:
    path = RESOURCES / "godot3" / "all_c.res"
    status, out, err = run_main("dump", "--json", "--base64", str(path))
    assert status == 0, err
    assert loads_form(out) == resource_json(gf.open_resource(path), packed_base64=True)
