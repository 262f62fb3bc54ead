"""Every value the real engines wrote decodes, and re-encodes to the engine's exact bytes.

Fixtures: fixtures/godot3 (Godot 3.2.3) and fixtures/godot4 (Godot 4.6), see fixtures/README.md.
The only bytes ignored are NodePath name padding, which those builds leave uninitialised.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import assert_same_bytes, engine_cases, node_path_pad_mask

import godot_formats as gf

ENGINES = {"godot3": "godot3", "godot4": "godot4"}


def _blobs() -> list[Any]:
    params = []
    for engine, dialect in ENGINES.items():
        for case in engine_cases(engine):
            if case.get("raw"):
                continue  # framed wire captures: see test_engine_wire
            for key, objects in (("hex", False), ("hex_full_objects", True)):
                if case.get(key):
                    params.append(pytest.param(dialect, case, key, objects, id=f"{engine}-{case['name']}-{key}"))
    return params


@pytest.mark.parametrize("dialect, case, key, objects", _blobs())
def test_engine_bytes_decode_and_reencode_exactly(dialect: str, case: dict[str, Any], key: str, objects: bool) -> None:
    blob = bytes.fromhex(case[key])
    value, end = gf.decode(blob, dialect, allow_objects=objects)
    assert end == len(blob)
    ours = gf.dumps(value, dialect, allow_objects=objects)
    assert_same_bytes(ours, blob, node_path_pad_mask(value, dialect, objects))


@pytest.mark.parametrize("engine", list(ENGINES))
def test_fixture_count(engine: str) -> None:
    # Guards against a truncated fixture file silently shrinking the suite.
    assert len(engine_cases(engine)) >= 120


def test_full_objects_refused_without_allow_objects() -> None:
    case = next(c for c in engine_cases("godot4") if c["name"] == "object_refcounted")
    with pytest.raises(gf.DecodeError, match="allow_objects"):
        gf.loads(bytes.fromhex(case["hex_full_objects"]))
    # The id form is always allowed: it carries only a number.
    assert gf.loads(bytes.fromhex(case["hex"])) == gf.EncodedObjectAsID(0x800000_0ece00062A)


def test_engine_typeof_matches_our_type() -> None:
    # The engine's typeof() id of each value must be the id we write for our value.
    for engine, dialect in ENGINES.items():
        for case in engine_cases(engine):
            if case.get("raw") or not case.get("hex") or not case["ok"]:
                continue
            value = gf.loads(bytes.fromhex(case["hex"]), dialect)
            written = gf.dumps(value, dialect)
            type_id = int.from_bytes(written[:4], "little") & 0xFF
            if value is None:
                continue  # a null Object is written as NIL but typeof() says OBJECT
            assert type_id == case["type"], case["name"]
