"""Godot 4's class renames, under the names this module gave them before they moved to
:mod:`godot_formats.core.renames` (the one table, read by the resource and the saves converters
alike).  The names stay importable from here.

``REPLACED_BY_A_BASE`` is :data:`~godot_formats.core.renames.APPROXIMATED`: every Godot 3 class that
Godot 4 loads as another class and so loses what made it itself (``ToolButton`` -> ``Button``,
``Portal`` -> ``Node3D``, ``DynamicFont`` -> ``FontFile`` ...).
"""

from __future__ import annotations

from ..core.renames import APPROXIMATED as REPLACED_BY_A_BASE
from ..core.renames import GODOT3_TO_GODOT4, GODOT4_TO_GODOT3

__all__ = ["GODOT3_TO_GODOT4", "GODOT4_TO_GODOT3", "REPLACED_BY_A_BASE"]
