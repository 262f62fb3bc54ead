"""How the engines print a float: C's ``%g``, Godot 4.5+'s Grisu2 and each family's ``rtos_fix``.

The text has to match the engine digit for digit, and Python's own ``repr`` and ``%g``
differ from it in places (the sign of NaN, Grisu2's not-always-shortest digits, Godot 3
printing the float32 it casts to), so the engine's algorithms are ported as they are.
"""

from __future__ import annotations

import math
import struct

from ...core.types import float32
from .common import MASK64

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


# C's ``(float)x``: nearest float32, +-inf when it overflows -- the library's one float32 rounding.
_to_f32 = float32


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

