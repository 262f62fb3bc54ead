"""Dictionary key identity: when two keys are one key, the way each engine decides.

Python's ``dict`` cannot hold Godot's keys as they are: it merges ``1``,
``1.0`` and ``true``, refuses Arrays and Dictionaries, and keeps two NaNs
apart.  :func:`godot_key` maps a value to an *identity*, a ``bytes`` object
that is equal for two keys exactly when the engine treats them as one key.

Three properties matter for untrusted data, and each has one place here:

* **Linear.**  A container's identity is a 20-byte BLAKE2b digest of its
  children's identities, computed once per container: a ``memo`` (id of the
  container -> identity) carries the digests of containers already seen, so a
  key that nests another key's subtree does not walk it again.  The walk uses
  an explicit stack, never Python's.
* **No hash flooding.**  Identities are ``bytes``, which Python hashes with
  SipHash and a per-process random key, so an attacker cannot pick keys that
  collide in the ``dict`` that holds them (a tuple of numbers hashes with
  fixed arithmetic, and colliding floats multiply inside tuples).
* **The engine's equality.**  Measured with Godot 3.2.3 and 4.6 (see
  ``tests/core/test_dictionary_keys.py``), the engines disagree about NaN and about
  Dictionaries inside keys, so the rules are data (:class:`KeyRules`), one
  row per engine, carried by each dialect:

  ============================== ============== ==============
  inside a key                    Godot 3        Godot 4
  ============================== ============== ==============
  NaN as the key, or in a vector  one key        one key
  NaN as an Array element         one key        apart
  NaN as a Dictionary value       apart          apart
  NaN as a Dictionary key         apart          one key
  NaN in a packed float array     apart          one key
  a Dictionary                    by identity    by content
  ============================== ============== ==============

  "apart" means the key equals no other key (only itself: the identity of
  such a key is made from ``id()`` of the key object, which the Dictionary
  holding it keeps alive).  A Godot 3 Dictionary compares by reference, so a
  key that is or holds one is equal only to the same object.  Objects compare
  by reference in both engines, and so does a container that contains itself.

This module sits below the value classes (:mod:`godot_formats.types`) and imports none of them:
a class says what kind of key it is by its ``_key_kind`` (one of the ``KIND_*`` names below), and
registers with :func:`holds_no_float` when none of its values holds a float.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from itertools import chain
from operator import ne
from typing import Any

import attrs

__all__ = ["python_keys_agree", "KeyRules", "GODOT3_KEYS", "GODOT4_KEYS", "SAME_CONTENT", "godot_key", "same_value",
           "has_nan", "holds_no_float", "KIND_TEXT", "KIND_COMPONENTS", "KIND_STRINGS", "KIND_PACKED", "KIND_NODE_PATH",
           "KIND_OBJECT", "KIND_TYPED_ARRAY", "KIND_TYPED_DICTIONARY"]

# A value class's ``_key_kind``: how its values are told apart as keys.
#: Text, as a ``str`` (StringName: Godot 4 takes it as the String of the same text).
KIND_TEXT = "text"
#: Numbers in a fixed order (vectors, Color, Quaternion: the Components tuples).
KIND_COMPONENTS = "components"
#: A PackedStringArray: not an Array of the same strings, which Godot keeps apart.
KIND_STRINGS = "strings"
#: A packed array of numbers (its ``data`` is an ``array.array``).
KIND_PACKED = "packed"
#: A NodePath (``names``, ``subnames``, ``absolute``).
KIND_NODE_PATH = "node_path"
#: An Object (``class_name``, ``properties``): a container, by reference in both engines.
KIND_OBJECT = "object"
#: A typed Array (``element_type``) and a typed Dictionary (``key_type``, ``value_type``).
KIND_TYPED_ARRAY = "typed_array"
KIND_TYPED_DICTIONARY = "typed_dictionary"


def _kind(value: Any) -> str | None:
    return getattr(type(value), "_key_kind", None)


@attrs.frozen
class KeyRules:
    """How one engine compares Dictionary keys (the table in the module docstring).

    ``nan_apart`` names the places where a NaN makes its key equal to no other:
    ``"array"`` (an Array element), ``"dict_key"``, ``"dict_value"`` (a
    Dictionary's key or value, an Object property) and ``"packed"`` (an element
    of a packed float or vector array).  ``dict_by_reference``: a Dictionary in a
    key compares by reference, as in Godot 3.
    """

    name: str
    nan_apart: frozenset[str]
    dict_by_reference: bool
    objects_by_reference: bool = True


GODOT3_KEYS = KeyRules("godot3", frozenset({"dict_key", "dict_value", "packed"}), True)
GODOT4_KEYS = KeyRules("godot4", frozenset({"array", "dict_value"}), False)
#: Not an engine's rules: two values are one when their content is, NaN equal to NaN and
#: Objects compared by content (for asking "is this the same data?").
SAME_CONTENT = KeyRules("content", frozenset(), False, False)

Memo = dict[int, tuple[Any, bytes]]

_pack_d = struct.Struct("<d").pack
_NAN = b"fnan"
_ZERO = b"f" + _pack_d(0.0)


_blake2b: Any = None


def _digest() -> Any:
    """A fresh BLAKE2b hasher; hashlib is imported on the first container key (it loads OpenSSL:
    a tenth of ``import godot_formats``, which a program that never keys by a container skips)."""
    global _blake2b
    if _blake2b is None:
        from hashlib import blake2b as _blake2b
    return _blake2b(digest_size=20)


def _float_id(x: float) -> bytes:
    if x != x:
        return _NAN
    return b"f" + _pack_d(x + 0.0)  # -0.0 and 0.0 are one key in both engines


def _number(x: Any) -> str:
    """A component in canonical text: NaN is one value, -0.0 is 0.0; ints in hex (no digit limit)."""
    if type(x) is float:
        return "nan" if x != x else (x + 0.0).hex()
    if isinstance(x, int):
        return format(x, "x")
    return repr(x)


def _parts(tag: bytes, strings: Any) -> bytes:
    """``tag`` and length-prefixed UTF-8 strings: unambiguous whatever the strings hold."""
    out = bytearray(tag)
    for s in strings:
        raw = str(s).encode("utf-8", "surrogatepass")
        out += len(raw).to_bytes(4, "little")
        out += raw
    return bytes(out)


def _math_id(value: Any) -> bytes:
    """A vector, Color, Quaternion or attrs math type: its components, flattened (at most three levels)."""
    numbers: list[str] = []
    pending: list[Any] = [value]
    while pending:
        v = pending.pop()
        if isinstance(v, tuple):
            pending.extend(reversed(v))
        elif attrs.has(type(v)):
            pending.extend(reversed(attrs.astuple(v, recurse=False)))
        else:
            numbers.append(_number(v))
    return _parts(b"m" + type(value).__name__.encode() + b":", numbers)


def has_nan(value: Any) -> bool:
    """Whether a math value (or a float) has a NaN component."""
    if type(value) is float:
        return value != value
    if _kind(value) == KIND_COMPONENTS:
        return any(c != c for c in value)
    if attrs.has(type(value)):
        return any(has_nan(c) for c in attrs.astuple(value, recurse=False))
    return False


def _packed_id(value: Any, rules: KeyRules, owner: Any) -> bytes:
    data = value.data
    tag = b"P" + type(value).__name__.encode() + b":"
    if data.typecode in "fd" and data != data:  # array.array compares element by element: NaN != NaN
        if "packed" in rules.nan_apart:
            return _by_reference(owner)
        data = type(data)(data.typecode, (0.0 if x != x else x for x in data))
        return tag + b"nan:" + bytes(data.tobytes()) + bytes(x != x for x in value.data)
    return tag + bytes(data.tobytes())


def _by_reference(owner: Any) -> bytes:
    """The identity of a key equal to nothing but itself."""
    return b"r" + id(owner).to_bytes(8, "little", signed=True)


_CONTAINER = object()
_APART = object()


def _scalar_id(value: Any, context: str, rules: KeyRules, owner: Any) -> Any:
    """The identity of a non-container; :data:`_CONTAINER` for one to walk; :data:`_APART` for a NaN that
    makes its key equal to nothing else."""
    tp = type(value)
    kind = getattr(tp, "_key_kind", None)
    if tp is str or kind == KIND_TEXT:
        return b"s" + value.encode("utf-8", "surrogatepass")
    if tp is int:
        return b"i" + format(value, "x").encode()
    if tp is float:
        if value != value and context in rules.nan_apart:
            return _APART
        return _float_id(value)
    if tp is bool:
        return b"b1" if value else b"b0"
    if value is None:
        return b"n"
    if kind == KIND_STRINGS:  # not an Array of the same strings: Godot keeps them apart
        return _parts(b"S", value)
    if kind == KIND_COMPONENTS:
        return _math_id(value)
    if isinstance(value, (list, tuple, Mapping)) or kind == KIND_OBJECT:
        return _CONTAINER
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return b"B" + bytes(value)
        except ValueError:  # a released memoryview: no bytes to compare, equal only to itself
            return _APART
    if kind == KIND_PACKED:
        ident = _packed_id(value, rules, owner)
        return _APART if ident.startswith(b"r") else ident
    if kind == KIND_NODE_PATH:
        return _parts(b"N" + (b"/" if value.absolute else b"") + str(len(value.names)).encode() + b":",
                      value.names + value.subnames)
    if attrs.has(tp):  # math types, RID, Signal, Callable, EncodedObjectAsID
        return _math_id(value)
    return _parts(b"?" + tp.__qualname__.encode() + b":", (repr(value),))


def _children(value: Any) -> Iterator[tuple[Any, str]]:
    """A container's children in order, each with where it sits (its NaN context)."""
    if _kind(value) == KIND_OBJECT:
        return chain.from_iterable(((k, "dict_key"), (v, "dict_value")) for k, v in value.properties.items())
    if isinstance(value, Mapping):
        return chain.from_iterable(((k, "dict_key"), (v, "dict_value")) for k, v in value.items())
    return ((v, "array") for v in value)


def _opening(value: Any) -> bytes:
    kind = _kind(value)
    if kind == KIND_OBJECT:
        return _parts(b"o", (value.class_name,))
    if kind == KIND_TYPED_DICTIONARY:
        return b"d" + _parts(b"T", (repr(value.key_type), repr(value.value_type)))
    if isinstance(value, Mapping):
        return b"d"
    if kind == KIND_TYPED_ARRAY:
        return _parts(b"a", (repr(value.element_type),))
    return b"a"


def godot_key(value: Any, rules: KeyRules = GODOT4_KEYS, memo: Memo | None = None) -> bytes:
    """The identity of ``value`` as a Dictionary key under ``rules``.

    ``memo`` (id -> (container, identity)) lets the caller share container
    identities between calls while the containers are not changed: a decoder
    passes one per ``decode`` so that nested keys cost their size once.
    """
    ident = _scalar_id(value, "key", rules, value)
    if ident is not _CONTAINER:
        return _by_reference(value) if ident is _APART else ident
    if memo is None:
        memo = {}
    return _container_id(value, rules, memo)


def _container_id(root: Any, rules: KeyRules, memo: Memo) -> bytes:
    # Each frame: the container, its digest so far, its children, whether a NaN or a
    # by-reference part makes it equal to nothing but itself.
    def open_frame(c: Any) -> list[Any] | bytes:
        known = memo.get(id(c))
        if known is not None:
            return known[1]
        if (rules.objects_by_reference and _kind(c) == KIND_OBJECT) or (
                rules.dict_by_reference and isinstance(c, Mapping)):
            ident = _by_reference(c)
            memo[id(c)] = (c, ident)
            return ident
        h = _digest()
        h.update(_opening(c))
        return [c, h, _children(c), False]

    first = open_frame(root)
    if isinstance(first, bytes):
        return first
    stack: list[list[Any]] = [first]
    open_ids = {id(root)}  # a container met again inside itself: equal only to itself
    while True:
        frame = stack[-1]
        container, h, children = frame[0], frame[1], frame[2]
        for child, context in children:
            ident = _scalar_id(child, context, rules, container)
            if ident is _CONTAINER:
                if id(child) in open_ids:
                    ident = _APART
                else:
                    opened = open_frame(child)
                    if isinstance(opened, list):
                        stack.append(opened)
                        open_ids.add(id(child))
                        break
                    ident = opened
            if ident is _APART or ident[:1] == b"r":
                frame[3] = True
                ident = b"r"
            h.update(len(ident).to_bytes(4, "little"))
            h.update(ident)
        else:
            stack.pop()
            open_ids.discard(id(container))
            done = _by_reference(container) if frame[3] else b"c" + h.digest()
            memo[id(container)] = (container, done)
            if not stack:
                return done
            parent = stack[-1]
            if frame[3]:
                parent[3] = True
                done = b"r"
            parent[1].update(len(done).to_bytes(4, "little"))
            parent[1].update(done)


def same_value(a: Any, b: Any) -> bool:
    """Whether two values hold the same data (NaN equals NaN), at any depth, without recursion."""
    memo: Memo = {}
    return godot_key(a, SAME_CONTENT, memo) == godot_key(b, SAME_CONTENT, memo)


#: Key types that hold no float: a dict keyed only by these needs no NaN check.
_NAN_FREE: set[type] = {str, int, bool, type(None), bytes}


def holds_no_float(*classes: type) -> None:
    """Register value classes none of whose values holds a float (StringName, NodePath, RID ...)."""
    _NAN_FREE.update(classes)


def python_keys_agree(d: dict[Any, Any]) -> bool:
    """Whether a ``dict`` that Python built holds no two keys that the engines take as one.

    Python already merges what both engines merge (``-0.0`` and ``0.0``) and
    parts what they part, except NaN, which is one key to the engines, alone or
    in a vector.  Run on every decoded ``dict``, so the common case (no float
    or vector key) is one pass of ``type``.
    """
    kinds = set(map(type, d))
    nan_free = _NAN_FREE
    if kinds <= nan_free:
        return True
    if float in kinds and any(map(ne, d, d)):  # only NaN differs from itself
        return False
    return not any(has_nan(k) for k in d if type(k) not in nan_free and type(k) is not float)
