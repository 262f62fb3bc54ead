"""The error types: what they carry, and a Loss compared as data.

Regression: ``test_lossy_output_is_always_writable_and_strict_agrees`` (tests/saves/test_conversion.py)
was flaky because it compares the losses of a strict and a lossy conversion of the same bytes,
each decoded on its own: a NaN in ``before``/``after`` is then two float objects, unequal to
each other, and two equal lists of losses compared unequal.  A Loss compares its values by
content (``keys.same_value``: NaN equals NaN), like every other "is this the same data?" here.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import godot_formats as gf
from godot_formats.core.errors import ConversionError, DecodeError, EncodeError, GodotFormatsError
from godot_formats.migration import Loss, convert, convert_with_report


def _nan() -> float:
    return float("nan")  # a new NaN object each call: list equality cannot take the identity shortcut


def test_a_loss_holding_nan_equals_its_twin() -> None:
    a = Loss("[0]", "narrowed", _nan(), [_nan(), 1.0])
    b = Loss("[0]", "narrowed", _nan(), [_nan(), 1.0])
    assert a.before is not b.before and math.isnan(a.before)
    assert a == b and not a != b
    assert [a] == [b] and [a, a] == [b, b]
    assert hash(a) == hash(b)  # equal losses must hash alike (sets, dict keys)
    assert len({a, b}) == 1
    vectors = Loss("", "no Vector4", gf.Vector4(_nan(), 1, 2, 3), [_nan(), 1.0, 2.0, 3.0])
    assert vectors == Loss("", "no Vector4", gf.Vector4(_nan(), 1, 2, 3), [_nan(), 1.0, 2.0, 3.0])


def test_losses_that_differ_stay_apart() -> None:
    base = Loss("p", "r", 1, 2)
    assert base != Loss("p", "r", 1.0, 2)  # an int is not a float: not the same data
    assert base != Loss("p", "r", True, 2)
    assert base != Loss("p", "r", 1, 3)
    assert base != Loss("q", "r", 1, 2) and base != Loss("p", "s", 1, 2)
    assert Loss("p", "r", _nan()) != Loss("p", "r", 0.0)
    assert Loss("", "trailing", b"\xff\xff", None) == Loss("", "trailing", b"\xff\xff", None)

    class Opaque:
        pass

    thing = Opaque()
    assert Loss("", "r", thing) == Loss("", "r", thing) and Loss("", "r", thing) != Loss("", "r", Opaque())


@pytest.mark.parametrize("value, target", [
    (gf.PackedFloat64Array([math.nan, 0.1]), "godot3"),
    (gf.Vector4(math.nan, 1, 2, 3), "godot3"),
    ({"n": [gf.Vector4(math.nan, 0, 0, 0)]}, "godot3"),
])
def test_strict_and_lossy_report_equal_losses_with_nan(value: Any, target: str) -> None:
    """The flaky property, made deterministic: each conversion decodes the bytes anew."""
    blob = gf.dumps(value, "godot4")
    _, lossy = convert_with_report(blob, "godot4", target, policy="lossy")
    assert lossy and "nan" in repr(lossy[0].before)
    with pytest.raises(ConversionError) as info:
        convert(blob, "godot4", target)
    assert info.value.losses == lossy


def test_errors_carry_where_and_what() -> None:
    e = DecodeError(12, "bad header")
    assert (e.offset, e.reason, str(e)) == (12, "bad header", "at byte 12: bad header")
    assert isinstance(e, GodotFormatsError) and isinstance(e, ValueError)
    assert str(EncodeError("too deep", "[0][1]")) == "[0][1]: too deep" and str(EncodeError("x")) == "x"
    losses = [Loss("[0]", "narrowed"), Loss("", "gone")]
    err = ConversionError(losses)
    assert err.losses == losses and "2 value(s)" in str(err) and "<root>: gone" in str(err)


def test_memoryviews_strided_and_released() -> None:
    """A strided memoryview is the bytes it shows (bytearray += and b"".join refuse one: they
    raised TypeError at the top level); a released one is the library's error, not ValueError,
    in the writers, and a key equal only to itself."""
    strided = memoryview(b"abcdef")[::2]
    released = memoryview(b"ab")
    released.release()
    for dialect in ("godot4", "godot3"):
        assert gf.dumps(strided, dialect) == gf.dumps(b"ace", dialect)
        assert gf.dumps([strided], dialect) == gf.dumps([b"ace"], dialect)
        for value in (released, [released], {"k": released}):
            with pytest.raises(gf.EncodeError):
                gf.dumps(value, dialect)
            with pytest.raises(gf.GodotFormatsError):
                gf.to_text(value, dialect)
    key = gf.godot_key(released, gf.GODOT4_KEYS, None)
    assert key == gf.godot_key(released, gf.GODOT4_KEYS, None)
    assert key != gf.godot_key(memoryview(b""), gf.GODOT4_KEYS, None)


#: Where an error class may be defined: the library's in core/errors.py, the command line's own in the
#: module the commands share.
ERROR_HOMES = ("godot_formats.core.errors", "godot_formats.commands.common")


def test_every_error_class_is_defined_in_one_module() -> None:
    """One hierarchy in one module (core/errors.py): a layer, view or command raises a class from there;
    an error that only the command line raises lives with it (commands/common.py)."""
    import importlib
    import inspect
    import pkgutil

    import godot_formats

    defined = {}
    for info in pkgutil.walk_packages(godot_formats.__path__, "godot_formats."):
        if info.name.endswith("__main__") or ".core._c" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and not issubclass(obj, Warning)
                    and obj.__module__.startswith("godot_formats") and not name.startswith("_")):
                defined[obj.__qualname__] = obj.__module__  # (private control flow, such as codec._Failed, aside)
    assert len(defined) >= 20
    assert {name: module for name, module in defined.items() if module not in ERROR_HOMES} == {}
    from godot_formats.core import errors
    assert all(issubclass(getattr(errors, name), errors.GodotFormatsError) for name in errors.__all__
               if name[0].isupper() and name not in ("QUOTED", "LostRecord", "OracleError", "Remedy"))
