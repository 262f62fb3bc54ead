"""Class renames between Godot 3 and Godot 4: one table (godot_formats.core.renames), one rule, and
the saves converter and the resource converter both apply it, the same way.

The expected names come from the engines: the lines of Godot 4's source quoted below, the bytes
the engines wrote in fixtures/conversion/corpus.jsonl, and (marked ``engine``) the real Godot 3.2.3
and 4.6 reading what we converted.
"""

from __future__ import annotations

import re
import struct

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import given
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats import oracle
from godot_formats.core import renames
from godot_formats.core import types as t
from godot_formats.core.errors import ConversionError
from godot_formats.migration import CLASS_RULES, Note, convert_records, convert_value, convert_with_report
from godot_formats.resources.classes import GODOT3_TO_GODOT4, GODOT4_TO_GODOT3, REPLACED_BY_A_BASE
from godot_formats.resources.conversion import convert_resource
from godot_formats.resources.model import Resource, ResourceFile

CORPUS = {c["name"]: c for c in read_jsonl(FIXTURES / "conversion" / "corpus.jsonl")}
COMPAT = "the engine's compatibility table"


def _godot_string(text: str) -> bytes:
    """A String as marshalls.cpp writes it: u32 length, UTF-8, zero padding to 4 bytes."""
    raw = text.encode()
    return struct.pack("<I", len(raw)) + raw + b"\0" * (-len(raw) & 3)


def _with_class(engine_hex: str, name: str) -> bytes:
    """An engine-written full Object (header, class name, properties) with another class name."""
    blob = bytes.fromhex(engine_hex)
    (n,) = struct.unpack_from("<I", blob, 4)
    return blob[:4] + _godot_string(name) + blob[8 + n + (-n & 3):]


# The engine-made bytes of Object(Reference/RefCounted, "script": null), with objects: Godot 3.2.3's
# var2bytes(Reference.new(), true) and Godot 4.6's var_to_bytes_with_objects(RefCounted.new()).
REF3 = CORPUS["object_reference"]["godot3_hex_full_objects"]
REF4 = CORPUS["object_reference"]["godot4_hex_full_objects"]


def test_the_engines_bytes_are_the_ones_this_file_edits() -> None:
    assert _with_class(REF3, "Reference") == bytes.fromhex(REF3)
    assert _with_class(REF4, "RefCounted") == bytes.fromhex(REF4)


# --- the bug: a Spatial Object in a save kept its Godot 3 name ------------------------------------

def test_a_spatial_object_in_a_godot3_save_is_a_node3d_in_godot4_and_the_rename_is_told() -> None:
    notes: list[Note] = []
    out, losses = convert_with_report(_with_class(REF3, "Spatial"), "godot3", "godot4", allow_objects=True,
                                      notes=notes)
    assert losses == []  # a rename keeps the data: strict allows it
    assert out == _with_class(REF4, "Node3D")  # Godot 4's bytes for such an object, with its class name
    assert notes == [Note("", f"class Spatial renamed Node3D ({COMPAT})")]
    assert str(notes[0]) == f"<root>: class Spatial renamed Node3D ({COMPAT})"


def test_the_rename_is_told_at_the_objects_place_in_the_save() -> None:
    save = {"level": [gf.Object("Spatial", {"script": None}), gf.Object("Reference", {"script": None})]}
    notes: list[Note] = []
    new, losses = convert_value(save, "godot3", "godot4", notes=notes)
    assert losses == []
    assert [o.class_name for o in new["level"]] == ["Node3D", "RefCounted"]
    assert [str(n) for n in notes] == [
        f'["level"][0]: class Spatial renamed Node3D ({COMPAT})',
        "[\"level\"][1]: class Reference renamed RefCounted (the engine's 3-to-4 project converter)"]


def test_a_node3d_object_goes_back_to_spatial() -> None:
    notes: list[Note] = []
    out, losses = convert_with_report(_with_class(REF4, "Node3D"), "godot4", "godot3", allow_objects=True,
                                      notes=notes)
    assert losses == []
    assert out == _with_class(REF3, "Spatial")
    assert notes == [Note("", f"class Node3D renamed Spatial ({COMPAT}, read backwards)")]


def test_a_toolbutton_is_a_loss_strict_refuses_and_lossy_writes_the_engines_button() -> None:
    blob = _with_class(REF3, "ToolButton")
    with pytest.raises(ConversionError) as info:
        convert_with_report(blob, "godot3", "godot4", allow_objects=True)
    [loss] = info.value.losses
    assert (loss.path, loss.before, loss.after) == ("", "ToolButton", "Button")
    assert "Godot 4 has no ToolButton" in loss.reason and "near approximation" in loss.reason
    notes: list[Note] = []
    out, losses = convert_with_report(blob, "godot3", "godot4", allow_objects=True, policy="lossy", notes=notes)
    assert losses == [loss] and notes == []
    assert out == _with_class(REF4, "Button")


def test_a_class_several_godot3_classes_became_is_a_loss_read_backwards() -> None:
    # Godot 4: add_compatibility_class("PanoramaSky", "Sky") and ("ProceduralSky", "Sky").
    with pytest.raises(ConversionError) as info:
        convert_value(gf.Object("Sky", {}), "godot4", "godot3")
    [loss] = info.value.losses
    assert "PanoramaSky, ProceduralSky" in loss.reason and (loss.before, loss.after) == ("Sky", "PanoramaSky")
    assert convert_value(gf.Object("Sky", {}), "godot4", "godot3", policy="lossy")[0] == gf.Object("PanoramaSky", {})


def test_a_saves_records_tell_their_renames_with_the_records_path() -> None:
    notes: list[Note] = []
    values, losses = convert_records([1, gf.Object("Sprite", {})], gf.get_dialect("godot3"),
                                     gf.get_dialect("godot4"), lambda i: f"[record {i}]", {}, notes)
    assert losses == [] and values == [1, gf.Object("Sprite2D", {})]
    assert [str(n) for n in notes] == [f"[record 1]: class Sprite renamed Sprite2D ({COMPAT})"]


def test_the_class_of_an_object_with_property_rules_comes_from_the_table_too() -> None:
    assert all(rule.godot4 == GODOT3_TO_GODOT4.get(rule.name, rule.name) for rule in CLASS_RULES)
    assert "Reference" not in {rule.name for rule in CLASS_RULES}  # renamed by the table, not by a rule
    # an InputEventKey keeps its name and still has its properties renamed
    new, losses = convert_value(gf.Object("InputEventKey", {"scancode": 65}), "godot3", "godot4")
    assert new.class_name == "InputEventKey" and new.properties["keycode"] == 65 and losses == []


# --- the saves converter and the resource converter agree, row by row ------------------------------

def _by_saves(name: str, source: str, target: str) -> tuple[str, list[str], list[str]]:
    notes: list[Note] = []
    value, losses = convert_value(t.Object(name, {}), source, target, policy="lossy", notes=notes)
    return value.class_name, [n.text for n in notes], [loss.reason for loss in losses]


def _by_resources(name: str, source: str, target: str) -> tuple[str, list[str], list[str]]:
    major = int(source[-1])
    rf = ResourceFile(Resource(name, {}, "local://1"), engine=major, version=3 if major == 3 else 6)
    out, losses = convert_resource(rf, target, policy="lossy")
    renamed = [n.removeprefix("main: ") for n in out.notes if n.startswith("main: class ")]
    return out.main.type, renamed, [loss.reason for loss in losses]


FORWARD = [row.godot3 for row in renames.CLASS_RENAMES]
BACKWARD = sorted({row.godot4 for row in renames.CLASS_RENAMES})


@pytest.mark.parametrize("name", FORWARD)
def test_both_converters_give_a_godot3_class_the_same_godot4_name(name: str) -> None:
    saves = _by_saves(name, "godot3", "godot4")
    assert saves == _by_resources(name, "godot3", "godot4")
    [row] = [row for row in renames.CLASS_RENAMES if row.godot3 == name]
    assert saves[0] == row.godot4
    if row.lost is None:  # a rename: a note, no loss
        assert saves[1:] == ([f"class {name} renamed {row.godot4} ({row.label})"], []) and name in GODOT3_TO_GODOT4
    else:  # an approximation: a loss, no note
        assert saves[1:] == ([], [row.lost]) and REPLACED_BY_A_BASE[name] == row.godot4


@pytest.mark.parametrize("name", BACKWARD)
def test_both_converters_give_a_godot4_class_the_same_godot3_name(name: str) -> None:
    saves = _by_saves(name, "godot4", "godot3")
    assert saves == _by_resources(name, "godot4", "godot3")
    if name in renames.MERGED:  # several Godot 3 classes became this one: which it was is lost
        assert saves[0] == renames.MERGED[name][0] and saves[1] == [] and len(saves[2]) == 1
    elif name in GODOT4_TO_GODOT3:
        assert saves[0] == GODOT4_TO_GODOT3[name] and GODOT3_TO_GODOT4[saves[0]] == name and saves[2] == []
    else:  # only an approximation's target (Button, FontFile ...): not read back as what it approximates
        assert saves == (name, [], [])


@given(st.one_of(st.sampled_from(FORWARD + BACKWARD), st.text(max_size=30)), st.sampled_from(["godot3", "godot4"]))
def test_any_class_name_is_named_alike_by_both_converters(name: str, source: str) -> None:
    target = "godot4" if source == "godot3" else "godot3"
    assert _by_saves(name, source, target) == _by_resources(name, source, target)


def test_a_rename_goes_there_and_back() -> None:
    for old, new in GODOT3_TO_GODOT4.items():
        if new not in renames.MERGED:
            assert renames.class_change(new, 4, 3).after == old  # type: ignore[union-attr]
    assert not set(GODOT3_TO_GODOT4) & set(REPLACED_BY_A_BASE)


# --- the table is the engine's --------------------------------------------------------------------

#: Lines of Godot 4's scene/register_scene_types.cpp, register_scene_types(), inside
#: ``#ifndef DISABLE_DEPRECATED``, at godotengine/godot@3c1fe46a224f8341559e93a2129da0df0a39ef41
#: (renames.GODOT4_SOURCE), quoted under the block comment each sits in.
SCENE_TYPES_LINES = {
    "// Dropped in 4.0, near approximation.": """
\tClassDB::add_compatibility_class("AnimationTreePlayer", "AnimationTree");
\tClassDB::add_compatibility_class("DynamicFont", "FontFile");
\tClassDB::add_compatibility_class("OpenSimplexNoise", "FastNoiseLite");
\tClassDB::add_compatibility_class("ToolButton", "Button");
\tClassDB::add_compatibility_class("YSort", "Node2D");
\tClassDB::add_compatibility_class("Portal", "Node3D");
\tClassDB::add_compatibility_class("OccluderShapeSphere", "Resource");
""",
    "// Renamed in 4.0.": """
\tClassDB::add_compatibility_class("AnimatedSprite", "AnimatedSprite2D");
\tClassDB::add_compatibility_class("CubeMesh", "BoxMesh");
\tClassDB::add_compatibility_class("Light2D", "PointLight2D");
\tClassDB::add_compatibility_class("PanoramaSky", "Sky");
\tClassDB::add_compatibility_class("ProceduralSky", "Sky");
\tClassDB::add_compatibility_class("Spatial", "Node3D");
\tClassDB::add_compatibility_class("SpatialMaterial", "StandardMaterial3D");
\tClassDB::add_compatibility_class("StreamTexture", "CompressedTexture2D");
\tClassDB::add_compatibility_class("Viewport", "SubViewport");
\tClassDB::add_compatibility_class("Physics2DServer", "PhysicsServer2D");
\tClassDB::add_compatibility_class("KinematicBody", "CharacterBody3D");
\tClassDB::add_compatibility_class("RigidBody", "RigidBody3D");
""",
    "// VisualShader classes.": """
\tClassDB::add_compatibility_class("VisualShaderNodeScalarSwitch", "VisualShaderNodeSwitch");
\tClassDB::add_compatibility_class("VisualShaderNodeUniformRef", "VisualShaderNodeParameterRef");
""",
    "// Renamed during 4.0 alpha": """
\tClassDB::add_compatibility_class("AudioStreamSample", "AudioStreamWAV");
""",
}
#: Lines of the same block naming classes no Godot 3 engine has (4.0's development names): a Godot
#: 3 file never holds them, and reading a Godot 4 class back must never write them.
DEVELOPMENT_LINES = """
\tClassDB::add_compatibility_class("NavigationRegion", "NavigationRegion3D");
\tClassDB::add_compatibility_class("RigidDynamicBody3D", "RigidBody3D");
\tClassDB::add_compatibility_class("VisibilityNotifier3D", "VisibleOnScreenNotifier3D");
"""
_CALL = re.compile(r'ClassDB::add_compatibility_class\("(\w+)", "(\w+)"\);')


@pytest.mark.parametrize("block", SCENE_TYPES_LINES)
def test_the_table_holds_the_engines_compatibility_classes(block: str) -> None:
    rows = {row.godot3: row for row in renames.CLASS_RENAMES}
    pairs = _CALL.findall(SCENE_TYPES_LINES[block])
    assert pairs
    for old, new in pairs:
        row = rows[old]
        assert row.godot4 == new and block in row.source and renames.GODOT4_SOURCE in row.source
        assert (row.lost is not None) == (block == "// Dropped in 4.0, near approximation.")


def test_names_only_godot_4_0_development_had_are_never_written_into_godot3() -> None:
    for old, new in _CALL.findall(DEVELOPMENT_LINES):
        assert old not in GODOT3_TO_GODOT4 and GODOT4_TO_GODOT3[new] != old


def test_reference_is_renamed_as_the_engines_project_converter_says() -> None:
    # Godot 4's editor/renames_map_3_to_4.cpp, RenamesMap3To4::class_renames: { "Reference", "RefCounted" },
    # and the engines agree (corpus: Reference.new() in 3.2.3 and RefCounted.new() in 4.6, same bytes else).
    assert GODOT3_TO_GODOT4["Reference"] == "RefCounted"
    assert CORPUS["object_reference"]["godot3_text"].startswith("Object(Reference,")
    assert CORPUS["object_reference"]["godot4_text"].startswith("Object(RefCounted,")


def test_the_docs_show_the_table_and_real_output() -> None:
    docs = (FIXTURES.parent / "docs" / "convert.md").read_text(encoding="utf-8")
    assert f"... {len(GODOT3_TO_GODOT4)} of them)" in docs and f"... {len(REPLACED_BY_A_BASE)})" in docs
    notes: list[Note] = []
    value = convert_value({"hero": gf.Object("Spatial", {"script": None})}, "godot3", "godot4", notes=notes)
    assert f"{value!r}\n>>> [str(n) for n in notes]\n{[str(n) for n in notes]!r}\n" in docs


# --- the engines judge ----------------------------------------------------------------------------

G3_MISSING, G4_MISSING = oracle.godot3_available(), oracle.godot4_available()
needs_engines = pytest.mark.skipif(G3_MISSING is not None or G4_MISSING is not None,
                                   reason=str(G3_MISSING or G4_MISSING))


def _class_of(engine_text: str) -> str:
    found = re.match(r"Object\((\w+),", engine_text)
    assert found, engine_text
    return found.group(1)


@pytest.mark.engine
@pytest.mark.slow
@needs_engines
def test_godot4_loads_our_godot3_objects_under_their_new_classes() -> None:
    made = oracle.godot3_encode([{"name": n, "body": [f"return {n}.new()"]} for n in ("Spatial", "ToolButton",
                                                                                     "Reference")])
    cases = []
    for record in made:
        out, _ = convert_with_report(bytes.fromhex(record["hex_full_objects"]), "godot3", "godot4",
                                     allow_objects=True, policy="lossy")
        cases.append({"name": record["name"], "hex": out.hex(), "allow_objects": True})
    read = oracle.godot4_decode(cases)
    assert all(r["ok"] for r in read), read
    assert [_class_of(r["var_to_str"]) for r in read] == ["Node3D", "Button", "RefCounted"]


@pytest.mark.engine
@pytest.mark.slow
@needs_engines
def test_godot3_loads_our_godot4_objects_under_their_old_classes() -> None:
    made = oracle.godot4_encode([{"name": n, "body": [f"return {n}.new()"]} for n in ("Node3D", "Sky", "RefCounted")])
    cases = []
    for record in made:
        out, _ = convert_with_report(bytes.fromhex(record.get("hex_full_objects") or record["hex"]), "godot4",
                                     "godot3", allow_objects=True, policy="lossy")
        cases.append({"name": record["name"], "hex": out.hex(), "allow_objects": True})
    read = oracle.godot3_decode(cases)
    assert all(r["ok"] for r in read), read
    assert [_class_of(r["var2str"]) for r in read] == ["Spatial", "PanoramaSky", "Reference"]
