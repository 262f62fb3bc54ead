"""``godot_formats.batch``: a folder of engine-made saves converted on a process pool, with a journal
that is the resume state, stable shards, a worker that dies, and one wording with the command line.
No timing is asserted: the shared machine has two cores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl

import godot_formats as gf
from godot_formats import batch
from godot_formats.saves.savefile import open as open_save

PASSWORD = "hunter2"  # the encrypted fixture save's (fixtures/nodepath_padding/README.md)
REPO = Path(__file__).resolve().parents[2]


def make_inputs(root: Path, *, random_file: bool = True) -> list[str]:
    """The engine's Godot 3 saves (plain, big-endian, encrypted, compressed; one that needs lossy) and
    resource saves, plus a file of random bytes; returns their keys."""
    root.mkdir(parents=True)
    for case in read_jsonl(FIXTURES / "nodepath_padding" / "godot3_nodepath_saves.jsonl"):
        (root / f"{case['name']}.sav").write_bytes(bytes.fromhex(case["file_hex"]))
    (root / "res").mkdir()
    for path in sorted((FIXTURES / "resources" / "godot3").glob("*.*res")):
        shutil.copy(path, root / "res" / path.name)
    if random_file:
        (root / "res" / "random.bin").write_bytes(bytes(range(7, 250, 3)) * 3)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def journal_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_folder_on_two_workers(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2)
    assert not result.interrupted
    assert sum(result.counts.values()) == len(keys) == len(result.rows)
    assert sorted(r["path"] for r in result.rows) == keys
    by_key = {r["path"]: r for r in result.rows}
    assert by_key["object_ids.sav"]["status"] == "failed"
    assert by_key["object_ids.sav"]["error_kind"] == "would lose" and by_key["object_ids.sav"]["losses"]
    assert by_key["res/random.bin"]["error_kind"] == "bad input"
    assert result.counts["converted"] >= 15
    for key in ("plain.sav", "big_endian.sav", "encrypted.sav", "fastlz.sav", "zstd.sav"):
        row = by_key[key]
        assert row["status"] == "converted" and row["source_dialect"] == "godot3"
        out = (tmp_path / "out" / key).read_bytes()
        assert row["output_sha256"] == batch.report.sha(out) and row["output_size"] == len(out)
        want, _ = open_save((tmp_path / "in" / key).read_bytes(), password=PASSWORD).convert("godot4")
        assert open_save(out, password=PASSWORD, dialect="godot4").values == want.values
    # the journal: one row per input, every field
    rows = journal_rows(result.journal)
    assert sorted(r["path"] for r in rows) == keys
    for row in rows:
        assert set(batch.ROW_FIELDS) <= set(row)
        assert row["run_id"] == result.run_id and row["version"] == gf.__version__
    # inputs untouched, no temporary file anywhere
    assert make_inputs(tmp_path / "again") == keys
    assert not [p for p in (tmp_path / "out").rglob("*") if ".godot-formats-" in p.name]


def test_an_existing_output_is_never_replaced(tmp_path: Path) -> None:
    make_inputs(tmp_path / "in", random_file=False)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "plain.sav").write_bytes(b"someone else's file")
    result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1)
    row = next(r for r in result.rows if r["path"] == "plain.sav")
    assert row["status"] == "failed" and row["error_kind"] == "io" and "would replace" in row["error"]
    assert (tmp_path / "out" / "plain.sav").read_bytes() == b"someone else's file"


def test_resume_skips_what_is_done(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    report = tmp_path / "report.jsonl"
    first = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2,
                          report=report, shard=(0, 2))
    done = {r["path"] for r in first.rows if r["status"] in ("converted", "unchanged")}
    assert done
    # a kill after an output was written but before its row reached the journal: the rerun finds
    # the output holding what it would write, and counts the file converted (not failed)
    lines = report.read_text(encoding="utf-8").splitlines()
    lost = next(json.loads(x) for x in lines if json.loads(x)["path"] == "encrypted.sav"
                or json.loads(x)["status"] == "converted")
    report.write_text("".join(x + "\n" for x in lines if json.loads(x)["path"] != lost["path"]), encoding="utf-8")
    second = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2,
                           report=report, resume=True)
    by_key = {r["path"]: r for r in second.rows}
    assert sorted(by_key) == keys
    assert {k for k, r in by_key.items() if r["status"] == "skipped"} == done - {lost["path"]}
    assert all(r["error"] == batch.DONE_EARLIER for r in second.rows if r["status"] == "skipped")
    assert by_key[lost["path"]]["status"] == "converted"
    failed = {k for k, r in by_key.items() if r["status"] == "failed"}
    assert failed == {"object_ids.sav", "res/random.bin", "res/evil3.tres"} & set(keys)
    # a third resume: everything final is skipped, nothing is converted again
    third = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1,
                          report=report, resume=True)
    assert third.counts["converted"] == 0 and third.counts["skipped"] == len(keys) - len(failed)


def test_a_kept_output_is_the_one_its_row_describes(tmp_path: Path) -> None:
    """A kill after an encrypted save's output was linked but before its row reached the journal: the
    rerun keeps the file (same values, another IV) and its row gives that file's size and SHA-256,
    not those of the bytes it did not write (found by benchmarks/batch_acceptance.py)."""
    make_inputs(tmp_path / "in", random_file=False)
    first = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1)
    first.journal.unlink()
    second = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1)
    row = next(r for r in second.rows if r["path"] == "encrypted.sav")
    on_disk = (tmp_path / "out" / "encrypted.sav").read_bytes()
    assert row["status"] == "converted" and "kept" in row["detail"]
    assert (row["output_sha256"], row["output_size"]) == (batch.report.sha(on_disk), len(on_disk))
    assert on_disk == (tmp_path / "out" / "encrypted.sav").read_bytes()  # not replaced
    for r in second.rows:
        if r["status"] == "converted":
            assert r["output_sha256"] == batch.report.sha((tmp_path / "out" / r["path"]).read_bytes())


def test_a_temp_file_left_by_a_kill_goes_when_its_file_is_written(tmp_path: Path) -> None:
    """A worker killed with -9 while writing leaves its temporary file; the rerun that writes the same
    output removes it (found by benchmarks/batch_acceptance.py)."""
    make_inputs(tmp_path / "in", random_file=False)
    (tmp_path / "out").mkdir()
    stale = tmp_path / "out" / ".plain.sav.godot-formats-abc123.tmp"
    stale.write_bytes(b"half a save")
    other = tmp_path / "out" / ".someone.sav.godot-formats-abc123.tmp"  # not a file of this run: stays
    other.write_bytes(b"x")
    result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1)
    assert next(r for r in result.rows if r["path"] == "plain.sav")["status"] == "converted"
    assert not stale.exists() and other.exists()


def test_a_journal_cut_by_a_kill_stays_json_lines(tmp_path: Path) -> None:
    """A kill in the middle of an append leaves half a line; the next run cuts it off instead of
    gluing its first row onto it (which would lose that row and break every JSON-lines reader)."""
    keys = make_inputs(tmp_path / "in", random_file=False)
    report = tmp_path / "report.jsonl"
    first = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1,
                          report=report)
    text = report.read_text(encoding="utf-8")
    report.write_text(text + text.splitlines()[0][:40], encoding="utf-8")
    second = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1,
                           report=report, resume=True)
    rows = journal_rows(report)  # every line parses
    assert [r["run_id"] for r in rows].count(second.run_id) == len(keys)
    assert [r["run_id"] for r in rows].count(first.run_id) == len(keys)
    # a whole last row without its newline (written by another tool) is kept, and gets one
    report.write_text(report.read_text(encoding="utf-8").rstrip("\n"), encoding="utf-8")
    batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=1, report=report,
                  resume=True)
    assert len(journal_rows(report)) == len(rows) + len(keys)


def test_shards_are_disjoint_and_cover_all(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    seen: list[str] = []
    for i in range(3):
        result = batch.convert(tmp_path / "in", tmp_path / f"out{i}", to="godot4", password=PASSWORD,
                               workers=1, shard=(i, 3))
        seen += [r["path"] for r in result.rows]
    assert sorted(seen) == keys  # each key exactly once
    with pytest.raises(gf.GodotFormatsError):
        batch.convert(tmp_path / "in", tmp_path / "x", to="godot4", shard=(3, 3))


def test_the_shard_hash_is_stable_across_processes() -> None:
    keys = [f"player/{n}.sav" for n in range(50)]
    here = [batch.in_shard(k, (1, 4)) for k in keys]
    code = f"from godot_formats import batch; print([batch.in_shard(k, (1, 4)) for k in {keys!r}])"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                           env={**os.environ, "PYTHONHASHSEED": "123"}, check=True, timeout=120)
    assert other.stdout.strip() == str(here)
    assert 0 < sum(here) < len(keys)


CRASH = textwrap.dedent("""
    import json, os, sys
    from godot_formats import batch
    from godot_formats.batch import run
    real = run.convert_bytes
    def crashing(data, **kw):
        if kw["name"].endswith("zstd.sav"):
            os._exit(7)  # a worker dying as an out-of-memory kill would: no exception, no cleanup
        return real(data, **kw)
    run.convert_bytes = crashing  # inherited by the forked workers
    result = batch.convert(sys.argv[1], sys.argv[2], to="godot4", password="hunter2", workers=2)
    print(json.dumps({"counts": result.counts, "rows": result.rows}))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="the workers inherit the patch by fork")
def test_a_worker_that_dies_fails_its_file_only(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    proc = subprocess.run([sys.executable, "-c", CRASH, str(tmp_path / "in"), str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    by_key = {r["path"]: r for r in got["rows"]}
    assert sorted(by_key) == keys
    assert by_key["zstd.sav"]["status"] == "failed" and by_key["zstd.sav"]["error_kind"] == "internal"
    assert "died" in by_key["zstd.sav"]["error"]
    for key in ("plain.sav", "encrypted.sav", "fastlz.sav", "res/all.res"):
        assert by_key[key]["status"] == "converted", by_key[key]
    assert not (tmp_path / "out" / "zstd.sav").exists()
    assert not [p for p in (tmp_path / "out").rglob("*") if ".godot-formats-" in p.name]


def test_convert_bytes_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    out, row = batch.convert_bytes(b"", name="empty", to="godot4")
    assert out is None and row["status"] == "failed" and row["error_kind"] == "bad input"
    out, row = batch.convert_bytes(b"\x00" * 8, name="x", to="no-such-dialect")
    assert out is None and row["status"] == "failed"

    def buggy(data: bytes, opts: Any, step: Any = None) -> Any:
        raise KeyError("bug")
    monkeypatch.setattr(batch.onefile, "convert_data", buggy)
    out, row = batch.convert_bytes(b"\x00" * 8, name="x", to="godot4")
    assert out is None and row["error_kind"] == "internal" and row["error"].startswith("internal error (KeyError")
    assert set(row) == set(batch.ROW_FIELDS)


def test_the_command_line_and_convert_bytes_word_random_bytes_the_same(tmp_path: Path) -> None:
    data = bytes(range(7, 250, 3)) * 3
    (tmp_path / "random.bin").write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "godot_formats", "convert", str(tmp_path / "random.bin"), "--to",
                           "godot4", "-o", str(tmp_path / "out.bin")], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 1
    line = proc.stdout.splitlines()[0]
    assert line.startswith("failed")
    _, row = batch.convert_bytes(data, name="random.bin", to="godot4")
    assert line.split(": ", 1)[1] == row["error"]


def test_arrow_schema_matches_the_fields() -> None:
    schema = batch.arrow_schema()
    if schema is None:
        pytest.skip("pyarrow is not installed (the [parquet] extra; CI installs [ci])")
    assert list(schema.names) == list(batch.ROW_FIELDS)


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "godot_formats", "convert", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)


@pytest.mark.slow
def test_the_command_line_on_a_pool_with_a_report_and_resume(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    report = tmp_path / "report.jsonl"
    common = ("--to", "godot4", "--out-dir", tmp_path / "out", "--password", PASSWORD, "--report", report)
    first = _cli(tmp_path / "in", *common, "--workers", "2", "--shard", "0/2")
    assert first.returncode in (0, 1), first.stderr
    lines = first.stdout.splitlines()
    assert lines[-1].startswith(f"{len(lines) - 1 - sum(x.startswith('    ') for x in lines)} file(s): ")
    for line in lines[:-1]:
        if not line.startswith("    "):
            status, rest = line.split(None, 1)
            assert status in ("converted", "unchanged", "failed", "skipped")
            assert rest.startswith(str(tmp_path / "in") + os.sep)
    second = _cli(tmp_path / "in", *common, "--jobs", "2", "--resume")
    assert second.returncode == 1  # the random bytes and the lossy save still fail
    rows = journal_rows(report)
    last = {r["path"]: r for r in rows}
    assert sorted(last) == keys
    assert all(r["status"] != "failed" for k, r in last.items()
               if k not in ("object_ids.sav", "res/random.bin", "res/evil3.tres"))
    assert (tmp_path / "out" / "in" / "plain.sav").exists()  # the folder's own name, as without --workers
    bad = _cli(tmp_path / "in" / "plain.sav", *common)
    assert bad.returncode == 2 and "one folder" in bad.stderr


INTERRUPT = textwrap.dedent("""
    import json, multiprocessing, os, signal, sys
    from godot_formats import batch

    # Python turns SIGINT into KeyboardInterrupt only when it was not ignored at start-up, and a job
    # started in the background by a non-interactive shell (as CI may run the suite) inherits it
    # ignored: install the handler a terminal's Python has.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def progress(row, counts):
        if sum(counts.values()) == 5:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, in the parent only (as a terminal sends it to all)
    result = batch.convert(sys.argv[1], sys.argv[2], to="godot4", password="hunter2", workers=2, progress=progress)
    print(json.dumps({"interrupted": result.interrupted, "rows": len(result.rows),
                      "journal": str(result.journal), "children": len(multiprocessing.active_children())}))
""")


def test_ctrl_c_stops_in_order_and_resume_finishes(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    proc = subprocess.run([sys.executable, "-c", INTERRUPT, str(tmp_path / "in"), str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["interrupted"] and got["children"] == 0
    assert 5 <= got["rows"] < len(keys)
    assert len(journal_rows(Path(got["journal"]))) == got["rows"]  # every file written has its row
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]
    rest = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2, resume=True)
    assert sorted(r["path"] for r in rest.rows) == keys
    assert rest.counts["skipped"] == sum(1 for r in journal_rows(Path(got["journal"]))[:got["rows"]]
                                         if r["status"] in ("converted", "unchanged"))
    assert {r["path"] for r in rest.rows if r["status"] == "failed"} <= {"object_ids.sav", "res/random.bin",
                                                                         "res/evil3.tres"}


SECOND_INTERRUPT = textwrap.dedent("""
    import json, multiprocessing, os, signal, sys
    from concurrent.futures import ProcessPoolExecutor
    from godot_formats import batch
    from godot_formats.batch import pool

    signal.signal(signal.SIGINT, signal.default_int_handler)

    class Pool(ProcessPoolExecutor):
        def shutdown(self, *args, **kwargs):  # Ctrl-C again, while the run waits for the files being written
            if interrupted:
                os.kill(os.getpid(), signal.SIGINT)
            return super().shutdown(*args, **kwargs)

    pool.ProcessPoolExecutor = Pool
    interrupted = []

    def progress(row, counts):
        if sum(counts.values()) == 5:
            interrupted.append(True)
            os.kill(os.getpid(), signal.SIGINT)
    try:
        batch.convert(sys.argv[1], sys.argv[2], to="godot4", password="hunter2", workers=2, progress=progress)
        escaped = False
    except KeyboardInterrupt:
        escaped = True
    print(json.dumps({"escaped": escaped, "children": len(multiprocessing.active_children())}))
""")


def test_a_second_ctrl_c_waits_for_the_rows_of_the_files_written(tmp_path: Path) -> None:
    """Ctrl-C twice: the second lands while the run waits for the files being written.  It is held
    until they are written, their rows journaled and the journal closed, then raised: every output
    on disk has its row, no temporary file stays, no worker is left."""
    make_inputs(tmp_path / "in")
    proc = subprocess.run([sys.executable, "-c", SECOND_INTERRUPT, str(tmp_path / "in"), str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got == {"escaped": True, "children": 0}
    rows = journal_rows(Path(str(tmp_path / "out") + ".godot-formats-journal.jsonl"))
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert written == {r["path"] for r in rows if r["status"] == "converted"} and len(rows) >= 5
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]


def test_a_parquet_report(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed (the [parquet] extra; CI: [ci])")
    keys = make_inputs(tmp_path / "in")
    result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD, workers=2,
                           report=tmp_path / "report.parquet")
    table = pq.read_table(tmp_path / "report.parquet")
    assert table.schema.names == list(batch.ROW_FIELDS)
    assert sorted(table.column("path").to_pylist()) == keys
    assert result.journal.exists() and result.journal != tmp_path / "report.parquet"


def test_fsspec_urls_in_memory(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed (the [cloud] extra; CI installs [ci])")
    from concurrent.futures import ThreadPoolExecutor

    keys = make_inputs(tmp_path / "in")
    fs = fsspec.filesystem("memory")
    run = uuid.uuid4().hex  # the memory file system is one per process: a fresh prefix per test
    for key in keys:
        fs.pipe_file(f"/{run}/in/{key}", (tmp_path / "in" / key).read_bytes())
    fs.pipe_file(f"/{run}/out/plain.sav", b"someone else's file")
    with ThreadPoolExecutor(2) as pool:  # the memory store lives in this process: threads, not processes
        result = batch.convert(f"memory://{run}/in", f"memory://{run}/out", to="godot4", password=PASSWORD,
                               executor=pool, report=tmp_path / "r.jsonl")
    by_key = {r["path"]: r for r in result.rows}
    assert sorted(by_key) == keys
    assert by_key["plain.sav"]["status"] == "failed" and "would replace" in by_key["plain.sav"]["error"]
    assert fs.cat_file(f"/{run}/out/plain.sav") == b"someone else's file"
    row = by_key["zstd.sav"]
    assert row["status"] == "converted" and row["output_path"] == f"memory://{run}/out/zstd.sav"
    out = fs.cat_file(f"/{run}/out/zstd.sav")
    assert batch.report.sha(out) == row["output_sha256"]
    assert open_save(out, dialect="godot4").values == open_save((tmp_path / "in" / "zstd.sav").read_bytes()
                                                                ).convert("godot4")[0].values
    assert by_key["res/all.res"]["status"] == "converted"
    with pytest.raises(gf.GodotFormatsError, match="report"):
        batch.convert(f"memory://{run}/in", f"memory://{run}/out2", to="godot4")


def test_a_dask_executor(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="no distributed (the [dask] extra; CI: [ci])")
    keys = make_inputs(tmp_path / "in")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        result = batch.convert(tmp_path / "in", tmp_path / "out", to="godot4", password=PASSWORD,
                               executor=client.get_executor(), workers=2)
    local = batch.convert(tmp_path / "in", tmp_path / "out-pool", to="godot4", password=PASSWORD, workers=2)
    assert result.counts == local.counts
    assert sorted(r["path"] for r in result.rows) == keys
    same = ("status", "error_kind", "error", "input_sha256", "losses")
    by_key = {r["path"]: r for r in local.rows}
    for row in result.rows:
        assert {k: row[k] for k in same} == {k: by_key[row["path"]][k] for k in same}


def test_an_iterable_of_keys(tmp_path: Path) -> None:
    keys = make_inputs(tmp_path / "in")
    picked = [str(tmp_path / "in" / k) for k in keys if k.endswith(".sav")][:6]
    names = iter([*picked, Path(tmp_path / "in" / "res" / "random.bin"), "../outside.sav"])  # a generator is fine
    result = batch.convert(names, tmp_path / "out", to="godot4", password=PASSWORD, workers=2)
    by_key = {r["path"]: r for r in result.rows}
    assert sorted(by_key) == sorted([*picked, str(tmp_path / "in" / "res" / "random.bin"), "../outside.sav"])
    # the key's own path, below dst, without its leading '/': every key has one place, decided alone
    converted = [by_key[key] for key in picked if by_key[key]["status"] == "converted"]
    assert len(converted) >= 4
    for row in converted:
        assert row["output_path"] == str(tmp_path / "out" / row["path"].lstrip("/"))
        assert batch.report.sha(Path(row["output_path"]).read_bytes()) == row["output_sha256"]
    assert by_key[str(tmp_path / "in" / "res" / "random.bin")]["error_kind"] == "bad input"
    assert by_key["../outside.sav"]["status"] == "failed" and by_key["../outside.sav"]["error"] == batch.NO_DEST
    assert not (tmp_path / "outside.sav").exists()
    assert batch.key_dest("s3://studio/saves/p1.sav", "out") == str(Path("out") / "studio/saves/p1.sav")
    assert batch.key_dest("/data/./a.sav", "gs://b/new/") == "gs://b/new/data/a.sav"
    assert batch.key_dest("a/../../b", "out") is None and batch.key_dest("s3://", "out") is None


def test_keys_with_one_output_write_it_once(tmp_path: Path) -> None:
    """Two keys whose outputs are one file (a leading '/', a doubled '/') would write it twice, the
    second over the first even with overwrite: the first converts, the other fails naming it; the
    same key twice is one input, one row."""
    keys = make_inputs(tmp_path / "in")
    one = next(str(tmp_path / "in" / k) for k in keys if k.endswith(".sav"))
    twin = one.replace("/in/", "/in//", 1)
    result = batch.convert([one, twin, one], tmp_path / "out", to="godot4", password=PASSWORD, workers=1,
                           overwrite=True)
    assert [r["path"] for r in result.rows].count(one) == 1 and len(result.rows) == 2
    by_key = {r["path"]: r for r in result.rows}
    assert by_key[one]["status"] in ("converted", "unchanged", "failed")
    assert by_key[twin]["status"] == "failed" and by_key[twin]["error_kind"] == "bad input"
    assert one in by_key[twin]["error"] and by_key[twin]["output_path"] in (None, "")


def test_a_journal_being_appended_is_not_mended_under_its_writer(tmp_path: Path) -> None:
    """A shard that starts while another is in the middle of appending a batch to the same journal
    waits for it, rather than cutting the batch's unfinished last line as if a kill had torn it."""
    import threading

    path = tmp_path / "journal.jsonl"
    row = json.dumps({"path": "a.sav", "status": "converted"})
    with path.open("a", encoding="utf-8") as writer, batch.journal.locked(writer):
        writer.write(row[:10])
        writer.flush()
        opened: list[batch.Journal] = []
        t = threading.Thread(target=lambda: opened.append(batch.Journal(path)))
        t.start()
        t.join(0.5)
        assert t.is_alive()  # waiting for the writer
        writer.write(row[10:] + "\n")
        writer.flush()
    t.join(30)
    opened[0].close()
    assert path.read_text(encoding="utf-8") == row + "\n"
