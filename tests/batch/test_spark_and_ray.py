"""The Spark and Ray recipes of docs/batch.md (examples/batch/), run as a user runs them, on a few
hundred generated saves: their report rows must be the local process pool's for the same inputs
(one code path, ``batch.convert_bytes``).  Each test skips, naming the package, when its engine
is not installed (scripts/install-batch-engines.sh installs both)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import godot_formats as gf
from godot_formats import batch

pytestmark = pytest.mark.slow  # Spark and Ray start a JVM or a cluster: tens of seconds each

REPO = Path(__file__).resolve().parents[2]


def _load_batch_saves() -> Any:
    """benchmarks/batch_saves.py, loaded by path (benchmarks/ is not a package, and is kept off sys.path)."""
    spec = importlib.util.spec_from_file_location("batch_saves", REPO / "benchmarks" / "batch_saves.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


batch_saves = _load_batch_saves()

#: The fields that must agree: all but where the output went, the run, the time, the detail (which
#: names the output path) and the output's SHA-256 (an encrypted save gets a fresh IV each time).
SAME = ("path", "status", "error_kind", "error", "source_dialect", "layers", "input_size", "input_sha256",
        "output_size", "losses", "version")


#: The JVM flags of the Spark test, for a run of half a minute on two busy cores: the quick compiler
#: only and the serial collector (a third less wall time measured here, docs/batch.md); a long job
#: wants the JVM's defaults, so the recipe does not set them.
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def needs(package: str) -> None:
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed (pip install {package}, or scripts/install-batch-engines.sh)")


@pytest.fixture(scope="module")
def saves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]], Path]:
    """300 generated saves of every kind, and the local pool's rows and outputs for them."""
    root = tmp_path_factory.mktemp("engines")
    manifest = batch_saves.generate(root / "saves", 300, large=1)
    result = batch.convert(root / "saves", root / "pool", to="godot4", password=batch_saves.PASSWORD, workers=2)
    assert sorted(r["path"] for r in result.rows) == sorted(manifest)
    return root / "saves", {r["path"]: r for r in result.rows}, root / "pool"


def recipe(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "batch" / name), *args,
                           "--password", batch_saves.PASSWORD], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def same_as_the_pool(rows: list[dict[str, Any]], pool: dict[str, dict[str, Any]], out: Path, pool_out: Path) -> None:
    assert sorted(r["path"] for r in rows) == sorted(pool)  # one row per input
    for row in rows:
        want = pool[row["path"]]
        assert {k: row[k] for k in SAME} == {k: want[k] for k in SAME}, row["path"]
        assert set(batch.ROW_FIELDS) <= set(row)
        if row["status"] in ("converted", "unchanged"):
            mine, theirs = (gf.open((place / row["path"]).read_bytes(), password=batch_saves.PASSWORD,
                                    dialect="godot4").values for place in (out, pool_out))
            assert mine == theirs
        else:
            assert not (out / row["path"]).exists()


def test_the_spark_recipe(saves: tuple[Path, dict[str, dict[str, Any]], Path], tmp_path: Path) -> None:
    needs("pyspark")
    needs("pyarrow")
    needs("pandas")  # mapInPandas
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("pyspark needs a Java runtime (java is not on PATH)")
    import pyarrow.parquet as pq

    src, pool, pool_out = saves
    proc = recipe("spark_recipe.py", str(src), str(tmp_path / "out"), str(tmp_path / "report.parquet"),
                  env={"JAVA_TOOL_OPTIONS": SHORT_JVM})
    rows = pq.read_table(tmp_path / "report.parquet").to_pylist()
    for row in rows:
        row["losses"] = list(row["losses"] or [])
    same_as_the_pool(rows, pool, tmp_path / "out", pool_out)
    printed = dict(reversed(part.split(" ", 1)) for part in proc.stdout.strip().splitlines()[-1].split(", "))
    assert {status: int(n) for status, n in printed.items()} == Counter(r["status"] for r in pool.values())


def test_the_ray_recipe(saves: tuple[Path, dict[str, dict[str, Any]], Path], tmp_path: Path) -> None:
    needs("ray")
    src, pool, pool_out = saves
    recipe("ray_recipe.py", str(src), str(tmp_path / "out"), str(tmp_path / "report.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    same_as_the_pool(rows, pool, tmp_path / "out", pool_out)


#: A driver that runs the Ray recipe with a task that kills its worker (``os._exit``) on the chunk
#: holding ``crash.sav``, after noting the attempt in a file: the attempts are counted.
CRASHING_DRIVER = """
import json, os, sys
import ray
import ray_recipe

ATTEMPTS = sys.argv[3]  # a global of __main__: pickled with the function, by value

def crashing(keys, src, dst, to, password):
    if any(key.endswith("crash.sav") for key in keys):
        with open(ATTEMPTS, "a") as f:
            f.write("attempt\\n")
        os._exit(1)
    return ray_recipe.convert_files(keys, src, dst, to, password)

ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
rows = list(ray_recipe.convert(sys.argv[1], sys.argv[2], password="hunter2", work=crashing))
ray.shutdown()
print(json.dumps(rows))
"""


def test_ray_does_not_retry_a_save_that_kills_its_worker(tmp_path: Path) -> None:
    needs("ray")
    keys = batch_saves.generate(tmp_path / "saves", 40)
    (tmp_path / "saves" / "crash.sav").write_bytes((tmp_path / "saves" / next(iter(keys))).read_bytes())
    driver = tmp_path / "driver.py"
    driver.write_text(CRASHING_DRIVER, encoding="utf-8")
    attempts = tmp_path / "attempts"
    path = os.pathsep.join([str(REPO / "examples" / "batch"), str(REPO)])
    proc = subprocess.run([sys.executable, str(driver), str(tmp_path / "saves"), str(tmp_path / "out"), str(attempts)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.splitlines()[-1])
    assert attempts.read_text().count("attempt") == 1  # max_retries=0: the crash is not retried
    assert sorted(r["path"] for r in rows) == sorted([*keys, "crash.sav"])  # one row per input, the run went on
    died = [r for r in rows if r["error_kind"] == "internal"]
    assert "crash.sav" in {r["path"] for r in died} and len(died) <= batch.CHUNK
    assert all(r["status"] == "failed" and "not retried" in r["error"] for r in died)
    assert any(r["status"] == "converted" for r in rows)
