"""The text writer's compiled fast path (godot_formats/core/_ctextw.c) against the reference writer.

The reference (``godot_formats.views.text.writer`` with ``COMPILED`` off) states how the engines
print every value; the compiled path must return the very same text, or hand the value back so
that the reference writes it (and raises its own error).  So for any value and any dialect with a
text form, ``to_text`` and ``text_writer`` give the same text or the same error with the fast path
on and off.  Hypothesis feeds both random values of every type, and the engines' own values (the
fixtures' ``var2str`` / ``var_to_str`` records) must come out as the engines printed them.  The
differential tests skip when the compiled path is not built (or GODOT_FORMATS_PURE is set).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any, Callable

import pytest
from conftest import FIXTURES, engine_cases, read_jsonl
from hypothesis import given
from hypothesis import strategies as st
from strategies import TEXT, values

import godot_formats as gf
from godot_formats.configfile.text import parse
from godot_formats.core import accel
from godot_formats.core import types as t
from godot_formats.core.dialects import get_dialect
from godot_formats.views.text import from_text, text_writer, to_text, writer
from godot_formats.views.text.floats import _float_3, _float_40, _float_45, _rtos_fix_3, _rtos_fix_40, _rtos_fix_45
from godot_formats.views.text.style import text_style

needs_c = pytest.mark.skipif(accel.ctextw is None, reason="the compiled text writer is not built in this install "
                             "(or GODOT_FORMATS_PURE is set): nothing to compare")

DIALECTS = ["godot3", "godot4", "godot4.3", "godot4.0"]


@contextlib.contextmanager
def reference() -> Iterator[None]:
    """The Python writer alone, as under GODOT_FORMATS_PURE=1."""
    was = writer.COMPILED
    writer.COMPILED = False
    try:
        yield
    finally:
        writer.COMPILED = was


def outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(e).__name__, str(e))


def check(value: Any, dialect: str) -> tuple[Any, ...]:
    """``value`` written alike with the fast path and without, by to_text and by text_writer."""
    fast = outcome(lambda: to_text(value, dialect))
    fast_many = outcome(lambda: text_writer(dialect)(value))
    with reference():
        ref = outcome(lambda: to_text(value, dialect))
    assert fast == ref
    assert fast_many == ref
    return ref


def served(value: Any, dialect: str) -> Any:
    """What the compiled writer itself answers (None: handed back)."""
    d = get_dialect(dialect)
    fast = writer._compiled(writer._Writer(d, text_style(d)))
    assert fast is not None
    return fast.try_write(value)


# --- random values of every type, every dialect with a text form ----------------------------------------

KEYS = st.one_of(TEXT, st.sampled_from(["a", "b", "é", "\U0001F600", "", "A", "a\"\\"]))
FLOATS = st.one_of(st.floats(), st.floats(width=32), st.sampled_from([0.1, -0.0, 1e20, 5e-324, 1e-300, math.inf]))
INTS = st.one_of(st.integers(-2**31, 2**31), st.integers(-2**64, 2**64))
OBJECTS = st.builds(t.Object, st.sampled_from(["InputEventKey", "Node", "Not an identifier", "_x1"]),
                    st.dictionaries(st.sampled_from(["a", "script", "é\"\\", "x"]),
                                    st.one_of(st.none(), INTS, st.booleans(), TEXT, FLOATS,
                                              st.lists(INTS, max_size=3)), max_size=4))
MATH = st.one_of(
    st.builds(t.Vector2, FLOATS, FLOATS), st.builds(t.Vector3, FLOATS, FLOATS, FLOATS),
    st.builds(t.Vector2i, INTS, INTS), st.builds(t.Color, FLOATS, FLOATS, FLOATS, FLOATS),
    st.builds(t.Rect2, st.builds(t.Vector2, FLOATS, FLOATS), st.builds(t.Vector2, FLOATS, FLOATS)),
    st.builds(t.Transform2D, st.builds(t.Vector2, FLOATS, FLOATS), st.builds(t.Vector2, FLOATS, FLOATS),
              st.builds(t.Vector2, FLOATS, FLOATS)),
    st.builds(t.Quaternion, FLOATS, FLOATS, FLOATS, FLOATS),
)
PACKED = st.one_of(
    st.binary(max_size=6), st.binary(max_size=6).map(bytearray),
    st.lists(st.integers(-2**31, 2**31 - 1), max_size=4).map(t.PackedInt32Array),
    st.lists(st.integers(-2**63, 2**63 - 1), max_size=4).map(t.PackedInt64Array),
    st.lists(st.floats(width=32), max_size=4).map(t.PackedFloat32Array),
    st.lists(st.floats(), max_size=4).map(t.PackedFloat64Array),
    st.lists(st.builds(t.Vector2, FLOATS, FLOATS), max_size=3).map(t.PackedVector2Array),
    st.lists(st.builds(t.Color, FLOATS, FLOATS, FLOATS, FLOATS), max_size=2).map(t.PackedColorArray),
    st.lists(TEXT, max_size=4).map(t.PackedStringArray),
)
LEAVES = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT, MATH, PACKED, OBJECTS)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(children, max_size=4), st.lists(children, max_size=3).map(tuple),
                     st.dictionaries(KEYS, children, max_size=4),
                     st.dictionaries(KEYS, children, max_size=3).map(t.Dictionary),
                     st.builds(t.Object, st.just("Node"), st.dictionaries(KEYS, children, max_size=3)))


ANY = st.recursive(LEAVES, containers, max_leaves=16)


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@given(value=ANY)
def test_random_values_write_alike(dialect: str, value: Any) -> None:
    check(value, dialect)


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@given(data=st.data())
def test_what_the_dialect_holds_writes_alike(dialect: str, data: st.DataObject) -> None:
    check(data.draw(values(dialect)), dialect)


# --- floats: every style's rules, digit for digit ---------------------------------------------------------

CTEXTW: Any = accel.ctextw
STYLES = {3: (_float_3, _rtos_fix_3), 40: (_float_40, _rtos_fix_40), 45: (_float_45, _rtos_fix_45)}
EDGE_FLOATS = [
    0.1, 1e20, -0.0, 0.0, 1.0, -1.0, 0.5, 1 / 3, 2 / 3, 100.0, 1e15, 1e16, 123456789012345.0, 1234567890123456.0,
    0.001, 0.0001, 0.00001, 1e-5, 1e-4, 1e21, 1e22, 1e23, 9007199254740993.0, 2.0 ** 53, 2.0 ** 64, 2.0 ** -1074,
    5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-300, 1e-310, sys.float_info.max, -sys.float_info.max,
    1.401298464324817e-45, 1.1754943508222875e-38, 3.4028234663852886e38, 3.4028235677973366e38, 3.4028236e38,
    0.30000000000000004, 1.5, 2.5, 999999.5, 9999995.0, 0.1 + 0.2, 1e-7, 4.35, 0.3,
    math.nan, -math.nan, struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0],
    struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000001))[0], math.inf, -math.inf,
]


@needs_c
@pytest.mark.parametrize("kind", sorted(STYLES))
@pytest.mark.parametrize("x", EDGE_FLOATS, ids=repr)
def test_edge_floats_print_alike(kind: int, x: float) -> None:
    scalar, real = STYLES[kind]
    assert CTEXTW.format_float(x, kind, False) == scalar(x)
    assert CTEXTW.format_float(x, kind, True) == real(x)


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_edge_floats_write_alike(dialect: str) -> None:
    for x in EDGE_FLOATS:
        assert served(x, dialect) is not None
        check(x, dialect)
        check([x, t.Vector2(x, x), t.PackedFloat64Array([x]), t.PackedFloat32Array([x]), t.Color(x, 0, 0, 1)], dialect)


@needs_c
@pytest.mark.parametrize("kind", sorted(STYLES))
@given(x=st.one_of(st.floats(), st.floats(width=32), st.integers(0, 2**64 - 1).map(
    lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0])))
def test_random_floats_print_alike(kind: int, x: float) -> None:
    scalar, real = STYLES[kind]
    assert CTEXTW.format_float(x, kind, False) == scalar(x)
    assert CTEXTW.format_float(x, kind, True) == real(x)


# --- the engines' own values ------------------------------------------------------------------------------

TEXT_KEY = {"godot3": "var2str", "godot4": "var_to_str"}


def _engine_values() -> list[Any]:
    """Every value an engine printed itself (encode and text_extra records), decoded from its bytes."""
    params = []
    for engine in ("godot3", "godot4"):
        extra = read_jsonl(FIXTURES / engine / "text_extra.jsonl")
        for kind, cases in (("encode", engine_cases(engine)), ("text_extra", extra)):
            for case in cases:
                if case.get("ok"):
                    params.append(pytest.param(engine, case, id=f"{engine}-{kind}-{case['name']}"))
    return params


def _value(case: dict[str, Any], engine: str) -> Any:
    if case.get("raw"):
        return bytes.fromhex(case["hex"])
    return gf.loads(bytes.fromhex(case.get("hex_full_objects") or case["hex"]), engine, allow_objects=True)


@needs_c
@pytest.mark.parametrize("engine, case", _engine_values())
def test_engine_values_write_alike(engine: str, case: dict[str, Any]) -> None:
    value = _value(case, engine)
    ref = check(value, engine)
    if ref[0] == "ok" and ref[1] == case[TEXT_KEY[engine]]:
        assert to_text(value, engine) == case[TEXT_KEY[engine]]


def _configfile_values() -> list[Any]:
    """The values of the engine-written ConfigFile fixtures (Godot 3.2.3's save of a game and of key bindings)."""
    records = [json.loads(line) for line in (FIXTURES / "configfile" / "godot3.jsonl").open(encoding="utf-8")]
    texts = [r["text"] for r in records if r["name"] in ("keybindings", "game_save")]
    return [from_text(text[e.value_start:e.end], "godot3") for text in texts for e in parse(text, "godot3").entries]


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_configfile_values_are_written_in_c(dialect: str) -> None:
    """The common values -- a game's settings and saves -- are the fast path's, not handed back."""
    found = _configfile_values()
    assert len(found) > 10
    for value in found:
        assert served(value, dialect) is not None, value
        check(value, dialect)


COMMON = [None, True, False, 0, -2**63, 2**63 - 1, 1.5, "", "a\"b\\c\n\t\r?'é\U0001F600", [], (), {}, [1, [2, [3]]],
          {"b": 1, "a": {"c": [None]}, "é": 2, "B": 3}, t.Dictionary({"z": 1, "a": 2}), t.Vector2(1, 2),
          t.Vector2i(1, -2), t.Vector3(0.1, 0.2, 0.3), t.Color(1, 0.5, 0.25, 1),
          t.Rect2(t.Vector2(1, 2), t.Vector2(3, 4)), t.Transform2D(t.Vector2(1, 0), t.Vector2(0, 1), t.Vector2(5, 6)),
          t.Quaternion(0, 0, 0, 1), b"\x00\xff", bytearray(b"ab"), t.PackedInt32Array([1, -2]),
          t.PackedFloat32Array([0.1]), t.PackedVector2Array([t.Vector2(1, 2)]), t.PackedStringArray(["a?\n", "'b'"]),
          t.Object("InputEventKey", {"scancode": 65, "pressed": False, "script": None}), t.Object("Node", {})]


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_common_values_are_written_in_c(dialect: str) -> None:
    for value in COMMON:
        if check(value, dialect)[0] == "ok":  # Godot 3 has no Vector2i: the reference's error
            assert served(value, dialect) is not None, value
        else:
            assert dialect == "godot3" and type(value) is t.Vector2i


# --- what is handed back: the reference writes it, errors included ----------------------------------------

class MyList(list):  # type: ignore[type-arg]
    pass


class MyVector(t.Vector2):
    __slots__ = ()


def _self_containing() -> list[Any]:
    a: list[Any] = [1]
    a.append([a])
    return a


def _deep(n: int) -> list[Any]:
    v: list[Any] = []
    for _ in range(n):
        v = [v]
    return v


HANDED_BACK = [
    2**63, -2**63 - 1, t.StringName("a"), t.NodePath("a/b"), {1: 2}, {"a": 1, 2: 3}, {t.StringName("a"): 1},
    t.TypedArray("int", [1]), MyList([1]), _self_containing(), _deep(150), t.Vector2i(2**31, 0), MyVector(1, 2),
    t.Object("Not an identifier", {}), t.Object("Node", {1: 2}),  # type: ignore[dict-item]
    t.EncodedObjectAsID(5), memoryview(b"ab"),
    object(), t.Object("Node", {"script": "res://a\"b.gd"}),
    # values of the model no constructor makes: a vector of the wrong size
    tuple.__new__(t.Vector2, (1.0, 2.0, 3.0)), tuple.__new__(t.Color, (1.0,)), tuple.__new__(t.Vector2i, (1,)),
]


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("value", HANDED_BACK, ids=lambda v: type(v).__name__)
def test_the_rest_is_the_references(dialect: str, value: Any) -> None:
    check(value, dialect)
    check([value], dialect)
    check({"k": value}, dialect)


@needs_c
def test_depth_past_godot4s_limit_is_handed_back() -> None:
    assert served(_deep(100), "godot4") is not None
    assert served(_deep(101), "godot4") is None  # Godot 4 writes [] past its max_recursion: the reference's
    assert served(_deep(500), "godot3") is not None
    for n in (99, 100, 101, 102, 1500):
        for dialect in DIALECTS:
            check(_deep(n), dialect)
            check([t.Object("Node", {"a": _deep(n)})], dialect)


@needs_c
def test_deep_nesting_needs_no_recursion() -> None:
    value = _deep(200_000)
    for dialect in ("godot3", "godot4"):
        check(value, dialect)


@needs_c
def test_a_failing_getter_is_handed_back() -> None:
    class Weird:
        @property
        def x(self) -> float:
            raise RuntimeError("no")

    rect = t.Rect2(Weird(), t.Vector2(3, 4))  # type: ignore[arg-type]
    for dialect in DIALECTS:
        check(rect, dialect)


@needs_c
def test_the_switch_turns_the_fast_path_off() -> None:
    d = get_dialect("godot4")
    assert writer._compiled(writer._Writer(d, text_style(d))) is not None
    assert writer._compiled(writer._Writer(d, text_style(d), resources=lambda v: None)) is None
    assert writer._compiled(writer._Writer(d, text_style(d), base64_bytes=True)) is None
    with reference():
        assert writer._compiled(writer._Writer(d, text_style(d))) is None


def test_pure_mode_has_no_compiled_writer() -> None:
    code = "from godot_formats.core import accel; print(accel.ctextw is None)"
    env = {**os.environ, "GODOT_FORMATS_PURE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=str(FIXTURES.parent))
    assert out.stdout.strip() == "True"


@needs_c
def test_writing_does_not_leak() -> None:
    value = [dict(zip("abcdefgh", COMMON)) for _ in range(20)] + COMMON + HANDED_BACK[:4]
    write = text_writer("godot4")
    for _ in range(50):
        write(value[:-4])
        outcome(lambda: write(value))
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(500):
            write(value[:-4])
            outcome(lambda: write(value))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 200_000, grown  # one leaked object per write would be well past this
