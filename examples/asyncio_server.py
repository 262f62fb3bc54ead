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

Hostile clients (docs/security.md, "The example server under hostile clients"):

* The event loop only moves bytes.  Decoding a message, answering it and
  encoding the reply run in worker threads, so a frame that is slow to decode
  delays its own client, not the others.  Frames up to ``--small-frame-size``
  bytes have a thread of their own, so pings get through while the
  ``--decode-workers`` threads are busy with large frames.  A client whose message takes longer than
  ``--decode-timeout`` is disconnected (the thread cannot be stopped; it
  finishes that one frame and keeps its worker until then).
* A client that sends nothing for ``--idle-timeout``, or does not take its
  replies for ``--write-timeout``, is disconnected.
* At most ``--max-connections`` clients are served at once (never more than
  the file-descriptor limit allows); a connection over the cap is closed at
  once.  When ``accept()`` fails for lack of descriptors (EMFILE/ENFILE),
  asyncio pauses accepting for a second; this server logs one line for the
  whole episode instead of a traceback per failed ``accept()``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import errno
import logging
import sys
import time
from typing import Any, Callable

from godot_formats import DecodeError, EncodeError
from godot_formats.streams.stream import FramingError, decode_packet, dumps_framed, read_frame

log = logging.getLogger("godot_formats.example")

#: Small messages only: a chat/lobby style server has no use for the 8 MiB
#: default, and a smaller limit bounds what each client can make us buffer.
#: 64 KiB is also the default buffer of Godot's PacketPeerStream.
MAX_PACKET_SIZE = 64 * 1024

#: Close a connection that sends nothing (or never finishes a frame) for this long.
IDLE_TIMEOUT = 60.0

#: Close a connection that does not take its replies (the send buffers stay full) for this long.
WRITE_TIMEOUT = 10.0

#: Stop waiting for one message's decode + answer + encode after this long, and close that client.
DECODE_TIMEOUT = 5.0

#: Worker threads for larger messages (0: decode every message on the event loop, for trusted clients only).
DECODE_WORKERS = 2

#: Frames up to this many bytes are decoded by one worker thread of their own, never behind large ones.
SMALL_FRAME_SIZE = 1024

#: Clients served at once by default (fewer when the descriptor limit is lower);
#: more are closed as soon as they are accepted.
MAX_CONNECTIONS = 256

#: Descriptors kept free for the server itself when the default cap is fitted under ``RLIMIT_NOFILE``.
RESERVED_FDS = 16

#: At most one "still failing" line per this many seconds while accept() keeps failing.
LOG_INTERVAL = 60.0

_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


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


def fd_limit() -> int | None:
    """The soft ``RLIMIT_NOFILE`` (None where there is no such limit, e.g. Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


class _Lane:
    """Worker threads with a FIFO of waiting frames; a worker stays taken until its thread is done."""

    def __init__(self, workers: int, name: str) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=name)
        self.slots = asyncio.Semaphore(workers)
        self.busy = 0

    async def run(self, job: Callable[[], bytes], timeout: float) -> bytes:
        """``job()`` in a worker thread; ``asyncio.TimeoutError`` after ``timeout`` s of running."""
        loop = asyncio.get_running_loop()
        await self.slots.acquire()
        self.busy += 1

        def free(_: object) -> None:  # in the worker thread: the slot is free once the job really ended
            try:
                loop.call_soon_threadsafe(self._release)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        try:
            future = self.pool.submit(job)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(free)
        # shield: a timeout or cancel stops the waiting, never the job (threads cannot be stopped)
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)

    def _release(self) -> None:
        self.busy -= 1
        self.slots.release()


class Server:
    """The example server; see :func:`start_server`."""

    def __init__(
        self,
        *,
        dialect: str = "godot4",
        max_packet_size: int = MAX_PACKET_SIZE,
        idle_timeout: float = IDLE_TIMEOUT,
        write_timeout: float = WRITE_TIMEOUT,
        decode_timeout: float = DECODE_TIMEOUT,
        decode_workers: int = DECODE_WORKERS,
        small_frame_size: int = SMALL_FRAME_SIZE,
        max_connections: int | None = None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> None:
        if decode_workers < 0 or (max_connections is not None and max_connections < 1):
            raise ValueError("decode_workers must be >= 0 and max_connections >= 1")
        self.dialect = dialect
        self.max_packet_size = max_packet_size
        self.idle_timeout = idle_timeout
        self.write_timeout = write_timeout
        self.decode_timeout = decode_timeout
        self.small_frame_size = small_frame_size
        limit = fd_limit()
        if max_connections is None:  # the default fits under the descriptor limit
            max_connections = MAX_CONNECTIONS
            if limit is not None:
                max_connections = max(1, min(max_connections, limit - RESERVED_FDS))
        elif limit is not None and max_connections > limit - RESERVED_FDS:
            log.warning("max_connections %d is over what the descriptor limit (%d) allows: "
                        "accept() will fail before the cap is reached", max_connections, limit)
        self.max_connections = max_connections
        self.decode = decode or self._decode
        self.lanes: tuple[_Lane, _Lane] | None = None
        if decode_workers:
            self.lanes = (_Lane(1, "decode-small"), _Lane(decode_workers, "decode"))
        self.clients: set[asyncio.StreamWriter] = set()
        self.refused = 0  # connections closed at once because of the cap
        self._server: asyncio.Server | None = None
        self._accept_failures = 0  # failed accept() calls since the last line about them
        self._accept_logged: float | None = None  # when that line was logged
        self._refusals_logged: float | None = None
        self._previous_handler: Any = None

    # -- the work of one message (in a worker thread, or on the loop with decode_workers=0) --

    def _decode(self, payload: bytes) -> Any:
        return decode_packet(payload, self.dialect, max_packet_size=self.max_packet_size)

    def respond(self, payload: bytes) -> bytes:
        """The framed reply to one frame's payload: decode, :func:`handle`, encode."""
        try:
            reply: Any = handle(self.decode(payload))
        except DecodeError as e:
            reply = {"error": f"undecodable message: {e}"}
        except Exception:  # a bug, not bad input: say so, and keep serving
            log.exception("unexpected error while decoding a message")
            reply = {"error": "internal error"}
        try:
            return dumps_framed(reply, self.dialect)
        except EncodeError as e:  # e.g. echoing a Vector2i to a godot3 client
            return dumps_framed({"error": f"cannot send the reply: {e}"}, self.dialect)
        except Exception:
            log.exception("unexpected error while encoding a reply")
            return dumps_framed({"error": "cannot send the reply"}, self.dialect)

    async def _answer(self, payload: bytes) -> bytes:
        if self.lanes is None:
            return self.respond(payload)
        lane = self.lanes[0] if len(payload) <= self.small_frame_size else self.lanes[1]
        return await lane.run(lambda: self.respond(payload), self.decode_timeout)

    # -- connections ------------------------------------------------------------------

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer one client's messages until it disconnects, misbehaves or times out."""
        peer = writer.get_extra_info("peername")
        if len(self.clients) >= self.max_connections:
            self._refuse(writer)
            return
        self.clients.add(writer)
        stage = "idle"
        try:
            while True:
                stage = "idle"
                try:
                    payload = await asyncio.wait_for(
                        read_frame(reader, max_packet_size=self.max_packet_size), self.idle_timeout)
                except EOFError:
                    break  # the client closed between two messages
                except FramingError as e:
                    log.warning("%s: closing, broken framing: %s", peer, e)
                    break  # the next frame's start is unknown: nothing more can be read
                stage = "decode"
                reply = await self._answer(payload)
                stage = "write"
                writer.write(reply)
                await asyncio.wait_for(writer.drain(), self.write_timeout)
        except asyncio.TimeoutError:
            timeout = {"idle": self.idle_timeout, "decode": self.decode_timeout, "write": self.write_timeout}
            what = {"idle": "idle", "decode": "message took too long to answer",
                    "write": "not reading its replies"}
            log.info("%s: closing, %s (over %s s)", peer, what[stage], timeout[stage])
            writer.transport.abort()  # drop what is buffered for it
        except ConnectionError as e:
            log.info("%s: connection lost: %s", peer, e)
        finally:
            self.clients.discard(writer)
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, asyncio.CancelledError):
                pass

    def _refuse(self, writer: asyncio.StreamWriter) -> None:
        self.refused += 1
        now = time.monotonic()
        if self._refusals_logged is None or now - self._refusals_logged >= LOG_INTERVAL:
            log.warning("%d clients already: closing new connections (%d so far)",
                        self.max_connections, self.refused)
            self._refusals_logged = now
        writer.transport.abort()

    def _exception_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """One line per ``LOG_INTERVAL`` when accept() fails for lack of descriptors, not a traceback per call.

        asyncio itself stops accepting for a second after such a failure.
        """
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES and "socket" in context:
            self._accept_failures += 1
            now = time.monotonic()
            if self._accept_logged is None or now - self._accept_logged >= LOG_INTERVAL:
                log.error("accept() failed %d time(s): %s; %d client(s) connected; accepting again "
                          "after a pause (at most one such line per %g s)", self._accept_failures,
                          exc.strerror, len(self.clients), LOG_INTERVAL)
                self._accept_logged = now
                self._accept_failures = 0
            return
        if self._previous_handler is not None:
            self._previous_handler(loop, context)
        else:
            loop.default_exception_handler(context)

    # -- the listening socket -----------------------------------------------------------

    async def start(self, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        self._previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._exception_handler)
        try:
            self._server = await asyncio.start_server(self.serve_client, host, port)
        except BaseException:
            loop.set_exception_handler(self._previous_handler)
            raise

    @property
    def sockets(self) -> Any:
        assert self._server is not None
        return self._server.sockets

    def close(self) -> None:
        """Stop listening, drop every client, and let the worker threads go."""
        if self._server is not None:
            self._server.close()
        for writer in list(self.clients):
            writer.transport.abort()
        for lane in self.lanes or ():
            lane.pool.shutdown(wait=False, cancel_futures=True)

    async def wait_closed(self) -> None:
        if self._server is not None:
            await self._server.wait_closed()
        asyncio.get_running_loop().set_exception_handler(self._previous_handler)

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def __aenter__(self) -> Server:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
        await self.wait_closed()


async def start_server(host: str = "127.0.0.1", port: int = 0, **options: Any) -> Server:
    """Start listening (``port=0``: any free port; see ``server.sockets[0].getsockname()``).

    ``options`` are :class:`Server`'s: ``dialect``, ``max_packet_size``,
    ``idle_timeout``, ``write_timeout``, ``decode_timeout``, ``decode_workers``,
    ``small_frame_size``, ``max_connections`` and ``decode`` (payload bytes ->
    value; the dialect's decoder by default).
    """
    server = Server(**options)
    await server.start(host, port)
    return server


async def _serve(args: argparse.Namespace) -> None:
    server = await start_server(
        args.host, args.port, dialect=args.dialect, max_packet_size=args.max_packet_size,
        idle_timeout=args.idle_timeout, write_timeout=args.write_timeout, decode_timeout=args.decode_timeout,
        decode_workers=args.decode_workers, small_frame_size=args.small_frame_size,
        max_connections=args.max_connections)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"listening on {host}:{port} ({args.dialect})", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4242)
    parser.add_argument("--dialect", default="godot4", help="godot4 (default) or godot3")
    parser.add_argument("--max-packet-size", type=int, default=MAX_PACKET_SIZE, help="bytes (default: 65536)")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT,
                        help=f"close a client that sends no whole message for this many s (default: {IDLE_TIMEOUT})")
    parser.add_argument("--write-timeout", type=float, default=WRITE_TIMEOUT,
                        help=f"close a client that does not read its replies for this many s "
                             f"(default: {WRITE_TIMEOUT})")
    parser.add_argument("--decode-timeout", type=float, default=DECODE_TIMEOUT,
                        help=f"close a client whose message takes longer to answer in a worker thread "
                             f"(default: {DECODE_TIMEOUT} s)")
    parser.add_argument("--decode-workers", type=int, default=DECODE_WORKERS,
                        help=f"threads for frames over --small-frame-size; 0 decodes every message on the event loop "
                             f"(default: {DECODE_WORKERS})")
    parser.add_argument("--small-frame-size", type=int, default=SMALL_FRAME_SIZE,
                        help=f"frames up to this size are decoded by a thread of their own "
                             f"(default: {SMALL_FRAME_SIZE})")
    parser.add_argument("--max-connections", type=int, default=None,
                        help=f"clients at once (default: {MAX_CONNECTIONS}, or the descriptor limit "
                             f"- {RESERVED_FDS} when that is lower)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
