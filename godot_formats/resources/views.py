"""A resource file as a tree (``godot-formats dump --tree``): each resource, then each property's
value tree in the library's own view, the references as what they are.  The JSON form is
:mod:`.jsondoc`'s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..views.tree import tree_lines
from .jsondoc import value_json
from .model import ExtResource, Resource, ResourceFile, holds_reference

__all__ = ["resource_tree"]


def resource_tree(rf: ResourceFile, *, max_elements: int | None = 16) -> Iterator[str]:
    """The file as an indented tree: each resource, then each property's value tree."""
    dialect = rf.dialect
    yield f"{rf.format} resource, Godot {rf.engine}, format {rf.version}" + (
        f", {rf.compression}" if rf.compression else "") + (", big-endian" if rf.byteorder == "big" else "")
    for ext in rf.external:
        yield f"external {ext.id}: {ext.type} {ext.path}"
    for res in (*rf.resources, rf.main):
        yield f"{'main resource' if res is rf.main else 'sub-resource ' + str(res.id)}: {res.type}"
        for name, value in res.properties.items():
            if isinstance(value, (Resource, ExtResource)) or holds_reference(value):
                yield f"  {name}: {_describe_reference(value)}"
                continue
            lines = tree_lines(value, dialect, max_elements=max_elements)
            yield f"  {name}: {next(lines)}"
            for line in lines:
                yield "    " + line


def _describe_reference(value: Any) -> str:
    if isinstance(value, Resource):
        return f"SubResource {value.id} ({value.type})"
    if isinstance(value, ExtResource):
        return f"ExtResource {value.path} ({value.type})"
    return f"{type(value).__name__} holding references: " + str(value_json(value))[:200]
