"""Does this resource file hold code?  Found by parsing, never by loading or matching text.

Loading a resource runs the scripts it embeds (``_init``, ``_static_init``, member initialisers:
godot#98168, godot-proposals#4925), and a regular-expression scanner misses what hides in a
compressed file, a nested sub-resource, or a reference to a script outside the project.  Here the
file is parsed (:mod:`.binary`, :mod:`.text`) and every resource and every reference is looked
at, whatever its depth:

- ``embedded-script``: a sub-resource (or the main resource) that is a script, or that holds
  ``script/source``;
- ``script-outside-project``: a reference to a script, scene or extension whose path is not
  inside ``res://`` (``user://``, an absolute path, ``..``): the game would load code from there;
- ``code-class``: a resource of a class that carries or loads code (a scene, an extension) in a
  file that should only hold data.

An empty list means none was found.  This is the question users ask of a shared save; it is
not an antivirus (a script the save points to inside ``res://`` is the game's own code).
"""

from __future__ import annotations

from typing import Any, Iterator

import attrs

from .model import SCRIPT_CLASSES, ExtResource, Resource, ResourceFile, embedded_scripts, values_in

__all__ = ["Finding", "SCRIPT_CLASSES", "CODE_CLASSES", "scan", "embedded_scripts"]

#: Classes that load code or nodes (a scene instantiates its scripts), which a data file does not need.
CODE_CLASSES = frozenset({"PackedScene", "GDExtension", "GDNativeLibrary", "NativeScript"}) | SCRIPT_CLASSES
#: Reference types that make the engine load code from their path.
_LOADS_CODE = CODE_CLASSES | {"Script"}


@attrs.frozen
class Finding:
    """One reason the file may run code: ``kind`` (see the module docstring), ``where`` (which
    resource or reference), and the sentence that explains it."""

    kind: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.message}"


def _where(res: Resource, rf: ResourceFile) -> str:
    return "the main resource" if res is rf.main else f"sub-resource {res.id} ({res.type})"


def _outside(path: str) -> str | None:
    """Why ``path`` is outside the project, or None."""
    if not path.startswith("res://"):
        return "is not inside res://" if "://" in path or path.startswith(("/", "\\")) or path[1:3] == ":\\" \
            else "is a relative path, outside res://"
    if ".." in path[6:].replace("\\", "/").split("/"):
        return "climbs out of res:// with '..'"
    return None


def _references(value: Any) -> Iterator[ExtResource]:
    """Every ExtResource inside ``value`` (old-style inline references included), in file order."""
    return (v for v in values_in(value) if isinstance(v, ExtResource))


def scan(rf: ResourceFile) -> list[Finding]:
    """Every finding in ``rf``, in file order (empty: nothing that runs code was found)."""
    found: list[Finding] = []
    for res in embedded_scripts(rf):
        found.append(Finding("embedded-script", _where(res, rf),
                             f"a {res.type} embedded in the file: Godot runs it when it loads the file"))
    seen: set[int] = set()
    listed = {id(ref) for ref in rf.external}
    references = list(rf.external)
    for res in (*rf.resources, rf.main):
        for value in res.properties.values():
            references.extend(r for r in _references(value) if id(r) not in listed)
    for ref in references:
        if id(ref) in seen:
            continue
        seen.add(id(ref))
        why = _outside(ref.path)
        if why is not None and (ref.type in _LOADS_CODE or ref.path.endswith((".gd", ".cs", ".tscn", ".scn",
                                                                              ".gdextension", ".gdns", ".so",
                                                                              ".dll", ".dylib"))):
            found.append(Finding("script-outside-project", f"external resource {ref.path!r} ({ref.type})",
                                 f"the path {why}: Godot would load code from there"))
    for res in (*rf.resources, rf.main):
        if res.type in CODE_CLASSES - SCRIPT_CLASSES:
            found.append(Finding("code-class", _where(res, rf), f"a {res.type} is not data: loading it runs code"))
    for ref in rf.external:
        if ref.type in CODE_CLASSES - SCRIPT_CLASSES - {"Script"} and _outside(ref.path) is None:
            found.append(Finding("code-class", f"external resource {ref.path!r} ({ref.type})",
                                 f"a save that loads a {ref.type} instantiates its scripts"))
    return found
