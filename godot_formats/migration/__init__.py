"""Convert Variant data from one engine version's format to another's, never silently.

Reading bytes in one dialect and writing them in another is mostly renaming:
Godot 3's ``Quat`` is Godot 4's ``Quaternion``, ``Transform`` is ``Transform3D``,
``PoolIntArray`` is ``PackedInt32Array``, type ids move, a Godot 3 RID (no payload)
becomes RID 0.  None of that changes the data, so none of it is reported.

Everything that *does* change or drop data is a :class:`Loss`
with its path inside the value (``["player"]["inventory"][3]``, ``.scancode``,
``<key Vector2i(1, 2)>`` for a dictionary key itself):

* a type the target lacks (``Vector2i`` into Godot 3, ``PackedVector4Array``
  into 4.0-4.2, ...): see :data:`DOWNGRADES`, the table of what ``policy="lossy"``
  writes instead;
* a typed Array into a version without typed Arrays (Godot 3, 4.0-4.2), a typed
  Dictionary into 4.3 or older: the elements stay, the type goes;
* float64 components of math types (from a double-precision build) into a
  32-bit build: rounded to float32;
* an :class:`~godot_formats.types.EncodedObjectAsID`: an instance id only means
  something inside the process that wrote it, so ``lossy`` writes null;
* a RID with a non-zero id into Godot 3, which writes no RID payload at all;
* a string holding unpaired surrogates (Godot 3 accepted them) into Godot 4,
  which refuses them: ``lossy`` writes U+FFFD instead;
* full Objects whose class or properties were renamed between Godot 3 and 4,
  where the value's meaning changes (see :data:`CLASS_RULES` for properties, and
  :mod:`godot_formats.core.renames` for classes; a pure rename such as ``Spatial`` ->
  ``Node3D`` or ``InputEventKey.scancode`` -> ``keycode`` is not a loss).

A class renamed without loss is told as a :class:`Note` in the list the caller passes as
``notes=`` (the same words a resource conversion puts in its ``notes``).

``policy="strict"`` (the default) raises :class:`~godot_formats.errors.ConversionError`
listing every loss at once; ``policy="lossy"`` applies the documented downgrades and
returns the same list, so nothing changes without a record.

One module per job: :mod:`.losses` (the policies and the path each loss names; the records
themselves are the core's, :mod:`godot_formats.core.changes`), :mod:`.objects` (the class and
property rules of full Objects, as data), :mod:`.values` (the value walk: :func:`convert_value`,
:func:`convert_records`), :mod:`.encoded` (Variant bytes: :func:`convert`,
:func:`convert_with_report`).  The package stands below the save files and the resources, which
both convert through it (docs/architecture.md).
"""

from __future__ import annotations

from ..core.registry import Downgrade
from .encoded import convert, convert_with_report
from .losses import POLICIES, Loss, Note, format_path_key
from .objects import CLASS_RULES, KEYCODE_RANGES, ClassRule, PropertyRule
from .values import DOWNGRADES, convert_records, convert_value

__all__ = [
    "Loss", "Note", "POLICIES", "Downgrade", "DOWNGRADES", "PropertyRule", "ClassRule", "CLASS_RULES",
    "KEYCODE_RANGES", "convert", "convert_value", "convert_records", "convert_with_report", "format_path_key",
]
