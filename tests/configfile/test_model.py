"""The ConfigFile document (issue 41): read as ``ConfigFile::_parse`` reads (engine source:
``core/variant/variant_parser.cpp`` ``parse_tag_assign_eof``, ``core/io/config_file.cpp``), written back
byte for byte, edited line by line, and the engine-made encrypted ConfigFiles of fixtures/containers."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import given
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.configfile import ConfigFile, encode_to_text, engine_view, parse, read_config
from godot_formats.configfile.writer import lost_name
from godot_formats.core.types import Object, Vector2

PASSWORD = "hunter2"
ENCRYPTED = [case for engine in ("godot3", "godot4")
             for case in read_jsonl(FIXTURES / "containers" / f"{engine}_containers.jsonl")
             if case.get("payload") == "configfile_text"]


def _doc(text: str, **options: Any) -> ConfigFile:
    return read_config(text.encode("utf-8"), **options)


@pytest.mark.parametrize("case", ENCRYPTED, ids=lambda c: c["name"])
def test_an_engine_encrypted_configfile_opens_and_writes_back_byte_for_byte(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["file_hex"])
    doc = gf.open(data, password=PASSWORD)
    assert isinstance(doc, ConfigFile) and isinstance(doc, gf.Document) and doc.kind == "configfile"
    assert doc.dialect.major == int(case["engine"][6])
    assert doc.layers["encryption"] == f"godot{doc.dialect.major}"
    assert doc.to_bytes() == data
    assert gf.to_text(doc.get_value("player", "pos"), doc.dialect) == case["readback"][0]  # the engine's get_value


@pytest.mark.parametrize("case", ENCRYPTED, ids=lambda c: c["name"])
def test_an_edited_encrypted_configfile_reads_back_with_its_password(case: dict[str, Any]) -> None:
    doc = gf.open(bytes.fromhex(case["file_hex"]), password=PASSWORD)
    doc.set_value("player", "gold", 99)
    again = gf.open(doc.to_bytes(), password=PASSWORD)
    assert again.get_value("player", "gold") == 99 and again.get_value("player", "name") == "Ann"
    assert again.layers["encryption"] == doc.layers["encryption"]


def test_unchanged_text_is_written_back_as_it_was() -> None:
    text = ("\ufeff; settings\r\n[display]\r\n\r\nwidth = 800 ; a comment\r\n  height=600\r\n"
            "[ audio ]\r\nvolume=0.5\r\n\"a key\"=Vector2( 1, 2 )\r\n")
    doc = _doc(text)
    assert doc.to_bytes() == text.encode("utf-8")
    assert dict(doc.sections["audio"]) == {"volume": 0.5, "a key": Vector2(1, 2)}  # the header is stripped


def test_a_changed_value_rewrites_its_own_text_only() -> None:
    text = "[player]\n\ngold=10 ; coins\nname=\"Bob\"\n\n[world]\n\nseed=7\n"
    doc = _doc(text)
    doc.sections["player"]["gold"] = 99
    assert doc.to_bytes() == text.replace("gold=10", "gold=99").encode()


def test_setting_the_same_value_changes_nothing() -> None:
    text = "[a]\n\nv=Vector2( 1, 2 )\nl=[ 1, 2 ]\n"
    doc = _doc(text)
    doc.set_value("a", "v", Vector2(1, 2))
    doc.set_value("a", "l", [1, 2])
    assert doc.to_bytes() == text.encode()


def test_a_container_changed_in_place_is_written() -> None:
    doc = _doc("[a]\n\nl=[1, 2]\n")
    doc.get_value("a", "l").append(3)
    assert doc.to_bytes() == b"[a]\n\nl=[1, 2, 3]\n"


def test_a_new_key_goes_after_its_sections_last_and_a_new_section_at_the_end() -> None:
    doc = _doc("[a]\n\nx=1\n\n[b]\n\ny=2\n")
    doc.set_value("a", "z", 3)
    doc.set_value("c", "w", "s")
    assert doc.text == "[a]\n\nx=1\nz=3\n\n[b]\n\ny=2\n\n[c]\n\nw=\"s\"\n"


def test_crlf_files_get_crlf_lines() -> None:
    doc = _doc("[a]\r\n\r\nx=1\r\n")
    doc.set_value("a", "y", 2)
    assert doc.text == "[a]\r\n\r\nx=1\r\ny=2\r\n"


def test_an_erased_key_takes_its_lines_and_every_duplicate() -> None:
    doc = _doc("[a]\n\nx=1\ny=2\nx=3\n")
    assert doc.get_value("a", "x") == 3  # a later key replaces an earlier one, in its place
    assert doc.get_section_keys("a") == ["x", "y"]
    doc.erase_section_key("a", "x")
    assert doc.text == "[a]\n\ny=2\n"


def test_the_engines_reading_rules() -> None:
    # Blanks inside a key are passed over; ';' comments anywhere; a quoted key; null erases; an empty key is
    # skipped; a header with no key makes no section; keys before the first header are in section "".
    doc = _doc('top=1\n[empty]\n[s]\nname with space=2\nab;comment\ncd=3\n"q k"=4\ngone=5\ngone=null\n=6\n')
    assert doc.get_sections() == ["", "s"]
    assert dict(doc.sections["s"]) == {"namewithspace": 2, "abcd": 3, "q k": 4}


def test_a_section_header_ends_at_its_first_bracket() -> None:
    doc = _doc("[a]b]\nx=1\n")
    assert doc.get_sections() == ["a"]  # 'b]' starts the next key: the engine reads 'b]x'
    assert doc.get_section_keys("a") == ["b]x"]


def test_objects_stay_inert() -> None:
    doc = _doc('[input]\njump=[Object(InputEventKey,"scancode":65,"shift":true,"script":null)\n]\n')
    [event] = doc.get_value("input", "jump")
    assert isinstance(event, Object) and event.class_name == "InputEventKey"
    assert event.properties["scancode"] == 65


def test_a_damaged_file_names_its_line_and_column() -> None:
    with pytest.raises(gf.ConfigFileError) as e:
        _doc("[a]\n\nx=1\ny=Vector2(1,\nz=2\n")
    assert e.value.line == 5 and isinstance(e.value, ValueError)


def test_salvage_keeps_the_keys_before_the_damage() -> None:
    doc = _doc("[a]\n\nx=1\ny=Vector2(1,\nz=2\n", salvage=True)
    assert dict(doc.sections["a"]) == {"x": 1}
    assert doc.damage is not None and "line 5" in " ".join(doc.notes)


def test_bytes_that_are_not_utf8_read_as_each_engine_reads_them_and_write_back() -> None:
    data = b"[a]\nx=\"\xffok\"\n\xd0\xba=1\n"
    doc3, doc4 = read_config(data, dialect="godot3"), read_config(data, dialect="godot4")
    assert doc3.get_value("a", "x") == "\xffok" and doc4.get_value("a", "x") == "\ufffdok"
    assert doc3.get_section_keys("a") == ["x", "\xd0\xba"] == doc4.get_section_keys("a")  # a key is read bytewise
    assert doc3.to_bytes() == data == doc4.to_bytes()


@pytest.mark.parametrize(("text", "family"), [
    ("[a]\n\nv=Vector2( 1, 2 )\n", 3), ("[]\n\nx=1\n", 3), ("[a]\n\nv=PoolIntArray( 1 )\n", 3),
    ("[a]\n\nv=Vector2(1, 2)\n", 4), ('"a b"=1\n', 4), ("[a]\n\nv=PackedInt32Array(1)\n", 4),
    ("[a]\n\ns=\"Vector2( 1, 2 )\"\nv=Vector2(1, 2)\n", 4),  # the string's text is no clue
])
def test_the_version_is_told_from_the_text(text: str, family: int) -> None:
    assert _doc(text).dialect.major == family


def test_text_that_names_no_version_is_taken_as_godot4_and_says_so() -> None:
    doc = _doc("[a]\n\nx=1\n")
    assert doc.dialect.name == "godot4" and "reads the same" in doc.notes[0]


def test_a_key_the_engine_would_read_otherwise_is_refused_under_strict() -> None:
    doc = _doc("[a]\n\nv=Vector2( 1, 2 )\n")  # Godot 3: keys are written raw
    doc.set_value("a", "with space", 1)
    with pytest.raises(gf.ConversionError):
        doc.to_bytes()
    assert b"with space=1" in doc.to_bytes(policy="lossy")


def test_conversion_renames_key_bindings_and_reports_nothing_lost() -> None:
    doc = _doc('[input]\n\njump=[ Object(InputEventKey,"resource_local_to_scene":false,"resource_name":"",'
               '"device":0,"alt":false,"shift":true,"control":false,"meta":false,"command":false,"pressed":false,'
               '"scancode":65,"physical_scancode":0,"unicode":0,"echo":false,"script":null)\n ]\n')
    new, losses = doc.convert("godot4")
    assert losses == []
    [event] = new.get_value("input", "jump")
    assert event.properties["keycode"] == 65 and event.properties["shift_pressed"] is True
    assert "scancode" not in event.properties


def test_conversion_refuses_values_that_carry_code() -> None:
    doc = _doc('[a]\n\nx=Object(Reference,"script":Resource( "user://evil.gd" ))\n\nv=Vector2( 1, 2 )\n')
    with pytest.raises(gf.EncodeError) as e:
        doc.convert("godot4")
    assert e.value.remedy is gf.Remedy.ALLOW_SCRIPTS and "[a] x" in str(e.value)
    new, _ = doc.convert("godot4", allow_scripts=True, policy="lossy")
    assert new.get_value("a", "x").class_name == "RefCounted"


def test_a_section_name_with_a_bracket_is_a_loss_in_godot3_and_kept_by_godot4() -> None:
    doc = _doc("[a]\n\nv=Vector2( 1, 2 )\n")
    doc.set_value("x]y", "k", 1)
    with pytest.raises(gf.ConversionError) as e:
        doc.to_bytes()  # Godot 3.2.3 writes [x]y] and reads the section "x" (measured)
    assert "']'" in str(e.value)
    new, losses = doc.convert("godot4")  # Godot 4.6 writes [x\]y] and reads it back (measured)
    assert losses == [] and "[x\\]y]" in new.text and new.get_value("x]y", "k") == 1


def test_godot3s_empty_section_after_another_is_a_loss() -> None:
    # Godot 3.2.3 writes the section "" as "[]" where it was made, and "[]" changes no section when read
    # (measured): written after another section, its keys are read into that one.
    from godot_formats.configfile import readback_changes
    [(place, why)] = readback_changes({"a": {"x": 1}, "": {"top": 1}}, "godot3")
    assert place == "[] top" and "changes no section" in why
    assert readback_changes({"": {"top": 1}, "a": {"x": 1}}, "godot3") == []  # first, it is read back


@pytest.mark.slow
def test_hostile_text_stays_linear() -> None:
    # A key of a million '[' and blanks, a value nested deep, many sections: read without recursion,
    # each in one pass (a quadratic reader would not finish here).
    doc = _doc("a" + " [" * 500_000 + "=1\n")
    assert doc.get_section_keys("") == ["a" + "[" * 500_000]
    doc = _doc("[s]\nx=" + "[" * 1000 + "]" * 1000 + "\n")
    assert doc.has_section_key("s", "x")
    doc = _doc("".join(f"[s{i}]\nk=1\n" for i in range(100_000)))
    assert len(doc.get_sections()) == 100_000
    assert doc.line_of(doc.entries()[-1].start) == 200_000


_NAMES = st.text(alphabet=st.sampled_from(list("ab ]\\[;=\"\t\nü") + ["\x00"]), max_size=6)


@given(section=_NAMES, key=_NAMES, major=st.sampled_from([3, 4]), first=st.booleans())
def test_the_name_rules_are_the_readers(section: str, key: str, major: int, first: bool) -> None:
    # writer.lost_name states what the reader (text.parse, checked against both engines) does to a section
    # or key name; the two must agree on any name: write it as the engine does, read it back.
    sections = {section: {key: 1}} if first else {"before": {"k": 1}, section: {key: 1}}
    if first and major >= 4 and section != "":  # Godot 4 writes the section "" first: give it none here
        sections = {section: {key: 1}}
    dialect = f"godot{major}"
    try:
        got = engine_view(parse(encode_to_text(sections, dialect), dialect).entries)
        kept = got.get(section, {}).get(key) == 1 and sum(map(len, got.values())) == sum(map(len, sections.values()))
    except gf.ConfigFileError:
        kept = False
    assert (lost_name(section, key, major, first=first or (major >= 4 and section == "")) is None) == kept


@pytest.mark.parametrize(("name", "form"), [
    ("project.godot", "project_settings"), ("override.cfg", "project_settings"),
    ("my_override.cfg", "project_settings"),  # 4.6's save_custom writes text for any *override.cfg (measured)
    ("export_presets.cfg", "export_presets"), ("icon.png.import", "import"),
    ("global_script_class_cache.cfg", "class_cache"), ("settings.cfg", "configfile"), (None, "configfile"),
])
def test_each_file_of_the_family_is_its_form(name: str | None, form: str) -> None:
    doc = read_config(b'[remap]\n\nimporter="texture"\n', path=name)
    assert doc.form.name == form and doc.layers["form"] == form
    assert doc.to_bytes() == b'[remap]\n\nimporter="texture"\n'


@pytest.mark.parametrize("name", ["export_presets.cfg", "icon.png.import", "global_script_class_cache.cfg"])
def test_editor_files_are_edited_never_converted(name: str) -> None:
    doc = read_config(b'[remap]\n\nimporter="texture"\nsize=Vector2(1, 2)\n', path=name)
    doc.set_value("remap", "importer", "image")
    assert b'importer="image"' in doc.to_bytes()
    for target in ("godot3", "godot4.3"):
        with pytest.raises(gf.EncodeError, match="the editor writes this file anew"):
            doc.convert(target)


def test_a_project_header_names_the_form_without_a_name() -> None:
    text = b"; Engine configuration file.\n; x\n\nconfig_version=4\n\n[application]\n\nconfig/name=\"G\"\n"
    doc = read_config(text)
    assert doc.form.name == "project_settings" and doc.dialect.name == "godot3"  # config_version 4: Godot 3


# -- what the review found (each failed before its fix) ----------------------------------------------------


def test_a_crashs_zeros_after_the_text_leave_it_a_configfile() -> None:
    # Both engines pass over a NUL as a blank; Variant bytes put their NULs before any text.
    doc = gf.open(b"[a]\nx=1\n" + b"\0" * 100)
    assert doc.kind == "configfile" and doc.get_value("a", "x") == 1
    assert gf.open(gf.dumps("a=b", "godot4")).kind == "save"  # a String Variant is not text


def test_a_new_key_goes_into_its_section_when_the_line_goes_on() -> None:
    doc = _doc("[a]\nx=1 [b]\ny=2\n")  # the engine reads x in [a], y in [b]
    doc.set_value("a", "z", 3)
    again = read_config(doc.to_bytes())
    assert again.get_section_keys("a") == ["x", "z"] and again.get_section_keys("b") == ["y"]


def test_a_new_section_quote_quote_goes_before_the_first_header_in_godot3_too() -> None:
    doc = _doc("[a]\n\nv=Vector2( 1, 2 )\n")
    doc.set_value("", "top", 1)  # both engines read keys before the first header into the section ""
    again = read_config(doc.to_bytes(), dialect="godot3")
    assert again.get_value("", "top") == 1 and again.get_value("a", "v") == Vector2(1, 2)


def test_a_salvaged_file_changed_is_written_as_the_engine_would_save_what_it_loaded() -> None:
    doc = _doc("[a]\nx=1\ny=Vector2( 1, 2 )\n[b]\nz=[1, 2\nw=3\n", salvage=True)
    assert doc.to_bytes() == b"[a]\nx=1\ny=Vector2( 1, 2 )\n[b]\nz=[1, 2\nw=3\n"  # unchanged: as it was
    assert doc.kept_text == "[a]\nx=1\ny=Vector2( 1, 2 )\n[b]\n"  # up to the damaged entry
    doc.set_value("c", "k", 1)
    with pytest.raises(gf.ConversionError, match="damaged"):
        doc.to_bytes()  # the damaged tail would hide the new section from the engine
    again = read_config(doc.to_bytes(policy="lossy"))
    assert again.get_sections() == ["a", "c"] and again.get_value("c", "k") == 1
    new, losses = doc.convert("godot4", policy="lossy")
    assert [loss.path for loss in losses] == ["line 6"] and any("damaged" in n for n in new.notes)
    same, losses = doc.convert("godot3", policy="lossy")
    assert losses and read_config(same.to_bytes()).get_sections() == ["a", "c"]


def test_the_same_engines_text_is_no_code_armed() -> None:
    doc = _doc('[a]\n\nx=Object(RefCounted,"script":Resource("user://evil.gd"))\nv=Vector2(1, 2)\n')
    assert doc.convert("godot4")[1] == []  # written as it was read: nothing armed that was not
    with pytest.raises(gf.EncodeError, match="carries code"):
        doc.convert("godot3")


def test_key_binding_notes_are_said_once() -> None:
    text = "".join(f'[input]\n\na{i}=[ Object(InputEventKey,"scancode":65,"script":null)\n ]\n' for i in range(3))
    new, _ = _doc(text).convert("godot4")
    typed = [n for n in new.notes if "Array[InputEvent]" in n]
    assert len(typed) == 1 and "and 2 more" in typed[0]
