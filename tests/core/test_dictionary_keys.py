"""Dictionary key identity (godot_formats.core.keys): the engines' equality, linear cost, no hash flooding.

The expected entries come from the engines: ``fixtures/godot3/dictionary_keys.jsonl`` and
``fixtures/godot4/dictionary_keys.jsonl`` hold Dictionaries with two keys that differ only in
NaN, -0.0 or by being two objects, as Godot 3.2.3's ``bytes2var`` and Godot 4.6's
``bytes_to_var`` read them (``hex``: what they wrote back). ``python3 tests/core/test_dictionary_keys.py``
asks the engines again and rewrites both files (needs ``scripts/install-oracles.sh``).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import given, settings
from strategies import hostile_keys, values

import godot_formats as gf
from godot_formats.core import keys
from godot_formats.core import types as t
from godot_formats.core.keys import GODOT3_KEYS, GODOT4_KEYS, godot_key, same_value

u = struct.Struct("<I").pack
NAN_BITS = (0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001)

#: Wire ids per engine: Dictionary, float, int, Array, Vector2, and the packed arrays.
IDS = {
    "godot3": {"dict": 18, "float": 3, "int": 2, "array": 19, "v2": 5, "pint": 21, "pfloat": 22,
               "pbyte": 20, "pstr": 23},
    "godot4": {"dict": 27, "float": 3, "int": 2, "array": 28, "v2": 5, "pint": 30, "pfloat": 32,
               "pbyte": 29, "pstr": 34},
}


def key_cases(engine: str) -> list[dict[str, str]]:
    """Dictionaries of two or three entries whose keys are one key or two, depending on the engine."""
    i = IDS[engine]
    f64 = lambda bits: u(i["float"] | 1 << 16) + struct.pack("<Q", bits)  # noqa: E731
    iv = lambda n: u(i["int"]) + u(n)  # noqa: E731
    v2 = lambda a, b: u(i["v2"]) + struct.pack("<ff", a, b)  # noqa: E731
    nan = f64(NAN_BITS[0])
    elems = {"float": nan, "vec": v2(math.nan, 0), "arr": u(i["array"]) + u(1) + nan,
             "dkey": u(i["dict"]) + u(1) + nan + iv(0)}
    wraps = {"array": lambda e: u(i["array"]) + u(1) + e,
             "dict_key": lambda e: u(i["dict"]) + u(1) + e + iv(0),
             "dict_value": lambda e: u(i["dict"]) + u(1) + iv(0) + e}

    def twice(k: bytes, k2: bytes | None = None) -> bytes:
        return u(i["dict"]) + u(2) + k + iv(1) + (k if k2 is None else k2) + iv(2)

    cases = {
        "nan_same": twice(nan),
        "nan_payloads": u(i["dict"]) + u(3) + b"".join(f64(b) + iv(n) for n, b in enumerate(NAN_BITS, 1)),
        "nan_float32": twice(u(i["float"]) + u(0x7FC00000)),
        "nan_beside_array_key": u(i["dict"]) + u(3) + nan + iv(1) + u(i["array"]) + u(0) + iv(5) + nan + iv(2),
        "negative_zero": twice(f64(1 << 63), f64(0)),
        "vector_nan": twice(v2(math.nan, 0)),
        "vector_negative_zero": twice(v2(-0.0, 0), v2(0.0, 0)),
        "array_nan_payloads": twice(u(i["array"]) + u(1) + nan, u(i["array"]) + u(1) + f64(NAN_BITS[1])),
        "array_negative_zero": twice(u(i["array"]) + u(1) + f64(1 << 63), u(i["array"]) + u(1) + f64(0)),
        "array_int_float": twice(u(i["array"]) + u(1) + iv(1), u(i["array"]) + u(1) + f64(0x3FF0000000000000)),
        "dictionary": twice(u(i["dict"]) + u(1) + iv(1) + iv(1)),
        "empty_dictionary": twice(u(i["dict"]) + u(0)),
        "array_of_dictionary": twice(u(i["array"]) + u(1) + u(i["dict"]) + u(0)),
        "packed_int": twice(u(i["pint"]) + u(1) + u(1)),
        "packed_float": twice(u(i["pfloat"]) + u(1) + struct.pack("<f", 1.0)),
        "packed_byte": twice(u(i["pbyte"]) + u(1) + b"\1\0\0\0"),
        "packed_string": twice(u(i["pstr"]) + u(1) + u(2) + b"a\0\0\0"),
    }
    if engine == "godot4":
        # Godot 3.2.3 reads two NaN PoolRealArray keys, then writes freed memory back out
        # ("[Deleted Object]"): no truth to record.  Its var2str shows two entries.
        cases["packed_float_nan"] = twice(u(i["pfloat"]) + u(1) + struct.pack("<f", math.nan))
    for wn, wrap in wraps.items():
        for en, e in elems.items():
            cases[f"nan_in_{wn}/{en}"] = twice(wrap(e))
    return [{"name": name, "hex": blob.hex()} for name, blob in cases.items()]


def _fixture(engine: str) -> list[dict[str, Any]]:
    return read_jsonl(FIXTURES / engine / "dictionary_keys.jsonl")


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_fixture_covers_every_case(engine: str) -> None:
    assert [c["name"] for c in _fixture(engine)] == [c["name"] for c in key_cases(engine)]


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_keys_are_one_or_two_as_the_engine_reads_them(engine: str) -> None:
    """Decoded, then written back: the engine's bytes, so the same entries, first key and last value."""
    for case in _fixture(engine):
        value = gf.loads(bytes.fromhex(case["in_hex"]), engine)
        assert gf.dumps(value, engine).hex() == case["hex"], case["name"]
        again = gf.loads(bytes.fromhex(case["in_hex"]), engine)  # deterministic: the same every time
        assert len(again) == len(value), case["name"]


def test_nan_keys_are_one_key_whatever_else_the_dictionary_holds() -> None:
    """Two NaN keys are two entries, also when an Array key is present."""
    for engine in ("godot3", "godot4"):
        i = IDS[engine]
        nan = u(i["float"] | 1 << 16) + struct.pack("<d", math.nan)
        alone = gf.loads(u(i["dict"]) + u(2) + nan + u(i["int"]) + u(1) + nan + u(i["int"]) + u(2), engine)
        beside = gf.loads(u(i["dict"]) + u(3) + nan + u(i["int"]) + u(1) + u(i["array"]) + u(0) + u(i["int"])
                          + u(5) + nan + u(i["int"]) + u(2), engine)
        assert len(alone) == 1 and list(alone.values()) == [2]
        assert len(beside) == 2 and [v for k, v in beside.items() if isinstance(k, float)] == [2]


def test_rules_follow_the_dialect() -> None:
    assert gf.get_dialect("godot3").key_rules is GODOT3_KEYS
    assert gf.get_dialect("godot3.0").key_rules is GODOT3_KEYS
    assert gf.get_dialect("godot4.0").key_rules is GODOT4_KEYS
    assert gf.get_dialect("godot4-double").key_rules is GODOT4_KEYS
    d = t.Dictionary([([math.nan], 1), ([math.nan], 2)], key_rules=GODOT3_KEYS)
    assert len(d) == 1 and len(t.Dictionary([([math.nan], 1), ([math.nan], 2)])) == 2
    same = {"a": 1}
    g3 = t.Dictionary([(same, 1), ({"a": 1}, 2)], key_rules=GODOT3_KEYS)
    assert len(g3) == 2 and g3[same] == 1  # by reference: only the same object finds it
    assert len(t.Dictionary([(same, 1), ({"a": 1}, 2)])) == 1


def test_rules_survive_a_copy_and_a_pickle() -> None:
    import pickle
    d = t.Dictionary([({}, 1), ({}, 2)], key_rules=GODOT3_KEYS)
    back = pickle.loads(pickle.dumps(d))
    assert back.key_rules == GODOT3_KEYS and len(back) == 2
    td = t.TypedDictionary("Array", "int", [([math.nan], 1), ([math.nan], 2)], key_rules=GODOT3_KEYS)
    assert len(pickle.loads(pickle.dumps(td))) == 1


# --- linear cost: containers are digested once -------------------------------------

class _Counting:
    """Counts the digests made and the bytes fed to them (instead of timing anything)."""

    def __init__(self) -> None:
        self.digests = 0
        self.fed = 0

    def __call__(self) -> Any:
        counter = self

        class Digest:
            def __init__(self) -> None:
                counter.digests += 1
                self._h = hashlib.blake2b(digest_size=20)

            def update(self, data: bytes) -> None:
                counter.fed += len(data)
                self._h.update(data)

            def digest(self) -> bytes:
                return self._h.digest()

        return Digest()


def _nested_key_input(depth: int, width: int) -> bytes:
    """each Dictionary is the only key of the next; the innermost holds ``width`` ints."""
    return ((u(27) + u(1)) * depth + u(28) + u(width) + (u(2) + u(7)) * width + u(0) * depth)


@pytest.mark.parametrize("depth,width", [(1024, 0), (1000, 10_000), (300, 3000)])
def test_nested_keys_cost_their_size_once(monkeypatch: pytest.MonkeyPatch, depth: int, width: int) -> None:
    counting = _Counting()
    monkeypatch.setattr(keys, "_digest", counting)
    data = _nested_key_input(depth, width)
    value = gf.loads(data)
    for _ in range(depth):
        (value,) = value  # the one key
    assert len(value) == width
    # One digest per container used as a key, and at most a few bytes hashed per input byte
    # (the quadratic version fed every level's whole subtree again: depth * width * 13 bytes).
    assert counting.digests <= depth + 1
    assert counting.fed <= 4 * len(data) + 64 * depth


def test_user_built_dictionary_of_nested_keys_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting()
    monkeypatch.setattr(keys, "_digest", counting)
    inner: Any = [1, 2, 3]
    chain_: list[Any] = []
    for _ in range(500):
        inner = [inner]
        chain_.append(inner)
    memo: keys.Memo = {}
    for k in chain_:  # one memo across calls: each list is digested once
        godot_key(k, GODOT4_KEYS, memo)
    assert counting.digests == 501


# --- hash flooding ---------------------------------------------------------------------

def _floats_hashing_to_1() -> list[float]:
    """Floats x with hash(x) == 1: 2**(61*j) (Python reduces floats modulo 2**61 - 1)."""
    out = [2.0 ** (61 * j) for j in range(-17, 17)]
    assert all(hash(x) == 1 for x in out) and len(set(out)) == len(out)
    return out


def test_keys_built_from_colliding_floats_do_not_collide() -> None:
    """Arrays of floats with one hash do not share one hash (a 1 MiB input once took 32 s)."""
    xs = _floats_hashing_to_1()
    arrays = [[a, b, c] for a in xs[:20] for b in xs[:20] for c in xs[:20]]  # 8000 keys, one old hash
    d = t.Dictionary((k, i) for i, k in enumerate(arrays))
    assert len(d) == len(arrays)
    hashes = {hash(gk) for gk in d._items}
    assert len(hashes) >= len(arrays) - 2  # 64-bit hashes of distinct bytes: collisions are chance


def test_vector_hashes_do_not_inherit_float_collisions() -> None:
    """Vector2 keys (godot4-double) do not keep the collisions of the inner tuple."""
    xs = _floats_hashing_to_1()
    vectors = [t.Vector2(a, b) for a in xs for b in xs]
    assert len({tuple.__hash__(v) for v in vectors}) < 5  # what tuple hashing gives
    assert len({hash(v) for v in vectors}) >= len(vectors) - 2
    blob = gf.dumps({v: 0 for v in vectors}, "godot4-double")
    assert len(gf.loads(blob, "godot4-double")) == len(vectors)
    assert hash(t.Vector2(-0.0, 1)) == hash(t.Vector2(0.0, 1))
    assert hash(t.Vector2i(2**70, 1)) == hash(t.Vector2i(2**70, 1))


@settings(deadline=None)
@given(values("godot4"), values("godot4"))
def test_equal_keys_have_equal_identities(a: Any, b: Any) -> None:
    for rules in (GODOT3_KEYS, GODOT4_KEYS):
        assert godot_key(a, rules) == godot_key(a, rules)
        if godot_key(a, rules) == godot_key(b, rules):
            assert same_value(a, b)


@settings(deadline=None)
@given(values("godot4"))
def test_same_value_of_a_value_and_its_round_trip(v: Any) -> None:
    assert same_value(v, gf.loads(gf.dumps(v, "godot4"), "godot4"))


# --- errors inside the contract -------------------------------------------------------------

def test_encoder_range_errors_are_encode_errors() -> None:
    """Neither ValueError (int to str) nor struct.error escapes dumps."""
    for bad in (10**100000, t.RID(2**70), t.EncodedObjectAsID(-1), t.Signal("s", 2**64), [{"k": 10**5000}]):
        with pytest.raises(gf.EncodeError):
            gf.dumps(bad, "godot4")
    with pytest.raises(gf.EncodeError, match=r"\[0\]\['k'\]: int of"):
        gf.dumps([{"k": 10**5000}], "godot4")
    with pytest.raises(TypeError, match="strings"):
        t.NodePath(names=[1])  # type: ignore[list-item]


def _deep(depth: int) -> Any:
    v: Any = [t.Vector2i(1, 2)]
    for _ in range(depth):
        v = [v]
    return v


def test_repr_of_deep_values_has_no_recursion() -> None:
    deep = _deep(5000)
    d = t.Dictionary([(deep, 1)])
    assert repr(d).startswith("Dictionary({[[[") and repr(d).count("[") == 5001
    assert t.value_repr(deep, 20) == "[" * 20 + "..."
    loop: list[Any] = []
    loop.append(loop)
    assert t.value_repr(loop) == "[[...]]"
    assert repr(t.Dictionary([(loop, 1)])) == "Dictionary({[[...]]: 1})"  # a repr that does not end runs out of memory
    obj = t.Object("Node", {"p": _deep(3000)})
    assert repr(obj).startswith("Object(class_name='Node', properties={'p': [[[")


def test_convert_loss_under_a_deep_key_is_a_loss_not_a_recursion_error() -> None:
    """A loss under a deeply nested key does not call repr on the key (RecursionError)."""
    key = _deep(1000)
    value = t.Dictionary([(key, t.Vector2i(3, 4))])
    new, losses = gf.convert_value(value, "godot4", "godot3", policy="lossy")
    assert len(losses) == 2 and all(len(loss.path) < 2000 for loss in losses)
    with pytest.raises(gf.ConversionError):
        gf.convert_value(value, "godot4", "godot3")


def test_convert_renders_each_key_in_bounded_text() -> None:
    """Every loss under a key names the key in bounded text, walking the key only that far (rendered
    whole, 2000 losses under a 50,000-element key took 86 s)."""
    big_key = list(range(50_000))
    value = t.Dictionary([(big_key, [t.Vector2i(i, i) for i in range(2000)])])
    _, losses = gf.convert_value(value, "godot4", "godot3", policy="lossy")
    assert len(losses) == 2000
    assert sum(len(loss.path) for loss in losses) < 2000 * 120


def _make_fixtures() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import oracles
    for engine, decode, text in (("godot3", oracles.godot3_decode, "var2str"),
                                 ("godot4", oracles.godot4_decode, "var_to_str")):
        records = decode(key_cases(engine))
        path = FIXTURES / engine / "dictionary_keys.jsonl"
        with open(path, "w") as f:
            for r in records:
                assert r["ok"], r
                f.write(json.dumps({"name": r["name"], "in_hex": r["in_hex"], "hex": r["hex"],
                                    text: r[text]}) + "\n")
        print(f"wrote {path} ({len(records)} cases)")


if __name__ == "__main__":
    _make_fixtures()


@settings(deadline=None)
@given(hostile_keys())
def test_hostile_keys_decode_to_a_fixed_point(d: Any) -> None:
    """Keys that nest, collide or hold NaN: written, read and written again, the same bytes, in both majors."""
    for dialect in ("godot3", "godot4"):
        blob = gf.dumps(d, dialect)
        back = gf.loads(blob, dialect)
        again = gf.dumps(back, dialect)
        assert gf.dumps(gf.loads(again, dialect), dialect) == again
        assert gf.dumps(gf.loads(blob, dialect), dialect) == again  # deterministic


@pytest.mark.parametrize("view", ["text", "json", "convert"])
def test_nested_keys_cost_their_size_once_in_every_reader(monkeypatch: pytest.MonkeyPatch, view: str) -> None:
    """from_text, from_json and convert rebuild Dictionaries too: one digest per container there as well."""
    from godot_formats.views import jsonform
    depth, width = 90, 500  # under Godot 4 text's recursion cap, so the text holds every level
    value = gf.loads(_nested_key_input(depth, width))
    counting = _Counting()
    monkeypatch.setattr(keys, "_digest", counting)
    if view == "text":
        back = gf.from_text(gf.to_text(value))
    elif view == "json":
        back = jsonform.from_json(jsonform.to_json(value))
    else:
        back, _ = gf.convert_value(value, "godot4", "godot3")
    assert counting.digests <= depth + 1
    assert counting.fed <= 8 * len(_nested_key_input(depth, width)) + 64 * depth
    if view != "convert":
        assert gf.dumps(back) == gf.dumps(value)


def test_encode_error_under_a_deep_key_names_a_bounded_path() -> None:
    """The error path of dumps does not call repr on the key (RecursionError past ~1000 levels)."""
    value = t.Dictionary([(_deep(1020), {"bad": 10**30})])
    with pytest.raises(gf.EncodeError) as info:
        gf.dumps(value, "godot4")
    assert "does not fit in 64 bits" in str(info.value) and len(str(info.value)) < 500


def test_equality_is_about_the_data_whatever_the_engines_key_rules() -> None:
    """Godot 3 keeps two {} keys apart by reference; two decodes of those bytes are still equal data."""
    blob = bytes.fromhex("12000000020000001200000000000000020000000100000012000000000000000200000002000000")
    first, second = gf.loads(blob, "godot3"), gf.loads(blob, "godot3")
    assert len(first) == 2 and first == second
    assert first != gf.loads(blob[:-4] + u(3), "godot3")  # another value
    nan = float("nan")
    assert t.Dictionary([([nan], 1)]) == t.Dictionary([([nan], 1)])  # apart as keys in Godot 4, same data
