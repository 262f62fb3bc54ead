"""Talking to an adapter: one process, JSON lines over its stdin and stdout (docs/conformance.md).

Nothing an adapter does can hang or crash the run.  Every request has a time limit; a case on which the
adapter stops answering (``hang``) or exits (``crash``) is marked so and the run goes on with a fresh
process, as often as it takes (a restart costs one process start; ``max_restarts`` caps them when asked).
Each start opens with the ``operations`` request, which also tells a broken adapter (one that dies or
hangs before any case) from a case that breaks a working one: after ``start_failures`` starts in a row
without an answer to it, the rest is not run.  The whole run has a time limit: the cases it does not
reach are ``not run``, never failed.  A line that is not a response to the request in flight fails that
case with what the line was.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import re
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
from ..views.jsonform.parser import raw_decode_deep
from . import CRASH, DECODE, HANG, NOT_RUN, OPERATIONS, ROUNDTRIP, Case, Verdict, _reaper, judge, judge_decode

#: The longest adapter line quoted in a report.
QUOTE = 160


def quote(line: str) -> str:
    return line if len(line) <= QUOTE else line[:QUOTE] + f"... ({len(line)} characters)"


@dataclass
class Answer:
    """What came back for one request: a response object, or a problem (and no response)."""

    response: dict[str, Any] | None = None
    problem: str = ""
    #: :data:`HANG` (no answer in time) or :data:`CRASH` (the process exited or closed its output):
    #: the process is unusable after it.  "" for an answer, or a bad line (the process goes on).
    kind: str = ""

    @property
    def fatal(self) -> bool:
        return bool(self.kind)


class Adapter:
    """One adapter process and the threads that read its output."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
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
        # Fresh queues: nothing of an earlier process can be taken for an answer of this one (so its
        # request ids start afresh too: every start opens with id 0).
        self._answered = set()
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

    def ask(self, request_id: int, request: bytes, limit: float, first: bool = False) -> Answer:
        """Send one request line and wait up to ``limit`` seconds for the line that answers it
        (``first``: the opening request of a start, which says so when it times out)."""
        self._outbox.put(request)
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
                                  kind=HANG)
                if raw is None:  # the end of its standard output
                    status = self._exit_status()
                    if self._stderr_reader is not None:
                        self._stderr_reader.join(timeout=0.5)  # its last words
                    tail = self.stderr_tail()
                    return Answer(problem=f"the adapter {status} before answering"
                                          + (f"; its last error output: {tail}" if tail else ""), kind=CRASH)
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                if isinstance(raw, _TooLong):
                    return Answer(problem=f"an answer line of more than {MAX_LINE} bytes: {quote(line[:200])!r}…")
                try:
                    obj = _parse_line(line)
                except ValueError:
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


#: The deepest answer line read: the JSON form of a value nested as deep as the engines allow (1024
#: containers; a Dictionary is two JSON levels), with room to spare.  Deeper lines are not read (a
#: line of 100,000 "[" would cost the slow parser a fifth of a second, each time).
MAX_ANSWER_DEPTH = 4 * 1024
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deeper_than(line: str, limit: int) -> bool:
    """Whether the JSON text nests deeper than ``limit`` (strings skipped); stops at the first level past it."""
    depth = 0
    for m in _BRACKETS.finditer(line):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


def _parse_line(line: str) -> Any:
    """An answer line as JSON, at any depth: a decode of the corpus's deepest value (1025 Arrays) is
    deeper than the json module recurses, so such a line is read again with the JSON form's own
    parser, which keeps an explicit stack.  ValueError when it is not one JSON document."""
    try:
        return json.loads(line)
    except RecursionError:
        pass
    if _deeper_than(line, MAX_ANSWER_DEPTH):
        raise ValueError(f"nested deeper than {MAX_ANSWER_DEPTH} levels")
    try:
        obj, end = raw_decode_deep(line, 0)
    except (IndexError, KeyError, TypeError) as e:
        raise ValueError(str(e)) from None
    if line[end:].strip():
        raise ValueError("extra data after the JSON document")
    return obj


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


def verdict_of(case: Case, answer: Answer, op: str = ROUNDTRIP) -> Verdict:
    """Judge what the adapter sent back for ``case`` under ``op``."""
    if answer.response is None:
        return Verdict(case, False, answer.problem, op=op, outcome=answer.kind)
    r = answer.response
    key = "json" if op == DECODE else "hex"
    has_value, has_error = key in r, "error" in r
    if has_value == has_error:
        return Verdict(case, False, f"a response needs exactly one of \"{key}\" and \"error\": "
                                    + quote(json.dumps(r)), op=op)
    if has_error:
        error = str(r["error"])
        return judge_decode(case, error=error) if op == DECODE else judge(case, error=error, op=op)
    if op == DECODE:
        return judge_decode(case, value=r["json"])
    text = r["hex"]
    try:
        if not isinstance(text, str):
            raise ValueError
        actual = bytes.fromhex(text)
    except ValueError:
        return Verdict(case, False, f"\"hex\" is not hexadecimal bytes: {quote(json.dumps(text))}", op=op)
    return judge(case, actual=actual, op=op)


#: The default time limit of a whole run, in seconds: the kit's three operations over both corpora
#: take seconds for a working adapter; this bounds one that hangs on many cases.
DEFAULT_TIME_LIMIT = 900.0
#: Starts in a row that may fail to answer the opening request before the adapter is taken for broken.
START_FAILURES = 3
#: The opening request of every start: which operations the adapter supports (docs/conformance.md).
#: It carries a round trip's fields (of no bytes), so that an adapter written before there were
#: operations, which may read them without looking at "op", answers it instead of failing.
HELLO_ID = 0
HELLO = b'{"id":0,"op":"operations","dialect":"godot4","objects":false,"hex":""}\n'


@dataclass
class Run:
    """Every verdict of a run, and what went wrong with the adapter itself."""

    command: list[str]
    verdicts: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    starts: int = 0
    stale: int = 0
    #: The operations the adapter said it supports (None: it never answered the opening request).
    declared: tuple[str, ...] | None = None
    #: The operations run: those asked for that the adapter supports, in :data:`OPERATIONS` order.
    operations: tuple[str, ...] = (ROUNDTRIP,)
    #: Operations asked for that the adapter does not support (no verdicts: not its job).
    unsupported: tuple[str, ...] = ()
    #: The run's time limit in seconds (None: none), and the time it took.
    time_limit: float | None = None
    elapsed: float = 0.0
    #: Why the run stopped before its last case ("" when it reached it); the rest is "not run".
    stopped: str = ""


def run(command: Sequence[str], corpus: Sequence[Case], *, operations: Sequence[str] | None = None,
        timeout: float = 10.0, start_timeout: float = 60.0, max_restarts: int | None = None,
        time_limit: float | None = DEFAULT_TIME_LIMIT, start_failures: int = START_FAILURES) -> Run:
    """Send every case of ``corpus`` to the adapter ``command`` under each of ``operations`` (default:
    every one; only those the adapter supports run) and judge the answers: each answer within
    ``timeout`` seconds, the opening request of each start (which includes loading the adapter)
    within ``start_timeout``, the whole run within ``time_limit`` (None: no limit)."""
    for op in operations or ():
        if op not in OPERATIONS:
            raise ValueError(f"unknown operation {op!r}: choose from {', '.join(OPERATIONS)}")
    return _Session(command, timeout, max(timeout, start_timeout), max_restarts, time_limit,
                    start_failures).run(corpus, operations)


class _Session:
    """One run: the adapter, the clock, and the verdicts so far."""

    def __init__(self, command: Sequence[str], timeout: float, start_timeout: float, max_restarts: int | None,
                 time_limit: float | None, start_failures: int) -> None:
        self.adapter = Adapter(command)
        self.result = Run(list(command), time_limit=time_limit)
        self.timeout, self.start_timeout = timeout, start_timeout
        self.max_restarts, self.start_failures = max_restarts, start_failures
        self.began = time.monotonic()
        self.deadline = None if time_limit is None else self.began + time_limit
        self.failed_starts = 0
        self.next_id = 0

    def run(self, corpus: Sequence[Case], operations: Sequence[str] | None) -> Run:
        result = self.result
        try:
            up = self._bring_up(first=True)
            wanted = tuple(operations) if operations else OPERATIONS
            declared = result.declared if result.declared is not None else (
                wanted if operations or up else (ROUNDTRIP,))
            result.operations = tuple(op for op in OPERATIONS if op in wanted and op in declared)
            result.unsupported = tuple(op for op in OPERATIONS if op in wanted and op not in declared)
            for case in corpus:
                for op in case.operations():
                    if op in result.operations:
                        self._one(case, op)
        finally:
            self.adapter.stop()
            result.starts, result.stale = self.adapter.starts, self.adapter.stale
            result.elapsed = time.monotonic() - self.began
        return result

    def _remaining(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def _time_is_up(self) -> bool:
        if self._remaining() > 0:
            return False
        self.result.stopped = self.result.stopped or f"the time limit of {self.result.time_limit:g} s was reached"
        return True

    def _one(self, case: Case, op: str) -> None:
        result, adapter = self.result, self.adapter
        if result.stopped or self._time_is_up() or (adapter.stopped and not self._bring_up()):
            result.verdicts.append(Verdict(case, False, f"not run: {result.stopped}", op=op, outcome=NOT_RUN))
            return
        self.next_id += 1
        limit = min(self.timeout, self._remaining())
        answer = adapter.ask(self.next_id, case.request_line(self.next_id, op), limit)
        if answer.kind == HANG and limit < self.timeout:  # cut short by the run's limit, not the case's
            self._time_is_up()
            result.verdicts.append(Verdict(case, False, f"not run: {result.stopped}", op=op, outcome=NOT_RUN))
            adapter.stop(grace=0)
            return
        result.verdicts.append(verdict_of(case, answer, op))
        if answer.fatal:
            result.problems.append(f"{case} [{op}]: {answer.problem}")
            adapter.stop(grace=0 if answer.kind == HANG else 0.5)

    def _bring_up(self, first: bool = False) -> bool:
        """Start the adapter and have it answer the opening request, trying again while that is
        allowed; False (with ``stopped`` saying why) when it did not come up."""
        result, adapter = self.result, self.adapter
        while True:
            if self.max_restarts is not None and adapter.starts > self.max_restarts:
                result.stopped = f"gave up after starting the adapter {adapter.starts} times (--restarts)"
            elif self.failed_starts >= self.start_failures:
                result.stopped = (f"the adapter did not answer its opening request in {self.failed_starts} starts "
                                  "in a row")
            if result.stopped or self._time_is_up():
                return False
            try:
                adapter.start()
            except AdapterError as e:
                if first:
                    raise
                result.stopped = str(e)
                return False
            if self._hello():
                return True

    def _hello(self) -> bool:
        """The opening request: which operations the adapter supports (only the first answer counts)."""
        answer = self.adapter.ask(HELLO_ID, HELLO, min(self.start_timeout, self._remaining()), first=True)
        if answer.fatal:
            self.failed_starts += 1
            self.result.problems.append(f"start {self.adapter.starts}, the opening request: {answer.problem}")
            self.adapter.stop(grace=0 if answer.kind == HANG else 0.5)
            return False
        self.failed_starts = 0
        if self.result.declared is None:
            self.result.declared = declared_operations(answer, self.result.problems)
        return True


def declared_operations(answer: Answer, problems: list[str]) -> tuple[str, ...]:
    """The operations an answer to the opening request declares.  An ``error`` or ``hex`` answer is
    an adapter written before operations were declared: it does the round trip (docs/conformance.md)."""
    r = answer.response
    if r is not None and ("error" in r or "hex" in r) and "operations" not in r:
        return (ROUNDTRIP,)
    ops = r.get("operations") if r is not None else None
    if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
        what = answer.problem or "no \"operations\" list: " + quote(json.dumps(r))
        problems.append(f"the opening request: {what}; the round trip is assumed")
        return (ROUNDTRIP,)
    unknown = [op for op in ops if op not in OPERATIONS]
    if unknown:
        problems.append(f"the opening request: unknown operations {', '.join(map(repr, unknown))} ignored")
    return tuple(op for op in OPERATIONS if op in ops)
