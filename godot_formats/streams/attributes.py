"""The stream classes take only the attributes they have, and Godot 3's names for them.

A Python object takes any attribute it is given, so ``f.endian_swap = True`` (the name Godot 3's
``File`` used) or a typo such as ``b.bigendian = True`` would make a new attribute that nothing
reads, and the numbers would go on being written little-endian without a word.  The classes of
:mod:`godot_formats.streams` and :class:`~godot_formats.fileaccess.FileAccess` declare
``__slots__`` and derive from :class:`Strict`: an unknown name raises ``AttributeError`` naming
the closest one they have, and the Godot 3 names of :data:`GODOT3_NAMES` work as aliases, so a
GDScript port reads the same in Python.
"""

from __future__ import annotations

import difflib
import functools
from typing import TYPE_CHECKING, Any, ClassVar

__all__ = ["GODOT3_NAMES", "Strict"]

_set = object.__setattr__

#: Godot 3's names that Godot 4 changed, per class: {Godot 3 name: the name here (Godot 4's)}.
#: From the Godot 3.2 class reference: ``File`` had the property ``endian_swap`` and the method
#: ``get_len()``, which Godot 4's ``FileAccess`` calls ``big_endian`` and ``get_length()``.
#: ``StreamPeer.big_endian`` and ``StreamPeerBuffer.data_array`` have the same names in both, so
#: the other classes need no alias.
GODOT3_NAMES: dict[str, dict[str, str]] = {
    "FileAccess": {"endian_swap": "big_endian", "get_len": "get_length"},
}


@functools.cache
def _settable(cls: type) -> tuple[str, ...]:
    """The attributes an instance of ``cls`` can be given: its slots and the properties with a setter."""
    names = {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}
    names |= {name for klass in cls.__mro__ for name, value in vars(klass).items()
              if isinstance(value, property) and value.fset is not None}
    return tuple(sorted(names))


@functools.cache
def _properties(cls: type) -> tuple[str, ...]:
    """The attributes an instance of ``cls`` has: its slots and properties (a misspelt one is meant)."""
    return tuple(sorted(set(_settable(cls)) | {name for klass in cls.__mro__ for name, value in vars(klass).items()
                                               if isinstance(value, property)}))


@functools.cache
def _known(cls: type) -> tuple[str, ...]:
    """Every name an instance of ``cls`` answers to (its attributes, methods, constants)."""
    return tuple(sorted(set(_settable(cls)) | {name for name in dir(cls) if not name.startswith("__")}))


def _closest(name: str, names: tuple[str, ...]) -> str | None:
    """The name of ``names`` that ``name`` most likely meant: the same attribute under another
    class's Godot 3 name (``endian_swap`` given to a StreamPeerBuffer), or the nearest spelling."""
    for aliases in GODOT3_NAMES.values():
        if aliases.get(name) in names:
            return aliases[name]
    public = [n for n in names if not n.startswith("_") or name.startswith("_")]
    found = difflib.get_close_matches(name, public, n=1, cutoff=0.6)
    return found[0] if found else None


def _unknown(cls: type, name: str, names: tuple[str, ...]) -> AttributeError:
    """The error for a name ``cls`` does not have, naming the one of ``names`` it likely meant."""
    best = _closest(name, names)
    if best is not None:
        return AttributeError(f"{cls.__name__} has no attribute {name!r}; did you mean {best!r}?")
    public = ", ".join(n for n in names if not n.startswith("_")) or "no public attributes"
    return AttributeError(f"{cls.__name__} has no attribute {name!r} (it has: {public})")


class Strict:
    """A class whose instances take only the attributes it declares.

    Subclasses declare ``__slots__``, so Python itself refuses an unknown name, and list their
    Godot 3 names in :data:`GODOT3_NAMES` under their class name.  ``__setattr__`` makes the
    assignment first and looks for an alias or a better message only when Python refused it: an
    assignment that works costs one Python call more (0.1-0.3 µs; a ``put_u16`` or ``get_u16``
    makes one, measured 10-16% slower), the price of saying ``did you mean 'big_endian'?`` where
    Python would not.  A subclass without
    ``__slots__`` gets a ``__dict__`` and takes any attribute again, as a Python class does: that
    is its author's choice.
    """

    __slots__ = ()
    #: This class's Godot 3 names: {Godot 3 name: the attribute it means}; set from GODOT3_NAMES.
    _godot3_names: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._godot3_names = {**cls._godot3_names, **GODOT3_NAMES.get(cls.__name__, {})}

    if not TYPE_CHECKING:  # to a type checker, an unknown name stays an error (and a Godot 3 name too)

        def __setattr__(self, name: str, value: Any) -> None:
            try:
                _set(self, name, value)
            except AttributeError:
                cls = type(self)
                target = cls._godot3_names.get(name)
                if target is not None:
                    setattr(self, target, value)
                    return
                if hasattr(cls, name) or name in _settable(cls):
                    raise  # a name the class has (a read-only property, a method): Python's own words
                raise _unknown(cls, name, _properties(cls)) from None

        def __getattr__(self, name: str) -> Any:
            """Called only for a name normal lookup did not find: a Godot 3 name, or a mistake."""
            cls = type(self)
            target = cls._godot3_names.get(name)
            if target is not None:
                return getattr(self, target)
            if name.startswith("__") or name in _settable(cls):
                # a special name asked by a library (copy, pickle), or a slot not set yet (during __init__)
                raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")
            raise _unknown(cls, name, _known(cls))

        def __dir__(self) -> list[str]:
            return sorted(set(super().__dir__()) | set(type(self)._godot3_names))
