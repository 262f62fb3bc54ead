"""Resource saves (``ResourceSaver.save``): ``.tres`` text, ``.res`` binary and compressed ``.res``,
opened, edited, converted and scanned without loading what they reference or running any script
they hold (docs/resources.md).

One module per job: :mod:`.model` (what a file holds), :mod:`.ids` (the binary format's own
Variant ids, as data), :mod:`.binary` and :mod:`.text` (each form, reader and writer side by side),
:mod:`.classes` (Godot 4's renames of Godot 3 classes), :mod:`.conversion` (between engine
versions), :mod:`.scan` (what would run code), :mod:`.opening` (``open_resource``).
"""

from __future__ import annotations

from . import conversion as conversion  # registers the converter with the model
from .binary import read_binary, write_binary
from .model import ExtResource, Resource, ResourceFile
from .opening import open_resource, resource_form, scan_file, scan_resource
from .scan import Finding, scan
from .text import read_text

__all__ = ["ExtResource", "Resource", "ResourceFile", "open_resource", "scan_resource", "scan_file", "resource_form",
           "Finding", "scan", "read_binary", "write_binary", "read_text"]
