"""JSON form -> JSON text (``dumps_json``): numbers exact, long lists folded, any depth."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .writer import to_json

_SURROGATE = re.compile("[\ud800-\udfff]")
_WIDTH = 100
#: Columns of indentation :func:`dumps_json` never goes past: a container that
#: would be indented deeper (JSON nesting level 32 with the default indent of 2)
#: is written on one line, however long.  Each line then carries at most this
#: much indentation, so the text stays within a constant factor of the value's
#: bytes whatever the nesting (docs/json.md, "Layout").
MAX_INDENT_COLUMNS = 64


_encode_string = json.encoder.encode_basestring


def _escape_surrogates(text: str) -> str:
    # Godot 3 strings may hold lone surrogates, which UTF-8 cannot: keep them escaped.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


def _scalar_json(x: Any) -> str:
    """One JSON scalar; ``to_json`` never produces a non-finite float."""
    if x is None:
        return "null"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if type(x) is int:
        return str(x)
    if type(x) is float:
        return repr(x)
    return _escape_surrogates(_encode_string(x))


def _tokens(node: list[Any] | dict[str, Any], comma: str = ", ", colon: str = ": ") -> Iterator[Any]:
    """The one-line text of a container, piece by piece; child containers are yielded as they are."""
    if isinstance(node, list):
        yield "["
        for i, x in enumerate(node):
            if i:
                yield comma
            yield x if isinstance(x, (list, dict)) else _scalar_json(x)
        yield "]"
        return
    yield "{"
    for i, (k, v) in enumerate(node.items()):
        if i:
            yield comma
        yield _scalar_json(k) + colon
        yield v if isinstance(v, (list, dict)) else _scalar_json(v)
    yield "}"


def _inline(node: Any, limit: int) -> str | None:
    """``node`` on one line if that takes at most ``limit`` characters, else None (found lazily)."""
    if not isinstance(node, (list, dict)):
        return _scalar_json(node)
    parts: list[str] = []
    size = 0
    stack = [_tokens(node)]
    while stack:
        for piece in stack[-1]:
            if not isinstance(piece, str):
                stack.append(_tokens(piece))
                break
            size += len(piece)
            if size > limit:
                return None
            parts.append(piece)
        else:
            stack.pop()
    return "".join(parts)


def _is_flat(node: list[Any] | dict[str, Any]) -> bool:
    children = node if isinstance(node, list) else node.values()
    return not any(isinstance(x, (list, dict)) for x in children)


def _one_line(root: Any, comma: str, colon: str) -> str:
    """``root`` on one line, however long, without recursion.

    A container without child containers (most of the bytes of a large value:
    ``args`` lists, packed arrays) is written by the json module in one call;
    nesting is walked here with an explicit stack.
    """
    if not isinstance(root, (list, dict)):
        return _scalar_json(root)
    flat = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False,
                            separators=(comma, colon)).encode
    if _is_flat(root):
        return _escape_surrogates(flat(root))
    parts: list[str] = []
    stack = [_tokens(root, comma, colon)]
    while stack:
        for piece in stack[-1]:
            if isinstance(piece, str):
                parts.append(piece)
            elif _is_flat(piece):
                parts.append(_escape_surrogates(flat(piece)))
            else:
                stack.append(_tokens(piece, comma, colon))
                break
        else:
            stack.pop()
    return "".join(parts)


class _Token:
    """Closing text in the work list of :func:`_pretty`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _is_number_list(node: Any) -> bool:
    return isinstance(node, list) and len(node) > 0 and all(
        type(x) in (int, float) or x in ("inf", "-inf", "nan") for x in node)


def _pretty(root: Any, indent: int) -> str:
    """JSON laid out for editing: small containers on one line, number lists wrapped,
    Dictionary args and Object props one key, value pair per line.

    A container whose children would be indented past :data:`MAX_INDENT_COLUMNS`
    is written on one line instead, so no line carries more indentation than that.
    """
    out: list[str] = []
    # Work items: (node, level, prefix, suffix, pairs)
    todo: list[tuple[Any, int, str, str, bool]] = [(root, 0, "", "", False)]
    while todo:
        node, level, prefix, suffix, pairs = todo.pop()
        if isinstance(node, _Token):
            out.append(" " * (indent * level) + node.text + suffix)
            continue
        pad = " " * (indent * level)
        room = _WIDTH - len(pad) - len(prefix) - len(suffix)
        flat = _inline(node, max(room, 20)) if isinstance(node, (list, dict)) else _scalar_json(node)
        if flat is None and indent * (level + 1) > MAX_INDENT_COLUMNS:
            flat = _one_line(node, ", ", ": ")
        if flat is not None:
            out.append(pad + prefix + flat + suffix)
            continue
        if _is_number_list(node):
            out.append(pad + prefix + "[")
            inner = " " * (indent * (level + 1))
            line = ""
            for i, x in enumerate(node):
                text = _scalar_json(x) + ("," if i < len(node) - 1 else "")
                if line and len(inner) + len(line) + 1 + len(text) > _WIDTH:
                    out.append(inner + line)
                    line = text
                else:
                    line = f"{line} {text}" if line else text
            out.append(inner + line)
            out.append(pad + "]" + suffix)
            continue
        if isinstance(node, dict):
            out.append(pad + prefix + "{")
            todo.append((_Token("}"), level, "", suffix, False))
            entries = list(node.items())
            for i in range(len(entries) - 1, -1, -1):
                key, child = entries[i]
                comma = "," if i < len(entries) - 1 else ""
                by_pairs = key in ("args", "props") and (node.get("type") == "Dictionary" or key == "props")
                todo.append((child, level + 1, _scalar_json(key) + ": ", comma, by_pairs))
            continue
        out.append(pad + prefix + "[")
        todo.append((_Token("]"), level, "", suffix, False))
        n = len(node)
        for i in range(n - 1, -1, -1):
            comma = "," if i < n - 1 else ""
            if pairs and i % 2 == 1:
                key_text = _inline(node[i - 1], _WIDTH // 2)
                if key_text is not None:
                    todo.append((node[i], level + 1, key_text + ", ", comma, False))
                    continue
            if pairs and i % 2 == 0 and i + 1 < n and _inline(node[i], _WIDTH // 2) is not None:
                continue  # written with its value
            todo.append((node[i], level + 1, "", comma, False))
    return "\n".join(out)


def dumps_json(value: Any, indent: int | None = 2, *, packed_base64: bool = False) -> str:
    """``value`` as JSON text; ``indent=None`` writes one compact line.

    With an indent, small containers stay on one line and number lists are
    wrapped, so a save file stays readable and short enough to edit; no line
    is indented past :data:`MAX_INDENT_COLUMNS` (deeper containers are written
    on one line).  Neither form recurses, whatever the nesting.
    """
    return dumps_form(to_json(value, packed_base64=packed_base64), indent)


def dumps_form(obj: Any, indent: int | None = 2) -> str:
    """JSON text of ``obj``, a JSON form already made (dicts, lists, strings, numbers, booleans and
    None, such as :func:`to_json` returns, or a document holding such forms), laid out as
    :func:`dumps_json` lays out a value.  ``json.dumps`` recurses once per nesting level and stops
    near 1000; this takes any depth."""
    if indent is None:
        return _one_line(obj, ",", ":")
    return _pretty(obj, indent)
