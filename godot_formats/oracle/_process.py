"""Running an engine process: its own process group, a wall-clock limit, output collected.

Shared by the Godot 3 driver (``godot3-server`` itself) and the Godot 4 driver (Node, which
starts Chromium, which runs the engine). Standard library only.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from ..core.errors import OracleError


def tail(text: str | None, limit: int = 8000) -> str:
    """The end of ``text`` (at most ``limit`` characters), for error messages."""
    text = (text or "").rstrip()
    return text if len(text) <= limit else "...\n" + text[-limit:]


def run(argv: list[str], *, cwd: Path, timeout: float, what: str,
        env: Mapping[str, str] | None = None,
        abort: re.Pattern[str] | None = None, abort_grace: float = 0.0,
        line_text: Callable[[str], str] = str,
        ) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a new process group and return its exit status, stdout and stderr.

    A non-zero exit status is returned, not raised: the callers decide (an engine that dies
    inside a case is data for the decode records). Raises :class:`OracleError` when the
    program cannot start, after ``timeout`` seconds, and when an output line (passed
    through ``line_text`` first) matches ``abort`` and the process has not ended
    ``abort_grace`` seconds later: a sign that the engine will never quit by itself (a
    Godot 3 script whose ``_init`` stopped at a runtime error idles forever). In the last
    two cases the whole group (driver, engine, browser) is stopped: SIGTERM, then SIGKILL.
    """
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=None if env is None else dict(env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, encoding="utf-8", errors="replace", start_new_session=True)
    except OSError as e:
        raise OracleError(f"{what}: cannot start {argv[0]} ({e})") from None
    chunks: dict[str, list[str]] = {"out": [], "err": []}
    matched = threading.Event()

    def pump(stream: IO[str], key: str) -> None:
        for line in stream:
            chunks[key].append(line)
            if abort is not None and abort.search(line_text(line)):
                matched.set()
        stream.close()

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=pump, args=(proc.stdout, "out"), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, "err"), daemon=True)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + timeout
    stop_at: float | None = None
    outcome = "exited"
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if matched.is_set():
                stop_at = now + abort_grace if stop_at is None else stop_at
                if now >= stop_at:
                    outcome = "aborted"
                    break
            if now >= deadline:
                outcome = "timed out"
                break
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    finally:
        if proc.poll() is None:
            stop_group(proc)
        for r in readers:
            r.join(timeout=5)
    out, err = "".join(chunks["out"]), "".join(chunks["err"])
    if outcome == "aborted":
        raise OracleError(f"{what} failed: the script did not load or stopped with an error\n"
                          f"--- output ---\n{tail(out)}" + (f"\n--- stderr ---\n{tail(err)}" if err.strip() else ""))
    if outcome == "timed out":
        raise OracleError(f"{what} timed out after {timeout:g} s\n--- stderr ---\n{tail(err)}"
                          + (f"\n--- stdout ---\n{tail(out)}" if out.strip() else ""))
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def stop_group(proc: subprocess.Popen[str], grace: float = 3.0) -> None:
    """Stop the process group that ``proc`` leads (SIGTERM, then SIGKILL) and reap ``proc``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
