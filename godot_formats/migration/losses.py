"""How a conversion reports what it changed: the policies that decide what a loss does, and the
path each loss names (``["player"]["inventory"][3]``, ``.scancode``, ``<key Vector2i(1, 2)>``).

The records themselves (:class:`Loss`, :class:`Note`) are the core's
(:mod:`godot_formats.core.changes`), since the core's ``ConversionError`` carries them.
"""

from __future__ import annotations

import re
from typing import Any

from ..core import types as t
from ..core.changes import Loss, Note

__all__ = ["Loss", "Note", "POLICIES", "check_policy", "format_path_key", "render", "PATH_HEAD", "PATH_TAIL"]

#: ``strict`` raises on any loss; ``lossy`` applies the downgrades and reports them.
POLICIES = ("strict", "lossy")


def check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")


#: An unpaired surrogate: Godot 3 stored them in strings, Godot 4 refuses them.
SURROGATE = re.compile("[\ud800-\udfff]")


def quote(text: str) -> str:
    """A Godot-style double-quoted string literal (surrogates shown as escapes)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out) + '"'


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def format_path_key(key: Any) -> str:
    """How a dictionary key is written inside a loss path: ``"name"``, ``3``, ``&"sn"``, ``Vector2(1.0, 2.0)``."""
    if isinstance(key, t.StringName):
        return "&" + quote(short(key))
    if isinstance(key, str):
        return quote(short(key))
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return t.value_repr(key, 57)
    if isinstance(key, t.NodePath):
        return "^" + quote(short(str(key)))
    return t.value_repr(key, 57)


#: Where a value sits, built lazily: "" (the root) or (parent, kind, key); turned into
#: text (``["a"][3].prop``) only when a loss is recorded.
ValuePath = Any


#: A loss path names at most this many levels from the root and from the leaf; the ones
#: between are counted, not shown (so a report stays linear in the input, however deep).
PATH_HEAD, PATH_TAIL = 4, 12


#: What :func:`render` knows of a path node it walked: the node (kept alive, so its id stays
#: its own), its depth and its first PATH_HEAD steps.
Known = dict[int, tuple[Any, int, tuple[tuple[str, Any], ...]]]


def render(path: ValuePath, known: Known | None = None) -> str:
    """The path as text: its first PATH_HEAD and last PATH_TAIL steps.  With ``known`` (one per
    conversion), each node is walked once in all: the losses of N values under a path M deep
    cost N + M, not N x M."""
    known = {} if known is None else known
    tail: list[tuple[Any, str, Any]] = []
    node = path
    while node and id(node) not in known:
        parent, kind, key = node
        tail.append((node, kind, key))
        node = parent
    depth, head = (known[id(node)][1], known[id(node)][2]) if node else (0, ())
    for walked, kind, key in reversed(tail):  # root side first
        depth += 1
        if len(head) < PATH_HEAD:
            head = (*head, (kind, key))
        known[id(walked)] = (walked, depth, head)
    last = _last_steps(path, min(PATH_TAIL, max(depth - len(head), 0)))
    if depth > PATH_HEAD + PATH_TAIL:
        hidden = depth - PATH_HEAD - PATH_TAIL
        shown = [*head, ("...", f"...({hidden} levels)..."), *last]
    else:
        shown = [*head, *last]
    parts: list[str] = []
    for kind, key in shown:
        if kind == "[]":
            parts.append(f"[{key}]")
        elif kind == "[key]":
            parts.append(f"[{format_path_key(key)}]")
        elif kind == "<key>":
            parts.append(f"<key {format_path_key(key)}>")
        elif kind == ".":
            parts.append(f".{short(key)}")
        else:
            parts.append(key)
    return "".join(parts)


def _last_steps(path: ValuePath, n: int) -> list[tuple[str, Any]]:
    """The ``n`` steps nearest the end of ``path``, root side first."""
    steps: list[tuple[str, Any]] = []
    while path and len(steps) < n:
        path, kind, key = path
        steps.append((kind, key))
    steps.reverse()
    return steps
