"""The example asyncio server (examples/asyncio_server.py) against well-behaved and hostile clients.

Everything runs on 127.0.0.1 with an ephemeral port, bounded loops and
timeouts.  The engine test has the real Godot 3 engine connect with
StreamPeerTCP and talk put_var/get_var.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any, Awaitable, Callable, TypeVar

import oracles
import pytest
from conftest import assert_same_bytes, engine_cases, node_path_pad_mask

import godot_formats as gf
from godot_formats.streams import stream

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "asyncio_server.py"
TIMEOUT = 10.0
T = TypeVar("T")


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("asyncio_server_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_example()


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Run a test coroutine with an overall deadline."""
    async def bounded() -> T:
        return await asyncio.wait_for(main(), TIMEOUT * 3)

    return asyncio.run(bounded())


class Server:
    """The example server on an ephemeral loopback port, as an async context manager."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.port = 0

    async def __aenter__(self) -> Server:
        self.server = await example.start_server("127.0.0.1", 0, **self.options)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), TIMEOUT)


async def ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, message: Any,
              dialect: str = "godot4") -> Any:
    await stream.write_value(writer, message, dialect)
    return await asyncio.wait_for(stream.read_value(reader, dialect), TIMEOUT)


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True when the server closes the connection (EOF or reset) within the timeout."""
    try:
        rest = await asyncio.wait_for(reader.read(), TIMEOUT)
    except ConnectionError:
        return True
    return rest == b""


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except ConnectionError:
        pass


def test_handle() -> None:
    assert example.handle({"cmd": "ping", "t": 1}) == {"pong": 1}
    assert example.handle({"cmd": "echo", "value": [1, "x"]}) == {"echo": [1, "x"]}
    assert "error" in example.handle({"cmd": "nope"})
    assert "error" in example.handle([1, 2])


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth


def test_ping_and_echo_engine_values() -> None:
    # Every non-object value Godot 4.6 wrote goes to the server and comes back unchanged.
    cases = [c for c in engine_cases("godot4") if c.get("ok") and not c.get("raw") and c.get("hex")]

    async def main() -> None:
        async with Server() as server:
            reader, writer = await server.connect()
            assert await ask(reader, writer, {"cmd": "ping", "t": 1}) == {"pong": 1}
            for case in cases:
                engine_bytes = bytes.fromhex(case["hex"])
                value = gf.loads(engine_bytes, "godot4")
                if _depth(value) > 1000:
                    continue  # wrapped in the message it would pass the 1024-level limit
                reply = await ask(reader, writer, {"cmd": "echo", "value": value})
                echoed = gf.dumps(reply["echo"], "godot4")
                assert_same_bytes(echoed, engine_bytes, node_path_pad_mask(value, "godot4", False))
            await close(writer)

    run(main)
    assert len(cases) > 100


def test_partial_writes_one_byte_at_a_time() -> None:
    frame = stream.dumps_framed({"cmd": "ping", "t": 42}) + stream.dumps_framed({"cmd": "echo", "value": "é" * 50})

    async def main() -> list[Any]:
        async with Server() as server:
            reader, writer = await server.connect()
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for i in range(len(frame)):
                writer.write(frame[i:i + 1])
                await writer.drain()
                await asyncio.sleep(0.001)
            replies = [await asyncio.wait_for(stream.read_value(reader), TIMEOUT) for _ in range(2)]
            await close(writer)
            return replies

    assert run(main) == [{"pong": 42}, {"echo": "é" * 50}]


def test_oversized_length_is_refused_without_allocating() -> None:
    announced = 1 << 30  # 1 GiB, far over the example's 64 KiB limit

    async def main() -> int:
        async with Server() as server:
            bystander_r, bystander_w = await server.connect()
            assert await ask(bystander_r, bystander_w, {"cmd": "ping", "t": 0}) == {"pong": 0}
            tracemalloc.start()
            try:
                reader, writer = await server.connect()
                writer.write(struct.pack("<I", announced))  # and then nothing: the server must not wait
                await writer.drain()
                assert await closed_by_server(reader)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            await close(writer)
            # The other client is still served, and so are new ones.
            assert await ask(bystander_r, bystander_w, {"cmd": "ping", "t": 1}) == {"pong": 1}
            r2, w2 = await server.connect()
            assert await ask(r2, w2, {"cmd": "ping", "t": 2}) == {"pong": 2}
            await close(bystander_w)
            await close(w2)
            return peak

    peak = run(main)
    assert peak < 1 << 20, f"{peak} bytes allocated while refusing a {announced}-byte frame"


@pytest.mark.parametrize("payload, reason", [
    (struct.pack("<I", 0xFF), "unknown type id"),
    (struct.pack("<II", 4, 1000) + b"ab", "String"),          # a String longer than its frame
    (bytes.fromhex(next(c for c in engine_cases("godot4") if c["name"] == "wire_file_store_var_refcounted_full")
                   ["hex"])[4:], "allow_objects"),             # a full Object: never decoded by default
    (b"", "type header"),                                      # a zero-length frame
])
def test_malformed_packet_gets_an_error_and_the_server_goes_on(payload: bytes, reason: str) -> None:
    async def main() -> None:
        async with Server() as server:
            other_r, other_w = await server.connect()
            reader, writer = await server.connect()
            writer.write(struct.pack("<I", len(payload)) + payload)
            reply = await asyncio.wait_for(stream.read_value(reader), TIMEOUT)
            assert "undecodable" in reply["error"] and reason in reply["error"]
            # Same connection, next frame: still in step.
            assert await ask(reader, writer, {"cmd": "ping", "t": 5}) == {"pong": 5}
            assert await ask(other_r, other_w, {"cmd": "ping", "t": 6}) == {"pong": 6}
            await close(writer)
            await close(other_w)

    run(main)


def test_connection_cut_inside_a_frame() -> None:
    async def main() -> None:
        async with Server() as server:
            for garbage in (b"\x10\x00", stream.dumps_framed("hello")[:-3]):
                reader, writer = await server.connect()
                writer.write(garbage)
                await writer.drain()
                writer.write_eof()
                assert await closed_by_server(reader)
                await close(writer)
            reader, writer = await server.connect()
            assert await ask(reader, writer, {"cmd": "ping", "t": 7}) == {"pong": 7}
            await close(writer)

    run(main)


def test_many_clients_at_once() -> None:
    async def client(server: Server, n: int) -> list[Any]:
        reader, writer = await server.connect()
        replies = [await ask(reader, writer, {"cmd": "ping", "t": n * 100 + i}) for i in range(10)]
        await close(writer)
        return replies

    async def main() -> list[list[Any]]:
        async with Server() as server:
            return list(await asyncio.gather(*(client(server, n) for n in range(20))))

    results = run(main)
    assert results == [[{"pong": n * 100 + i} for i in range(10)] for n in range(20)]


def test_idle_client_is_closed() -> None:
    async def main() -> None:
        async with Server(idle_timeout=0.2) as server:
            reader, writer = await server.connect()
            writer.write(b"\x08\x00")  # half a prefix, then silence
            await writer.drain()
            assert await closed_by_server(reader)
            await close(writer)

    run(main)


def test_godot3_dialect_and_unknown_commands() -> None:
    async def main() -> None:
        async with Server(dialect="godot3") as server:
            reader, writer = await server.connect()
            assert await ask(reader, writer, {"cmd": "ping", "t": 1}, "godot3") == {"pong": 1}
            v = gf.Quaternion(0.0, 0.0, 0.0, 1.0)
            assert await ask(reader, writer, {"cmd": "echo", "value": v}, "godot3") == {"echo": v}
            assert "unknown cmd" in (await ask(reader, writer, {"cmd": "dance"}, "godot3"))["error"]
            assert "error" in await ask(reader, writer, "just a string", "godot3")
            await close(writer)

    run(main)


def test_example_runs_as_a_script() -> None:
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+) \(godot4\)", line)
        assert m, line
        with stream.VariantSocket.connect(("127.0.0.1", int(m.group(1))), timeout=TIMEOUT) as peer:
            peer.put_var({"cmd": "ping", "t": 3})
            assert peer.get_var() == {"pong": 3}
    finally:
        proc.terminate()
        proc.communicate(timeout=TIMEOUT)


# -- hostile clients (docs/security.md, "The example server under hostile clients") --------
#
# No test here measures time: a slow decode is a decode that waits for an Event
# the test sets, and every wait is for something to happen, bounded by TIMEOUT.


def test_read_frame_returns_the_payload_undecoded() -> None:
    async def main() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(stream.dumps_framed([1, 2]) + struct.pack("<I", 1 << 20))
        reader.feed_eof()
        assert await stream.read_frame(reader) == gf.dumps([1, 2])
        with pytest.raises(stream.FramingError, match="max_packet_size"):
            await stream.read_frame(reader, max_packet_size=1000)
        empty = asyncio.StreamReader()
        empty.feed_eof()
        with pytest.raises(EOFError):
            await stream.read_frame(empty)

    run(main)


class SlowDecode:
    """A decode that blocks on frames holding ``marker`` until ``release`` is set (the others are decoded at once)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker.encode()
        self.started = threading.Event()
        self.release = threading.Event()
        self.threads: set[str] = set()

    def __call__(self, payload: bytes) -> Any:
        self.threads.add(threading.current_thread().name)
        if self.marker in payload:
            self.started.set()
            self.release.wait(TIMEOUT * 3)
        return gf.loads(payload, "godot4")


async def wait_until(condition: Callable[[], bool]) -> None:
    """Wait (bounded) for something the server does in the background."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the server"
        await asyncio.sleep(0.01)


def test_slow_decode_does_not_stall_other_clients() -> None:
    slow = SlowDecode("SLOW")
    big = "SLOW" + "x" * 2000  # over small_frame_size: decoded by the one general worker

    async def main() -> None:
        async with Server(decode=slow, decode_workers=1, small_frame_size=1024) as server:
            hostile_r, hostile_w = await server.connect()
            other_r, other_w = await server.connect()
            try:
                await stream.write_value(hostile_w, {"cmd": "echo", "value": big})
                assert await asyncio.to_thread(slow.started.wait, TIMEOUT)
                # The only general worker is stuck in the hostile frame; the event loop is not,
                # and small messages have a thread of their own.
                for t in range(5):
                    assert await ask(other_r, other_w, {"cmd": "ping", "t": t}) == {"pong": t}
                r2, w2 = await server.connect()
                assert await ask(r2, w2, {"cmd": "echo", "value": [1, "a"]}) == {"echo": [1, "a"]}
                await close(w2)
                assert not slow.release.is_set()
            finally:
                slow.release.set()
            # The slow frame still gets its answer, and the worker serves large frames again.
            assert await asyncio.wait_for(stream.read_value(hostile_r), TIMEOUT) == {"echo": big}
            assert await ask(other_r, other_w, {"cmd": "echo", "value": "y" * 3000}) == {"echo": "y" * 3000}
            await close(hostile_w)
            await close(other_w)

    run(main)
    assert all(name.startswith("decode") for name in slow.threads), slow.threads  # never on the event loop


def test_message_over_the_decode_timeout_drops_its_client(caplog: pytest.LogCaptureFixture) -> None:
    slow = SlowDecode("SLOW")
    big = "SLOW" + "x" * 2000

    async def main() -> None:
        async with Server(decode=slow, decode_workers=1, decode_timeout=0.2) as server:
            hostile_r, hostile_w = await server.connect()
            other_r, other_w = await server.connect()
            try:
                await stream.write_value(hostile_w, {"cmd": "echo", "value": big})
                assert await closed_by_server(hostile_r)  # after 0.2 s; the decode is still blocked
                assert not slow.release.is_set()
                assert await ask(other_r, other_w, {"cmd": "ping", "t": 1}) == {"pong": 1}
            finally:
                slow.release.set()
            # A thread cannot be stopped: the worker is free again once that decode has ended.
            assert await ask(other_r, other_w, {"cmd": "echo", "value": "z" * 3000}) == {"echo": "z" * 3000}
            await close(hostile_w)
            await close(other_w)

    with caplog.at_level(logging.INFO, logger="godot_formats.example"):
        run(main)
    assert "message took too long to answer" in caplog.text


def test_decode_on_the_event_loop_when_asked() -> None:
    slow = SlowDecode("never")

    async def main() -> None:
        async with Server(decode=slow, decode_workers=0) as server:
            reader, writer = await server.connect()
            assert await ask(reader, writer, {"cmd": "ping", "t": 1}) == {"pong": 1}
            await close(writer)

    run(main)
    assert slow.threads == {threading.main_thread().name}


def test_client_that_never_reads_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    request = stream.dumps_framed({"cmd": "echo", "value": "x" * 30_000})

    async def flood(server: Server) -> str:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.setblocking(False)
        _, writer = await asyncio.open_connection(sock=sock)
        try:
            for _ in range(2000):  # at most 60 MB; a few MB fill every buffer on the way
                writer.write(request)
                await asyncio.wait_for(writer.drain(), TIMEOUT)
        except (ConnectionError, asyncio.TimeoutError) as e:
            return type(e).__name__
        finally:
            writer.transport.abort()
        return "sent everything"

    async def main() -> None:
        async with Server(write_timeout=0.3) as server:
            other_r, other_w = await server.connect()
            assert await ask(other_r, other_w, {"cmd": "ping", "t": 1}) == {"pong": 1}
            outcome = await flood(server)
            assert outcome in ("ConnectionResetError", "BrokenPipeError"), outcome
            assert await ask(other_r, other_w, {"cmd": "ping", "t": 2}) == {"pong": 2}
            await wait_until(lambda: len(server.server.clients) == 1)
            await close(other_w)

    with caplog.at_level(logging.INFO, logger="godot_formats.example"):
        run(main)
    assert "not reading its replies" in caplog.text


def test_connections_over_the_cap_are_closed(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        async with Server(max_connections=2) as server:
            first = [await server.connect() for _ in range(2)]
            for n, (reader, writer) in enumerate(first):
                assert await ask(reader, writer, {"cmd": "ping", "t": n}) == {"pong": n}
            for _ in range(3):
                reader, writer = await server.connect()
                assert await closed_by_server(reader)
                await close(writer)
            assert server.server.refused == 3
            # The clients already in are still served; a freed place is taken again.
            assert await ask(*first[1], {"cmd": "ping", "t": 5}) == {"pong": 5}
            await close(first[0][1])
            await wait_until(lambda: len(server.server.clients) == 1)
            reader, writer = await server.connect()
            assert await ask(reader, writer, {"cmd": "ping", "t": 6}) == {"pong": 6}
            await close(writer)
            await close(first[1][1])

    with caplog.at_level(logging.INFO, logger="godot_formats.example"):
        run(main)
    refusals = [r for r in caplog.records if "closing new connections" in r.getMessage()]
    assert len(refusals) == 1, caplog.text  # one line, not one per refused connection


def test_default_cap_fits_the_descriptor_limit() -> None:
    limit = example.fd_limit()
    server = example.Server(decode_workers=0)
    if limit is None:
        assert server.max_connections == example.MAX_CONNECTIONS
    else:
        assert server.max_connections == max(1, min(example.MAX_CONNECTIONS, limit - example.RESERVED_FDS))
    assert example.Server(decode_workers=0, max_connections=5).max_connections == 5


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NOFILE and EMFILE as on Linux")
def test_out_of_descriptors_is_one_log_line() -> None:
    # The server may open 64 descriptors and allows 1000 clients, so accept() fails with
    # EMFILE; 90 idle sockets keep it failing.  asyncio retries every second and calls
    # the loop's exception handler each time (it printed a traceback per failed accept).
    nofile = 64
    code = ("import resource, runpy, sys; "
            f"resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, resource.getrlimit(resource.RLIMIT_NOFILE)[1])); "
            f"sys.argv = [{str(EXAMPLE)!r}, '--port', '0', '--max-connections', '1000']; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []

    def read_log() -> None:
        for log_line in proc.stderr or ():
            lines.append(log_line)

    reader = threading.Thread(target=read_log, daemon=True)
    socks: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, line
        port = int(m.group(1))
        reader.start()
        for _ in range(90):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT))
        deadline = time.monotonic() + TIMEOUT
        while not any("accept() failed" in line for line in lines):
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)
        time.sleep(1.5)  # at least one more failing retry
        for s in socks:
            s.close()
        socks.clear()
        # Accepting resumes by itself once descriptors are free again.
        with stream.VariantSocket.connect(("127.0.0.1", port), timeout=TIMEOUT) as peer:
            peer.put_var({"cmd": "ping", "t": 8})
            assert peer.get_var() == {"pong": 8}
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(TIMEOUT)
        reader.join(TIMEOUT)
    log_text = "".join(lines)
    assert "Traceback" not in log_text, log_text
    failures = [line for line in lines if "accept() failed" in line]
    assert len(failures) == 1, log_text
    assert "Too many open files" in failures[0]


# -- the real engine as the client ------------------------------------------------------

GODOT3_CLIENT = """extends SceneTree

func wait_bytes(peer, n):
\tfor i in range(500):
\t\tif peer.get_available_bytes() >= n:
\t\t\treturn true
\t\tOS.delay_msec(10)
\treturn false

func _init():
\tvar peer = StreamPeerTCP.new()
\tvar err = peer.connect_to_host("127.0.0.1", PORT)
\tfor i in range(500):
\t\tif peer.get_status() != StreamPeerTCP.STATUS_CONNECTING:
\t\t\tbreak
\t\tOS.delay_msec(10)
\tprint("@@status ", peer.get_status() == StreamPeerTCP.STATUS_CONNECTED, " ", err)
\tpeer.put_var({"cmd": "ping", "t": 1234})
\tif wait_bytes(peer, 4):
\t\tprint("@@pong ", var2str(peer.get_var()) == var2str({"pong": 1234}))
\tvar values = [VALUES]
\tfor v in values:
\t\tpeer.put_var({"cmd": "echo", "value": v})
\t\tif not wait_bytes(peer, 4):
\t\t\tprint("@@echo timeout")
\t\t\tbreak
\t\tvar reply = peer.get_var()
\t\tprint("@@echo ", var2str(reply["echo"]) == var2str(v), " ", var2str(v).replace("\\n", " "))
\tpeer.put_data(PoolByteArray([4, 0, 0, 0, 255, 0, 0, 0]))
\tif wait_bytes(peer, 4):
\t\tprint("@@malformed ", str(peer.get_var()).find("undecodable") >= 0)
\tpeer.disconnect_from_host()
\tquit()
"""

GODOT3_VALUES = [
    '"hi"', "7", "-9000000000", "2.5", "true", "null", '[1, [2, "three"], {"k": 4}]',
    '{1: "int key", 1.0: "float key", "1": "string key"}', "Vector2(1.5, -2)", "Vector3(1, 2, 3)",
    "Rect2(1, 2, 3, 4)", "Transform2D(Vector2(1, 2), Vector2(3, 4), Vector2(5, 6))", "Plane(1, 0, 0, 2)",
    "Quat(0, 0, 0, 1)", "AABB(Vector3(1, 2, 3), Vector3(4, 5, 6))", "Basis(Vector3(1, 2, 3), Vector3(4, 5, 6), "
    "Vector3(7, 8, 9))", "Transform(Basis(), Vector3(1, 2, 3))", "Color(1, 0.5, 0.25, 1)", "NodePath(\"a/b:c\")",
    "PoolByteArray([1, 2, 255])", "PoolIntArray([1, -2, 3])", "PoolRealArray([0.5, 1.5])",
    'PoolStringArray(["a", "bé"])', "PoolVector2Array([Vector2(1, 2)])", "PoolVector3Array([Vector3(1, 2, 3)])",
    "PoolColorArray([Color(1, 0, 0, 1)])",
]


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot3_available() is not None, reason=str(oracles.godot3_available()))
def test_godot3_streampeertcp_client() -> None:
    async def main() -> str:
        async with Server(dialect="godot3") as server:
            script = GODOT3_CLIENT.replace("PORT", str(server.port)).replace("VALUES", ", ".join(GODOT3_VALUES))
            # The engine blocks in its own process; the server keeps running in this loop.
            return await asyncio.get_running_loop().run_in_executor(
                None, lambda: oracles.godot3_run(script, timeout=60))

    out = run(main)
    lines = [line for line in out.splitlines() if line.startswith("@@")]
    assert lines[0] == "@@status True 0", out
    assert lines[1] == "@@pong True", out
    echoes = [line for line in lines if line.startswith("@@echo")]
    assert len(echoes) == len(GODOT3_VALUES), out
    assert all(line.startswith("@@echo True") for line in echoes), "\n".join(echoes)
    assert lines[-1] == "@@malformed True", out


# The Godot 4 oracle is a web build: it cannot open raw TCP connections, so the
# Godot 4 clients (examples/godot4_client.gd and the one in docs/streams.md) are
# checked for parse errors only.
def _godot4_clients() -> list[str]:
    docs = (EXAMPLE.parent.parent / "docs" / "streams.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```gdscript\n(.*?)```", docs, re.S)
    assert blocks, "docs/streams.md lost its GDScript client"
    return [(EXAMPLE.parent / "godot4_client.gd").read_text(encoding="utf-8"), *blocks]


@pytest.mark.engine
@pytest.mark.skipif(oracles.godot4_available() is not None, reason=str(oracles.godot4_available()))
@pytest.mark.parametrize("which", [0, 1], ids=["examples", "docs"])
def test_godot4_client_parses(which: int) -> None:
    client = _godot4_clients()[which]
    script = client + "\n\nfunc _enter_tree() -> void:\n\tprint(\"@@parsed\")\n\tget_tree().quit()\n"
    out = oracles.godot4_run(script, timeout=120)
    assert "@@parsed" in out, out
    assert "Parse Error" not in out and "SCRIPT ERROR" not in out, out
