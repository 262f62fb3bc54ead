"""What a conversion between engine versions tells of what it changed: a :class:`Loss` (the data
changed or went) or a :class:`Note` (a name changed, the data kept).

They are plain records, and they live in the core because the core's
:class:`~godot_formats.core.errors.ConversionError` carries the losses: the record is defined
once, on the lowest floor that names it, and every converter (:mod:`godot_formats.migration`,
the resources' converter) makes the same two.  A loss compares its values as data
(:func:`~godot_formats.core.keys.same_value`: a NaN in one is the NaN in the other).
"""

from __future__ import annotations

from typing import Any

import attrs

from .keys import same_value

__all__ = ["Loss", "Note"]


def _same_data(a: Any, b: Any) -> bool:
    """Losses compare their values as data: a NaN in one is the NaN in the other."""
    try:
        return same_value(a, b)
    except (TypeError, ValueError):
        return bool(a == b)


@attrs.frozen
class Loss:
    """One change a conversion made (or would make) to the data."""

    path: str
    reason: str
    before: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same_data(a, b)), hash=False)
    after: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same_data(a, b)), hash=False)

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.reason}"


@attrs.frozen
class Note:
    """A change a conversion made that keeps the data (a class Godot 4 knows under another name),
    told so that nothing changes without a record, and not a :class:`Loss`: ``strict`` allows it."""

    path: str
    text: str

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.text}"
