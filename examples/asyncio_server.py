"""A small asyncio TCP server that Godot talks to with ``StreamPeerTCP.put_var``/``get_var``.

Run it, then start ``examples/godot4_client.gd`` in Godot 4 (or any client that
frames values like ``StreamPeer.put_var``)::

    python examples/asyncio_server.py --port 4242                   # Godot 4 clients
    python examples/asyncio_server.py --port 4242 --dialect godot3  # Godot 3 clients

Every message is a Dictionary with a ``"cmd"``:

* ``{"cmd": "ping", "t": 1}``        -> ``{"pong": 1}``
* ``{"cmd": "echo", "value": v}``    -> ``{"echo": v}`` (any value, sent back as it came)
* anything else                      -> ``{"error": "..."}``

A frame whose value cannot be decoded is answered with ``{"error": ...}`` and
the connection stays open (the frame's length says where the next one starts).
A broken frame (a length over ``--max-packet-size``, or a connection cut
inside a frame) closes that connection only; the server keeps serving the
other clients.  Full Objects are refused (``allow_objects`` stays off).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

from godot_formats import DecodeError, EncodeError
from godot_formats.stream import FramingError, read_value, write_value

log = logging.getLogger("godot_formats.example")

#: Small messages only: a chat/lobby style server has no use for the 8 MiB
#: default, and a smaller limit bounds what each client can make us buffer.
#: 64 KiB is also the default buffer of Godot's PacketPeerStream.
MAX_PACKET_SIZE = 64 * 1024

#: Close a connection that sends nothing (or never finishes a frame) for this long.
IDLE_TIMEOUT = 60.0


def handle(message: Any) -> Any:
    """The reply to one decoded message."""
    if not isinstance(message, dict) or "cmd" not in message:
        return {"error": 'expected a Dictionary with a "cmd" key'}
    cmd = message["cmd"]
    if cmd == "ping":
        return {"pong": message.get("t")}
    if cmd == "echo":
        return {"echo": message.get("value")}
    return {"error": f"unknown cmd {cmd!r}"}


async def serve_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    dialect: str = "godot4",
    max_packet_size: int = MAX_PACKET_SIZE,
    idle_timeout: float = IDLE_TIMEOUT,
) -> None:
    """Answer one client's messages until it disconnects or breaks the framing."""
    peer = writer.get_extra_info("peername")
    try:
        while True:
            try:
                message = await asyncio.wait_for(
                    read_value(reader, dialect, max_packet_size=max_packet_size), idle_timeout)
            except EOFError:
                break  # the client closed between two messages
            except FramingError as e:
                log.warning("%s: closing, broken framing: %s", peer, e)
                break  # the next frame's start is unknown: nothing more can be read
            except DecodeError as e:
                reply: Any = {"error": f"undecodable message: {e}"}
            else:
                reply = handle(message)
            try:
                await write_value(writer, reply, dialect)
            except EncodeError as e:  # e.g. echoing a Vector2i to a godot3 client
                await write_value(writer, {"error": f"cannot send the reply: {e}"}, dialect)
    except asyncio.TimeoutError:
        log.info("%s: closing, idle for %s s", peer, idle_timeout)
    except ConnectionError as e:
        log.info("%s: connection lost: %s", peer, e)
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError:
            pass


async def start_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    dialect: str = "godot4",
    max_packet_size: int = MAX_PACKET_SIZE,
    idle_timeout: float = IDLE_TIMEOUT,
) -> asyncio.Server:
    """Start listening (``port=0``: any free port; see ``server.sockets[0].getsockname()``)."""

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_client(reader, writer, dialect=dialect, max_packet_size=max_packet_size,
                           idle_timeout=idle_timeout)

    return await asyncio.start_server(client, host, port)


async def _serve(args: argparse.Namespace) -> None:
    server = await start_server(args.host, args.port, dialect=args.dialect, max_packet_size=args.max_packet_size)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"listening on {host}:{port} ({args.dialect})", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4242)
    parser.add_argument("--dialect", default="godot4", help="godot4 (default) or godot3")
    parser.add_argument("--max-packet-size", type=int, default=MAX_PACKET_SIZE)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
