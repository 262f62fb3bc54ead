"""The real engines run the code of every hostile file of fixtures/resources/hostile/proven/ when
they load it: the proof that what tests/resources/test_scan.py asks the scanner to flag is dangerous.

Each engine is launched once for the module: its folder's ``check.gd`` copies the second files
(``payload.tres``, the ``typed_*.gd`` scripts) into ``user://``, where the saves reference them,
and loads every file without the cache between ``@@BEGIN name`` and ``@@END name``.  A payload
prints ``@@PAYLOAD_RAN`` when it runs.  The generator's own engine run said which files run code
(``engine_runs_code`` in expected.json); this module checks that it is still so, file by file,
and that the clean files run nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import FIXTURES

from godot_formats import oracle

pytestmark = pytest.mark.engine

PROVEN = FIXTURES / "resources" / "hostile" / "proven"
MISSING = {"godot3": oracle.godot3_available(), "godot4": oracle.godot4_available()}
_BRACKET = re.compile(r"@@(BEGIN|END) (\S+)")


def _expected(engine: str) -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = json.loads((PROVEN / engine / "expected.json").read_text("utf-8"))["files"]
    return files


def _project(engine: str) -> dict[str, bytes]:
    """The folder's files, ``holder.gd``, and ``cases.txt``: the second files to copy into user://
    (``user:NAME``), then every file to load."""
    folder, expected = PROVEN / engine, _expected(engine)
    second = [n for n in expected if n == "payload.tres" or n.endswith(".gd")]
    loaded = [n for n in expected if not n.endswith(".gd")]
    files = {n: (folder / n).read_bytes() for n in expected}
    files["holder.gd"] = (folder / "holder.gd").read_bytes()
    files["cases.txt"] = "".join([f"user:{n}\n" for n in second] + [f"{n}\n" for n in loaded]).encode()
    return files


def _printed_while_loading(lines: list[str]) -> dict[str, list[str]]:
    """What the engine printed between ``@@BEGIN name`` and ``@@END name``, by name."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        m = _BRACKET.search(line)
        if m is not None:
            current = m.group(2) if m.group(1) == "BEGIN" else None
            if current is not None:
                out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


@pytest.fixture(scope="module")
def loads() -> dict[str, dict[str, list[str]]]:
    """Each engine's run of check.gd (one launch per engine), by engine, then by file."""
    from godot_formats.oracle import godot3, godot4

    out = {}
    if MISSING["godot3"] is None:
        check = (PROVEN / "godot3" / "check.gd").read_text("utf-8")
        p = godot3.run_project(check, _project("godot3"), timeout=120)
        out["godot3"] = _printed_while_loading((p.stdout + p.stderr).splitlines())
    if MISSING["godot4"] is None:
        check = (PROVEN / "godot4" / "check.gd").read_text("utf-8")
        r = godot4.run_project(check, _project("godot4"), timeout=300)
        out["godot4"] = _printed_while_loading(r.lines)
    return out


CASES = [(engine, name, entry) for engine in ("godot3", "godot4")
         for name, entry in sorted(_expected(engine).items()) if not name.endswith(".gd")]


@pytest.mark.parametrize("engine, name, entry", CASES, ids=[f"{e}/{n}" for e, n, _ in CASES])
def test_the_engine_runs_the_code_of_every_file_marked_so(loads: dict[str, dict[str, list[str]]], engine: str,
                                                          name: str, entry: dict[str, Any]) -> None:
    if MISSING[engine] is not None:
        pytest.skip(str(MISSING[engine]))
    printed = loads[engine]
    assert name in printed, f"the engine never reached {name}: {sorted(printed)}"
    ran = [line for line in printed[name] if "@@PAYLOAD_RAN" in line]
    if entry.get("engine_runs_code"):
        assert ran, f"{engine} loaded {name} and ran nothing: {printed[name][-10:]}"
    else:
        assert not ran, f"{engine} ran code loading {name}, which the generator said it would not"


@pytest.mark.parametrize("engine", ["godot3", "godot4"])
def test_both_engines_refuse_a_byte_order_mark_before_the_header(loads: dict[str, dict[str, list[str]]],
                                                                 engine: str) -> None:
    """What the engines do with a BOM (the scanner reads such a file all the same, and flags it)."""
    if MISSING[engine] is not None:
        pytest.skip(str(MISSING[engine]))
    assert any("Expected '['" in line for line in loads[engine]["bom.tres"])


def test_the_fixtures_are_the_generators_outputs() -> None:
    """Every file expected.json names is in the folder, beside the generator that wrote it."""
    for engine in ("godot3", "godot4"):
        for name in _expected(engine):
            assert (PROVEN / engine / name).is_file()
        log = (PROVEN / engine / "log.txt").read_text("utf-8")
        assert "@@DONE" in log and "@@FILE payload.tres" in log


def test_godot4_bytes_to_var_without_objects_loads_no_script() -> None:
    """Why ``engine decode`` without ``--allow-objects`` needs no scan: a typed Array or Dictionary
    whose script is in user:// decodes untyped, and the script's ``_static_init`` does not run."""
    if MISSING["godot4"] is not None:
        pytest.skip(str(MISSING["godot4"]))
    import godot_formats as gf
    from godot_formats.core import types as t
    from godot_formats.oracle import godot4

    arr = gf.dumps(t.TypedArray(t.ContainerType.of_script("user://t.gd"), []), "godot4")
    dic = gf.dumps(t.TypedDictionary(t.ContainerType.of_script("user://t.gd"), t.ContainerType("int"), {}), "godot4")
    payload = "extends Resource\\nstatic func _static_init():\\n\\tprinterr(\\\"@@PAYLOAD_RAN\\\")\\n"
    script = ("extends Node\nfunc _ready():\n\tvar f = FileAccess.open(\"user://t.gd\", FileAccess.WRITE)\n"
              f"\tf.store_string(\"{payload}\")\n"
              "\tf.close()\n"
              f"\tprinterr(\"@@A \", bytes_to_var(PackedByteArray({list(arr)})))\n"
              f"\tprinterr(\"@@B \", bytes_to_var(PackedByteArray({list(dic)})))\n"
              "\tprinterr(\"@@C \", load(\"user://t.gd\") != null)\n\tget_tree().quit()\n")
    lines = godot4.run_project(script, {}).lines
    at = {line.split(" ", 1)[0]: i for i, line in enumerate(lines) if line.startswith("@@")}
    assert "@@A" in at and "@@B" in at and "@@C" in at, lines
    ran = [i for i, line in enumerate(lines) if "@@PAYLOAD_RAN" in line]
    assert ran and all(i > at["@@B"] for i in ran), lines  # only the explicit load ran it
