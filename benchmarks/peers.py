"""The peers bench.py times beside our codec: pickle, orjson and msgpack on the same Python objects.

pickle (protocol 5) takes the decoded value as it is, our types included.  orjson and
msgpack cannot write our math types (``Vector2``, ``Vector3``, ``Color``: tuples of
components; orjson refuses a tuple subclass), so they get the same value with each of
those as a list of its components (:func:`plain`).  orjson and msgpack are optional
(``pip install orjson msgpack``, the ``bench`` extra); a missing one is skipped.
"""

from __future__ import annotations

import importlib
import pickle
from dataclasses import dataclass
from typing import Any, Callable

from godot_formats import types as t

__all__ = ["INSTALL_HINT", "PLAIN_NOTE", "Peer", "available", "plain"]

INSTALL_HINT = "pip install orjson msgpack"

PLAIN_NOTE = ("orjson and msgpack get the value with each Vector2/Vector3/Color as a list of its components "
              "(they cannot write our types); pickle (protocol 5) gets it as decoded")


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
    return found, missing


def plain(value: Any) -> Any:
    """``value`` with every math value (a tuple of components) as a list: what orjson and msgpack write.

    Recursive: the benchmark's values are a few levels deep.
    """
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, t.Components):
        return list(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
