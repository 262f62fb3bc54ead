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

The rules come from the engine sources (``core/variant/variant_parser.cpp``
``VariantWriter::write``, ``core/string/ustring.cpp`` ``num_scientific``,
``thirdparty/grisu2/grisu2.h``, ``core/templates/sort_array.h``) and are
checked against Godot 3.2.3 and 4.6 output in ``fixtures/``.  Each source has
its module: :mod:`.floats` (number printing), :mod:`.order` (the order of
Dictionary keys), :mod:`.style` (what changed between engine versions),
:mod:`.writer` and :mod:`.parser`; :mod:`.common` holds what the writer and
the parser must agree on.  What a type is (its names, its numbers and how they
are kept, its printer) both read from its row in :mod:`godot_formats.registry`.
"""

from __future__ import annotations

from ...core.errors import TextDecodeError
from .floats import grisu2_text, printf_g
from .parser import from_text
from .style import GODOT3_STYLE, GODOT40_STYLE, GODOT44_STYLE, GODOT45_STYLE, TextStyle, text_style
from .writer import c_escape, c_escape_multiline, text_writer, to_text

__all__ = [
    "to_text", "from_text", "text_writer", "TextDecodeError", "TextStyle", "text_style",
    # helpers that were public names of the single module this package replaced
    "GODOT3_STYLE", "GODOT40_STYLE", "GODOT44_STYLE", "GODOT45_STYLE",
    "c_escape", "c_escape_multiline", "grisu2_text", "printf_g",
]
