"""Measure the example server (examples/asyncio_server.py) under hostile clients.

    python3 benchmarks/server_attack.py                      # the current server
    python3 benchmarks/server_attack.py --server old.py      # another version (only flags it knows)
    python3 benchmarks/server_attack.py --library /tmp/old   # with the godot_formats package in /tmp/old

Each attack runs against a fresh server process on 127.0.0.1 and prints what a
well-behaved client saw:

1. slow frame: hostile clients send, one after the other (connecting again
   when dropped), a 61 KB frame that is well formed and slow to decode with
   the decoder of commit e88701e (an Array of 5 Dictionaries, each keyed by a
   Dictionary keyed by a Dictionary ... 1023 levels deep; ``--library`` runs
   the server with such a decoder); meanwhile a normal client pings.  Prints
   the normal client's round trips and the server's peak RSS (VmHWM).
2. a client that sends echo requests and never reads the replies: how long
   until the server drops it.
3. 200 idle sockets against a server limited to 128 descriptors (``ulimit -n
   128``): whether a normal client is served, and how many lines the server
   logged.

Numbers are wall-clock times on whatever machine runs this; they are for the
docs (docs/security.md), never for tests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from godot_formats.streams import stream

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "examples" / "asyncio_server.py"


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


def slow_frame() -> bytes:
    one = (u32(27) + u32(1)) * 1023 + u32(0) * 1024  # {{{...{null: null}...: null}: null}: null}
    payload = u32(28) + u32(5) + one * 5  # [that, that, that, that, that]
    return u32(len(payload)) + payload


class ServerProcess:
    library: Path | None = None  # where the server imports godot_formats from (--library)

    def __init__(self, script: Path, flags: list[str], nofile: int | None = None) -> None:
        env = dict(os.environ)
        if self.library is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.library), env.get("PYTHONPATH")]))
        argv = [str(script), "--port", "0", *flags]
        if nofile is None:
            cmd = [sys.executable, *argv]
        else:
            cmd = [sys.executable, "-c",
                   "import resource, runpy, sys; "
                   "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
                   f"resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, hard)); "
                   f"sys.argv = {argv!r}; runpy.run_path(sys.argv[0], run_name='__main__')"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline()
        m = re.search(r":(\d+) \(", line)
        if not m:
            self.proc.kill()
            raise SystemExit(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.port = int(m.group(1))
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def status(self, field: str) -> int:
        """A /proc/<pid>/status field in KiB (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)


async def pings(port: int, stop: asyncio.Event, limit: int = 10_000) -> list[float]:
    """Round trips of one connection pinging back to back until ``stop``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    times = []
    for i in range(limit):
        if stop.is_set():
            break
        start = time.perf_counter()
        await stream.write_value(writer, {"cmd": "ping", "t": i})
        try:
            await asyncio.wait_for(stream.read_value(reader), 60)
        except asyncio.TimeoutError:
            times.append(float("inf"))  # no answer within a minute
            break
        times.append(time.perf_counter() - start)
        await asyncio.sleep(0.005)
    writer.close()
    return times


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def summary(times: list[float]) -> str:
    if not times:
        return "no round trip"
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return (f"{len(times)} round trips, median {ms(statistics.median(times))}, p99 {ms(p99)}, "
            f"max {ms(times[-1])}")


async def attack_slow_frame(script: Path, flags: list[str], hostile: int, frames: int) -> None:
    server = ServerProcess(script, flags)
    try:
        frame = slow_frame()
        stop = asyncio.Event()
        quiet = asyncio.create_task(pings(server.port, stop))
        await asyncio.sleep(1.0)
        stop.set()
        print(f"  no attack:            {summary(await quiet)}")

        async def hostile_client() -> list[float]:
            """``frames`` slow frames one after the other, connecting again when dropped."""
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            times = []
            for _ in range(frames):
                start = time.perf_counter()
                writer.write(frame)
                try:
                    await asyncio.wait_for(stream.read_value(reader), 120)
                except (EOFError, ConnectionError, stream.FramingError):
                    times.append(float("inf"))  # dropped by the server
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                    continue
                times.append(time.perf_counter() - start)
            writer.close()
            return times

        stop = asyncio.Event()
        normal = asyncio.create_task(pings(server.port, stop))
        attackers = [asyncio.create_task(hostile_client()) for _ in range(hostile)]
        hostile_times = [t for times in await asyncio.gather(*attackers) for t in times]
        stop.set()
        normal_times = await normal
        dropped = sum(t == float("inf") for t in hostile_times)
        answered = [t for t in hostile_times if t != float("inf")]
        print(f"  {hostile} hostile client(s), {len(hostile_times)} slow frames "
              f"({len(frame)} bytes; answered in {ms(min(answered)) if answered else '-'} to "
              f"{ms(max(answered)) if answered else '-'}; {dropped} dropped)")
        print(f"  normal client meanwhile: {summary(normal_times)}")
        print(f"  server peak RSS: {server.status('VmHWM') / 1024:.0f} MiB")
    finally:
        server.stop()


async def attack_never_reads(script: Path, flags: list[str], give_up: float) -> None:
    server = ServerProcess(script, flags)
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        request = stream.dumps_framed({"cmd": "echo", "value": "x" * 30_000})
        start = time.perf_counter()
        sent = 0
        outcome = f"still connected after {give_up:.0f} s"
        while time.perf_counter() - start < give_up:
            try:
                writer.write(request)
                await asyncio.wait_for(writer.drain(), 1.0)
                sent += 1
            except asyncio.TimeoutError:
                continue  # the server stopped reading: our own send buffer is full
            except ConnectionError as e:
                outcome = f"dropped by the server after {time.perf_counter() - start:.1f} s ({type(e).__name__})"
                break
        print(f"  sent {sent} echo requests of 30 KB, never read a reply: {outcome}")
        print(f"  server RSS then: {server.status('VmRSS') / 1024:.0f} MiB; "
              f"normal client: {threading_ask(server.port)}")
        writer.close()
    finally:
        server.stop()


def attack_idle_sockets(script: Path, flags: list[str], count: int, nofile: int, watch: float) -> None:
    server = ServerProcess(script, flags, nofile=nofile)
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.settimeout(2.0)
            try:
                s.connect(("127.0.0.1", server.port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        time.sleep(1.0)
        before = len(server.log)
        start = time.perf_counter()
        results = []
        while time.perf_counter() - start < watch:  # a normal client tries once a second
            results.append(threading_ask(server.port))
            time.sleep(1.0)
        lines = server.log[before:]
        tracebacks = sum(line.startswith("Traceback") for line in server.log)
        print(f"  {len(socks)} of {count} idle sockets connected (ulimit -n {nofile}); "
              f"a normal client once a second for {watch:.0f} s: {summarize_results(results)}")
        print(f"  server log: {len(server.log)} lines in all, {len(lines)} during those {watch:.0f} s, "
              f"{tracebacks} tracebacks")
        for line in server.log[:3]:
            print(f"    | {line.rstrip()[:150]}")
        for s in socks:
            s.close()
        time.sleep(1.5)  # asyncio retries accept() after a second
        print(f"  idle sockets closed, then a normal client: {threading_ask(server.port)}")
    finally:
        for s in socks:
            s.close()
        server.stop()


def threading_ask(port: int) -> str:
    try:
        with stream.VariantSocket.connect(("127.0.0.1", port), timeout=3.0) as peer:
            start = time.perf_counter()
            peer.put_var({"cmd": "ping", "t": 1})
            reply = peer.get_var()
            return f"{reply} in {ms(time.perf_counter() - start)}"
    except (OSError, EOFError, stream.FramingError) as e:
        return f"failed ({type(e).__name__})"


def summarize_results(results: list[str]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        key = r if r.startswith("failed") else "served"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n}× {k}" for k, n in counts.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, default=SERVER,
                        help="the server script (another version: its own defaults, no new flags)")
    parser.add_argument("--library", type=Path,
                        help="run the server with the godot_formats package found in this directory "
                             "(e.g. an export of an older commit, whose decoder is slower on the slow frame)")
    parser.add_argument("--frames", type=int, default=3, help="slow frames per hostile client")
    parser.add_argument("--only", choices=["slow", "write", "idle"], help="one attack only")
    args = parser.parse_args()
    new = args.server == SERVER
    ServerProcess.library = args.library
    if args.only in (None, "slow"):
        for hostile in (1, 4):
            print(f"slow frame, {hostile} hostile client(s):")
            asyncio.run(attack_slow_frame(args.server, [], hostile, args.frames))
    if args.only in (None, "write"):
        print("client that never reads" + (" (--write-timeout 2):" if new else ":"))
        asyncio.run(attack_never_reads(args.server, ["--write-timeout", "2"] if new else [], 30.0))
    if args.only in (None, "idle"):
        print("200 idle sockets, ulimit -n 128, default options:")
        attack_idle_sockets(args.server, [], 200, 128, 10.0)
        if new:
            print("200 idle sockets, ulimit -n 128, --max-connections 1000 (over the limit: accept() fails):")
            attack_idle_sockets(args.server, ["--max-connections", "1000"], 200, 128, 10.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
