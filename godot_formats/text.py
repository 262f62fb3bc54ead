"""Godot's own text form of a Variant: ``var2str`` (Godot 3) and ``var_to_str`` (Godot 4).

:func:`to_text` writes, character for character, what the engine's
``VariantWriter`` writes for a value; :func:`from_text` reads that text back
(what ``str2var`` / ``str_to_var`` read), so text -> value -> bytes works::

    >>> from godot_formats import Vector2
    >>> to_text({"hp": 3, "pos": Vector2(1.5, -2)}, "godot3")
    '{\\n"hp": 3,\\n"pos": Vector2( 1.5, -2 )\\n}'
    >>> from_text('Vector2(1.5, -2)') == Vector2(1.5, -2.0)
    True

Text is the human view and bytes are the truth: the engine's text rounds
floats (Godot 3 and Godot 4.0-4.4 keep 6 significant digits), writes -0.0 as
``0``, forgets NaN payloads, prints nothing for a Godot 3 RID and prints
``Callable()`` / ``Signal()`` for any callable or signal.  docs/text.md lists
every loss.

The rules below come from the engine sources (``core/variant/variant_parser.cpp``
``VariantWriter::write``, ``core/string/ustring.cpp`` ``num_scientific``,
``thirdparty/grisu2/grisu2.h``, ``core/templates/sort_array.h``) and are
checked against Godot 3.2.3 and 4.6 output in ``fixtures/``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable as _Fn
from collections.abc import Iterator
from itertools import chain
from typing import Any, Union

import attrs

from . import types as t
from .codec import DEFAULT_MAX_DEPTH
from .dialects import TYPE_NAMES, Dialect, get_dialect
from .errors import DecodeError, EncodeError
from .keys import KeyRules, Memo, python_keys_agree

__all__ = ["to_text", "from_text", "TextDecodeError", "TextStyle", "text_style"]

_Pieces = Iterator[Union[str, tuple[Any, int]]]


class TextDecodeError(DecodeError):
    """Text that is not a value in Godot's text format.

    ``offset`` is the character position (not a byte position) of the
    problem; ``line`` and ``column`` (both from 1) say the same for humans.
    """

    def __init__(self, offset: int, reason: str, text: str = "") -> None:
        self.offset = offset
        self.reason = reason
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        ValueError.__init__(self, f"at character {offset} (line {self.line}, column {self.column}): {reason}")


# --- floats ----------------------------------------------------------------------------------------

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
MASK64 = (1 << 64) - 1


def _to_f32(x: float) -> float:
    """``(float)x`` in C: nearest float32, +-inf when it overflows."""
    try:
        return _F32.unpack(_F32.pack(x))[0]  # type: ignore[no-any-return]
    except OverflowError:
        return math.copysign(math.inf, x)


def _is_f32(x: float) -> bool:
    return _to_f32(x) == x


def printf_g(x: float) -> str:
    """C's ``printf("%lg", x)`` (6 significant digits), as glibc prints it.

    Python's ``%g`` rounds the same way (correctly, ties to even); only the
    sign of NaN differs: glibc prints ``-nan`` for a NaN with the sign bit set.
    """
    if x != x:
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return format(x, "g")


# Grisu2 (Loitsch 2010) exactly as Godot 4.5+ ships it (thirdparty/grisu2/grisu2.h, from
# simdjson): 64-bit "do it yourself" floats and a table of cached powers of ten.  It is not
# always the shortest representation, so Python's repr() cannot stand in for it.
_CACHED_POWERS: tuple[tuple[int, int, int], ...] = (
    (0xAB70FE17C79AC6CA, -1060, -300), (0xFF77B1FCBEBCDC4F, -1034, -292),
    (0xBE5691EF416BD60C, -1007, -284), (0x8DD01FAD907FFC3C, -980, -276),
    (0xD3515C2831559A83, -954, -268), (0x9D71AC8FADA6C9B5, -927, -260),
    (0xEA9C227723EE8BCB, -901, -252), (0xAECC49914078536D, -874, -244),
    (0x823C12795DB6CE57, -847, -236), (0xC21094364DFB5637, -821, -228),
    (0x9096EA6F3848984F, -794, -220), (0xD77485CB25823AC7, -768, -212),
    (0xA086CFCD97BF97F4, -741, -204), (0xEF340A98172AACE5, -715, -196),
    (0xB23867FB2A35B28E, -688, -188), (0x84C8D4DFD2C63F3B, -661, -180),
    (0xC5DD44271AD3CDBA, -635, -172), (0x936B9FCEBB25C996, -608, -164),
    (0xDBAC6C247D62A584, -582, -156), (0xA3AB66580D5FDAF6, -555, -148),
    (0xF3E2F893DEC3F126, -529, -140), (0xB5B5ADA8AAFF80B8, -502, -132),
    (0x87625F056C7C4A8B, -475, -124), (0xC9BCFF6034C13053, -449, -116),
    (0x964E858C91BA2655, -422, -108), (0xDFF9772470297EBD, -396, -100),
    (0xA6DFBD9FB8E5B88F, -369, -92), (0xF8A95FCF88747D94, -343, -84),
    (0xB94470938FA89BCF, -316, -76), (0x8A08F0F8BF0F156B, -289, -68),
    (0xCDB02555653131B6, -263, -60), (0x993FE2C6D07B7FAC, -236, -52),
    (0xE45C10C42A2B3B06, -210, -44), (0xAA242499697392D3, -183, -36),
    (0xFD87B5F28300CA0E, -157, -28), (0xBCE5086492111AEB, -130, -20),
    (0x8CBCCC096F5088CC, -103, -12), (0xD1B71758E219652C, -77, -4),
    (0x9C40000000000000, -50, 4), (0xE8D4A51000000000, -24, 12),
    (0xAD78EBC5AC620000, 3, 20), (0x813F3978F8940984, 30, 28),
    (0xC097CE7BC90715B3, 56, 36), (0x8F7E32CE7BEA5C70, 83, 44),
    (0xD5D238A4ABE98068, 109, 52), (0x9F4F2726179A2245, 136, 60),
    (0xED63A231D4C4FB27, 162, 68), (0xB0DE65388CC8ADA8, 189, 76),
    (0x83C7088E1AAB65DB, 216, 84), (0xC45D1DF942711D9A, 242, 92),
    (0x924D692CA61BE758, 269, 100), (0xDA01EE641A708DEA, 295, 108),
    (0xA26DA3999AEF774A, 322, 116), (0xF209787BB47D6B85, 348, 124),
    (0xB454E4A179DD1877, 375, 132), (0x865B86925B9BC5C2, 402, 140),
    (0xC83553C5C8965D3D, 428, 148), (0x952AB45CFA97A0B3, 455, 156),
    (0xDE469FBD99A05FE3, 481, 164), (0xA59BC234DB398C25, 508, 172),
    (0xF6C69A72A3989F5C, 534, 180), (0xB7DCBF5354E9BECE, 561, 188),
    (0x88FCF317F22241E2, 588, 196), (0xCC20CE9BD35C78A5, 614, 204),
    (0x98165AF37B2153DF, 641, 212), (0xE2A0B5DC971F303A, 667, 220),
    (0xA8D9D1535CE3B396, 694, 228), (0xFB9B7CD9A4A7443C, 720, 236),
    (0xBB764C4CA7A44410, 747, 244), (0x8BAB8EEFB6409C1A, 774, 252),
    (0xD01FEF10A657842C, 800, 260), (0x9B10A4E5E9913129, 827, 268),
    (0xE7109BFBA19C0C9D, 853, 276), (0xAC2820D9623BF429, 880, 284),
    (0x80444B5E7AA7CF85, 907, 292), (0xBF21E44003ACDD2D, 933, 300),
    (0x8E679C2F5E44FF8F, 960, 308), (0xD433179D9C8CB841, 986, 316),
    (0x9E19DB92B4E31BA9, 1013, 324),
)
_ALPHA = -60
# IEEE layouts: (precision with the hidden bit, exponent bias for the integer significand, bit struct)
_FLOAT_LAYOUTS = {False: (53, 1075, struct.Struct("<Q"), _F64), True: (24, 150, struct.Struct("<I"), _F32)}


def _normalize(f: int, e: int) -> tuple[int, int]:
    shift = 64 - f.bit_length()
    return f << shift, e - shift


def _mul(xf: int, xe: int, yf: int, ye: int) -> tuple[int, int]:
    """diyfp::mul: the upper 64 bits of the product, rounded half up."""
    return (xf * yf + (1 << 63)) >> 64, xe + ye + 64


def _grisu2(value: float, single: bool) -> tuple[str, int]:
    """Digits and decimal exponent with ``value == int(digits) * 10**exponent`` (value > 0)."""
    precision, bias, bits_struct, float_struct = _FLOAT_LAYOUTS[single]
    bits = bits_struct.unpack(float_struct.pack(value))[0]
    hidden = 1 << (precision - 1)
    big_e, big_f = bits >> (precision - 1), bits & (hidden - 1)
    vf, ve = (big_f, 1 - bias) if big_e == 0 else (big_f + hidden, big_e - bias)
    # Boundaries m- and m+ halfway to the neighbouring floats (closer below a power of two).
    plus_f, plus_e = _normalize(2 * vf + 1, ve - 1)
    minus_f, minus_e = (4 * vf - 1, ve - 2) if big_f == 0 and big_e > 1 else (2 * vf - 1, ve - 1)
    minus_f <<= minus_e - plus_e
    wf, we = _normalize(vf, ve)
    # A cached power of ten c ~ 10^-k bringing the exponent into [alpha, gamma].
    f = _ALPHA - plus_e - 1
    k = abs(f * 78913) >> 18
    k = (-k if f < 0 else k) + (1 if f > 0 else 0)
    cf, ce, ck = _CACHED_POWERS[(300 + k + 7) // 8]
    w_f, w_e = _mul(wf, we, cf, ce)
    lo_f, _ = _mul(minus_f, plus_e, cf, ce)
    hi_f, hi_e = _mul(plus_f, plus_e, cf, ce)
    return _grisu2_digit_gen(lo_f + 1, w_f, hi_f - 1, hi_e, -ck)


def _grisu2_digit_gen(m_minus: int, w: int, m_plus: int, e: int, decimal_exponent: int) -> tuple[str, int]:
    delta = m_plus - m_minus
    dist = m_plus - w
    one_e = -e
    one_f = 1 << one_e
    p1 = m_plus >> one_e
    p2 = m_plus & (one_f - 1)
    digits: list[int] = []
    n = len(str(p1)) if p1 else 1
    pow10 = 10 ** (n - 1)
    while n > 0:
        d, p1 = divmod(p1, pow10)
        digits.append(d)
        n -= 1
        rest = (p1 << one_e) + p2
        if rest <= delta:
            _grisu2_round(digits, dist, delta, rest, pow10 << one_e)
            return "".join(map(str, digits)), decimal_exponent + n
        pow10 //= 10
    m = 0
    while True:
        p2 = (p2 * 10) & MASK64
        digits.append(p2 >> one_e)
        p2 &= one_f - 1
        m += 1
        delta = (delta * 10) & MASK64
        dist = (dist * 10) & MASK64
        if p2 <= delta:
            break
    _grisu2_round(digits, dist, delta, p2, one_f)
    return "".join(map(str, digits)), decimal_exponent - m


def _grisu2_round(digits: list[int], dist: int, delta: int, rest: int, ten_k: int) -> None:
    while rest < dist and delta - rest >= ten_k and (rest + ten_k < dist or dist - rest > rest + ten_k - dist):
        digits[-1] -= 1
        rest += ten_k


def grisu2_text(x: float, single: bool = False) -> str:
    """Godot 4.5+ ``String::num_scientific(x)``: Grisu2 digits, laid out like ``%g``.

    Fixed notation for decimal exponents -4 < n <= 15, else ``d.ddde+XX`` with at
    least two exponent digits; ``single`` takes the float32 overload.
    """
    if x != x:
        return "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    x = abs(x)
    if x == 0:
        return sign + "0"
    digits, exponent = _grisu2(x, single)
    k = len(digits)
    n = k + exponent
    if k <= n <= 15:
        body = digits + "0" * (n - k)
    elif 0 < n <= 15:
        body = digits[:n] + "." + digits[n:]
    elif -4 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        e = n - 1
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + f"e{'-' if e < 0 else '+'}{abs(e):02d}"
    return sign + body


def _rtos_fix_3(x: float) -> str:
    """Godot 3 ``rtosfix``: -0.0 and 0.0 as ``0``, else ``%lg``."""
    return "0" if x == 0 else printf_g(x)


def _rtos_fix_40(x: float) -> str:
    """Godot 4.0-4.4 ``rtos_fix``: nan, inf, inf_neg, else ``%lg``."""
    if x == 0:
        return "0"
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "inf_neg"
    return printf_g(x)


def _rtos_fix_45(x: float) -> str:
    """Godot 4.5+ ``rtos_fix`` (compat mode, as var_to_str uses it).

    A double that is exactly a float32 is printed with the float32 digits, so
    a Vector2(0.1) stored as float32 prints ``0.1``, not ``0.10000000149011612``.
    """
    if x == 0:
        return "0"
    if x == -math.inf:
        return "inf_neg"
    return grisu2_text(x, single=_is_f32(x))


def _float_3(x: float) -> str:
    # Godot 3 casts the double to real_t (float32) before printing it.
    s = _rtos_fix_3(_to_f32(x))
    return s if s in ("inf", "nan") or "." in s or "e" in s else s + ".0"


def _float_40(x: float) -> str:
    s = _rtos_fix_40(x)
    return s if s in ("inf", "inf_neg", "nan") or "." in s or "e" in s or "E" in s else s + ".0"


def _float_45(x: float) -> str:
    s = _rtos_fix_45(x)
    return s if s in ("inf", "-inf", "nan") or "." in s or "e" in s or "E" in s else s + ".0"


# --- strings -----------------------------------------------------------------------------------------

_C_ESCAPES = {
    "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    "\v": "\\v", "'": "\\'", '"': '\\"',
}
_C_ESCAPE_4 = str.maketrans(_C_ESCAPES)
_C_ESCAPE_3 = str.maketrans({**_C_ESCAPES, "?": "\\?"})  # Godot 3 also escapes '?' (trigraphs)
_C_ESCAPE_MULTILINE = str.maketrans({"\\": "\\\\", '"': '\\"'})


def c_escape(s: str, major: int = 4) -> str:
    """``String::c_escape`` (StringName, NodePath and packed string elements) of Godot ``major``."""
    return s.translate(_C_ESCAPE_3 if major == 3 else _C_ESCAPE_4)


def c_escape_multiline(s: str) -> str:
    """``String::c_escape_multiline`` (String values keep their raw newlines and tabs)."""
    return s.translate(_C_ESCAPE_MULTILINE)


# --- the style of each engine family -------------------------------------------------------------------

@attrs.frozen
class TextStyle:
    """How one range of engine versions writes text: the rules that changed, as data.

    ``scalar`` formats a float Variant and ``real`` a float inside another
    type (``rtos_fix``); ``spaced`` is Godot 3's ``Vector2( 1, 2 )`` with
    ``{\\n\\n}`` for an empty Dictionary; ``string_like_keys`` sorts String and
    StringName keys together (4.4+); ``max_recursion`` is where Godot 4 stops
    nesting and writes ``[]``, ``{}`` or ``null`` instead;
    ``escape_resource_path`` says the engine C-escapes ``Resource("...")`` paths (4.5+);
    earlier engines wrote them raw, which only differs for a path holding ``\\`` or ``"``,
    and those we escape in every version, since raw they would not read back.
    """

    name: str
    major: int
    scalar: _Fn[[float], str]
    real: _Fn[[float], str]
    spaced: bool
    string_like_keys: bool
    max_recursion: int | None
    escape_resource_path: bool


GODOT3_STYLE = TextStyle("godot3", 3, _float_3, _rtos_fix_3, True, False, None, False)
GODOT40_STYLE = TextStyle("godot4.0-4.3", 4, _float_40, _rtos_fix_40, False, False, 100, False)
GODOT44_STYLE = attrs.evolve(GODOT40_STYLE, name="godot4.4", string_like_keys=True)
GODOT45_STYLE = TextStyle("godot4.5+", 4, _float_45, _rtos_fix_45, False, True, 100, True)


def text_style(dialect: str | Dialect = "godot4", version: str | None = None) -> TextStyle:
    """The text rules of an engine version (``"3.2"``, ``"4.4"``, ``"4.6"`` ...).

    Without ``version``: the newest engine the dialect stands for (``godot4``
    -> 4.5+, ``godot4.3`` -> 4.3, ``godot4.0`` -> 4.0-4.2, ``godot3`` -> 3.x).
    Documented dialects follow their engine family's newest text, since their
    pages say nothing about text.
    """
    d = get_dialect(dialect)
    if version is None:
        if d.major == 3:
            return GODOT3_STYLE
        if d.typed_dictionaries or not d.engine:
            return GODOT45_STYLE
        return GODOT40_STYLE
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if m is None:
        raise ValueError(f"version {version!r} is not like '4.4' or '3.2.3'")
    major, minor = int(m.group(1)), int(m.group(2))
    if major == 3:
        return GODOT3_STYLE
    if major != 4:
        raise ValueError(f"no text rules for Godot {version}: only 3.x and 4.x")
    return GODOT40_STYLE if minor < 4 else GODOT44_STYLE if minor == 4 else GODOT45_STYLE


# --- Variant ordering (dictionary keys are sorted before they are written) -------------------------------

def type_name_of(value: Any) -> str:
    """The Godot 4 type name of a value of the model (``"Vector2"``, ``"Array"`` ...)."""
    name = t.godot_type_name(value)
    if name is None:
        raise EncodeError(f"cannot write a {type(value).__name__} as text ({value!r:.60})")
    return name


def _is_equal_approx_f32(a: float, b: float) -> bool:
    """Godot 3 ``Math::is_equal_approx`` on real_t (float32), as Vector2/3 ``<`` uses it."""
    if a == b:
        return True
    tolerance = _to_f32(1e-5 * abs(a))
    tolerance = max(tolerance, _to_f32(1e-5))
    return abs(_to_f32(a - b)) < tolerance


def _vector_less(a: tuple[float, ...], b: tuple[float, ...], same: _Fn[[float, float], bool]) -> bool:
    for x, y in zip(a[:-1], b[:-1]):
        if not same(x, y):
            return x < y
    return a[-1] < b[-1]


# Kinds of sort keys: how two keys of the same type compare (Variant OP_LESS of that type).
_PLAIN, _VEC, _VEC_APPROX, _POOL, _ARRAY, _NEVER = range(6)
_PLAIN_TYPES = frozenset({"bool", "int", "float", "String", "StringName"})
_VECTOR_TYPES = frozenset({"Vector2", "Vector3", "Vector2i", "Vector3i", "Vector4", "Vector4i"})
_FLOAT_POOLS = frozenset({"PackedFloat32Array", "PackedFloat64Array", "PackedVector2Array", "PackedVector3Array",
                          "PackedVector4Array", "PackedColorArray"})
_END = object()

#: Keys nested deeper than this are refused: comparing (and hashing) them recurses, in the
#: engine as in Python, and a key that deep is a hostile input rather than data.
MAX_KEY_DEPTH = 200


def _children(value: Any) -> Any:
    """What a container holds (None for anything else): elements, keys and values, or properties."""
    if isinstance(value, (list, tuple)) and not isinstance(value, t.Components):
        return value
    if isinstance(value, (dict, t.Dictionary)):
        return chain.from_iterable(value.items())
    if isinstance(value, t.Object):
        return value.properties.values()
    return None


class _Order:
    """``Variant::operator<`` of one engine family: type id first, then ``OP_LESS``.

    Types without ``OP_LESS`` compare as never-less, which makes such keys
    ties; their final order is whatever the engine's introsort leaves, so the
    sort is a port of that introsort too.

    Every key is turned once into a *sort key* ``(type id, kind, data)``
    (:meth:`compile`, iterative and memoized per container, so a key nested
    in a key is not walked again), and comparisons only look at those: a
    packed array becomes a small int naming its contents, an Array the tuple
    of its elements' sort keys.  Comparing two Arrays walks them with an
    explicit stack, once: Godot 4 asks ``x < y`` and then ``y < x`` for each
    pair of elements, which is exponential in the nesting depth; one
    three-way comparison per pair gives the same answers.
    """

    def __init__(self, dialect: Dialect, style: TextStyle) -> None:
        self.dialect = dialect
        self.style = style
        self.godot3 = style.major == 3
        self.memo: dict[int, tuple[tuple[Any, ...], int]] = {}  # id(container) -> (sort key, height)
        self.pools: dict[Any, int] = {}  # packed contents -> a number standing for them

    def type_index(self, name: str) -> int:
        type_id = self.dialect.type_id(name)
        if type_id is None:
            raise EncodeError(f"{self.dialect.name} has no {name} type")
        return type_id

    def leaf(self, value: Any) -> tuple[Any, ...]:
        name = type_name_of(value)
        tid = self.type_index(name)
        if name in _PLAIN_TYPES:
            return tid, _PLAIN, str(value) if isinstance(value, str) else value
        if name in _VECTOR_TYPES:
            approx = self.godot3 and name in ("Vector2", "Vector3")
            return tid, _VEC_APPROX if approx else _VEC, tuple(value)
        if name == "RID":
            return tid, _PLAIN, value.id
        if name.startswith("Packed") and self.godot3:  # Godot 4 has no OP_LESS for packed arrays
            return tid, _POOL, self.pool_id(name, value)
        return tid, _NEVER, None

    def pool_id(self, name: str, value: Any) -> int:
        """A number per distinct contents: Godot 3's pool ``<`` only asks whether two differ."""
        content: Any
        if isinstance(value, (bytes, bytearray, memoryview)):
            content = bytes(value)
        elif name in _FLOAT_POOLS:
            content = tuple(value.data)
            if any(x != x for x in content):  # NaN differs from everything, itself included
                self.pools[object()] = n = len(self.pools)
                return n
        else:
            content = tuple(value)
        return self.pools.setdefault((name, content), len(self.pools))

    def compile(self, root: Any) -> tuple[tuple[Any, ...], int]:
        """The sort key of ``root`` and its height (container levels), without recursion."""
        memo = self.memo
        stack: list[list[Any]] = []  # [container, children iterator, element sort keys or None, height]
        value = root
        while True:
            kids = _children(value)
            result: tuple[tuple[Any, ...], int] | None
            if kids is None:
                result = self.leaf(value), 0
            else:
                result = memo.get(id(value))
                if result is None:
                    if len(stack) >= MAX_KEY_DEPTH:
                        raise EncodeError(f"a Dictionary key nests deeper than {MAX_KEY_DEPTH} levels")
                    is_array = isinstance(value, (list, tuple))
                    stack.append([value, iter(kids), [] if is_array else None, 0])
            while True:  # hand results up until some container has a next child
                if result is not None:
                    if not stack:
                        return result
                    frame = stack[-1]
                    if frame[2] is not None:
                        frame[2].append(result[0])
                    if result[1] > frame[3]:
                        frame[3] = result[1]
                frame = stack[-1]
                value = next(frame[1], _END)
                if value is not _END:
                    break
                stack.pop()
                container, height = frame[0], frame[3] + 1
                if height > MAX_KEY_DEPTH:
                    raise EncodeError(f"a Dictionary key nests deeper than {MAX_KEY_DEPTH} levels")
                tid = self.type_index(type_name_of(container))
                key = (tid, _ARRAY, tuple(frame[2])) if frame[2] is not None else (tid, _NEVER, None)
                result = memo[id(container)] = key, height

    def less(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        """``a < b`` for two sort keys."""
        if a[0] != b[0]:
            return a[0] < b[0]  # type: ignore[no-any-return]
        kind = a[1]
        if kind == _PLAIN:
            return a[2] < b[2]  # type: ignore[no-any-return]
        if kind == _ARRAY:
            return self._array_less_3(a, b) if self.godot3 else self._array_cmp_4(a, b) < 0
        if kind == _VEC:
            return _vector_less(a[2], b[2], _exact_equal)
        if kind == _VEC_APPROX:
            return _vector_less(a[2], b[2], _is_equal_approx_f32)
        if kind == _POOL:
            # DEFAULT_OP_ARRAY_LT: shorter is less, else "less" when any element differs (the
            # engine reads past the shorter one): in all, "less" exactly when the contents differ.
            return a[2] != b[2]  # type: ignore[no-any-return]
        return False

    def _array_cmp_4(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        """Godot 4 ``Array::operator<`` as a three-way comparison (-1, 0, 1).

        The engine returns at the first pair with ``x < y`` (true) or ``y < x``
        (false), else compares the sizes.
        """
        stack: list[tuple[tuple[Any, ...], tuple[Any, ...], int]] = []
        while True:
            if a[0] == b[0] and a[1] == _ARRAY:
                stack.append((a[2], b[2], 0))
            else:
                r = -1 if self.less(a, b) else 1 if self.less(b, a) else 0
                if r:
                    return r
            while stack:
                xs, ys, i = stack[-1]
                if i < len(xs) and i < len(ys):
                    stack[-1] = (xs, ys, i + 1)
                    a, b = xs[i], ys[i]
                    break
                stack.pop()
                if len(xs) != len(ys):
                    return -1 if len(xs) < len(ys) else 1
            else:
                return 0

    def _array_less_3(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        """Godot 3's OP_LESS for Arrays, quirks included: false when ``b`` is shorter, else
        true as soon as one element is not less than its partner."""
        stack: list[list[Any]] = []  # [elements of a, elements of b, index]
        while True:
            if a[0] == b[0] and a[1] == _ARRAY:
                xs, ys = a[2], b[2]
                if len(ys) < len(xs) or not xs:
                    r = False
                else:
                    stack.append([xs, ys, 0])
                    a, b = xs[0], ys[0]
                    continue
            else:
                r = self.less(a, b)
            while stack:
                frame = stack[-1]
                if not r:
                    stack.pop()
                    r = True
                    continue
                frame[2] += 1
                if frame[2] < len(frame[0]):
                    a, b = frame[0][frame[2]], frame[1][frame[2]]
                    break
                stack.pop()
                r = False
            else:
                return r

    def sort(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """The pairs of a Dictionary in the order the engine prints them."""
        string_like = self.style.string_like_keys
        entries = []
        for pair in pairs:
            key = self.compile(pair[0])[0]
            entries.append((key, str(pair[0]) if string_like and isinstance(pair[0], str) else None, pair))
        if self._total(entries):
            # Distinct keys of a strict total order: every correct sort gives the one sorted order.
            entries.sort(key=lambda e: (e[0][0], e[0][2]))
        elif self._distinct_pools(entries):
            entries = _all_less_order(entries)
        else:
            less = self.less

            def entry_less(x: tuple[Any, Any, Any], y: tuple[Any, Any, Any]) -> bool:
                if x[1] is not None and y[1] is not None:
                    return x[1] < y[1]  # type: ignore[no-any-return]
                return less(x[0], y[0])

            _IntroSort(entry_less).sort(entries)
        return [e[2] for e in entries]

    @staticmethod
    def _distinct_pools(entries: list[tuple[Any, Any, Any]]) -> bool:
        """Whether the keys are Godot 3 pool arrays of one type with different contents: then
        every key is "less" than every other one (see :meth:`less`)."""
        if not entries or entries[0][0][1] != _POOL:
            return False
        tid = entries[0][0][0]
        if any(key[0] != tid or key[1] != _POOL for key, _, _ in entries):
            return False
        return len({key[2] for key, _, _ in entries}) == len(entries)

    def _total(self, entries: list[tuple[Any, Any, Any]]) -> bool:
        """Whether the keys are distinct scalars that ``(type id, value)`` orders as the engine does."""
        seen = set()
        string_types = set()
        for key, text, _ in entries:
            if key[1] != _PLAIN or key[2] != key[2]:  # NaN is a tie with everything
                return False
            if text is not None:
                string_types.add(key[0])
            seen.add((key[0], key[2]))
        # 4.4+ sorts String and StringName keys together, across the other types: not a total order.
        return len(seen) == len(entries) and len(string_types) < 2


def _all_less_order(items: list[Any]) -> list[Any]:
    """What :class:`_IntroSort` leaves when every item is "less" than every other one.

    Each pivot is the middle item and every partition stops at it, so the introsort moves
    nothing; the final insertion sort then reverses the first 16 items and puts each later
    one at index 1 (the unguarded insert stops there).  Doing those n*n/2 comparisons (as
    the engine does) takes 17 s in Python for 10,000 keys; this takes none.
    ``test_all_less_order_is_the_introsort`` checks it against the port.
    """
    n = len(items)
    if n <= _IntroSort.THRESHOLD:
        return items[::-1]
    return [items[15]] + items[:15:-1] + items[14::-1]


def _exact_equal(a: float, b: float) -> bool:
    return a == b


def _packed_items(value: Any) -> Iterator[Any]:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return iter(bytes(value))
    return iter(value)


class _IntroSort:
    """Godot's ``SortArray`` (introsort + final insertion sort), validation on.

    A port rather than ``sorted()`` because keys that compare as ties (NaN,
    two Dictionaries, Vector2s that are approximately equal in Godot 3) end
    up in the order this particular algorithm leaves them.
    """

    THRESHOLD = 16

    def __init__(self, less: _Fn[[Any, Any], bool]) -> None:
        self.less = less

    def sort(self, a: list[Any]) -> None:
        n = len(a)
        if n:
            self.introsort(a, 0, n, 2 * (n.bit_length() - 1))
            self.final_insertion_sort(a, 0, n)

    def median_of_3(self, x: Any, y: Any, z: Any) -> Any:
        less = self.less
        if less(x, y):
            return y if less(y, z) else z if less(x, z) else x
        return x if less(x, z) else z if less(y, z) else y

    def introsort(self, a: list[Any], first: int, last: int, max_depth: int) -> None:
        while last - first > self.THRESHOLD:
            if max_depth == 0:
                self.partial_sort(a, first, last, last)
                return
            max_depth -= 1
            pivot = self.median_of_3(a[first], a[first + (last - first) // 2], a[last - 1])
            cut = self.partitioner(a, first, last, pivot)
            self.introsort(a, cut, last, max_depth)
            last = cut

    def partitioner(self, a: list[Any], first: int, last: int, pivot: Any) -> int:
        less, lo, hi = self.less, first, last
        while True:
            while less(a[first], pivot):
                if first == hi - 1:
                    break
                first += 1
            last -= 1
            while less(pivot, a[last]):
                if last == lo:
                    break
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def partial_sort(self, a: list[Any], first: int, last: int, middle: int) -> None:
        self.make_heap(a, first, middle)
        for i in range(middle, last):
            if self.less(a[i], a[first]):
                self.pop_heap_to(a, first, middle, i, a[i])
        self.sort_heap(a, first, middle)

    def make_heap(self, a: list[Any], first: int, last: int) -> None:
        if last - first < 2:
            return
        length = last - first
        parent = (length - 2) // 2
        while True:
            self.adjust_heap(a, first, parent, length, a[first + parent])
            if parent == 0:
                return
            parent -= 1

    def sort_heap(self, a: list[Any], first: int, last: int) -> None:
        while last - first > 1:
            self.pop_heap_to(a, first, last - 1, last - 1, a[last - 1])
            last -= 1

    def pop_heap_to(self, a: list[Any], first: int, last: int, result: int, value: Any) -> None:
        a[result] = a[first]
        self.adjust_heap(a, first, 0, last - first, value)

    def adjust_heap(self, a: list[Any], first: int, hole: int, length: int, value: Any) -> None:
        top = hole
        child = 2 * hole + 2
        while child < length:
            if self.less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
            child = 2 * (child + 1)
        if child == length:
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and self.less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def unguarded_linear_insert(self, a: list[Any], last: int, value: Any) -> None:
        nxt = last - 1
        while self.less(value, a[nxt]):
            if nxt == 0:
                break
            a[last] = a[nxt]
            last = nxt
            nxt -= 1
        a[last] = value

    def linear_insert(self, a: list[Any], first: int, last: int) -> None:
        value = a[last]
        if self.less(value, a[first]):
            a[first + 1:last + 1] = a[first:last]
            a[first] = value
        else:
            self.unguarded_linear_insert(a, last, value)

    def insertion_sort(self, a: list[Any], first: int, last: int) -> None:
        for i in range(first + 1, last):
            self.linear_insert(a, first, i)

    def final_insertion_sort(self, a: list[Any], first: int, last: int) -> None:
        if last - first > self.THRESHOLD:
            self.insertion_sort(a, first, first + self.THRESHOLD)
            for i in range(first + self.THRESHOLD, last):
                self.unguarded_linear_insert(a, i, a[i])
        else:
            self.insertion_sort(a, first, last)


# --- writing -----------------------------------------------------------------------------------------

# Math types: Godot 4 name -> the components in the order VariantWriter prints them.
# Transform2D and Projection print columns; Basis (and Transform3D's basis) rows.
_BASIS_ROWS = ("x.x", "y.x", "z.x", "x.y", "y.y", "z.y", "x.z", "y.z", "z.z")
_MATH_FIELDS: dict[str, tuple[str, ...]] = {
    "Vector2": ("x", "y"), "Vector2i": ("x", "y"), "Vector3": ("x", "y", "z"),
    "Vector3i": ("x", "y", "z"), "Vector4": ("x", "y", "z", "w"), "Vector4i": ("x", "y", "z", "w"),
    "Quaternion": ("x", "y", "z", "w"), "Color": ("r", "g", "b", "a"),
    "Rect2": ("position.x", "position.y", "size.x", "size.y"),
    "Rect2i": ("position.x", "position.y", "size.x", "size.y"),
    "Plane": ("normal.x", "normal.y", "normal.z", "d"),
    "AABB": ("position.x", "position.y", "position.z", "size.x", "size.y", "size.z"),
    "Transform2D": ("x.x", "x.y", "y.x", "y.y", "origin.x", "origin.y"),
    "Basis": _BASIS_ROWS,
    "Transform3D": tuple("basis." + p for p in _BASIS_ROWS) + ("origin.x", "origin.y", "origin.z"),
    "Projection": tuple(f"{c}.{k}" for c in "xyzw" for k in "xyzw"),
}
_INT_MATH = frozenset({"Vector2i", "Vector3i", "Vector4i", "Rect2i"})
_PACKED_WIDTH = {"PackedVector2Array": 2, "PackedVector3Array": 3, "PackedVector4Array": 4, "PackedColorArray": 4}
_INT_PACKED = frozenset({"PackedByteArray", "PackedInt32Array", "PackedInt64Array"})


def _getter(path: str) -> _Fn[[Any], Any]:
    parts = path.split(".")

    def get(v: Any) -> Any:
        for p in parts:
            v = getattr(v, p)
        return v

    return get


_MATH_GETTERS = {name: tuple(_getter(p) for p in fields) for name, fields in _MATH_FIELDS.items()}


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _class_name(name: Any) -> str:
    """A class name as the text holds it: an identifier, or the text would read back differently.

    The engines write ``obj->get_class()`` (always an identifier: ClassDB names are) and their
    parsers read an identifier there, so a class name that is not one has no text form.
    """
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise EncodeError(f"class name {name!r:.60} is not an identifier: Godot's text cannot hold it")
    return name


def _short(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _step(parent: Any, child: Any) -> str:
    """Where ``child`` sits in ``parent``: ``[2]``, ``['k']``, ``<key 'k'>`` or ``.prop``."""
    if isinstance(parent, (dict, t.Dictionary)):
        for k, v in parent.items():
            if v is child:
                return f"[{_short(k)}]"
            if k is child:
                return f"<key {_short(k)}>"
    elif isinstance(parent, t.Object):
        for k, v in parent.properties.items():
            if v is child:
                return f".{k}"
    elif isinstance(parent, (list, tuple)):
        for i, v in enumerate(parent):
            if v is child:
                return f"[{i}]"
    return "[?]"


def _path(containers: list[Any], current: Any) -> str:
    """The path of ``current`` (or of the innermost container) from the writer's stack.

    ``containers[0]`` is a placeholder for the root's parent.  Only used for an error, so
    searching each container for the next one (linear in their sizes) is fine.
    """
    chain_ = containers[1:] + ([current] if current is not _END else [])
    return "".join(_step(parent, child) for parent, child in zip(chain_, chain_[1:]))


class _Writer:
    """Writes one value as text, without recursion (any nesting depth is fine).

    Container writers are generators that yield literal text (``str``) and the
    children to write (``(value, recursion_count)``); the loop in :meth:`write`
    keeps a stack of them.
    """

    def __init__(self, dialect: Dialect, style: TextStyle) -> None:
        self.dialect = dialect
        self.style = style
        self.order = _Order(dialect, style)
        self.open, self.close = ("( ", " )") if style.spaced else ("(", ")")

    def write(self, root: Any) -> str:
        out: list[str] = []
        stack: list[Iterator[Any]] = [iter(((root, 0),))]
        containers: list[Any] = [None]  # the value each generator on the stack writes
        open_ids: set[int] = set()  # their ids: meeting one again is a value that contains itself
        current: Any = _END  # the value being started, for the path of an error
        try:
            while stack:
                for item in stack[-1]:
                    if type(item) is str:
                        out.append(item)
                        continue
                    current = item[0]
                    piece = self.piece(*item)
                    if isinstance(piece, str):
                        out.append(piece)
                        continue
                    if id(current) in open_ids:
                        outer = next(i for i, c in enumerate(containers) if c is current)
                        raise EncodeError("a container that contains itself: its text would never end "
                                          f"(it is {_path(containers[:outer + 1], _END) or 'the root'})")
                    open_ids.add(id(current))
                    containers.append(current)
                    stack.append(piece)
                    current = _END
                    break
                else:
                    stack.pop()
                    open_ids.discard(id(containers.pop()))
                    current = _END
        except EncodeError as e:
            if e.path:
                raise
            raise EncodeError(e.reason, _path(containers, current)) from None
        except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as e:
            # A value of the model built with something it cannot hold (no engine type would).
            raise EncodeError(f"cannot write {type(current).__name__ if current is not _END else 'this value'} "
                              f"as text ({type(e).__name__}: {e})", _path(containers, current)) from e
        return "".join(out)

    def name(self, godot4_name: str) -> str:
        if not self.dialect.has(godot4_name):
            raise EncodeError(f"{self.dialect.name} has no {godot4_name} type")
        return self.dialect.native_name(godot4_name) if self.style.major == 3 else godot4_name

    def piece(self, value: Any, depth: int) -> str | _Pieces:
        kind = type_name_of(value)
        if kind in _MATH_FIELDS:
            return self.math(kind, value)
        if kind in _PACKED_WIDTH or kind in _INT_PACKED or kind in ("PackedFloat32Array", "PackedFloat64Array"):
            return self.packed(kind, value)
        return getattr(self, "w_" + kind)(value, depth)  # type: ignore[no-any-return]

    # -- scalars

    def w_Nil(self, value: None, depth: int) -> str:
        return "null"

    def w_bool(self, value: bool, depth: int) -> str:
        return "true" if value else "false"

    def w_int(self, value: int, depth: int) -> str:
        if not -(1 << 63) <= value < 1 << 63:
            raise EncodeError(f"int {value} does not fit in 64 bits")
        return str(value)

    def w_float(self, value: float, depth: int) -> str:
        return self.style.scalar(value)

    def w_String(self, value: str, depth: int) -> str:
        return '"' + c_escape_multiline(value) + '"'

    def w_StringName(self, value: str, depth: int) -> str:
        self.name("StringName")
        return '&"' + c_escape(value, 4) + '"'

    def w_NodePath(self, value: t.NodePath, depth: int) -> str:
        return 'NodePath("' + c_escape(str(value), self.style.major) + '")'

    def w_RID(self, value: t.RID, depth: int) -> str:
        self.name("RID")
        if self.style.major == 3:
            return ""  # Godot 3's VariantWriter has no case for RID: it writes nothing
        if not 0 <= value.id <= MASK64:
            raise EncodeError(f"RID id {value.id} is not a 64-bit unsigned int")
        return f"RID({_wrap(value.id, 64)})" if value.id else "RID()"  # itos() of the uint64 id

    def w_Callable(self, value: t.Callable, depth: int) -> str:
        self.name("Callable")
        return "Callable()"

    def w_Signal(self, value: t.Signal, depth: int) -> str:
        self.name("Signal")
        return "Signal()"

    def w_InputEvent(self, value: t.InputEvent, depth: int) -> str:
        # Godot 2's own text of these (engine.cfg, .tscn) cannot be checked here against an engine,
        # so none is made up: the JSON form and the tree hold every field.
        raise EncodeError("Godot 2's InputEvent has no text form in this library (its engine cannot be run "
                          "to check one); the JSON form keeps it exactly")

    def w_Image(self, value: t.Image, depth: int) -> str:
        raise EncodeError("Godot 2's Image has no text form in this library (its engine cannot be run "
                          "to check one); the JSON form keeps it exactly")

    # -- math and packed types

    def math(self, kind: str, value: Any) -> str:
        numbers = [g(value) for g in _MATH_GETTERS[kind]]
        if kind in _INT_MATH:
            if not all(-0x80000000 <= n <= 0x7FFFFFFF for n in numbers):
                raise EncodeError(f"{kind} component out of range: {value!r:.80}")
            parts = ", ".join(map(str, numbers))
        else:
            parts = ", ".join(map(self.style.real, numbers))
        return self.name(kind) + self.open + parts + self.close

    def packed(self, kind: str, value: Any) -> str:
        name = self.name(kind)
        if kind in _INT_PACKED:
            numbers = map(str, _packed_items(value))
        else:
            numbers = map(self.style.real, value.data)
        body = ", ".join(numbers)
        return name + (self.open + body + self.close if self.style.spaced else "(" + body + ")")

    def w_PackedStringArray(self, value: t.PackedStringArray, depth: int) -> str:
        major = self.style.major
        for s in value:
            if not isinstance(s, str):
                raise EncodeError(f"PackedStringArray holds a {type(s).__name__}, not a String")
        body = ", ".join('"' + c_escape(s, major) + '"' for s in value)
        return self.name("PackedStringArray") + self.open + body + self.close

    # -- containers

    def container_type(self, ct: t.ContainerType | None) -> str:
        if ct is None:
            return "Variant"
        if ct.script is not None:
            return self.resource(ct.script)
        if ct.class_name is not None:
            return _class_name(ct.class_name)
        if ct.builtin not in _BUILTIN_TYPES or not self.dialect.has(ct.builtin):
            raise EncodeError(f"{self.dialect.name} has no {ct.builtin} type")
        return ct.builtin  # type: ignore[no-any-return]

    def resource(self, path: Any) -> str:
        """``Resource("path")``.  Godot 4.5+ C-escapes the path; earlier engines wrote it raw, which
        differs only for a path holding a backslash or a quote, and there the raw text would not
        read back (or would read as more than a path), so it is escaped for every version."""
        if not isinstance(path, str):
            raise EncodeError(f"a script path must be a str, not {type(path).__name__}")
        return 'Resource("' + c_escape_multiline(path) + '")'

    def truncated(self, depth: int) -> bool:
        limit = self.style.max_recursion
        return limit is not None and depth > limit

    def w_Array(self, value: Any, depth: int) -> _Pieces:
        typed = isinstance(value, t.TypedArray)
        if typed:
            if not self.dialect.typed_arrays:
                raise EncodeError(f"{self.dialect.name} has no typed Arrays (Godot 4.3+)")
            yield "Array[" + self.container_type(value.element_type) + "]("
        if self.truncated(depth):
            yield "[]"
        elif self.style.spaced:
            yield "[ "
            for i, item in enumerate(value):
                if i:
                    yield ", "
                yield item, depth + 1
            yield " ]"
        else:
            yield "["
            for i, item in enumerate(value):
                if i:
                    yield ", "
                yield item, depth + 1
            yield "]"
        if typed:
            yield ")"

    def w_Dictionary(self, value: Any, depth: int) -> _Pieces:
        typed = isinstance(value, t.TypedDictionary) and (value.key_type, value.value_type) != (None, None)
        if typed:
            if not self.dialect.typed_dictionaries:
                raise EncodeError(f"{self.dialect.name} has no typed Dictionaries (Godot 4.4+)")
            yield f"Dictionary[{self.container_type(value.key_type)}, {self.container_type(value.value_type)}]("
        pairs = list(value.items())
        if self.truncated(depth):
            yield "{}"
        elif self.style.spaced:
            yield "{\n"
            for i, (k, v) in enumerate(self.sorted_pairs(pairs)):
                if i:
                    yield ",\n"
                yield k, depth
                yield ": "
                yield v, depth
            yield "\n}"
        elif not pairs:
            yield "{}"
        else:
            yield "{\n"
            for i, (k, v) in enumerate(self.sorted_pairs(pairs)):
                if i:
                    yield ",\n"
                yield k, depth + 1
                yield ": "
                yield v, depth + 1
            yield "\n}"
        if typed:
            yield ")"

    def sorted_pairs(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        return self.order.sort(pairs)

    def w_Object(self, value: Any, depth: int) -> str | _Pieces:
        if self.style.max_recursion is not None and depth > self.style.max_recursion:
            return "null"
        if isinstance(value, t.EncodedObjectAsID):
            if not 0 <= value.object_id <= MASK64:
                raise EncodeError(f"object id {value.object_id} is not a 64-bit unsigned int")
            # What the engine prints for the EncodedObjectAsID it decodes an instance id into.
            # ObjectID is a uint64; as an int Variant it prints as the int64 it wraps to.
            value = t.Object("EncodedObjectAsID", {"object_id": _wrap(value.object_id, 64), "script": None})
        class_name = _class_name(value.class_name)
        for name in value.properties:
            if not isinstance(name, str):
                raise EncodeError(f"Object property names are strings, not {type(name).__name__} ({name!r:.40})")
        return self.object_pieces(class_name, value, depth + 1)

    def object_pieces(self, class_name: str, value: t.Object, depth: int) -> _Pieces:
        # The engine writes the class name and the property names as they are: a class name is an
        # identifier (_class_name refuses anything else), and a property name gets its backslashes
        # and quotes escaped, which changes nothing for any name the engine's text can read back.
        yield "Object(" + class_name + ","
        for i, (name, prop) in enumerate(value.properties.items()):
            if i:
                yield ","
            yield '"' + c_escape_multiline(name) + '":'
            if name == "script" and isinstance(prop, str) and self.style.major == 4:
                # Godot 4.3+ bytes carry the script as its path; the live object prints the Script.
                yield self.resource(prop)
            else:
                yield prop, depth
        yield ")\n"


def to_text(value: Any, dialect: str | Dialect = "godot4", *, version: str | None = None) -> str:
    """The text ``var2str`` (Godot 3 dialects) or ``var_to_str`` (Godot 4) returns for ``value``.

    ``version`` picks the text rules of one engine version (``"4.4"`` still
    printed 6-digit floats; 4.5 switched to Grisu2); by default the newest
    engine of the dialect.  Values the dialect cannot hold raise
    :class:`~godot_formats.errors.EncodeError`, as :func:`godot_formats.dumps` does.
    """
    d = get_dialect(dialect)
    return _Writer(d, text_style(d, version)).write(value)


# --- reading -----------------------------------------------------------------------------------------

_SPACE = re.compile(r"[\x00-\x20]+")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?")
_SPECIAL_FLOAT = re.compile(r"(inf_neg|-?inf|-?nan)(\.0)?(?![A-Za-z0-9_])")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX = re.compile(r"[0-9A-Fa-f]*")
_STRING_RUN = re.compile(r'[^"\\]*')
_PUNCT = frozenset("{}[](),:=")
_SPECIAL_VALUES = {"inf": math.inf, "inf_neg": -math.inf, "-inf": -math.inf, "nan": math.nan, "-nan": -math.nan}
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "a": "\a", "v": "\v"}


@attrs.frozen
class _Tok:
    kind: str  # a punctuation character, "num", "str", "sname", "ident", "color" or "eof"
    value: Any
    pos: int


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
                # Checked before int(): Python refuses over 4300 digits (ValueError), and int() of
                # a long digit string is quadratic.  The engines clamp with an error message.
                digits = token.lstrip("-").lstrip("0")
                if len(digits) > 19:
                    raise self.error(pos, f"integer {_short_number(token)} does not fit in 64 bits")
                number: int | float = int(digits or "0")
                if token[0] == "-":
                    number = -number
                if not -(1 << 63) <= number < 1 << 63:
                    raise self.error(pos, f"integer {token} does not fit in 64 bits")
            else:
                number = float(token)
            return _Tok("num", number, pos)
        m = _IDENT.match(text, pos)
        if m:
            self.pos = m.end()
            return _Tok("ident", m.group(), pos)
        raise self.error(pos, f"unexpected character {c!r}")

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
                width = 4 if esc == "u" else 6
                digits = text[pos:pos + width]
                if len(digits) < width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                    raise self.error(end, "malformed hex constant in string")
                pos += width
                code = int(digits, 16)
                if 0xD800 <= code <= 0xDBFF:
                    if lead:
                        raise self.error(end, "unpaired UTF-16 lead surrogate in string")
                    lead = code
                    continue
                if 0xDC00 <= code <= 0xDFFF:
                    if not lead:
                        raise self.error(end, "unpaired UTF-16 trail surrogate in string")
                    code = 0x10000 + ((lead - 0xD800) << 10) + (code - 0xDC00)
                    lead = 0
                elif lead:
                    raise self.error(end, "unpaired UTF-16 lead surrogate in string")
                if code > 0x10FFFF:
                    raise self.error(end, f"\\U{digits} is not a Unicode code point")
                out.append(chr(code))
                continue
            if lead:
                raise self.error(end, "unpaired UTF-16 lead surrogate in string")
            out.append(_ESCAPES.get(esc, esc))

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
        return f"identifier {tok.value}"
    return {"num": "a number", "str": "a string", "sname": "a StringName", "color": "a color"}[tok.kind]


# Constructors: accepted names (every alias the engines read) -> (Godot 4 type, argument count).
_CONSTRUCTORS: dict[str, tuple[str, int]] = {
    "Vector2": ("Vector2", 2), "Vector2i": ("Vector2i", 2), "Rect2": ("Rect2", 4), "Rect2i": ("Rect2i", 4),
    "Vector3": ("Vector3", 3), "Vector3i": ("Vector3i", 3), "Vector4": ("Vector4", 4),
    "Vector4i": ("Vector4i", 4), "Transform2D": ("Transform2D", 6), "Matrix32": ("Transform2D", 6),
    "Plane": ("Plane", 4), "Quaternion": ("Quaternion", 4), "Quat": ("Quaternion", 4),
    "AABB": ("AABB", 6), "Rect3": ("AABB", 6), "Basis": ("Basis", 9), "Matrix3": ("Basis", 9),
    "Transform3D": ("Transform3D", 12), "Transform": ("Transform3D", 12), "Projection": ("Projection", 16),
    "Color": ("Color", 4),
}
_PACKED_NAMES: dict[str, str] = {
    **{n: "PackedByteArray" for n in ("PackedByteArray", "PoolByteArray", "ByteArray")},
    **{n: "PackedInt32Array" for n in ("PackedInt32Array", "PackedIntArray", "PoolIntArray", "IntArray")},
    "PackedInt64Array": "PackedInt64Array",
    **{n: "PackedFloat32Array" for n in ("PackedFloat32Array", "PackedRealArray", "PoolRealArray", "FloatArray")},
    "PackedFloat64Array": "PackedFloat64Array",
    **{n: "PackedStringArray" for n in ("PackedStringArray", "PoolStringArray", "StringArray")},
    **{n: "PackedVector2Array" for n in ("PackedVector2Array", "PoolVector2Array", "Vector2Array")},
    **{n: "PackedVector3Array" for n in ("PackedVector3Array", "PoolVector3Array", "Vector3Array")},
    **{n: "PackedVector4Array" for n in ("PackedVector4Array", "PoolVector4Array", "Vector4Array")},
    **{n: "PackedColorArray" for n in ("PackedColorArray", "PoolColorArray", "ColorArray")},
}
_KEYWORDS: dict[str, Any] = {"true": True, "false": False, "null": None, "nil": None}
_BUILTIN_TYPES = frozenset(TYPE_NAMES[1:])


def _wrap(value: int | float, bits: int) -> int:
    """C's conversion to an intN_t: truncate a float, keep the low ``bits`` bits, signed."""
    n = int(value) & ((1 << bits) - 1)
    return n - (1 << bits) if n >> (bits - 1) else n


def _build_math(kind: str, args: list[Any]) -> Any:
    if kind in _INT_MATH:
        args = [_wrap(a, 32) for a in args]
    v2: Any = t.Vector2i if kind in _INT_MATH else t.Vector2
    v3: Any = t.Vector3
    v4: Any = t.Vector4
    builders: dict[str, _Fn[[list[Any]], Any]] = {
        "Rect2": lambda a: t.Rect2(v2(a[0], a[1]), v2(a[2], a[3])),
        "Rect2i": lambda a: t.Rect2i(v2(a[0], a[1]), v2(a[2], a[3])),
        "Plane": lambda a: t.Plane(v3(a[0], a[1], a[2]), a[3]),
        "AABB": lambda a: t.AABB(v3(a[0], a[1], a[2]), v3(a[3], a[4], a[5])),
        "Transform2D": lambda a: t.Transform2D(v2(a[0], a[1]), v2(a[2], a[3]), v2(a[4], a[5])),
        "Basis": lambda a: t.Basis.from_rows(a[0:3], a[3:6], a[6:9]),
        "Transform3D": lambda a: t.Transform3D(t.Basis.from_rows(a[0:3], a[3:6], a[6:9]), v3(a[9], a[10], a[11])),
        "Projection": lambda a: t.Projection(v4(*a[0:4]), v4(*a[4:8]), v4(*a[8:12]), v4(*a[12:16])),
    }
    build = builders.get(kind)
    return build(args) if build else getattr(t, kind)(*args)


def _make_dictionary(pairs: list[tuple[Any, Any]], rules: KeyRules, memo: Memo) -> Any:
    """A plain dict when it holds the entries exactly, else a Dictionary (as the decoder does).

    ``memo`` carries the identities of the containers already used as keys in this text, so
    keys nested in keys cost their size once (see :mod:`godot_formats.keys`).
    """
    gd = t.Dictionary(key_rules=rules)
    gd._fill(pairs, memo)
    try:
        plain = dict(gd.items())
    except TypeError:
        return gd
    return plain if len(plain) == len(gd) and python_keys_agree(plain) else gd


@attrs.define
class _ResourceRef:
    """``Resource("res://...")``: a reference to a resource file, not a Variant of its own."""

    path: str
    pos: int


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
        self.obj = t.Object(class_name)
        self.need_comma = False
        self.key = ""

    def advance(self, p: _Parser) -> tuple[int, Any]:
        s = p.scanner
        tok = s.next()
        if tok.kind == ")":
            return _DONE, p.finish_object(self.obj)
        if self.need_comma:
            if tok.kind != ",":
                raise s.error(tok.pos, f"expected ',' or ')' in an Object, found {describe(tok)}")
            self.need_comma = False
            tok = s.next()
            if tok.kind == ")":
                return _DONE, p.finish_object(self.obj)
        if tok.kind != "str":
            raise s.error(tok.pos, f"expected a property name as a string, found {describe(tok)}")
        self.key = tok.value
        s.expect(":", "':' after a property name")
        return _NEED, None

    def accept(self, p: _Parser, value: Any, pos: int) -> None:
        if isinstance(value, _ResourceRef) and self.key == "script" and not p.godot3:
            value = value.path  # Godot 4.3+ bytes carry a script as its res:// path
        p.check_plain(value, pos)
        self.obj.properties[self.key] = value
        self.need_comma = True


class _Parser:
    """``VariantParser::parse_value`` for one value, with an explicit stack instead of recursion."""

    def __init__(self, text: str, dialect: Dialect, max_depth: int) -> None:
        self.dialect = dialect
        self.godot3 = dialect.major == 3
        self.key_memo: Memo = {}  # identities of the containers used as keys so far
        self.scanner = _Scanner(text, self.godot3)
        self.max_depth = max_depth
        self.height = 0  # container levels of the value just read (Dictionary keys are limited)

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

    def finish_object(self, obj: t.Object) -> Any:
        props = obj.properties
        if obj.class_name == "EncodedObjectAsID" and set(props) == {"object_id", "script"} \
                and type(props["object_id"]) is int and props["script"] is None:
            # The text the engines print for an object id they decoded without objects.
            return t.EncodedObjectAsID(props["object_id"] & MASK64)
        return obj

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
            kind_name, count = _CONSTRUCTORS[word]
            self.require(kind_name, tok)
            args = self.numbers(tok)
            if len(args) != count:
                raise s.error(tok.pos, f"{word}() takes {count} numbers, found {len(args)}")
            if kind_name in _INT_MATH:
                self.finite(args, tok)
            elif kind_name == "Color" or not self.dialect.real_is_double:
                args = [_to_f32(a) for a in args]  # what a float32 real_t (and Color) keeps
            return _build_math(kind_name, args), None
        if word in _PACKED_NAMES:
            return self.packed(_PACKED_NAMES[word], tok), None
        handler = getattr(self, "c_" + word, None)
        if handler is None:
            raise s.error(tok.pos, f"unexpected identifier '{word}'")
        return handler(tok)  # type: ignore[no-any-return]

    def finite(self, args: list[Any], tok: _Tok) -> None:
        for a in args:
            if not math.isfinite(a):
                raise self.scanner.error(tok.pos, f"{tok.value}() holds integers: {a} is not one")

    def require(self, godot4_name: str, tok: _Tok) -> None:
        if not self.dialect.has(godot4_name):
            raise self.scanner.error(tok.pos, f"{self.dialect.name} has no {godot4_name} type")

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

    def packed(self, kind: str, tok: _Tok) -> Any:
        self.require(kind, tok)
        s = self.scanner
        s.expect("(", f"'(' after {tok.value}")
        if kind == "PackedStringArray":
            items: list[str] = []
            while True:
                nxt = s.next()
                if nxt.kind == ")" and not items:
                    return t.PackedStringArray()
                if nxt.kind != "str":
                    raise s.error(nxt.pos, f"expected a string in {tok.value}(), found {describe(nxt)}")
                items.append(nxt.value)
                sep = s.next()
                if sep.kind == ")":
                    return t.PackedStringArray(items)
                if sep.kind != ",":
                    raise s.error(sep.pos, f"expected ',' or ')' in {tok.value}(), found {describe(sep)}")
        if kind == "PackedByteArray" and s.peek().kind == "str":
            # Godot 4.3+ also reads (and, outside var_to_str, writes) base64: PackedByteArray("AAE=").
            b64 = s.next()
            s.expect(")", f"')' after the base64 string of {tok.value}")
            try:
                return base64.b64decode(b64.value, validate=True)
            except (binascii.Error, ValueError):
                raise s.error(b64.pos, "invalid base64 in PackedByteArray") from None
        args = self.numbers(tok, opened=True)
        if kind in _INT_PACKED:
            self.finite(args, tok)
        if kind == "PackedByteArray":
            return bytes(_wrap(a, 8) & 0xFF for a in args)
        if kind == "PackedInt32Array":
            return t.PackedInt32Array(_wrap(a, 32) for a in args)
        if kind == "PackedInt64Array":
            return t.PackedInt64Array(_wrap(a, 64) for a in args)
        cls = getattr(t, kind)
        width = _PACKED_WIDTH.get(kind, 1)
        if len(args) % width:
            raise s.error(tok.pos, f"{tok.value}() needs a multiple of {width} numbers, found {len(args)}")
        floats = [_to_f32(a) if kind != "PackedFloat64Array" and not self.dialect.real_is_double else float(a)
                  for a in args]
        if width == 1:
            return cls(floats)
        typecode = "d" if self.dialect.real_is_double and kind != "PackedColorArray" else "f"
        out = cls(typecode=typecode)
        out.data.extend(floats)
        return out

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

    def c_Resource(self, tok: _Tok) -> tuple[Any, None]:
        s = self.scanner
        s.expect("(", "'(' after Resource")
        path = s.expect("str", "a path string in Resource()").value
        if s.peek().kind == ",":  # Resource("uid://...", "res://...")
            s.next()
            second = s.expect("str", "a path string in Resource()").value
            path = second if path.startswith("uid://") else path
        s.expect(")", "')' after the Resource path")
        return _ResourceRef(path, tok.pos), None

    def c_Object(self, tok: _Tok) -> tuple[Any, _Frame]:
        s = self.scanner
        s.expect("(", "'(' after Object")
        class_name = s.expect("ident", "a class name in Object()").value
        s.expect(",", "',' after the Object class name")
        return None, _ObjectFrame(class_name)

    def container_type(self, allow_variant: bool) -> t.ContainerType | None:
        s = self.scanner
        tok = s.expect("ident", "a type name")
        if tok.value == "Resource" and s.peek().kind == "(":
            ref, _ = self.c_Resource(tok)
            return t.ContainerType.of_script(ref.path)
        if tok.value == "Variant" and allow_variant:
            return None
        if tok.value in _BUILTIN_TYPES:
            return t.ContainerType(tok.value)
        return t.ContainerType.of_class(tok.value)

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


def from_text(text: str, dialect: str | Dialect = "godot4", *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Read one value written in Godot's text format (what ``str2var`` / ``str_to_var`` read).

    Accepts everything :func:`to_text` writes for either engine family, and
    the usual hand-written forms: ``Vector2(1, 2)``, ``Vector2( 1, 2 )``,
    Godot 3 names (``Quat``, ``Transform``, ``PoolIntArray`` ...), ``inf``,
    ``nan``, ``inf_neg``, ``-inf.0``, ``#rrggbb`` colors and ``;`` comments.
    Bad text raises :class:`TextDecodeError` naming the character offset.
    """
    if not isinstance(text, str):
        raise TypeError(f"from_text() reads str, not {type(text).__name__}")
    return _Parser(text, get_dialect(dialect), max_depth).parse()

