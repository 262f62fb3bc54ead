"""What the engines' class database says about code: the one statement of which classes are
code, which properties attach code, which paths load it and how the engines compare names.

Every check that keeps a save from running code reads this module (the scanner, the ``allow_scripts``
gate of the resource writers, the ``engine`` command's gate), so a class added here is known to all
of them at once.  The sources, in the engines' own trees:

- **Scripts** (``class X : public Script``): ``Script`` (``core/script_language.h`` in 3.x,
  ``core/object/script_language.h`` in 4.x); ``GDScript`` (``modules/gdscript/gdscript.h``);
  ``CSharpScript`` (``modules/mono/csharp_script.h``); ``VisualScript``
  (``modules/visual_script/visual_script.h``, 3.x); ``NativeScript``
  (``modules/gdnative/nativescript/nativescript.h``, 3.x) and ``PluginScript``
  (``modules/gdnative/pluginscript/pluginscript_script.h``, 3.x); ``ScriptExtension``
  (``core/object/script_language_extension.h``, 4.x).
- **Classes that load or run code without being a Script**: ``PackedScene``
  (``scene/resources/packed_scene.h``: loading one loads every script its nodes name, and
  instancing it runs them); ``GDNativeLibrary`` and ``GDNative`` (``modules/gdnative/gdnative.h``,
  3.x: a native library, loaded into the process); ``GDExtension``
  (``core/extension/gdextension.h``, 4.x: the same in 4.x); ``GDScriptNativeClass``
  (``modules/gdscript/gdscript.h``: instantiates any engine class by name); ``EditorScript``
  (``editor/editor_script.h``: an object made to run its script's ``_run``).
- **Properties**: ``script`` (``CoreStringNames::_script``: ``Object::set`` attaches a script and
  makes an instance, whose ``_init`` runs) and ``script/source`` (``GDScript::_set``: the source
  code of an embedded script, which the loader compiles).
- **Paths**: ``ResourceFormatLoaderGDScript::get_recognized_extensions`` gives ``gd``, ``gdc``
  (compiled) and ``gde`` (encrypted, 3.x); a path's extension is compared without case
  (``ResourceFormatLoader::recognize_path``, ``nocasecmp_to``).  Any resource file (``.tres``,
  ``.res``, ``.scn``, ``.tscn`` ...) can embed a script, so *every* path outside ``res://`` can
  carry code, whatever its extension: the extensions here only choose the wording.
- **Names**: Godot 3 turns the text's strings into C strings for ``ClassDB::instance`` and
  ``Object::set`` (``String::utf8`` / ``CharString``), so a name is cut at its first NUL:
  ``"GDScript\\u0000"`` is ``GDScript`` to it (measured on 3.2.3: the embedded script ran).  Godot 4.6
  refuses such a name.  Names are compared here as Godot 3 reads them.
"""

from __future__ import annotations

__all__ = ["SCRIPT_CLASSES", "CODE_LOADING_CLASSES", "CODE_CLASSES", "CODE_PROPERTIES", "SCRIPT_EXTENSIONS",
           "CODE_EXTENSIONS", "engine_name", "extension", "is_script_path", "is_relative", "outside_project"]

#: The Script classes of Godot 2, 3 and 4: a resource of one of these is code.
SCRIPT_CLASSES = frozenset({
    "Script", "GDScript", "CSharpScript", "VisualScript", "NativeScript", "PluginScript", "ScriptExtension",
})
#: Classes that are not scripts but load or run code: a save holds none of them.
CODE_LOADING_CLASSES = frozenset({
    "PackedScene", "GDNativeLibrary", "GDNative", "GDExtension", "GDScriptNativeClass", "EditorScript",
})
#: Every class whose instance is, loads or runs code.
CODE_CLASSES = SCRIPT_CLASSES | CODE_LOADING_CLASSES
#: The properties that attach code to an object: a script, or an embedded script's source.
CODE_PROPERTIES = ("script", "script/source")
#: Extensions the engines load as scripts (GDScript source, compiled, encrypted; C#; VisualScript;
#: NativeScript).
SCRIPT_EXTENSIONS = frozenset({"gd", "gdc", "gde", "cs", "vs", "gdns"})
#: Extensions of files that are, or load, code: scripts, scenes, native libraries and their descriptions.
CODE_EXTENSIONS = SCRIPT_EXTENSIONS | frozenset({
    "tscn", "scn", "escn", "gdnlib", "gdextension", "so", "dll", "dylib", "framework", "wasm",
})


def engine_name(name: str) -> str:
    """``name`` as Godot 3 reads it: cut at the first NUL."""
    return name.split("\0", 1)[0]


def extension(path: str) -> str:
    """The extension of ``path`` as the loaders compare it: lower case, without the dot ("" for none)."""
    base = engine_name(path).replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def is_script_path(path: str) -> bool:
    """Whether the engines load ``path`` as a script (by its extension, without case)."""
    return extension(path) in SCRIPT_EXTENSIONS


def is_relative(path: str) -> bool:
    """Whether the engines resolve ``path`` beside the file that names it: no scheme, not absolute
    (``/``, ``\\``, a drive letter)."""
    return "://" not in path and not path.startswith(("/", "\\")) and path[1:3] not in (":\\", ":/")


def outside_project(path: str) -> str | None:
    """Why loading ``path`` reaches outside the game's own files (``res://``), or None when it
    does not: ``user://`` (where a game writes its saves, and where a second file of an attacker's
    lands beside them), an absolute path, a relative path (resolved beside the file that names it,
    which for a save is ``user://``), any other scheme, or a ``res://`` path that climbs out with
    ``..``."""
    path = engine_name(path)
    if path.startswith("res://"):
        if ".." in path[6:].replace("\\", "/").split("/"):
            return "climbs out of res:// with '..'"
        return None
    if path.startswith("user://"):
        return "is not inside res:// (user:// holds the game's saves and whatever is written beside them)"
    if "://" in path:
        return f"is not inside res:// (the scheme {path.split('://', 1)[0]!r:.40})"
    if not is_relative(path):
        return "is not inside res:// (an absolute path)"
    return "is a relative path, resolved beside the file that names it (for a save: in user://), not inside res://"
