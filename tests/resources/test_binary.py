"""Binary resource files (``.res``: RSRC, and RSCC compressed), against files the engines wrote.

Expected values come from the engines: each ``.res`` fixture was saved by Godot 3.2.3 or 4.6
beside a ``.tres`` of the same resource (fixtures/resources/README.md), whose property lines are
the engine's own ``var2str``/``var_to_str``; so every property read from the binary file must
print, with our text writer, exactly as the engine printed it.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.core.errors import DecodeError, EncodeError, GodotFormatsError
from godot_formats.resources.binary import read_binary, write_binary
from godot_formats.resources.model import ExtResource, Resource, ResourceFile
from godot_formats.resources.opening import open_resource, scan_resource
from godot_formats.views.text import to_text

RESOURCES = FIXTURES / "resources"
BINARY = sorted(RESOURCES.glob("godot*/**/*.res"))
#: Each .res beside the engine's .tres of the same resource.
TWINS = [(RESOURCES / "godot3" / n, RESOURCES / "godot3" / "save.tres", "godot3")
         for n in ("save.res", "save_c.res", "save_be.res")] + \
        [(RESOURCES / "godot4" / n, RESOURCES / "godot4" / "save.tres", "godot4") for n in ("save.res", "save_c.res")]


def _tres_sections(path: Path) -> list[dict[str, str]]:
    """The property lines of each section of an engine-made .tres, as the engine printed them."""
    sections: list[dict[str, str]] = []
    key = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            if line.startswith(("[sub_resource", "[resource")):
                sections.append({})
            key = None
            continue
        m = re.match(r"^([\w/]+) = (.*)$", line)
        if m and sections:
            key = m.group(1)
            sections[-1][key] = m.group(2)
        elif key is not None and sections:
            sections[-1][key] += "\n" + line
    return [{k: v.rstrip("\n") for k, v in section.items()} for section in sections]


def test_every_fixture_is_read() -> None:
    assert len(BINARY) >= 6
    for path in BINARY:
        rf = read_binary(path.read_bytes())
        assert rf.format == "binary" and rf.main.type


@pytest.mark.parametrize("path", BINARY, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_unchanged_file_is_written_back_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    assert write_binary(read_binary(data)) == data
    assert open_resource(path).to_bytes() == data


@pytest.mark.parametrize("res, tres, dialect", TWINS, ids=lambda x: getattr(x, "name", x))
def test_every_property_prints_as_the_engine_printed_it(res: Path, tres: Path, dialect: str) -> None:
    rf = read_binary(res.read_bytes())
    sections = _tres_sections(tres)
    ours = [*rf.resources, rf.main]
    assert len(ours) == len(sections)
    for resource, engine in zip(ours, sections):
        plain = {k: v for k, v in engine.items() if not v.startswith(("ExtResource", "SubResource"))}
        for name, text in plain.items():
            typed = re.fullmatch(r"Array\[\w+\]\((.*)\)", text, re.DOTALL)
            if typed:  # a binary file stores Arrays untyped: the engine types them from the script on load
                text = typed.group(1)
            assert to_text(resource.properties[name], dialect) == text, name
        # the references point at the right objects
        for name, text in engine.items():
            value = resource.properties[name]
            if text.startswith("ExtResource"):
                assert isinstance(value, ExtResource) and value in rf.external, name
            elif text.startswith("SubResource"):
                assert isinstance(value, Resource) and value in rf.resources, name


def test_the_sub_resource_is_one_object_and_the_script_a_reference() -> None:
    rf = read_binary((RESOURCES / "godot4" / "save.res").read_bytes())
    inner = rf.main.properties["inner"]
    assert inner is rf.resources[0] and inner.properties["note"] == "hello"
    assert rf.main.script.path == "res://save_data.gd" and rf.main.script.type == "Script"
    assert inner.script.path == "res://inner.gd"
    assert rf.header["script_class"] == "SaveData" and rf.version == 6 and rf.engine == 4
    assert rf.header["godot_version"] == (4, 6)
    assert [ext.uid for ext in rf.external] == [None, None]  # the files hold -1: ResourceUID::INVALID_ID


def test_big_endian_values_are_the_written_ones_and_the_engine_bug_is_noted() -> None:
    little = read_binary((RESOURCES / "godot3" / "save.res").read_bytes())
    big = read_binary((RESOURCES / "godot3" / "save_be.res").read_bytes())
    assert big.byteorder == "big" and little.byteorder == "little"
    assert big.main.properties["pool"] == gf.PackedInt32Array([1, 2, 3])
    assert {k: to_text(v, "godot3") for k, v in big.main.properties.items() if not isinstance(v, (Resource,
            ExtResource))} == {k: to_text(v, "godot3") for k, v in little.main.properties.items()
                               if not isinstance(v, (Resource, ExtResource))}
    assert any("byte-swapped" in note for note in big.notes) and not little.notes


def test_a_compressed_file_is_read_through_its_layer() -> None:
    rf = read_binary((RESOURCES / "godot4" / "save_c.res").read_bytes())
    assert rf.compression == "Zstd"
    assert rf.main.properties["v4"] == gf.Vector4(1, 2, 3, 4)


def test_an_edit_is_written_and_read_back_in_every_form() -> None:
    for name in ("save.res", "save_c.res"):
        rf = open_resource(RESOURCES / "godot4" / name)
        rf.main.properties["level"] = 5_000_000_000
        rf.main.properties["gold"] = 0.1
        rf.resources[0].properties["note"] = "changed"
        again = read_binary(rf.to_bytes())
        assert again.main.properties["level"] == 5_000_000_000 and again.main.properties["gold"] == 0.1
        assert again.main.properties["inner"].properties["note"] == "changed"
        assert again.compression == rf.compression


def test_a_godot3_file_is_written_in_godot4s_binary_format_and_back() -> None:
    rf = open_resource(RESOURCES / "godot3" / "save.res")
    six = read_binary(rf.to_bytes(version=6))
    assert six.version == 6 and six.header["flags"] & 3 == 3
    assert six.main.properties["inner"] is six.resources[0]
    assert six.main.properties["stats"] == {"hp": 10, "big": 5000000000}
    three = read_binary(six.to_bytes(version=3))
    assert write_binary(three) == rf.to_bytes() or three.main.properties == three.main.properties
    assert to_text(three.main.properties["tr"], "godot3") == to_text(rf.main.properties["tr"], "godot3")


def test_shared_and_cyclic_sub_resources_stay_shared_without_recursion() -> None:
    a, b = Resource("Resource", {}, "local://1"), Resource("Resource", {}, "local://2")
    a.properties["other"] = b
    b.properties["other"] = a
    main = Resource("Resource", {"x": a, "y": a, "list": [a, b, [a]]}, "local://3")
    rf = ResourceFile(main, [a, b], [], engine=3, version=3)
    again = read_binary(write_binary(rf))
    x = again.main.properties["x"]
    assert x is again.main.properties["y"] is again.main.properties["list"][0] is again.main.properties["list"][2][0]
    assert x.properties["other"].properties["other"] is x


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    value: Any = 1
    for _ in range(5000):
        value = [value]
    rf = ResourceFile(Resource("Resource", {"deep": value}), [], [], engine=3, version=3)
    with pytest.raises(EncodeError, match="deeper"):
        write_binary(rf)
    # the same shape built as bytes: Arrays of one element, 5000 deep
    good = write_binary(ResourceFile(Resource("Resource", {"deep": [1]}), [], [], engine=3, version=3))
    body = struct.pack("<II", 30, 1) * 5000
    nested = good.replace(struct.pack("<III", 30, 1, 3), body + struct.pack("<I", 3), 1)
    with pytest.raises(DecodeError):
        read_binary(nested)


def test_the_reader_and_the_writer_take_the_same_depth() -> None:
    from godot_formats.resources.binary import MAX_DEPTH

    def nested(depth: int) -> Any:
        value: Any = []
        for _ in range(depth - 1):
            value = [value]
        return value

    deepest = ResourceFile(Resource("Resource", {"deep": nested(MAX_DEPTH)}), [], [], engine=3, version=3)
    data = write_binary(deepest)
    assert write_binary(read_binary(data)) == data
    too_deep = data.replace(struct.pack("<II", 30, 1), struct.pack("<II", 30, 1) * 2, 1)
    too_deep = too_deep.replace(struct.pack("<II", 30, 0), struct.pack("<II", 30, 1) + struct.pack("<II", 30, 0), 1)
    with pytest.raises(DecodeError, match="deeper than"):
        read_binary(too_deep)
    with pytest.raises(EncodeError, match="deeper than"):
        write_binary(ResourceFile(Resource("Resource", {"deep": nested(MAX_DEPTH + 1)}), [], [], engine=3, version=3))


def _all_errors_are_ours(data: bytes) -> None:
    try:
        rf = read_binary(data)
    except DecodeError:
        return
    write_binary(rf)  # what was read can be written


@pytest.mark.slow
@pytest.mark.parametrize("path", BINARY[:3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_truncation_is_a_decode_error(path: Path) -> None:
    data = path.read_bytes()
    for n in range(len(data)):
        with pytest.raises(DecodeError):
            read_binary(data[:n])


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(BINARY), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8))
def test_damaged_files_raise_only_our_errors(path: Path, edits: list[tuple[int, int]]) -> None:
    data = bytearray(path.read_bytes())
    for at, byte in edits:
        data[at % len(data)] = byte
    _all_errors_are_ours(bytes(data))


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(BINARY), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
       st.integers(0, 4000))
def test_explain_lists_any_damaged_file_and_names_the_damage(path: Path, edits: list[tuple[int, int]],
                                                             cut: int) -> None:
    """explain reads with the reader itself: it lists what it could read, in file order, and
    either reads the file whole or names an error; nothing else escapes."""
    from godot_formats.resources.explain import explain_binary
    from godot_formats.views.explain import format_lines

    data = bytearray(path.read_bytes()[:cut or None])
    for at, byte in edits:
        if data:
            data[at % len(data)] = byte
    fields, plain, error = explain_binary(bytes(data))
    lines = list(format_lines(fields, plain))
    offsets = [f.offset for f in fields]
    assert offsets == sorted(offsets) and len(lines) == len(fields) + 1
    try:
        read_binary(bytes(data))
    except DecodeError:
        assert error is not None
    else:
        assert error is None


def test_a_huge_count_allocates_nothing() -> None:
    rf = ResourceFile(Resource("Resource", {"a": gf.PackedInt32Array([1])}), [], [], engine=3, version=3)
    data = write_binary(rf)
    at = data.index(struct.pack("<III", 32, 1, 1))
    bad = data[:at + 4] + struct.pack("<I", 0x7FFFFFFF) + data[at + 8:]
    with pytest.raises(DecodeError, match="needs at least"):
        read_binary(bad)


def test_scripts_are_written_only_when_asked_and_scanned() -> None:
    script = Resource("GDScript", {"script/source": "extends Resource\nfunc _init():\n\tOS.shell_open('x')\n"},
                      "local://1")
    holder = Resource("Resource", {"script": script, "hp": 3}, "local://2")
    main = Resource("Resource", {"nested": holder}, "local://3")
    rf = ResourceFile(main, [script, holder], [], engine=3, version=3)
    with pytest.raises(EncodeError, match="allow_scripts"):
        rf.to_bytes(format="binary")
    with pytest.raises(EncodeError, match="allow_scripts"):
        rf.to_bytes(format="text")
    assert rf.to_bytes(format="text", allow_scripts=True).startswith(b"[gd_resource")
    for compressed in (False, True):
        data = rf.to_bytes(allow_scripts=True, compressed=compressed)
        found = scan_resource(data)
        assert [f.kind for f in found] == ["embedded-script"] and "local://1" in found[0].where
        assert read_binary(data).resources[0].properties["script/source"].startswith("extends")


@pytest.mark.parametrize("path, why", [
    ("user://evil.gd", "not inside res://"), ("/tmp/evil.gd", "not inside res://"),
    ("res://../evil.gd", "'..'"), ("evil.gd", "relative"),
])
def test_scripts_outside_the_project_are_found(path: str, why: str) -> None:
    ext = ExtResource("Script", path, None, 0)
    rf = ResourceFile(Resource("Resource", {"script": ext}, "local://1"), [], [ext], engine=3, version=3)
    found = scan_resource(write_binary(rf))
    assert [f.kind for f in found] == ["script-outside-project"] and why in found[0].message


def test_scenes_are_flagged_and_clean_saves_are_not() -> None:
    scene = ExtResource("PackedScene", "res://enemy.tscn", None, 0)
    rf = ResourceFile(Resource("Resource", {"spawn": scene}, "local://1"), [], [scene], engine=3, version=3)
    assert [f.kind for f in scan_resource(write_binary(rf))] == ["code-class"]
    for path in BINARY:
        assert scan_resource(path) == [], path


# --- the engines as judges: every stored property, as each engine printed it after a reload ----

ENGINE_JSON = sorted(p for p in RESOURCES.glob("godot*/*.res") if p.with_name(p.name + ".json").exists())


def _by_chain(rf: ResourceFile) -> dict[str, Resource]:
    """The file's resources by the property chain the engine's walk.gd names them with."""
    found = {"main": rf.main}
    stack = [("main", rf.main)]
    while stack:
        chain, res = stack.pop()
        for name, value in res.properties.items():
            items = [(f"{chain}.{name}", value)] if isinstance(value, Resource) else [
                (f"{chain}.{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, Resource)
            ] if isinstance(value, list) else []
            for key, sub in items:
                if key not in found:
                    found[key] = sub
                    stack.append((key, sub))
    return found


def _untyped(text: str) -> str:
    """The engine's text of a typed container without its type: a binary file stores Arrays and
    Dictionaries untyped, and the engine types them from the script's property on load."""
    typed = re.fullmatch(r"(?:Array\[[^\]]*\]|Dictionary\[[^\]]*\])\((.*)\)", text, re.DOTALL)
    return typed.group(1) if typed else text


@pytest.mark.parametrize("path", ENGINE_JSON, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_stored_property_is_what_the_engine_loaded(path: Path) -> None:
    """Compared with the engine's ``var2str``/``var_to_str`` of each property after it reloaded the
    file.  Two documented differences: a big-endian file is compared with its little-endian twin's
    reload (the engines misread their own big-endian packed arrays: the next test), and a RID, whose
    stored u32 the engine reads back as an int (3.x) or drops (4.x), keeps its id here."""
    import json

    rf = read_binary(path.read_bytes())
    judge = path.with_name(path.name.replace("_be.res", ".res") + ".json")
    engine = json.loads(judge.read_text(encoding="utf-8"))["resources"]
    dialect = "godot3" if rf.engine == 3 else "godot4"
    ours = _by_chain(rf)
    compared = 0
    for chain, info in engine.items():
        res = ours[chain]
        assert res.type == info["class"] or info["class"] in ("GDScript",), chain
        for name, text in info["properties"].items():
            if name not in res.properties:
                continue  # a property the engine holds but did not store (a class default)
            value = res.properties[name]
            if isinstance(text, dict):  # {"ref": chain}, {"ext": path}, or {"array": [those]}
                refs = text["array"] if "array" in text else [text]
                values = value if "array" in text else [value]
                assert len(values) == len(refs), (chain, name)
                for v, ref in zip(values, refs):
                    path_ = ref.get("ext") or (ref["ref"] if "://" in ref["ref"] else None)  # walk.gd names a
                    if path_ is not None:  # repeated external reference by its path
                        assert isinstance(v, ExtResource) and v.path == path_, (chain, name)
                    else:
                        assert v is ours[ref["ref"]], (chain, name)
                continue
            if isinstance(value, gf.RID):
                assert text in ("RID()", str(value.id)), (chain, name)  # see the docstring
                continue
            assert to_text(value, dialect) == _untyped(text), (chain, name)
            compared += 1
    assert compared >= 1


@pytest.mark.parametrize("path", sorted(RESOURCES.glob("godot*/all_be.res")), ids=lambda p: p.parent.name)
def test_the_engines_misread_big_endian_packed_arrays_as_byte_swapped(path: Path) -> None:
    """What the engine printed after reloading its own big-endian file is our value with each
    element's bytes swapped: the engine's bug, which our note names, and not ours."""
    import json

    rf = read_binary(path.read_bytes())
    engine = json.loads(path.with_name(path.name + ".json").read_text(encoding="utf-8"))["resources"]["main"]
    dialect = "godot3" if rf.engine == 3 else "godot4"
    checked = 0
    for name, value in rf.main.properties.items():
        if isinstance(value, gf.PackedArray) and len(value.data):
            swapped = type(value)(typecode=value.data.typecode)
            raw = array_bytes = value.data.tobytes()
            size = value.data.itemsize
            swapped.data.frombytes(b"".join(raw[i:i + size][::-1] for i in range(0, len(array_bytes), size)))
            assert to_text(swapped, dialect) == _untyped(engine["properties"][name]), name
            checked += 1
    assert checked >= 4 and any("byte-swapped" in note for note in rf.notes)


HOSTILE = sorted((RESOURCES / "hostile").glob("godot*/*.res"))


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_scanner_agrees_with_the_engine_made_verdicts(path: Path) -> None:
    import json

    expected = json.loads((path.parent / "expected.json").read_text(encoding="utf-8"))["files"][path.name]
    found = scan_resource(path)
    assert bool(found) == (expected["verdict"] == "hostile"), (found, expected)


FUZZ_FINDINGS = sorted((FIXTURES.parent / "fuzz" / "crashes_resources").glob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("path", FUZZ_FINDINGS, ids=lambda p: p.name.rsplit("-", 1)[0])
def test_what_the_fuzzer_found_stays_fixed(path: Path) -> None:
    """fuzz/fuzz_resources.py's findings: each input is read or refused with our error, in linear
    time (overlapping resources are refused, a decompression bomb is bounded), and what is read
    is written back idempotently (ids that are not decimal, a Godot 4 file without named ids)."""
    import resource

    refused = {"overlapping-resources-quadratic": "runs into the next one", "rscc-write-memory": "over max_size"}
    kind = path.name.rsplit("-", 1)[0]
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (min(1 << 30, hard) if hard > 0 else 1 << 30, hard))
    try:
        if kind in refused:
            with pytest.raises(DecodeError, match=refused[kind]):
                open_resource(path.read_bytes())
            return
        rf = open_resource(path.read_bytes())
        from godot_formats.resources import scan
        scan(rf)
        data = rf.to_bytes(allow_scripts=True)
        assert open_resource(data).to_bytes(allow_scripts=True) == data
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _godot2_file(props: list[tuple[str, bytes]]) -> bytes:
    """A format 1 (Godot 2.1) ``.res`` laid out as ``ResourceFormatSaverBinaryInstance::save`` of
    2.1 writes it (header, 14 reserved words, string table, tables, one resource, RSRC)."""
    import struct

    def u32(n: int) -> bytes:
        return struct.pack("<I", n)

    def string(s: str) -> bytes:
        raw = s.encode() + b"\0"
        return u32(len(raw)) + raw

    head = b"RSRC" + u32(0) + u32(0) + u32(2) + u32(1) + u32(1) + string("Resource") + struct.pack("<Q", 0)
    head += u32(0) * 14
    head += u32(len(props)) + b"".join(string(name) for name, _ in props)
    head += u32(0)  # no external resources
    path = string("local://1")
    offset = len(head) + 4 + len(path) + 8
    head += u32(1) + path + struct.pack("<Q", offset)
    body = string("Resource") + u32(len(props)) + b"".join(u32(i) + v for i, (_, v) in enumerate(props))
    return head + body + b"RSRC"


def test_godot2_image_and_input_event_are_read_as_its_loader_reads_them() -> None:
    """Godot 2.1's ``parse_variant``: VARIANT_IMAGE (21) is an encoding word, then for raw pixels
    width, height, mipmaps, format, the data and its padding to 4; an empty image loads as null.
    VARIANT_INPUT_EVENT (25) is its type word (the saver wrote 0 only)."""
    import struct

    def u32(*ns: int) -> bytes:
        return b"".join(struct.pack("<I", n) for n in ns)

    raw = u32(21, 1, 2, 1, 0, 3, 6) + b"\x01\x02\x03\x04\x05\x06" + b"\0\0"
    data = _godot2_file([("img", raw), ("ev", u32(25, 0)), ("none", u32(21, 0)), ("after", u32(3, 7))])
    rf = open_resource(data)
    assert (rf.engine, rf.version) == (2, 1)
    img = rf.main.properties["img"]
    assert isinstance(img, t.Image) and (img.width, img.height, img.mipmaps, img.format) == (2, 1, 0, 3)
    assert img.data == b"\x01\x02\x03\x04\x05\x06"
    assert rf.main.properties["ev"] == t.InputEvent(type=0)
    assert rf.main.properties["none"] is None and rf.main.properties["after"] == 7
    with pytest.raises(EncodeError, match="img: Image cannot be stored in a binary resource file"):
        rf.to_bytes(format="binary", version=3)
    png = _godot2_file([("img", u32(21, 2, 4) + b"\x89PNG")])
    with pytest.raises(DecodeError, match=r"img: a Godot 2 Image stored as PNG \(encoding 2\) is not read"):
        open_resource(png)
    for cut in range(len(data)):
        with pytest.raises(GodotFormatsError):
            open_resource(data[:cut])
