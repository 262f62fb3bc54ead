"""The example asyncio server (examples/asyncio_server.py) against well-behaved and hostile clients.

Everything runs on 127.0.0.1 with an ephemeral port, bounded loops and
timeouts.  The engine test has the real Godot 3 engine connect with
StreamPeerTCP and talk put_var/get_var.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import socket
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any, Awaitable, Callable, TypeVar

import oracles
import pytest
from conftest import assert_same_bytes, engine_cases, node_path_pad_mask

import godot_formats as gf
from godot_formats import stream

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "asyncio_server.py"
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
