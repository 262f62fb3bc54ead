"""``godot-formats engine`` (ask the real engine) and ``python3 -m godot_formats.oracle``
(regenerate fixtures), against the real Godot 3.2.3 and Godot 4.6.

The engine tests are marked ``engine`` and skip with the reason when an engine is not
installed (``bash scripts/install-oracles.sh``). The engine is the judge: what the command
prints is compared with the engine's own record (through :mod:`godot_formats.oracle`) and
with the fixtures the engine wrote; our encoder is only checked against them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import godot_formats as gf
from godot_formats import oracle
from godot_formats.tool import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

G3 = oracle.godot3_available()
G4 = oracle.godot4_available()
needs_godot3 = [pytest.mark.engine, pytest.mark.skipif(G3 is not None, reason=str(G3))]
needs_godot4 = [pytest.mark.engine, pytest.mark.skipif(G4 is not None, reason=str(G4))]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def field(out: str, label: str) -> str:
    """The value printed after ``label:`` (first such line)."""
    for line in out.splitlines():
        if line.strip().startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {label!r} line in:\n{out}")


# -- engine encode ----------------------------------------------------------------------


@pytest.mark.parametrize(("engine", "expr", "text", "value"), [
    pytest.param("godot3", "Vector2(1, 2)", "Vector2( 1, 2 )", gf.Vector2(1, 2), marks=needs_godot3),
    pytest.param("godot4", "Vector2(1, 2)", "Vector2(1, 2)", gf.Vector2(1, 2), marks=needs_godot4),
    pytest.param("godot3", "0.1", "0.1", 0.1, marks=needs_godot3),
    pytest.param("godot4", "0.1", "0.1", 0.1, marks=needs_godot4),
])
def test_encode_prints_the_engines_bytes_and_text(capsys: pytest.CaptureFixture[str], engine: str, expr: str,
                                                  text: str, value: object) -> None:
    code, out, err = run_cli(capsys, "engine", "encode", expr, "--engine", engine)
    assert code == 0, err
    assert out.splitlines()[0] == f"{engine}: {expr}"
    assert field(out, "text") == text
    # The engine wrote these bytes; our encoder must agree with it.
    assert bytes.fromhex(field(out, "hex")) == gf.dumps(value, engine)


@pytest.mark.parametrize("engine", [pytest.param("godot3", marks=needs_godot3),
                                    pytest.param("godot4", marks=needs_godot4)])
def test_encode_json_is_the_engines_record(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    exprs = ["1", '"ab"', "[1, 2.5]"]
    code, out, err = run_cli(capsys, "engine", "encode", *exprs, "--engine", engine, "--json")
    assert code == 0, err
    printed = [json.loads(line) for line in out.splitlines()]
    encode = oracle.godot3_encode if engine == "godot3" else oracle.godot4_encode
    engine_records = encode([{"name": e, "expr": e} for e in exprs])
    assert printed == engine_records
    assert [r["hex"] for r in printed][:2] == ["0200000001000000", "040000000200000061620000"]


@pytest.mark.engine
@pytest.mark.skipif(G3 is not None, reason=str(G3))
def test_encode_reports_a_parse_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "engine", "encode", "Vector2(", "--engine", "godot3")
    assert code == 1
    assert "(the engine reported errors)" in out.splitlines()[0]
    assert "Parse Error" in out and "did not compile" in out


# -- engine decode ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", [pytest.param("godot3", marks=needs_godot3),
                                    pytest.param("godot4", marks=needs_godot4)])
def test_decode_reads_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str) -> None:
    data = gf.dumps({"hp": 3, "pos": gf.Vector2(1, 2)}, engine)
    path = tmp_path / "value.bin"
    path.write_bytes(data)
    code, out, err = run_cli(capsys, "engine", "decode", str(path), "--engine", engine)
    assert code == 0, err
    assert out.splitlines()[0].endswith(f"of {len(data)} bytes ({path}): reads it")
    assert field(out, "type").split()[0] == ("18" if engine == "godot3" else "27")  # Dictionary
    assert bytes.fromhex(field(out, "again")) == data  # the engine wrote back our bytes


# Cut Vector2 bytes: each engine's own error lines (fixtures/godot*/malformed.jsonl hold the same).
@pytest.mark.parametrize(("engine", "error"), [
    pytest.param("godot3", 'ERROR: decode_variant: Condition "len < 4 * 2" is true. Returned: ERR_INVALID_DATA',
                 marks=needs_godot3),
    pytest.param("godot4", '[decode] ERROR: Condition "(size_t)len < sizeof(float) * 2" is true. '
                           "Returning: ERR_INVALID_DATA", marks=needs_godot4),
])
def test_decode_prints_the_engines_errors(capsys: pytest.CaptureFixture[str], engine: str, error: str) -> None:
    code, out, _ = run_cli(capsys, "engine", "decode", "--hex", "0500000000", "--engine", engine)
    assert code == 1
    assert out.splitlines()[0].endswith("of 5 bytes (--hex): reports errors")
    assert error in [line.strip() for line in out.splitlines()]
    with pytest.raises(gf.DecodeError):  # and our decoder refuses them too
        gf.loads(bytes.fromhex("0500000000"), engine)


@pytest.mark.engine
@pytest.mark.skipif(G4 is not None, reason=str(G4))
def test_decode_with_objects(capsys: pytest.CaptureFixture[str]) -> None:
    [rec] = [r for r in map(json.loads, (FIXTURES / "godot4" / "encode.jsonl").open()) if r.get("hex_full_objects")
             and r["type_name"] == "Object"][:1]
    hexes = rec["hex_full_objects"]
    code, out, err = run_cli(capsys, "engine", "decode", "--hex", hexes, "--engine", "godot4", "--allow-objects",
                             "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed["ok"] and printed["type_name"] == "Object" and printed["allow_objects"] is True
    code, out, _ = run_cli(capsys, "engine", "decode", "--hex", hexes, "--engine", "godot4", "--json")
    assert code == 1 and json.loads(out)["ok"] is False  # without objects, the engine refuses them


# -- not installed: one line saying how to install (always runs) --------------------------


def test_godot3_not_installed_says_how_to_install(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GODOT3", "/nonexistent/godot3-server")
    code, out, err = run_cli(capsys, "engine", "encode", "1", "--engine", "godot3")
    assert code == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith("godot-formats engine: godot3 engine: GODOT3=/nonexistent/godot3-server")
    assert "scripts/install-oracles.sh" in line


def test_godot4_not_installed_says_how_to_install(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GODOT_FORMATS_ORACLE_HOME", str(tmp_path / "empty-home"))
    code, out, err = run_cli(capsys, "engine", "decode", "--hex", "00000000", "--engine", "godot4")
    assert code == 1 and out == ""
    [line] = err.splitlines()
    assert "godot4 engine not installed" in line and str(tmp_path / "empty-home") in line
    assert "scripts/install-oracles.sh" in line and "godot-formats engine install" in line
    with pytest.raises(oracle.OracleError, match="godot4 engine not installed"):
        oracle.godot4_encode([{"name": "one", "expr": "1"}])


def test_decode_needs_exactly_one_source(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "engine", "decode", "--engine", "godot3")
    assert code == 1 and "give the bytes as FILE or as --hex HEX" in err


def test_status_names_the_oracle_home(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GODOT_FORMATS_ORACLE_HOME", str(tmp_path))
    code, out, _ = run_cli(capsys, "engine", "status")
    assert code == 1
    assert f"oracle home: {tmp_path}" in out
    assert out.splitlines()[1].startswith("godot4: godot4 engine not installed")


# -- fixtures regenerate from the repository ----------------------------------------------


def regenerate(*argv: str) -> bytes:
    p = subprocess.run([sys.executable, "-m", "godot_formats.oracle", *argv], cwd=REPO, capture_output=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout


@pytest.mark.engine
@pytest.mark.skipif(G3 is not None, reason=str(G3))
def test_godot3_fixtures_regenerate_byte_identically() -> None:
    """The commands fixtures/README.md names give the committed files back, byte for byte."""
    assert regenerate("godot3", "encode", "fixtures/godot3/stream_catalog.json", "--keep-case-fields") == \
        (FIXTURES / "godot3" / "stream.jsonl").read_bytes()
    assert regenerate("godot3", "decode", "fixtures/godot3/hostile_counts.jsonl") == \
        (FIXTURES / "godot3" / "hostile_counts.jsonl").read_bytes()


@pytest.mark.engine
@pytest.mark.skipif(G4 is not None, reason=str(G4))
def test_godot4_fixtures_regenerate_byte_identically() -> None:
    assert regenerate("godot4", "decode", "fixtures/godot4/typed_array_elements.jsonl") == \
        (FIXTURES / "godot4" / "typed_array_elements.jsonl").read_bytes()
    assert regenerate("godot4", "encode", "fixtures/godot4/stream_catalog.json", "--keep-case-fields",
                      "--style", "spaced") == (FIXTURES / "godot4" / "stream.jsonl").read_bytes()


# -- the engine never runs a file's code unless told to ------------------------------


def _script_object(engine: str, marker: Path) -> bytes:
    """A full Object carrying code that touches ``marker``: Godot 3 embeds the GDScript and its
    source; Godot 4 names the script by path."""
    from godot_formats.core.types import Object
    if engine == "godot3":
        code = f"extends Reference\nfunc _init():\n\tOS.execute('touch', ['{marker}'], true)\n"
        return gf.dumps(Object("Reference", {"script": Object("GDScript", {"script/source": code})}), "godot3",
                        allow_objects=True)
    return gf.dumps(Object("RefCounted", {"script": "res://evil.gd"}), "godot4", allow_objects=True)


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_decode_refuses_bytes_that_carry_code(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              engine: str) -> None:
    """Refused before any engine is asked (so this runs without one), naming where the code is."""
    marker = tmp_path / "ran"
    blob = tmp_path / "evil.bin"
    blob.write_bytes(_script_object(engine, marker))
    code, out, err = run_cli(capsys, "engine", "decode", str(blob), "--engine", engine, "--allow-objects")
    assert code == 1 and out == "" and "carry code" in err and "<value>.script" in err
    assert not marker.exists()
    # Nested anywhere: inside an Array inside a Dictionary.
    from godot_formats.core.types import Object
    inner = Object("Node", {"name": "n", "script": Object("GDScript", {"script/source": "extends Node"})})
    hexes = gf.dumps({"save": [1, inner]}, "godot3", allow_objects=True).hex()
    code, _, err = run_cli(capsys, "engine", "decode", "--hex", hexes, "--engine", "godot3", "--allow-objects")
    assert code == 1 and "<value>['save'][1].script" in err
    # Bytes our reader cannot read are not vouched for either.
    code, _, err = run_cli(capsys, "engine", "decode", "--hex", "11000000ffffff7f", "--engine", engine,
                           "--allow-objects")
    assert code == 1 and "cannot tell whether they carry code" in err
    help_text = subprocess.run([sys.executable, "-m", "godot_formats", "engine", "decode", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    assert "--run-embedded-code" in help_text and "RUNS" in help_text


@pytest.mark.engine
@pytest.mark.skipif(G3 is not None, reason=str(G3))
def test_the_code_is_real_and_runs_only_when_told(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The refused Godot 3 bytes do run their code in the real Godot 3.2.3 when passed on on purpose:
    the refusal guards a real hole."""
    marker = tmp_path / "ran"
    blob = tmp_path / "evil.bin"
    blob.write_bytes(_script_object("godot3", marker))
    code, _, _ = run_cli(capsys, "engine", "decode", str(blob), "--engine", "godot3", "--allow-objects")
    assert code == 1 and not marker.exists()
    run_cli(capsys, "engine", "decode", str(blob), "--engine", "godot3", "--allow-objects", "--run-embedded-code")
    assert marker.exists()


# --- engine run: the engine runs a script with the user's files in its project ----------------------

RES = FIXTURES / "resources"


@pytest.mark.engine
@pytest.mark.skipif(G3 is not None, reason=str(G3))
def test_engine_run_loads_a_resource_save_in_godot3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "load.gd"
    script.write_text('extends SceneTree\nfunc _init():\n\tvar r = ResourceLoader.load("res://save.res", "", true)\n'
                      '\tprint("@@", var2str(r.get("level")), " ", var2str(r.get("pool")))\n\tquit()\n')
    code, out, _ = run_cli(capsys, "engine", "run", "--engine", "godot3", str(script), str(RES / "godot3/save.res"),
                           "--script-file", str(RES / "godot3/save_data.gd"),
                           "--script-file", str(RES / "godot3/inner.gd"))
    assert code == 0 and "@@12 PoolIntArray( 1, 2, 3 )" in out


@pytest.mark.engine
@pytest.mark.skipif(G4 is not None, reason=str(G4))
def test_engine_run_loads_a_resource_save_in_godot4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "load.gd"
    script.write_text('extends Node\nfunc _ready():\n\tvar r = ResourceLoader.load("res://save.res", "", '
                      'ResourceLoader.CACHE_MODE_IGNORE)\n\tprint("@@", var_to_str(r.get("v4")))\n'
                      '\tget_tree().quit()\n')
    code, out, _ = run_cli(capsys, "engine", "run", "--engine", "godot4", str(script), str(RES / "godot4/save.res"),
                           "--script-file", str(RES / "godot4/save_data.gd"),
                           "--script-file", str(RES / "godot4/inner.gd"))
    assert code == 0 and "@@Vector4(1, 2, 3, 4)" in out


def test_engine_run_refuses_a_save_that_would_run_its_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before any engine starts (so this runs without one): the scan finds the script."""
    script = tmp_path / "load.gd"
    script.write_text("extends SceneTree\nfunc _init():\n\tquit()\n")
    code, _, err = run_cli(capsys, "engine", "run", "--engine", "godot3", str(script),
                           str(RES / "hostile/godot3/emb_nested_c.res"))
    assert code == 1 and "not given to the engine" in err and "--run-embedded-code" in err
