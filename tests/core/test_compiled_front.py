"""The compiled front door of gf.loads and gf.dumps (godot_formats/core/_cfront.c, accel.front).

The front answers the calls whose codec the Python function's table already holds and passes
every other call to the Python function: so every call must give what the Python function
gives, value or error, and the front must look like that function to the tools that inspect one.
"""

from __future__ import annotations

import copy
import inspect
import os
import pickle
import subprocess
import sys
import threading
from typing import Any, Callable

import pytest

import godot_formats as gf
from godot_formats import api
from godot_formats.core import accel
from godot_formats.core import types as t

_cfront = pytest.importorskip("godot_formats.core._cfront", reason="the compiled front door is not built")
needs_front = pytest.mark.skipif(gf.backend != "c", reason="the front serves with the compiled codec only "
                                 "(GODOT_FORMATS_PURE=1 turns both off)")

MESSAGE = {"type": "move", "id": 12345, "pos": t.Vector2(1.5, 2.5), "name": "player_one", "flags": [1, 2, 3]}


class Unhashable:
    __hash__ = None  # type: ignore[assignment]


class HashKeyError:
    def __hash__(self) -> int:
        raise KeyError("odd hash")


class HashFails:
    def __hash__(self) -> int:
        raise RuntimeError("no hash today")


def _outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "value", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the comparison is of whatever comes out
        return type(e).__name__, str(e)


LOADS_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((gf.dumps(MESSAGE, "godot3"), "godot3"), {}),
    ((gf.dumps(MESSAGE, "godot3"),), {"dialect": "godot3"}),
    ((gf.dumps([1, "two", 3.5]),), {}),  # the default dialect
    ((gf.dumps(MESSAGE, "godot4"), gf.get_dialect("godot4")), {}),  # a Dialect object
    ((gf.dumps(MESSAGE, "godot3"), "auto"), {}),
    ((gf.dumps(MESSAGE, "godot3"), "godot3"), {"max_depth": 0}),
    ((gf.dumps(MESSAGE, "godot3"), "godot3"), {"max_size": 8}),
    ((bytearray(gf.dumps(MESSAGE, "godot3")), "godot3"), {}),
    ((memoryview(gf.dumps(MESSAGE, "godot3")), "godot3"), {}),
    ((b"\x00\x00\x00", "godot3"), {}),  # cut short
    ((b"\xff\x00\x00\x00", "godot3"), {}),  # an unknown type
    ((b"\x00\x00\x00\x00", "godot9"), {}),  # an unknown dialect
    ((b"\x00\x00\x00\x00", Unhashable()), {}),
    ((b"\x00\x00\x00\x00", HashKeyError()), {}),
    ((b"\x00\x00\x00\x00", []), {}),
    (("not bytes", "godot3"), {}),
    ((None, "godot3"), {}),
    ((), {}),  # too few arguments
    ((b"\x00\x00\x00\x00", "godot3", 5), {}),  # too many
    ((b"\x00\x00\x00\x00",), {"dialect": "godot3", "nonsense": 1}),
]

DUMPS_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((MESSAGE, "godot3"), {}),
    ((MESSAGE,), {}),
    ((MESSAGE, gf.get_dialect("godot4")), {}),
    ((MESSAGE, "godot3"), {"max_depth": 0}),
    ((t.Object("Node", {}), "godot3"), {"full_objects": True}),
    ((object(), "godot3"), {}),  # not a Variant
    ((MESSAGE, "godot9"), {}),
    ((MESSAGE, Unhashable()), {}),
    ((MESSAGE, HashKeyError()), {}),
    ((), {}),
    ((MESSAGE, "godot3", 1), {}),
]


@needs_front
def test_loads_and_dumps_are_fronts_that_look_like_the_functions() -> None:
    for front, slow in ((gf.loads, api.loads.__wrapped__), (gf.dumps, api.dumps.__wrapped__)):
        assert isinstance(front, _cfront.Front) and inspect.isfunction(slow)
        assert front.__name__ == front.__qualname__ == slow.__name__
        assert front.__module__ == "godot_formats.api" and front.__doc__ == slow.__doc__
        assert inspect.signature(front) == inspect.signature(slow)
        assert inspect.isroutine(front)  # so help() shows its signature and doc
        assert pickle.loads(pickle.dumps(front)) is front
        assert copy.copy(front) is front and copy.deepcopy(front) is front
        assert repr(front) == f"<function {slow.__name__} (compiled front)>"


@needs_front
def test_a_front_binds_shares_its_table_and_is_weakly_referenced() -> None:
    """As the function: bound to an instance when it is a class attribute, weakly referenced (signal
    libraries keep weak receivers); and the table it answers from is the Python function's own."""
    import weakref

    class Holder:
        encode = gf.dumps
        decode = gf.loads

    h = Holder()
    assert _outcome(h.encode) == _outcome(gf.dumps.__wrapped__, h)
    assert Holder.decode is gf.loads
    assert weakref.ref(gf.loads)() is gf.loads
    api._LOADS["probe"] = lambda data: ("probe", data)  # the dict the front holds: api's own
    try:
        assert gf.loads(b"x", "probe") == ("probe", b"x")
    finally:
        del api._LOADS["probe"]


@needs_front
@pytest.mark.parametrize("args, kwargs", LOADS_CALLS)
def test_every_loads_call_gives_what_the_python_function_gives(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for _ in range(2):  # the second call finds its codec in the table
        assert _outcome(gf.loads, *args, **kwargs) == _outcome(gf.loads.__wrapped__, *args, **kwargs)


@needs_front
@pytest.mark.parametrize("args, kwargs", DUMPS_CALLS)
def test_every_dumps_call_gives_what_the_python_function_gives(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for _ in range(2):
        assert _outcome(gf.dumps, *args, **kwargs) == _outcome(gf.dumps.__wrapped__, *args, **kwargs)


def test_the_front_answers_from_the_table_and_passes_the_rest_on() -> None:
    """Front alone: the table's codec for a call it holds, the Python function for every other."""
    seen: list[tuple[Any, ...]] = []

    def slow(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs))
        return "slow"

    front = _cfront.Front({"a": lambda data: ("a", data), "default": lambda data: ("default", data)}, slow, "default")
    assert front(b"x", "a") == ("a", b"x")
    assert front(b"x") == ("default", b"x")
    assert seen == []
    assert front(b"x", "b") == "slow"
    assert front(b"x", dialect="a") == "slow"  # keywords: the Python function decides
    assert front(b"x", "a", 1) == "slow"
    assert front() == "slow"
    assert front(b"x", Unhashable()) == "slow"  # not hashable: the Python function says so
    assert seen == [((b"x", "b"), {}), ((b"x",), {"dialect": "a"}), ((b"x", "a", 1), {}), ((), {}),
                    ((b"x", seen[4][0][1]), {})]
    with pytest.raises(RuntimeError, match="no hash today"):  # not the lookup's to swallow, as in Python
        front(b"x", HashFails())
    with pytest.raises(TypeError):
        _cfront.Front([], slow, "d")
    with pytest.raises(TypeError):
        _cfront.Front({}, "not callable", "d")


def test_a_codec_that_empties_the_table_while_it_runs() -> None:
    """The codec is held for its call: the table may start again under it (a full table is
    cleared), or lose it to another thread."""
    table: dict[str, Any] = {}

    class Codec:
        def __call__(self, data: bytes) -> bytes:
            table.clear()
            return data * 2

    table["x"] = Codec().__call__
    front = _cfront.Front(table, lambda *a, **k: "slow", "x")
    assert front(b"ab") == b"abab"
    assert table == {} and front(b"ab") == "slow"


def test_the_front_is_the_function_when_the_compiled_core_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(data: bytes) -> bytes:
        return data

    monkeypatch.setattr(accel, "_cfront", None)
    assert accel.front({}, slow, "godot4") is slow
    script = ("import inspect, godot_formats as gf; "
              "print(gf.backend, inspect.isfunction(gf.loads), inspect.isfunction(gf.dumps))")
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ, "GODOT_FORMATS_PURE": "1"},
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["python", "True", "True"]


@needs_front
def test_threads_calling_while_the_table_starts_again() -> None:
    """Many threads decode while others fill the table past its bound (it is cleared and
    filled again under them): every call still gives the value."""
    data = gf.dumps(MESSAGE, "godot3")
    dialects = [gf.get_dialect(n) for n in gf.dialect_names()]
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(2000):
                assert gf.loads(data, "godot3") == MESSAGE
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def churner() -> None:
        try:
            for i in range(600):  # options that are new each time: each adds a table entry
                gf.loads(b"\x00\x00\x00\x00", dialects[i % len(dialects)], max_depth=100 + i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=churner)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
