"""The peers bench.py times beside our codec: pickle, orjson, msgpack and msgspec on the same Python objects.

pickle (protocol 5) takes the decoded value as it is, our types included.  orjson, msgpack
and msgspec cannot write our math types (``Vector2``, ``Vector3``, ``Color``: tuples of
components; orjson refuses a tuple subclass), so they get the same value with each of
those as a list of its components (:func:`plain`).  msgspec is its msgpack codec through
reusable ``msgspec.msgpack.Encoder``/``Decoder`` objects, as its documentation advises for
speed: the fastest Python codec we know, and issue 22's yardstick.  orjson, msgpack and
msgspec are optional (``pip install orjson msgpack msgspec``, the ``bench`` extra); a missing
one is skipped.
"""

from __future__ import annotations

import importlib
import pickle
from dataclasses import dataclass
from typing import Any, Callable

from godot_formats.core import types as t

__all__ = ["INSTALL_HINT", "PLAIN_NOTE", "Peer", "available", "plain"]

INSTALL_HINT = "pip install orjson msgpack msgspec"

PLAIN_NOTE = ("orjson, msgpack and msgspec (msgspec.msgpack.Encoder/Decoder) get the value with each "
              "Vector2/Vector3/Color as a list of its components (they cannot write our types); pickle "
              "(protocol 5) gets it as decoded")


@dataclass(frozen=True)
class Peer:
    """One serializer: its functions, and the statements timeit runs per call (on ``a``)."""

    name: str
    loads: Callable[[bytes], Any]
    dumps: Callable[..., bytes]
    #: Whether it needs :func:`plain` values (no math types).
    plain: bool
    #: Extra positional arguments of ``dumps`` (pickle's protocol).
    dumps_args: tuple[Any, ...] = ()

    def dump(self, value: Any) -> bytes:
        return self.dumps(value, *self.dumps_args)

    @property
    def dumps_stmt(self) -> str:
        return "dumps(a" + "".join(f", {x!r}" for x in self.dumps_args) + ")"


def available() -> tuple[list[Peer], list[str]]:
    """The peers importable here (pickle always), and the names of the missing ones."""
    found = [Peer("pickle", pickle.loads, pickle.dumps, False, (5,))]
    missing = []
    for name, loads, dumps in (("orjson", "loads", "dumps"), ("msgpack", "unpackb", "packb")):
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(name)
            continue
        found.append(Peer(name, getattr(module, loads), getattr(module, dumps), True))
    try:
        msgpack_codec = importlib.import_module("msgspec.msgpack")
    except ImportError:
        missing.append("msgspec")
    else:
        found.append(Peer("msgspec", msgpack_codec.Decoder().decode, msgpack_codec.Encoder().encode, True))
    return found, missing


def plain(value: Any) -> Any:
    """``value`` with every math value (a tuple of components) as a list, and a PackedStringArray as
    its list of strings: what orjson, msgpack and msgspec write.

    Recursive: the benchmark's values are a few levels deep.
    """
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, t.Components):
        return list(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, t.PackedStringArray):
        return value.tolist()
    return value
