"""What a file's first bytes say it is, in one place: the magics of the files Godot writes besides
``store_var`` data.  ``gf.open`` asks it which kind reads a file (:mod:`godot_formats.documents`),
the save reader asks it to name what it was given instead of a save, and the resource readers
check their own magics against it.

- ``RSRC``: a binary resource (``ResourceFormatSaverBinary``, core/io/resource_format_binary.cpp);
- ``RSCC``: the same, compressed (``FileAccessCompressed`` with the ``RSCC`` magic);
- ConfigFile text (``settings.cfg``, ``project.godot`` ...): a ``[section]`` header or a ``key=``
  first (:func:`looks_like_config`);
- ``[gd_resource``/``[gd_scene``: the first tag of a text resource or scene
  (scene/resources/resource_format_text.cpp), after what the engines' tokenizer passes over
  (``VariantParser::get_token``) and a byte order mark, which both engines refuse but a later one
  may not: read all the same.
"""

from __future__ import annotations

import json
import re

from .compression import RSCC_MAGIC

__all__ = ["RESOURCE_MAGICS", "RSCC_MAGIC", "RSRC_MAGIC", "SCENE_NOT_READ", "SKIPPED", "resource_form",
           "looks_like_config"]

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


_SKIP_TEXT = re.compile(SKIPPED)
#: The magics of the other files Godot writes (project settings, encryption, compression, resources): text
#: that starts so is theirs, whatever follows.
_OTHER_MAGICS = frozenset({b"ECFG", b"GDEC", b"CEDG", b"GCPF", *RESOURCE_MAGICS})
_FIRST_KEY_END = re.compile(r"[=\n]")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+=*[\x00-\x20]*")
_BLANKS = "".join(map(chr, range(33)))


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def looks_like_config(data: bytes) -> bool:
    """Whether ``data`` begins as ConfigFile text does: after blanks and ``;`` comments, a ``[section]``
    header alone on its line (not a resource's ``[gd_resource ...]`` nor a JSON array), or a ``key=``
    (not base64, whose padding is a ``=`` too).  A BOM and bytes that are not UTF-8 are read as the
    engines read them (as the first characters of a key).  A sniff: only the ConfigFile reader
    (:mod:`godot_formats.configfile`) reads the rest."""
    head = bytes(data[:4096])
    if head[:4] in _OTHER_MAGICS:
        return False
    text = head.decode("utf-8", "surrogateescape")
    text = text[1:] if text.startswith("\ufeff") else text
    at = _SKIP_TEXT.match(text).end()  # type: ignore[union-attr]  # the pattern matches the empty string
    if "\0" in text[:at]:
        # Binary: a Variant's header puts NULs before any text (var_to_bytes("a=b") is a=b after them);
        # the engines pass over a NUL as a blank, so one after the first line (a crash's zeros) is text.
        return False
    if text.startswith("[", at):
        if text.startswith(("[gd_resource", "[gd_scene"), at) or _is_json(data):
            return False  # a resource, or a JSON array ('[1, 2]' is a header too, to the engine)
        close = text.find("]", at)
        line_end = text.find("\n", at)
        rest = text[close + 1:] if line_end < 0 else text[close + 1:line_end]
        return close >= 0 and (line_end < 0 or close < line_end) and not rest.strip(_BLANKS + ",") \
            and "\0" not in text[at:close]
    end = _FIRST_KEY_END.search(text, at)
    if end is None or text[end.start()] != "=" or end.start() <= at or "\0" in text[at:end.start()]:
        return False
    return _BASE64.fullmatch(text, at) is None
