"""Variant bytes from one engine version to another: decoded, the value converted
(:mod:`.values`), encoded again, with every loss reported (the bytes after the value too).

A call between the same dialects keeps the value's bytes exactly as they were.
"""

from __future__ import annotations

from ..core.codec import decoder_for, encoder_for
from ..core.dialects import get_dialect
from ..core.errors import ConversionError
from .losses import Loss, Note, check_policy
from .values import DialectLike, convert_value

__all__ = ["convert", "convert_with_report"]


def convert_with_report(data: bytes | bytearray | memoryview, source: DialectLike, target: DialectLike, *,
                        policy: str = "strict", allow_objects: bool = False,
                        notes: list[Note] | None = None) -> tuple[bytes, list[Loss]]:
    """:func:`convert`, also returning the list of losses (empty when lossless).

    ``source`` may be ``"auto"``: the dialect that reads the bytes completely
    (:func:`godot_formats.saves.reading.read_value`; bytes that several versions read as
    different values are ambiguous, and the caller chooses).  ``notes``, when given, gets
    the Object classes renamed without loss (:func:`convert_value`).
    """
    check_policy(policy)
    if source == "auto":
        return _convert_auto(bytes(data), target, policy, allow_objects, notes)
    src, dst = get_dialect(source), get_dialect(target)
    value, end = decoder_for(src, allow_objects).decode(data)
    losses: list[Loss] = []
    trailing = len(data) - end
    if trailing:
        losses.append(Loss("", f"{trailing} byte(s) after the value are not part of it (the engine ignores "
                               "them): not written", bytes(data[end:]), None))
    new_value = value
    found: list[Note] = []
    if src is not dst:
        new_value, value_losses = convert_value(value, src, dst, policy="lossy", notes=found)
        losses += value_losses
    if losses and policy == "strict":
        raise ConversionError(losses)  # every loss at once: the bytes after the value and the value's own
    if src is dst:  # nothing to convert: the value's bytes are kept exactly as they were
        return bytes(data[:end]), losses
    out = encoder_for(dst, allow_objects).encode(new_value)
    if notes is not None:
        notes += found
    return out, losses


def convert(data: bytes | bytearray | memoryview, source: DialectLike, target: DialectLike, *,
            policy: str = "strict", allow_objects: bool = False, notes: list[Note] | None = None) -> bytes:
    """Read ``data`` (raw ``var_to_bytes`` bytes, no length prefix) in ``source``, write it in ``target``.

    >>> convert(bytes.fromhex("0a000000" + "0000803f" * 4), "godot3", "godot4").hex()  # Quat -> Quaternion
    '0f0000000000803f0000803f0000803f0000803f'

    Raises :class:`~godot_formats.errors.ConversionError` (listing every loss)
    under ``policy="strict"``; use :func:`convert_with_report` to see what
    ``policy="lossy"`` changed.  ``allow_objects`` lets full Objects through
    (as inert data) and writes them in full; ``notes`` gets the classes they had renamed.
    """
    return convert_with_report(data, source, target, policy=policy, allow_objects=allow_objects, notes=notes)[0]


def _convert_auto(data: bytes, target: DialectLike, policy: str, allow_objects: bool,
                  notes: list[Note] | None) -> tuple[bytes, list[Loss]]:
    """The bytes in the dialect that reads them (one reading: godot_formats.saves.reading), converted."""
    from ..saves.reading import read_value

    reading = read_value(data, allow_objects=allow_objects)
    return convert_with_report(data, reading.dialect, target, policy=policy, allow_objects=allow_objects,
                               notes=notes)
