"""Numbers in the JSON form: the shortest text of a float, non-finite numbers and NaN payloads, ints of a width."""

from __future__ import annotations

import math
import re
import struct
from typing import Any

from ...core.errors import JSONFormatError

#: Digits of a JSON integer or an ``"i:"`` text: a Variant int has at most 19
#: (and u64 ids 20).  Python's ``int()`` is quadratic in the digits, and raises a
#: plain ValueError past ``sys.get_int_max_str_digits()``.
_MAX_INT_DIGITS = 100
_CANONICAL_NAN = 0x7FF8000000000000
_f64 = struct.Struct("<d")
_u64 = struct.Struct("<Q")
_NAN_TEXT = re.compile(r"nan\(0x([0-9a-fA-F]{1,16})\)\Z")
# What "f:" may hold: a JSON-like decimal (sign, digits, fraction, exponent) or inf/nan.
_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_INT_TEXT = re.compile(r"[+-]?\d+\Z")


def _nonfinite_text(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    bits = _u64.unpack(_f64.pack(x))[0]
    return "nan" if bits == _CANONICAL_NAN else f"nan(0x{bits:016x})"


def _float_text(x: float) -> str:
    """The shortest text that reads back to exactly ``x`` (``repr``), or inf/-inf/nan."""
    return repr(x) if math.isfinite(x) else _nonfinite_text(x)


def _json_number(x: float) -> float | str:
    """A float inside ``args``: a JSON number when JSON can hold it, else its text."""
    return x if math.isfinite(x) else _nonfinite_text(x)


def _parse_nonfinite(text: str) -> float | None:
    if text in ("inf", "+inf"):
        return math.inf
    if text == "-inf":
        return -math.inf
    if text == "nan":
        return math.nan
    m = _NAN_TEXT.match(text)
    if m:
        value: float = _f64.unpack(_u64.pack(int(m.group(1), 16)))[0]
        if value != value:
            return value
    return None


def _parse_float_text(text: str, path: str) -> float:
    if _FLOAT_TEXT.match(text):
        return float(text)
    special = _parse_nonfinite(text)
    if special is None:
        raise JSONFormatError(f"{text!r} is not a float (write digits, inf, -inf or nan)", path)
    return special


def _arg_float(x: Any, path: str) -> float:
    """A float component: a JSON number, inf/-inf/nan text, or null (0.0, as the engine reads it)."""
    if type(x) is float or type(x) is int:
        return float(x)
    if x is None:
        return 0.0
    if isinstance(x, str):
        special = _parse_nonfinite(x)
        if special is not None:
            return special
    raise JSONFormatError(f"expected a number, got {_kind(x)}", path)


def _floats(args: list[Any], path: str) -> list[float]:
    """Float components (see :func:`_arg_float`); the path of each is only made for a bad one."""
    return [float(x) if type(x) is float or type(x) is int else _arg_float(x, f"{path}[{i}]")
            for i, x in enumerate(args)]


def _arg_int(x: Any, path: str, bits: int) -> int:
    """An int component: a JSON integer (or an integral float) that fits ``bits`` signed bits."""
    if type(x) is float and x.is_integer():
        x = int(x)
    if type(x) is not int:
        raise JSONFormatError(f"expected an integer, got {_kind(x)}", path)
    limit = 1 << (bits - 1)
    if not -limit <= x < limit:
        raise JSONFormatError(f"{x} does not fit in {bits} bits", path)
    return x


def _kind(x: Any) -> str:
    if x is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(x), type(x).__name__)
