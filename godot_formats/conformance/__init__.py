"""The conformance kit: the real engines' bytes, to judge any implementation of Godot's binary
serialization (``godot-formats conformance``, docs/conformance.md).

The corpus ships with the package (``corpus/godot3.jsonl``, ``corpus/godot4.jsonl``, built from the
repository's ``fixtures/`` by ``scripts/make_conformance_corpus.py``).  Every expected answer is the
engine's own: each value Godot 3.2.3 / Godot 4.6 wrote must come back as the same bytes after a decode and
an encode (NodePath name padding ignored), and each input the engine refused must be refused.

Three operations judge the two directions together or apart (:data:`OPERATIONS`): ``roundtrip``
(bytes in, bytes out), ``decode`` (bytes in, the value in this library's lossless JSON form out,
compared with the engine's value) and ``encode`` (the engine's value as that JSON form in, bytes
out), so that a decode-only or encode-only implementation gets a verdict on what it does.

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

from ..core.errors import JSONFormatError
from ..views.jsonform import dumps_json, from_json

#: What Case.check takes for the exceptions that mean "refused" (``type`` is a field name in Case).
Refusals = Union[Type[BaseException], tuple[Type[BaseException], ...]]

#: The dialects the corpus holds, and the engine whose bytes judge each.
ENGINES = {
    "godot3": "Godot 3.2.3 (Debian godot3-server 3.2.3-stable)",
    "godot4": "Godot 4.6-stable (official web build, 32-bit real_t)",
}
DIALECTS = tuple(ENGINES)

SAME, ERROR = "same", "error"

#: The operations an adapter may support: bytes -> bytes, bytes -> JSON form, JSON form -> bytes.
ROUNDTRIP, DECODE, ENCODE = "roundtrip", "decode", "encode"
OPERATIONS = (ROUNDTRIP, DECODE, ENCODE)

#: What became of one case: judged (pass, fail), the adapter hung or died on it (hang, crash: failures
#: too, named apart because they stop the adapter), or it was never asked (not run: no verdict at all).
PASS, FAIL, HANG, CRASH, NOT_RUN = "pass", "fail", "hang", "crash", "not run"
FAILED = (FAIL, HANG, CRASH)

__all__ = ["CRASH", "DECODE", "DIALECTS", "ENCODE", "ENGINES", "FAIL", "HANG", "NOT_RUN", "OPERATIONS", "PASS",
           "ROUNDTRIP", "Case", "Verdict", "cases", "judge", "judge_decode"]


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
    #: For ``expect: same``, the engine's value in this library's lossless JSON form (compact text):
    #: what a ``decode`` must answer and what an ``encode`` is given.  None for a refused input.
    json: str | None = None

    def __str__(self) -> str:
        return f"{self.dialect}/{self.name}"

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.hex)

    @property
    def expected(self) -> bytes | None:
        """The bytes an implementation must give back, or None when it must refuse the input."""
        return self.data if self.expect == SAME else None

    def operations(self) -> tuple[str, ...]:
        """The operations that judge this case: an input the engine refused has no value to encode."""
        return OPERATIONS if self.expect == SAME else (ROUNDTRIP, DECODE)

    def request(self, request_id: int, op: str = ROUNDTRIP) -> dict[str, Any]:
        """The protocol's request for this case (docs/conformance.md), for ``roundtrip`` and ``decode``."""
        if op not in (ROUNDTRIP, DECODE):
            raise ValueError(f"request() builds roundtrip and decode requests; use request_line() for {op!r}")
        return {"id": request_id, "op": op, "dialect": self.dialect, "objects": self.objects, "hex": self.hex}

    def request_line(self, request_id: int, op: str = ROUNDTRIP) -> bytes:
        """The request as the line sent to an adapter.  An ``encode`` request carries the JSON form as
        text spliced in, not re-serialized: a value nested 1024 deep is deeper than ``json.dumps`` goes."""
        if op != ENCODE:
            return json.dumps(self.request(request_id, op), separators=(",", ":")).encode("ascii") + b"\n"
        if self.json is None:
            raise ValueError(f"{self}: an input the engine refused has no value to encode")
        head = json.dumps({"id": request_id, "op": op, "dialect": self.dialect, "objects": self.objects},
                          separators=(",", ":"))
        return (head[:-1] + ',"json":' + self.json + "}\n").encode("utf-8")

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
    #: The operation judged (:data:`OPERATIONS`).
    op: str = ROUNDTRIP
    #: ``hang``, ``crash`` or ``not run`` when the adapter did not answer; "" when it answered
    #: (then :attr:`status` is ``pass`` or ``fail`` from ``passed``).
    outcome: str = ""
    #: A decode's answer: the value in canonical JSON form, or the answer as it came when it was not
    #: a value in that form.
    actual_json: str | None = None

    @property
    def status(self) -> str:
        """:data:`PASS`, :data:`FAIL`, :data:`HANG`, :data:`CRASH` or :data:`NOT_RUN`."""
        return self.outcome or (PASS if self.passed else FAIL)

    def describe(self) -> str:
        """The failure as the text report prints it (a few lines)."""
        return "\n".join(describe_failure(self))

    def to_json(self) -> dict[str, Any]:
        c = self.case
        out = {"case": c.name, "op": self.op, "status": self.status, "dialect": c.dialect, "type": c.type,
               "type_name": c.type_name, "objects": c.objects, "expect": c.expect,
               "input_hex": None if self.op == ENCODE else c.hex,
               "input_json": c.json if self.op == ENCODE else None,
               "expected_hex": c.hex if c.expect == SAME and self.op != DECODE else None,
               "expected_json": c.json if self.op == DECODE else None, "mask": [list(r) for r in c.mask],
               "actual_hex": None if self.actual is None else self.actual.hex(), "actual_json": self.actual_json,
               "error": self.error, "passed": self.passed, "reason": self.reason, "engine": c.engine}
        return out


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


def judge(case: Case, *, actual: bytes | None = None, error: str | None = None, op: str = ROUNDTRIP) -> Verdict:
    """Judge one answer that is bytes: a ``roundtrip`` (the re-encoded bytes) or an ``encode`` (the
    bytes written for the engine's value), given as ``actual``, or a refusal (``error``, its message)."""
    if (actual is None) == (error is None):
        raise ValueError("judge() takes the answer's bytes or its error, exactly one")
    if op not in (ROUNDTRIP, ENCODE):
        raise ValueError("judge() judges bytes (roundtrip, encode); a decode is judged by judge_decode()")
    if case.expect == ERROR:
        if op == ENCODE:
            raise ValueError(f"{case}: an input the engine refused has no value to encode")
        if error is not None:
            return Verdict(case, True, error=error, op=op)
        return Verdict(case, False, "accepted an input the engine refuses", actual=actual, op=op)
    if error is not None:
        why = "refused bytes the engine wrote" if op == ROUNDTRIP else "refused to encode the engine's value"
        return Verdict(case, False, why, error=error, op=op)
    assert actual is not None
    at = first_difference(case, actual)
    if at is None:
        return Verdict(case, True, actual=actual, op=op)
    if len(actual) != len(case.data) and at == min(len(actual), len(case.data)):
        why = f"{len(actual)} bytes instead of the engine's {len(case.data)}"
    else:
        why = f"bytes differ from offset {at}"
        if len(actual) != len(case.data):
            why += f" ({len(actual)} bytes instead of the engine's {len(case.data)})"
    return Verdict(case, False, why, actual=actual, op=op)


#: What judge_decode() takes for "no value given" (None is a value: JSON null, Godot's Nil).
NO_VALUE: Any = object()


def canonical_json(answer: Any) -> str:
    """A decode's answer (parsed JSON: ours or the engine's ``JSON.from_native`` shapes) as the one
    compact text this library writes for that value, so two spellings of one value compare equal.
    Raises JSONFormatError when it is not a value in the JSON form."""
    return dumps_json(from_json(answer), indent=None)


def judge_decode(case: Case, *, value: Any = NO_VALUE, error: str | None = None) -> Verdict:
    """Judge a ``decode``: the value the implementation read, in the JSON form (``value``: the parsed
    JSON), or its refusal (``error``).  The value is compared with the engine's (``case.json``) in
    canonical form: floats bit for bit (``-0.0``, NaN payloads), ints and floats apart, order kept."""
    if (value is NO_VALUE) == (error is None):
        raise ValueError("judge_decode() takes the answer's value or its error, exactly one")
    if error is not None:
        if case.expect == ERROR:
            return Verdict(case, True, error=error, op=DECODE)
        return Verdict(case, False, "refused bytes the engine wrote", error=error, op=DECODE)
    try:
        text = canonical_json(value)
    except (JSONFormatError, RecursionError) as e:
        raw = _raw_json(value)
        return Verdict(case, False, f"not a value in the JSON form: {e}", op=DECODE, actual_json=raw)
    if case.expect == ERROR:
        return Verdict(case, False, "accepted an input the engine refuses", op=DECODE, actual_json=text)
    assert case.json is not None
    if text == case.json:
        return Verdict(case, True, op=DECODE, actual_json=text)
    at = next((i for i, (x, y) in enumerate(zip(text, case.json)) if x != y), min(len(text), len(case.json)))
    return Verdict(case, False, f"a different value: the JSON forms differ from character {at}",
                   op=DECODE, actual_json=text)


def _raw_json(value: Any) -> str:
    """An answer that is not a value in the JSON form, as text to show (it may nest past any limit)."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        return "(an answer nested too deep to show)"


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


#: The first word of a verdict's lines in the report.
LABELS = {PASS: "pass", FAIL: "FAIL", HANG: "HANG", CRASH: "CRASH", NOT_RUN: "NOT RUN"}
#: JSON text shown whole up to this many characters; longer text around the first difference.
JSON_WHOLE = 160
JSON_WINDOW = 120


def json_excerpt(text: str, at: int | None = None) -> str:
    """JSON text on one line; when long, the characters around offset ``at`` and where they are."""
    if len(text) <= JSON_WHOLE:
        return _one_line(text, JSON_WHOLE)
    start = max(0, (at or 0) - 40)
    part = text[start:start + JSON_WINDOW]
    before = f"[{start}:] " if start else ""
    after = f" ... ({len(text)} characters)" if start + JSON_WINDOW < len(text) else f" ({len(text)} characters)"
    return before + _one_line(part, JSON_WINDOW) + after


def _json_difference(expected: str, actual: str) -> int:
    at = next((i for i, (x, y) in enumerate(zip(expected, actual)) if x != y), None)
    return min(len(expected), len(actual)) if at is None else at


def _expected_lines(v: Verdict) -> tuple[list[str], int | None]:
    """The engine's side of a verdict (what it wrote or refused, and what was sent), and the offset
    where the answer first differs."""
    c = v.case
    if c.expect == ERROR:
        return [f"  input:    {hex_excerpt(c.data)}",
                f"  engine:   refused it: {_one_line(c.engine) or '(no message)'}"], None
    lines = [f"  engine:   {_one_line(c.engine)}"]
    assert c.json is not None
    if v.op == DECODE:
        at = _json_difference(c.json, v.actual_json) if v.actual_json is not None else None
        return lines + [f"  expected: {json_excerpt(c.json, at)}"], at
    at = first_difference(c, v.actual) if v.actual is not None else None
    if v.op == ENCODE:
        lines.append(f"  input:    {json_excerpt(c.json)}")
    return lines + [f"  expected: {hex_excerpt(c.data, at)}"], at


def describe_failure(v: Verdict) -> list[str]:
    """A verdict (failing, or passing) as a few lines of text."""
    c = v.case
    objects = ", objects" if c.objects else ""
    lines = [f"{LABELS[v.status]} {c.dialect} {c.name} (type {_type_label(c)}{objects}) [{v.op}]"]
    expected, at = _expected_lines(v)
    lines += expected
    if v.actual is not None:
        lines.append(f"  actual:   {hex_excerpt(v.actual, at)}")
    elif v.actual_json is not None:
        lines.append(f"  actual:   {json_excerpt(v.actual_json, at)}")
    elif v.error is not None:
        lines.append(f"  actual:   refused: {_one_line(v.error)}")
    else:
        lines.append("  actual:   (no answer)")
    why = v.reason
    if c.mask and c.expect == SAME and v.op != DECODE:
        why += " (NodePath padding ignored at " + ", ".join(f"{a}-{b - 1}" for a, b in c.mask) + ")"
    if why:
        lines.append(f"  why:      {why}")
    return lines


def _one_line(text: str, limit: int = 200) -> str:
    text = " | ".join(part.strip() for part in text.strip().splitlines())
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text if len(text) <= limit else text[:limit] + "..."
