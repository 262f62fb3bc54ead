"""``VariantParser``: Godot's text form read back into a value of the model.

This module is the reference: the grammar, every error and offset.  Where it is built, the compiled
fast path (``godot_formats.core._ctext``, :data:`COMPILED`) reads a value first: the common grammar
(blanks, comments, atoms, strings with one-character escapes, Arrays, Dictionaries, math and packed
constructors, ``Object(...)``), making values with this module's own functions (:func:`_make_dictionary`,
:class:`_Constructors`, :func:`_make_object`).  Anything else it hands back, and the parser here reads
the value from the same start, so both give the same value, end and error.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import operator
import re
from collections.abc import Callable as _Fn
from collections.abc import Iterator
from typing import Any, Union

import attrs

from ...core import types as t
from ...core.accel import ctext as _ctext
from ...core.codec import DEFAULT_MAX_DEPTH
from ...core.dialects import Dialect, get_dialect
from ...core.errors import TextDecodeError
from ...core.keys import KeyRules, Memo, python_keys_agree
from ...core.registry import Family, TypeSpec, for_each_row
from ...core.switches import F32, F64, I32, I64, REAL, U8
from ...layers.magic import SKIPPED as _SKIPPED
from .common import CONTAINER_ELEMENT_TYPES, MASK64, MAX_KEY_DEPTH, _wrap
from .floats import _to_f32

_SPACE = re.compile(r"[\x00-\x20]+")
#: What the engines' tokenizer passes over between tokens (:data:`godot_formats.layers.magic.SKIPPED`,
#: where the rule is stated once).
SKIPPED = _SKIPPED
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?")
_SPECIAL_FLOAT = re.compile(r"(inf_neg|-?inf|-?nan)(\.0)?(?![A-Za-z0-9_])")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX = re.compile(r"[0-9A-Fa-f]*")
_HEX_DIGITS = re.compile(r"[0-9A-Fa-f]+")
_STRING_RUN = re.compile(r'[^"\\]*')
_PUNCT = frozenset("{}[](),:=")
_SPECIAL_VALUES = {"inf": math.inf, "inf_neg": -math.inf, "-inf": -math.inf, "nan": math.nan, "-nan": -math.nan}
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "a": "\a", "v": "\v"}


class _Tok:
    """One token: ``kind`` (a punctuation character, "num", "str", "sname", "ident", "color" or "eof"),
    its value and its offset.  A plain slotted class: a file of values makes one per token."""

    __slots__ = ("kind", "value", "pos")

    def __init__(self, kind: str, value: Any, pos: int) -> None:
        self.kind = kind
        self.value = value
        self.pos = pos


#: The common tokens in one match (the blanks and comments before them too): punctuation, a string
#: without escapes, a special float, a number, an identifier, the end.  Anything else (a string with
#: escapes, a StringName, a color, an error) is :meth:`_Scanner.scan_slow`'s.
_TOKEN = re.compile(
    r"(?:[\x00-\x20]+|;[^\n]*)*"
    r"(?:(?P<punct>[{}\[\](),:=])"
    r'|"(?P<plain>[^"\\]*)"'
    r"|(?P<special>inf_neg|-?inf|-?nan)(?:\.0)?(?![A-Za-z0-9_])"
    r"|(?P<num>-?[0-9]+(?P<frac>\.[0-9]*)?(?P<exp>[eE][+-]?[0-9]+)?)"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<eof>\Z))")


class _Scanner:
    """Godot's tokenizer (``VariantParser::get_token``), with character offsets."""

    def __init__(self, text: str, godot3: bool) -> None:
        self.text = text
        self.pos = 0
        self.godot3 = godot3
        self.pending: _Tok | None = None

    def error(self, pos: int, reason: str) -> TextDecodeError:
        return TextDecodeError(pos, reason, self.text)

    def peek(self) -> _Tok:
        if self.pending is None:
            self.pending = self.scan()
        return self.pending

    def next(self) -> _Tok:
        tok = self.peek()
        self.pending = None
        return tok

    def expect(self, kind: str, what: str) -> _Tok:
        tok = self.next()
        if tok.kind != kind:
            raise self.error(tok.pos, f"expected {what}, found {describe(tok)}")
        return tok

    def scan(self) -> _Tok:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            return self.scan_slow()
        kind = m.lastgroup
        if kind == "frac" or kind == "exp":
            kind = "num"
        pos = m.start(kind)  # type: ignore[arg-type]
        self.pos = m.end()
        if kind == "punct":
            c = m.group(kind)
            return _Tok(c, c, pos)
        if kind == "plain":
            return _Tok("str", m.group(kind), pos - 1)  # the token starts at its quote
        if kind == "ident":
            return _Tok("ident", m.group(kind), pos)
        if kind == "special":
            return _Tok("num", _SPECIAL_VALUES[m.group(kind)], pos)
        if kind == "eof":
            return _Tok("eof", None, pos)
        token = m.group("num")
        if m.group("frac") is None and m.group("exp") is None:
            return _Tok("num", self.integer(token, pos), pos)
        return _Tok("num", float(token), pos)

    def scan_slow(self) -> _Tok:
        """Every token, one case at a time: what :data:`_TOKEN` does not take."""
        text = self.text
        while True:
            m = _SPACE.match(text, self.pos)
            if m:
                self.pos = m.end()
            if self.pos < len(text) and text[self.pos] == ";":  # a comment to the end of the line
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
                continue
            break
        pos = self.pos
        if pos >= len(text):
            return _Tok("eof", None, pos)
        c = text[pos]
        if c in _PUNCT:
            self.pos += 1
            return _Tok(c, c, pos)
        if c == '"':
            return _Tok("str", self.string(pos + 1), pos)
        if c in "&@" and text.startswith('"', pos + 1):
            return _Tok("sname", t.StringName(self.string(pos + 2)), pos)
        if c == "#":
            m = _HEX.match(text, pos + 1)
            self.pos = m.end() if m else pos + 1
            return _Tok("color", self.html_color(text[pos + 1:self.pos], pos), pos)
        m = _SPECIAL_FLOAT.match(text, pos)
        if m:
            self.pos = m.end()
            return _Tok("num", _SPECIAL_VALUES[m.group(1)], pos)
        m = _NUMBER.match(text, pos)
        if m:
            self.pos = m.end()
            token = m.group()
            if m.group(1) is None and m.group(2) is None:
                return _Tok("num", self.integer(token, pos), pos)
            return _Tok("num", float(token), pos)
        m = _IDENT.match(text, pos)
        if m:
            self.pos = m.end()
            return _Tok("ident", m.group(), pos)
        raise self.error(pos, f"unexpected character {c!r}")

    def integer(self, token: str, pos: int) -> int:
        """An int token's value, refused when it does not fit in an int64."""
        # Checked before int(): Python refuses over 4300 digits (ValueError), and int() of
        # a long digit string is quadratic.  The engines clamp with an error message.
        digits = token.lstrip("-").lstrip("0")
        if len(digits) > 19:
            raise self.error(pos, f"integer {_short_number(token)} does not fit in 64 bits")
        number = int(digits or "0")
        if token[0] == "-":
            number = -number
        if not -(1 << 63) <= number < 1 << 63:
            raise self.error(pos, f"integer {token} does not fit in 64 bits")
        return number

    def string(self, pos: int) -> str:
        """A quoted string's content, escapes decoded; ``pos`` is just after the quote."""
        text, out, start = self.text, [], pos - 1
        lead = 0  # a pending UTF-16 lead surrogate from \\uD8xx
        while True:
            end = _STRING_RUN.match(text, pos).end()  # type: ignore[union-attr]
            if end >= len(text):
                raise self.error(start, "unterminated string")
            if lead and end > pos:
                raise self.error(pos, "unpaired UTF-16 lead surrogate in string")
            out.append(text[pos:end])
            if text[end] == '"':
                if lead:
                    raise self.error(end, "unpaired UTF-16 lead surrogate in string")
                self.pos = end + 1
                return "".join(out)
            if end + 1 >= len(text):
                raise self.error(start, "unterminated string")
            esc = text[end + 1]
            pos = end + 2
            if esc in "uU":
                pos, lead, char = self.code_point(end, esc, lead)
                out.append(char)
                continue
            if lead:
                raise self.error(end, "unpaired UTF-16 lead surrogate in string")
            out.append(_ESCAPES.get(esc, esc))

    def code_point(self, end: int, esc: str, lead: int) -> tuple[int, int, str]:
        """A ``\\uXXXX`` or ``\\UXXXXXX`` escape at ``end``: where the string goes on, the UTF-16
        lead surrogate now pending (0 for none) and the character it completes ("" for none)."""
        width = 4 if esc == "u" else 6
        pos = end + 2
        digits = self.text[pos:pos + width]
        if len(digits) < width or not _HEX_DIGITS.fullmatch(digits):
            raise self.error(end, "malformed hex constant in string")
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDBFF:
            if lead:
                raise self.error(end, "unpaired UTF-16 lead surrogate in string")
            return pos + width, code, ""
        if 0xDC00 <= code <= 0xDFFF:
            if not lead:
                raise self.error(end, "unpaired UTF-16 trail surrogate in string")
            code = 0x10000 + ((lead - 0xD800) << 10) + (code - 0xDC00)
        elif lead:
            raise self.error(end, "unpaired UTF-16 lead surrogate in string")
        if code > 0x10FFFF:
            raise self.error(end, f"\\U{digits} is not a Unicode code point")
        return pos + width, 0, chr(code)

    def html_color(self, digits: str, pos: int) -> t.Color:
        """``Color::html``: #rgb, #rgba, #rrggbb and #rrggbbaa (Godot 3: #aarrggbb)."""
        n = len(digits)
        if n in (3, 4):
            parts = [int(ch, 16) / 15 for ch in digits]
        elif n in (6, 8):
            parts = [int(digits[i:i + 2], 16) / 255 for i in range(0, n, 2)]
        else:
            raise self.error(pos, f"invalid color code #{digits}")
        if len(parts) == 4 and n == 8 and self.godot3:
            parts = parts[1:] + parts[:1]
        r, g, b, *alpha = parts
        return t.Color(r, g, b, alpha[0] if alpha else 1.0)


def _short_number(token: str) -> str:
    return token if len(token) <= 40 else f"{token[:20]}...{token[-10:]} ({len(token.lstrip('-'))} digits)"


def describe(tok: _Tok) -> str:
    if tok.kind == "eof":
        return "the end of the text"
    if tok.kind in _PUNCT:
        return repr(tok.value)
    if tok.kind == "ident":
        name = tok.value if len(tok.value) <= 60 else f"{tok.value[:40]}... ({len(tok.value)} characters)"
        return f"identifier {name}"
    return {"num": "a number", "str": "a string", "sname": "a StringName", "color": "a color"}[tok.kind]


#: Names the rows give (Godot 2's names, and aliases) that no engine's ``VariantParser`` reads:
#: Godot 2 called its byte and real arrays RawArray and RealArray, but its text wrote them as
#: ``ByteArray(...)`` and ``FloatArray(...)``, the names Godot 3 and 4 still read.
_NOT_PARSED = frozenset({"RawArray", "RealArray"})


def _text_names(spec: TypeSpec) -> Iterator[str]:
    """The identifiers that build ``spec`` in text: its Godot 4 name, what older engines called
    it, and the compatibility names the parsers accept (``Quat``, ``Matrix32``, ``PoolIntArray`` ...)."""
    for name in (spec.name, *spec.names.values(), *spec.aliases):
        if name not in _NOT_PARSED:
            yield name


#: Math constructors: every name the engines read -> (row, number of arguments).
_CONSTRUCTORS: dict[str, tuple[TypeSpec, int]] = {}
#: Packed array constructors, PackedStringArray's included: every name the engines read -> row.
_PACKED_NAMES: dict[str, TypeSpec] = {}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if spec.family is Family.MATH:
        _CONSTRUCTORS.update((name, (spec, spec.count)) for name in _text_names(spec))
    elif spec.family in (Family.PACKED, Family.STRINGS):
        _PACKED_NAMES.update((name, spec) for name in _text_names(spec))


_KEYWORDS: dict[str, Any] = {"true": True, "false": False, "null": None, "nil": None}
#: How a number in an integer packed array becomes its element: C's conversion to the element type.
_INT_ELEMENTS: dict[str | None, _Fn[[Any], int]] = {
    U8: lambda a: int(a) & 0xFF, I32: lambda a: _wrap(a, 32), I64: lambda a: _wrap(a, 64)}


_first = operator.itemgetter(0)
#: Key types whose engine identity is their Python equality (see :func:`_make_dictionary`).
_PLAIN_KEYS = frozenset({str, int, type(None)})


def _make_dictionary(pairs: list[tuple[Any, Any]], rules: KeyRules, memo: Memo) -> Any:
    """A plain dict when it holds the entries exactly, else a Dictionary (as the decoder does).

    ``memo`` carries the identities of the containers already used as keys in this text, so
    keys nested in keys cost their size once (see :mod:`godot_formats.keys`).

    Keys that are all strings, ints or null (what a file's Dictionaries hold) are one key to the
    engines exactly when they are one to Python (no bool, float or container among them to merge
    or part differently), so Python's dict is already the answer, with the same first key and last value.
    """
    if set(map(type, map(_first, pairs))) <= _PLAIN_KEYS:
        return dict(pairs)
    gd = t.Dictionary(key_rules=rules)
    gd._fill(pairs, memo)
    try:
        plain = dict(gd.items())
    except TypeError:
        return gd
    return plain if len(plain) == len(gd) and python_keys_agree(plain) else gd


class _Refused(Exception):
    """Arguments that make no value: the parser reports ``reason`` at ``pos`` of its text."""

    def __init__(self, pos: int, reason: str) -> None:
        super().__init__(pos, reason)
        self.pos = pos
        self.reason = reason


class _Constructors:
    """What ``Name(arguments)`` makes in one dialect, once the arguments are read: a math value or a
    packed array, each number kept as the engine keeps it.  The one place for these rules, shared by
    the parser and the compiled fast path (``_ctext``), which reads the arguments and calls :meth:`build`."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def require(self, godot4_name: str, pos: int) -> None:
        if not self.dialect.has(godot4_name):
            raise _Refused(pos, f"{self.dialect.name} has no {godot4_name} type")

    def build(self, name: str, args: list[Any], pos: int) -> Any:
        """``name(*args)`` written at ``pos``: ``args`` are numbers (strings for a PackedStringArray)."""
        row = _CONSTRUCTORS.get(name)
        if row is not None:
            return self.math(*row, name, args, pos)
        return self.packed(_PACKED_NAMES[name], name, args, pos)

    def math(self, spec: TypeSpec, count: int, name: str, args: list[Any], pos: int) -> Any:
        """``Vector2(1, 2)`` ...: the numbers, as the engine's components keep them."""
        self.require(spec.name, pos)
        if len(args) != count:
            raise _Refused(pos, f"{name}() takes {count} numbers, found {len(args)}")
        if spec.component == I32:
            _finite(args, name, pos)
            args = [_wrap(a, 32) for a in args]
        elif spec.component == F32 or not self.dialect.real_is_double:
            args = [_to_f32(a) for a in args]  # what a float32 real_t (and Color) keeps
        assert spec.build is not None
        return spec.build(args)

    def packed(self, spec: TypeSpec, name: str, args: list[Any], pos: int) -> Any:
        self.require(spec.name, pos)
        if spec.family is Family.STRINGS:
            return t.PackedStringArray(args) if args else t.PackedStringArray()
        element = _INT_ELEMENTS.get(spec.component)
        if element is not None:
            _finite(args, name, pos)
            return spec.cls(map(element, args))
        return self.floats(spec, name, args, pos)

    def floats(self, spec: TypeSpec, name: str, args: list[Any], pos: int) -> Any:
        """A packed array of floats, vectors or colors: whole elements only, each number kept as
        the engine keeps it (float32, unless the array is float64 or the build's reals are)."""
        width = spec.width
        if len(args) % width:
            raise _Refused(pos, f"{name}() needs a multiple of {width} numbers, found {len(args)}")
        double = self.dialect.real_is_double
        floats = [float(a) for a in args] if spec.component == F64 or double else [_to_f32(a) for a in args]
        if width == 1:
            return spec.cls(floats)
        out = spec.cls(typecode="d" if double and spec.component == REAL else "f")
        out.data.extend(floats)
        return out


def _finite(args: list[Any], name: str, pos: int) -> None:
    for a in args:
        if not math.isfinite(a):
            raise _Refused(pos, f"{name}() holds integers: {a} is not one")


def _make_object(class_name: str, properties: dict[str, Any]) -> Any:
    """``Object(Class, "name": value, ...)``: the Object, or the EncodedObjectAsID its text stands for."""
    if class_name == "EncodedObjectAsID" and set(properties) == {"object_id", "script"} \
            and type(properties["object_id"]) is int and properties["script"] is None:
        # The text the engines print for an object id they decoded without objects.
        return t.EncodedObjectAsID(properties["object_id"] & MASK64)
    return t.Object(class_name, properties)


@attrs.define
class _ResourceRef:
    """``Resource("res://...")``: a reference to a resource file, not a Variant of its own."""

    path: str
    pos: int


#: What a caller gives the parser to read resource references (``ExtResource(...)``,
#: ``SubResource(...)``, ``Resource(...)``), which only a resource file (``.tres``) can resolve.
#: Called with the constructor's name and its arguments as written (ints and strings); returns
#: the value that stands there, or raises ``ValueError``, whose message the parser reports at the
#: constructor (with the text's line and column).  This is the engine's ``ResourceParser``
#: (``ext_func``, ``sub_func``, ``func``) as one callable.
ResourceResolver = _Fn[[str, tuple[Union[int, str], ...]], Any]

_NEED, _DONE = 0, 1


class _Frame:
    """One open container of the parser's explicit stack."""

    start = 0  # character offset where the container begins
    height = 0  # container levels inside it so far (its own level not counted)

    def advance(self, p: _Parser) -> tuple[int, Any]:
        raise NotImplementedError

    def accept(self, p: _Parser, value: Any, pos: int) -> None:
        raise NotImplementedError


class _ArrayFrame(_Frame):
    def __init__(self, element: t.ContainerType | None, typed: bool) -> None:
        self.items: list[Any] = []
        self.need_comma: bool | None = False  # None: Godot 3, just after a comma
        self.element = element
        self.typed = typed

    def advance(self, p: _Parser) -> tuple[int, Any]:
        s = p.scanner
        tok = s.peek()
        if tok.kind == "]" and not (p.godot3 and self.need_comma is None):
            s.next()
            return _DONE, self.finish(p)
        if self.need_comma:
            if tok.kind != ",":
                raise s.error(tok.pos, f"expected ',' or ']' in an Array, found {describe(tok)}")
            s.next()
            self.need_comma = None if p.godot3 else False  # Godot 3: an empty element is a RID
            if not p.godot3 and s.peek().kind == "]":
                s.next()
                return _DONE, self.finish(p)
        return _NEED, None

    def accept(self, p: _Parser, value: Any, pos: int) -> None:
        p.check_plain(value, pos)
        self.items.append(value)
        self.need_comma = True

    def finish(self, p: _Parser) -> Any:
        if not self.typed:
            return self.items
        assert self.element is not None
        items = self.items
        if self.element.builtin == "float":
            items = [float(v) if type(v) is int else v for v in items]
        p.expect_close_paren()
        return t.TypedArray(self.element, items)


class _DictFrame(_Frame):
    def __init__(self, key_type: t.ContainerType | None, value_type: t.ContainerType | None,
                 typed: bool = False, wrapped: bool = False) -> None:
        self.pairs: list[tuple[Any, Any]] = []
        self.wrapped = wrapped
        self.state = "key"
        self.need_comma = False
        self.key: Any = None
        self.types = (key_type, value_type)
        self.typed = typed

    def advance(self, p: _Parser) -> tuple[int, Any]:
        s = p.scanner
        if self.state == "colon":
            s.expect(":", "':' after a Dictionary key")
            self.state = "value"
            return _NEED, None
        tok = s.peek()
        if tok.kind == "}":
            s.next()
            return _DONE, self.finish(p)
        if self.need_comma:
            if tok.kind != ",":
                raise s.error(tok.pos, f"expected ',' or '}}' in a Dictionary, found {describe(tok)}")
            s.next()
            self.need_comma = False
            if not p.godot3 and s.peek().kind == "}":
                s.next()
                return _DONE, self.finish(p)
        return _NEED, None

    def accept(self, p: _Parser, value: Any, pos: int) -> None:
        p.check_plain(value, pos)
        if self.state == "key":
            if p.height > MAX_KEY_DEPTH:
                raise p.scanner.error(pos, f"a Dictionary key nests deeper than {MAX_KEY_DEPTH} levels")
            self.key = value
            self.state = "colon"
        else:
            self.pairs.append((self.key, value))
            self.state = "key"
            self.need_comma = True

    def finish(self, p: _Parser) -> Any:
        if self.wrapped:  # Dictionary[K, V]({...}); [Variant, Variant] makes an untyped one, as in the engine
            p.expect_close_paren()
        rules = p.dialect.key_rules
        if not self.typed:
            return _make_dictionary(self.pairs, rules, p.key_memo)
        typed = t.TypedDictionary(*self.types, key_rules=rules)
        typed._fill(self.pairs, p.key_memo)
        return typed


class _ObjectFrame(_Frame):
    def __init__(self, class_name: str) -> None:
        self.class_name = class_name
        self.properties: dict[str, Any] = {}
        self.need_comma = False
        self.key = ""

    def advance(self, p: _Parser) -> tuple[int, Any]:
        s = p.scanner
        tok = s.next()
        if tok.kind == ")":
            return _DONE, _make_object(self.class_name, self.properties)
        if self.need_comma:
            if tok.kind != ",":
                raise s.error(tok.pos, f"expected ',' or ')' in an Object, found {describe(tok)}")
            self.need_comma = False
            tok = s.next()
            if tok.kind == ")":
                return _DONE, _make_object(self.class_name, self.properties)
        if tok.kind != "str":
            raise s.error(tok.pos, f"expected a property name as a string, found {describe(tok)}")
        self.key = tok.value
        s.expect(":", "':' after a property name")
        return _NEED, None

    def accept(self, p: _Parser, value: Any, pos: int) -> None:
        if isinstance(value, _ResourceRef) and self.key == "script" and not p.godot3:
            value = value.path  # Godot 4.3+ bytes carry a script as its res:// path
        p.check_plain(value, pos)
        self.properties[self.key] = value
        self.need_comma = True


class _Parser:
    """``VariantParser::parse_value`` for one value, with an explicit stack instead of recursion."""

    def __init__(self, text: str, dialect: Dialect, max_depth: int, resources: ResourceResolver | None = None,
                 start: int = 0) -> None:
        self.dialect = dialect
        self.godot3 = dialect.major == 3
        self.key_memo: Memo = {}  # identities of the containers used as keys so far
        self.scanner = _Scanner(text, self.godot3)
        self.scanner.pos = start
        self.max_depth = max_depth
        self.height = 0  # container levels of the value just read (Dictionary keys are limited)
        self.resources = resources
        self.whole = True  # the value must be the whole text (False: read_value, text may follow)

    def parse(self) -> Any:
        s = self.scanner
        stack: list[_Frame] = []
        want = True
        value: Any = None
        pos = 0
        while True:
            if want:
                self.height = 0  # an atom, unless a container finishes below
                tok = s.peek()
                pos = tok.pos
                if self.godot3 and tok.kind in (",", "]", "}", ")", ":", "eof") and self.empty_is_rid(stack, tok):
                    value, frame = t.RID(), None
                else:
                    value, frame = self.begin(s.next())
                if frame is not None:
                    if len(stack) >= self.max_depth:
                        raise s.error(pos, f"value nested deeper than {self.max_depth} levels")
                    frame.start = pos
                    stack.append(frame)
                    status, value = frame.advance(self)
                    if status == _NEED:
                        continue
                    stack.pop()
                    self.height = 1  # an empty container
                want = False
            if not stack:
                if self.whole:
                    tok = s.peek()
                    if tok.kind != "eof":
                        raise s.error(tok.pos, f"expected the end of the text after the value, found {describe(tok)}")
                self.check_plain(value, pos)
                return value
            frame = stack[-1]
            if self.height > frame.height:
                frame.height = self.height
            frame.accept(self, value, pos)
            status, value = frame.advance(self)
            if status == _NEED:
                want = True
            else:
                done = stack.pop()
                pos = done.start  # the finished container is the value, starting here
                self.height = done.height + 1

    def empty_is_rid(self, stack: list[_Frame], tok: _Tok) -> bool:
        """Godot 3 writes a RID as nothing at all: an empty value position reads as RID()."""
        if not stack:
            return tok.kind == "eof"
        frame = stack[-1]
        if isinstance(frame, _ArrayFrame):
            return frame.need_comma is None or tok.kind == ","
        if isinstance(frame, _DictFrame):
            return frame.state == "value" or tok.kind in ",:"
        return isinstance(frame, _ObjectFrame)

    def check_plain(self, value: Any, pos: int) -> None:
        if isinstance(value, _ResourceRef):
            raise self.scanner.error(value.pos, f'Resource("{value.path}") refers to a resource file, which has no '
                                                "Variant form of its own (only a script or a container type can be)")

    def expect_close_paren(self) -> None:
        self.scanner.expect(")", "')' closing a typed container")

    def begin(self, tok: _Tok) -> tuple[Any, _Frame | None]:
        """Start a value at ``tok``: an atom, or a frame for a container."""
        s = self.scanner
        kind = tok.kind
        if kind in ("num", "str", "sname", "color"):
            if kind == "sname" and self.godot3:
                raise s.error(tok.pos, "Godot 3 has no StringName (&\"...\")")
            return tok.value, None
        if kind == "[":
            return None, _ArrayFrame(None, False)
        if kind == "{":
            return None, _DictFrame(None, None)
        if kind != "ident":
            raise s.error(tok.pos, f"expected a value, found {describe(tok)}")
        word = tok.value
        if word in _KEYWORDS:
            return _KEYWORDS[word], None
        if word in _CONSTRUCTORS:
            return self.math(_CONSTRUCTORS[word][0], tok), None
        if word in _PACKED_NAMES:
            return self.packed(_PACKED_NAMES[word], tok), None
        handler = getattr(self, "c_" + word, None)
        if handler is None:
            raise s.error(tok.pos, f"unexpected identifier '{word}'")
        return handler(tok)  # type: ignore[no-any-return]

    def math(self, spec: TypeSpec, tok: _Tok) -> Any:
        """``Vector2(1, 2)`` ...: the numbers read here, the value made by :class:`_Constructors`."""
        self.require(spec.name, tok)
        return self.build(tok, self.numbers(tok))

    def build(self, tok: _Tok, args: list[Any]) -> Any:
        try:
            return _constructors(self.dialect).build(tok.value, args, tok.pos)
        except _Refused as e:
            raise self.scanner.error(e.pos, e.reason) from None

    def finite(self, args: list[Any], tok: _Tok) -> None:
        try:
            _finite(args, tok.value, tok.pos)
        except _Refused as e:
            raise self.scanner.error(e.pos, e.reason) from None

    def require(self, godot4_name: str, tok: _Tok) -> None:
        try:
            _constructors(self.dialect).require(godot4_name, tok.pos)
        except _Refused as e:
            raise self.scanner.error(e.pos, e.reason) from None

    def numbers(self, tok: _Tok, opened: bool = False) -> list[Any]:
        """``( n, n, ... )``: the arguments of a constructor (``opened``: '(' already read)."""
        s = self.scanner
        if not opened:
            s.expect("(", f"'(' after {tok.value}")
        args: list[Any] = []
        if s.peek().kind == ")":
            s.next()
            return args
        while True:
            arg = s.next()
            if arg.kind != "num":
                raise s.error(arg.pos, f"expected a number in {tok.value}(), found {describe(arg)}")
            args.append(arg.value)
            sep = s.next()
            if sep.kind == ")":
                return args
            if sep.kind != ",":
                raise s.error(sep.pos, f"expected ',' or ')' in {tok.value}(), found {describe(sep)}")

    def packed(self, spec: TypeSpec, tok: _Tok) -> Any:
        self.require(spec.name, tok)
        s = self.scanner
        s.expect("(", f"'(' after {tok.value}")
        if spec.family is Family.STRINGS:
            return self.build(tok, self.strings(tok))
        if spec.component == U8 and s.peek().kind == "str":
            # Godot 4.3+ also reads (and, outside var_to_str, writes) base64: PackedByteArray("AAE=").
            b64 = s.next()
            s.expect(")", f"')' after the base64 string of {tok.value}")
            try:
                return base64.b64decode(b64.value, validate=True)
            except (binascii.Error, ValueError):
                raise s.error(b64.pos, "invalid base64 in PackedByteArray") from None
        return self.build(tok, self.numbers(tok, opened=True))

    def strings(self, tok: _Tok) -> list[str]:
        """The strings of ``PackedStringArray("a", "b")``, its '(' already read."""
        s = self.scanner
        items: list[str] = []
        while True:
            nxt = s.next()
            if nxt.kind == ")" and not items:
                return items
            if nxt.kind != "str":
                raise s.error(nxt.pos, f"expected a string in {tok.value}(), found {describe(nxt)}")
            items.append(nxt.value)
            sep = s.next()
            if sep.kind == ")":
                return items
            if sep.kind != ",":
                raise s.error(sep.pos, f"expected ',' or ')' in {tok.value}(), found {describe(sep)}")

    # -- identifiers with their own syntax

    def c_NodePath(self, tok: _Tok) -> tuple[Any, None]:
        s = self.scanner
        s.expect("(", "'(' after NodePath")
        path = s.expect("str", "a string in NodePath()").value
        s.expect(")", "')' after the NodePath string")
        return t.NodePath(path), None

    def c_RID(self, tok: _Tok) -> tuple[Any, None]:
        self.require("RID", tok)
        args = self.numbers(tok)
        if len(args) > 1:
            raise self.scanner.error(tok.pos, f"RID() takes 0 or 1 number, found {len(args)}")
        self.finite(args, tok)
        return t.RID(_wrap(args[0], 64) & MASK64 if args else 0), None

    def c_Callable(self, tok: _Tok) -> tuple[Any, None]:
        self.require("Callable", tok)
        self.empty_parens(tok)
        return t.Callable(), None

    def c_Signal(self, tok: _Tok) -> tuple[Any, None]:
        self.require("Signal", tok)
        self.empty_parens(tok)
        return t.Signal(), None

    def empty_parens(self, tok: _Tok) -> None:
        self.scanner.expect("(", f"'(' after {tok.value}")
        self.scanner.expect(")", f"')': {tok.value}() holds nothing in text")

    def resource_args(self, tok: _Tok) -> tuple[str, ...]:
        """The strings of ``Resource("path")`` or ``Resource("uid://...", "path")``, after the name."""
        s = self.scanner
        s.expect("(", "'(' after Resource")
        args = [s.expect("str", "a path string in Resource()").value]
        if s.peek().kind == ",":  # Resource("uid://...", "res://...")
            s.next()
            args.append(s.expect("str", "a path string in Resource()").value)
        s.expect(")", "')' after the Resource path")
        return tuple(args)

    def c_Resource(self, tok: _Tok) -> tuple[Any, None]:
        args = self.resource_args(tok)
        if self.resources is not None:
            return self.resolve(tok, args), None
        path = args[1] if len(args) == 2 and args[0].startswith("uid://") else args[0]
        return _ResourceRef(path, tok.pos), None

    def c_ExtResource(self, tok: _Tok) -> tuple[Any, None]:
        return self.reference(tok), None

    def c_SubResource(self, tok: _Tok) -> tuple[Any, None]:
        return self.reference(tok), None

    def reference(self, tok: _Tok) -> Any:
        """``ExtResource(id)`` / ``SubResource(id)``: an id (a number in Godot 3, a string in Godot 4)
        that only the resource file around the value knows, so the caller's resolver reads it."""
        s = self.scanner
        if self.resources is None:
            raise s.error(tok.pos, f"{tok.value}() refers to a resource of a resource file (.tres): a value "
                                   "alone cannot hold it (godot_formats.resources reads such files)")
        s.expect("(", f"'(' after {tok.value}")
        arg = s.next()
        if arg.kind not in ("num", "str") or isinstance(arg.value, float):
            raise s.error(arg.pos, f"expected an id (an integer or a string) in {tok.value}(), found {describe(arg)}")
        s.expect(")", f"')' after the id of {tok.value}")
        return self.resolve(tok, (arg.value,))

    def resolve(self, tok: _Tok, args: tuple[int | str, ...]) -> Any:
        assert self.resources is not None
        try:
            return self.resources(tok.value, args)
        except TextDecodeError:
            raise
        except ValueError as e:
            raise self.scanner.error(tok.pos, str(e)) from None

    def c_Object(self, tok: _Tok) -> tuple[Any, _Frame]:
        s = self.scanner
        s.expect("(", "'(' after Object")
        class_name = s.expect("ident", "a class name in Object()").value
        s.expect(",", "',' after the Object class name")
        return None, _ObjectFrame(class_name)

    def container_type(self, allow_variant: bool) -> t.ContainerType | None:
        s = self.scanner
        tok = s.expect("ident", "a type name")
        if tok.value in _SCRIPT_REFERENCES and s.peek().kind == "(":
            return t.ContainerType.of_script(self.script_path(tok))
        if tok.value == "Variant" and allow_variant:
            return None
        if tok.value in CONTAINER_ELEMENT_TYPES:
            return t.ContainerType(tok.value)
        return t.ContainerType.of_class(tok.value)

    def script_path(self, tok: _Tok) -> str:
        """The script of a typed container's type: ``Resource("path")``, or in a resource file the
        ``ExtResource(id)`` the engine writes there, whose resolved value's ``path`` is kept."""
        if tok.value == "Resource" and self.resources is None:
            ref, _ = self.c_Resource(tok)
            return str(ref.path)
        script = self.c_Resource(tok)[0] if tok.value == "Resource" else self.reference(tok)
        path = script if isinstance(script, str) else getattr(script, "path", None)
        if not isinstance(path, str):
            raise self.scanner.error(tok.pos, "a typed container's script must be a script file (a path), "
                                              f"not {script!r:.60}")
        return path

    def c_Array(self, tok: _Tok) -> tuple[Any, _Frame]:
        if not self.dialect.typed_arrays:
            raise self.scanner.error(tok.pos, f"{self.dialect.name} has no typed Arrays (Godot 4.3+)")
        s = self.scanner
        s.expect("[", "'[' after Array")
        element = self.container_type(allow_variant=False)
        s.expect("]", "']' after the element type")
        s.expect("(", "'(' after Array[...]")
        s.expect("[", "'[' opening the typed Array's elements")
        return None, _ArrayFrame(element, True)

    def c_Dictionary(self, tok: _Tok) -> tuple[Any, _Frame]:
        if not self.dialect.typed_dictionaries:
            raise self.scanner.error(tok.pos, f"{self.dialect.name} has no typed Dictionaries (Godot 4.4+)")
        s = self.scanner
        s.expect("[", "'[' after Dictionary")
        key_type = self.container_type(allow_variant=True)
        s.expect(",", "',' between the key and value types")
        value_type = self.container_type(allow_variant=True)
        s.expect("]", "']' after the value type")
        s.expect("(", "'(' after Dictionary[...]")
        s.expect("{", "'{' opening the typed Dictionary's entries")
        typed = (key_type, value_type) != (None, None)
        return None, _DictFrame(key_type, value_type, typed, wrapped=True)


#: The constructors a typed container's script type may be written with (the last two in resource files).
_SCRIPT_REFERENCES = frozenset({"Resource", "ExtResource", "SubResource"})


@functools.lru_cache(maxsize=64)
def _constructors(dialect: Dialect) -> _Constructors:
    return _Constructors(dialect)


#: Whether values are read by the compiled fast path (``godot_formats.core._ctext``) where it is
#: built: it reads the common grammar and gives what the parser here would, or hands the value
#: back.  False: this module's parser reads everything (tests compare the two this way).
COMPILED = _ctext is not None

#: The kinds of constructor the fast path reads: its arguments are numbers, or strings; or an Object.
_C_NUMBERS, _C_STRINGS, _C_OBJECT = 1, 2, 3


@functools.lru_cache(maxsize=64)
def _compiled(dialect: Dialect) -> Any:
    """The fast path's reader of ``dialect``'s text (None: Godot 2's, which it does not read), made
    from this module's tables and calling back this module's functions for what values are made of."""
    if _ctext is None or dialect.major not in (3, 4):
        return None
    names = {name: _C_NUMBERS for name, (spec, _) in _CONSTRUCTORS.items() if dialect.has(spec.name)}
    names.update((name, _C_STRINGS if spec.family is Family.STRINGS else _C_NUMBERS)
                 for name, spec in _PACKED_NAMES.items() if dialect.has(spec.name))
    names["Object"] = _C_OBJECT
    return _ctext.Reader(godot3=dialect.major == 3, keywords=_KEYWORDS, names=names, specials=_SPECIAL_VALUES,
                         escapes=_ESCAPES, rules=dialect.key_rules, make_dictionary=_make_dictionary,
                         construct=_constructors(dialect).build, make_object=_make_object,
                         max_key_depth=MAX_KEY_DEPTH)


def from_text(text: str, dialect: str | Dialect = "godot4", *, max_depth: int = DEFAULT_MAX_DEPTH,
              resources: ResourceResolver | None = None) -> Any:
    """Read one value written in Godot's text format (what ``str2var`` / ``str_to_var`` read).

    Accepts everything :func:`to_text` writes for either engine family, and
    the usual hand-written forms: ``Vector2(1, 2)``, ``Vector2( 1, 2 )``,
    Godot 3 names (``Quat``, ``Transform``, ``PoolIntArray`` ...), ``inf``,
    ``nan``, ``inf_neg``, ``-inf.0``, ``#rrggbb`` colors and ``;`` comments.
    Bad text raises :class:`TextDecodeError` naming the character offset.
    ``resources`` reads the resource references of a resource file (see :data:`ResourceResolver`);
    without it ``ExtResource(...)`` and ``SubResource(...)`` are refused.
    """
    if not isinstance(text, str):
        raise TypeError(f"from_text() reads str, not {type(text).__name__}")
    d = get_dialect(dialect)
    # The fast path never meets what ``resources`` reads (Resource(...), ExtResource(...) ... are the parser's).
    reader = _compiled(d) if COMPILED else None
    if reader is not None:
        got = reader.read(text, 0, max_depth, True)
        if got is not None:
            return got[0]
    return _Parser(text, d, max_depth, resources).parse()


def read_value(text: str, start: int = 0, dialect: str | Dialect = "godot4", *,
               max_depth: int = DEFAULT_MAX_DEPTH, resources: ResourceResolver | None = None) -> tuple[Any, int]:
    """Read the one value that begins at ``text[start:]`` (after blanks and ``;`` comments) and
    return it with the offset just past its last character; what follows is the caller's.

    For formats that hold values among other text, as a resource file does (``name = value``
    lines, ``[tag key=value]`` attributes): the parser works on ``text`` in place, so reading a
    file value by value stays linear, and an error names the line and column in the whole text.
    """
    if not isinstance(text, str):
        raise TypeError(f"read_value() reads str, not {type(text).__name__}")
    d = get_dialect(dialect)
    reader = _compiled(d) if COMPILED else None
    if reader is not None:
        got = reader.read(text, start, max_depth, False)
        if got is not None:
            return got  # type: ignore[no-any-return]
    parser = _Parser(text, d, max_depth, resources, start)
    parser.whole = False
    value = parser.parse()
    s = parser.scanner
    return value, s.pending.pos if s.pending is not None else s.pos
