"""Run an adapter and, when it ends or is told to stop, end every process it started.

Why a process of its own: an adapter may start helpers that leave its session (``setsid``, a
daemon's double fork), which no signal to the adapter's process group reaches.  This process
makes itself the *child subreaper* of everything below it (Linux ``prctl``), so an orphaned
descendant is re-parented to it instead of to init; when the adapter exits, or this process gets
SIGTERM, SIGINT or SIGHUP, it kills its children until none is left, each orphan re-parented
to it in turn.  Run by path (``python3 -I _reaper.py -- COMMAND...``): it imports only the
standard library, so a restart costs one small interpreter start.

The adapter inherits the standard streams; this process lets go of its own copies at once, so
that the adapter closing its output is seen as the end of it.  It exits as the adapter did (the
same status, or killed by the same signal), or with 127 and a message when the adapter cannot
start.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36


def available() -> bool:
    """Whether this system lets a process adopt its orphaned descendants (Linux)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def children(me: int) -> list[int]:
    """The processes whose parent is ``me`` (zombies included: waitpid reaps them)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # it ended meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def end_all() -> None:
    """Kill every child until there is none: each one killed re-parents its own children here."""
    me = os.getpid()
    while True:
        for pid in children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


class _Stop(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1:] if "--" in argv else argv
    if not command:
        print("usage: _reaper.py -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _stop)
    become_subreaper()
    try:
        adapter = subprocess.Popen(command)
    except (OSError, ValueError) as e:
        print(f"cannot start {command[0]!r}: {e.strerror if isinstance(e, OSError) else e}", file=sys.stderr)
        return 127
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the adapter's output ends when the adapter (and what it started) closes it
        os.dup2(devnull, fd)
    status = None
    try:
        status = adapter.wait()
    except _Stop:
        pass
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
        end_all()
    if status is None:
        return 128 + signal.SIGTERM
    if status < 0:  # killed by a signal: so is this process, for the runner to say so
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-status})
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
