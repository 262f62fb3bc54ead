"""The conformance kit (``godot-formats conformance``, godot_formats.conformance, docs/conformance.md).

* the shipped corpus is what scripts/make_conformance_corpus.py makes of fixtures/ (the engines' bytes);
* an adapter on this library passes every case; one on the documentation page's dialect (docs-godot4)
  fails, and the report names the type ids that differ;
* a misbehaving adapter (exits at once, prints garbage, never answers, answers other ids, crashes
  half-way) gives a report and exit status 1, never a traceback or a hang;
* the pytest plugin runs only when asked, and then once per case.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType

import pytest
from conftest import FIXTURES, read_jsonl

import godot_formats as gf
from godot_formats.conformance import ERROR, SAME, _reaper, cases, judge, runner
from godot_formats.conformance.report import summary, to_text
from godot_formats.tool import main

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = [sys.executable, str(ROOT / "examples" / "conformance_adapter.py")]
DOCS_ADAPTER = [*ADAPTER, "--as", "docs-godot4"]
#: A short time limit for the adapters that never answer (they are stopped after it).
QUICK = ["--timeout", "0.2", "--start-timeout", "0.2"]
#: For the adapters that do answer, or exit: only the number of restarts matters.
ONE_RESTART = ["--restarts", "1"]


def _builder() -> ModuleType:
    path = ROOT / "scripts" / "make_conformance_corpus.py"
    spec = importlib.util.spec_from_file_location("make_conformance_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["conformance", *args])
    out, err = capsys.readouterr()
    return status, out, err


def python_adapter(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "adapter.py"
    script.write_text(textwrap.dedent(body))
    return [sys.executable, str(script)]


# -- the corpus ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_shipped_corpus_is_in_sync_with_fixtures(dialect: str) -> None:
    builder = _builder()
    shipped = (ROOT / "godot_formats" / "conformance" / "corpus" / f"{dialect}.jsonl").read_text(encoding="utf-8")
    assert shipped == builder.render(builder.build(dialect)), "run python3 scripts/make_conformance_corpus.py"


def test_corpus_is_the_engines() -> None:
    """Expected bytes are the engine's own encodings; expected refusals are inputs the engine refused."""
    import test_malformed

    for dialect in ("godot3", "godot4"):
        corpus = cases([dialect])
        engine_hex = {h for c in read_jsonl(FIXTURES / dialect / "encode.jsonl") if not c.get("raw")
                      for h in (c.get("hex"), c.get("hex_full_objects")) if h}
        same = [c for c in corpus if c.expect == SAME]
        assert {c.hex for c in same} == engine_hex
        refused = {k for e, k, c in test_malformed.CASES
                   if e == dialect and test_malformed.engine_verdict(e, c) == test_malformed.REFUSED}
        stateful = {f"{kind}:{name}" for d, kind, name in _builder().STATEFUL_REFUSALS if d == dialect}
        assert {c.name for c in corpus if c.expect == ERROR} == refused - stateful
        assert len(same) >= (130 if dialect == "godot3" else 180)
        # NodePath padding is masked (both engines leave it uninitialised), and nothing else.
        masked = [c for c in corpus if c.mask]
        assert len(masked) >= 10 and all(c.expect == SAME and b"\x00" in c.data for c in masked)


def test_judge_masks_node_path_padding_only() -> None:
    case = next(c for c in cases(["godot4"]) if c.mask)
    start, end = case.mask[0]
    padded = bytearray(case.data)
    padded[start:end] = b"\xaa" * (end - start)
    assert judge(case, actual=bytes(padded)).passed
    padded[0] ^= 1
    verdict = judge(case, actual=bytes(padded))
    assert not verdict.passed and verdict.reason == "bytes differ from offset 0"
    assert judge(case, actual=case.data + b"\0").reason.startswith(f"{len(case.data) + 1} bytes instead of")
    assert not judge(case, error="no").passed
    refusal = next(c for c in cases(["godot4"]) if c.expect == ERROR)
    assert judge(refusal, error="DecodeError").passed
    assert judge(refusal, actual=b"").reason == "accepted an input the engine refuses"


# -- the two adapters of the issue --------------------------------------------------------------


def test_library_adapter_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "--", *ADAPTER)
    assert status == 0, out[-3000:]
    assert err == ""
    total = sum(len(c.operations()) for c in cases())
    assert out.rstrip().endswith(f"PASS: {total} of {total} cases")
    assert "godot3 roundtrip: 179/179 passed" in out and "godot4 roundtrip: 244/244 passed" in out
    assert "godot4 decode:    244/244 passed" in out and "godot4 encode:    182/182 passed" in out
    assert "operations: roundtrip, decode, encode" in out and "hints" not in out
    status, out, _ = run_cli(capsys, "--json", "--dialect", "godot4", "--", *ADAPTER)
    report = json.loads(out)
    assert status == 0 and report["ok"] and report["failures"] == [] and report["not_run"] == []
    assert list(report["dialects"]) == ["godot4"] and report["adapter"]["starts"] == 1
    assert report["adapter"]["declared_operations"] == ["roundtrip", "decode", "encode"]
    assert report["operations"]["encode"] == {"passed": 182, "failed": 0, "hung": 0, "crashed": 0, "not_run": 0,
                                              "total": 182}
    assert report["time"]["limit"] == 900 and report["time"]["stopped"] is None


@pytest.mark.slow
def test_documentation_dialect_adapter_fails_naming_type_ids(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--json", "-d", "godot4", "--op", "roundtrip", "--", *DOCS_ADAPTER)
    assert status == 1
    report = json.loads(out)
    failing = report["dialects"]["godot4"]["failing_types"]
    # The page's table is the engine's up to String; every id from 6 on is off (Vector2i ...).
    assert {0, 1, 2, 4}.isdisjoint(failing)
    assert {6, 9, 17, 22, 24, 27, 28, 29, 38} <= set(failing)
    first = report["failures"][0]
    assert first["expected_hex"] == first["input_hex"] and first["actual_hex"] != first["expected_hex"]
    assert first["engine"] and first["status"] == "fail" and first["op"] == "roundtrip"
    # The hint names the documentation dialect, which explains every failure.
    hint, = report["hints"]
    assert hint["rule"] == "docs-godot4" and hint["count"] == report["failed"] == 144
    assert hint["says"].startswith("the documentation dialect docs-godot4: Godot 3 type ids used for Godot 4")
    status, text, _ = run_cli(capsys, "-d", "godot4", "--op", "roundtrip", "--", *DOCS_ADAPTER)
    assert status == 1
    assert "godot4 failing type ids: 3 float, 5 Vector2, 6 Vector2i, 7 Rect2" in text
    assert "    6 Vector2i                       0/2       -        -   FAIL" in text
    assert "FAIL godot4 encode:vector2i (type 6 Vector2i) [roundtrip]" in text  # a failing case of each type
    assert "\n  expected: " in text and "\n  actual:   " in text and "\n  engine:   Vector2i(1, -2)" in text
    assert "144 of 144 failures match the documentation dialect docs-godot4: Godot 3 type ids used for Godot 4" \
        in text
    assert text.rstrip().endswith(f"FAIL: {report['failed']} of {report['total']} cases failed")


@pytest.mark.slow
def test_each_direction_is_judged_on_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    """The documentation-page adapter under all three operations: decode and encode each get their own
    counts and columns, and the one hint covers the failures of all three."""
    status, out, _ = run_cli(capsys, "--json", "-d", "godot4", "--", *DOCS_ADAPTER)
    report = json.loads(out)
    ops = report["operations"]
    assert status == 1 and list(ops) == ["roundtrip", "decode", "encode"]
    assert (ops["roundtrip"]["passed"], ops["decode"]["passed"], ops["encode"]["passed"]) == (100, 103, 41)
    assert ops["encode"]["total"] == 182  # a refused input has no value to encode
    vector2 = next(r for r in report["dialects"]["godot4"]["types"] if r["type"] == 5)
    assert vector2["operations"]["decode"] == {"same": {"passed": 2, "total": 2}, "error": {"passed": 1, "total": 2}}
    decode = next(f for f in report["failures"] if f["op"] == "decode" and f["case"] == "encode:rect2")
    assert decode["expected_json"] == '{"type":"Rect2","args":[1.0,2.0,3.0,4.0]}'
    assert decode["actual_json"] == '{"type":"Vector3","args":[1.0,2.0,3.0]}'
    hint, = report["hints"]
    assert hint["rule"] == "docs-godot4" and hint["count"] == report["failed"]


@pytest.mark.slow
def test_decode_only_and_encode_only_adapters(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "--json", "-d", "godot3", "--", *ADAPTER, "--ops", "decode")
    report = json.loads(out)
    assert status == 0 and report["ok"]
    assert list(report["operations"]) == ["decode"] and report["unsupported_operations"] == ["roundtrip", "encode"]
    assert report["total"] == 179 and report["adapter"]["declared_operations"] == ["decode"]
    status, text, _ = run_cli(capsys, "-d", "godot3", "--", *ADAPTER, "--ops", "encode")
    assert status == 0
    assert "operations: encode (roundtrip, decode: not supported by the adapter)" in text
    assert "  type                             bytes  not run" in text  # the encode column alone
    assert "godot3 encode:    134/134 passed" in text and text.rstrip().endswith("PASS: 134 of 134 cases")
    # Asking for an operation the adapter does not declare runs nothing of it.
    status, out, _ = run_cli(capsys, "--json", "-d", "godot3", "--op", "roundtrip", "--op", "encode", "--",
                             *ADAPTER, "--ops", "encode")
    report = json.loads(out)
    assert list(report["operations"]) == ["encode"] and report["unsupported_operations"] == ["roundtrip"]


# -- fake adapters: hang, crash, wrong answers, out of time ------------------------------------------

#: An adapter that echoes its input back (every engine encoding passes, every refusal fails) unless its
#: first argument names a type id, on which it does what the second says: hang, or exit.
ECHO = """
    import json, os, sys, time
    kind = int(sys.argv[1]) if len(sys.argv) > 1 else None
    then = sys.argv[2] if len(sys.argv) > 2 else "hang"
    for line in sys.stdin:
        r = json.loads(line)
        if r["op"] == "operations":
            print(json.dumps({"id": 0, "operations": ["roundtrip"]}), flush=True)
            continue
        if kind is not None and r["hex"][:2] == f"{kind:02x}":
            if then == "hang":
                time.sleep(600)
            os._exit(9)
        print(json.dumps({"id": r["id"], "hex": r["hex"]}), flush=True)
"""


def _of_type(dialect: str, type_id: int) -> list[str]:
    return [c.name for c in cases([dialect]) if c.type == type_id]


@pytest.mark.slow
def test_a_case_that_hangs_is_marked_and_the_run_goes_on(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Every NodePath case hangs the adapter (as @gd-com/utils 5.0.0 does on some): each is marked as a hang,
    the adapter is started afresh for the next case as often as needed, and nothing is left not run."""
    command = python_adapter(tmp_path, ECHO) + ["22"]
    result = runner.run(command, cases(["godot4"]), timeout=0.3)
    report, text = summary(result), to_text(result)
    nodepaths = _of_type("godot4", 22)
    assert report["hung"] == len(nodepaths) >= 10 and report["crashed"] == 0 and report["not_run"] == []
    assert report["adapter"]["starts"] == len(nodepaths) + 1
    hangs = [f for f in report["failures"] if f["status"] == "hang"]
    assert sorted(f["case"] for f in hangs) == sorted(nodepaths)
    assert all(f["reason"] == "no answer within 0.3 s (the adapter was stopped)" for f in hangs)
    refusals = [c for c in cases(["godot4"]) if c.expect == ERROR and c.type != 22]
    assert report["passed"] == 244 - len(nodepaths) - len(refusals)  # the echo passes every other encoding
    hint = next(h for h in report["hints"] if h["rule"] == "hang-on-type")
    assert hint["says"] == "the adapter hangs on godot4 NodePath (type 22) values"
    assert hint["count"] == len(nodepaths)
    assert f"HANG godot4 {nodepaths[0]} (type 22 NodePath) [roundtrip]" in text
    assert f"failed ({len(nodepaths)} hung)" in text and "not run" not in text.split("operations:")[1]


@pytest.mark.slow
def test_a_case_that_kills_the_adapter_is_marked_and_the_run_goes_on(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    command = python_adapter(tmp_path, ECHO) + ["20", "exit"]  # Color
    status, out, _ = run_cli(capsys, "--json", "-d", "godot4", "--", *command)
    report = json.loads(out)
    colors = _of_type("godot4", 20)
    assert status == 1 and report["crashed"] == len(colors) >= 2 and report["hung"] == 0
    crashes = [f for f in report["failures"] if f["status"] == "crash"]
    assert [f["reason"] for f in crashes] == ["the adapter exited with status 9 before answering"] * len(colors)
    assert report["adapter"]["starts"] == len(colors) + 1 and report["not_run"] == []
    assert any(h["rule"] == "crash-on-type" for h in report["hints"])
    godot4 = report["dialects"]["godot4"]
    color = next(r for r in godot4["types"] if r["type"] == 20)
    assert color["operations"]["roundtrip"]["same"] == {"passed": 0, "total": len(colors)} and color["not_run"] == 0


@pytest.mark.slow
def test_cases_not_reached_in_time_are_not_run_not_failed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An adapter that answers the opening request and then nothing: the run's time limit (shorter than a
    case's) ends the run, and every case is "not run": its own count and column, no failure."""
    command = python_adapter(tmp_path, """
        import json, sys, time
        for line in sys.stdin:
            if json.loads(line)["op"] == "operations":
                print(json.dumps({"id": 0, "operations": ["roundtrip", "decode"]}), flush=True)
            else:
                time.sleep(600)
    """)
    # The operations are asked for, so that the plan does not hang on the opening request being
    # answered within the limit (on a loaded machine it may not be).
    ops = ["--op", "roundtrip", "--op", "decode"]
    status, out, err = run_cli(capsys, "--json", "--time-limit", "0.5", *ops, "-d", "godot3", "--", *command)
    report = json.loads(out)
    total = 2 * len(cases(["godot3"]))
    assert status == 1 and "Traceback" not in err
    assert (report["passed"], report["failed"], len(report["not_run"]), report["total"]) == (0, 0, total, total)
    assert report["failures"] == [] and not report["ok"]
    assert report["time"]["limit"] == 0.5 and report["time"]["stopped"] == "the time limit of 0.5 s was reached"
    assert report["dialects"]["godot3"]["failing_types"] == []
    status, text, _ = run_cli(capsys, "--time-limit", "0.5", *ops, "-d", "godot3", "--", *command)
    assert "(time limit 0.5 s); stopped: the time limit of 0.5 s was reached" in text
    assert "    2 INT                              -       -       -       -       28" in text  # 14 cases, 2 ops
    assert "godot3 roundtrip: 0/0 passed, 179 not run" in text
    assert text.rstrip().endswith(f"INCOMPLETE: 0 of {total} cases passed, {total} not run "
                                  "(the time limit of 0.5 s was reached)")


#: An adapter on this library whose writer has one switch of the dialect turned (a known mistake).
SWITCHED = """
    import json, sys
    import attrs
    import godot_formats as gf
    from godot_formats.views.jsonform import from_json
    sys.setrecursionlimit(10_000)  # the deepest value of the corpus
    key, value = sys.argv[1].split("=")
    for line in sys.stdin:
        r = json.loads(line)
        if r["op"] == "operations":
            print(json.dumps({"id": 0, "operations": ["roundtrip", "encode"]}), flush=True)
            continue
        d, o = gf.get_dialect(r["dialect"]), r["objects"]
        writer = attrs.evolve(d, name="mistaken", **{key: value})
        try:
            value_ = from_json(r["json"]) if r["op"] == "encode" else \
                gf.loads(bytes.fromhex(r["hex"]), d, allow_objects=o)
            answer = {"hex": gf.dumps(value_, writer, allow_objects=o).hex()}
        except gf.GodotFormatsError as e:
            answer = {"error": str(e)}
        print(json.dumps({"id": r["id"], **answer}), flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("switch, rule, says", [
    ("float_format=f32", "float32", "floats are written as 32-bit"),
    ("int_format=i32", "int32", "ints are written 32-bit only"),
    ("basis_order=columns", "basis-columns", "Basis and Transform written column by column"),
])
def test_wrong_answers_are_explained_by_a_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path, switch: str,
                                               rule: str, says: str) -> None:
    command = python_adapter(tmp_path, SWITCHED) + [switch]
    status, out, _ = run_cli(capsys, "--json", "-d", "godot4", "--", *command)
    report = json.loads(out)
    assert status == 1 and report["failed"] > 0 and report["crashed"] == report["hung"] == 0
    hint = report["hints"][0]
    assert hint["rule"] == rule and hint["says"].startswith(says)
    # Every failure is the switch's doing: wrong bytes, or (ints beyond 32 bits) a refusal to write them.
    assert hint["count"] == report["failed"] and hint["outputs"] + hint["refusals"] == hint["count"]
    assert (hint["refusals"] == hint["count"]) == (rule == "int32")
    assert {f["op"] for f in report["failures"]} <= {"roundtrip", "encode"}


def test_a_legacy_adapter_that_ignores_op_does_the_round_trip(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    """An adapter written before there were operations reads every request as a round trip: it answers
    the opening request as one (of no bytes), and is run with the round trip only."""
    command = python_adapter(tmp_path, """
        import json, sys
        import godot_formats as gf
        for line in sys.stdin:
            r = json.loads(line)
            try:
                v = gf.loads(bytes.fromhex(r["hex"]), r["dialect"], allow_objects=r["objects"])
                answer = {"hex": gf.dumps(v, r["dialect"], allow_objects=r["objects"]).hex()}
            except gf.GodotFormatsError as e:
                answer = {"error": str(e)}
            print(json.dumps({"id": r["id"], **answer}), flush=True)
    """)
    status, out, _ = run_cli(capsys, "--json", "-d", "godot3", "--", *command)
    report = json.loads(out)
    assert status == 0 and report["ok"] and list(report["operations"]) == ["roundtrip"]
    assert report["adapter"]["problems"] == [] and report["unsupported_operations"] == ["decode", "encode"]


# -- misbehaving adapters -----------------------------------------------------------------------


def assert_failed_cleanly(status: int, out: str, err: str) -> None:
    assert status == 1
    assert "Traceback" not in out + err
    assert out.rstrip().splitlines()[-1].startswith(("FAIL: ", "INCOMPLETE: "))


def test_adapter_that_exits_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An adapter that cannot even answer the opening request is broken, not failing cases: after three
    starts in a row it is given up, and every case is not run."""
    command = python_adapter(tmp_path, "import sys; print('no thanks', file=sys.stderr); sys.exit(3)")
    status, out, err = run_cli(capsys, "-d", "godot3", "--", *command)
    assert_failed_cleanly(status, out, err)
    assert "problem: start 1, the opening request: the adapter exited with status 3 before answering; " \
           "its last error output: no thanks" in out
    assert "stopped: the adapter did not answer its opening request in 3 starts in a row" in out
    assert "adapter: started 3 times" in out
    assert out.rstrip().endswith("INCOMPLETE: 0 of 179 cases passed, 179 not run (the adapter did not answer its "
                                 "opening request in 3 starts in a row)")
    status, out, err = run_cli(capsys, "--restarts", "1", "-d", "godot3", "--", *command)
    assert "stopped: gave up after starting the adapter 2 times (--restarts)" in out


def test_adapter_that_prints_garbage(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = python_adapter(tmp_path, """
        import sys
        for line in sys.stdin:
            print("\\x1b[31mhello\\x00 world", flush=True)
    """)
    status, out, err = run_cli(capsys, "--json", "-d", "godot3", "--", *command)
    assert status == 1 and "Traceback" not in out + err
    report = json.loads(out)
    assert report["passed"] == 0 and report["adapter"]["starts"] == 1
    assert report["failures"][0]["reason"] == "not a JSON line: '\\x1b[31mhello\\x00 world'"
    assert report["adapter"]["problems"][0].startswith("the opening request: not a JSON line")
    status, out, err = run_cli(capsys, "-d", "godot3", "--", *command)
    assert_failed_cleanly(status, out, err)
    assert "\x1b" not in out and "\x00" not in out  # escaped in the text report


def test_adapter_that_never_answers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = python_adapter(tmp_path, """
        import sys
        for line in sys.stdin:
            pass
    """)
    status, out, err = run_cli(capsys, *QUICK, "-d", "godot4", "--", *command)
    assert_failed_cleanly(status, out, err)
    assert "problem: start 1, the opening request: no answer within 0.2 s of starting (the adapter was stopped)" \
        in out
    assert "godot4 roundtrip: 0/0 passed, 244 not run" in out


def test_adapter_that_reads_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A process that never reads its stdin: the large requests cannot block the run."""
    command = python_adapter(tmp_path, "import time; time.sleep(60)")
    status, out, err = run_cli(capsys, *QUICK, "-d", "godot4", "--", *command)
    assert_failed_cleanly(status, out, err)
    assert "no answer within 0.2 s" in out


def test_adapter_with_wrong_ids_and_bad_responses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = python_adapter(tmp_path, """
        import json, sys
        for line in sys.stdin:
            r = json.loads(line)
            n = r["id"]
            if n == 1:
                print(json.dumps({"id": 99, "hex": r["hex"]}), flush=True)
            elif n == 2:
                print(json.dumps({"id": n}), flush=True)
            elif n == 3:
                print(json.dumps({"id": n, "hex": "xyz"}), flush=True)
            elif n == 4:
                print(json.dumps([n]), flush=True)
            elif n == 5:
                print(json.dumps({"id": True, "hex": r["hex"]}), flush=True)
            elif n == 6:  # answered twice: the second answer is late for 7 and ignored
                print(json.dumps({"id": n, "hex": r["hex"]}), flush=True)
                print(json.dumps({"id": n, "hex": r["hex"]}), flush=True)
            else:
                print(json.dumps({"id": n, "hex": r["hex"]}), flush=True)
    """)
    status, out, err = run_cli(capsys, "--json", "-d", "godot3", "--", *command)
    assert status == 1 and "Traceback" not in out + err
    report = json.loads(out)
    reasons = [f["reason"] for f in report["failures"]]
    assert reasons[0].startswith("an answer for id 99 while waiting for id 1")
    assert reasons[1].startswith('a response needs exactly one of "hex" and "error"')
    assert reasons[2] == '"hex" is not hexadecimal bytes: "xyz"'
    assert reasons[3].startswith('not a response object (no "id")')
    assert reasons[4].startswith("an answer for id true while waiting for id 5")
    # Every case after 5 passes or fails on its merits: the echo refuses nothing.
    assert report["adapter"]["late_answers_ignored"] == 1
    assert all(f["reason"] == "accepted an input the engine refuses" for f in report["failures"][5:])


def test_adapter_that_crashes_half_way_is_started_again(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = python_adapter(tmp_path, """
        import json, os, sys
        import godot_formats as gf

        for line in sys.stdin:
            r = json.loads(line)
            if r["id"] == 5:
                os._exit(9)
            d, o = r["dialect"], r["objects"]
            try:
                answer = {"hex": gf.dumps(gf.loads(bytes.fromhex(r["hex"]), d, allow_objects=o), d,
                                          allow_objects=o).hex()}
            except gf.GodotFormatsError as e:
                answer = {"error": str(e)}
            print(json.dumps({"id": r["id"], **answer}), flush=True)
    """)
    status, out, err = run_cli(capsys, "--json", "-d", "godot3", "--", *command)
    assert status == 1 and "Traceback" not in out + err
    report = json.loads(out)
    assert report["adapter"]["starts"] == 2 and report["crashed"] == 1
    assert [f["reason"] for f in report["failures"]] == ["the adapter exited with status 9 before answering"]
    assert report["passed"] == report["total"] - 1


def test_adapter_that_cannot_start(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run_cli(capsys, "--", str(tmp_path / "no-such-adapter"))
    assert status == 1 and out == ""
    assert err == f"godot-formats conformance: cannot start the adapter '{tmp_path / 'no-such-adapter'}': " \
                  "No such file or directory\n"
    status, out, err = run_cli(capsys)
    assert status == 2 and "no adapter command" in err


# -- in a Python test suite ---------------------------------------------------------------------


def library_roundtrip(data: bytes, dialect: str, objects: bool) -> bytes:
    return gf.dumps(gf.loads(data, dialect, allow_objects=objects), dialect, allow_objects=objects)


def test_case_check() -> None:
    for case in cases():
        case.check(library_roundtrip, gf.GodotFormatsError)
    case = next(c for c in cases(["godot4"]) if c.name == "encode:vector2i")
    with pytest.raises(AssertionError, match=r"FAIL godot4 encode:vector2i \(type 6 Vector2i\)"):
        case.check(lambda data, dialect, objects: library_roundtrip(data, "docs-godot4", objects))


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "godot_formats.conformance.pytest_plugin",
                           "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path), *args, str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


@pytest.mark.slow
def test_pytest_plugin_runs_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(textwrap.dedent("""
        import godot_formats as gf

        def roundtrip(data, dialect, objects):
            return gf.dumps(gf.loads(data, dialect, allow_objects=objects), dialect, allow_objects=objects)

        def test_godot_conformance(godot_conformance_case):
            godot_conformance_case.check(roundtrip, gf.GodotFormatsError)
    """))
    off = _pytest(tmp_path, "-rs")
    assert off.returncode == 0, off.stdout
    assert "1 skipped" in off.stdout and "--godot-conformance" in off.stdout
    on = _pytest(tmp_path, "--godot-conformance=godot3")
    assert on.returncode == 0, on.stdout[-3000:]
    assert f"{len(cases(['godot3']))} passed" in on.stdout
    (tmp_path / "pytest.ini").write_text("[pytest]\ngodot_conformance = godot4\n")
    ini = _pytest(tmp_path)
    assert ini.returncode == 0 and f"{len(cases(['godot4']))} passed" in ini.stdout


def test_documented_parametrize_recipe(tmp_path: Path) -> None:
    (tmp_path / "test_recipe.py").write_text(textwrap.dedent("""
        import pytest
        import godot_formats as gf
        from godot_formats.conformance import cases

        def roundtrip(data, dialect, objects):
            dialect = "docs-godot4"  # an implementation of the documentation page
            return gf.dumps(gf.loads(data, dialect, allow_objects=objects), dialect, allow_objects=objects)

        @pytest.mark.parametrize("case", cases(["godot4"]), ids=str)
        def test_godot_conformance(case):
            case.check(roundtrip, gf.GodotFormatsError)
    """))
    result = _pytest(tmp_path, "-x")
    assert result.returncode == 1
    assert "FAIL godot4 encode:float_0 (type 3 float)" in result.stdout
    assert "expected: 03000000 00000000" in result.stdout



# -- hostile adapters -------------------------------------------------------------------------


def test_an_answer_nested_too_deep_fails_its_case_and_the_run_goes_on(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    command = python_adapter(tmp_path, """
        import json, sys
        for line in sys.stdin:
            print("[" * 100000, flush=True)
    """)
    status, out, err = run_cli(capsys, *ONE_RESTART, "--json", "-d", "godot3", "--", *command)
    assert status == 1 and "internal error" not in out + err and "Traceback" not in out + err
    report = json.loads(out)
    assert report["failures"] and all(f["reason"].startswith("not a JSON line") for f in report["failures"][:3])
    assert report["adapter"]["starts"] == 1  # a bad answer fails its case; the adapter is not restarted


@pytest.mark.slow
def test_large_answers_are_read_in_chunks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Correct answers padded with 4 MB of spaces each (valid JSON) all arrive within the time limit
    (read a byte per system call, 1.7 MiB/s, each took over 2 s)."""
    command = python_adapter(tmp_path, """
        import json, sys
        import godot_formats as gf
        for line in sys.stdin:
            request = json.loads(line)
            objects = request.get("objects", False)
            try:
                value = gf.loads(bytes.fromhex(request["hex"]), request["dialect"], allow_objects=objects)
                reply = {"id": request["id"], "hex": gf.dumps(value, request["dialect"], allow_objects=objects).hex()}
            except gf.GodotFormatsError as e:
                reply = {"id": request["id"], "error": str(e)}
            sys.stdout.write(json.dumps(reply)[:-1] + " " * 4_000_000 + "}\\n")
            sys.stdout.flush()
    """)
    status, out, err = run_cli(capsys, "--timeout", "2", "--json", "-d", "godot3", "--", *command)
    report = json.loads(out)
    assert status == 0 and report["ok"], [f["reason"] for f in report["failures"]][:3]


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="no process groups here")
def test_the_adapters_children_end_with_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = python_adapter(tmp_path, f"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        for line in sys.stdin:
            print("garbage", flush=True)
    """)
    run_cli(capsys, *ONE_RESTART, "-d", "godot3", "--", *command)
    pid = int(pid_file.read_text())
    for _ in range(50):  # the kill is asynchronous; the child is reaped by init
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split()[2] == "Z":
                break
        time.sleep(0.1)
    else:
        pytest.fail(f"the adapter's child {pid} outlived the run")


def _gone(pid: int) -> bool:
    """Ended (or a zombie waiting for whoever adopted it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.slow
@pytest.mark.skipif(not _reaper.available(), reason="no child subreaper on this system (Linux only)")
@pytest.mark.parametrize("how", ["exits", "hangs"])
def test_daemons_that_leave_the_session_end_with_the_adapter(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             how: str) -> None:
    """A helper that calls setsid() and forks twice (a daemon) is out of the adapter's process group: the
    reaper the adapter runs under adopts it and kills it when the adapter ends, or is stopped."""
    pid_file = tmp_path / "daemon.pid"
    command = python_adapter(tmp_path, f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open({str(pid_file)!r} + ".tmp", "w").write(str(os.getpid()))
                os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
                os.closerange(0, 3)
                time.sleep(600)
            os._exit(0)
        while not os.path.exists({str(pid_file)!r}):
            time.sleep(0.01)
        for line in sys.stdin:
            if {how!r} == "hangs":
                time.sleep(600)
            print("garbage", flush=True)
    """)
    run_cli(capsys, *ONE_RESTART, "--timeout", "1", "--start-timeout", "1", "-d", "godot3", "--", *command)
    pid = int(pid_file.read_text())
    for _ in range(100):  # the last kill may still be landing
        if _gone(pid):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the adapter's daemon {pid} outlived the run")


@pytest.mark.skipif(not _reaper.available(), reason="no child subreaper on this system (Linux only)")
def test_the_reaper_exits_as_the_adapter_did() -> None:
    reaper = [sys.executable, "-I", _reaper.__file__, "--"]
    assert subprocess.run([*reaper, sys.executable, "-c", "raise SystemExit(9)"]).returncode == 9
    killed = subprocess.run([*reaper, sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGUSR1)"])
    assert killed.returncode == -signal.SIGUSR1
    missing = subprocess.run([*reaper, "/no/such/adapter"], capture_output=True, text=True)
    assert missing.returncode == 127 and "cannot start '/no/such/adapter'" in missing.stderr
