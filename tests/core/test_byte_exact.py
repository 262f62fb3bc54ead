"""Byte-exact promises that are exactly true.

* ``gf.open(p).save()`` with nothing changed, and ``dump --json | load``, give back the same bytes,
  also for ``store_var`` saves holding a NodePath whose padding the engine left uninitialised
  (fixtures/nodepath_padding: files Godot 3.2.3 and Godot 4.6 wrote, padding such as ``4a7d``
  where we write ``0000``); an unchanged record keeps its bytes when another changes.
* ``SaveFile`` and ``ResourceFile`` have one shape: ``to_bytes()`` gives bytes, ``convert()`` a new
  file and its losses, ``save()`` the losses.
* A strict conversion lists the losses of every record (records 1 and 3 of an engine-made save).

Expected bytes are the engines' files; the property tests check that any save, with any bytes in
its NodePath padding, is given back as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, budget, node_path_pad_mask, read_jsonl
from conftest import run_main as main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import scalar_options, values

import godot_formats as gf
from godot_formats.core.codec import Encoder
from godot_formats.layers.framing import join_frames, split_frames
from godot_formats.saves.savefile import SaveFile
from godot_formats.views.jsonform import dumps_json, loads_json

PADDED = FIXTURES / "nodepath_padding"
SAVES = {(engine, r["name"]): r for engine in ("godot3", "godot4")
         for r in read_jsonl(PADDED / f"{engine}_nodepath_saves.jsonl")}


def _data(case: dict[str, Any]) -> bytes:
    return bytes.fromhex(case["file_hex"])


def _opened(case: dict[str, Any]) -> gf.SaveFile:
    return gf.open(_data(case), password=case["params"].get("password"))


def _frames(sf: gf.SaveFile, data: bytes) -> list[bytes]:
    """The records' bytes (after each length prefix) of a plain ``store_var`` file."""
    frames = split_frames(data, sf.byteorder)
    assert frames is not None
    return frames


def _env(case: dict[str, Any]) -> dict[str, str]:
    password = case["params"].get("password")
    return {"GODOT_FORMATS_PASSWORD": password} if password else {}


# -- the fixtures are what they say ----------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(SAVES), ids="-".join)
def test_the_engine_left_garbage_in_the_nodepath_padding(key: tuple[str, str]) -> None:
    """Each fixture holds padding we would not write (else the tests below would prove nothing), and
    reads as the values the engine read back."""
    case = SAVES[key]
    sf = _opened(case)
    assert sf.dialect.name == key[0] and sf.container == "store_var" and len(sf.values) == 4
    assert sf.byteorder == ("big" if key[1] == "big_endian" else "little")
    padding = sf.header["padding"]
    assert set(padding) >= {"1", "3"} and all(set(run) - {"0"} for p in padding.values() for run in p["bytes"].values())
    assert sf.values[1] == "chapter two"
    assert str(sf.values[0]["at" if key[1] == "object_ids" else "target"]) == "Player/Sprite:position"


# -- unchanged: the same bytes ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(SAVES), ids="-".join)
def test_a_save_opened_and_saved_unchanged_is_the_engines_bytes(key: tuple[str, str], tmp_path: Path) -> None:
    case = SAVES[key]
    data = _data(case)
    sf = _opened(case)
    assert sf.to_bytes() == data
    path = tmp_path / "save.sav"
    path.write_bytes(data)
    sf = gf.open(path, password=case["params"].get("password"))
    assert sf.save() == []  # back where it was read from: no conversion, no loss
    assert path.read_bytes() == data
    assert sf.save(tmp_path / "copy.sav") == [] and (tmp_path / "copy.sav").read_bytes() == data


@pytest.mark.parametrize("key", sorted(SAVES), ids="-".join)
def test_dump_json_then_load_gives_the_engines_bytes(key: tuple[str, str], tmp_path: Path) -> None:
    case = SAVES[key]
    src = tmp_path / "save.sav"
    src.write_bytes(_data(case))
    status, dumped, err = main("dump", src, "--json", env=_env(case))
    assert status == 0, err
    view = tmp_path / "save.json"
    view.write_text(dumped, encoding="utf-8")
    out = tmp_path / "back.sav"
    status, _, err = main("load", view, "-o", out, env=_env(case))
    assert status == 0, err
    assert out.read_bytes() == _data(case)


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_dump_text_then_load_keeps_the_padding_of_the_records_the_text_keeps(engine: str, tmp_path: Path) -> None:
    """Godot text sorts a Dictionary's keys (record 1 changes order, so it is written as we write it);
    the records the text keeps exactly keep the engine's padding."""
    case = SAVES[(engine, "plain")]
    src = tmp_path / "save.sav"
    src.write_bytes(_data(case))
    status, dumped, err = main("dump", src)
    assert status == 0
    view = tmp_path / "save.txt"
    view.write_text(dumped, encoding="utf-8")
    status, _, err = main("load", view, "-o", tmp_path / "back.sav")
    assert status == 0, err
    sf = gf.open(_data(case))
    engine_frames = _frames(sf, _data(case))
    back = _frames(sf, (tmp_path / "back.sav").read_bytes())
    assert back[1:] == engine_frames[1:]
    assert back[0] == gf.dumps(gf.from_text(gf.to_text(sf.values[0], engine), engine), engine)


# -- changed: the changed record is ours, the others stay the engine's ---------------------------------


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_a_changed_record_is_written_anew_and_the_others_keep_their_bytes(engine: str) -> None:
    case = SAVES[(engine, "plain")]
    data = _data(case)
    sf = _opened(case)
    engine_frames = _frames(sf, data)
    sf.values[1] = "chapter three"
    sf.values[2] = gf.NodePath("../Enemies/Boss:modulate:b")  # same length, other bytes: a change too
    out = _frames(sf, sf.to_bytes())
    assert out[0] == engine_frames[0] and out[3] == engine_frames[3]
    assert out[1] == gf.dumps("chapter three", engine)
    assert out[2] == gf.dumps(gf.NodePath("../Enemies/Boss:modulate:b"), engine)  # zeros, not the old padding


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_an_edited_json_view_keeps_the_padding_of_the_records_left_alone(engine: str, tmp_path: Path) -> None:
    """``dump --json``, edit records 2 and 3, ``load``: records 1 and 4 are the engine's bytes; the
    edited NodePath of record 3 (the same length) is written with clean padding, not the old one's."""
    case = SAVES[(engine, "plain")]
    src = tmp_path / "save.sav"
    src.write_bytes(_data(case))
    _, dumped, _ = main("dump", src, "--json", "--compact")
    header, *docs = dumped.splitlines()
    docs[1] = json.dumps("s:chapter three")
    docs[2] = docs[2].replace("modulate:a", "modulate:b")
    view = tmp_path / "edited.json"
    view.write_text("\n".join([header, *docs]) + "\n", encoding="utf-8")
    status, _, err = main("load", view, "-o", tmp_path / "back.sav")
    assert status == 0, err
    sf = gf.open(_data(case))
    engine_frames = _frames(sf, _data(case))
    back = _frames(sf, (tmp_path / "back.sav").read_bytes())
    assert [back[0], back[3]] == [engine_frames[0], engine_frames[3]]
    assert back[1] == gf.dumps("chapter three", engine)
    assert back[2] == gf.dumps(gf.NodePath("../Enemies/Boss:modulate:b"), engine)


def test_a_header_whose_padding_is_not_of_its_shape_is_refused() -> None:
    sf = gf.open(_data(SAVES[("godot3", "plain")]))
    header = json.loads(json.dumps(sf.header))
    for bad in ({"1": {"bytes": {"74": "4a7d"}}}, {"0": {"value_md5": "", "bytes": {}}},
                {"1": {"value_md5": "", "bytes": {"-1": "00"}}}, {"1": {"value_md5": "", "bytes": {"3": "zz"}}},
                {"1": []}, ["1"]):
        with pytest.raises(gf.DecodeError, match="save header"):
            SaveFile.from_header({**header, "padding": bad}, sf.values)


def test_a_header_edited_by_hand_never_writes_past_the_value() -> None:
    """A run past the end of the value (a header edited by hand) is cut off: the frames still tile."""
    case = SAVES[("godot3", "plain")]
    sf = gf.open(_data(case))
    header = json.loads(json.dumps(sf.header))
    header["padding"]["3"]["bytes"]["60"] = "ff" * 100
    out = SaveFile.from_header(header, sf.values).to_bytes()
    assert gf.open(out).values[2] == sf.values[2] and len(out) == len(_data(case))


# -- one shape for SaveFile and ResourceFile --------------------------------------------------------------


def test_to_bytes_gives_bytes_convert_a_file_and_its_losses_save_the_losses(tmp_path: Path) -> None:
    case = SAVES[("godot3", "plain")]
    sf = _opened(case)
    assert isinstance(sf.to_bytes(), bytes) and isinstance(sf.to_bytes(dialect="godot4"), bytes)
    converted, losses = sf.convert("godot4")
    assert isinstance(converted, gf.SaveFile) and losses == []
    assert converted.dialect.name == "godot4" and converted.path is None and sf.dialect.name == "godot3"
    assert [gf.dumps(v, "godot4") for v in gf.open(converted.to_bytes()).values] == \
        [gf.dumps(v, "godot4") for v in converted.values]
    same, none = sf.convert("godot3")
    assert none == [] and same is not sf and same.to_bytes() == _data(case)
    assert sf.save(tmp_path / "v4.sav", dialect="godot4") == []
    assert gf.open(tmp_path / "v4.sav").dialect.name == "godot4"


def test_resource_files_have_the_same_shape(tmp_path: Path) -> None:
    source = FIXTURES / "resources" / "godot4" / "all.res"
    rf = gf.open_resource(source)
    assert isinstance(rf.to_bytes(), bytes)
    _, losses = rf.convert("godot3", policy="lossy")
    assert losses
    saved = rf.save(tmp_path / "all3.res", dialect="godot3", policy="lossy")
    assert [str(loss) for loss in saved] == [str(loss) for loss in losses]
    assert rf.save(tmp_path / "same.res") == [] and (tmp_path / "same.res").read_bytes() == source.read_bytes()


# -- strict conversion lists the losses of every record ----------------------------------------------------


@pytest.mark.parametrize("engine, target", [("godot3", "godot4"), ("godot4", "godot3")])
def test_strict_conversion_lists_the_losses_of_every_record(engine: str, target: str, tmp_path: Path) -> None:
    """Records 1 and 3 of the engine's save hold an Object written as its instance id: both are named."""
    case = SAVES[(engine, "object_ids")]
    sf = _opened(case)
    for attempt in (lambda: sf.convert(target), lambda: sf.to_bytes(dialect=target),
                    lambda: sf.save(tmp_path / "out.sav", dialect=target)):
        with pytest.raises(gf.ConversionError) as e:
            attempt()
        assert [loss.path for loss in e.value.losses] == ['<record 1 of 4>["who"]', "<record 3 of 4>[0]"]
        assert "<record 1 of 4>" in str(e.value) and "<record 3 of 4>" in str(e.value)
    assert not (tmp_path / "out.sav").exists()  # refused: nothing written
    losses = sf.save(tmp_path / "out.sav", dialect=target, policy="lossy")
    assert [loss.path for loss in losses] == ['<record 1 of 4>["who"]', "<record 3 of 4>[0]"]
    back = gf.open(tmp_path / "out.sav", dialect=target)
    assert back.values[0]["who"] is None and back.values[2][0] is None and back.values[1] == "chapter two"


def test_a_value_that_cannot_be_converted_names_its_record() -> None:
    sf = _opened(SAVES[("godot3", "plain")])
    sf.values[2] = {1, 2}  # a Python set: no engine type
    with pytest.raises(gf.EncodeError) as e:
        sf.convert("godot4")
    assert e.value.path.startswith("<record 3 of 4>")


def test_the_convert_command_lists_the_losses_of_every_record(tmp_path: Path) -> None:
    case = SAVES[("godot3", "object_ids")]
    src = tmp_path / "old.sav"
    src.write_bytes(_data(case))
    status, out, _ = main("convert", src, "--to", "godot4", "-o", tmp_path / "new.sav")
    assert status == 1 and not (tmp_path / "new.sav").exists()
    assert "would lose data (2 change(s)" in out
    assert 'would lose: <record 1 of 4>["who"]: Object written as its instance id' in out
    assert "would lose: <record 3 of 4>[0]: Object written as its instance id" in out
    status, out, _ = main("convert", src, "--to", "godot4", "--policy", "lossy", "-o", tmp_path / "new.sav")
    assert status == 0 and out.count("    loss: <record ") == 2


def test_strict_bare_conversion_lists_the_bytes_after_the_value_and_the_values_losses() -> None:
    """``gf.convert`` on engine bytes followed by 4 more: both kinds of loss at once."""
    vector2i = next(r for r in read_jsonl(FIXTURES / "godot4" / "encode.jsonl") if r["name"] == "vector2i")
    data = bytes.fromhex(vector2i["hex"]) + b"\0\0\0\0"
    with pytest.raises(gf.ConversionError) as e:
        gf.convert(data, "godot4", "godot3")
    reasons = [loss.reason for loss in e.value.losses]
    assert len(reasons) == 2 and "4 byte(s) after the value" in reasons[0] and "Vector2i" in reasons[1]


# -- any save, any padding: the same bytes ---------------------------------------------------------------


def _with_padding(dialect: str) -> st.SearchStrategy[tuple[list[Any], list[bytes]]]:
    """Records (often NodePaths, or holding them) and their bytes with random NodePath padding."""
    d = gf.get_dialect(dialect)
    node_paths = scalar_options(d)["NodePath"]
    record = st.one_of(node_paths, st.lists(node_paths, max_size=3), values(d, max_leaves=6))

    @st.composite
    def build(draw: Any) -> tuple[list[Any], list[bytes]]:
        records = draw(st.lists(record, min_size=1, max_size=4))
        blobs = []
        for v in records:
            blob = bytearray(Encoder(d, full_objects=True).encode(v))
            for i in sorted(node_path_pad_mask(v, dialect, True)):
                blob[i] = draw(st.integers(0, 255))
            blobs.append(bytes(blob))
        return records, blobs

    return build()


def _through_json(sf: gf.SaveFile) -> SaveFile:
    """What ``dump --json | load`` does: the header and each value through JSON text."""
    header = json.loads(json.dumps(sf.header))
    return SaveFile.from_header(header, [loads_json(dumps_json(v)) for v in sf.values], allow_objects=True)


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_store_var_save_saved_unchanged_is_the_same_bytes(dialect: str, data: st.DataObject) -> None:
    _, blobs = data.draw(_with_padding(dialect))
    byteorder = data.draw(st.sampled_from(["little", "big"]))
    file = join_frames(blobs, byteorder)
    sf = gf.open(file, dialect=dialect, framing="store_var", allow_objects=True)
    assert sf.to_bytes() == file
    assert _through_json(sf).to_bytes() == file


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_var_to_bytes_value_saved_unchanged_is_the_same_bytes(dialect: str, data: st.DataObject) -> None:
    _, blobs = data.draw(_with_padding(dialect))
    sf = gf.open(blobs[0], dialect=dialect, framing="none", allow_objects=True)
    assert sf.to_bytes() == blobs[0]
    assert _through_json(sf).to_bytes() == blobs[0]
