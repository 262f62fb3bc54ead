"""Resource files from one engine version to another (godot_formats.resources.conversion).

The values go through the library's Variant conversion, which tests/saves/test_conversion.py checks
against both engines; here: that every resource and every property is converted, references stay
the same objects, class and property renames are applied and told, losses are listed in full,
and the result is a file of the target's format.  (Godot 4.6 loading the converted files is
tests/engine/test_conversions_in_engines.py.)
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES

import godot_formats as gf
from godot_formats.core.errors import ConversionError
from godot_formats.resources import read_binary
from godot_formats.resources.classes import GODOT3_TO_GODOT4
from godot_formats.resources.model import ExtResource, Resource, ResourceFile, holds_reference
from godot_formats.views.text import to_text

RESOURCES = FIXTURES / "resources"


def test_a_godot3_save_becomes_a_godot4_file_with_the_same_values() -> None:
    rf = gf.open_resource(RESOURCES / "godot3" / "all.res")
    out, losses = rf.convert("godot4")
    assert losses == [] and out.engine == 4
    again = read_binary(out.to_bytes())
    assert again.version == 6 and again.header["flags"] & 3 == 3
    old = [*rf.resources, rf.main]
    new = [*again.resources, again.main]
    assert [r.type for r in old] == [r.type for r in new]
    for a, b in zip(old, new):
        meta = a.properties.get("__meta__", {})
        assert list(b.properties) == [k for k in a.properties if k != "__meta__"] + [f"metadata/{k}" for k in meta]
        for key, value in meta.items():  # Godot 4 keeps metadata as one property per key
            assert b.properties[f"metadata/{key}"] == value
        for name, value in a.properties.items():
            if name == "__meta__":
                continue
            if holds_reference(value):
                continue  # compared below
            converted, _ = gf.convert_value(value, "godot3", "godot4")
            assert to_text(b.properties[name], "godot4") == to_text(converted, "godot4"), name
    # shared sub-resources are still one object
    assert again.main.properties["shared_a"] is again.main.properties["shared_b"]
    assert again.main.properties["sub_list"][2] is again.main.properties["shared_a"]


def test_strict_lists_every_loss_of_every_resource_and_lossy_writes() -> None:
    rf = gf.open_resource(RESOURCES / "godot4" / "all.res")
    with pytest.raises(ConversionError) as info:
        rf.convert("godot3")
    losses = info.value.losses
    assert len(losses) >= 8
    assert any(loss.path.startswith("main:vector2i_v") for loss in losses)
    assert any(loss.path.startswith("main:string_name_v") for loss in losses)
    out, lossy = rf.convert("godot3", policy="lossy")
    assert [str(x) for x in lossy] == [str(x) for x in losses]
    again = read_binary(out.to_bytes())
    assert again.version == 3 and again.main.properties["vector2i_v"] == gf.Vector2(-3, 2.0 ** 31)  # float32
    with pytest.raises(ConversionError):
        rf.to_bytes(dialect="godot3")


def test_renamed_classes_take_the_engines_new_names_and_are_told() -> None:
    material = Resource("SpatialMaterial", {"albedo_color": gf.Color(1, 0, 0, 1)}, "local://1")
    gradient = ExtResource("GradientTexture", "res://g.tres", None, 0)
    main = Resource("Resource", {"mat": material, "tex": gradient, "hp": 3}, "local://2")
    rf = ResourceFile(main, [material], [gradient], engine=3, version=3)
    out, losses = rf.convert("godot4", property_renames={"hp": "health", "SpatialMaterial.albedo_color": "albedo"})
    assert losses == []
    assert out.resources[0].type == "StandardMaterial3D" == GODOT3_TO_GODOT4["SpatialMaterial"]
    assert out.external[0].type == "GradientTexture1D"
    assert list(out.main.properties) == ["mat", "tex", "health"] and out.main.properties["health"] == 3
    assert out.resources[0].properties == {"albedo": gf.Color(1, 0, 0, 1)}
    assert out.main.properties["mat"] is out.resources[0] and out.main.properties["tex"] is out.external[0]
    assert any("SpatialMaterial renamed StandardMaterial3D" in note for note in out.notes)
    assert any("hp renamed health" in note for note in out.notes)
    back, _ = out.convert("godot3")
    assert back.resources[0].type == "SpatialMaterial"


def test_a_class_godot4_loads_as_a_base_is_a_loss() -> None:
    rf = ResourceFile(Resource("ToolButton", {}, "local://1"), [], [], engine=3, version=3)
    with pytest.raises(ConversionError, match="ToolButton"):
        rf.convert("godot4")


def test_references_inside_containers_survive_and_leaves_are_converted() -> None:
    sub = Resource("Resource", {}, "local://1")
    main = Resource("Resource", {"mixed": [sub, gf.Vector2i(1, 2), {"k": sub, "v": gf.StringName("s")}]},
                    "local://2")
    rf = ResourceFile(main, [sub], [], engine=4, version=6)
    out, losses = rf.convert("godot3", policy="lossy")
    mixed = out.main.properties["mixed"]
    assert mixed[0] is out.resources[0] and mixed[2]["k"] is out.resources[0]
    assert mixed[1] == gf.Vector2(1, 2) and mixed[2]["v"] == "s" and type(mixed[2]["v"]) is str
    assert sorted(loss.path for loss in losses) == ["main:mixed[1]", "main:mixed[2][1].value"]
    read_binary(out.to_bytes())  # Godot 3 binary


def test_metadata_changes_form_both_ways() -> None:
    main = Resource("Resource", {"script": None, "__meta__": {"note": "hi", 7: 1}, "hp": 3}, "local://1")
    rf = ResourceFile(main, [], [], engine=3, version=3)
    with pytest.raises(ConversionError, match="metadata keys are names"):
        rf.convert("godot4")
    four, losses = rf.convert("godot4", policy="lossy")
    assert list(four.main.properties.items()) == [("script", None), ("hp", 3), ("metadata/note", "hi")]
    assert len(losses) == 1
    three, losses = four.convert("godot3")
    assert losses == [] and list(three.main.properties.items()) == [("script", None), ("__meta__", {"note": "hi"}),
                                                                     ("hp", 3)]


def test_converting_does_not_change_the_original() -> None:
    rf = gf.open_resource(RESOURCES / "godot3" / "all.res")
    before = rf.to_bytes()
    rf.convert("godot4")
    assert rf.to_bytes() == before == (RESOURCES / "godot3" / "all.res").read_bytes()
