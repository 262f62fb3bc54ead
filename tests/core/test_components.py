"""Vectors, Quaternion and Color are tuples of their components; they must still behave as
their own Godot types everywhere a tuple could be mistaken for an Array."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from conftest import engine_cases

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.views.jsonform import to_json

FLAT = [t.Vector2, t.Vector2i, t.Vector3, t.Vector3i, t.Vector4, t.Vector4i, t.Quaternion, t.Color]


def test_fields_defaults_and_conversion() -> None:
    v = t.Vector3(1, 2, 3)
    assert (v.x, v.y, v.z) == (1.0, 2.0, 3.0) and all(type(c) is float for c in v)
    assert v[0] == 1.0 and len(v) == 3 and list(v) == [1.0, 2.0, 3.0]
    assert t.Vector2i(1.9, -2) == t.Vector2i(1, -2) and type(t.Vector2i(1.9, 2).x) is int
    assert t.Quaternion() == t.Quaternion(0, 0, 0, 1)  # identity, as in Godot
    assert t.Color(1, 0, 0) == t.Color(r=1, g=0, b=0, a=1)
    assert t.Vector3(y=5) == t.Vector3(0, 5, 0)
    assert t.Vector2() == t.Vector2(0, 0)
    with pytest.raises(TypeError):
        t.Vector2(1, 2, 3)
    with pytest.raises(TypeError):
        t.Vector2(1, x=2)
    with pytest.raises(TypeError):
        t.Vector2(q=1)
    with pytest.raises(ValueError):
        t.Vector2("a", 1)
    with pytest.raises(AttributeError):
        v.x = 5  # type: ignore[misc]


@pytest.mark.parametrize("cls", FLAT)
def test_equal_only_to_the_same_type(cls: type[t.Components]) -> None:
    v = cls(*range(1, len(cls._fields) + 1))
    same = cls(*range(1, len(cls._fields) + 1))
    assert v == same and not (v != same) and hash(v) == hash(same)
    as_tuple = tuple(v)
    assert v != as_tuple and as_tuple != v and not (v == as_tuple) and not (as_tuple == v)
    assert v != list(v)
    for other in FLAT:
        if other is not cls and len(other._fields) == len(cls._fields):
            assert v != other(*v) and other(*v) != v
    assert pickle.loads(pickle.dumps(v)) == v and type(pickle.loads(pickle.dumps(v))) is cls
    assert copy.deepcopy(v) == v and copy.copy(v) == v
    assert repr(v) == f"{cls.__name__}({', '.join(str(c) if cls._convert is int else repr(c) for c in v)})"


def test_no_tuple_arithmetic_or_ordering() -> None:
    v = t.Vector2(1, 2)
    for op in (lambda: v + v, lambda: v * 2, lambda: 2 * v, lambda: v < v, lambda: v + (1,)):
        with pytest.raises(TypeError):
            op()


class Position(t.Vector2):
    pass


def test_subclasses_replace_and_patterns() -> None:
    p = Position(1, 2)
    assert (p.x, p.y) == (1.0, 2.0) and type(pickle.loads(pickle.dumps(p))) is Position
    assert p != t.Vector2(1, 2)  # another class, as attrs classes compared
    v = t.Color(1, 0, 0)
    assert v.replace(a=0.5) == t.Color(1, 0, 0, 0.5) and v == t.Color(1, 0, 0, 1)
    with pytest.raises(TypeError):
        v.replace(q=1)
    assert t.Vector3.__match_args__ == ("x", "y", "z")  # case Vector3(x, y, z): (Python 3.10+)
    assert t.Color.__match_args__ == ("r", "g", "b", "a") and Position.__match_args__ == ("x", "y")


def test_keys_follow_godot_rules() -> None:
    # -0.0 and 0.0 are one key, NaN equals NaN, and a vector is not the Array of its components.
    assert t.godot_key(t.Vector2(-0.0, math.nan)) == t.godot_key(t.Vector2(0.0, math.nan))
    assert t.godot_key(t.Vector2(1, 2)) != t.godot_key([1.0, 2.0])
    assert t.godot_key(t.Vector2(1, 2)) != t.godot_key(t.Vector2i(1, 2))
    d = t.Dictionary([(t.Vector2(1, 2), "v"), ((1.0, 2.0), "array")])
    assert len(d) == 2
    # NaN inside a math type inside a math type (Transform3D's Basis) still merges.
    def nan_transform() -> t.Transform3D:
        return t.Transform3D(t.Basis(t.Vector3(math.nan, 0, 0), t.Vector3(), t.Vector3()), t.Vector3())
    assert len(t.Dictionary([(nan_transform(), 1), (nan_transform(), 2)])) == 1


VECTOR_TYPE_NAMES = {"VECTOR2", "VECTOR3", "QUAT", "COLOR", "Vector2", "Vector2i", "Vector3", "Vector3i",
                     "Vector4", "Vector4i", "Quaternion", "Color"}


@pytest.mark.parametrize("engine, dialect", [("godot3", "godot3"), ("godot4", "godot4")])
def test_engine_vectors_are_not_arrays(engine: str, dialect: str) -> None:
    """Every engine blob of a vector type decodes to that type, never to an Array, and the
    text and JSON forms write it as that type (the engine's own var2str/var_to_str)."""
    seen = 0
    for case in engine_cases(engine):
        if case.get("raw") or not case.get("hex") or case.get("type_name") not in VECTOR_TYPE_NAMES:
            continue
        value = gf.loads(bytes.fromhex(case["hex"]), dialect)
        assert isinstance(value, t.Components), case["name"]
        engine_text = case.get("var2str") or case.get("var_to_str")
        assert gf.to_text(value, dialect).split("(")[0] == engine_text.split("(")[0], case["name"]
        if dialect == "godot4":
            assert to_json(value)["type"] == type(value).__name__  # type: ignore[index,call-overload]
        seen += 1
    assert seen >= 4
