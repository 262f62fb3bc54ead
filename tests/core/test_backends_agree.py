"""The compiled core against the reference: the same values, the same bytes, the same errors.

The compiled core (godot_formats/core/_cdecode.c, _cencode.c) reads and writes the common values
itself and hands everything else back to the reference codec.  This feeds both backends the
fuzz corpus (fuzz/corpus: engine fixture blobs and what coverage-guided fuzzing learnt from
them), the engine fixtures, mutations of them, and Hypothesis values, and requires identical
results: equal values and end offsets, identical bytes, and identical errors (class, byte
offset, message).  The rest of the suite runs under both backends too (``scripts/test``).
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import engine_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

import godot_formats as gf
from godot_formats.core import accel
from godot_formats.core.codec import Decoder, Encoder
from godot_formats.core.dialects import get_dialect
from godot_formats.core.keys import same_value

pytestmark = pytest.mark.skipif(accel.BACKEND != "c", reason="the compiled core is not built in this install "
                                "(or GODOT_FORMATS_PURE is set): nothing to compare")

CORPUS = sorted((Path(__file__).resolve().parents[2] / "fuzz" / "corpus").glob("*"))
DIALECTS = [*gf.dialect_names(), "godot2"]


def _codecs(dialect: str, objects: bool) -> tuple[Decoder, Decoder]:
    d = get_dialect(dialect)
    return (Decoder(d, allow_objects=objects, backend="c", max_elements=None),
            Decoder(d, allow_objects=objects, backend="python", max_elements=None))


_DECODERS: dict[tuple[str, bool], tuple[Decoder, Decoder]] = {}
_ENCODERS: dict[tuple[str, bool], tuple[Encoder, Encoder]] = {}


def _decoders(dialect: str, objects: bool) -> tuple[Decoder, Decoder]:
    key = (dialect, objects)
    if key not in _DECODERS:
        _DECODERS[key] = _codecs(dialect, objects)
    return _DECODERS[key]


def _encoders(dialect: str, objects: bool) -> tuple[Encoder, Encoder]:
    key = (dialect, objects)
    if key not in _ENCODERS:
        d = get_dialect(dialect)
        _ENCODERS[key] = (Encoder(d, full_objects=objects, backend="c"),
                          Encoder(d, full_objects=objects, backend="python"))
    return _ENCODERS[key]


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except gf.GodotFormatsError as e:
        return type(e).__name__, str(e)


def _agree_on_decode(data: bytes, dialect: str, objects: bool) -> None:
    c, py = _decoders(dialect, objects)
    got, want = _outcome(c.decode, data), _outcome(py.decode, data)
    assert got[0] == want[0], (dialect, objects, data.hex(), got, want)
    if got[0] == "ok":
        assert got[1][1] == want[1][1] and same_value(got[1][0], want[1][0]), (dialect, data.hex())
        _agree_on_encode(got[1][0], dialect, objects)
    else:
        assert got[1] == want[1], (dialect, data.hex())


def _agree_on_encode(value: Any, dialect: str, objects: bool) -> None:
    c, py = _encoders(dialect, objects)
    got, want = _outcome(c.encode, value), _outcome(py.encode, value)
    assert got == want, (dialect, objects, value)


@pytest.mark.parametrize("path", CORPUS[:400], ids=lambda p: p.name[:16])
def test_the_fuzz_corpus_decodes_alike(path: Path) -> None:
    data = path.read_bytes()
    for dialect in DIALECTS:
        for objects in (False, True):
            _agree_on_decode(data, dialect, objects)


@pytest.mark.parametrize("seed", range(40))
def test_mutated_corpus_decodes_alike(seed: int) -> None:
    """Flipped, cut and spliced corpus blobs: where the compiled core hands work back most."""
    rng = random.Random(seed)
    for _ in range(25):
        data = bytearray(rng.choice(CORPUS).read_bytes())
        for _ in range(rng.randint(1, 4)):
            if data and rng.random() < 0.5:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif data and rng.random() < 0.5:
                del data[rng.randrange(len(data)):]
            else:
                data[rng.randrange(len(data) + 1):0] = rng.choice([b"\x1b\0\0\0", b"\x1c\0\0\0", b"\xff\xff\xff\x7f",
                                                                  b"\x02\0\1\0", b"\x04\0\0\0\3\0\0\0abc\0"])
        dialect = rng.choice(DIALECTS)
        _agree_on_decode(bytes(data), dialect, rng.random() < 0.5)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), dialect=st.sampled_from(["godot4", "godot3", "godot4.0", "godot4-double", "godot3.0"]))
def test_values_encode_and_decode_alike(data: st.DataObject, dialect: str) -> None:
    value = data.draw(values(dialect))
    _agree_on_encode(value, dialect, False)
    c, _ = _encoders(dialect, False)
    try:
        data = c.encode(value)
    except gf.EncodeError:
        return
    _agree_on_decode(data, dialect, False)


@pytest.mark.parametrize("value", [
    2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 0.1, 3.4028235e38, 1e39, -1e39,
    float("inf"), float("-inf"), float("nan"), -0.0, 5e-324, "\ud800", "héllo", "", [], {}, [[[]]],
    {"a": {"b": [1, 2.5, None, True]}}, gf.Vector2(1.5, 1e39), gf.Vector2i(2**31, 0), gf.Color(1, 0, 0, 1),
    [1] * 40, [0.5] * 40, [1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63, True, 5, "s", 7, 2**80, 3],
    [*range(100), 2**40, *range(5), None], [[*range(20)], {"a": [*range(-5, 5)]}],
    [gf.StringName("x"), gf.NodePath("a/b"), b"abc", gf.PackedInt32Array([1, 2])],
    [b"", b"a", b"abcd", bytearray(b"xyz"), memoryview(b"mv")], {"blob": b"\0" * 4099},
    [gf.PackedStringArray([]), gf.PackedStringArray(["", "a", "héllo", "日本", "a\0b", "x" * 5000])],
    [gf.PackedStringArray(["\ud800"])], [gf.PackedStringArray(["a", 1])],  # type: ignore[list-item]
    [gf.loads(gf.dumps(gf.PackedStringArray(["ab", "c", ""]), "godot4"), "godot4")],  # kept in wire form
    [gf.loads(gf.dumps(gf.PackedStringArray(["ab", "c", ""]), "docs-godot4"), "docs-godot4")],
    # lone buffers, copied once (the big ones into memory advised for huge pages)
    b"x" * 5_000_001, bytearray(4_194_304), memoryview(b"abcdef")[::2], memoryview(b"abcdef"),
    gf.PackedFloat32Array([1.5, 2]), gf.PackedVector2Array([gf.Vector2(1, 2)]), gf.PackedInt64Array([2**40]),
    gf.loads(gf.dumps(gf.PackedStringArray(["ab", "c"]), "godot4"), "godot4"), [b"y" * 4_200_000, 1],
])
def test_edge_values_alike(value: Any) -> None:
    for dialect in ("godot4", "godot3", "godot3.0", "godot4-double", "docs-godot4", "godot2"):
        _agree_on_encode(value, dialect, False)


def test_deep_and_self_containing_values_alike() -> None:
    deep: list[Any] = []
    for _ in range(1100):
        deep = [deep]
    loop: list[Any] = [1]
    loop.append(loop)
    for value in (deep, loop):
        _agree_on_encode(value, "godot4", False)
    hostile = bytes.fromhex("1c00000001000000") * 200_000
    _agree_on_decode(hostile, "godot4", False)
    _agree_on_decode(bytes.fromhex("1c000000ffffff7f"), "godot4", False)


def test_limits_are_the_references() -> None:
    data = gf.dumps([[1, 2], [3, [4]]])
    for limit in range(0, 8):
        c = Decoder(get_dialect("godot4"), backend="c", max_elements=limit)
        py = Decoder(get_dialect("godot4"), backend="python", max_elements=limit)
        assert _outcome(c.decode, data) == _outcome(py.decode, data)
    for depth in range(0, 4):
        c = Decoder(get_dialect("godot4"), backend="c", max_depth=depth)
        py = Decoder(get_dialect("godot4"), backend="python", max_depth=depth)
        assert _outcome(c.decode, data) == _outcome(py.decode, data)


def test_backend_is_reported() -> None:
    assert gf.backend == "c"
    assert Decoder(get_dialect("godot4")).backend == "c"
    assert Decoder(get_dialect("godot4"), backend="python").backend == "python"
    with pytest.raises(ValueError):
        Decoder(get_dialect("godot4"), backend="rust")


# --- PackedStringArray: the wire form, the strict strings, and everything the reference decides

def _element(raw: bytes, length: int | None = None, padding: bytes | None = None) -> bytes:
    """One element: a u32 length (raw's unless given), raw, then padding to 4 (zeros unless given)."""
    n = len(raw) if length is None else length
    pad = -len(raw) & 3
    return n.to_bytes(4, "little") + raw + (b"\0" * pad if padding is None else padding[:pad].ljust(pad, b"\0"))


def _psa(header: int, count: int, body: bytes) -> bytes:
    return header.to_bytes(4, "little") + (count & 0xFFFFFFFF).to_bytes(4, "little") + body


_ELEMENT_SETS: list[tuple[str, list[bytes], int]] = [
    ("engine ascii", [_element(b"ab\0"), _element(b"c\0"), _element(b"\0")], 3),
    ("docs ascii", [_element(b"ab"), _element(b"c"), _element(b"")], 3),
    ("utf-8", [_element("héllo\0".encode()), _element("日本\0".encode())], 2),
    ("utf-8 no nul", [_element("héllo".encode()), _element("日本".encode())], 2),
    ("invalid utf-8", [_element(b"\xff\xfe\0")], 1),
    ("surrogate", [_element(b"\xed\xa0\x80\0")], 1),
    ("nonzero padding", [_element(b"ab\0", padding=b"\x01")], 1),
    ("a NUL not counted", [_element(b"abcd")], 1),
    ("empty in engine form", [_element(b"")], 1),
    ("length 200", [_element(b"x" * 199 + b"\0")], 1),
    ("length 5000", [_element(b"y" * 4999 + b"\0")], 1),
    ("inner NUL", [_element(b"a\0b\0")], 1),
    ("length past the end", [_element(b"ab\0", length=400)], 1),
    ("fewer elements than the count", [_element(b"ab\0")], 3),
    ("negative count", [_element(b"ab\0")], -1),
    ("no elements", [], 0),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, elements, count", _ELEMENT_SETS, ids=[s[0] for s in _ELEMENT_SETS])
def test_packed_string_arrays_decode_alike(name: str, elements: list[bytes], count: int) -> None:
    """Every shape of element, whole and cut at every byte, in every dialect; and where the
    reference keeps the array in wire form (its strings made when first read), so does the
    compiled core, with the same bytes."""
    for dialect in DIALECTS:
        d = get_dialect(dialect)
        if not d.has("PackedStringArray"):
            continue
        whole = _psa(d.type_id("PackedStringArray"), count, b"".join(elements))
        for data in [whole + b"\x01\0\0\0", *(whole[:i] for i in range(len(whole) + 1))]:
            _agree_on_decode(data, dialect, False)
            c, py = _decoders(dialect, False)
            got, want = _outcome(c.decode, data), _outcome(py.decode, data)
            if got[0] == "ok" and isinstance(want[1][0], gf.PackedStringArray):
                nul = d.packed_string_nul
                assert got[1][0].wire(nul) == want[1][0].wire(nul), (dialect, name, data.hex())


def test_packed_string_arrays_in_any_buffer() -> None:
    """bytearray and memoryview input (the reference's strict loop is for bytes only; its
    element-by-element reader gives the same strings)."""
    data = gf.dumps([gf.PackedStringArray(["héllo", "ab", ""])], "godot4")
    for buf in (bytearray(data), memoryview(data)):
        c, py = _decoders("godot4", False)
        got, want = c.decode(buf), py.decode(buf)
        assert same_value(got[0], want[0]) and got[1] == want[1]


@settings(deadline=None)
@given(strings=st.lists(st.text(max_size=12) | st.text(alphabet="abc\0", max_size=6), max_size=8),
       dialect=st.sampled_from(["godot4", "godot3", "docs-godot4", "godot2"]))
def test_packed_string_array_values_alike(strings: list[str], dialect: str) -> None:
    _agree_on_encode(gf.PackedStringArray(strings), dialect, False)
    c, _ = _encoders(dialect, False)
    try:
        data = c.encode(gf.PackedStringArray(strings))
    except gf.EncodeError:
        return
    _agree_on_decode(data, dialect, False)


_WIDE_NUMBERS = (0.1, -0.0, 1e300, -1e300, 3.4028235677973366e38, 3.4028235677973362e38, -3.4028235677973366e38,
                 5e-324, 1.0000000596046448, float("inf"), float("nan"), 16777217.0)


@pytest.mark.parametrize("dialect", ["godot4", "godot4-double", "godot4.0", "godot3", "docs-godot4"])
def test_math_with_the_64_bit_flag_alike(dialect: str) -> None:
    """Doubles under the 64-bit flag: kept by a double build, narrowed to float32 (to inf past
    its range) by a single-precision one, read by the reference where the dialect has no such
    form; every math type, whole and cut short."""
    d = get_dialect(dialect)
    rng = random.Random(dialect)
    for spec_name in d.types:
        if not spec_name or not d.has(spec_name):
            continue
        try:
            row = d.math_type(spec_name)
        except (KeyError, ValueError):
            continue
        header = (d.type_id(spec_name) or 0) | 0x10000
        for _ in range(6):
            numbers = [rng.choice(_WIDE_NUMBERS) for _ in range(row.count)]
            body = b"".join(struct.pack("<d", x) for x in numbers)
            data = header.to_bytes(4, "little") + body
            for cut in (len(data), len(data) - 1, 4 + 4 * row.count):
                _agree_on_decode(data[:cut], dialect, False)
            _agree_on_decode((0x1C).to_bytes(4, "little") + (2).to_bytes(4, "little") + data * 2, dialect, False)


def _typed_values() -> list[Any]:
    """Containers the compiled writer walks after the reference's row writes their heads."""
    T = gf.types
    vec_keys = T.Dictionary({gf.Vector2(1, 2): "v", 1.5: [1, 2], "s": T.TypedArray("int", [1, 2, 3])})
    nested = T.TypedArray("Array", [T.TypedArray("int", [i]) for i in range(3)])
    loop = T.TypedArray("Array")
    loop.append(loop)
    return [
        T.TypedArray("int", [1, 2, 2**40]), T.TypedArray("int", list(range(20))), T.TypedArray("String", ["a", "é"]),
        T.TypedArray("float", [0.5] * 17), T.TypedArray("int"), T.TypedArray(T.ContainerType.of_class("Node")),
        T.TypedArray("Vector2", [gf.Vector2(1, 2)]), T.TypedArray("int", ["not an int"]),
        vec_keys, T.Dictionary(), T.TypedDictionary("String", "int", {"a": 1, "b": 2}),
        T.TypedDictionary("String", None, {"a": [T.TypedArray("int", [1])]}), T.TypedDictionary(None, None, {1: 2}),
        [nested, {"k": nested}], (vec_keys, vec_keys), loop, T.TypedArray("int", [object()]),
    ]


@pytest.mark.parametrize("index", range(len(_typed_values())))
def test_typed_and_other_containers_alike(index: int) -> None:
    value = _typed_values()[index]
    for dialect in ("godot4", "godot4.3", "godot4.0", "godot3", "godot4-double", "docs-godot4", "godot2"):
        _agree_on_encode(value, dialect, False)
        _agree_on_encode(value, dialect, True)
        for depth in (0, 1, 2, 3):
            c = Encoder(get_dialect(dialect), backend="c", max_depth=depth)
            py = Encoder(get_dialect(dialect), backend="python", max_depth=depth)
            assert _outcome(c.encode, value) == _outcome(py.encode, value), (dialect, depth)


def test_full_objects_alike() -> None:
    """A full Object's properties are children too: decoded with objects allowed, written back."""
    for path in CORPUS:
        data = path.read_bytes()
        for dialect in ("godot3", "godot4"):
            c, _ = _decoders(dialect, True)
            got = _outcome(c.decode, data)
            if got[0] == "ok" and "Object" in repr(type(got[1][0])):
                _agree_on_encode(got[1][0], dialect, True)


# -- the caller's own code running inside an encode: one outcome for both backends ------------


def _callers_outcome(backend: str, make: Any) -> tuple[str, int]:
    """(what happened, how often the caller's code ran) for a value ``make(encoder, counter)`` builds."""
    encoder = Encoder(get_dialect("godot4"), backend=backend)
    calls = [0]
    value = make(encoder, calls)
    try:
        return "bytes " + encoder.encode(value).hex(), calls[0]
    except gf.EncodeError as e:
        return f"EncodeError {e}", calls[0]
    except RecursionError:
        return "RecursionError", calls[0]
    except Exception as e:  # the caller's own
        return f"{type(e).__name__} {e}", calls[0]


def _reentrant(encoder: Encoder, calls: list[int]) -> Any:
    class Again(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            encoder.encode([self])  # encodes the value again, from inside its own encoding
            return str.encode(self, *args, **kwargs)
    return [Again("x")]


def _grows(encoder: Encoder, calls: list[int]) -> Any:
    inventory: list[Any] = [1, "x", 3]

    class Grows(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            inventory.append("INJECTED")
            return str.encode(self, *args, **kwargs)
    inventory.insert(1, Grows("y"))
    return {"inv": inventory, "gold": 100}


def _grows_forever(encoder: Encoder, calls: list[int]) -> Any:
    """Each element's code appends another such element: the reference's list iterator never ended."""
    inventory: list[Any] = []

    class Again(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            inventory.append(Again("more"))
            return str.encode(self, *args, **kwargs)
    inventory.append(Again("first"))
    return {"inv": inventory}


def _mutates_a_dict(encoder: Encoder, calls: list[int]) -> Any:
    d: dict[str, Any] = {"a": 1}

    class Adds(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            d["new"] = 1
            return str.encode(self, *args, **kwargs)
    d["b"] = Adds("m")
    d["c"] = 3
    return {"save": d}


def _raises(encoder: Encoder, calls: list[int]) -> Any:
    class Broken(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            raise KeyError("a bug of the caller's")
    return {"k": [1, Broken("z")]}


def _refused(encoder: Encoder, calls: list[int]) -> Any:
    class Counted(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            return str.encode(self, *args, **kwargs)
    return {"k": [Counted("z"), gf.Vector2i(1, 2), 2**70]}  # a refusal after the caller's code ran


@pytest.mark.parametrize("make", [_reentrant, _grows, _grows_forever, _mutates_a_dict, _raises, _refused],
                         ids=lambda f: f.__name__.strip("_"))
def test_the_callers_code_gives_one_outcome_in_both_backends(make: Any) -> None:
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the re-entrant value ends at the limit: keep it small
    try:
        c, python = _callers_outcome("c", make), _callers_outcome("python", make)
    finally:
        sys.setrecursionlimit(limit)
    assert c[0] == python[0]
    assert not c[0].startswith("bytes") or make is _refused
    # The caller's code runs as often in both (it ran 28,688 times under the compiled core at a
    # limit of 60 when every exception was a fallback that encoded the whole value again).
    assert c[1] == python[1], (c, python)
    if make is _grows:
        assert c[0] == "EncodeError ['inv']: a list changed size while it was written"
    if make is _grows_forever:
        assert c == ("EncodeError ['inv']: a list changed size while it was written", 1)
    if make is _mutates_a_dict:
        assert c[0] == "EncodeError ['save']: a dict changed size while it was written"
    if make is _raises:
        assert c == ("KeyError \"a bug of the caller's\"", 1)


def _shaped_leaf(kind: str, parent: list[Any], calls: list[int]) -> Any:
    """A leaf that runs the caller's code when written: counts, raises, or grows its parent list."""
    class Shaped(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            calls[0] += 1
            if kind == "raises":
                raise KeyError("the caller's bug")
            if kind == "grows":
                parent.append("INJECTED")
            return str.encode(self, *args, **kwargs)
    return Shaped(kind)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_callers_code_anywhere_in_a_value_gives_one_outcome(data: st.DataObject) -> None:
    """The shapes above, in random values at random depths: the same bytes or error, and the caller's
    code run as often, in both backends."""
    base = data.draw(values("godot4"))
    kinds = data.draw(st.lists(st.sampled_from(["counts", "raises", "grows"]), min_size=1, max_size=4))
    depths = data.draw(st.lists(st.integers(0, 5), min_size=len(kinds), max_size=len(kinds)))
    scalars = data.draw(st.booleans())

    def make(encoder: Encoder, calls: list[int]) -> Any:
        top: list[Any] = [base]
        for kind, depth in zip(kinds, depths):
            parent = top
            for _ in range(depth):
                inner: list[Any] = [1.5, "s"] if scalars else []
                parent.append(inner)
                parent = inner
            parent.append(_shaped_leaf(kind, parent, calls))
        return {"save": top, "after": base}

    assert _callers_outcome("c", make) == _callers_outcome("python", make)


def test_marks_are_the_same_under_both_backends() -> None:
    """The decoder's marks (what detection tells sibling versions by) are one rule in both backends."""
    blobs = [(gf.dumps(v, d), d) for d in ("godot3.0", "godot4-double") for v in (
        5, -1, 1 << 40, [1, [2, {"k": gf.Vector2(1, 2)}]], gf.PackedVector3Array([gf.Vector3(1, 2, 3)]),
        gf.Color(1, 0, 0))]
    blobs += [(bytes.fromhex(c["hex"]), e) for e in ("godot3", "godot4") for c in engine_cases(e) if c.get("hex")]
    for blob, name in blobs:
        reader = {"godot3.0": "godot3", "godot4-double": "godot4"}.get(name, name)
        outcomes = []
        for backend in ("c", "python"):
            try:
                outcomes.append(Decoder(get_dialect(reader), backend=backend).decode_marked(blob)[1:])
            except gf.DecodeError as e:
                outcomes.append(("error", e.offset))
        assert outcomes[0] == outcomes[1], blob.hex()


# --- gf.loads / gf.dumps' compiled entries (Reader.loads, Writer.dumps) --------------------------

_MESSAGE = {"type": "move", "id": 12345, "pos": gf.Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_loads_entry_gives_the_reference_outcome_on_every_path(dialect: str) -> None:
    """Each way through Reader.loads: read in C, handed over untried (not bytes, over max_size),
    handed over after the C walk gave up (a full Object, cut bytes): the reference's outcome."""
    c, python = _decoders(dialect, True)
    blob = Encoder(get_dialect(dialect), full_objects=True).encode(_MESSAGE)
    obj = Encoder(get_dialect(dialect), full_objects=True).encode(gf.Object("Node", {"a": 1}))
    small = Decoder(get_dialect(dialect), max_size=8, backend="c")
    for data in (blob, bytearray(blob), memoryview(blob), blob[:-3], obj, b"\0\0\0\0", b"", b"\x99\0\0\0"):
        want = _outcome(lambda d: python.decode(d)[0], data)
        got = _outcome(c.loads, data)
        assert got[0] == want[0] and (got[0] != "ok" or same_value(got[1], want[1])), (data, got, want)
        assert got[0] == "ok" or got[1] == want[1]
    assert _outcome(small.loads, blob) == _outcome(lambda d: small.decode(d)[0], blob)
    assert _outcome(small.loads, blob)[0] == "DecodeError"
    assert same_value(gf.loads(blob, dialect, allow_objects=True), python.decode(blob)[0])


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_dumps_entry_gives_the_reference_outcome_on_every_path(dialect: str) -> None:
    """Each way through Writer.dumps: written in C, a lone buffer, a Fallback, a LeafError."""
    c, python = _encoders(dialect, False)
    for value in (_MESSAGE, None, b"abc", bytearray(b"abcde"), gf.PackedStringArray(["a", "bc"]),
                  gf.Object("Node", {}), [gf.Object("Node", {})], 2 ** 70, [1, 2 ** 70], {1.5: "x"}):
        assert _outcome(c.dumps, value) == _outcome(python.encode, value), value
    assert gf.dumps(_MESSAGE, dialect) == python.encode(_MESSAGE)
