"""An open save file's layers in words, outside in: the one wording of every command's line and
every report row (``godot-formats convert``'s detail, ``dump``'s header, a batch row's ``layers``)."""

from __future__ import annotations

from typing import Any

from .containers import container
from .reading import LAYER_BY_NAME

__all__ = ["describe_layers"]


def describe_layers(sf: Any) -> str:
    """The layers of an open save file, outside in, in words."""
    parts = [LAYER_BY_NAME[name].describe(info) for name in LAYER_BY_NAME
             if (info := getattr(sf, name)) is not None]
    parts.append(container(sf.container).words(sf))
    parts.append(sf.dialect.name)
    for name, n in sf.layers.get("trailing", {}).items():
        parts.append(f"{n} byte(s) after the {name} layer's end (kept; the engine never reads them)")
    return ", ".join(parts)
