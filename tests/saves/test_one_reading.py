"""One reading of a file: damage is reported as damage, salvage reads as ``get_var`` does,
bytes after a layer are kept, text is named, and each record is decoded once.

The damaged saves are the real Godot 3.2.3's (fixtures/damaged/: records 1, 3 and 4 written with
``store_var``, record 2 a bad value in a sound frame, plain and inside ``open_compressed``), with
what the same engine's ``get_var`` read back from each.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, GD3_FILE_HELPERS, cli, read_jsonl

import godot_formats as gf
from godot_formats.core import codec
from godot_formats.core.errors import AmbiguousDialectError, DamagedFileError, NotBinaryError
from godot_formats.layers.framing import join_frames
from godot_formats.saves.detection import Layout
from godot_formats.saves.savefile import open as open_save

try:
    import oracles
except ImportError:  # pragma: no cover
    from tests import oracles

DAMAGED = read_jsonl(FIXTURES / "damaged" / "godot3_damaged.jsonl")
CONTAINERS = {r["name"]: r for name in ("godot3_containers.jsonl", "godot4_containers.jsonl")
              for r in read_jsonl(FIXTURES / "containers" / name)}


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    p = cli(*args)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def _file(tmp_path: Path, case: dict[str, Any]) -> Path:
    path = tmp_path / f"{case['name']}.sav"
    path.write_bytes(bytes.fromhex(case["file_hex"]))
    return path


# -- damage inside a record: named, never another engine version --------------------------------------


@pytest.mark.parametrize("case", DAMAGED, ids=[c["name"] for c in DAMAGED])
def test_a_bad_value_is_damage_of_its_record(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["file_hex"])
    with pytest.raises(DamagedFileError) as info:
        gf.open(data)
    e = info.value
    assert e.record == 2 and e.dialect == "godot3" and [lost.record for lost in e.lost] == [2]
    assert "record 2 of 4" in str(e)
    # The offset is inside record 2's frame (in the plaintext: the decompressed data for GCPF).
    sizes = [len(bytes.fromhex(h)) for h in case["record_hex"]]
    start = 4 + sizes[0]
    assert start + 4 <= e.offset < start + 4 + len(bytes.fromhex(case["bad_record_hex"]))
    assert e.where == ("" if case["layer"] == "plain" else " of the decompressed data")
    # The same error with the dialect given, and from loads of the bad record alone (no record to salvage).
    with pytest.raises(DamagedFileError, match="record 2 of 4"):
        gf.open(data, dialect="godot3")
    with pytest.raises(DamagedFileError, match="no records to salvage"):
        gf.open(bytes.fromhex(case["bad_record_hex"]), salvage=True)
    assert not case["bare_ok"]
    with pytest.raises(gf.DecodeError):
        gf.loads(bytes.fromhex(case["bad_record_hex"]), "auto")


@pytest.mark.parametrize("case", DAMAGED, ids=[c["name"] for c in DAMAGED])
def test_salvage_reads_as_get_var(case: dict[str, Any]) -> None:
    """Godot 3.2.3's get_var: null for the bad record (its frame skipped whole), the others as written."""
    data = bytes.fromhex(case["file_hex"])
    sf = gf.open(data, salvage=True)
    assert sf.dialect.name == "godot3" and len(sf.values) == 4
    assert [gf.to_text(v, "godot3") for v in sf.values] == case["readback"]
    assert [lost.record for lost in sf.lost] == [2] and sf.values[1] is None
    assert sf.layers["lost"] == [2]
    # Nothing changed: the same bytes, the damaged record's included.
    assert sf.to_bytes() == data
    # A migration must say what it does with the damaged record.
    with pytest.raises(gf.ConversionError, match="damaged in the file"):
        sf.to_bytes(dialect="godot4")
    converted, losses = sf.convert("godot4", policy="lossy")
    out = converted.to_bytes()
    assert any("record 2 of 4" in loss.path and "written as null" in loss.reason for loss in losses)
    again = gf.open(out, dialect="godot4")
    assert again.values[1] is None and len(again.values) == 4


@pytest.mark.parametrize("case", [c for c in DAMAGED if c["layer"] in ("plain", "zstd")],
                         ids=lambda c: c["name"])
def test_every_command_reports_the_damage_and_writes_nothing(case: dict[str, Any], tmp_path: Path) -> None:
    path = _file(tmp_path, case)
    before = path.read_bytes()
    for command in (["detect"], ["dump"], ["explain"], ["dump", "--json"], ["dump", "--tree"]):
        p = _cli(*command, path)
        assert p.returncode == 1, (command, p.stdout, p.stderr)
        assert "record 2 of 4" in p.stdout + p.stderr, (command, p.stdout, p.stderr)
        assert "godot4" not in p.stdout.splitlines()[0] if p.stdout else True
    p = _cli("dump", path, "--salvage", "--no-header")
    assert p.returncode == 0 and "record 2 is damaged" in p.stderr
    out = tmp_path / "out"
    p = _cli("convert", path, "--to", "godot4", "--out-dir", out)
    assert p.returncode == 1 and "record 2 of 4" in p.stdout and not out.exists()
    for args in (["set", path, "[0]", "5", "--record", "4"], ["set", path, "", "1", "--record", "1"]):
        p = _cli(*args)
        assert p.returncode == 1 and "record 2 of 4" in p.stderr
    assert path.read_bytes() == before
    assert sorted(q.name for q in tmp_path.iterdir()) == [path.name]  # no backup, no temporary file


def test_a_bare_value_with_a_bad_byte_is_not_made_into_records() -> None:
    blob = bytearray(gf.dumps({"name": "Ann", "items": ["sword", "potion"], "hp": 12}, "godot3"))
    blob[blob.index(b"sword")] = 0xFF
    for salvage in (False, True):
        with pytest.raises(DamagedFileError) as info:
            gf.open(bytes(blob), salvage=salvage)
        assert info.value.record is None and info.value.dialect == "godot3"
        assert ("no records to salvage" in str(info.value)) == salvage
    p = cli("dump", "-", "--salvage", stdin=bytes(blob))
    assert p.returncode == 1 and p.stdout == b"" and b"no records to salvage" in p.stderr


def test_frames_that_break_still_keep_the_intact_records() -> None:
    records = [gf.dumps(v, "godot3") for v in ({"a": 1}, "two", [3])]
    data = b"".join(len(r).to_bytes(4, "little") + r for r in records)
    with pytest.raises(gf.DecodeError, match="records 1 to 2 are intact"):
        gf.open(data[:-3])
    sf = gf.open(data[:-3], salvage=True)
    assert sf.values == [{"a": 1}, "two"] and sf.damage is not None and not sf.lost


# -- bytes after a layer ------------------------------------------------------------------------------------


def test_two_encrypted_saves_concatenated_keep_the_second(tmp_path: Path) -> None:
    first = bytes.fromhex(CONTAINERS["g3_enc_pass_hunter2"]["file_hex"])
    second = bytes.fromhex(CONTAINERS["g3_enc_pass_empty"]["file_hex"])
    data = first + second
    sf = gf.open(data, password="hunter2")
    assert sf.layers["trailing"] == {"encryption": len(second)}
    assert sf.to_bytes() == data
    sf.values[1] = 8
    changed = sf.to_bytes()
    assert changed.endswith(second) and gf.open(changed[:-len(second)], password="hunter2").values[1] == 8
    assert gf.open(changed[-len(second):], password="").values == gf.open(second, password="").values
    path = tmp_path / "two.sav"
    path.write_bytes(data)
    p = _cli("set", path, "", "8", "--record", "2", "--password", "hunter2")
    assert p.returncode == 0, p.stderr
    assert path.read_bytes().endswith(second)
    p = _cli("dump", path, "--password", "hunter2", "--no-header")
    assert p.returncode == 0 and "after the encryption layer's end" in p.stderr


def test_a_compressed_save_followed_by_more_bytes_reads_as_the_engine_reads_it() -> None:
    for name in ("g3_cmp_m0_save", "g3_cmp_m2_save", "g4_cmp_m1_save"):
        case = CONTAINERS[name]
        data = bytes.fromhex(case["file_hex"]) + b"more bytes"
        sf = gf.open(data)
        assert [gf.to_text(v, sf.dialect) for v in sf.values] == case["readback"]
        assert sf.layers["trailing"] == {"compression": 10}
        assert sf.to_bytes() == data
        header = sf.header
        assert bytes.fromhex(header["trailing"]["compression"]) == b"more bytes"


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_reads_past_a_layer_as_we_do() -> None:
    """Godot 3.2.3 reads a compressed file with bytes after it, and the first of two encrypted files."""
    compressed = bytes.fromhex(CONTAINERS["g3_cmp_m0_save"]["file_hex"]) + b"more bytes"
    two = (bytes.fromhex(CONTAINERS["g3_enc_pass_hunter2"]["file_hex"])
           + bytes.fromhex(CONTAINERS["g3_enc_pass_empty"]["file_hex"]))
    script = f"""extends SceneTree
{GD3_FILE_HELPERS}
func show(tag, f, err):
\tif err != OK:
\t\tprint("@@" + tag + " FAILED " + str(err))
\t\treturn
\tprint("@@" + tag + " " + var2bytes(f.get_var()).hex_encode())
\tprint("@@" + tag + " " + var2bytes(f.get_var()).hex_encode())
\tf.close()
func _init():
\tput("user://c.bin", "{compressed.hex()}")
\tput("user://e.bin", "{two.hex()}")
\tvar c = File.new()
\tshow("c", c, c.open_compressed("user://c.bin", File.READ, 0))
\tvar e = File.new()
\tshow("e", e, e.open_encrypted_with_pass("user://e.bin", File.READ, "hunter2"))
\tquit()
"""
    out = oracles.godot3_run(script)
    got: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("@@"):
            tag, rest = line[2:].split(" ", 1)
            got.setdefault(tag, []).append(rest)
    for tag, data, password in (("c", compressed, None), ("e", two, "hunter2")):
        sf = gf.open(data, password=password)
        assert got[tag] == [gf.dumps(v, "godot3").hex() for v in sf.values], (tag, out)


# -- text where bytes were expected -------------------------------------------------------------------------


@pytest.mark.parametrize("text, kind", [
    (b"; a game's settings\n[player]\nname=\"Ann\"\nhp=10\n", "configfile"),
    (b'{\n"gold": 12,\n"pos": Vector2( 1, 2 )\n}\n', "var2str"),
    (b'{"gold": 12, "name": "Ann"}', "json"),
    (b"[1, 2, 3]", "json"),
    (b"# Saves\n\nA *Markdown* page, say.\n", "text"),
])
def test_text_is_named_with_the_command_that_reads_it(text: bytes, kind: str, tmp_path: Path) -> None:
    path = tmp_path / "save.txt"
    path.write_bytes(text)
    if kind == "configfile":  # a document of its own since issue 41: read, shown and explained as one
        assert gf.open(text).kind == "configfile"
        for command in ("dump", "detect", "explain"):
            p = _cli(command, path)
            assert p.returncode == 0 and "frame of" not in p.stdout + p.stderr, (command, p.stderr)
        return
    with pytest.raises(NotBinaryError) as info:
        gf.open(text)
    assert info.value.kind == kind
    for command in ("dump", "detect", "explain"):
        p = _cli(command, path)
        assert p.returncode == 1, command
        said = p.stdout + p.stderr
        assert "not binary" in said and "frame of" not in said, (command, said)
        assert ("godot-formats load" in said) == (kind != "text")
        assert ("leaves it alone" in said) == (kind == "json")  # a game's JSON save needs no migration


def test_an_encrypted_configfile_is_still_a_save_file() -> None:
    # The save reader still reads the layers (its container is "text"); gf.open hands the text on to the
    # ConfigFile document (issue 41), the reading's one place for ConfigFile text.
    case = CONTAINERS["g3_enc_configfile"]
    data = bytes.fromhex(case["file_hex"])
    assert open_save(data, password="hunter2").container == "text"
    doc = gf.open(data, password="hunter2")
    assert doc.kind == "configfile" and doc.encryption.version == 3 and doc.to_bytes() == data


# -- one rule, one reading ---------------------------------------------------------------------------------------


def _count_decodes(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, int, int | None]]:
    """Every Decoder.decode call, by (dialect, offset, end), and every record a run of them decodes."""
    calls: Counter[tuple[str, int, int | None]] = Counter()
    real = codec.Decoder._decode  # decode and decode_marked both go through it

    def counted(self: codec.Decoder, data: Any, offset: int, end: int | None, marks: Any) -> Any:
        calls[(self.dialect.name, offset, end)] += 1
        return real(self, data, offset, end, marks)

    monkeypatch.setattr(codec.Decoder, "_decode", counted)
    real_run = codec.Decoder.decode_run  # the compiled core's runs of records

    def counted_run(self: codec.Decoder, data: Any, spans: Any, first: int = 0, **kw: Any) -> Any:
        out = real_run(self, data, spans, first, **kw)
        # The records it read (the one it stops at is the reference's, counted there: as decode's own
        # compiled attempt before its fallback is not counted either).
        if self._c is not None:
            for s, e in spans[first:first + len(out[0])]:
                calls[(self.dialect.name, s, e)] += 1
        return out

    monkeypatch.setattr(codec.Decoder, "decode_run", counted_run)
    return calls


def _save(dialect: str, n: int) -> tuple[bytes, list[Any]]:
    values = [{"id": i, "name": f"player {i}", "pos": gf.Vector3(i, 2, 3), "tags": ["a", "b"]} for i in range(n)]
    return join_frames([gf.dumps(v, dialect) for v in values]), values


def _spans(data: bytes) -> list[tuple[int, int]]:
    layout = Layout.frames(data)
    assert layout is not None
    return list(layout.spans)


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_open_decodes_each_record_once(dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 50
    data, values = _save(dialect, n)
    spans = _spans(data)
    calls = _count_decodes(monkeypatch)
    sf = gf.open(data, dialect=dialect)
    assert sf.values == values
    # Each record once; besides, one look at the whole file as a bare value (it fails at its first header).
    assert [calls[(dialect, s, e)] for s, e in spans] == [1] * n
    assert sum(calls.values()) == n + 1, calls
    calls.clear()
    sf = gf.open(data)
    assert sf.dialect.name == dialect and sf.values == values
    assert [calls[(dialect, s, e)] for s, e in spans] == [1] * n  # the values returned are that decoding's
    per_dialect = Counter(name for name, _, _ in calls.elements())
    others = {name: k for name, k in per_dialect.items() if name != dialect}
    # Every other dialect is out at its first record or first header, or shares the winner's decoding
    # (a sibling that writes the same bytes reads them as the same values): never a second full decode.
    assert all(k <= 2 for k in others.values()), others


def test_detection_lists_come_from_the_dialects() -> None:
    """The order detection tries and its weights are the registered engine dialects', not hand-kept lists."""
    from godot_formats.saves.detection import engine_dialects, engine_order
    engines = {name for name in gf.dialect_names() if gf.get_dialect(name).engine}
    order = engine_order()
    assert set(order) == engines
    assert {d.name for d in engine_dialects()} == engines | {"godot2"}
    assert all(order[name] == gf.get_dialect(name).prior for name in order)
    # a sibling comes after the dialect it is measured against
    names = list(order)
    assert all(names.index(gf.get_dialect(n).sibling) < names.index(n) for n in names if gf.get_dialect(n).sibling)


def test_ambiguity_is_one_typed_error() -> None:
    aabb = bytes.fromhex("0b000000" + "0000803f" * 6)  # Godot 3 AABB = Godot 4 Transform2D, both complete
    with pytest.raises(AmbiguousDialectError) as info:
        gf.open(aabb)
    assert set(info.value.candidates) >= {"godot3", "godot4"}
    with pytest.raises(AmbiguousDialectError):
        gf.loads(aabb, "auto")
    assert gf.open(aabb, dialect="godot3").values[0] == gf.AABB(gf.Vector3(1, 1, 1), gf.Vector3(1, 1, 1))


def test_the_json_of_detect_names_the_damage(tmp_path: Path) -> None:
    path = _file(tmp_path, DAMAGED[0])
    p = _cli("detect", "--json", path)
    report = json.loads(p.stdout)
    assert p.returncode == 1 and report["verdict"].startswith("damaged: at byte")
    assert "record 2 of 4" in report["verdict"]


# -- decompression bombs: a budget proportional to the file -----------------------------------------


@pytest.mark.parametrize("mode", ["fastlz", "deflate", "zstd", "gzip", "brotli"])
def test_a_compressed_layer_gets_a_budget_relative_to_the_file(mode: str, tracemalloc_peak: Any = None) -> None:
    import tracemalloc

    from godot_formats.layers.compression import MODES, GcpfInfo, write_gcpf
    from godot_formats.saves.reading import RATIO_FLOOR

    mode_id = next(m.id for m in MODES if m.name.lower() == mode)
    plaintext = bytes(8 << 20)  # 8 MiB of zeros: far over 100 times the compressed file
    bomb = write_gcpf(plaintext, GcpfInfo(mode=mode_id, block_size=1 << 20), allow_brotli_write=True)
    assert len(bomb) * 100 < len(plaintext)
    tracemalloc.start()
    try:
        with pytest.raises(gf.DecodeError, match="max_ratio=100") as info:
            gf.open(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * RATIO_FLOOR + 20 * len(bomb), peak  # nothing near the declared size was allocated
    assert "decompression bomb" in str(info.value)
    with pytest.raises(gf.DecodeError, match="max_ratio=100"):
        gf.FileAccess.open(io.BytesIO(bomb), "r", compression=mode_id)
    # Lifted on request: then the bytes inside are read (and are no Variants).
    with pytest.raises(gf.DecodeError) as lifted:
        gf.open(bomb, max_ratio=0)
    assert "max_ratio" not in str(lifted.value)


def test_real_saves_are_far_under_the_budget() -> None:
    for name, case in CONTAINERS.items():
        if case["container"] == "compressed" and case.get("values"):
            data = bytes.fromhex(case["file_hex"])
            assert gf.open(data).values is not None, name
