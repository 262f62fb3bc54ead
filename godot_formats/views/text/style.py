"""The text rules of each engine family, and which family a dialect or an engine version gets.

The rules are data so that the writer and the key order read one object instead of
asking about versions at every step.
"""

from __future__ import annotations

import re
from collections.abc import Callable as _Fn

import attrs

from ...core.dialects import Dialect, get_dialect
from ...core.errors import EncodeError
from .floats import _float_3, _float_40, _float_45, _rtos_fix_3, _rtos_fix_40, _rtos_fix_45


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

    Without ``version``: the dialect's own (its ``text_version``: ``godot4`` -> 4.5+,
    ``godot4.3`` -> 4.3, ``godot4.0`` -> 4.0-4.2, ``godot3`` -> 3.x; documented dialects
    follow their engine family's newest text, since their pages say nothing about text).
    A dialect without one has no text form here, which is refused rather than guessed.
    """
    d = get_dialect(dialect)
    if version is None:
        version = d.text_version
        if version is None:
            raise EncodeError(f"{d.name} has no text form in this library (no engine of its version can be run "
                              "to check one); the JSON form keeps every value exactly")
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if m is None:
        raise ValueError(f"version {version!r} is not like '4.4' or '3.2.3'")
    major, minor = int(m.group(1)), int(m.group(2))
    if major == 3:
        return GODOT3_STYLE
    if major != 4:
        raise ValueError(f"no text rules for Godot {version}: only 3.x and 4.x")
    return GODOT40_STYLE if minor < 4 else GODOT44_STYLE if minor == 4 else GODOT45_STYLE
