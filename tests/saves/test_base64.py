"""``Marshalls.variant_to_base64`` / ``base64_to_variant`` against the engines' own text."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from conftest import FIXTURES, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_formats as gf
from godot_formats.layers.base64form import base64_to_bytes, base64_to_variant, variant_to_base64

RECORDS = [pytest.param(dialect, r, id=r["name"])
           for name, dialect in (("godot3_containers.jsonl", "godot3"), ("godot4_containers.jsonl", "godot4"))
           for r in read_jsonl(FIXTURES / "containers" / name) if r["container"] == "base64"]


def test_both_engines_have_a_fixture() -> None:
    assert {p.values[0] for p in RECORDS} == {"godot3", "godot4"}  # type: ignore[index]


@pytest.mark.parametrize("dialect, record", RECORDS)
def test_engine_text_reads_to_the_engine_value_and_is_written_back(dialect: str, record: dict[str, Any]) -> None:
    text = record["text"]
    assert bytes.fromhex(record["file_hex"]) == text.encode("ascii")
    value = base64_to_variant(text, dialect)
    assert gf.dumps(value, dialect).hex() == record["value_hex"][0]  # the engine's var2bytes
    assert gf.to_text(value, dialect) == record["values"][0]  # the engine's var2str
    assert variant_to_base64(value, dialect) == text
    assert base64_to_variant(text.encode("ascii"), dialect) == value


def test_no_prefix_padding_and_no_line_breaks() -> None:
    assert variant_to_base64(True, "godot4") == base64.b64encode(gf.dumps(True)).decode() == "AQAAAAEAAAA="
    long = variant_to_base64("x" * 200, "godot4")
    assert "\n" not in long and long.endswith("=") is (len(gf.dumps("x" * 200)) % 3 != 0)


def test_full_objects() -> None:
    obj = gf.Object("Resource", {"name": "a"})
    text = variant_to_base64(obj, "godot4", full_objects=True)
    assert base64_to_variant(text, "godot4", allow_objects=True) == obj
    with pytest.raises(gf.DecodeError, match="allow_objects"):
        base64_to_variant(text, "godot4")
    with pytest.raises(gf.EncodeError):
        variant_to_base64(obj, "godot4")


def test_line_breaks_are_skipped_like_the_engines_mbedtls() -> None:
    text = variant_to_base64("hello world", "godot4")
    assert base64_to_variant(text[:8] + "\n" + text[8:16] + "\r\n" + text[16:], "godot4") == "hello world"


@pytest.mark.parametrize("text, offset, reason", [
    ("AQAAAAEAAAA", 11, "ends inside a 4-character group"),
    ("AQAA!AEAAAA=", 4, "'!' is not a base64 character"),
    ("AQ==AAEAAAA=", 4, "after the '=' padding"),
    ("AQAAA===", 5, "padding out of place"),
    (" AQAAAAEAAAA=", 0, "' ' is not a base64 character"),
    ("AQAAAAEAAAA=\r", 12, "'\\r' is not a base64 character"),
    ("AQAAAAEAAAé=", 10, "is not a base64 character"),
])
def test_text_that_is_not_base64_is_refused_at_the_character(text: str, offset: int, reason: str) -> None:
    with pytest.raises(gf.DecodeError) as info:
        base64_to_variant(text, "godot4")
    assert info.value.offset == offset and reason in info.value.reason


def test_bad_decoded_bytes_are_refused_at_their_group() -> None:
    data = gf.dumps(["abc", 1, 2, 3])[:-3]  # the last int cut short
    text = base64.b64encode(data).decode()
    with pytest.raises(gf.DecodeError) as info:
        base64_to_variant(text, "godot4")
    assert "decoded byte" in info.value.reason
    byte = int(info.value.reason.split()[2].rstrip(":"))
    assert info.value.offset == byte // 3 * 4


def test_a_huge_text_is_refused_by_max_size() -> None:
    with pytest.raises(gf.DecodeError, match="max_size"):
        base64_to_bytes("AAAA" * 100, max_size=10)


@settings(deadline=None)
@given(text=st.text(alphabet=st.sampled_from("AQE=+/x\n\r! é"), max_size=40),
       dialect=st.sampled_from(["godot3", "godot4", "godot2"]), objects=st.booleans())
def test_any_text_is_a_value_or_a_decode_error(text: str, dialect: str, objects: bool) -> None:
    try:
        base64_to_variant(text, dialect, objects)
    except gf.DecodeError as e:
        assert 0 <= e.offset <= len(text)
