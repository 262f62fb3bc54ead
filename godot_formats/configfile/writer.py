"""``ConfigFile::save`` / ``encode_to_text``: sections as each engine writes them, character for character.

Godot 3 (``core/io/config_file.cpp``, ``_internal_save``)::

    [section]\\n\\n key=value\\n ...   with "\\n" between sections; the key raw, "[]" for the section ""

Godot 4 (``core/io/config_file.cpp``, ``encode_to_text``)::

    the same, but no header at all for the section "" and each key through ``String::property_name_encode``
    (quoted, C-escaped, when it holds ``= " ; [ ]``, a character up to a space, or one past ``~``)

Values are ``VariantWriter::write_to_string``'s text (:func:`godot_formats.views.text.to_text`).  Godot 4.6
escapes a ``]`` in a section name (``[a\\]b]``, read back as ``a]b``); Godot 3.2.3 does not (``[a]b]``, read
back as ``a`` with ``b]`` starting the next key); Godot 3 writes keys with blanks raw and reads them back
without (all measured: fixtures/configfile).  What an engine would read back differently from what it was
given is found by :func:`readback_changes`, and reported, never left silent.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.dialects import Dialect, get_dialect
from ..core.errors import EncodeError, TextDecodeError
from ..core.keys import same_value
from ..views.text import text_writer, to_text
from .text import Entry, Header, Resolver, engine_view, parse

__all__ = ["encode_key", "section_header", "section_order", "entry_line", "encode_to_text", "encode_pieces",
           "readback_changes", "lost_name"]


_NEEDS_QUOTES = re.compile(r'[=";\[\]\x00-\x20\x7f-\U0010ffff]')


def _needs_quotes(key: str) -> bool:
    """``String::property_name_encode``'s test (Godot 4): ``= " ; [ ]``, up to a space, or past ``~``,
    looked for before the first NUL (its loop runs over a C string)."""
    return _NEEDS_QUOTES.search(key.split("\0", 1)[0]) is not None


@functools.lru_cache(maxsize=4096)
def encode_key(key: str, major: int) -> str:
    """A key as the engine's ConfigFile writes it: raw in Godot 3, ``property_name_encode`` in Godot 4
    (remembered: a file's keys repeat from section to section)."""
    if major >= 4 and _needs_quotes(key):
        return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return key


def section_header(name: str, major: int) -> str:
    """The header line of a section and the blank line after it: none for Godot 4's section "", and a
    ``]`` in the name escaped by Godot 4 (4.6 writes ``[a\\]b]``; 3.2.3 writes ``[a]b]``, measured)."""
    if major >= 4:
        return f"[{name.replace(']', chr(92) + ']')}]\n\n" if name else ""
    return f"[{name}]\n\n"


def section_order(sections: Mapping[str, Any], major: int) -> list[str]:
    """The order the engine writes sections in: as they were made, Godot 4's section "" first (4.6's
    ``get_sections`` lists it first whenever it was made, measured)."""
    names = list(sections)
    if major >= 4 and "" in sections:
        names.remove("")
        names.insert(0, "")
    return names


def entry_line(key: str, value: Any, d: Dialect) -> str:
    """One ``key=value`` line, newline included."""
    return f"{encode_key(key, d.major)}={to_text(value, d)}\n"


def encode_to_text(sections: Mapping[str, Mapping[str, Any]], dialect: str | Dialect) -> str:
    """The text the engine of ``dialect`` writes for these sections (``ConfigFile.save``)."""
    return encode_pieces(sections, dialect)[0]


def encode_pieces(sections: Mapping[str, Mapping[str, Any]], dialect: str | Dialect, *,
                  start: int = 0) -> tuple[str, list[Header | Entry]]:
    """:func:`encode_to_text`, and where each header and entry stands in the text (what reading it
    back would find, without reading it: a conversion's new document), counted from ``start`` (the
    length of what a caller writes before it)."""
    d = get_dialect(dialect)
    if d.major < 3:
        raise EncodeError(f"{d.name} ConfigFile text is read, not written, here: no Godot 2 engine can be run to "
                          "check its writer; convert the file to godot3")
    parts: list[str] = []
    pieces: list[Header | Entry] = []
    at = start
    write = text_writer(d)
    for i, name in enumerate(section_order(sections, d.major)):
        if i:
            parts.append("\n")
            at += 1
        header = section_header(name, d.major)
        if header:
            pieces.append(Header(name, at, at + len(header) - 2))
            parts.append(header)
            at += len(header)
        for key, value in sections[name].items():
            try:
                text = write(value)
            except EncodeError as e:
                raise EncodeError(path=f"[{name}] {key}" + e.path, **e.reason_in()) from None
            written = encode_key(key, d.major)
            start = at + len(written) + 1
            pieces.append(Entry(name, key, value, at, start, start + len(text)))
            parts += (written, "=", text, "\n")
            at = start + len(text) + 1
    return "".join(parts), pieces


def readback_changes(sections: Mapping[str, Mapping[str, Any]], dialect: str | Dialect,
                     resources: Resolver | None = None, *,
                     values: Iterable[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """Where the engine of ``dialect`` would hold something else after reading back what it writes for
    ``sections``: ``(place, why)`` pairs, ``place`` as ``[section] key`` (empty: it keeps all).

    Sections and keys by the reader's rules (:func:`lost_name`: what :mod:`.text` does to a name,
    stated once more as a test on the name; tests/configfile checks the two agree on any string); the
    values read back one by one where the dialect's text may change one (Godot 3's: six-digit floats,
    ``-inf``), those of ``values`` only when it is given (the entries an edit wrote).  Godot 4's text
    reads back every value it writes."""
    d = get_dialect(dialect)
    order = section_order(sections, d.major)
    if values is not None:
        values = set(values)
    out: list[tuple[str, str]] = []
    for i, name in enumerate(order):
        for key in sections[name]:
            if values is not None and (name, key) not in values:
                continue
            # An edit puts the section "" before the first header (no "[]"): first, whatever its place.
            why = lost_name(name, key, d.major, first=i == 0 or (values is not None and not name))
            if why is not None:
                out.append((f"[{name}] {key}", why))
    if d.major >= 4:
        return out
    missing = {place for place, _ in out}
    check = values if values is not None else ((s, k) for s, keys in sections.items() for k in keys)
    for section, key in check:
        place = f"[{section}] {key}"
        if place in missing or key not in sections.get(section, {}):
            continue
        value = sections[section][key]
        text = f"k={to_text(value, d)}\n"
        try:
            back = engine_view(parse(text, d, resources=resources).entries).get("", {}).get("k")
        except TextDecodeError as e:
            out.append((place, f"the engine could not read the value back ({e.reason})"))
            continue
        if not same_value(back, value):
            out.append((place, f"the engine reads the value back as {to_text(back, d)[:60]}"))
    return out


_STRIPPED = "".join(map(chr, range(33)))
_GODOT3_RAW_KEY = re.compile(r'[!-~]+')  # what a raw key keeps: ASCII past the space


def lost_name(section: str, key: str, major: int, *, first: bool = False) -> str | None:
    """Why the engine would read ``key`` of ``section`` back under another name (None: it would not).
    ``first``: the section is the first the file writes (Godot 3's ``[]`` keeps the section "" only there)."""
    if section != section.strip(_STRIPPED):
        return "the engine strips blanks at the ends of a section name when it reads it"
    if major < 4:
        if "]" in section:
            return "Godot 3 writes the section name with its ']' unescaped and reads it back cut there"
        if not section.isascii():
            return "Godot 3 reads a section name byte by byte (its non-ASCII letters come back as other letters)"
        if not section and not first:
            return ("Godot 3 writes the section \"\" as [], which changes no section when read: its keys go to the "
                    "one before")
    elif section.endswith("\\"):
        return "Godot 4 writes a section name ending in '\\' so that its ']' reads as escaped"
    if not key:
        return "the engine skips an empty key when it reads the file"
    if "\0" in key and (major < 4 or not _needs_quotes(key)):
        return "a NUL in a key written raw is passed over when read"
    if major < 4 and (not _GODOT3_RAW_KEY.fullmatch(key) or any(c in key for c in ';="') or key.startswith("[")):
        return ("Godot 3 writes keys raw: a blank, ';', '=', '\"', a leading '[' or a non-ASCII letter reads back "
                "otherwise")
    return None
