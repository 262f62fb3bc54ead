"""The three ways a Godot byte blob or value can be refused.

All of them are ``ValueError`` subclasses, so callers that only care about
"bad input" can catch one thing; each carries enough context (offset, path)
to point at the exact spot.
"""

from __future__ import annotations

__all__ = ["GodotFormatsError", "DecodeError", "EncodeError", "ConversionError", "Loss"]

from typing import Any, Sequence

import attrs


class GodotFormatsError(ValueError):
    """Base class of every error this package raises on purpose."""


class DecodeError(GodotFormatsError):
    """Bytes that cannot be decoded in the chosen dialect.

    ``offset`` is the byte position (from the start of the buffer given to
    the decoder) of the field that was wrong; ``reason`` says what was wrong.
    """

    def __init__(self, offset: int, reason: str) -> None:
        self.offset = offset
        self.reason = reason
        super().__init__(f"at byte {offset}: {reason}")


class EncodeError(GodotFormatsError):
    """A Python value that the chosen dialect cannot represent."""

    def __init__(self, reason: str, path: str = "") -> None:
        self.reason = reason
        self.path = path
        super().__init__(f"{path}: {reason}" if path else reason)


@attrs.frozen
class Loss:
    """One change a conversion made (or would make) to the data."""

    path: str
    reason: str
    before: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same(a, b)), hash=False)
    after: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same(a, b)), hash=False)

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.reason}"


def _same(a: Any, b: Any) -> bool:
    """Losses compare their values as data: a NaN in one is the NaN in the other."""
    from .keys import same_value
    try:
        return same_value(a, b)
    except (TypeError, ValueError):
        return bool(a == b)


class ConversionError(GodotFormatsError):
    """A strict conversion that would have lost or changed data.

    ``losses`` lists every change that the conversion would have made, each
    with its path inside the value, so nothing is hidden behind the first one.
    """

    def __init__(self, losses: Sequence[Loss]) -> None:
        self.losses = list(losses)
        lines = "\n".join(f"  {loss}" for loss in self.losses)
        super().__init__(f"conversion would change {len(self.losses)} value(s):\n{lines}")
