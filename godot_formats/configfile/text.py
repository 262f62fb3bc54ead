"""ConfigFile text read as the engines' ``ConfigFile::_parse`` reads it, with every entry's place kept.

The engines read the file with ``VariantParser::parse_tag_assign_eof`` (``core/variant/variant_parser.cpp``
in 4.x, ``core/variant_parser.cpp`` in 3.x), character by character:

- characters up to a space (``c <= 32``: blanks, tabs, CR, newlines) are passed over **inside a key too**:
  ``name with space=1`` is the key ``namewithspace`` (Godot 3 writes such keys raw, and reads them back
  without their spaces);
- ``;`` starts a comment to the end of the line, wherever it stands (in the middle of a key as well);
- ``[`` starts a section header only where no key has begun; the header runs to the first ``]``
  (``strip_edges`` then), and later engines let ``\\]`` stand for a ``]`` (:data:`HEADER_ESCAPES`);
- ``"`` reads a quoted key (a String token, C escapes), which replaces what was read so far;
- ``=`` ends the key; the value follows, in Godot's text form;
- anything else is part of the key; text that ends before a key's ``=`` is passed over.

The loader stops at the first error and keeps every key it read before it (``--salvage`` does the
same, and names the line).  What a file *means* is what the engine's ``set_value`` makes of the
entries in order (:func:`engine_view`): a later key replaces an earlier one in its place, ``null``
erases a key and a section left empty, a header with no key makes no section.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ..core.dialects import Dialect, get_dialect
from ..core.errors import ConfigFileError, TextDecodeError
from ..views.text.parser import SKIPPED, read_value
from .dialect import GODOT4_ONLY, GODOT4_ONLY_LITERALS, blank_strings

__all__ = ["Header", "Entry", "Parsed", "parse", "engine_view", "reread", "HEADER_ESCAPES", "Resolver", "SKIP"]

#: Reads a resource reference of the text (``Resource("path")``): given the constructor's name and
#: arguments, returns the value that stands for it.  The ConfigFile reader's own keeps it inert.
Resolver = Callable[[str, "tuple[Any, ...]"], Any]

#: The engine major versions whose section reader lets ``\\]`` stand for ``]``: Godot 4.6 writes the section
#: ``a]b`` as ``[a\\]b]`` and reads it back (measured); Godot 3.2.3 ends a header at its first ``]``.
HEADER_ESCAPES: frozenset[int] = frozenset({4})
#: The engine major versions that read a header's bytes as UTF-8 (``VariantParser::_parse_tag``'s
#: ``is_utf8`` branch, 4.x); Godot 3.2.3 takes each byte for a character, as both do for a key's.
UTF8_HEADERS: frozenset[int] = frozenset({4})

_SKIP = re.compile(SKIPPED)
#: What the engines pass over between tokens (blanks, ``;`` comments), compiled.
SKIP = _SKIP
_BLANKS = re.compile(r"[\x00-\x20]+")
_KEY_RUN = re.compile(r'[^\x00-\x20;"\[=]+')
_COMMENT_END = re.compile(r"\n")
@attrs.define(slots=True)
class Header:
    """A ``[section]`` line: the name as the engine reads it, and where the header stands."""

    name: str
    start: int
    end: int


@attrs.define(slots=True)
class Entry:
    """A ``key=value`` assignment: its section, key and value, where it stands (``start`` is the
    key's first character, ``value_start``/``end`` the value's text), and the key as written."""

    section: str
    key: str
    value: Any
    start: int
    value_start: int
    end: int


@attrs.frozen
class Parsed:
    """A ConfigFile's text, read: its headers and entries in file order, and, for a file read with
    ``salvage``, the error that ended the reading (everything before it was kept)."""

    text: str
    pieces: list[Header | Entry]
    damage: ConfigFileError | None = None

    @property
    def entries(self) -> list[Entry]:
        return [p for p in self.pieces if isinstance(p, Entry)]


def bytewise(text: str) -> str:
    """Text as an engine reads it a byte at a time (``String::chr`` of each byte): an unquoted key of both
    engines, a Godot 3 section name.  ``ключ`` is ``ÐºÐ»Ñ\x8eÑ\x87`` to them, a BOM ``ï»¿`` (measured)."""
    return text if text.isascii() else text.encode("utf-8", "surrogateescape").decode("latin-1")


def _utf8(text: str) -> str:
    """Text the engine decodes as UTF-8, bytes that are not replaced by U+FFFD each (Godot 4)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _quoted_key(text: str, pos: int) -> tuple[str, int]:
    """The String token at ``pos`` (a quoted key), and the offset after it."""
    try:
        value, end = read_value(text, pos)
    except TextDecodeError as e:
        raise ConfigFileError(e.offset, f"a quoted key: {e.reason}", text) from None
    if type(value) is not str:
        raise ConfigFileError(pos, "a quoted key that is not one string (the engine: \"Error reading quoted "
                                   "string\")", text)
    return value, end


def _header(text: str, pos: int, major: int) -> tuple[str, int]:
    """The section name of the header whose ``[`` is at ``pos``, and the offset after its ``]``."""
    if major in HEADER_ESCAPES:
        i, n = pos + 1, len(text)
        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n and text[i + 1] == "]":
                i += 2
                continue
            if c == "]":
                return _name(text[pos + 1:i], major).replace("\\]", "]"), i + 1
            i += 1
        end = -1
    else:
        end = text.find("]", pos + 1)
        if end >= 0:
            return _name(text[pos + 1:end], major), end + 1
    raise ConfigFileError(pos, "a [section] header without its ']' (the engine: \"Unexpected EOF while parsing "
                               "simple tag\")", text)


#: ``String::strip_edges``: every character up to a space, at both ends.
_STRIP = "".join(map(chr, range(33)))


def _name(raw: str, major: int) -> str:
    return (_utf8(raw) if major in UTF8_HEADERS else bytewise(raw)).strip(_STRIP)


def parse(text: str, dialect: str | Dialect, *, resources: Resolver | None = None,
          salvage: bool = False, max_depth: int | None = None) -> Parsed:
    """Every header and entry of ``text``, in order, each value read in ``dialect``'s text form (and in the
    other engine family's where that one refuses it: Godot 4 reads Godot 3's ``PoolIntArray( 1, 2 )``).

    A damaged file raises :class:`~godot_formats.core.errors.ConfigFileError` (line and column); with
    ``salvage`` the pieces before the damage are kept and the error is returned in ``damage``, as
    ``ConfigFile.load`` keeps the keys before the line it stops at.
    """
    reader = _Reader(text, get_dialect(dialect), resources, {} if max_depth is None else {"max_depth": max_depth})
    try:
        while reader.step():
            pass
    except ConfigFileError as e:
        if not salvage:
            raise
        return Parsed(text, reader.pieces, e)
    return Parsed(text, reader.pieces)


class _Reader:
    """``parse_tag_assign_eof`` called until the end of the text: one header or entry a step."""

    def __init__(self, text: str, d: Dialect, resources: Resolver | None, extra: dict[str, Any]) -> None:
        self.text, self.d, self.resources, self.extra = text, d, resources, extra
        self.other = get_dialect("godot3") if d.major >= 4 else None
        #: Whether a value may hold text Godot 3 does not read (looked for value by value only then).
        self.check4 = d.major < 4 and any(literal in text for literal in GODOT4_ONLY_LITERALS)
        self.pieces: list[Header | Entry] = []
        self.section = ""
        self.pos = 0  # a BOM is read as the start of a key, as both engines read it (measured)

    def step(self) -> bool:
        """Read the next header or entry; False at the end of the text (a key cut by it is passed over)."""
        text, n = self.text, len(self.text)
        runs: list[str] = []  # the key read so far (a list: a key of a million '[' stays linear)
        start = -1
        pos = self.pos
        while True:
            m = _BLANKS.match(text, pos)
            if m is not None:
                pos = m.end()
            if pos >= n:
                return False
            c = text[pos]
            if c == ";":
                m = _COMMENT_END.search(text, pos)
                if m is None:
                    return False
                pos = m.end()
                continue
            if c == "[" and not runs:
                name, self.pos = _header(text, pos, self.d.major)
                self.pieces.append(Header(name, pos, self.pos))
                if name:  # "[]" changes no section: its keys stay in the one before (measured, both engines)
                    self.section = name
                return True
            if start < 0:
                start = pos
            if c == '"':
                key, pos = _quoted_key(text, pos)
                runs = [key] if key else []
            elif c == "=":
                value, value_start, end = _value(text, pos + 1, self.d, self.other, self.resources, self.extra,
                                                 self.check4)
                self.pieces.append(Entry(self.section, "".join(runs), value, start, value_start, end))
                self.pos = end
                return True
            else:
                m = _KEY_RUN.match(text, pos)
                run = m.group() if m is not None else c  # a '[' inside a key
                runs.append(bytewise(run))
                pos += len(run)


_MINUS_NO_DIGIT = re.compile(r"-(?![0-9.])")
_MINUS_INF = re.compile(r"-inf(?![A-Za-z0-9_])")


def _value(text: str, pos: int, d: Dialect, other: Dialect | None, resources: Resolver | None,
           extra: dict[str, Any], check4: bool = True) -> tuple[Any, int, int]:
    """The value after a key's ``=``: it, where its text starts and where it ends.

    Godot 4 also reads Godot 3's value text (``other``); Godot 3 reads only its own.  Two tokenizer
    quirks are the engines' (measured, at the top of a value): Godot 3.2.3 reads a ``-`` not followed
    by a digit as the integer 0 (its own ``-inf.0`` is ``0``, and ``inf.0`` starts the next key), and
    Godot 4.6 reads ``-inf.0`` as ``-inf`` with ``.0`` starting the next key.
    """
    value_start = _SKIP.match(text, pos).end()  # type: ignore[union-attr]
    if d.major < 4 and _MINUS_NO_DIGIT.match(text, value_start):
        return 0, value_start, value_start + 1
    if d.major >= 4 and _MINUS_INF.match(text, value_start):
        return float("-inf"), value_start, value_start + 4

    try:
        value, end = read_value(text, pos, d, resources=resources, **extra)
    except TextDecodeError as first:
        if other is None:
            raise ConfigFileError(first.offset, first.reason, text) from None
        try:
            value, end = read_value(text, pos, other, resources=resources, **extra)
        except TextDecodeError:
            raise ConfigFileError(first.offset, first.reason, text) from None
    if d.major < 4 and check4 and GODOT4_ONLY.search(text, value_start, end) is not None:
        m = GODOT4_ONLY.search(blank_strings(text[value_start:end]))  # the strings' content is no Godot 4 text
        if m is not None:  # our reader takes either family's names; Godot 3's stops there (measured)
            raise ConfigFileError(value_start + m.start(), f"Godot 3 does not read Godot 4's {m.group().rstrip('(')}",
                                  text)
    if not text.isascii() and _SURROGATE.search(text, value_start, end):
        value = _strings_as_read(value, d.major)
    return value, value_start, end


_SURROGATE = re.compile("[\udc80-\udcff]")


def _strings_as_read(value: Any, major: int) -> Any:
    """A value whose strings hold bytes that are not UTF-8, as the engine reads them: Godot 3.2.3 keeps
    such a string byte for byte (``String::parse_utf8`` failed), Godot 4.6 replaces each bad byte by U+FFFD."""
    fix = bytewise if major < 4 else _utf8

    def one(v: Any) -> Any:
        if type(v) is str and _SURROGATE.search(v):
            return fix(v)
        return v

    if type(value) is str:
        return one(value)
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            for i, item in enumerate(v):
                v[i] = one(item)
                stack.append(item)
        elif isinstance(v, dict):
            for k in list(v):
                item = v.pop(k)
                v[one(k)] = one(item)
                stack.append(item)
    return value


def reread(text: str, entry: Entry, dialect: str | Dialect, resources: Resolver | None = None) -> Any:
    """The value of ``entry`` read again from ``text`` (where it was read first), as :func:`parse` read it."""
    d = get_dialect(dialect)
    return _value(text, entry.value_start, d, get_dialect("godot3") if d.major >= 4 else None, resources, {})[0]


def engine_view(entries: Iterable[Entry]) -> dict[str, dict[str, Any]]:
    """The sections the engine holds after reading these entries in order (``ConfigFile::set_value``):
    a key set again keeps its first place, ``null`` erases the key (and its section once empty), and
    a section exists only while it has a key."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if not e.key:
            continue  # the engine sets nothing for an empty key
        if e.value is None:
            keys = out.get(e.section)
            if keys is not None:
                keys.pop(e.key, None)
                if not keys:
                    del out[e.section]
            continue
        out.setdefault(e.section, {})[e.key] = e.value
    return out
