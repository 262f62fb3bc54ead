"""The files that share ConfigFile's text, one row each (:data:`FORMS`), as ``tarfile`` has a row per
compression: which file a row is (its names, or its first line), how its engine writes it anew, and
whether a change of engine version is the library's to make.

- ``configfile``: ``ConfigFile.save`` (``settings.cfg``, key bindings, a game's save): :mod:`.writer`.
- ``project_settings``: ``project.godot`` and ``override.cfg``, written by
  ``ProjectSettings::_save_settings_text`` (``core/config/project_settings.cpp``; 3.x ``core/project_settings.cpp``):
  seven comment lines, ``config_version`` (4 in Godot 3, 5 in Godot 4), then the sections sorted by
  name, keys in the order they were set (measured on 3.2.3 and 4.6: fixtures/configfile/project_*.jsonl).
  Between engine versions the editor's project converter renames hundreds of settings as well, so a
  version change is refused here rather than half done: a ``config_version=5`` file with Godot 3's
  setting names would load in Godot 4 with those settings silently ignored.
- ``export_presets``, ``import`` (``*.import``) and ``class_cache``
  (``.godot/global_script_class_cache.cfg``): editor files, which the editor writes anew on
  export, import and scan (each with its own code: ``EditorFileSystem`` writes a ``.import`` line by
  line); read and edited here with their text kept, never written anew nor converted.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any

import attrs

from ..core.dialects import Dialect
from .text import Entry, Header
from .writer import encode_pieces

__all__ = ["Form", "FORMS", "form_of", "PROJECT_HEADER", "CONFIG_VERSIONS"]

Pieces = tuple[str, "list[Header | Entry]"]

#: What ``ProjectSettings::_save_settings_text`` writes first, in both engines (measured).
PROJECT_HEADER = ("; Engine configuration file.\n"
                  "; It's best edited using the editor UI and not directly,\n"
                  "; since the parameters that go here are not all obvious.\n"
                  ";\n"
                  "; Format:\n"
                  ";   [section] ; section goes between []\n"
                  ";   param=value ; assign values to parameters\n"
                  "\n")
#: ``ProjectSettings::CONFIG_VERSION`` of each engine major version (3.2.3 writes 4, 4.6 writes 5).
CONFIG_VERSIONS = {3: 4, 4: 5}


def _project_pieces(sections: Mapping[str, Mapping[str, Any]], d: Dialect) -> Pieces:
    """``_save_settings_text``: the header, ``config_version`` (and ``custom_features``), then every
    section sorted by name, the section "" first and without a header."""
    top = dict(sections.get("", {}))
    version = top.pop("config_version", CONFIG_VERSIONS.get(d.major, 5))
    head = PROJECT_HEADER + f"config_version={version}\n"
    lead: dict[str, dict[str, Any]] = {"": {"config_version": version}}
    if "custom_features" in top:
        features = top.pop("custom_features")
        head += f'custom_features="{features}"\n'
        lead[""]["custom_features"] = features
    head += "\n"
    rest = {name: sections[name] for name in sorted(n for n in sections if n)}
    if top:
        rest = {"": top, **rest}
    text, pieces = encode_pieces(rest, d, start=len(head))
    leading = [Entry("", "config_version", version, len(PROJECT_HEADER), len(PROJECT_HEADER) + 15,
                     len(PROJECT_HEADER) + 15 + len(str(version)))]
    if "custom_features" in lead[""]:
        at = leading[0].end + 1
        leading.append(Entry("", "custom_features", lead[""]["custom_features"], at, at + 16, len(head) - 2))
    return head + text, leading + pieces


@attrs.frozen
class Form:
    """One kind of file written in ConfigFile's text: ``names`` (file names, ``fnmatch`` patterns),
    ``first_line`` (what its engine writes first, when the name is not known), ``write`` (the whole
    text anew; None: only its engine writes it anew, so every change of engine version is refused),
    and ``convert`` (None: values convert one by one to another engine version; else why a change of
    major version is refused)."""

    name: str
    description: str
    names: tuple[str, ...] = ()
    first_line: str | None = None
    write: Callable[[Mapping[str, Mapping[str, Any]], Dialect], Pieces] | None = encode_pieces
    convert: str | None = None
    #: The engine family its text names without any value saying so (project settings: ``config_version``).
    family: Callable[[str], int | None] = lambda text: None
    family_clue: str = ""  # what of the text tells the family, in words


_EDITOR = "the editor writes this file anew ({what}): converting it to another engine version is the editor's job"

_CONFIG_VERSION = re.compile(r"(?m)^config_version=(\d+)[ \t\r]*$")
_FAMILY_OF_VERSION = {version: major for major, version in CONFIG_VERSIONS.items()}


def _project_family(text: str) -> int | None:
    """Godot 3 writes ``config_version=4`` and Godot 4 ``config_version=5``, whatever the settings hold."""
    m = _CONFIG_VERSION.search(text)
    return _FAMILY_OF_VERSION.get(int(m.group(1))) if m is not None else None


FORMS: tuple[Form, ...] = (
    Form("project_settings", "project settings (project.godot, override.cfg: ProjectSettings.save_custom)",
         ("project.godot", "*override.cfg"), PROJECT_HEADER.split("\n")[0], _project_pieces,
         "project settings change version through the editor's project converter, which renames settings too "
         "(a file with Godot 3's setting names under config_version=5 loads with those settings ignored); "
         "godot-formats reads and edits project.godot, and converts the ConfigFile saves and settings of games",
         _project_family, "config_version (4: Godot 3, 5: Godot 4)"),
    Form("export_presets", "export presets (export_presets.cfg)", ("export_presets.cfg",), write=None,
         convert=_EDITOR.format(what="Project > Export")),
    Form("import", "import settings (*.import)", ("*.import",), write=None, convert=_EDITOR.format(what="on import")),
    Form("class_cache", "the global script class cache (.godot/global_script_class_cache.cfg)",
         ("global_script_class_cache.cfg",), write=None, convert=_EDITOR.format(what="when it scans the project")),
    Form("configfile", "ConfigFile text (ConfigFile.save: settings, key bindings, saves)"),
)


def form_of(path: str | PurePath | None, text: str) -> Form:
    """The row of a file: by its name when there is one, else by what its engine writes first; a
    plain ConfigFile otherwise."""
    name = PurePath(path).name if path is not None else None
    for form in FORMS:
        if name is not None and any(fnmatch.fnmatchcase(name, pattern) for pattern in form.names):
            return form
    for form in FORMS:
        if form.first_line is not None and text.lstrip("\ufeff").startswith(form.first_line):
            return form
    return FORMS[-1]
