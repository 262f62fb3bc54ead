"""ConfigFile text (``settings.cfg``, ``override.cfg``, ``project.godot``), read as the engines'
``ConfigFile::_parse`` reads it (``VariantParser::parse_tag_assign_eof``): ``[section]`` lines and
``key=value`` assignments, blanks and ``;`` comments between them, each value in Godot's text form.

Read here so that the scanner can look at every value: ``ConfigFile.load`` makes the objects an
``Object(...)`` value describes (godot#80562: an Object with a ``script`` runs its ``_init``) and
loads every ``Resource("path")`` it names, so a settings file is as able to run code as a resource
save.  The values are parsed, never made: a ``Resource("path")`` becomes an :class:`~.model.ExtResource`.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.errors import ResourceFormatError, TextDecodeError
from ..views.text.parser import SKIPPED, read_value
from .model import ExtResource

__all__ = ["read_config_text", "looks_like_config_text"]

_SKIP = re.compile(SKIPPED)
_KEY_END = re.compile(r"[=\n]")


def _resolver(kind: str, args: tuple[Any, ...]) -> Any:
    if kind != "Resource":
        raise ValueError(f"{kind}() names a resource of a .tres file: a ConfigFile has none")
    return ExtResource("Resource", str(args[-1]))


def looks_like_config_text(data: bytes) -> bool:
    """Whether ``data`` begins as ConfigFile text does: a ``[section]`` or a ``key=`` after blanks and comments."""
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:
            return False
        text = head[:e.start].decode("utf-8")
    at = _SKIP.match(text).end()  # type: ignore[union-attr]
    if text.startswith("[", at):
        return not text.startswith(("[gd_resource", "[gd_scene"), at)
    end = _KEY_END.search(text, at)
    return end is not None and text[end.start()] == "=" and end.start() > at


def read_config_text(data: bytes) -> list[tuple[str, str, Any]]:
    """Every ``(section, key, value)`` of the file, in file order (keys before the first section are
    in section ``""``).  Values in Godot 4's text form are read, and Godot 3's where Godot 4's
    parser refuses one (``PoolIntArray(...)``, ``Vector2( 1, 2 )`` ...).  Anything else raises
    :class:`~godot_formats.core.errors.ResourceFormatError` naming the line."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResourceFormatError(e.start, "a ConfigFile is UTF-8 text, and this is not", "") from None
    text = text[1:] if text.startswith("\ufeff") else text
    entries: list[tuple[str, str, Any]] = []
    section, pos = "", 0
    while True:
        pos = _SKIP.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            return entries
        if text[pos] == "[":
            end = text.find("]", pos)
            if end < 0:
                raise ResourceFormatError(pos, "a [section] line without its ']'", text)
            section, pos = text[pos + 1:end].strip(), end + 1
            continue
        key, pos = _key(text, pos)
        value, pos = _value(text, pos)
        entries.append((section, key, value))


def _key(text: str, pos: int) -> tuple[str, int]:
    """The key at ``pos`` (quoted, or every character up to '='), and where its value starts."""
    if text[pos] == '"':
        try:
            key, end = read_value(text, pos)
        except TextDecodeError as e:
            raise ResourceFormatError(e.offset, f"a quoted key: {e.reason}", text) from None
        key, pos = str(key), _SKIP.match(text, end).end()  # type: ignore[union-attr]
        if not text.startswith("=", pos):
            raise ResourceFormatError(pos, "expected '=' after the quoted key", text)
        return key, pos + 1
    m = _KEY_END.search(text, pos)
    if m is None or text[m.start()] != "=":
        raise ResourceFormatError(pos, "expected 'key=value' or a [section]", text)
    return text[pos:m.start()].strip(), m.end()


def _value(text: str, pos: int) -> tuple[Any, int]:
    """The value at ``pos`` in Godot 4's text form, else Godot 3's; the error of Godot 4's when neither reads it."""
    try:
        return read_value(text, pos, "godot4", resources=_resolver)
    except TextDecodeError as first:
        try:
            return read_value(text, pos, "godot3", resources=_resolver)
        except TextDecodeError:
            raise ResourceFormatError(first.offset, first.reason, text) from None
