"""Hints: the known patterns a run's failures match, so that a report says *why* as well as *where*.

Why from data: every other implementation checked against the engines went wrong in one of a few
ways, most of them written down as dialects already (the documentation pages' dialects of
:mod:`godot_formats.core.dialects`, the older engines' dialects) or as one switch of a dialect (ints
written 32-bit only, floats always 64-bit ...).  So a hint rule is a row of :data:`RULES`: a dialect
(by name, or the engine's dialect with a switch turned) and the words to say.  Each failing answer is
compared with what that dialect would have answered (read the input and write it again in that
dialect, write the engine's value in it, read the input in it); the rules that explain the most
failures are reported, each once, the failures it explains taken out before the next is chosen.

A second table, :data:`SHAPES`, holds patterns of the verdicts themselves: the hangs or crashes all on
one type, every engine encoding of a type refused (a type the implementation does not have).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import attrs

from ..api import dumps, loads
from ..core.dialects import BasisOrder, Dialect, FloatFormat, IntFormat, get_dialect
from ..core.errors import GodotFormatsError
from ..views.jsonform import dumps_json, loads_json
from . import CRASH, DECODE, ENCODE, FAILED, HANG, NOT_RUN, PASS, SAME, Case, Verdict

#: A rule's dialect: a registered name, or a function of the engine's dialect (a switch turned).
DialectSpec = Union[str, Callable[[Dialect], Dialect]]


def _switch(**changes: Any) -> Callable[[Dialect], Dialect]:
    def variant(d: Dialect) -> Dialect:
        name = d.name + "+" + ",".join(f"{k}={v}" for k, v in changes.items())
        return attrs.evolve(d, name=name, **changes)
    return variant


def _wrap_int32(value: Any) -> Any:
    """Ints cut to their low 32 bits (what a writer of 32-bit ints only writes), in plain Arrays and
    Dictionaries too."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value + (1 << 31)) % (1 << 32) - (1 << 31)
    if type(value) is list:
        return [_wrap_int32(v) for v in value]
    return value


@dataclass(frozen=True)
class Rule:
    """One known pattern: answers in ``dialect`` instead of the engine's."""

    name: str
    #: What the pattern is, in words (the hint says "these match NAME: SAYS").
    says: str
    #: The corpus dialects the rule is tried on.
    engines: tuple[str, ...]
    dialect: DialectSpec
    #: What the pattern does to a value before writing it (None: nothing).
    value: Callable[[Any], Any] | None = None
    #: Whether agreeing refusals alone tell the pattern: only where what the rule cannot write is
    #: narrow (ints beyond 32 bits).  A whole dialect refuses too much (every type it lacks) for an
    #: implementation's refusals to say it follows that dialect.
    refusals_tell: bool = False

    def variant(self, engine: str) -> Dialect:
        spec = self.dialect
        return get_dialect(spec) if isinstance(spec, str) else spec(get_dialect(engine))


BOTH = ("godot3", "godot4")

#: The known patterns.  The documentation dialects first: docs/documented-dialects.md has each page.
RULES: tuple[Rule, ...] = (
    Rule("docs-godot4", "the documentation dialect docs-godot4: Godot 3 type ids used for Godot 4 "
         "(the outdated Godot 4 page; floats always 64-bit)", ("godot4",), "docs-godot4"),
    Rule("docs-godot4-fixed64", "the documentation dialect docs-godot4-fixed64: Godot 3 type ids used for "
         "Godot 4, ints and floats always 8 bytes without the flag (the early Godot 4 page)", ("godot4",),
         "docs-godot4-fixed64"),
    Rule("godot3-for-godot4", "Godot 3's dialect: Godot 3 type ids (and Godot 3's rules) used for Godot 4",
         ("godot4",), "godot3"),
    Rule("godot4.0", "Godot 4.0-4.2's dialect: no typed Arrays or Dictionaries, scripts embedded",
         ("godot4",), "godot4.0"),
    Rule("godot4.3", "Godot 4.3's dialect: no typed Dictionaries", ("godot4",), "godot4.3"),
    Rule("godot4-double", "a precision=double build's bytes: math types written 64-bit with the flag",
         ("godot4",), "godot4-double"),
    Rule("docs-godot3", "the documentation dialect docs-godot3: type = header & 0xFFFF, floats always "
         "64-bit, Basis by columns, PoolStringArray without NULs (the Godot 3 page)", ("godot3",), "docs-godot3"),
    Rule("docs-godot3.0", "the documentation dialect docs-godot3.0: no header flags, ints always 64-bit, "
         "floats always 32-bit (the Godot 3.0 page)", ("godot3",), "docs-godot3.0"),
    Rule("godot4-for-godot3", "Godot 4's dialect: Godot 4 type ids used for Godot 3", ("godot3",), "godot4"),
    Rule("godot3.0", "ints always written 64-bit with the flag (Godot 3.0.x; the engine writes 32 bits when "
         "the value fits)", ("godot3",), "godot3.0"),
    Rule("int32", "ints are written 32-bit only (the engine writes a value beyond 32 bits as 64-bit with the "
         "flag)", BOTH, _switch(int_format=IntFormat.I32), value=_wrap_int32, refusals_tell=True),
    Rule("int64-flag", "ints are always written 64-bit with the flag (the engine writes 32 bits when the "
         "value fits)", ("godot4",), _switch(int_format=IntFormat.FLAG64)),
    Rule("int64", "ints are always written as 8 bytes without the flag", BOTH, _switch(int_format=IntFormat.I64)),
    Rule("float32", "floats are written as 32-bit (the engine writes 64 bits with the flag when 32 would "
         "lose precision)", BOTH, _switch(float_format=FloatFormat.F32)),
    Rule("float64-flag", "floats are always written 64-bit (the engine writes 32 bits when they are exact)",
         BOTH, _switch(float_format=FloatFormat.FLAG64)),
    Rule("float64", "floats are always written as 8 bytes without the flag", BOTH,
         _switch(float_format=FloatFormat.F64)),
    Rule("basis-columns", "Basis and Transform written column by column (the engine writes rows)", BOTH,
         _switch(basis_order=BasisOrder.COLUMNS)),
    Rule("string-array-nul", "PackedStringArray elements without the NUL the engine counts in each length",
         BOTH, _switch(packed_string_nul=False)),
)

#: What a dialect predicts for one case and operation: bytes, JSON text, or this (it refuses).
REFUSES = "(refuses)"
Prediction = Union[bytes, str]


class _Predictor:
    """What each rule's dialect answers for a case: each variant dialect made once (so the codec's
    tables for it are built once), each input read once per dialect."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, str], frozenset[Prediction]] = {}
        self._variants: dict[tuple[str, str], Dialect] = {}
        self._reads: dict[tuple[str, int], Any] = {}

    def predict(self, rule: Rule, v: Verdict) -> frozenset[Prediction]:
        key = (rule.name, id(v.case), v.op)
        if key not in self._cache:
            try:
                self._cache[key] = frozenset(self._compute(rule, v.case, v.op))
            except (GodotFormatsError, ValueError, RecursionError):
                self._cache[key] = frozenset()
        return self._cache[key]

    def _variant(self, rule: Rule, engine: str) -> Dialect:
        key = (rule.name, engine)
        if key not in self._variants:
            self._variants[key] = rule.variant(engine)
        return self._variants[key]

    def _read(self, case: Case, dialect: Dialect) -> Any:
        key = (dialect.name, id(case))
        if key not in self._reads:
            self._reads[key] = _attempt(_read, case.data, dialect, case.objects)
        return self._reads[key]

    def _compute(self, rule: Rule, case: Case, op: str) -> set[Prediction]:
        variant, engine = self._variant(rule, case.dialect), get_dialect(case.dialect)
        if op == DECODE:
            value = self._read(case, variant)
            return {REFUSES if value is REFUSES else dumps_json(value, indent=None)}
        if op == ENCODE:
            assert case.json is not None
            values = [loads_json(case.json)]
        else:  # roundtrip: read as that dialect does, or as the engine does, and write in that dialect
            values = [self._read(case, reader) for reader in (variant, engine)]
        out: set[Prediction] = set()
        for value in values:
            if value is REFUSES:
                out.add(REFUSES)
                continue
            out.add(_attempt(_write, value, variant, case.objects))
            if rule.value is not None:
                out.add(_attempt(_write, rule.value(value), variant, case.objects))
        return out


def _read(data: bytes, dialect: Dialect, objects: bool) -> Any:
    return loads(data, dialect, allow_objects=objects)


def _write(value: Any, dialect: Dialect, objects: bool) -> bytes:
    return dumps(value, dialect, allow_objects=objects)


def _attempt(make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)``, or :data:`REFUSES` when the dialect cannot read or write it."""
    try:
        return make(*args)
    except (GodotFormatsError, ValueError, OverflowError):
        return REFUSES


def _answer(v: Verdict) -> Prediction | None:
    """A failing verdict's answer, in the form predictions take (None: it gave none)."""
    if v.actual is not None:
        return v.actual
    if v.actual_json is not None:
        return v.actual_json
    if v.error is not None:
        return REFUSES
    return None


def _matches(v: Verdict, answer: Prediction, predicted: frozenset[Prediction]) -> bool:
    if answer in predicted:
        return True
    if not isinstance(answer, bytes) or not v.case.mask:
        return False
    masked = {i for a, b in v.case.mask for i in range(a, b)}  # NodePath padding, as the judge ignores it
    return any(isinstance(p, bytes) and len(p) == len(answer)
               and all(x == y or i in masked for i, (x, y) in enumerate(zip(p, answer))) for p in predicted)


@dataclass
class Hint:
    """One pattern and the failures it explains."""

    rule: str
    says: str
    #: The failing cases it explains (``dialect/case [op]``), and how many answers matched byte for
    #: byte (or value for value) against those that matched a refusal with a refusal.
    cases: list[str] = field(default_factory=list)
    outputs: int = 0
    refusals: int = 0
    of: int = 0

    def text(self) -> str:
        how = []
        if self.outputs:
            how.append(f"{self.outputs} answers exactly")
        if self.refusals:
            how.append(f"{self.refusals} refusals")
        shown = ", ".join(self.cases[:3]) + (", ..." if len(self.cases) > 3 else "")
        detail = f" ({'; '.join(how)}; e.g. {shown})" if how else f" (e.g. {shown})"
        return f"{len(self.cases)} of {self.of} failures match {self.says}{detail}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "says": self.says, "count": len(self.cases), "of": self.of,
                "outputs": self.outputs, "refusals": self.refusals, "cases": self.cases}


def _label(v: Verdict) -> str:
    return f"{v.case}[{v.op}]"


def _refusals_hold(rule: Rule, verdicts: Sequence[Verdict], predictor: _Predictor) -> bool:
    """Whether the implementation refused every engine value the rule's dialect cannot write or read
    (it passed none of them): only then do agreeing refusals say it follows that rule (an int64
    refused by a writer of 32-bit ints), rather than that it refuses things."""
    return not any(v.status == PASS and v.case.expect == SAME and v.case.dialect in rule.engines
                   and predictor.predict(rule, v) == {REFUSES} for v in verdicts)


def dialect_hints(failing: Sequence[Verdict], verdicts: Sequence[Verdict] = ()) -> list[Hint]:
    """The rules of :data:`RULES` that explain the failures, the one matching most answers exactly
    first, each failure explained once.  A rule is chosen for the failures left only while it matches
    one of them exactly, or, for a rule whose refusals tell (:attr:`Rule.refusals_tell`), while the
    implementation refused everything the rule cannot write (``verdicts``: the whole run)."""
    predictor = _Predictor()
    explained: dict[str, dict[int, bool]] = {}  # rule -> failure index -> matched an output (not a refusal)
    for i, v in enumerate(failing):
        answer = _answer(v)
        if answer is None:
            continue
        for rule in RULES:
            if v.case.dialect in rule.engines and _matches(v, answer, predictor.predict(rule, v)):
                explained.setdefault(rule.name, {})[i] = answer != REFUSES
    by_name = {r.name: r for r in RULES}
    # Refusals alone qualify a rule only where they tell (see Rule.refusals_tell).
    by_refusals = {name for name in explained
                   if by_name[name].refusals_tell and _refusals_hold(by_name[name], verdicts, predictor)}
    left = set(range(len(failing)))
    hints: list[Hint] = []
    while True:
        scores = {name: [i for i in found if i in left] for name, found in explained.items()}
        scores = {name: chosen for name, chosen in scores.items()
                  if any(explained[name][i] for i in chosen) or (chosen and name in by_refusals)}
        if not scores:
            return hints
        # Exact answers first: agreeing refusals are weaker evidence than the same bytes.
        name = max(scores, key=lambda n: (sum(explained[n][i] for i in scores[n]), len(scores[n]),
                                          -list(by_name).index(n)))
        chosen = scores[name]
        outputs = sum(explained[name][i] for i in chosen)
        hints.append(Hint(name, by_name[name].says, [_label(failing[i]) for i in chosen], outputs,
                          len(chosen) - outputs, len(failing)))
        left -= set(chosen)


# -- patterns of the verdicts themselves -------------------------------------------------------------


def _type_label(c: Case) -> str:
    return f"{c.type_name} (type {c.type})" if c.type is not None else c.type_name


def _stops_on_one_type(failing: Sequence[Verdict], outcome: str, word: str) -> list[Hint]:
    """Most hangs (or crashes) on one type: the implementation loops or dies on that type."""
    stopped = [v for v in failing if v.status == outcome]
    if len(stopped) < 2:
        return []
    (case_type, n), = Counter((v.case.dialect, _type_label(v.case)) for v in stopped).most_common(1)
    if n * 2 < len(stopped):
        return []
    dialect, label = case_type
    chosen = [_label(v) for v in stopped if (v.case.dialect, _type_label(v.case)) == case_type]
    return [Hint(f"{outcome}-on-type", f"the adapter {word} on {dialect} {label} values", chosen, 0, 0,
                 len(failing))]


def _unsupported_types(failing: Sequence[Verdict], verdicts: Sequence[Verdict]) -> list[Hint]:
    """Types whose every engine encoding was refused, per dialect and operation: a type the
    implementation does not have."""
    groups: dict[tuple[str, str, str], list[Verdict]] = {}
    for v in verdicts:
        if v.case.expect == SAME and v.status != NOT_RUN:
            groups.setdefault((v.case.dialect, v.op, _type_label(v.case)), []).append(v)
    per_dialect_op: dict[tuple[str, str], list[tuple[str, list[Verdict]]]] = {}
    for (dialect, op, label), vs in groups.items():
        if all(v.status in FAILED and v.actual is None and v.actual_json is None and v.error is not None
               for v in vs):
            per_dialect_op.setdefault((dialect, op), []).append((label, vs))
    hints: list[Hint] = []
    for (dialect, op), found in per_dialect_op.items():
        labels = ", ".join(label for label, _ in found)
        cases = [_label(v) for _, vs in found for v in vs]
        hints.append(Hint(f"unsupported-types-{op}", f"every {dialect} engine encoding refused ({op}), "
                          f"types it seems not to have: {labels}", cases, 0, len(cases), len(failing)))
    return hints


#: Patterns of the verdicts: each a function of (failing verdicts, all verdicts) giving hints.
SHAPES: tuple[Callable[[Sequence[Verdict], Sequence[Verdict]], list[Hint]], ...] = (
    lambda failing, _: _stops_on_one_type(failing, HANG, "hangs"),
    lambda failing, _: _stops_on_one_type(failing, CRASH, "crashes"),
    _unsupported_types,
)


def find_hints(verdicts: Sequence[Verdict]) -> list[Hint]:
    """Every hint for a run: the dialect rules, then the verdict patterns among the failures those
    leave unexplained (a type "refused" because a documentation dialect reads its id as another type
    is the dialect's doing, said once)."""
    failing = [v for v in verdicts if v.status in FAILED]
    if not failing:
        return []
    hints = dialect_hints(failing, verdicts)
    explained = {case for h in hints for case in h.cases}
    left = [v for v in failing if _label(v) not in explained]
    rest = [v for v in verdicts if _label(v) not in explained]
    shapes = [h for shape in SHAPES for h in shape(left, rest)]
    for h in shapes:
        h.of = len(failing)
    return hints + shapes


__all__ = ["RULES", "SHAPES", "Hint", "Rule", "dialect_hints", "find_hints"]
