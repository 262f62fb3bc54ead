"""Full Objects between Godot 3 and Godot 4: the classes whose stored properties were renamed or
re-encoded (:data:`CLASS_RULES`), as data, with the value maps they need (key codes, joypad
buttons and axes) and the metadata layout of each version.

Class names are not here: every class's Godot 4 name is :mod:`godot_formats.core.renames`'s, the one
table of class renames.  The walk that applies these rules is :mod:`.values`'.
"""

from __future__ import annotations

from collections.abc import Callable as _Fn
from collections.abc import Mapping
from typing import Any

import attrs

from ..core import types as t
from ..core.dialects import Dialect, ObjectScript
from ..core.renames import GODOT3_TO_GODOT4

__all__ = ["ValueMap", "PropertyRule", "ClassRule", "CLASS_RULES", "KEYCODE_RANGES", "KEYCODE_APPROX_3TO4",
           "JOY_BUTTONS_3TO4", "JOY_AXES_3TO4", "RULES_BY_3", "RULES_BY_4", "GODOT3_META", "GODOT4_META_PREFIX",
           "scripts_by_path", "same", "GODOT4_LAYOUTS", "INPUT_EVENT_LIST", "is_input_event"]

#: Value maps return the converted value and, when the meaning changes, why.
ValueMap = _Fn[[Any], "tuple[Any, str | None]"]


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
        return same(props.get(name), self.default)


def same(a: Any, b: Any) -> bool:
    """The same value of the same type (``0`` is not ``False``): a property left at its default."""
    return type(a) is type(b) and a == b


@attrs.frozen
class ClassRule:
    """A class whose stored properties differ between Godot 3 and Godot 4.

    ``name`` is the class as Godot 3 writes it; its Godot 4 name is the class renames' table's
    (:mod:`godot_formats.core.renames`, which renames every class, with or without a rule here).
    """

    name: str
    properties: tuple[PropertyRule, ...] = ()
    #: Applied to a Godot 3 object before it is converted to Godot 4: may turn it
    #: into another Godot 3 class (whose rule then applies); returns why when the
    #: meaning changes.
    prepare4: _Fn[[dict[str, Any]], tuple[str, dict[str, Any], str] | None] | None = None

    @property
    def godot3(self) -> str:
        return self.name

    @property
    def godot4(self) -> str:
        return GODOT3_TO_GODOT4.get(self.name, self.name)


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
#: classes keep their properties as they are (their property names are not checked); every
#: class's name is :mod:`godot_formats.core.renames`'s.
CLASS_RULES: tuple[ClassRule, ...] = (
    ClassRule("InputEventKey", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("scancode", "keycode", to4=_keycode_to4, to3=_keycode_to3),
        PropertyRule("physical_scancode", "physical_keycode", 0, to4=_keycode_to4, to3=_keycode_to3,
                     omit_default=True),
        PropertyRule(None, "key_label", 0),
        PropertyRule(None, "location", 0),
    )),
    ClassRule("InputEventMouseButton", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("doubleclick", "double_click"),
        PropertyRule(None, "canceled", False),
    )),
    ClassRule("InputEventMouseMotion", _FROM_WINDOW + _MODIFIERS + (
        PropertyRule("speed", "velocity"),
    )),
    ClassRule("InputEventJoypadButton", (
        PropertyRule("button_index", "button_index", to4=_joy_button_to4, to3=_joy_button_to3),
    ), prepare4=_joypad_trigger_to4),
    ClassRule("InputEventJoypadMotion", (
        PropertyRule("axis", "axis", to4=_axis_map(JOY_AXES_3TO4, 4), to3=_axis_map(_AXES_4TO3, 3)),
    )),
    ClassRule("InputEventAction", (
        PropertyRule("action", "action", to4=_to_string_name, to3=_to_string),
        PropertyRule(None, "event_index", -1),
    )),
)
#: Godot 4.6's stored properties of the input event classes, in the order it writes them, with the value
#: an event holds unless set: its ``ConfigFile.save`` of ``InputMap.action_get_events``
#: (fixtures/configfile/godot4.jsonl, case ``keybindings``; tests/configfile check the table against it).
#: A converted event gets every one, in this order, as the engine writes an event made in Godot 4.
GODOT4_LAYOUTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "InputEventKey": (
        ("resource_local_to_scene", False), ("resource_name", ""), ("device", 0), ("window_id", 0),
        ("alt_pressed", False), ("shift_pressed", False), ("ctrl_pressed", False), ("meta_pressed", False),
        ("pressed", False), ("keycode", 0), ("physical_keycode", 0), ("key_label", 0), ("unicode", 0),
        ("location", 0), ("echo", False), ("script", None)),
    "InputEventMouseButton": (
        ("resource_local_to_scene", False), ("resource_name", ""), ("device", 0), ("window_id", 0),
        ("alt_pressed", False), ("shift_pressed", False), ("ctrl_pressed", False), ("meta_pressed", False),
        ("button_mask", 0), ("position", t.Vector2(0.0, 0.0)), ("global_position", t.Vector2(0.0, 0.0)),
        ("factor", 1.0), ("button_index", 0), ("canceled", False), ("pressed", False), ("double_click", False),
        ("script", None)),
    "InputEventJoypadButton": (
        ("resource_local_to_scene", False), ("resource_name", ""), ("device", 0), ("button_index", 0),
        ("pressure", 0.0), ("pressed", False), ("script", None)),
    "InputEventJoypadMotion": (
        ("resource_local_to_scene", False), ("resource_name", ""), ("device", 0), ("axis", 0),
        ("axis_value", 0.0), ("script", None)),
}

#: The class a Godot 4 key binding list is typed with: ``InputMap.action_get_events`` returns an
#: ``Array[InputEvent]`` (4.6 writes ``Array[InputEvent]([...])``), where Godot 3's ``get_action_list``
#: returned a plain Array.  A Godot 3 value that is itself a list of input events (a game that stored an
#: action's list) becomes that; a list inside another value stays plain, as 4.6's editor keeps the
#: ``"events"`` of an input action in project settings (fixtures/configfile/project_godot4.jsonl).
INPUT_EVENT_LIST = "InputEvent"


def is_input_event(value: Any) -> bool:
    """An Object of an input event class (``InputEventKey``, ``InputEventJoypadButton`` ...)."""
    return isinstance(value, t.Object) and str(value.class_name).startswith("InputEvent")


#: The rules by the class name each version writes.
RULES_BY_3 = {r.godot3: r for r in CLASS_RULES}
RULES_BY_4 = {r.godot4: r for r in CLASS_RULES}

#: An Object's metadata: one ``__meta__`` Dictionary property in Godot 3, one ``metadata/<name>``
#: property per entry in Godot 4.
GODOT3_META = "__meta__"
GODOT4_META_PREFIX = "metadata/"


def scripts_by_path(d: Dialect) -> bool:
    """Godot 4.3+ stores an Object's ``script`` as a res:// path; 3.x and 4.0-4.2 embed the Script."""
    return d.object_script == ObjectScript.PATH
