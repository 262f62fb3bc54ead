"""Which engine version wrote a ConfigFile, told from its text: the type names and the spacing of its
values and the way its sections and keys are written (:data:`MARKS`, one row per clue), then the
encryption layer's version when the text names none.

Both engines read each other's value text (Godot 4 reads ``Vector2( 1, 2 )`` and ``PoolIntArray``;
Godot 3 reads ``Vector2(1, 2)``), so a file whose text names no version reads the same in both: it is
taken as Godot 4's, and a migration to Godot 4 leaves it as it is.
"""

from __future__ import annotations

import functools
import re

import attrs

from ..core.renames import GODOT3_TO_GODOT4
from ..migration.objects import CLASS_RULES

__all__ = ["Mark", "MARKS", "GODOT4_ONLY", "GODOT4_ONLY_LITERALS", "text_family", "blank_strings"]


@attrs.frozen
class Mark:
    """One clue: a pattern over the file's text (outside strings, unless ``in_strings``: a quoted key and
    a property name are strings), the engine family that writes it, and the words for a reader."""

    family: int
    pattern: str
    words: str
    in_strings: bool = False
    #: Text every match holds one of: a mark none of whose literals is in the file is not looked for
    #: (``str.__contains__`` is a fast scan; a pattern of alternatives tries each at every character).
    literals: tuple[str, ...] = ()

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.M)


_MATH = r"(?:Vector2|Vector3|Rect2|Transform2D|Plane|AABB|Basis|Color)"
#: Classes that are Godot 3's alone (renamed in Godot 4: core.renames), and stored properties of Godot 3's
#: alone (renamed in Godot 4: migration.objects' rules): an ``Object(...)`` naming one is Godot 3 text.
_GODOT3_CLASSES = "|".join(sorted(map(re.escape, (n for n, m in GODOT3_TO_GODOT4.items() if m != n))))
_GODOT3_PROPERTIES = "|".join(sorted({re.escape(p.godot3) for r in CLASS_RULES for p in r.properties
                                      if p.godot3 is not None and p.godot3 != p.godot4}))
_GODOT4_PROPERTIES = "|".join(sorted({re.escape(p.godot4) for r in CLASS_RULES for p in r.properties
                                      if p.godot4 is not None and p.godot3 != p.godot4}))
_GODOT4_ONLY = (r"\b(?:Vector[234]i|Vector4|Rect2i|Transform3D|Quaternion|Projection|Packed\w*Array|"
                r"Callable|Signal|StringName)\s*\(|&\"|\b(?:Array|Dictionary)\[|\binf_neg\b")
#: Value text only Godot 4 writes and only Godot 4 reads: Godot 3.2.3's reader stops at it (measured:
#: ``Quaternion``, ``Transform3D``, ``PackedInt32Array``, ``inf_neg``, ``&"name"``, typed containers);
#: every match holds one of :data:`GODOT4_ONLY_LITERALS`.
GODOT4_ONLY = re.compile(_GODOT4_ONLY)
GODOT4_ONLY_LITERALS = ("i(", "i (", "Vector4", "3D", "Quaternion", "Projection", "Packed", "Callable", "Signal",
                        "StringName", '&"', "Array[", "Dictionary[", "inf_neg")
MARKS: tuple[Mark, ...] = (
    Mark(2, r"\b(?:Matrix32|Matrix3|IntArray|RealArray|StringArray|Vector2Array|Vector3Array|ColorArray|ByteArray|"
            r"Image|InputEvent)\s*\(", "Godot 2 type names (Matrix32, IntArray ...)",
         literals=("Matrix3", "IntArray", "RealArray", "StringArray", "2Array", "3Array", "ColorArray", "ByteArray",
                   "Image", "InputEvent(", "InputEvent (")),
    Mark(3, r"\b(?:Pool\w*Array|Transform|Quat)\s*\(", "Godot 3 type names (PoolIntArray, Transform, Quat)",
         literals=("Pool", "Transform", "Quat")),
    Mark(3, _MATH + r"\( ", "Godot 3's spaced constructors (Vector2( 1, 2 ))", literals=("( ",)),
    Mark(3, r"[=,:\[(] ?\[ ", "Godot 3's spaced arrays ([ 1, 2 ])", literals=("[ ",)),
    Mark(3, r"Object\((?:" + _GODOT3_CLASSES + r"),", "Objects of classes Godot 4 renamed (Reference, Spatial ...)",
         literals=("Object(",)),
    Mark(3, r'"(?:' + _GODOT3_PROPERTIES + r')":', "Godot 3's names of input event properties (scancode ...)", True,
         literals=('":',)),
    Mark(3, r"\n\[\][ \t\r]*$", "the header [] of the section \"\", which only Godot 3 writes", literals=("[]",)),
    Mark(4, _GODOT4_ONLY, "Godot 4 type names (Vector2i, Transform3D, PackedInt32Array, &\"name\", typed containers)",
         literals=GODOT4_ONLY_LITERALS),
    Mark(4, _MATH + r"\((?! )(?!\))", "Godot 4's unspaced constructors (Vector2(1, 2))",
         literals=("2(", "3(", "2D(", "Plane(", "AABB(", "Basis(", "Color(")),
    Mark(4, r'"(?:' + _GODOT4_PROPERTIES + r')":', "Godot 4's names of input event properties (keycode ...)", True,
         literals=('":',)),
    Mark(4, r'\n"(?:[^"\\\n]|\\.)*"[ \t]*=', "quoted keys, which only Godot 4 writes", True, literals=('"',)),
)

#: A string, to the end of the text when it has no end (possessive: linear on any text, one match per string).
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\Z)', re.S)


def blank_strings(text: str) -> str:
    """The text with every string's content taken out (a string's text is no clue to anything)."""
    return _STRING.sub('""', text)


def text_family(text: str) -> tuple[int | None, list[str]]:
    """The engine family (2, 3 or 4) whose marks the text holds, and the marks found (None and [] when
    it holds none).  A hand-edited file that mixes families goes to the one with the most marks.
    Each mark is looked for only when its literals are in the text, and counted only in a mix."""
    text = "\n" + text  # every line starts after a newline: the marks of a line's start look for "\n"
    bare: str | None = None
    present: list[int] = []
    for i, mark in enumerate(MARKS):
        if not any(literal in text for literal in mark.literals):
            continue
        if not mark.in_strings and bare is None:
            bare = blank_strings(text)
        if mark.regex.search(text if mark.in_strings else bare) is not None:  # type: ignore[arg-type]
            present.append(i)
    if not present:
        return None, []
    families = {MARKS[i].family for i in present}
    if len(families) == 1:
        return families.pop(), [MARKS[i].words for i in present]
    counts: dict[int, int] = {}
    for i in present:
        mark = MARKS[i]
        where = text if mark.in_strings or bare is None else bare
        counts[mark.family] = counts.get(mark.family, 0) + len(mark.regex.findall(where))
    best = max(counts, key=lambda f: (counts[f], f))
    return best, [MARKS[i].words for i in present]
