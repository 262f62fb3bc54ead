"""A synthetic type and dialect, registered the way docs/architecture.md tells a contributor to.

Loaded as a pytest plugin (``-p vector5``) by tests/project/test_new_type_and_dialect.py, in a
process of its own, so the rest of the suite never sees them (a dialect is registered for the
whole process: detection would weigh it for every file).  In that process the suites that walk
every row and dialect run only what the new row and dialect reach: the cases their
parametrizations gain (an id naming ``Vector5`` or ``godot4.9``) and every test that is not
parametrized (it may walk every row inside); a case of another row or dialect runs in the main
suite as it would here.  Everything below is what the recipes say a new type
and a new dialect take; if any other place of the library needed a hand edit, a test run with
this plugin fails and names it.

- The type: its class, its registry row, its id in a dialect.
- The dialect: one ``register`` call.
"""

from __future__ import annotations

from typing import Any

import attrs

from godot_formats.core import registry
from godot_formats.core import types as t
from godot_formats.core.dialects import GODOT4, register
from godot_formats.core.switches import REAL


class Vector5(t.Components):
    """Five real numbers: a type no engine has, so that nothing can already know it."""

    __slots__ = ()
    x: float
    y: float
    z: float
    w: float
    v: float


ROW = registry.register_type(registry.math_row(
    "Vector5", Vector5, REAL, "x y z w v", majors=frozenset({4}), ordered=True,
    downgrade=registry.Downgrade("an Array of its 5 floats [x, y, z, w, v]", lambda v, d: list(v))))

#: Godot 4.4's table with Vector5 at the next free id.
ID = len(GODOT4.types)
DIALECT = register(attrs.evolve(
    GODOT4, name="godot4.9", description="a synthetic Godot 4 with Vector5 (id 39)", types=(*GODOT4.types, "Vector5"),
    prior=0.5, sibling="godot4"))


#: What an id of a case the new row or dialect adds names.
_NEW = ("Vector5", "vector5", "godot4.9", "godot4_9")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    kept = [item for item in items if getattr(item, "callspec", None) is None or any(n in item.name for n in _NEW)]
    dropped = [item for item in items if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
