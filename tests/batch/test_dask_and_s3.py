"""Past one machine: the same ``batch.convert`` call on a Dask ``LocalCluster`` of worker
processes, and on ``s3://`` URLs against a local S3 server (moto, on 127.0.0.1), gives the report of
the default process pool, on a few hundred saves made from the engine's own files (plain,
big-endian, encrypted, compressed, resource saves; one that needs the lossy policy; bad ones).

The expected report is the local pool's, whose rows tests/batch/test_batch.py checks against the engine's
fixtures; here only the executor and the store change.  The extras come from ``.[ci]`` (.ci/run
installs it); without one, its test skips and says which.  No timing is asserted."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_batch import PASSWORD, REPO, make_inputs

from godot_formats import batch
from godot_formats.commands.convert_batch import dask_executor, storage_options
from godot_formats.core.errors import GodotFormatsError
from godot_formats.saves.savefile import open as open_save

#: Copies of the engine's saves: 10 folders of 21 files, plus 18 cut short (bad at their end).
COPIES = 10

#: What must be the same in every executor's report (output_sha256 too, but for encrypted saves,
#: whose IV is new on every write: for those the values read back are compared).
SAME = ("status", "error_kind", "error", "losses", "source_dialect", "layers", "input_size", "input_sha256",
        "output_size")


def make_corpus(root: Path) -> list[str]:
    """``COPIES`` copies of :func:`test_batch.make_inputs` (the engine's saves and a random file), and
    copies of two of them cut short; returns the keys."""
    one = make_inputs(root / "0")
    for n in range(1, COPIES):
        for key in one:
            (root / str(n) / key).parent.mkdir(parents=True, exist_ok=True)
            (root / str(n) / key).write_bytes((root / "0" / key).read_bytes())
        for key in ("zstd.sav", "encrypted.sav"):
            data = (root / "0" / key).read_bytes()
            (root / str(n) / f"cut-{key}").write_bytes(data[: len(data) * n // (COPIES + 1)])
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict[str, dict[str, Any]]]:
    """The saves, their keys, and the default pool's rows by key (the report to match)."""
    root = tmp_path_factory.mktemp("cloud")
    keys = make_corpus(root / "in")
    pool = batch.convert(root / "in", root / "out-pool", to="godot4", password=PASSWORD, workers=2)
    assert sorted(r["path"] for r in pool.rows) == keys
    assert 200 <= len(keys) and {"converted", "failed"} <= {r["status"] for r in pool.rows}
    assert any("encrypted" in (r["layers"] or "") and r["status"] == "converted" for r in pool.rows)
    assert any(r["error_kind"] == "would lose" for r in pool.rows)
    return root, keys, {r["path"]: r for r in pool.rows}


def assert_same_report(rows: list[dict[str, Any]], expected: dict[str, dict[str, Any]],
                       read_output: Any) -> None:
    """One row per input, each as the pool's: the same fields, and the same output (its SHA-256, or
    for an encrypted save the same values)."""
    assert sorted(r["path"] for r in rows) == sorted(expected)
    for row in rows:
        want = expected[row["path"]]
        assert {k: row[k] for k in SAME} == {k: want[k] for k in SAME}, row["path"]
        if row["status"] != "converted":
            continue
        out = read_output(row["output_path"])
        assert batch.report.sha(out) == row["output_sha256"]
        if "encrypted" in (row["layers"] or ""):
            mine, theirs = (open_save(b, password=PASSWORD, dialect="godot4")
                            for b in (out, read_output(want["output_path"])))
            assert mine.values == theirs.values, row["path"]
        else:
            assert row["output_sha256"] == want["output_sha256"], row["path"]


def _local(path: str) -> bytes:
    return Path(path).read_bytes()


@pytest.mark.slow
def test_a_dask_local_cluster_of_processes_gives_the_pools_report(corpus: Any) -> None:
    distributed = pytest.importorskip("distributed", reason="the [dask] extra (distributed) is not installed")
    root, _, expected = corpus
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        result = batch.convert(root / "in", root / "out-dask", to="godot4", password=PASSWORD,
                               executor=client.get_executor(), workers=2, report=root / "dask.jsonl")
    assert not result.interrupted
    assert_same_report(result.rows, expected, _local)
    assert len((root / "dask.jsonl").read_text(encoding="utf-8").splitlines()) == len(expected)


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """A local S3 server (moto) on 127.0.0.1 and a bucket in it; yields the storage options."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (the [ci] extra)")
    server_module = pytest.importorskip("moto.server", reason="moto[server] is not installed (the [ci] extra)")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line per request into the captured log
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": f"http://{host}:{port}", "region_name": "eu-west-1"}}
    with contextlib.ExitStack() as stack:
        stack.callback(server.stop)
        yield options


@pytest.mark.slow
def test_s3_urls_against_a_local_server_give_the_pools_report(corpus: Any, s3: dict[str, Any]) -> None:
    import fsspec

    root, keys, expected = corpus
    bucket = f"saves-{uuid.uuid4().hex[:12]}"
    fs = fsspec.filesystem("s3", **s3)
    fs.mkdir(bucket)
    fs.put(str(root / "in") + "/", f"{bucket}/in/", recursive=True)
    assert sorted(p[len(f"{bucket}/in/"):] for p in fs.find(f"{bucket}/in")) == keys
    # four workers on two cores: the work is waiting for the server
    result = batch.convert(f"s3://{bucket}/in", f"s3://{bucket}/out", to="godot4", password=PASSWORD, workers=4,
                           storage_options=s3, report=root / "s3.jsonl")

    def read(path: str) -> bytes:
        return bytes(fs.cat_file(path)) if path.startswith("s3://") else _local(path)

    assert_same_report(result.rows, expected, read)
    assert {r["output_path"] for r in result.rows if r["status"] == "converted"} == {
        f"s3://{bucket}/out/{k}" for k, r in expected.items() if r["status"] == "converted"}
    # nothing else was written: no temporary object, no output for a failed input
    assert len(fs.find(f"{bucket}/out")) == result.counts["converted"] + result.counts["unchanged"]


@pytest.mark.slow
def test_the_command_line_with_storage_options_on_s3(corpus: Any, s3: dict[str, Any], tmp_path: Path) -> None:
    import fsspec

    root, _, expected = corpus
    bucket = f"cli-{uuid.uuid4().hex[:12]}"
    fs = fsspec.filesystem("s3", **s3)
    fs.mkdir(bucket)
    fs.put(str(root / "in" / "0") + "/", f"{bucket}/saves/", recursive=True)
    endpoint = s3["client_kwargs"]["endpoint_url"]
    proc = subprocess.run(
        [sys.executable, "-m", "godot_formats", "convert", f"s3://{bucket}/saves", "--to", "godot4", "--out-dir",
         f"s3://{bucket}/new", "--password", PASSWORD, "--report", str(tmp_path / "r.jsonl"), "--jobs", "2",
         "--storage-option", "key=testing", "--storage-option", "secret=testing",
         "--storage-option", json.dumps({"endpoint_url": endpoint, "region_name": "eu-west-1"}).join(
             ("client_kwargs=", ""))],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 1, proc.stderr  # the random bytes and the lossy save fail, as in the pool's run
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("21 file(s): ")
    plain = next(x for x in lines if x.startswith("converted") and "/saves/plain.sav:" in x)
    assert plain.startswith(f"converted  s3://{bucket}/saves/plain.sav: ")
    assert plain.endswith(f"-> s3://{bucket}/new/saves/plain.sav")  # out-dir/<the folder's own name>/...
    rows = {r["path"]: r for r in map(json.loads, (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines())}
    for key, row in rows.items():
        assert row["status"] == expected[f"0/{key}"]["status"], key


def test_storage_options_are_json_when_they_parse() -> None:
    got = storage_options(["anon=false", "n=3", 'client_kwargs={"endpoint_url": "http://x"}', "token=abc=",
                           "profile=my profile"])
    assert got == {"anon": False, "n": 3, "client_kwargs": {"endpoint_url": "http://x"}, "token": "abc=",
                   "profile": "my profile"}
    with pytest.raises(GodotFormatsError, match="K=V"):
        storage_options(["novalue"])


def test_dask_without_the_extra_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(GodotFormatsError, match=r"pip install 'godot-formats\[dask\]'"):
        with dask_executor("local"):
            pass
    with dask_executor(None) as (executor, width):
        assert executor is None and width is None


def test_the_command_line_says_dask_is_missing_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    code = ("import sys; sys.modules['distributed'] = None; from godot_formats import tool; "
            "sys.exit(tool.main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "convert", str(tmp_path / "in"), "--to", "godot4",
                           "--out-dir", str(tmp_path / "out"), "--dask", "local"],
                          capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ})
    assert proc.returncode == 2
    assert proc.stderr == "godot-formats convert: --dask needs Dask: pip install 'godot-formats[dask]'\n"


def test_the_command_line_on_a_dask_scheduler_address(corpus: Any, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="the [dask] extra (distributed) is not installed")
    root, _, expected = corpus
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                                       scheduler_port=0, host="127.0.0.1", protocol="tcp://")
    with cluster:
        proc = subprocess.run(
            [sys.executable, "-m", "godot_formats", "convert", str(root / "in" / "0"), "--to", "godot4",
             "--out-dir", str(tmp_path / "out"), "--password", PASSWORD, "--dask", cluster.scheduler_address],
            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    statuses = {line.split(None, 1)[1].split(": ", 1)[0]: line.split(None, 1)[0]
                for line in lines[:-1] if not line.startswith("    ")}
    assert statuses == {str(root / "in" / k): r["status"] for k, r in expected.items() if k.startswith("0/")}
    assert (tmp_path / "out" / "0" / "plain.sav").exists()
