"""What a file's first bytes say it is, in one place: the magics of the files Godot writes besides
``store_var`` data.  ``gf.open`` asks it which kind reads a file (:mod:`godot_formats.documents`),
the save reader asks it to name what it was given instead of a save, and the resource readers
check their own magics against it.

- ``RSRC``: a binary resource (``ResourceFormatSaverBinary``, core/io/resource_format_binary.cpp);
- ``RSCC``: the same, compressed (``FileAccessCompressed`` with the ``RSCC`` magic);
- ``[gd_resource``/``[gd_scene``: the first tag of a text resource or scene
  (scene/resources/resource_format_text.cpp), after what the engines' tokenizer passes over
  (``VariantParser::get_token``) and a byte order mark, which both engines refuse but a later one
  may not: read all the same.
"""

from __future__ import annotations

import re

from .compression import RSCC_MAGIC

__all__ = ["RESOURCE_MAGICS", "RSCC_MAGIC", "RSRC_MAGIC", "SCENE_NOT_READ", "SKIPPED", "resource_form"]

#: What every reader says of a scene (``[gd_scene ...]``, a ``.tscn``): named, and not read yet.
SCENE_NOT_READ = "this is a scene ([gd_scene ...], a .tscn file), not a resource save: scenes are not read yet"

RSRC_MAGIC = b"RSRC"
#: The first bytes of a binary resource file (``.res``), plain or compressed: ``store_var`` data
#: never starts so (a 1 GiB length, or type 0x52).
RESOURCE_MAGICS = (RSRC_MAGIC, RSCC_MAGIC)

#: What the engines' tokenizer (``VariantParser::get_token``) passes over between tokens: every
#: character up to a space, and ``;`` comments to the end of their line.  Files made of tags and
#: values (ConfigFile text, a text resource's first tag) are read past it.
SKIPPED = r"(?:[\x00-\x20]+|;[^\n]*)*"

_LEADING = re.compile(b"(?:\xef\xbb\xbf)?" + SKIPPED.encode())
_TAGS = ((b"[gd_resource", "text"), (b"[gd_scene", "scene"))


def resource_form(data: bytes) -> str | None:
    """"binary", "text", "scene" or None (not a resource file), from the first bytes (after any
    number of blank and comment lines, as the engines read them)."""
    if data[:4] in RESOURCE_MAGICS:
        return "binary"
    at = _LEADING.match(data).end()  # type: ignore[union-attr]  # the pattern matches the empty string
    return next((form for tag, form in _TAGS if data.startswith(tag, at)), None)
