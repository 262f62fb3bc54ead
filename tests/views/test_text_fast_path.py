"""The text parser's compiled fast path (godot_formats/core/_ctext.c) against the reference parser.

The reference (``godot_formats.views.text.parser`` with ``COMPILED`` off) states the grammar; the
compiled path must give the same value (same types, same data: ``keys.same_value``) and the same
end offset, or hand the text back so that the reference gives its own answer.  So for any text,
from any start, both backends give the same result or the same error (class and message, offset
included).  Hypothesis feeds both what ``to_text`` writes for random values of both dialects, and
damaged text: truncations, mutations, random characters, random bytes decoded as files are.  The
differential tests skip when the compiled path is not built (or GODOT_FORMATS_PURE is set).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any, Callable

import pytest
from conftest import FIXTURES, budget
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import TEXT, values

from godot_formats.configfile.text import parse
from godot_formats.core import accel
from godot_formats.core import types as t
from godot_formats.core.dialects import get_dialect
from godot_formats.core.errors import EncodeError
from godot_formats.core.keys import GODOT3_KEYS, GODOT4_KEYS, same_value
from godot_formats.views.text import parser, to_text
from godot_formats.views.text.parser import from_text, read_value

needs_c = pytest.mark.skipif(accel.ctext is None, reason="the compiled text parser is not built in this install "
                             "(or GODOT_FORMATS_PURE is set): nothing to compare")

DIALECTS = ["godot3", "godot4"]


@contextlib.contextmanager
def reference() -> Iterator[None]:
    """The Python parser alone, as under GODOT_FORMATS_PURE=1."""
    was = parser.COMPILED
    parser.COMPILED = False
    try:
        yield
    finally:
        parser.COMPILED = was


def outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(e).__name__, str(e))


def types_of(value: Any) -> list[str]:
    """Every type in ``value``, containers walked (an explicit stack), in order: exact types compared."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        out.append(type(v).__qualname__)
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, t.Dictionary):
            for k, x in v.items():
                stack.extend((k, x))
        elif isinstance(v, dict):
            for k, x in v.items():
                stack.extend((k, x))
        elif isinstance(v, t.Object):
            out.append(v.class_name)
            for k, x in v.properties.items():
                stack.extend((k, x))
    return out


def assert_alike(fast: tuple[Any, ...], ref: tuple[Any, ...]) -> None:
    if ref[0] == "error" or fast[0] == "error":
        assert fast == ref
        return
    got, want = fast[1], ref[1]
    assert types_of(got) == types_of(want)
    assert same_value(got, want), (got, want)
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == 2 and type(want[1]) is int:
        assert got[1] == want[1]  # read_value's end


def both(fn: Callable[[], Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = outcome(fn)
    with reference():
        ref = outcome(fn)
    return fast, ref


def check(text: str, dialect: str, start: int = 0, max_depth: int | None = None) -> None:
    """``text`` read alike by both backends, whole (from_text) and as a value among other text (read_value)."""
    extra = {} if max_depth is None else {"max_depth": max_depth}
    assert_alike(*both(lambda: from_text(text, dialect, **extra)))
    assert_alike(*both(lambda: read_value(text, start, dialect, **extra)))


def served(text: str, dialect: str, start: int = 0) -> Any:
    """What the compiled reader itself answers (None: handed back)."""
    reader = parser._compiled(get_dialect(dialect))
    assert reader is not None
    return reader.read(text, start, 100, False)


# --- what to_text writes: every type, both dialects ------------------------------------------------------

@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@given(data=st.data())
def test_what_to_text_writes_reads_alike(dialect: str, data: st.DataObject) -> None:
    value = data.draw(values(dialect))
    try:
        text = to_text(value, dialect)
    except EncodeError:
        assume(False)
        raise
    check(text, dialect)
    check("key = " + text + " ; more\nnext=1", dialect, start=5)  # read_value in place, as a file's reader does


OBJECTS = st.builds(t.Object, st.sampled_from(["InputEventKey", "Node", "EncodedObjectAsID"]),
                    st.dictionaries(st.sampled_from(["a", "script", "object_id", "é\"\\", "x"]),
                                    st.one_of(st.none(), st.integers(-5, 2**64), st.booleans(), TEXT,
                                              st.lists(st.integers(), max_size=3)), max_size=4))


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@given(obj=st.lists(OBJECTS, max_size=3))
def test_objects_read_alike(dialect: str, obj: list[t.Object]) -> None:
    try:
        text = to_text(obj, dialect)
    except EncodeError:
        assume(False)
        raise
    check(text, dialect)


# --- the common grammar is the fast path's (it must not hand everything back) ------------------------------

def _fixture_values() -> list[str]:
    """The value texts of the engine-written ConfigFile fixtures (Godot 3.2.3's save of a game and of key bindings)."""
    records = [json.loads(line) for line in (FIXTURES / "configfile" / "godot3.jsonl").open(encoding="utf-8")]
    texts = [r["text"] for r in records if r["name"] in ("keybindings", "game_save")]
    return [text[e.value_start:e.end] for text in texts for e in parse(text, "godot3").entries]


COMMON = [
    "null", "true", "false", "nil", "0", "-0", "007", "9223372036854775807", "-9223372036854775808",
    "1.5", "-2.25e-3", "1e5", "1.", "1.e5", "12E+2", "inf", "-inf", "inf_neg", "nan", "-nan", "inf.0", "nan.0",
    '""', '"plain"', '"a\\"b\\\\c\\n\\t\\r\\b\\f\\a\\v\\q\\é"', '"é\\"ü"', '"\U0001F600\\n"',
    "[]", "[ 1, 2, 3 ]", "{}", '{ "a": 1, "b": [ 2, { "c": null } ] }', '{ 1: 2, null: 3, "1": 4 }',
    '{ 1: 2, 1.0: 3, true: 4 }', "{ [1]: 2 }",
    "Vector2( 1, 2 )", "Vector2(1.5,-2)", "Color( 1, 0.5, 0.25, 1 )", "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )",
    "Rect2( 0, 0, 1, 1 )", "Quat( 0, 0, 0, 1 )", "Plane( 0, 1, 0, 2 )", "AABB( 0, 0, 0, 1, 1, 1 )",
    "Basis( 1, 0, 0, 0, 1, 0, 0, 0, 1 )", "PoolIntArray( 1, 2, 3 )", "PoolByteArray( 0, 255, 256 )",
    "PoolRealArray( 1.5 )", "PoolStringArray( \"a\", \"b\\n\" )",
    "PoolStringArray(  )", "PoolVector2Array( 1, 2, 3, 4 )", "PoolColorArray(  )", "PoolIntArray(  )",
    'Object(InputEventKey,"scancode":65,"pressed":false,"script":null)', "Object(Node,)",
    'Object(EncodedObjectAsID,"object_id":5,"script":null)',
    " ; a comment\n  [ 1 ; another\n , 2 ]",
]
GODOT4_COMMON = ["Vector2i( 1, 2 )", "Vector4( 1, 2, 3, 4 )", "PackedInt64Array(1, 2)", "PackedStringArray()",
                 "Projection(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)", "[1, 2,]", '{"a": 1,}',
                 "Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)", "PackedVector4Array(1, 2, 3, 4)"]


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_common_grammar_is_read_in_c(dialect: str) -> None:
    texts = COMMON + (GODOT4_COMMON if dialect == "godot4" else [])
    for text in texts:
        assert served(text, dialect) is not None, text
        check(text, dialect)
    values = _fixture_values()
    assert len(values) > 10
    for text in values:
        assert served(text, dialect) is not None, text
        check(text, dialect)


HANDED_BACK = [
    "", "   ", "[1, 2,]", "[,]", "[1,,2]", "{1}", '{"a" 1}', "Vector2(1)", "Vector2(1, )", "Vector2 1, 2",
    '"\\u00e9"', '"\\U01F600"', '"unterminated', '"ends in \\', "&\"sname\"", "@\"sname\"", "#ff0000", "#abc",
    "NodePath(\"a/b\")", "RID(5)", "Callable()", "Signal()", 'Resource("res://x.tres")', "ExtResource(1)",
    "SubResource(\"a\")", "Array[int]([1])", 'Dictionary[String, int]({"a": 1})', "PackedByteArray(\"AAE=\")",
    "Vector4(1, 2, 3, 4)", "PoolIntArray(inf)", "Vector2i(nan, 1)", "9223372036854775808", "-9223372036854775809",
    "123456789012345678901234567890", "-", "- 1", "+1", ".5", "1e", "1e+", "infinity", "nan_", "inf_negx",
    "Object(Node)", "Object(Node,1:2)", 'Object("Node",)', "Object(Node,\"a\" 1)", "Object(Node,\"a\":1,,)",
    "tru", "True", "[1 2]", "{\"a\":1 \"b\":2}", "]", "}", ")", ":", ",", "=", "é", "\x00[1]", "[1]]", "{}}",
]


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("text", HANDED_BACK)
def test_what_the_fast_path_does_not_read_stays_the_references(dialect: str, text: str) -> None:
    check(text, dialect)
    check("x=" + text, dialect, start=2)


# --- numbers at their edges ---------------------------------------------------------------------------------

@needs_c
@given(n=st.integers(-(2**70), 2**70), zeros=st.integers(0, 3), dialect=st.sampled_from(DIALECTS))
def test_integers_read_alike(n: int, zeros: int, dialect: str) -> None:
    digits = str(abs(n))
    text = ("-" if n < 0 else "") + "0" * zeros + digits
    check(text, dialect)
    check(f"[{text}, {text}]", dialect)


@needs_c
@given(x=st.floats(allow_nan=True, allow_infinity=True), style=st.sampled_from(["repr", "e", "g", "f"]),
       dialect=st.sampled_from(DIALECTS))
def test_floats_read_alike(x: float, style: str, dialect: str) -> None:
    text = {"repr": repr(x), "e": f"{x:e}", "g": f"{x:.17g}", "f": f"{x:f}"}[style]
    check(text, dialect)
    check(f"Vector2( {text}, 1 )", dialect)


# --- damaged and random text ----------------------------------------------------------------------------------

ALPHABET = st.sampled_from(list('[]{}(),:="\\;\n -.0123456789eEnaiftruldxu_&#@é') + [
    "null", "true", "inf", "inf_neg", "nan", "Vector2", "Object", "PoolIntArray", "PoolStringArray", "Color",
    "Array", "Dictionary", "\\u", "\\n", "\U0001F600", "\udc80", "\x00"])


@needs_c
@given(pieces=st.lists(ALPHABET, max_size=40), dialect=st.sampled_from(DIALECTS), start=st.integers(-2, 50))
def test_random_text_reads_alike(pieces: list[str], dialect: str, start: int) -> None:
    text = "".join(pieces)
    check(text, dialect, start=max(0, min(start, len(text))))
    assert_alike(*both(lambda: read_value(text, start, dialect)))


@needs_c
@given(data=st.binary(max_size=80), dialect=st.sampled_from(DIALECTS))
def test_random_bytes_read_alike(data: bytes, dialect: str) -> None:
    for text in (data.decode("utf-8", "surrogateescape"), data.decode("latin-1")):
        check(text, dialect)


@needs_c
@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
@given(data=st.data())
def test_truncated_and_mutated_text_reads_alike(dialect: str, data: st.DataObject) -> None:
    value = data.draw(values(dialect, max_leaves=6))
    try:
        text = to_text(value, dialect)
    except EncodeError:
        assume(False)
        raise
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for cut in sorted({rng.randrange(len(text) + 1) for _ in range(8)}):
        check(text[:cut], dialect)
    for _ in range(8):
        i = rng.randrange(len(text) + 1)
        mutated = text[:i] + rng.choice('[]{}(),:"\\; 0-.xé') + text[i + rng.randrange(2):]
        check(mutated, dialect)


@needs_c
def test_the_fuzzer_meets_the_common_grammar() -> None:
    """A seeded run over every prefix of the fixture values and the common forms (cheap, deterministic)."""
    rng = random.Random(5)
    for text in COMMON + _fixture_values():
        for dialect in DIALECTS:
            for cut in range(len(text) + 1):
                check(text[:cut], dialect)
            for _ in range(budget(20)):
                i = rng.randrange(len(text) + 1)
                check(text[:i] + rng.choice('[]{}(),:"\\; 0-.xé\x00') + text[i:], dialect)


# --- depth, keys, limits ---------------------------------------------------------------------------------------

@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_depth_is_the_references(dialect: str) -> None:
    deep = "[" * 300 + "]" * 300
    for limit in (0, 1, 2, 299, 300, 301, -1, 2**70, -(2**70)):
        check(deep, dialect, max_depth=limit)
    check('{"a": ' * 40 + "1" + "}" * 40, dialect, max_depth=40)
    check('{"a": ' * 40 + "1" + "}" * 40, dialect, max_depth=39)
    check("Object(A," + '"a": Object(A,' * 20 + ")" * 21, dialect, max_depth=21)
    check("Object(A," + '"a": Object(A,' * 20 + ")" * 21, dialect, max_depth=20)
    # far deeper than any recursion could go: the explicit stack grows on the heap
    huge = "[" * 200_000 + "]" * 200_000
    assert served(huge, dialect) is None  # deeper than the reader's max_depth of 100: handed back
    fast, ref = both(lambda: read_value(huge, 0, dialect, max_depth=10**9))
    assert fast[0] == "ok" and ref[0] == "ok"
    assert_alike(fast, ref)


@needs_c
@pytest.mark.parametrize("dialect", DIALECTS)
def test_keys_nested_past_the_limit_are_the_references(dialect: str) -> None:
    for levels in (199, 200, 201):
        check("{" + "[" * levels + "]" * levels + ": 1}", dialect, max_depth=500)


@needs_c
def test_dictionaries_keep_the_references_key_rules() -> None:
    check('{ 1: "a", 1.0: "b", true: "c", "1": "d", 1: "e" }', "godot4")
    check('{ nan: 1, nan: 2 }', "godot4")
    check('{ [1]: 1, [1]: 2, {}: 3, {}: 4 }', "godot3")
    check('{ [1]: 1, [1]: 2, {}: 3, {}: 4 }', "godot4")


@pytest.mark.parametrize("rules", [GODOT3_KEYS, GODOT4_KEYS])
@given(pairs=st.lists(st.tuples(st.one_of(TEXT, st.integers(-3, 3), st.none()), st.integers()), max_size=8))
def test_plain_keys_make_the_dictionary_the_engine_makes(rules: Any, pairs: list[tuple[Any, Any]]) -> None:
    """_make_dictionary's shortcut (keys all strings, ints or null: Python's dict) is the general rule's answer."""
    got = parser._make_dictionary(pairs, rules, {})
    gd = t.Dictionary(key_rules=rules)
    gd._fill(pairs, {})
    want = dict(gd.items())
    assert type(got) is dict and list(got.items()) == list(want.items())
    assert [type(k) for k in got] == [type(k) for k in want]


# --- memory and the switch ---------------------------------------------------------------------------------------

@needs_c
@pytest.mark.slow
def test_no_references_are_leaked() -> None:
    texts = COMMON + GODOT4_COMMON + HANDED_BACK + _fixture_values()
    reader = parser._compiled(get_dialect("godot4"))

    def round_of_reads() -> None:
        for text in texts:
            for start in (0, 1):
                reader.read(text, start, 100, False)
                reader.read(text, start, 2, True)

    tracemalloc.start()
    try:
        for _ in range(100):  # the interpreter's free lists and caches fill once, under tracing too
            round_of_reads()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(500):
            round_of_reads()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 32 * 1024  # 500 rounds of ~600 reads: a leak of one object a read would be megabytes


def test_pure_turns_the_fast_path_off() -> None:
    code = ("from godot_formats.core import accel; from godot_formats.views.text import parser; "
            "print(accel.ctext is None, parser.COMPILED, parser.from_text('[1, Vector2(1, 2)]', 'godot3'))")
    env = dict(os.environ, GODOT_FORMATS_PURE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[:2] == ["True", "False"]
    assert "Vector2(1.0, 2.0)" in out.stdout
