"""The acceptance run of issue 25: a few thousand saves, ``kill -9`` in the middle, ``--resume``.

    python3 benchmarks/batch_acceptance.py [--files 3000] [--large 20] [--jobs 2] [--kill-at 0.4]

Generates the saves (benchmarks/batch_saves.py: plain, big-endian, encrypted with a password,
compressed in each of Godot's four modes; some lossy under the strict policy; some bad bytes
anywhere in the run; a few Godot 4 saves), runs

    godot-formats convert SRC --to godot4 --out-dir DST --jobs 2 --report R.jsonl --password ...

in its own process group, kills the group with SIGKILL once ``--kill-at`` of the files are
reported, reruns the same command with ``--resume``, and checks that:

- the resumed run has exactly one journal row per input, and each input ended once, with the
  status its construction says (failed only for the lossy and the bad ones);
- every converted output opens as Godot 4 with ``gf.convert_value`` of the input's values, and its
  row's size and SHA-256 are those of the file on disk;
- no failed input has an output, no temporary file is left, and no input was modified.

It prints the CPU time of the process tree over the wall time of each run (above 1 when the pool
used more than one core) and the machine's load; those are figures, not checks.  Exit status 0
when every check holds, 1 otherwise (the failures are printed).  ``--json`` prints the figures and
the failures as one JSON object, for tests/batch/test_kill_and_resume.py.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import batch_saves

import godot_formats as gf

STATUS_WORDS = ("converted", "unchanged", "failed", "skipped")
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int, seen: dict[int, float] | None = None) -> float:
    """CPU seconds (user + system) of ``pid`` and its live descendants, from /proc (Linux); each
    process's own CPU goes to ``seen`` (the latest figure per pid)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = [int(x) for x in fields[11:15]]  # utime stime cutime cstime
            total += sum(ticks) / TICK
            if seen is not None:
                seen[p] = sum(ticks[:2]) / TICK
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def journal_rows(journal: Path) -> int:
    """How many rows the journal holds (complete lines)."""
    try:
        return journal.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def rows_printed(log: Path) -> int:
    """How many files the run has reported on stdout (one line per file, the losses indented)."""
    try:
        text = log.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return 0
    return sum(1 for line in text.splitlines() if line.split(" ", 1)[0] in STATUS_WORDS)


def run_cli(src: Path, out: Path, report: Path, jobs: int, log: Path, *, resume: bool,
            kill_after: int | None) -> dict[str, Any]:
    """Run the command line once; with ``kill_after``, SIGKILL its process group once that many files
    are reported and the journal has had a batch appended (so some rows are durable, and the files
    in flight and the rows not yet appended are lost to the kill).  Returns its figures."""
    cmd = [sys.executable, "-m", "godot_formats", "convert", str(src), "--to", "godot4", "--out-dir", str(out),
           "--jobs", str(jobs), "--report", str(report), "--password", batch_saves.PASSWORD]
    if resume:
        cmd.append("--resume")
    started, before, rows_before = time.monotonic(), os.times(), journal_rows(report)
    with log.open("wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    cpu, killed, seen = 0.0, False, {}
    while proc.poll() is None:
        cpu = max(cpu, tree_cpu(proc.pid, seen))
        if kill_after is not None and rows_printed(log) >= kill_after and journal_rows(report) > rows_before:
            cpu = max(cpu, tree_cpu(proc.pid, seen))
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.02)
    code = proc.wait()
    after = os.times()
    wall = time.monotonic() - started
    if not killed:  # the children were reaped: their whole CPU time is known
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # nothing of the group may outlive the kill
    return {"exit": code, "killed": killed, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "cores_used": round(cpu / wall, 2) if wall else 0.0, "files_reported": rows_printed(log),
            "journal_rows": journal_rows(report) - rows_before,
            # the parent, then each worker: two busy workers are the two cores' share of the work
            "cpu_s_by_process": [round(seen.get(proc.pid, 0.0), 2)]
            + sorted((round(c, 2) for p, c in seen.items() if p != proc.pid and c >= 0.05), reverse=True)}


def expected_values(data: bytes, kind: str) -> list[Any]:
    """What the output must hold: the input's values, through ``gf.convert_value`` (strict)."""
    if kind == "godot4":
        return list(gf.open(data, password=batch_saves.PASSWORD, dialect="godot4").values)
    sf = gf.open(data, password=batch_saves.PASSWORD, dialect="godot3")
    return [gf.convert_value(v, "godot3", "godot4")[0] for v in sf.values]


def read_rows(journal: Path, fails: list[str]) -> list[dict[str, Any]]:
    """Every row of the journal; a line that is not JSON is a failure."""
    rows = []
    for n, line in enumerate(journal.read_text(encoding="utf-8").splitlines()):
        try:
            rows.append(json.loads(line))
        except ValueError:
            fails.append(f"journal line {n + 1} is not JSON: {line[:80]!r}")
    return rows


def check_rows(rows: list[dict[str, Any]], manifest: dict[str, str], fails: list[str]) -> dict[str, dict[str, Any]]:
    """One row per input in the resumed run, at most one in the killed run; returns the resumed
    run's row of each input."""
    by_run: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in rows:
        by_run[row["run_id"]].append(row)
    if len(by_run) != 2:
        fails.append(f"the journal has {len(by_run)} run(s), not 2 (the killed one and the resumed one)")
    *earlier, last = list(by_run.values()) or [[]]
    keys = collections.Counter(r["path"] for r in last)
    if set(keys) != set(manifest) or any(n != 1 for n in keys.values()):
        twice = [k for k, n in keys.items() if n > 1]
        fails.append(f"the resumed run's rows are not one per input: missing {sorted(set(manifest) - set(keys))[:5]}, "
                     f"extra {sorted(set(keys) - set(manifest))[:5]}, twice {twice[:5]}")
    for run in earlier:
        twice = [k for k, n in collections.Counter(r["path"] for r in run).items() if n > 1]
        if twice:
            fails.append(f"the killed run has two rows for {twice[:5]}")
    return {r["path"]: r for r in last}


def check_one(src: Path, dst: Path, key: str, kind: str, last: dict[str, Any] | None,
              finals: list[dict[str, Any]], fails: list[str]) -> str:
    """The checks of one input; returns the status it ended with."""
    want_status, want_kind = batch_saves.EXPECTED[kind]
    out = dst / key
    if last is None:
        return "missing"
    if want_status == "failed":
        if (last["status"], last["error_kind"]) != (want_status, want_kind) or finals:
            fails.append(f"{key} ({kind}): {last['status']} {last['error_kind']}: {last['error']}")
        if out.exists():
            fails.append(f"{key} ({kind}) failed but has an output")
        return str(last["status"])
    if len(finals) != 1:
        fails.append(f"{key} ({kind}) ended {len(finals)} times: {[r['status'] for r in finals]}")
        return "failed" if not finals else "twice"
    final = finals[0]
    if final["status"] != want_status or last["status"] not in (want_status, "skipped"):
        fails.append(f"{key} ({kind}): {final['status']}, then {last['status']}: {last['error']}")
    if not out.is_file():
        fails.append(f"{key} ({kind}): no output")
        return str(final["status"])
    data = out.read_bytes()
    if (final["output_sha256"], final["output_size"]) != (hashlib.sha256(data).hexdigest(), len(data)):
        fails.append(f"{key} ({kind}): its row's output SHA-256 and size are not those of the file on disk")
    got = gf.open(data, password=batch_saves.PASSWORD, dialect="godot4").values
    if got != expected_values((src / key).read_bytes(), kind):
        fails.append(f"{key} ({kind}): the output's values are not the converted input's")
    return str(final["status"])


def check_run(src: Path, dst: Path, journal: Path, manifest: dict[str, str],
              shas: dict[str, str]) -> tuple[list[str], dict[str, int]]:
    """Every check of the module's docstring; returns the failures (in words) and how each input ended."""
    fails: list[str] = []
    rows = read_rows(journal, fails)
    last = check_rows(rows, manifest, fails)
    finals: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in rows:
        if row["status"] in ("converted", "unchanged"):
            finals[row["path"]].append(row)
    ended: collections.Counter[str] = collections.Counter()
    for key, kind in manifest.items():
        ended[check_one(src, dst, key, kind, last.get(key), finals[key], fails)] += 1
    temps = [p for p in dst.rglob("*") if gf_temp(p.name)]
    if temps:
        fails.append(f"{len(temps)} temporary file(s) left: {[str(p) for p in temps[:3]]}")
    changed = [k for k, sha in shas.items() if hashlib.sha256((src / k).read_bytes()).hexdigest() != sha]
    if changed:
        fails.append(f"{len(changed)} input(s) modified: {changed[:3]}")
    return fails, dict(ended)


def gf_temp(name: str) -> bool:
    """One of our temporary files (``.<name>.godot-formats-<random>.tmp``)."""
    from godot_formats.layers.files import is_temp_name

    return is_temp_name(name)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=3000, help="small saves (default 3000)")
    ap.add_argument("--large", type=int, default=20, help="large saves (about 0.6 MB each; default 20)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kill-at", type=float, default=0.4, help="the share of files reported before the kill")
    ap.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary folder, removed)")
    ap.add_argument("--json", action="store_true", help="print the figures and failures as one JSON object")
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="batch-acceptance-"))
    try:
        return _accept(args, work)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


def _accept(args: argparse.Namespace, work: Path) -> int:
    src, out, report = work / "saves", work / "out", work / "report.jsonl"
    t0 = time.monotonic()
    manifest = batch_saves.generate(src, args.files, large=args.large)
    shas = {k: hashlib.sha256((src / k).read_bytes()).hexdigest() for k in manifest}
    made = time.monotonic() - t0
    loads = [load()]
    first = run_cli(src, out, report, args.jobs, work / "run1.log", resume=False,
                    kill_after=int(len(manifest) * args.kill_at))
    loads.append(load())
    second = run_cli(src, out, report, args.jobs, work / "run2.log", resume=True, kill_after=None)
    loads.append(load())
    fails, ended = check_run(src, out / src.name, report, manifest, shas)
    if not first["killed"] or first["exit"] != -signal.SIGKILL:
        fails.append(f"the first run was not killed in the middle: {first}")
    if second["exit"] != 1:  # some inputs fail, so the resumed run exits 1
        fails.append(f"the resumed run exited {second['exit']}, not 1: {(work / 'run2.log').read_text()[-500:]}")
    figures = {"inputs": len(manifest), "kinds": dict(collections.Counter(manifest.values())),
               "generate_s": round(made, 1), "killed_run": first, "resumed_run": second, "ended": ended,
               "journal_rows": sum(1 for _ in report.open(encoding="utf-8")), "load_average": loads,
               "cpus": os.cpu_count(), "backend": gf.backend, "failures": fails}
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            if name != "failures":
                print(f"{name}: {value}")
        print("\n".join(["FAILED:", *fails[:50]]) if fails else "every check holds")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
