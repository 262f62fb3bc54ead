"""One door for every Godot file (issue 39): ``gf.open`` reads a save of every container and a resource
of every form, made by the real engines (fixtures/containers, fixtures/resources), and returns a
document that answers one protocol; ``gf.open_resource`` is the same door for resources; a kind a
program registers is opened through it like the built-in ones (the recipe of docs/architecture.md)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import FIXTURES, read_jsonl

import godot_formats as gf
from godot_formats.documents import KINDS, Kind, OpenOptions, kind_of, register_kind, unregister_kind

PASSWORD = "hunter2"

SAVES = [case for case in read_jsonl(FIXTURES / "containers" / "godot3_containers.jsonl")
         if case["container"] in ("compressed", "encrypted")
         and case["name"].startswith(("g3_cmp_m1", "g3_enc_pass_h"))]
RESOURCES = sorted(p for engine in ("godot3", "godot4") for p in (FIXTURES / "resources" / engine).glob("all*.*res"))

PROTOCOL = ("kind", "path", "dialect", "layers", "notes", "to_bytes", "save", "convert")


def _save_bytes(case: dict[str, Any]) -> bytes:
    return bytes.fromhex(case["file_hex"])


@pytest.mark.parametrize("case", SAVES, ids=lambda c: c["name"])
def test_a_save_opens_through_the_door(case: dict[str, Any], tmp_path: Path) -> None:
    data = _save_bytes(case)
    path = tmp_path / "game.sav"
    path.write_bytes(data)
    doc = gf.open(path, password=PASSWORD)
    assert isinstance(doc, gf.Document) and doc.kind == "save" and doc.path == path
    assert all(hasattr(doc, name) for name in PROTOCOL)
    assert isinstance(doc.dialect, gf.Dialect) and doc.layers["dialect"] == doc.dialect.name
    json.dumps(doc.layers)  # plain data
    assert doc.to_bytes() == data  # what was read writes back exactly
    converted, losses = doc.convert("godot4")
    assert converted.kind == "save" and converted.dialect.name == "godot4" and losses == []
    assert isinstance(doc.header, dict)


@pytest.mark.parametrize("path", RESOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_resource_opens_through_the_same_door(path: Path, tmp_path: Path) -> None:
    doc = gf.open(path)
    assert isinstance(doc, gf.Document) and doc.kind == "resource" and doc.path == path
    assert type(gf.open_resource(path)) is type(doc)
    assert doc.dialect == gf.get_dialect(path.parent.name)
    layers = doc.layers
    json.dumps(layers)
    assert layers["format"] == ("binary" if path.suffix == ".res" else "text")
    assert layers["byteorder"] == doc.byteorder and layers["compression"] == doc.compression
    assert (doc.compression is not None) == path.name.startswith("all_c")
    assert (doc.byteorder == "big") == path.name.startswith("all_be")
    assert doc.to_bytes() == path.read_bytes()
    target = "godot4" if path.parent.name == "godot3" else "godot3"
    converted, losses = doc.convert(target, policy="lossy")
    assert converted.kind == "resource" and converted.dialect.name == target
    out = tmp_path / path.name
    doc.save(out)
    assert out.read_bytes() == path.read_bytes()
    with pytest.raises(FileExistsError):
        doc.save(out)  # an existing file other than the one read: only with overwrite=True
    doc.save(out, overwrite=True)


def test_the_options_are_one_set_for_every_kind(tmp_path: Path) -> None:
    """A resource takes the options that apply to it and leaves the rest: the same call opens both."""
    save = SAVES[0]
    for source in (_save_bytes(save), RESOURCES[0].read_bytes()):
        doc = gf.open(source, password=PASSWORD, allow_objects=True, salvage=True, max_size=1 << 24, max_ratio=50)
        assert doc.kind in ("save", "resource")
    with pytest.raises(gf.SizeLimitError):
        gf.open(RESOURCES[0], max_size=10)
    with pytest.raises(gf.SizeLimitError):
        gf.open(_save_bytes(save), max_size=10, password=PASSWORD)


def test_open_resource_refuses_what_is_no_resource() -> None:
    with pytest.raises(gf.DecodeError, match="not a resource file"):
        gf.open_resource(_save_bytes(SAVES[0]))
    with pytest.raises(gf.DecodeError, match="scene"):
        gf.open(b"[gd_scene load_steps=1 format=2]\n\n[node name=\"A\" type=\"Node\"]\n")


def test_a_kind_can_be_named_instead_of_told() -> None:
    text = RESOURCES[0].read_bytes()
    assert gf.open(text, kind="resource").kind == "resource"
    with pytest.raises(ValueError, match="unknown kind"):
        gf.open(text, kind="no such kind")


def test_the_old_names_still_answer_with_a_warning() -> None:
    sf = gf.open(_save_bytes(SAVES[0]), password=PASSWORD)
    with pytest.warns(DeprecationWarning, match="header is a property"):
        assert sf.header() == sf.header
    obj = gf.Object("Node", {"a": 1})
    with pytest.warns(DeprecationWarning, match="allow_objects"):
        old = gf.dumps(obj, "godot4", full_objects=True)
    rf = gf.open(next(p for p in RESOURCES if p.name.startswith("all_c")))
    with pytest.warns(DeprecationWarning, match="compressed is compression"):
        assert rf.compressed == rf.compression == "Zstd"
    with pytest.warns(DeprecationWarning, match="big_endian is byteorder"):
        assert rf.big_endian is False and rf.byteorder == "little"
    with pytest.warns(DeprecationWarning):
        rf.big_endian = True
    assert rf.byteorder == "big" and rf.layers["byteorder"] == "big"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gf.dumps(obj, "godot4", allow_objects=True) == old
        assert gf.loads(old, "godot4", allow_objects=True) == obj


# -- a kind a program adds: the recipe of docs/architecture.md, followed to the letter ----------------------


@attrs.define(eq=False)
class Note:
    """A toy kind: ``NOTE`` then UTF-8 text.  Godot has no such file; the kind proves that a row of
    :data:`godot_formats.documents.KINDS` is all a new kind needs to open through ``gf.open``."""

    text: str
    path: Path | None = None
    kind = "note"

    @property
    def dialect(self) -> gf.Dialect:
        return gf.get_dialect("godot4")

    @property
    def layers(self) -> dict[str, Any]:
        return {"container": "note"}

    @property
    def notes(self) -> list[str]:
        return []

    def to_bytes(self, *, dialect: Any = None, policy: str = "strict", **form: Any) -> bytes:
        return b"NOTE" + self.text.encode()

    def save(self, file: Any = None, *, dialect: Any = None, policy: str = "strict",
             overwrite: bool = False) -> list[Any]:
        Path(file or self.path).write_bytes(self.to_bytes())  # a toy: the built-in kinds write atomically
        return []

    def convert(self, dialect: Any, *, policy: str = "strict") -> tuple[Note, list[Any]]:
        return Note(self.text), []


def _read_note(data: bytes, path: Path | None, options: OpenOptions) -> Note:
    try:
        return Note(data[4:].decode("utf-8"), path)
    except UnicodeDecodeError as e:
        raise gf.DecodeError(4 + e.start, "a note is UTF-8 text") from None


@pytest.fixture
def note_kind() -> Any:
    kind = register_kind(Kind("note", "a toy kind of the tests", lambda data: data.startswith(b"NOTE"), _read_note))
    yield kind
    unregister_kind("note")


def test_a_registered_kind_opens_through_the_door(note_kind: Kind, tmp_path: Path) -> None:
    assert [k.name for k in KINDS][-2:] == ["note", "save"]  # before the save, which takes everything
    path = tmp_path / "x.note"
    path.write_bytes(b"NOTEhello")
    doc = gf.open(path)
    assert isinstance(doc, gf.Document) and doc.kind == "note" and doc.text == "hello" and doc.path == path
    assert doc.to_bytes() == path.read_bytes()
    assert kind_of(b"NOTE") is note_kind
    with pytest.raises(gf.DecodeError, match="at byte 4"):
        gf.open(b"NOTE\xff")
    with pytest.raises(gf.SizeLimitError):  # the one bounded read serves every kind, a new one too
        gf.open(b"NOTE" + b"x" * 100, max_size=50)
    with pytest.raises(ValueError, match="registered already"):
        register_kind(note_kind)


def test_unregistering_a_kind_gives_its_bytes_back_to_the_others(note_kind: Kind) -> None:
    unregister_kind("note")
    try:
        with pytest.raises(gf.DecodeError):
            gf.open(b"NOTEhello")  # now the save's to read, and it is no save
    finally:
        register_kind(note_kind)
    with pytest.raises(ValueError, match="stays"):
        unregister_kind("save")


def test_the_batch_engine_converts_a_registered_kind(note_kind: Kind) -> None:
    from godot_formats import batch

    out, row = batch.convert_bytes(b"NOTEhello", name="x.note", to="godot3")
    assert out == b"NOTEhello" and row["status"] == "unchanged", row
    assert row["detail"] == "note, godot4 -> godot3" and row["layers"] == "note"
    out, row = batch.convert_bytes(b"NOTE\xff", name="bad.note", to="godot3")
    assert out is None and row["error_kind"] == "bad input" and "at byte 4" in row["error"]
