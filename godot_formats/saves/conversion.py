"""Convert Variant data from one engine version's format to another's, never silently.

Reading bytes in one dialect and writing them in another is mostly renaming:
Godot 3's ``Quat`` is Godot 4's ``Quaternion``, ``Transform`` is ``Transform3D``,
``PoolIntArray`` is ``PackedInt32Array``, type ids move, a Godot 3 RID (no payload)
becomes RID 0.  None of that changes the data, so none of it is reported.

Everything that *does* change or drop data is a :class:`Loss`
with its path inside the value (``["player"]["inventory"][3]``, ``.scancode``,
``<key Vector2i(1, 2)>`` for a dictionary key itself):

* a type the target lacks (``Vector2i`` into Godot 3, ``PackedVector4Array``
  into 4.0-4.2, ...): see :data:`DOWNGRADES`, the table of what ``policy="lossy"``
  writes instead;
* a typed Array into a version without typed Arrays (Godot 3, 4.0-4.2), a typed
  Dictionary into 4.3 or older: the elements stay, the type goes;
* float64 components of math types (from a double-precision build) into a
  32-bit build: rounded to float32;
* an :class:`~godot_formats.types.EncodedObjectAsID`: an instance id only means
  something inside the process that wrote it, so ``lossy`` writes null;
* a RID with a non-zero id into Godot 3, which writes no RID payload at all;
* a string holding unpaired surrogates (Godot 3 accepted them) into Godot 4,
  which refuses them: ``lossy`` writes U+FFFD instead;
* full Objects whose class or properties were renamed between Godot 3 and 4,
  where the value's meaning changes (see :data:`CLASS_RULES`; a pure rename
  such as ``InputEventKey.scancode`` -> ``keycode`` is not a loss).

``policy="strict"`` (the default) raises :class:`~godot_formats.errors.ConversionError`
listing every loss at once; ``policy="lossy"`` applies the documented downgrades and
returns the same list, so nothing changes without a record.
"""

from __future__ import annotations

import re
import struct
from array import array
from collections.abc import Callable as _Fn
from collections.abc import Iterator, Mapping
from functools import lru_cache, partial
from typing import Any, Union

import attrs

from ..core import accel
from ..core import types as t
from ..core.codec import DEFAULT_MAX_DEPTH, decoder_for, encoder_for
from ..core.dialects import (
    Dialect,
    FloatFormat,
    IntFormat,
    ObjectFormat,
    ObjectScript,
    RidFormat,
    get_dialect,
)
from ..core.errors import ConversionError, EncodeError
from ..core.keys import Memo, python_keys_agree, same_value
from ..core.registry import (
    INT32_MAX,
    INT32_MIN,
    REGISTRY,
    Downgrade,
    Family,
    TypeSpec,
    for_each_row,
    nesting_error,
    spec_for,
)
from ..core.registry import float32 as _to_f32
from ..core.registry import is_float32 as _is_f32
from ..core.switches import REAL

__all__ = [
    "Loss", "POLICIES", "Downgrade", "DOWNGRADES", "PropertyRule", "ClassRule", "CLASS_RULES",
    "KEYCODE_RANGES", "convert", "convert_value", "convert_records", "convert_with_report", "format_path_key",
]

#: ``strict`` raises on any loss; ``lossy`` applies the downgrades and reports them.
POLICIES = ("strict", "lossy")

#: How deep :func:`convert_value` follows nested containers before it assumes a
#: container that contains itself (decoded data is never deeper than the engines allow).
MAX_DEPTH = DEFAULT_MAX_DEPTH * 4

DialectLike = Union[str, Dialect]

_F32_STRUCTS: dict[int, struct.Struct] = {}


# --- small value helpers -------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _replace_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _quote(text: str) -> str:
    """A Godot-style double-quoted string literal (surrogates shown as escapes)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out) + '"'


def format_path_key(key: Any) -> str:
    """How a dictionary key is written inside a loss path: ``"name"``, ``3``, ``&"sn"``, ``Vector2(1.0, 2.0)``."""
    if isinstance(key, t.StringName):
        return "&" + _quote(_short(key))
    if isinstance(key, str):
        return _quote(_short(key))
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return t.value_repr(key, 57)
    if isinstance(key, t.NodePath):
        return "^" + _quote(_short(str(key)))
    return t.value_repr(key, 57)


def _type_name(value: Any) -> str | None:
    """The Godot 4 type name of a leaf value (containers are handled by the walker)."""
    spec = spec_for(value)
    return None if spec is None else spec.name


#: Godot 4 type name -> what ``lossy`` writes when the target has no such type: the
#: registry rows' ``downgrade``.  A type whose data cannot be carried at all is written as null.
DOWNGRADES: dict[str, Downgrade] = {}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if spec.downgrade is not None:
        DOWNGRADES[spec.name] = spec.downgrade


# --- full Objects: what was renamed between Godot 3 and Godot 4 ------------------------------

#: Value maps return the converted value and, when the meaning changes, why.
ValueMap = _Fn[[Any], "tuple[Any, str | None]"]


@attrs.frozen
class Loss:
    """One change a conversion made (or would make) to the data."""

    path: str
    reason: str
    before: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same_data(a, b)), hash=False)
    after: Any = attrs.field(default=None, eq=attrs.cmp_using(eq=lambda a, b: _same_data(a, b)), hash=False)

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.reason}"


def _same_data(a: Any, b: Any) -> bool:
    """Losses compare their values as data: a NaN in one is the NaN in the other."""
    try:
        return same_value(a, b)
    except (TypeError, ValueError):
        return bool(a == b)

@attrs.frozen
class PropertyRule:
    """One stored property of a class in Godot 3 and in Godot 4.

    ``godot3``/``godot4`` is its name in each version (None: it does not exist
    there).  A property that exists on one side only is dropped when converting
    to the other; that is a loss unless ``droppable(properties)`` says its value
    carries nothing (e.g. it holds the default).  ``to4``/``to3`` map values whose
    encoding changed (key codes, joypad buttons).  ``omit_default`` drops a
    renamed property that holds ``default`` (older minor versions lack it).
    """

    godot3: str | None
    godot4: str | None
    default: Any = None
    to4: ValueMap | None = None
    to3: ValueMap | None = None
    droppable: _Fn[[Mapping[str, Any]], bool] | None = None
    omit_default: bool = False

    def can_drop(self, name: str, props: Mapping[str, Any]) -> bool:
        if self.droppable is not None:
            return self.droppable(props)
        return _same(props.get(name), self.default)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@attrs.frozen
class ClassRule:
    """A class whose stored properties differ between Godot 3 and Godot 4."""

    godot3: str
    godot4: str
    properties: tuple[PropertyRule, ...] = ()
    #: Applied to a Godot 3 object before it is converted to Godot 4: may turn it
    #: into another Godot 3 class (whose rule then applies); returns why when the
    #: meaning changes.
    prepare4: _Fn[[dict[str, Any]], tuple[str, dict[str, Any], str] | None] | None = None


# Key codes.  Printable keys are Unicode code points in both versions.  Special keys
# had bit 24 (SPKEY) in Godot 3 and have bit 22 (KEY_SPECIAL) in Godot 4, and their
# low codes moved after F16.  Checked key by key against both engines with
# OS.get_scancode_string / OS.get_keycode_string (fixtures/conversion/keycodes.json);
# the engine's own project converter only swaps the bit, which is wrong from Menu on.
GODOT3_SPKEY = 1 << 24
GODOT4_SPECIAL = 1 << 22
GODOT3_KEY_UNKNOWN = 0x1FFFFFF
GODOT4_KEY_UNKNOWN = 0x7FFFFF

#: (first Godot 3 low code, last, first Godot 4 low code) for keys that exist in both.
KEYCODE_RANGES: tuple[tuple[int, int, int], ...] = (
    (0x01, 0x2B, 0x01),  # Escape ... F16 (BackTab/BackSpace/Control are Backtab/Backspace/Ctrl)
    (0x2E, 0x2E, 0x42),  # Menu
    (0x31, 0x31, 0x45),  # Help
    (0x40, 0x46, 0x48),  # Back, Forward, Stop, Refresh, VolumeDown, VolumeMute, VolumeUp
    (0x4C, 0x54, 0x54),  # MediaPlay ... StandBy
    (0x56, 0x67, 0x5E),  # LaunchMail ... LaunchF
    (0x81, 0x8F, 0x81),  # Kp Multiply ... Kp 9
)
#: Godot 3 special keys Godot 4 only has an approximation for (low codes).
KEYCODE_APPROX_3TO4: dict[int, tuple[int, str]] = {
    0x2C: (0x17, "Super L is Meta in Godot 4 (left/right not kept)"),
    0x2D: (0x17, "Super R is Meta in Godot 4 (left/right not kept)"),
    0x2F: (0x43, "Hyper L is Hyper in Godot 4 (left/right not kept)"),
    0x30: (0x43, "Hyper R is Hyper in Godot 4 (left/right not kept)"),
}
_KEY_3TO4 = {lo3 + i: lo4 + i for lo3, hi3, lo4 in KEYCODE_RANGES for i in range(hi3 - lo3 + 1)}
_KEY_4TO3 = {v: k for k, v in _KEY_3TO4.items()}


def _keycode_to4(code: Any) -> tuple[Any, str | None]:
    if type(code) is not int or code < GODOT3_SPKEY:
        return code, None  # a Unicode key, or no key (0)
    if code == GODOT3_KEY_UNKNOWN:
        return GODOT4_KEY_UNKNOWN, None
    low = code & ~GODOT3_SPKEY
    if low in _KEY_3TO4:
        return GODOT4_SPECIAL | _KEY_3TO4[low], None
    if low in KEYCODE_APPROX_3TO4:
        new_low, why = KEYCODE_APPROX_3TO4[low]
        return GODOT4_SPECIAL | new_low, why
    return 0, f"Godot 3 key code {code} has no Godot 4 equivalent (written as 0, no key)"


def _keycode_to3(code: Any) -> tuple[Any, str | None]:
    if type(code) is not int or code < GODOT4_SPECIAL:
        return code, None
    if code == GODOT4_KEY_UNKNOWN:
        return GODOT3_KEY_UNKNOWN, None
    low = code & ~GODOT4_SPECIAL
    if low in _KEY_4TO3:
        return GODOT3_SPKEY | _KEY_4TO3[low], None
    return 0, f"Godot 4 key code {code} has no Godot 3 equivalent (written as 0, no key)"


# Joypad buttons: the SDL layout of Godot 4 renumbered them.  Index = Godot 3 button,
# entry = Godot 4 button (from the engine's project converter, editor/project_converter_3_to_4.cpp);
# None: L2/R2 are axes 4/5 in Godot 4.
JOY_BUTTONS_3TO4: tuple[int | None, ...] = (
    0, 1, 2, 3, 9, 10, None, None, 7, 8, 4, 6, 11, 12, 13, 14, 5, 15, 16, 17, 18, 19, 20,
)
_JOY_4TO3 = {b4: b3 for b3, b4 in enumerate(JOY_BUTTONS_3TO4) if b4 is not None}
#: Godot 3 axis -> Godot 4 axis (the triggers moved from 6/7 to 4/5).
JOY_AXES_3TO4: dict[int, int] = {0: 0, 1: 1, 2: 2, 3: 3, 6: 4, 7: 5}
_AXES_4TO3 = {v: k for k, v in JOY_AXES_3TO4.items()}


def _joy_button_to4(button: Any) -> tuple[Any, str | None]:
    if type(button) is int and 0 <= button < len(JOY_BUTTONS_3TO4) and JOY_BUTTONS_3TO4[button] is not None:
        return JOY_BUTTONS_3TO4[button], None
    return button, f"Godot 3 joypad button {button!r} has no Godot 4 button (kept as is)"


def _joy_button_to3(button: Any) -> tuple[Any, str | None]:
    if type(button) is int and button in _JOY_4TO3:
        return _JOY_4TO3[button], None
    return button, f"Godot 4 joypad button {button!r} has no Godot 3 button (kept as is)"


def _axis_map(table: Mapping[int, int], major: int) -> ValueMap:
    def mapped(axis: Any) -> tuple[Any, str | None]:
        if type(axis) is int and axis in table:
            return table[axis], None
        return axis, f"joypad axis {axis!r} has no Godot {major} equivalent (kept as is)"
    return mapped


def _to_string_name(v: Any) -> tuple[Any, str | None]:
    return (t.StringName(v) if type(v) is str else v), None


def _to_string(v: Any) -> tuple[Any, str | None]:
    return (str(v) if isinstance(v, t.StringName) else v), None


def _joypad_trigger_to4(props: dict[str, Any]) -> tuple[str, dict[str, Any], str] | None:
    """Godot 3 buttons 6/7 (L2/R2) are trigger axes in Godot 4, as the engine's project converter writes them.

    The button becomes a Godot 3 ``InputEventJoypadMotion`` on axis 6/7 (L2/R2) at
    full strength, whose own rule then moves the axis to 4/5.
    """
    button = props.get("button_index")
    if type(button) is not int or button not in (6, 7):
        return None
    out = {k: v for k, v in props.items() if k not in ("button_index", "pressure", "pressed", "script")}
    out["axis"], out["axis_value"] = button, 1.0
    if "script" in props:
        out["script"] = props["script"]
    why = (f"Godot 3 joypad button {button} ({'L2' if button == 6 else 'R2'}) is a trigger axis in Godot 4: "
           "written as InputEventJoypadMotion (axis_value 1.0); pressed and pressure dropped")
    return "InputEventJoypadMotion", out, why


def _command_droppable(props: Mapping[str, Any]) -> bool:
    """Godot 3's ``command`` (Cmd on macOS, Ctrl elsewhere) is kept by ``control``/``meta``."""
    return not props.get("command") or bool(props.get("control") or props.get("meta"))


_FROM_WINDOW = (PropertyRule(None, "window_id", 0),)
_MODIFIERS = (
    PropertyRule("alt", "alt_pressed"),
    PropertyRule("shift", "shift_pressed"),
    PropertyRule("control", "ctrl_pressed"),
    PropertyRule("meta", "meta_pressed"),
    PropertyRule("command", None, False, droppable=_command_droppable),
    PropertyRule(None, "command_or_control_autoremap", False),
)

#: Classes whose stored properties were renamed or re-encoded between Godot 3 and 4
#: (the names are the engines' own: see fixtures/conversion/corpus.jsonl).  Other
#: classes are passed through unchanged; their property names are not checked.
CLASS_RULES: tuple[ClassRule, ...] = (
    ClassRule("Reference", "RefCounted"),
    ClassRule("InputEventKey", "InputEventKey", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("scancode", "keycode", to4=_keycode_to4, to3=_keycode_to3),
        PropertyRule("physical_scancode", "physical_keycode", 0, to4=_keycode_to4, to3=_keycode_to3,
                     omit_default=True),
        PropertyRule(None, "key_label", 0),
        PropertyRule(None, "location", 0),
    )),
    ClassRule("InputEventMouseButton", "InputEventMouseButton", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("doubleclick", "double_click"),
        PropertyRule(None, "canceled", False),
    )),
    ClassRule("InputEventMouseMotion", "InputEventMouseMotion", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("speed", "velocity"),
    )),
    ClassRule("InputEventJoypadButton", "InputEventJoypadButton", (
        PropertyRule("button_index", "button_index", to4=_joy_button_to4, to3=_joy_button_to3),
    ), prepare4=_joypad_trigger_to4),
    ClassRule("InputEventJoypadMotion", "InputEventJoypadMotion", (
        PropertyRule("axis", "axis", to4=_axis_map(JOY_AXES_3TO4, 4), to3=_axis_map(_AXES_4TO3, 3)),
    )),
    ClassRule("InputEventAction", "InputEventAction", (
        PropertyRule("action", "action", to4=_to_string_name, to3=_to_string),
        PropertyRule(None, "event_index", -1),
    )),
)
_RULES_BY_3 = {r.godot3: r for r in CLASS_RULES}
_RULES_BY_4 = {r.godot4: r for r in CLASS_RULES}

GODOT3_META = "__meta__"
GODOT4_META_PREFIX = "metadata/"


def _scripts_by_path(d: Dialect) -> bool:
    """Godot 4.3+ stores an Object's ``script`` as a res:// path; 3.x and 4.0-4.2 embed the Script."""
    return d.object_script == ObjectScript.PATH


# --- the walker ------------------------------------------------------------------------

#: Where a value sits, built lazily: "" (the root) or (parent, kind, key); turned into
#: text (``["a"][3].prop``) only when a loss is recorded.
_Path = Any


#: A loss path names at most this many levels from the root and from the leaf; the ones
#: between are counted, not shown (so a report stays linear in the input, however deep).
PATH_HEAD, PATH_TAIL = 4, 12


#: What :func:`_render` knows of a path node it walked: the node (kept alive, so its id stays
#: its own), its depth and its first PATH_HEAD steps.
_Known = dict[int, tuple[Any, int, tuple[tuple[str, Any], ...]]]


def _render(path: _Path, known: _Known | None = None) -> str:
    """The path as text: its first PATH_HEAD and last PATH_TAIL steps.  With ``known`` (one per
    conversion), each node is walked once in all: the losses of N values under a path M deep
    cost N + M, not N x M."""
    known = {} if known is None else known
    tail: list[tuple[Any, str, Any]] = []
    node = path
    while node and id(node) not in known:
        parent, kind, key = node
        tail.append((node, kind, key))
        node = parent
    depth, head = (known[id(node)][1], known[id(node)][2]) if node else (0, ())
    for walked, kind, key in reversed(tail):  # root side first
        depth += 1
        if len(head) < PATH_HEAD:
            head = (*head, (kind, key))
        known[id(walked)] = (walked, depth, head)
    last = _last_steps(path, min(PATH_TAIL, max(depth - len(head), 0)))
    if depth > PATH_HEAD + PATH_TAIL:
        hidden = depth - PATH_HEAD - PATH_TAIL
        shown = [*head, ("...", f"...({hidden} levels)..."), *last]
    else:
        shown = [*head, *last]
    parts: list[str] = []
    for kind, key in shown:
        if kind == "[]":
            parts.append(f"[{key}]")
        elif kind == "[key]":
            parts.append(f"[{format_path_key(key)}]")
        elif kind == "<key>":
            parts.append(f"<key {format_path_key(key)}>")
        elif kind == ".":
            parts.append(f".{_short(key)}")
        else:
            parts.append(key)
    return "".join(parts)


def _last_steps(path: _Path, n: int) -> list[tuple[str, Any]]:
    """The ``n`` steps nearest the end of ``path``, root side first."""
    steps: list[tuple[str, Any]] = []
    while path and len(steps) < n:
        path, kind, key = path
        steps.append((kind, key))
    steps.reverse()
    return steps


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


@attrs.define
class _Frame:
    children: Iterator[tuple[_Path, Any]]
    build: _Fn[[list[Any]], Any]
    items: list[Any] = attrs.field(factory=list)


class _Converter:
    """Walks a value (iteratively: decoded data may be 1,000 levels deep) and rebuilds it for the target."""

    __slots__ = ("source", "target", "known_paths", "losses", "cross_major", "checks", "plan", "key_memo")

    def __init__(self, source: Dialect, target: Dialect) -> None:
        self.source = source
        self.target = target
        self.known_paths: _Known = {}  # for the loss paths: each node walked once
        self.losses: list[Loss] = []
        self.plan = plan = _plan(source, target)
        self.cross_major = plan.cross_major  # the class rules apply
        self.checks = plan.checks
        self.key_memo: Memo = {}  # identities of converted containers used as keys (linear, not per level)

    def loss(self, path: _Path, reason: str, before: Any = None, after: Any = None) -> None:
        self.losses.append(Loss(_render(path, self.known_paths), reason, before, after))

    # -- a value that needs no change ------------------------------------------------

    def unchanged(self, root: Any) -> bool:
        """Whether ``root`` needs no change at all for the target, so that it is its own
        conversion: one pass over it, rebuilding nothing.  Most saves are such values (plain
        dicts and lists of ints, strings, floats and math types, read in Godot 3 and written
        for Godot 4), and rebuilding them cost many times their decoding.  Only what the walk
        of :meth:`run` would keep as it is passes: exact lists and dicts whose keys Python
        and the target key alike, leaves whose own check keeps them (the same object, no
        loss), within the depth :meth:`run` takes; anything else goes to :meth:`run`."""
        plan = self.plan
        scalars = plan.scalars
        decided = plan.c_unchanged(root)
        if decided is not None:
            return decided
        stack: list[tuple[Any, int]] = [(root, 0)]
        while stack:
            v, depth = stack.pop()
            tp = type(v)
            if tp is list:
                items: Any = v
            elif tp is dict:
                if not python_keys_agree(v):
                    return False
                items = [x for pair in v.items() for x in pair]
            elif self._leaf_unchanged(v, tp, scalars):
                continue
            else:
                return False
            if depth >= MAX_DEPTH:
                return False
            for x in items:
                tx = type(x)
                if tx is list or tx is dict:
                    stack.append((x, depth + 1))
                elif not self._leaf_unchanged(x, tx, scalars):
                    return False
        return True

    def _leaf_unchanged(self, v: Any, tp: type, scalars: dict[type, Any]) -> bool:
        check = _leaf_check(v, tp, scalars, self.checks, self.target)
        if check is True or check is False:
            return check
        return self._check_keeps(check, v)

    def _check_keeps(self, check: _Fn[[_Converter, _Path, Any], Any], v: Any) -> bool:
        """Whether the leaf ``check`` keeps ``v`` as it is, with no loss (the losses it reports are dropped)."""
        before = len(self.losses)
        try:
            kept = check(self, "", v) is v and len(self.losses) == before
        finally:
            del self.losses[before:]
        return kept

    def run(self, root: Any) -> Any:
        stack: list[_Frame] = []
        done, value = self._visit("", root, stack)
        if done:
            return value
        while True:
            frame = stack[-1]
            for path, child in frame.children:
                done, value = self._visit(path, child, stack)
                if not done:
                    break
                frame.items.append(value)
            else:
                stack.pop()
                value = frame.build(frame.items)
                if not stack:
                    return value
                stack[-1].items.append(value)

    def _visit(self, path: _Path, v: Any, stack: list[_Frame]) -> tuple[bool, Any]:
        """Convert a leaf (True, value) or push a frame for a container (False, None)."""
        spec = spec_for(v)
        family = None if spec is None else spec.family
        if family is Family.ARRAY:
            frame = self._array(path, v)
        elif family is Family.DICTIONARY:
            frame = self._dictionary(path, v)
        elif family is Family.OBJECT and type(v) is t.Object and self.target.object_format != ObjectFormat.UNSUPPORTED:
            frame = self._object(path, v)
        else:
            return True, self._leaf(path, v, spec)
        if len(stack) >= MAX_DEPTH:
            raise EncodeError(nesting_error(MAX_DEPTH), _render(path))
        stack.append(frame)
        return False, None

    # -- containers ---------------------------------------------------------------

    def _array(self, path: _Path, v: Any) -> _Frame:
        element_type = v.element_type if isinstance(v, t.TypedArray) else None
        if element_type is not None and not self.target.typed_arrays:
            self.loss(path, f"typed Array[{_type_label(element_type)}] written untyped: "
                            f"{self.target.name} has no typed Arrays", element_type, None)
            element_type = None
        children = (((path, "[]", i), e) for i, e in enumerate(v))
        if element_type is None:
            return _Frame(children, list)
        return _Frame(children, lambda items: t.TypedArray(element_type, items))

    def _dictionary(self, path: _Path, v: Any) -> _Frame:
        key_type = value_type = None
        if isinstance(v, t.TypedDictionary) and (v.key_type or v.value_type):
            key_type, value_type = v.key_type, v.value_type
            if not self.target.typed_dictionaries:
                self.loss(path, f"typed Dictionary[{_type_label(key_type)}, {_type_label(value_type)}] written "
                                f"untyped: {self.target.name} has no typed Dictionaries", (key_type, value_type), None)
                key_type = value_type = None
        pairs = list(v.items())
        plain = type(v) is dict and key_type is None and value_type is None

        def children() -> Iterator[tuple[_Path, Any]]:
            for k, val in pairs:
                yield (path, "<key>", k), k
                yield (path, "[key]", k), val

        def build(items: list[Any]) -> Any:
            if plain:  # fast path: a dict stays a dict unless converted keys collide or cannot be hashed
                fast: dict[Any, Any] = {}
                try:
                    for new_key, new_value in zip(items[0::2], items[1::2]):
                        fast[new_key] = new_value
                except TypeError:
                    pass
                else:
                    if len(fast) == len(pairs) and python_keys_agree(fast):
                        return fast
            rules = self.target.key_rules
            out = (t.Dictionary(key_rules=rules) if key_type is None and value_type is None
                   else t.TypedDictionary(key_type, value_type, key_rules=rules))
            for (src_key, _), new_key, new_value in zip(pairs, items[0::2], items[1::2]):
                if out._put(new_key, new_value, self.key_memo):
                    self.loss((path, "<key>", src_key),
                              f"after conversion this key equals the earlier key {format_path_key(new_key)}; "
                              "the engine keeps only the last value", src_key, new_key)
            return out if isinstance(out, t.TypedDictionary) else _as_plain_dict(out)

        return _Frame(children(), build)

    def _object(self, path: _Path, obj: t.Object) -> _Frame:
        class_name = self._text((path, "", "<class>"), obj.class_name)
        props = {self._text(((path, ".", k), "", "<name>"), k): v for k, v in obj.properties.items()}
        entries: list[tuple[_Path, str, Any]] = [((path, ".", k), k, v) for k, v in props.items()]
        if self.cross_major:
            class_name, entries = self._rename_object(path, class_name, props)
        entries = [self._script(e) for e in entries]
        names = [name for _, name, _ in entries]
        children = ((p, v) for p, _, v in entries)
        return _Frame(children, lambda items: t.Object(class_name, dict(zip(names, items))))

    def _script(self, entry: tuple[_Path, str, Any]) -> tuple[_Path, str, Any]:
        path, name, value = entry
        if name != "script" or value is None:
            return entry
        by_path = _scripts_by_path(self.target)
        if by_path and not isinstance(value, str):
            self.loss(path, f"{self.target.name} references scripts by res:// path; the embedded "
                            f"{getattr(value, 'class_name', type(value).__name__)} has none: written as null "
                            "(the engine then ignores the script's properties)", value, None)
            return path, name, None
        if not by_path and isinstance(value, str):
            self.loss(path, f"{self.target.name} embeds the Script object, not a path: script "
                            f"{t.value_repr(value, 60)} written as null (the engine then ignores the "
                            "script's properties)", value, None)
            return path, name, None
        return entry

    def _rename_object(self, path: _Path, cls: str,
                       props: dict[str, Any]) -> tuple[str, list[tuple[_Path, str, Any]]]:
        """Apply :data:`CLASS_RULES` and the metadata layout between Godot 3 and Godot 4."""
        to4 = self.target.object_classes == 4
        rule = (_RULES_BY_3 if to4 else _RULES_BY_4).get(cls)
        if to4 and rule is not None and rule.prepare4 is not None:
            prepared = rule.prepare4(props)
            if prepared is not None:
                new_cls, props, reason = prepared
                self.loss(path, reason, cls, new_cls)
                cls, rule = new_cls, _RULES_BY_3.get(new_cls)
        out_cls = (rule.godot4 if to4 else rule.godot3) if rule else cls
        by_name = {(p.godot3 if to4 else p.godot4): p for p in (rule.properties if rule else ()) if
                   (p.godot3 if to4 else p.godot4)}
        entries: list[tuple[_Path, str, Any]] = []
        meta: dict[str, Any] | None = None
        for name, value in props.items():
            p_path: _Path = (path, ".", name)
            if to4 and name == GODOT3_META and isinstance(value, (dict, t.Dictionary)):
                for key, item in value.items():
                    if isinstance(key, str):
                        entries.append(((p_path, "[key]", key), GODOT4_META_PREFIX + key, item))
                    else:
                        self.loss((p_path, "<key>", key),
                                  "Godot 4 metadata names are strings: this entry is dropped", key, None)
                continue
            if not to4 and name.startswith(GODOT4_META_PREFIX):
                if meta is None:
                    meta = {}
                    entries.append(((path, ".", GODOT4_META_PREFIX + "*"), GODOT3_META, meta))
                meta[name[len(GODOT4_META_PREFIX):]] = value
                continue
            prop = by_name.get(name)
            if prop is None:
                entries.append((p_path, name, value))
                continue
            new_name = prop.godot4 if to4 else prop.godot3
            if new_name is None:
                if not prop.can_drop(name, props):
                    self.loss(p_path, f"{out_cls}.{name} does not exist in Godot {self.target.major}: "
                                      f"dropped (value {t.value_repr(value, 60)})", value, None)
                continue
            mapper = prop.to4 if to4 else prop.to3
            new_value, why = mapper(value) if mapper else (value, None)
            if why:
                self.loss(p_path, why, value, new_value)
            if prop.omit_default and _same(new_value, prop.default):
                continue
            entries.append((p_path, new_name, new_value))
        return out_cls, entries

    # -- leaves -------------------------------------------------------------------

    def _leaf(self, path: _Path, v: Any, spec: TypeSpec | None) -> Any:
        if spec is None:
            raise EncodeError(f"cannot convert a {type(v).__name__} ({t.value_repr(v, 60)})", _render(path))
        name = spec.name
        if not self.target.has(name):
            row = DOWNGRADES[name]
            new = row.apply(v, self.target)
            self.loss(path, f"{self.target.name} has no {name}: written as {row.writes}", v, new)
            v = new
            name = _type_name(v) or "Array"
        check = self.checks.get(name)
        return check(self, path, v) if check else v

    def _text(self, path: _Path, v: str) -> Any:
        if self.target.utf8_surrogates or not _has_surrogate(v):
            return v
        fixed = _replace_surrogates(v)
        new = t.StringName(fixed) if isinstance(v, t.StringName) else fixed
        self.loss(path, f"unpaired surrogate in {_quote(v)}: {self.target.name} only stores valid UTF-8, "
                        "written as U+FFFD", v, new)
        return new

    def _node_path(self, path: _Path, v: t.NodePath) -> Any:
        if not any(_has_surrogate(p) for p in (*v.names, *v.subnames)):
            return v
        new = t.NodePath(names=map(_replace_surrogates, v.names), subnames=map(_replace_surrogates, v.subnames),
                         absolute=v.absolute)
        self.loss(path, f"unpaired surrogate in NodePath {str(v)!r}: written as U+FFFD", v, new)
        return new

    def _string_array(self, path: _Path, v: t.PackedStringArray) -> Any:
        if not any(_has_surrogate(s) for s in v):
            return v
        return t.PackedStringArray(self._text((path, "[]", i), s) for i, s in enumerate(v))

    def _signal(self, path: _Path, v: t.Signal) -> Any:
        return v if not _has_surrogate(v.name) else t.Signal(self._text((path, ".", "name"), v.name), v.object_id)

    def _object_id(self, path: _Path, v: Any) -> Any:
        if self.target.object_format == ObjectFormat.UNSUPPORTED:
            self.loss(path, f"{self.target.name} cannot write an Object: written as null", v, None)
            return None
        if isinstance(v, t.EncodedObjectAsID):
            self.loss(path, f"Object written as its instance id {v.object_id}: an id only means something in "
                            "the process that wrote it, written as null", v, None)
            return None
        return v

    def _rid(self, path: _Path, v: t.RID) -> Any:
        rid_format = self.target.rid_format
        if rid_format == RidFormat.UNSUPPORTED:
            self.loss(path, f"{self.target.name} cannot write a RID: written as null", v, None)
            return None
        if v.id and rid_format == RidFormat.NONE:
            self.loss(path, f"RID {v.id}: {self.target.name} writes no RID id, written as an empty RID", v, t.RID())
            return t.RID()
        return v

    def _float32(self, path: _Path, v: float) -> Any:
        if _is_f32(v):
            return v
        new = _to_f32(v)
        self.loss(path, f"float {v!r} is not exact in float32; {self.target.name} writes every float in 32 bits: "
                        "rounded", v, new)
        return new

    def _int32(self, path: _Path, v: int) -> Any:
        if INT32_MIN <= v <= INT32_MAX:
            return v
        new = (v + (1 << 31)) % (1 << 32) - (1 << 31)
        self.loss(path, f"int {v} does not fit in 32 bits; {self.target.name} writes every int in 32 bits: "
                        "truncated", v, new)
        return new

    def _real_math(self, path: _Path, v: Any) -> Any:
        spec = spec_for(v)
        assert spec is not None
        parts = spec.parts(v)
        packer = _F32_STRUCTS.get(len(parts)) or _F32_STRUCTS.setdefault(len(parts), struct.Struct(f"<{len(parts)}f"))
        try:
            if packer.unpack(packer.pack(*parts)) == parts:  # all exact (a NaN takes the slow path)
                return v
        except OverflowError:
            pass
        if all(_is_f32(x) for x in parts):
            return v
        new = spec.build(tuple(_to_f32(x) for x in parts))  # type: ignore[misc]
        self.loss(path, f"{spec.cls.__name__} has components that are not exact in float32 (a double-precision "
                        f"value); {self.target.name} stores 32-bit reals: rounded", v, new)
        return new

    def _real_packed(self, path: _Path, v: t.PackedArray) -> Any:
        data = v.data
        if data.typecode == "f":
            return v
        new = type(v).__new__(type(v))
        new.data = array("f", data)
        inexact = sum(1 for a in data if not _is_f32(a))
        if not inexact:
            return new
        self.loss(path, f"{type(v).__name__}: {inexact} of {len(data)} components are not exact in float32 "
                        f"(double-precision values); {self.target.name} stores 32-bit reals: rounded", v, new)
        return new


_Check = _Fn[[_Converter, _Path, Any], Any]


def _leaf_check(v: Any, tp: type, scalars: dict[type, Any], checks: dict[str, _Check],
                target: Dialect) -> _Check | bool:
    """What a leaf of type ``tp`` needs for the target, by its type alone: True, kept as it is;
    False, not a leaf the unchanged() walk keeps (a container type, a type the target lacks);
    else the check that decides for this value (which needs a converter to run)."""
    if tp in scalars:
        check = scalars[tp]
        return True if check is None else check  # type: ignore[no-any-return]
    spec = spec_for(v)
    if spec is None or spec.family in (Family.ARRAY, Family.DICTIONARY, Family.OBJECT) or not target.has(spec.name):
        return False
    found = checks.get(spec.name)
    return True if found is None else found


@attrs.frozen
class _Plan:
    """What a conversion between two dialects checks, made once per pair (:func:`_plan`): setting
    it up for every call cost more than converting most values (a save converted record by record
    spent most of its time here)."""

    checks: dict[str, _Check]  # by type name, the check of a leaf the target may have to change
    scalars: dict[type, _Check | None]  # the check of each exact scalar type the target has
    cross_major: bool
    c_flags: int | None  # the compiled unchanged() walk's flags, None: it cannot be used
    c_real: tuple[type, ...]  # the math types it checks as float32 tuples
    #: The compiled unchanged() walk with everything but the value bound (its leaf callback: a
    #: converter of its own, made only when a leaf the walk does not check asks), or None when
    #: it cannot be used (not built, or a target whose bool or Nil changes).
    c_check: _Fn[[Any], bool] | None

    def c_unchanged(self, value: Any) -> bool | None:
        """:meth:`_Converter.unchanged`, decided by the compiled walk with no converter made (a
        small record's convert_value spent most of its time making one); None: not decided."""
        check = self.c_check
        return None if check is None else check(value)


@lru_cache(maxsize=64)
def _plan(source: Dialect, target: Dialect) -> _Plan:
    checks: dict[str, _Check] = {"Object": _Converter._object_id, "RID": _Converter._rid}
    if target.float_format == FloatFormat.F32:
        checks["float"] = _Converter._float32
    if target.int_format == IntFormat.I32:
        checks["int"] = _Converter._int32
    if not target.utf8_surrogates:
        checks.update(String=_Converter._text, StringName=_Converter._text, NodePath=_Converter._node_path,
                      PackedStringArray=_Converter._string_array, Signal=_Converter._signal)
    if not target.real_is_double:
        real = {Family.MATH: _Converter._real_math, Family.PACKED: _Converter._real_packed}
        checks.update((spec.name, real[spec.family]) for spec in REGISTRY if spec.component == REAL)
    scalars = {tp: checks.get(name) for tp, name in ((str, "String"), (int, "int"), (float, "float"),
                                                    (bool, "bool"), (type(None), "Nil")) if target.has(name)}
    c_flags = None
    if len(scalars) == 5 and set(checks).isdisjoint(("bool", "Nil")):
        c_flags = (("String" in checks) * 1) | (("int" in checks) * 2) | (("float" in checks) * 4)
    # The math types that are tuples of floats, checked in C when their check is the float32 one
    # (a single-precision target); the others go through _leaf_unchanged().
    c_real = tuple(spec.cls for spec in REGISTRY if spec.family is Family.MATH and spec.component == REAL
                   and issubclass(spec.cls, tuple) and target.has(spec.name)
                   and checks.get(spec.name) is _Converter._real_math)

    def leaf(v: Any) -> bool:
        """A leaf the compiled walk does not check itself: most are kept by their type alone (a
        Color); a converter is made only for one whose check must run (a NodePath's text ...)."""
        check = _leaf_check(v, type(v), scalars, checks, target)
        if check is True or check is False:
            return check
        return _Converter(source, target)._check_keeps(check, v)

    c_check = None if c_flags is None or accel.cencode is None else \
        partial(accel.cencode.unchanged, c_flags, leaf, python_keys_agree, MAX_DEPTH, c_real)
    return _Plan(checks, scalars, source.object_classes != target.object_classes, c_flags, c_real, c_check)


def _type_label(ct: t.ContainerType | None) -> str:
    if ct is None:
        return "Variant"
    return ct.script or ct.class_name or ct.builtin


def _as_plain_dict(d: t.Dictionary) -> Any:
    """A plain ``dict`` when it holds the same entries exactly (what the decoder returns), else ``d``."""
    plain: dict[Any, Any] = {}
    try:
        for k, v in d.items():
            plain[k] = v
    except TypeError:
        return d
    return plain if len(plain) == len(d) and python_keys_agree(plain) else d


# --- public API ----------------------------------------------------------------------

def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")


def convert_value(value: Any, source: DialectLike, target: DialectLike, *,
                  policy: str = "strict") -> tuple[Any, list[Loss]]:
    """Rebuild ``value`` (read in ``source``) so that ``target`` can write it.

    Returns the converted value and every :class:`Loss`
    (empty when nothing changed but names).  Under ``policy="strict"`` any loss
    raises :class:`~godot_formats.errors.ConversionError` with all of them.
    The same dialect on both sides, or a value that needs no change for the target
    (nothing in it is renamed, narrowed or dropped), returns ``value`` itself, not a copy.
    """
    if policy not in POLICIES:
        _check_policy(policy)
    src, dst = get_dialect(source), get_dialect(target)
    if src is dst:
        return value, []
    decided = _plan(src, dst).c_unchanged(value)  # most values of a migration: checked in C, nothing made
    if decided:
        return value, []
    converter = _Converter(src, dst)
    if decided is None and converter.unchanged(value):
        return value, []
    result = converter.run(value)
    if converter.losses and policy == "strict":
        raise ConversionError(converter.losses)
    return result, converter.losses


def convert_records(values: list[Any], source: Dialect, target: Dialect, where: _Fn[[int], str],
                    damaged: Mapping[int, Loss]) -> tuple[list[Any], list[Loss]]:
    """A save's records converted (``lossy``) in one call, as :func:`convert_value` converts each:
    a save of many records converted one call at a time spent most of its time in the calls.  One
    pass over all of them finds whether any needs a change (most migrations: none); only then are
    they converted one by one.  ``where(i)`` is record ``i``'s path, put in front of its losses' and
    of an :class:`EncodeError`'s; ``damaged`` holds the loss of each record read as null because it
    was damaged in the file, listed in its place."""
    if source is target or _Converter(source, target).unchanged(list(values)):
        return list(values), [damaged[i] for i in sorted(damaged)]
    converted: list[Any] = []
    losses: list[Loss] = []
    for i, v in enumerate(values):
        path = where(i)
        if i in damaged and v is None:
            losses.append(damaged[i])
            converted.append(None)
            continue
        converter = _Converter(source, target)
        try:
            new = v if converter.unchanged(v) else converter.run(v)
        except EncodeError as e:
            raise EncodeError(e.reason, path + e.path) from None
        converted.append(new)
        losses += [attrs.evolve(loss, path=path + loss.path) for loss in converter.losses]
    return converted, losses


def convert_with_report(data: bytes | bytearray | memoryview, source: DialectLike, target: DialectLike, *,
                        policy: str = "strict", allow_objects: bool = False) -> tuple[bytes, list[Loss]]:
    """:func:`convert`, also returning the list of losses (empty when lossless).

    ``source`` may be ``"auto"``: the dialect that reads the bytes completely
    (:func:`godot_formats.reading.read_value`; bytes that several versions read as
    different values are ambiguous, and the caller chooses).
    """
    _check_policy(policy)
    if source == "auto":
        return _convert_auto(bytes(data), target, policy, allow_objects)
    src, dst = get_dialect(source), get_dialect(target)
    value, end = decoder_for(src, allow_objects).decode(data)
    losses: list[Loss] = []
    trailing = len(data) - end
    if trailing:
        losses.append(Loss("", f"{trailing} byte(s) after the value are not part of it (the engine ignores "
                               "them): not written", bytes(data[end:]), None))
    new_value = value
    if src is not dst:
        new_value, value_losses = convert_value(value, src, dst, policy="lossy")
        losses += value_losses
    if losses and policy == "strict":
        raise ConversionError(losses)  # every loss at once: the bytes after the value and the value's own
    if src is dst:  # nothing to convert: the value's bytes are kept exactly as they were
        return bytes(data[:end]), losses
    return encoder_for(dst, allow_objects).encode(new_value), losses


def convert(data: bytes | bytearray | memoryview, source: DialectLike, target: DialectLike, *,
            policy: str = "strict", allow_objects: bool = False) -> bytes:
    """Read ``data`` (raw ``var_to_bytes`` bytes, no length prefix) in ``source``, write it in ``target``.

    >>> convert(bytes.fromhex("0a000000" + "0000803f" * 4), "godot3", "godot4").hex()  # Quat -> Quaternion
    '0f0000000000803f0000803f0000803f0000803f'

    Raises :class:`~godot_formats.errors.ConversionError` (listing every loss)
    under ``policy="strict"``; use :func:`convert_with_report` to see what
    ``policy="lossy"`` changed.  ``allow_objects`` lets full Objects through
    (as inert data) and writes them in full.
    """
    return convert_with_report(data, source, target, policy=policy, allow_objects=allow_objects)[0]


def _convert_auto(data: bytes, target: DialectLike, policy: str,
                  allow_objects: bool) -> tuple[bytes, list[Loss]]:
    """The bytes in the dialect that reads them (one reading: godot_formats.reading), converted."""
    from .reading import read_value

    reading = read_value(data, allow_objects=allow_objects)
    return convert_with_report(data, reading.dialect, target, policy=policy, allow_objects=allow_objects)
