"""``godot-formats convert FOLDER --out-dir OUT`` on a process pool (every core by default):
the same lines in the same order as in one process (``--jobs 1``), a worker that dies fails its file
only, and Ctrl-C prints the summary and exits 130.  The saves are the engine's (test_batch.make_inputs);
what each line says is pinned by tests/cli/test_convert_detect.py, which runs on the pool too.  No timing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_batch import PASSWORD, REPO, make_inputs

from godot_formats import tool
from godot_formats.commands import convert as convert_command


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "godot_formats", "convert", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)


@pytest.mark.slow
def test_the_pool_prints_what_one_process_prints(tmp_path: Path) -> None:
    make_inputs(tmp_path / "in")
    runs = {jobs: _cli(tmp_path / "in", "--to", "godot4", "--out-dir", tmp_path / f"out{jobs}", "--password",
                       PASSWORD, "--jobs", jobs) for jobs in ("1", "2", "0")}
    for jobs, proc in runs.items():
        assert proc.returncode == 1 and proc.stderr == "", (jobs, proc.stderr)
    text = {jobs: proc.stdout.replace(str(tmp_path / f"out{jobs}"), "OUT") for jobs, proc in runs.items()}
    assert text["2"] == text["1"] == text["0"]  # the lines, their order, the losses and the summary
    assert text["1"].splitlines()[-1] == "21 file(s): 18 converted, 0 unchanged, 3 failed, 0 skipped"
    for path in (tmp_path / "out1").rglob("*"):
        if path.is_file() and "encrypted" not in path.name:  # an encrypted save gets a fresh IV on every write
            assert (tmp_path / "out2" / path.relative_to(tmp_path / "out1")).read_bytes() == path.read_bytes()


@pytest.mark.skipif(sys.platform != "linux", reason="the workers inherit the patch by fork")
def test_a_worker_that_dies_fails_its_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    make_inputs(tmp_path / "in")
    real = convert_command.converted

    def crashing(data: bytes, *args: Any, **kwargs: Any) -> Any:
        if data == (tmp_path / "in" / "zstd.sav").read_bytes():
            os._exit(7)  # as an out-of-memory kill: no exception, no clean-up
        return real(data, *args, **kwargs)

    monkeypatch.setattr(convert_command, "converted", crashing)  # the forked workers inherit it
    status = tool.main(["convert", str(tmp_path / "in"), "--to", "godot4", "--out-dir", str(tmp_path / "out"),
                        "--password", PASSWORD, "--jobs", "2"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert status == 1, (out, err)
    zstd = [line for line in lines if "zstd.sav" in line]
    assert zstd == [f"failed     {tmp_path / 'in' / 'zstd.sav'}: internal error: the worker process died converting "
                    "this file, twice (the second time alone); please report it"], (out, err)
    assert lines[-1] == "21 file(s): 17 converted, 0 unchanged, 4 failed, 0 skipped", (out, err)
    assert (tmp_path / "out" / "in" / "plain.sav").exists() and not (tmp_path / "out" / "in" / "zstd.sav").exists()
    assert not [p for p in (tmp_path / "out").rglob("*") if ".godot-formats-" in p.name]


INTERRUPT = textwrap.dedent("""
    import multiprocessing, os, signal, sys
    from godot_formats import tool
    from godot_formats.commands import convert

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's Python has it
    real, seen = convert.printable, []
    def printable(text):
        seen.append(text)
        if len(seen) == 4:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, in the parent (the workers ignore it)
        return real(text)
    convert.printable = printable
    status = tool.main(sys.argv[1:])
    print("children", len(multiprocessing.active_children()))
    sys.exit(status)
""")


def test_ctrl_c_prints_the_summary_and_exits_130(tmp_path: Path) -> None:
    make_inputs(tmp_path / "in")
    proc = subprocess.run([sys.executable, "-c", INTERRUPT, "convert", str(tmp_path / "in"), "--to", "godot4",
                           "--out-dir", str(tmp_path / "out"), "--password", PASSWORD, "--jobs", "2"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 130, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "children 0"
    assert lines[-2].endswith(" (interrupted)")
    # Every file counted has its line, and every output written is counted (the files that finished
    # while Ctrl-C landed among the lines too: a rerun would refuse an uncounted one as existing).
    status_lines = [line for line in lines if line.split(" ", 1)[0] in ("converted", "unchanged", "failed", "skipped")]
    assert lines[-2].startswith(f"{len(status_lines)} file(s): ") and len(status_lines) >= 4
    assert len(set(status_lines)) == len(status_lines)  # no file counted twice
    converted = {line.split(": ", 1)[0].split()[-1] for line in status_lines if line.startswith("converted")}
    written = {str(tmp_path / "in" / p.relative_to(tmp_path / "out" / "in")) for p in (tmp_path / "out").rglob("*")
               if p.is_file()}
    assert written == converted
    assert not [p for p in (tmp_path / "out").rglob("*") if ".godot-formats-" in p.name]


def test_jobs_must_not_be_negative(tmp_path: Path) -> None:
    make_inputs(tmp_path / "in")
    proc = _cli(tmp_path / "in", "--to", "godot4", "--out-dir", tmp_path / "out", "--jobs", "-1")
    assert proc.returncode == 2 and "--jobs wants 0" in proc.stderr


def test_verify_is_on_unless_turned_off() -> None:
    """``--verify/--no-verify``: every output is read back by default."""
    from godot_formats.tool import build_parser

    parser = build_parser()
    assert parser.parse_args(["convert", "x", "--to", "godot4"]).verify is True
    assert parser.parse_args(["convert", "x", "--to", "godot4", "--verify"]).verify is True
    assert parser.parse_args(["convert", "x", "--to", "godot4", "--no-verify"]).verify is False


def _square(n: int) -> int:
    return n * n


def test_ctrl_c_while_waiting_gives_the_files_that_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the parent waits for a file: the files running finish (their outputs are
    written), and each one that finished is still given with its outcome before the interrupt goes
    on, so no written output goes uncounted (the next run would refuse it as an existing file)."""
    from concurrent.futures import Future

    from godot_formats.batch import pool as convert_pool

    class Interrupted(Future):  # type: ignore[type-arg]
        """The first job's future: Ctrl-C arrives just as its result is awaited."""

        def __init__(self, real: Future) -> None:  # type: ignore[type-arg]
            super().__init__()
            self.real, self.waited = real, False

        def result(self, timeout: float | None = None) -> int:
            value: int = self.real.result()
            if not self.waited:  # the first wait is the one Ctrl-C breaks into
                self.waited = True
                raise KeyboardInterrupt
            return value

        def done(self) -> bool:
            return self.real.done()

        def cancelled(self) -> bool:
            return self.real.cancelled()

        def exception(self, timeout: float | None = None) -> BaseException | None:
            return self.real.exception()

    real_submit = convert_pool.submit
    monkeypatch.setattr(convert_pool, "submit", lambda pool, fn, chunk: (
        Interrupted(real_submit(pool, fn, chunk)) if chunk == [0] else real_submit(pool, fn, chunk)))
    given: list[tuple[int, int]] = []
    spill: list[tuple[int, int]] = []
    outcomes = convert_pool.in_order(list(range(8)), _square, 2, lambda j: -1, lambda j: None, spill)
    with pytest.raises(KeyboardInterrupt):
        for pair in outcomes:
            given.append(pair)
    outcomes.close()
    assert given == [] and spill[0] == (0, 0)  # the awaited file, finished: given to spill, not dropped
    assert all(r == j * j for j, r in spill) and [j for j, _ in spill] == sorted(j for j, _ in spill)


def test_closing_in_the_middle_of_a_chunk_spills_the_rest_of_it() -> None:
    """Files go to the workers in chunks (up to POOL_CHUNK): a run closed (Ctrl-C) while a chunk's
    outcomes are being given keeps the outcomes not given yet, and those of the chunks that finished,
    in ``spill``: every file that was converted is counted once, none twice."""
    from godot_formats.batch import pool as convert_pool

    spill: list[tuple[int, int]] = []
    outcomes = convert_pool.in_order(list(range(200)), _square, 2, lambda j: -1, lambda j: None, spill)
    given = [next(outcomes) for _ in range(61)]  # past the first chunks of one, inside a chunk of several
    outcomes.close()
    assert spill[0] is given[-1]  # dropped only once given: the consumer skips the pair it was given last
    spill = spill[1:]
    jobs = [j for j, _ in given + spill]
    assert given == [(j, j * j) for j in range(61)]
    assert len(jobs) == len(set(jobs)) and all(r == j * j for j, r in given + spill)
    assert jobs == list(range(len(jobs)))  # given and spilled: every file that finished, in order
    assert len(spill) >= 1  # the rest of the chunk whose outcome was being given


@pytest.mark.parametrize("handler", ["default", "ignore", "custom"])
def test_ctrl_c_deferred_holds_the_signal_until_the_block_ends(handler: str) -> None:
    """A row is counted, printed and journaled whole: a Ctrl-C inside ``ctrl_c_deferred`` acts once
    the block is done, as the handler in place says (raise, ignore, or the program's own handler)."""
    import signal

    from godot_formats.commands.common import ctrl_c_deferred

    called: list[int] = []
    chosen = {"default": signal.default_int_handler, "ignore": signal.SIG_IGN,
              "custom": lambda signum, frame: called.append(signum)}[handler]
    before = signal.signal(signal.SIGINT, chosen)
    done = []
    try:
        try:
            with ctrl_c_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)  # twice: acted on once
                done.append("all of the block")
            raised = False
        except KeyboardInterrupt:
            raised = True
        assert done == ["all of the block"]
        assert signal.getsignal(signal.SIGINT) is chosen
        assert raised == (handler == "default") and called == ([signal.SIGINT] if handler == "custom" else [])
    finally:
        signal.signal(signal.SIGINT, before)


def test_ctrl_c_deferred_with_the_default_action_ends_the_process_after_the_block() -> None:
    code = textwrap.dedent("""
        import os, signal, sys
        from godot_formats.commands.common import ctrl_c_deferred
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        with ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            print("the block ran to its end", flush=True)
        print("not reached", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == -2 and proc.stdout == "the block ran to its end\n", (proc.returncode, proc.stdout)


def test_ctrl_c_deferred_outside_the_main_thread_runs_the_block_as_it_is() -> None:
    import threading

    from godot_formats.commands.common import ctrl_c_deferred

    seen: list[bool] = []

    def work() -> None:
        with ctrl_c_deferred():
            seen.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [True]
