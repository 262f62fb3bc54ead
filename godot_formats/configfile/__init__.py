"""ConfigFile text: ``settings.cfg``, key bindings, ``save_encrypted_pass`` saves, ``override.cfg``,
``project.godot``, ``export_presets.cfg``, ``*.import`` and the class cache: one text format of
``[section]`` headers and ``key=value`` lines, values in Godot's text form.

One module per job, as :mod:`plistlib` keeps a reader beside its writer: :mod:`.text` (reading as
``ConfigFile::_parse`` reads), :mod:`.writer` (``ConfigFile::save``, each engine's rules),
:mod:`.dialect` (which engine wrote it), :mod:`.model` (the document: exact text, edits, conversion).
"""

from __future__ import annotations

from .model import ConfigFile, Section, read_config
from .text import Entry, Header, engine_view, parse
from .writer import encode_key, encode_to_text, readback_changes

__all__ = ["ConfigFile", "Section", "read_config", "Entry", "Header", "engine_view", "parse", "encode_key",
           "encode_to_text", "readback_changes"]
