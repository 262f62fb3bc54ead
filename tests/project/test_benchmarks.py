"""benchmarks/bench.py keeps producing every part its report needs: the codec rows as users
call the library, the peers with msgspec, whole save files and the scaling rows.

Run as a user runs it, in a process of its own, without the engine and at tiny sizes (``--divisor
1000``, one run, a small heap): the output's shape is checked -- rows present, ratios computed, the
files' checks passed -- never a time, which depends on the machine.  The ratio arithmetic is checked
in-process on made-up times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # one report for the module: the benchmark script run for seconds

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import scaling  # noqa: E402
import wholefile  # noqa: E402

PARTS = "dict_100k,records_20k,strings_100k,message,files,scaling"


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """One tiny run of the non-engine parts, as JSON."""
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "bench.py"), "--no-engine", "--json", "--divisor", "1000",
                           "--runs", "1", "--heap", "1000", "--only", PARTS],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def test_codec_rows_are_timed_as_users_call_it(report: dict[str, Any]) -> None:
    info = report["info"]
    assert info["mode"] == "users" and info["gc_in_timed_calls"] and info["heap_objects"] == 2001
    keys = info["backends"]
    assert keys[-1] == "python" and set(keys) <= {"c", "python"}
    names = [r["name"] for r in report["workloads"]]
    assert names == ["dict_100k", "records_20k", "strings_100k", "strings_100k, every element made"]
    for row in report["workloads"]:
        assert row["same_bytes"] == "yes"
        assert row["engine_decode_ms"] is None
        for key in keys:
            assert _number(row[f"{key}_decode_ms"]) and _number(row[f"{key}_encode_ms"])


def test_peers_sit_beside_ours_with_their_ratios(report: dict[str, Any]) -> None:
    with_peers = {r["name"]: r for r in report["workloads"] + [report["message"]] if "peers" in r}
    assert set(with_peers) == {"dict_100k", "records_20k", "strings_100k, every element made", "message"}
    first = report["info"]["backends"][0]
    for row in with_peers.values():
        unit = row.get("unit", "ms")
        assert set(row["peers"]) == set(report["info"]["peers"]) and "pickle" in row["peers"]
        for name in ("pickle", "msgspec"):
            if name in row["peers"]:
                for what in ("decode", "encode"):
                    assert row[f"{first}_{what}_x_{name}"] == pytest.approx(
                        row[f"{first}_{what}_{unit}"] / row["peers"][name][f"{what}_{unit}"])
    if "msgspec" not in report["info"]["peers"]:
        assert "msgspec" in report["info"]["peers_missing"]


def test_whole_files_every_layer_read_written_and_migrated(report: dict[str, Any]) -> None:
    rows = report["files"]
    assert [r["layer"] for r in rows] == list(wholefile.LAYERS)
    for row in rows:
        assert row["values"] == "yes" and row["migrated"] == "yes" and row["unchanged_same_bytes"] == "yes"
        assert row["same_bytes"] in ("yes", "differs (another zstd version)")
        assert row["engine_reads_ours"] == "not run"
        for op in ("open", "open_given", "save", "save_unchanged", "migrate"):
            assert _number(row[f"ours_{op}_ms"])
        assert row["open_ratio"] is None  # no engine, no ratio


def test_scaling_rows_have_every_step_per_byte(report: dict[str, Any]) -> None:
    rows = report["scaling"]
    assert [r["target_mb"] for r in rows] == [mb / 1000 for mb in scaling.SIZES_MB]
    for row in rows:
        for step in scaling.STEPS:
            assert _number(row[f"{step}_mb_s"]) and _number(row[f"{step}_per_byte_x"])
        assert _number(row["peak_mb"]) and _number(row["held_after_decode_mb"])
    assert all(rows[0][f"{step}_per_byte_x"] == 1.0 for step in scaling.STEPS)


def test_targets_are_reported(report: dict[str, Any]) -> None:
    checks = report["info"]["targets"]
    if report["info"]["compiled_core"] != "built":
        assert checks == []  # the reference alone: the compiled core's targets are not checked
        return
    assert {c["result"] for c in checks} <= {"meets", "misses", "not measured"}
    rows = {c["row"] for c in checks}
    assert {"dict_100k", "message", "file, fastlz"} <= rows
    assert any(row.startswith("scaling, ") for row in rows)


def test_ratios_are_engine_time_over_ours() -> None:
    """On made-up times: above 1 we are faster."""
    engine = wholefile.EngineFile("3.2.3", 100, 2, write=[0.2, 0.4, 0.3], read=[0.1], migrate=[0.5])
    times = {"open": [0.05], "open_given": [0.2], "save": [0.1], "save_unchanged": [0.01], "migrate": [1.0]}
    row = wholefile.row_from("plain", 100, engine, {"times": times, "checks": {}})
    assert row["open_ratio"] == pytest.approx(2.0) and row["open_given_ratio"] == pytest.approx(0.5)
    assert row["save_ratio"] == pytest.approx(3.0) and row["migrate_ratio"] == pytest.approx(0.5)
    assert "save_unchanged_ratio" not in row
    rows = [{"size": 10, **{f"{s}_s": 1.0 for s in scaling.STEPS}, "total_s": 5.0},
            {"size": 100, **{f"{s}_s": 20.0 for s in scaling.STEPS}, "total_s": 100.0}]
    scaling.per_byte(rows)
    assert rows[1]["decode_per_byte_x"] == pytest.approx(2.0) and rows[1]["total_per_byte_x"] == pytest.approx(2.0)


def test_the_configfile_benchmark_times_every_row() -> None:
    # benchmarks/configfile.py (issue 41's speed row), tiny and without the engine: every row of ours printed.
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "configfile.py"), "--mb", "0.05", "--runs", "1",
                           "--no-engine"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for row in ("read (gf.open of it)", "unchanged write-back", "read + set one value + write",
                "read + convert to Godot 4 + write"):
        assert row in proc.stdout
