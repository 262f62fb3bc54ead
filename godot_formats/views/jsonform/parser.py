"""JSON text -> JSON form (``loads_json``): exact numbers, no NaN constants, any depth."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Callable

from ...core.codec import DEFAULT_MAX_DEPTH
from ...core.errors import JSONFormatError
from .numbers import _MAX_INT_DIGITS
from .reader import from_json


def _json_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise JSONFormatError(f"a JSON integer of {len(text)} digits (at most {_MAX_INT_DIGITS})")
    return int(text)


def _reject_constant(name: str) -> Any:
    raise JSONFormatError(f"{name} is not JSON; write \"f:{name.lower().replace('infinity', 'inf')}\" "
                          "or, inside args, the string \"inf\", \"-inf\" or \"nan\"")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_json_int)
_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_CONSTANTS = (("null", None), ("true", True), ("false", False))
_REJECTED = ("NaN", "Infinity", "-Infinity")


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object key at ``pos`` (whitespace skipped) and the position after its colon and whitespace."""
    if text[pos:pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = _scanstring(text, pos + 1, True)
    pos = _JSON_WS.match(text, pos).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _JSON_WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def _scalar_at(text: str, pos: int) -> tuple[Any, int]:
    """The string, constant or number at ``pos`` and the position after it."""
    if text[pos:pos + 1] == '"':
        return _scanstring(text, pos + 1, True)
    for word, constant in _CONSTANTS:
        if text.startswith(word, pos):
            return constant, pos + len(word)
    for word in _REJECTED:
        if text.startswith(word, pos):
            _reject_constant(word)
    m = _JSON_NUMBER.match(text, pos)
    if m is None:
        raise json.JSONDecodeError("Expecting value", text, pos)
    integer, frac, exp = m.groups()
    value = float(integer + (frac or "") + (exp or "")) if frac or exp else _json_int(integer)
    return value, m.end()


def _hand_up(stack: list[Any], keys: list[Any], value: Any, text: str, pos: int) -> tuple[Any, int]:
    """Put ``value`` in the innermost open container, closing each container that ends after it.

    Returns where the next value starts or, once the outermost container is closed
    (``stack`` empty), the document and the position after it.
    """
    ws = _JSON_WS.match
    while stack:
        key = keys[-1]
        if key is None:
            stack[-1].append(value)
        else:
            stack[-1][key] = value
        pos = ws(text, pos).end()  # type: ignore[union-attr]
        c = text[pos:pos + 1]
        if c == ",":
            pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
            if key is not None:
                keys[-1], pos = _key(text, pos)
            return value, pos
        if c != ("]" if key is None else "}"):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        value = stack.pop()
        keys.pop()
        pos += 1
    return value, pos


def raw_decode_deep(text: str, pos: int) -> tuple[Any, int]:
    """One JSON document at ``pos``, as ``json.JSONDecoder.raw_decode`` reads it, with an explicit stack.

    The json module recurses once per nesting level; this takes any depth.
    """
    stack: list[Any] = []  # the open lists and dicts
    keys: list[Any] = []  # the key each open dict is reading a value for (None for lists)
    ws = _JSON_WS.match
    while True:
        # A value starts at pos.
        c = text[pos:pos + 1]
        value: Any
        if c == "{" or c == "[":
            pos = ws(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos:pos + 1] != ("}" if c == "{" else "]"):
                key = None
                if c == "{":
                    key, pos = _key(text, pos)
                stack.append({} if c == "{" else [])
                keys.append(key)
                continue
            value, pos = ({} if c == "{" else []), pos + 1
        else:
            value, pos = _scalar_at(text, pos)
        value, pos = _hand_up(stack, keys, value, text, pos)
        if not stack:
            return value, pos


def _parse_documents(text: str) -> Iterator[tuple[int, Any]]:
    pos, end = 0, len(text)
    ws = re.compile(r"\s*")
    pos = ws.match(text, pos).end()  # type: ignore[union-attr]
    while pos < end:
        try:
            try:
                obj, new = _DECODER.raw_decode(text, pos)
            except RecursionError:
                # Deeper than the interpreter lets the json module go: read it without recursion.
                obj, new = raw_decode_deep(text, pos)
        except json.JSONDecodeError as e:
            raise JSONFormatError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        yield pos, obj
        pos = ws.match(text, new).end()  # type: ignore[union-attr]


def loads_form(text: str | bytes) -> Any:
    """The JSON form in a text of one JSON document (dicts, lists, strings, numbers ...), read
    exactly as :func:`loads_json` reads it (numbers exact, no NaN constants, any depth) but not
    turned into a value: the reading of what :func:`~.printer.dumps_form` writes."""
    docs = list(_parse_documents(_decoded(text)))
    if len(docs) != 1:
        raise JSONFormatError(f"{len(docs)} JSON documents where one was expected" if docs else
                              "no JSON value in the text")
    return docs[0][1]


def _decoded(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray)):
        try:
            return bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise JSONFormatError(f"JSON text is not UTF-8 (byte {e.start})") from None
    return text


def loads_json_documents(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> list[Any]:
    """Every value of a text holding one or more JSON documents one after another.

    ``godot-formats dump --json`` writes one document per ``store_var`` frame.
    """
    docs = list(_parse_documents(_decoded(text)))
    if not docs:
        raise JSONFormatError("no JSON value in the text")
    return [from_json(obj, max_depth=max_depth) for _, obj in docs]


def loads_json(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The value of JSON text written by :func:`dumps_json` or by ``JSON.stringify(JSON.from_native(v))``."""
    values = loads_json_documents(text, max_depth=max_depth)
    if len(values) > 1:
        raise JSONFormatError(f"{len(values)} JSON documents where one was expected (use loads_json_documents)")
    return values[0]
