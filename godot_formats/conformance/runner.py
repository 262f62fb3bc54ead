"""Talking to an adapter: one process, JSON lines over its stdin and stdout (docs/conformance.md).

Nothing an adapter does can hang or crash the run: every request has a time limit, a process that
exits or stops answering is stopped and started again (up to ``max_restarts`` times; after that the
remaining cases are reported as not run), and a line that is not a response to the request in
flight fails that case with what the line was.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Callable

from ..core.errors import AdapterError
from . import Case, Verdict, _reaper, judge

#: The longest adapter line quoted in a report.
QUOTE = 160


def quote(line: str) -> str:
    return line if len(line) <= QUOTE else line[:QUOTE] + f"... ({len(line)} characters)"


@dataclass
class Answer:
    """What came back for one request: a response object, or a problem (and no response)."""

    response: dict[str, Any] | None = None
    problem: str = ""
    #: The process is unusable after this problem (it exited or stopped answering).
    fatal: bool = False


class Adapter:
    """One adapter process and the threads that read its output."""

    def __init__(self, command: Sequence[str], timeout: float, start_timeout: float | None = None) -> None:
        self.command = list(command)
        self.timeout = timeout
        #: The time the first answer of each start may take (the adapter loads its implementation).
        self.start_timeout = max(timeout, start_timeout if start_timeout is not None else timeout)
        self._fresh = False
        self.starts = 0
        self.stale = 0  # late answers to requests already judged, ignored
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=5)
        self._answered: set[int] = set()
        self._stderr_reader: threading.Thread | None = None

    # -- process --------------------------------------------------------------------------------

    def start(self) -> None:
        try:
            # Buffered pipes (answers are read a chunk at a time, not a byte per system call), and a
            # session of its own, so that stop() ends the adapter with every process it started;
            # under the reaper (Linux), even those that left the session.
            _check_command(self.command)
            proc = subprocess.Popen(_reaped(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, bufsize=_PIPE_BUFFER,
                                    start_new_session=hasattr(os, "killpg"))
        except (OSError, ValueError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise AdapterError(f"cannot start the adapter {self.command[0]!r}: {reason}") from None
        self.starts += 1
        self._proc = proc
        self._fresh = True
        # Fresh queues: nothing of an earlier process can be taken for an answer of this one.
        self._lines = queue.Queue()
        self._outbox = queue.Queue()
        self._stderr = deque(maxlen=5)
        assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
        threading.Thread(target=_read_lines, args=(proc.stdout, self._lines.put), daemon=True).start()
        self._stderr_reader = threading.Thread(target=_read_lines, daemon=True,
                                               args=(proc.stderr, self._keep_stderr(self._stderr)))
        self._stderr_reader.start()
        threading.Thread(target=_write_lines, args=(proc.stdin, self._outbox), daemon=True).start()

    @staticmethod
    def _keep_stderr(tail: deque[str]) -> Callable[[bytes | None], None]:
        def keep(line: bytes | None) -> None:
            if line is not None and line.strip():
                tail.append(line.decode("utf-8", "replace").rstrip())
        return keep

    @property
    def stopped(self) -> bool:
        """Stopped by us after it exited or stopped answering (or never started)."""
        return self._proc is None

    def stderr_tail(self) -> str:
        return " | ".join(quote(line) for line in self._stderr)

    def stop(self, grace: float = 2.0) -> int | None:
        """End the process: close its stdin, give it ``grace`` seconds to exit, then kill it.
        Returns its exit status."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        self._outbox.put(None)  # the writer closes stdin
        try:
            status = proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the reaper kills the adapter and everything it started, then exits
            try:
                status = proc.wait(timeout=_REAPER_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait()
        _kill_group(proc.pid)  # what it started and left running in its session goes too
        return status

    def _exit_status(self) -> str:
        proc = self._proc
        if proc is None:
            return "exited"
        try:
            status = proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "closed its standard output"
        return f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"

    # -- one request ----------------------------------------------------------------------------

    def ask(self, request: dict[str, Any]) -> Answer:
        """Send one request and wait for the line that answers it."""
        request_id = request["id"]
        self._outbox.put(json.dumps(request, separators=(",", ":")).encode("ascii") + b"\n")
        limit, first = (self.start_timeout, True) if self._fresh else (self.timeout, False)
        self._fresh = False
        deadline = time.monotonic() + limit
        try:
            while True:
                remaining = deadline - time.monotonic()
                try:
                    if remaining <= 0:
                        raise queue.Empty
                    raw = self._lines.get(timeout=remaining)
                except queue.Empty:
                    since = " of starting" if first else ""
                    return Answer(problem=f"no answer within {limit:g} s{since} (the adapter was stopped)",
                                  fatal=True)
                if raw is None:  # the end of its standard output
                    status = self._exit_status()
                    if self._stderr_reader is not None:
                        self._stderr_reader.join(timeout=0.5)  # its last words
                    tail = self.stderr_tail()
                    return Answer(problem=f"the adapter {status} before answering"
                                          + (f"; its last error output: {tail}" if tail else ""), fatal=True)
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                if isinstance(raw, _TooLong):
                    return Answer(problem=f"an answer line of more than {MAX_LINE} bytes: {quote(line[:200])!r}…")
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
                    return Answer(problem=f"not a JSON line: {quote(line[:200])!r}")
                if not isinstance(obj, dict) or "id" not in obj:
                    return Answer(problem=f"not a response object (no \"id\"): {quote(line)!r}")
                got = obj["id"]
                if type(got) is int and got in self._answered:
                    self.stale += 1  # a late answer to an earlier request: already judged
                    continue
                if type(got) is not int or got != request_id:
                    return Answer(problem=f"an answer for id {json.dumps(got)} while waiting for id {request_id}: "
                                          f"{quote(line)!r}")
                return Answer(response=obj)
        finally:
            self._answered.add(request_id)


#: The pipes' buffer, and the longest answer line read (a longer one fails its case, and is skipped).
_PIPE_BUFFER = 1 << 16
MAX_LINE = 256 << 20


class _TooLong(bytes):
    """The start of a line longer than :data:`MAX_LINE` (the rest was skipped)."""


def _read_lines(stream: IO[bytes], put: Callable[[bytes | None], None]) -> None:
    try:
        while True:
            line = stream.readline(MAX_LINE + 1)
            if not line:
                break
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                while (rest := stream.readline(_PIPE_BUFFER)) and not rest.endswith(b"\n"):
                    pass
                line = _TooLong(line[:1000])
            put(line)
    except (OSError, ValueError):
        pass
    finally:
        put(None)


#: Seconds the reaper has to end an adapter's processes before it is killed itself.
_REAPER_GRACE = 5.0


def _reaped(command: list[str]) -> list[str]:
    """The command run under the reaper (which outlives nothing it started), where the system has one."""
    if not _reaper.available():
        return command
    return [sys.executable, "-I", _reaper.__file__, "--", *command]


def _check_command(command: list[str]) -> None:
    """The error starting ``command`` would give, raised before the reaper runs it (which would only
    exit with 127)."""
    exe = command[0] if command else ""
    found = shutil.which(exe) if os.sep not in exe else exe
    if found is None or not os.path.exists(found):
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))


def _kill_group(pid: int) -> None:
    """End every process left in the adapter's session (it was started as the leader of its own)."""
    if not hasattr(os, "killpg"):
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left of it


def _write_lines(stream: IO[bytes], outbox: queue.Queue[bytes | None]) -> None:
    try:
        while True:
            data = outbox.get()
            if data is None:
                break
            stream.write(data)
            stream.flush()
    except (OSError, ValueError):
        pass  # the process exited; its reader reports it
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def verdict_of(case: Case, answer: Answer) -> Verdict:
    """Judge what the adapter sent back for ``case``."""
    if answer.response is None:
        return Verdict(case, False, answer.problem)
    r = answer.response
    has_hex, has_error = "hex" in r, "error" in r
    if has_hex == has_error:
        return Verdict(case, False, "a response needs exactly one of \"hex\" and \"error\": "
                                    + quote(json.dumps(r)))
    if has_error:
        return judge(case, error=str(r["error"]))
    text = r["hex"]
    try:
        if not isinstance(text, str):
            raise ValueError
        actual = bytes.fromhex(text)
    except ValueError:
        return Verdict(case, False, f"\"hex\" is not hexadecimal bytes: {quote(json.dumps(text))}")
    return judge(case, actual=actual)


@dataclass
class Run:
    """Every verdict of a run, and what went wrong with the adapter itself."""

    command: list[str]
    verdicts: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    starts: int = 0
    stale: int = 0


def run(command: Sequence[str], corpus: Sequence[Case], *, timeout: float = 10.0, start_timeout: float = 60.0,
        max_restarts: int = 3) -> Run:
    """Send every case of ``corpus`` to the adapter ``command`` and judge the answers: each answer within
    ``timeout`` seconds, the first after each start within ``start_timeout``."""
    result = Run(list(command))
    adapter = Adapter(command, timeout, start_timeout)
    adapter.start()
    try:
        for i, case in enumerate(corpus):
            if adapter.stopped and not _restart(adapter, result, max_restarts):
                result.verdicts.extend(Verdict(c, False, "not run: " + result.problems[-1])
                                       for c in corpus[i:])
                break
            answer = adapter.ask(case.request(i + 1))
            result.verdicts.append(verdict_of(case, answer))
            if answer.fatal:
                result.problems.append(f"{case}: {answer.problem}")
                adapter.stop(grace=0.5)
    finally:
        adapter.stop()
        result.starts, result.stale = adapter.starts, adapter.stale
    return result


def _restart(adapter: Adapter, result: Run, max_restarts: int) -> bool:
    if adapter.starts > max_restarts:
        result.problems.append(f"gave up after starting the adapter {adapter.starts} times")
        return False
    try:
        adapter.start()
    except AdapterError as e:
        result.problems.append(str(e))
        return False
    return True
