"""PackedStringArray kept in wire form: what the engines make of each layout we take that path for.

A decoded PackedStringArray keeps the bytes it was read from when they are ASCII and exactly
what the engine writes (zero padding; in Godot 3, lengths that count a final NUL), and makes
its strings when first read.  Everything else is decoded element by element.  Either way the
value and its re-encoding must be the engine's: fixtures/godot3/packed_strings.jsonl and
fixtures/godot4/packed_strings.jsonl hold each engine's ``bytes2var``/``bytes_to_var`` of the
inputs below, re-encoded by the engine (``hex``).  ``python3 tests/core/test_packed_strings.py``
rebuilds them with the oracles.
"""

from __future__ import annotations

import json
import pickle
import struct
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import given
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.core import types as t

TYPE_ID = {"godot3": 23, "godot4": 34}


def _element(text: bytes, length: int | None = None, pad: bytes | None = None) -> bytes:
    n = len(text) if length is None else length
    return struct.pack("<I", n) + text + (b"\0" * (-len(text) % 4) if pad is None else pad)


def _array(dialect: str, *elements: bytes) -> bytes:
    return struct.pack("<II", TYPE_ID[dialect], len(elements)) + b"".join(elements)


def _g(text: bytes) -> bytes:
    """An element as both engines write it: the length counts a final NUL."""
    return _element(text + b"\0")


LONG = b"x" * 200  # a length byte >= 0x80: not ASCII as a whole
VERY_LONG = b"y" * 5000  # past the wire walk's tables

INPUTS: dict[str, dict[str, bytes]] = {
    "godot3": {
        "canonical": _array("godot3", _g(b"ab"), _g(b""), _g(b"abc"), _g(b"abcd")),
        "nonzero_padding": _array("godot3", _g(b"ab"), _element(b"cd\0", pad=b"\xff")),
        "nonzero_padding_every_byte": _array("godot3", _element(b"e\0", pad=b"\x01\x02")),
        "length_without_nul": _array("godot3", _element(b"ab"), _g(b"c")),
        "zero_length": _array("godot3", _g(b"a"), _element(b""), _g(b"b")),
        "non_ascii": _array("godot3", _g(b"a"), _g("\u00e9t\u00e9".encode())),
        "long": _array("godot3", _g(b"a"), _g(LONG)),
        "very_long": _array("godot3", _g(VERY_LONG), _g(b"z")),
        "empty": _array("godot3"),
    },
    "godot4": {
        "canonical": _array("godot4", _g(b"ab"), _g(b""), _g(b"abc"), _g(b"abcd")),
        "nonzero_padding": _array("godot4", _g(b"ab"), _element(b"c\0", pad=b"\0\x7f")),
        "length_without_nul": _array("godot4", _element(b"abc"), _g(b"d")),
        "zero_length": _array("godot4", _element(b"")),
        "non_ascii": _array("godot4", _g(b"a"), _g("\u00e9t\u00e9".encode())),
        "long": _array("godot4", _g(b"a"), _g(LONG)),
        "very_long": _array("godot4", _g(VERY_LONG), _g(b"z")),
        "empty": _array("godot4"),
    },
}

#: Which inputs keep their bytes (the rest are decoded element by element).
KEPT_AS_WIRE = {"canonical", "empty"}


def _fixture(dialect: str) -> dict[str, dict[str, Any]]:
    path = FIXTURES / dialect / "packed_strings.jsonl"
    return {r["name"]: r for r in map(json.loads, path.read_text().splitlines())}


def _cases() -> list[Any]:
    return [pytest.param(d, name, id=f"{d}-{name}") for d, inputs in INPUTS.items() for name in inputs]


@pytest.mark.parametrize("dialect, name", _cases())
def test_decode_and_reencode_like_the_engine(dialect: str, name: str) -> None:
    record = _fixture(dialect)[name]
    data = INPUTS[dialect][name]
    assert bytes.fromhex(record["in_hex"]) == data, "fixture is stale: rebuild it"
    assert record["ok"]
    value, end = gf.decode(data, dialect)
    assert end == len(data)
    assert type(value) is t.PackedStringArray
    assert (value.wire(True) is not None) == (name in KEPT_AS_WIRE)
    engine_bytes = bytes.fromhex(record["hex"])
    assert gf.dumps(value, dialect) == engine_bytes
    # Built from Python strings (the encoder's other paths: ASCII joined from tables, else a loop).
    assert gf.dumps(t.PackedStringArray(value.tolist()), dialect) == engine_bytes
    assert gf.dumps([t.PackedStringArray(value.tolist())], dialect)[8:] == engine_bytes
    # The strings themselves are the engine's: its own bytes decode to an equal array.
    assert value == gf.loads(engine_bytes, dialect)
    assert len(value) == struct.unpack_from("<I", data, 4)[0]


@pytest.mark.parametrize("dialect", list(INPUTS))
def test_strings_are_made_once_and_agree_with_the_element_reader(dialect: str) -> None:
    data = INPUTS[dialect]["canonical"]
    value = gf.loads(data, dialect)
    first = value[0]
    assert value[0] is first  # made once, then kept
    assert list(value) == ["ab", "", "abc", "abcd"]
    assert value.tolist() == ["ab", "", "abc", "abcd"]
    assert "abc" in value and "zz" not in value
    assert value[1:3] == t.PackedStringArray(["", "abc"])
    assert repr(value) == "PackedStringArray(['ab', '', 'abc', 'abcd'])"


@pytest.mark.parametrize("dialect", list(INPUTS))
def test_tolist_gives_a_new_list_each_time_and_leaves_the_array_as_it_was(dialect: str) -> None:
    # tolist() on an array still in wire form makes its strings straight into the list it
    # returns; the array keeps its bytes (writing it back stays a copy) and is not changed
    # by anything done to that list.
    data = INPUTS[dialect]["canonical"]
    value = gf.loads(data, dialect)
    first = value.tolist()
    second = value.tolist()
    assert type(first) is list and first == second == ["ab", "", "abc", "abcd"] and first is not second
    assert value._items is None  # nothing kept: the strings went into the lists alone
    first.append("zz")
    first[0] = "q"
    assert value.tolist() == ["ab", "", "abc", "abcd"] and len(value) == 4
    assert value.wire(True) is not None or value.wire(False) is not None
    assert gf.dumps(value, dialect) == data
    value[0]  # strings made and kept: tolist() is then a copy of them
    third = value.tolist()
    third.append("zz")
    assert value.tolist() == ["ab", "", "abc", "abcd"] and third is not value.tolist()


def test_a_change_drops_the_wire_bytes() -> None:
    data = INPUTS["godot3"]["canonical"]
    for change in (lambda v: v.append("new"), lambda v: v.__setitem__(0, "zz"), lambda v: v.__delitem__(0),
                   lambda v: v.insert(1, "q"), lambda v: v.extend(["p"]), lambda v: v.reverse(),
                   lambda v: v.pop(), lambda v: v.remove("ab")):
        value = gf.loads(data, "godot3")
        expected = value.tolist()
        change(expected)
        change(value)
        assert value.wire(True) is None
        assert value.tolist() == expected
        assert gf.loads(gf.dumps(value, "godot3"), "godot3") == t.PackedStringArray(expected)


def test_wire_bytes_are_only_reused_in_the_same_layout() -> None:
    # Both engines count a NUL in each length; the 4.x documentation page does not, so
    # there each string is written again.
    g3 = gf.loads(INPUTS["godot3"]["canonical"], "godot3")
    assert g3.wire(True) is not None and g3.wire(False) is None
    assert gf.dumps(g3, "godot4") == bytes.fromhex(_fixture("godot4")["canonical"]["hex"])
    assert gf.dumps(g3, "docs-godot4") == gf.dumps(t.PackedStringArray(g3.tolist()), "docs-godot4")
    # Inside containers, and as a lone value, the same bytes.
    assert gf.dumps([g3], "godot3")[8:] == INPUTS["godot3"]["canonical"]


def test_equality_pickle_and_keys() -> None:
    wire = gf.loads(INPUTS["godot4"]["canonical"], "godot4")
    listed = t.PackedStringArray(["ab", "", "abc", "abcd"])
    assert wire == listed and listed == wire and not (wire != listed)
    assert wire != ["ab", "", "abc", "abcd"]  # an Array is another type, as in Godot
    assert pickle.loads(pickle.dumps(wire)) == listed
    assert wire.copy() == listed and wire.copy() is not wire
    # As Dictionary keys (Godot keeps a PackedStringArray and an Array with the same strings apart).
    assert t.godot_key(wire) == t.godot_key(listed) != t.godot_key(["ab", "", "abc", "abcd"])
    with pytest.raises(TypeError):
        hash(wire)


def test_the_methods_of_a_list() -> None:
    p = gf.loads(INPUTS["godot3"]["canonical"], "godot3")  # in wire form
    assert p + ["x"] == t.PackedStringArray(["ab", "", "abc", "abcd", "x"])
    assert ["x"] + p == t.PackedStringArray(["x", "ab", "", "abc", "abcd"])
    assert p * 2 == 2 * p == t.PackedStringArray(["ab", "", "abc", "abcd"] * 2)
    assert p.index("abc") == 2 and p.count("") == 1 and list(reversed(p))[0] == "abcd"
    assert p < ["b"] and p <= p and not p > p and p >= ["ab"]
    with pytest.raises(TypeError):
        p + "x"  # type: ignore[operator]
    p += p  # extending with itself: the strings it had, once
    assert p.tolist() == ["ab", "", "abc", "abcd"] * 2
    p.extend(p)
    assert len(p) == 16
    p *= 2
    assert len(p) == 32 and p.wire(True) is None
    p.sort(key=len, reverse=True)
    assert p[0] == "abcd"
    p.clear()
    assert p == t.PackedStringArray() and len(p) == 0


class Names(t.PackedStringArray):
    pass


def test_subclasses_and_pickles_of_the_list_based_class() -> None:
    names = Names(["a"])
    assert type(names[:]) is Names and type(names.copy()) is Names and type(names + ["b"]) is Names
    assert type(pickle.loads(pickle.dumps(names))) is Names
    assert len(t.Dictionary([(names, 1), (t.PackedStringArray(["a"]), 2)])) == 1
    assert gf.dumps(names, "godot4") == gf.dumps(t.PackedStringArray(["a"]), "godot4")
    # A pickle made by godot-formats 0.1.0, when PackedStringArray was a list subclass.
    old = bytes.fromhex("8004953a000000000000008c13676f646f745f666f726d6174732e7479706573948c115061636b656453"
                        "7472696e674172726179949394298194288c0161948c016294652e")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # it names godot_formats.types, the 0.3 path
        assert pickle.loads(old) == t.PackedStringArray(["a", "b"])


@given(st.lists(st.text(max_size=12), max_size=20), st.sampled_from(["godot3", "godot4", "docs-godot4"]))
def test_wire_form_and_list_form_write_the_same_bytes(strings: list[str], dialect: str) -> None:
    """Property: whichever form a decoded array is in, it writes the bytes of its strings."""
    try:
        data = gf.dumps(t.PackedStringArray(strings), dialect)
    except gf.EncodeError:
        return  # lone surrogates: not every dialect writes them
    value = gf.loads(data, dialect)
    assert gf.dumps(value, dialect) == data
    assert gf.dumps(t.PackedStringArray(value.tolist()), dialect) == data


@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=9), min_size=1, max_size=12),
       st.data())
def test_any_nonzero_padding_byte_leaves_the_wire_path(strings: list[str], data: st.DataObject) -> None:
    """A padding byte that is not zero is never written back: the engines write zeros."""
    clean = gf.dumps(t.PackedStringArray(strings), "godot4")
    pads = []
    pos = 8
    for _ in strings:
        n = struct.unpack_from("<I", clean, pos)[0]
        pads += range(pos + 4 + n, pos + 4 + n + (-n % 4))
        pos += 4 + n + (-n % 4)
    if not pads:
        return
    at = data.draw(st.sampled_from(pads))
    dirty = bytearray(clean)
    dirty[at] = data.draw(st.integers(1, 255))
    value = gf.loads(bytes(dirty), "godot4")
    assert value.wire(True) is None
    assert value == gf.loads(clean, "godot4")
    assert gf.dumps(value, "godot4") == clean


def test_truncated_wire_candidates_still_fail_with_offsets() -> None:
    data = INPUTS["godot3"]["canonical"]
    for cut in range(8, len(data)):
        with pytest.raises(gf.DecodeError) as e:
            gf.decode(data[:cut], "godot3")
        assert 0 <= e.value.offset <= cut


def _rebuild() -> None:  # pragma: no cover - needs the engines
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import oracles

    runs = {"godot3": oracles.godot3_decode, "godot4": oracles.godot4_decode}
    for dialect, inputs in INPUTS.items():
        records = runs[dialect]([{"name": n, "hex": b.hex()} for n, b in inputs.items()])
        path = FIXTURES / dialect / "packed_strings.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        print(f"wrote {path} ({len(records)} records)")


if __name__ == "__main__":  # pragma: no cover
    _rebuild()
