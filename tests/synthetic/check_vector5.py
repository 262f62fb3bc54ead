"""The synthetic Vector5 and ``godot4.9`` (tests/synthetic/vector5.py) through every part of the
library: both codecs, the stream and file APIs, text, JSON, ``explain``, the tree, conversion,
detection, ``gf.open`` and the command line.  Run by tests/core/test_new_type_and_dialect.py with the plugin
loaded, beside the rows x views matrix (tests/core/test_registry_views.py), which picks the row up itself.

Expected bytes are built here from the format (header word, then five float32s), not by our
encoder: there is no engine to ask for a type no engine has.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import pytest
from vector5 import DIALECT, ID, ROW, Vector5

import godot_formats as gf
from godot_formats.core import accel, registry
from godot_formats.core.codec import Decoder, Encoder
from godot_formats.tool import main
from godot_formats.views.explain import explain
from godot_formats.views.jsonform import from_json, to_json
from godot_formats.views.text import from_text, to_text
from godot_formats.views.tree import tree_lines

V = Vector5(1.0, 2.0, 3.0, 4.0, 5.0)
V_BYTES = struct.pack("<I5f", ID, 1, 2, 3, 4, 5)
BACKENDS = ["python"] + (["c"] if accel.BACKEND == "c" else [])


def _header(type_name: str) -> bytes:
    return struct.pack("<I", DIALECT.types.index(type_name))


def test_the_row_and_dialect_are_registered_and_reach_the_generated_tests() -> None:
    assert registry.spec_named("Vector5") is ROW and registry.spec_for(V) is ROW
    assert "godot4.9" in gf.dialect_names() and DIALECT.has("Vector5")
    # the suites run beside this one generate their cases from the rows and dialects
    from strategies import sample, scalar_options
    from test_registry_views import ENGINE_DIALECTS, SAMPLES

    assert SAMPLES["Vector5"] == sample(ROW) and "godot4.9" in ENGINE_DIALECTS
    assert "Vector5" in scalar_options(DIALECT)


@pytest.mark.parametrize("backend", BACKENDS)
def test_codec_writes_and_reads_the_bytes_of_the_format(backend: str) -> None:
    assert Encoder(DIALECT, backend=backend).encode(V) == V_BYTES
    assert Decoder(DIALECT, backend=backend).decode(V_BYTES) == (V, len(V_BYTES))
    blob = _header("Array") + struct.pack("<I", 2) + V_BYTES + V_BYTES
    value, _ = Decoder(DIALECT, backend=backend).decode(blob)
    assert value == [V, V] and type(value[0]) is Vector5
    assert Encoder(DIALECT, backend=backend).encode([V, V]) == blob


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_a_key_typed_element_and_in_a_double_build(backend: str) -> None:
    values = [{V: 1, Vector5(0.0, 0, 0, 0, 0): V}, gf.TypedArray("Vector5", [V]),
              gf.TypedDictionary("Vector5", "int", {V: 2}), gf.Dictionary([(V, 1), (Vector5(-0.0, 0, 0, 0, 0), 2)])]
    for value in values:
        blob = Encoder(DIALECT, backend=backend).encode(value)
        assert Decoder(DIALECT, backend=backend).decode(blob)[0] == value
    double = gf.Dialect(**{**_fields(DIALECT), "name": "godot4.9-double", "real_is_double": True, "sibling": None})
    blob = Encoder(double, backend=backend).encode(V)
    assert blob == struct.pack("<I5d", ID | 1 << 16, 1, 2, 3, 4, 5)
    assert Decoder(double, backend=backend).decode(blob)[0] == V


def _fields(d: gf.Dialect) -> dict[str, Any]:
    import attrs
    return {a.name: getattr(d, a.name) for a in attrs.fields(type(d)) if a.init}


def test_the_backends_agree_on_a_large_value() -> None:
    value = [Vector5(i, -i, 0.5, 2.0 ** -(i % 100), i * 3) for i in range(2000)]
    blobs = {b: Encoder(DIALECT, backend=b).encode(value) for b in BACKENDS}
    assert len(set(blobs.values())) == 1
    for b in BACKENDS:
        assert Decoder(DIALECT, backend=b).decode(blobs["python"])[0] == value


def test_streams_and_file_access() -> None:
    peer = gf.StreamPeerBuffer(dialect="godot4.9")
    peer.put_var(V)
    assert peer.data_array == struct.pack("<I", len(V_BYTES)) + V_BYTES
    peer.seek(0)
    assert peer.get_var() == V


def test_text_writes_the_constructor_and_reads_it_back() -> None:
    assert to_text(V, "godot4.9") == "Vector5(1, 2, 3, 4, 5)"
    assert from_text("Vector5(1, 2, 3, 4, 5)", "godot4.9") == V
    keys = [Vector5(2, 0, 0, 0, 0), Vector5(1, 9, 0, 0, 0), Vector5(1, 2, 0, 0, 0)]
    vec4 = [gf.Vector4(*k[:4]) for k in keys]
    text5 = to_text(dict.fromkeys(keys, 0), "godot4.9")
    text4 = to_text(dict.fromkeys(vec4, 0), "godot4.9")
    # ordered like the engine's vectors: component by component, as Vector4 keys are
    assert [line.split("(")[1][:4] for line in text5.splitlines()[1:-1]] == \
        [line.split("(")[1][:4] for line in text4.splitlines()[1:-1]]


def test_json_round_trip_in_the_engine_shape() -> None:
    obj = to_json(V)
    assert obj == {"type": "Vector5", "args": [1.0, 2.0, 3.0, 4.0, 5.0]}
    assert from_json(obj) == V
    typed = gf.TypedArray("Vector5", [V])
    assert from_json(to_json(typed)) == typed


def test_explain_and_tree_name_the_type() -> None:
    text = explain(V_BYTES, "godot4.9")
    assert "Vector5" in text and "1, 2, 3, 4, 5" in text.replace(".0", "")
    assert any("Vector5" in line for line in tree_lines([V], "godot4.9"))


def test_conversion_reports_the_rows_downgrade() -> None:
    with pytest.raises(gf.ConversionError, match="Vector5"):
        gf.convert(V_BYTES, "godot4.9", "godot3")
    out, losses = gf.convert_with_report(V_BYTES, "godot4.9", "godot4", policy="lossy")
    assert gf.loads(out, "godot4") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert len(losses) == 1 and "an Array of its 5 floats" in losses[0].reason
    assert gf.convert(gf.dumps([1, "a"], "godot4"), "godot4", "godot4.9") == gf.dumps([1, "a"], "godot4.9")


def test_detection_tells_the_dialect_by_its_type() -> None:
    assert gf.detect(V_BYTES)[0].dialect == "godot4.9"
    assert not gf.is_ambiguous(gf.detect(V_BYTES))
    plain = gf.dumps({"a": [1, 2.5]}, "godot4")
    assert gf.detect(plain)[0].dialect == "godot4"  # the commoner sibling, where nothing tells them apart


def test_open_a_save_with_bytes_after_a_value(tmp_path: Path) -> None:
    record = struct.pack("<I", len(V_BYTES)) + V_BYTES  # FileAccess.store_var
    slack = struct.pack("<I", len(V_BYTES) + 4) + V_BYTES + b"\x00\x07\x00\x00"  # a frame longer than its value
    data = record + slack
    path = tmp_path / "save.dat"
    path.write_bytes(data)
    save = gf.open(path)
    assert save.dialect.name == "godot4.9" and save.values == [V, V]
    assert save.to_bytes() == data
    assert gf.open(io.BytesIO(data), dialect="godot4.9").values == [V, V]
    path.write_bytes(V_BYTES)  # var_to_bytes, unframed
    assert gf.open(path).values == [V] and gf.open(path).dialect.name == "godot4.9"


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "save.dat"
    path.write_bytes(struct.pack("<I", len(V_BYTES)) + V_BYTES)
    assert main(["dump", str(path)]) == 0
    assert "Vector5" in capsys.readouterr().out
    out = tmp_path / "out.dat"
    assert main(["convert", str(path), "--to", "godot4", "--policy", "lossy", "-o", str(out)]) == 0
    assert gf.open(out).values == [[1.0, 2.0, 3.0, 4.0, 5.0]]
