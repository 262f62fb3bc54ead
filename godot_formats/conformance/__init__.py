"""The conformance kit: the real engines' bytes, to judge any implementation of Godot's binary
serialization (``godot-formats conformance``, docs/conformance.md).

The corpus ships with the package (``corpus/godot3.jsonl``, ``corpus/godot4.jsonl``, built from the
repository's ``fixtures/`` by ``scripts/make_conformance_corpus.py``).  Every expected answer is the
engine's own: each value Godot 3.2.3 / Godot 4.6 wrote must come back as the same bytes after a decode and
an encode (NodePath name padding ignored), and each input the engine refused must be refused.

In a Python test suite::

    from godot_formats.conformance import cases

    @pytest.mark.parametrize("case", cases(), ids=str)
    def test_godot_conformance(case):
        case.check(my_roundtrip)   # my_roundtrip(data: bytes, dialect: str, objects: bool) -> bytes

or opt in to the pytest plugin (``--godot-conformance``) and take the ``godot_conformance_case``
fixture; :func:`judge` gives a :class:`Verdict` without raising.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Type, Union

#: What Case.check takes for the exceptions that mean "refused" (``type`` is a field name in Case).
Refusals = Union[Type[BaseException], tuple[Type[BaseException], ...]]

#: The dialects the corpus holds, and the engine whose bytes judge each.
ENGINES = {
    "godot3": "Godot 3.2.3 (Debian godot3-server 3.2.3-stable)",
    "godot4": "Godot 4.6-stable (official web build, 32-bit real_t)",
}
DIALECTS = tuple(ENGINES)

SAME, ERROR = "same", "error"

__all__ = ["DIALECTS", "ENGINES", "Case", "Verdict", "cases", "judge"]


@dataclass(frozen=True)
class Case:
    """One input of the corpus and what the engine did with it."""

    #: ``encode:NAME`` (``/full_objects``) for a value the engine wrote, ``malformed:NAME`` (or
    #: ``hostile_counts:``, ``deep_dictionary_keys:``) for an input the engine refused.
    name: str
    dialect: str
    #: The type id in the input's header (its low byte), or None when the input is shorter than a header.
    type: int | None
    #: The engine's name for that type id (``(not a type)`` for an id the engine has no type for).
    type_name: str
    #: Decode with objects allowed and encode with full objects (``*_with_objects``).
    objects: bool
    #: ``same``: the bytes must come back unchanged; ``error``: the input must be refused.
    expect: str
    #: The input, hex.
    hex: str
    #: What the engine said: ``var_to_str``/``var2str`` of the value, or its error lines.
    engine: str
    #: [start, end) byte ranges of NodePath name padding, which the comparison ignores.
    mask: tuple[tuple[int, int], ...] = ()

    def __str__(self) -> str:
        return f"{self.dialect}/{self.name}"

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.hex)

    @property
    def expected(self) -> bytes | None:
        """The bytes an implementation must give back, or None when it must refuse the input."""
        return self.data if self.expect == SAME else None

    def request(self, request_id: int) -> dict[str, Any]:
        """The protocol's request line for this case (docs/conformance.md)."""
        return {"id": request_id, "op": "roundtrip", "dialect": self.dialect, "objects": self.objects,
                "hex": self.hex}

    def check(self, roundtrip: Callable[[bytes, str, bool], Any],
              refusals: Refusals = Exception) -> None:
        """Run ``roundtrip(data, dialect, objects)`` (it returns the re-encoded bytes, or raises one of
        ``refusals`` to refuse them) and raise AssertionError with the report if it disagrees with the engine."""
        try:
            out = roundtrip(self.data, self.dialect, self.objects)
        except refusals as e:
            verdict = judge(self, error=f"{type(e).__name__}: {e}")
        else:
            if not isinstance(out, (bytes, bytearray, memoryview)):
                raise AssertionError(f"{self}: the roundtrip function returned {type(out).__name__}, not bytes")
            verdict = judge(self, actual=bytes(out))
        if not verdict.passed:
            raise AssertionError(verdict.describe())


@dataclass(frozen=True)
class Verdict:
    """How one answer compares with the engine."""

    case: Case
    passed: bool
    #: Why it failed, in words ("" when it passed).
    reason: str = ""
    #: The bytes the implementation gave back, if it gave bytes.
    actual: bytes | None = None
    #: The implementation's refusal message, if it refused.
    error: str | None = None

    def describe(self) -> str:
        """The failure as the text report prints it (a few lines)."""
        return "\n".join(describe_failure(self))

    def to_json(self) -> dict[str, Any]:
        c = self.case
        return {"case": c.name, "dialect": c.dialect, "type": c.type, "type_name": c.type_name,
                "objects": c.objects, "expect": c.expect, "input_hex": c.hex,
                "expected_hex": c.hex if c.expect == SAME else None, "mask": [list(r) for r in c.mask],
                "actual_hex": None if self.actual is None else self.actual.hex(), "error": self.error,
                "passed": self.passed, "reason": self.reason, "engine": c.engine}


def _load(dialect: str) -> list[Case]:
    text = (resources.files(__name__) / "corpus" / f"{dialect}.jsonl").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            d = json.loads(line)
            d["name"] = d.pop("case")
            d["mask"] = tuple((int(a), int(b)) for a, b in d["mask"])
            out.append(Case(**d))
    return out


_CACHE: dict[str, list[Case]] = {}


def cases(dialects: Iterable[str] | None = None) -> list[Case]:
    """The corpus: every case of each dialect (``godot3``, ``godot4``; default both), in a fixed order."""
    out: list[Case] = []
    for d in DIALECTS if dialects is None else dialects:
        if d not in ENGINES:
            raise ValueError(f"no conformance corpus for {d!r}: choose from {', '.join(DIALECTS)}")
        if d not in _CACHE:
            _CACHE[d] = _load(d)
        out.extend(_CACHE[d])
    return out


def first_difference(case: Case, actual: bytes) -> int | None:
    """The first offset where ``actual`` differs from the engine's bytes outside the padding mask, or
    None when they are the same (the length counts: a shorter answer differs where it ends)."""
    expected = case.data
    masked = {i for a, b in case.mask for i in range(a, b)}
    for i, (x, y) in enumerate(zip(expected, actual)):
        if x != y and i not in masked:
            return i
    if len(actual) != len(expected):
        return min(len(actual), len(expected))
    return None


def judge(case: Case, *, actual: bytes | None = None, error: str | None = None) -> Verdict:
    """Judge one answer: the re-encoded bytes (``actual``) or a refusal (``error``, its message)."""
    if (actual is None) == (error is None):
        raise ValueError("judge() takes the answer's bytes or its error, exactly one")
    if case.expect == ERROR:
        if error is not None:
            return Verdict(case, True, error=error)
        return Verdict(case, False, "accepted an input the engine refuses", actual=actual)
    if error is not None:
        return Verdict(case, False, "refused bytes the engine wrote", error=error)
    assert actual is not None
    at = first_difference(case, actual)
    if at is None:
        return Verdict(case, True, actual=actual)
    if len(actual) != len(case.data) and at == min(len(actual), len(case.data)):
        why = f"{len(actual)} bytes instead of the engine's {len(case.data)}"
    else:
        why = f"bytes differ from offset {at}"
        if len(actual) != len(case.data):
            why += f" ({len(actual)} bytes instead of the engine's {len(case.data)})"
    return Verdict(case, False, why, actual=actual)


# -- a verdict in words (the report's lines, and Verdict.describe) ----------------------------------

#: Hex shown whole up to this many bytes; longer inputs are shown around the first difference.
WHOLE = 48
WINDOW = 32


def _words(data: bytes) -> str:
    return " ".join(data[i:i + 4].hex() for i in range(0, len(data), 4))


def hex_excerpt(data: bytes, at: int | None = None) -> str:
    """``data`` as hex in 4-byte words; when long, the bytes around offset ``at`` and where they are."""
    if len(data) <= WHOLE:
        return _words(data) if data else "(no bytes)"
    start = max(0, ((at or 0) - 8) // 4 * 4)
    part = data[start:start + WINDOW]
    before = f"[{start}:] " if start else ""
    after = f" ... ({len(data)} bytes)" if start + WINDOW < len(data) else f" ({len(data)} bytes)"
    return before + _words(part) + after


def _type_label(case: Case) -> str:
    return f"{case.type} {case.type_name}" if case.type is not None else case.type_name


def describe_failure(v: Verdict) -> list[str]:
    """A failing (or passing) verdict as a few lines of text."""
    c = v.case
    objects = ", objects" if c.objects else ""
    lines = [f"FAIL {c.dialect} {c.name} (type {_type_label(c)}{objects})" if not v.passed
             else f"pass {c.dialect} {c.name} (type {_type_label(c)}{objects})"]
    if c.expect == SAME:
        at = first_difference(c, v.actual) if v.actual is not None else None
        lines.append(f"  engine:   {_one_line(c.engine)}")
        lines.append(f"  expected: {hex_excerpt(c.data, at)}")
    else:
        at = None
        lines.append(f"  input:    {hex_excerpt(c.data)}")
        lines.append(f"  engine:   refused it: {_one_line(c.engine) or '(no message)'}")
    if v.actual is not None:
        lines.append(f"  actual:   {hex_excerpt(v.actual, at)}")
    elif v.error is not None:
        lines.append(f"  actual:   refused: {_one_line(v.error)}")
    else:
        lines.append("  actual:   (no answer)")
    why = v.reason
    if c.mask and c.expect == SAME:
        why += " (NodePath padding ignored at " + ", ".join(f"{a}-{b - 1}" for a, b in c.mask) + ")"
    if why:
        lines.append(f"  why:      {why}")
    return lines


def _one_line(text: str, limit: int = 200) -> str:
    text = " | ".join(part.strip() for part in text.strip().splitlines())
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text if len(text) <= limit else text[:limit] + "..."
