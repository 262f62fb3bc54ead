"""Round-trip properties for every type in every dialect (hypothesis).

For any value a dialect can hold: decode(encode(v)) re-encodes to the same
bytes, consumes every byte, and equals v where Python equality is meaningful.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import budget
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import values

import godot_formats as gf

ALL_DIALECTS = gf.dialect_names()


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_decode_encode_is_stable(dialect: str, data: Any) -> None:
    value = data.draw(values(dialect))
    blob = gf.dumps(value, dialect)
    decoded, end = gf.decode(blob, dialect)
    assert end == len(blob)
    assert gf.dumps(decoded, dialect) == blob


@pytest.mark.parametrize("dialect", ["godot3", "godot4", "godot4-double"])
# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(60), deadline=None)
@given(data=st.data())
def test_decoded_value_equals_original(dialect: str, data: Any) -> None:
    value = data.draw(values(dialect))
    decoded = gf.loads(gf.dumps(value, dialect), dialect)
    # NaN != NaN in Python; compare through the encoding instead when one is present.
    if "nan" in repr(value):
        return
    assert decoded == value


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
# parametrized by dialect: each case takes a share of the profile's examples
@settings(max_examples=budget(25), deadline=None)
@given(data=st.data())
def test_trailing_bytes_are_ignored_and_reported(dialect: str, data: Any) -> None:
    value = data.draw(values(dialect, max_leaves=4))
    blob = gf.dumps(value, dialect)
    decoded, end = gf.decode(blob + b"\xde\xad\xbe\xef", dialect)
    assert end == len(blob)
    assert gf.dumps(decoded, dialect) == blob
