"""The report card of a conformance run: per dialect, a table of type ids by operation (passed/judged),
the cases not run, the counts of each operation on its own, the hints, then the failing cases
(docs/conformance.md, "Reading the report").

A case the adapter hung or crashed on is a failure (``hang``, ``crash``: counted with the failures and
also on their own); a case never sent (the time limit, or an adapter that no longer starts) is ``not
run``: its own count and column, never a failure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import (
    CRASH,
    DECODE,
    ENCODE,
    ENGINES,
    ERROR,
    FAILED,
    HANG,
    NOT_RUN,
    OPERATIONS,
    PASS,
    ROUNDTRIP,
    SAME,
    Verdict,
    _one_line,
    describe_failure,
    hex_excerpt,
)
from .hints import Hint, find_hints
from .runner import Run

#: The text table's columns: (operation, expect, sub-header); the group header is the operation.
COLUMNS = ((ROUNDTRIP, SAME, "bytes"), (ROUNDTRIP, ERROR, "refused"), (DECODE, SAME, "value"),
           (DECODE, ERROR, "refused"), (ENCODE, SAME, "bytes"))
WIDTH = 8


def counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """passed, failed (hangs and crashes included), hung, crashed, not_run and total."""
    statuses = [v.status for v in verdicts]
    return {"passed": statuses.count(PASS), "failed": sum(s in FAILED for s in statuses),
            "hung": statuses.count(HANG), "crashed": statuses.count(CRASH), "not_run": statuses.count(NOT_RUN),
            "total": len(statuses)}


def _type_rows(verdicts: Sequence[Verdict], operations: Sequence[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[bool, int], list[Verdict]] = {}
    for v in verdicts:
        c = v.case
        groups.setdefault((c.type is None, c.type if c.type is not None else 0), []).append(v)
    rows = []
    for key in sorted(groups):
        vs = groups[key]
        c = vs[0].case
        ops = {op: {expect: _judged([v for v in vs if v.op == op and v.case.expect == expect])
                    for expect in ((SAME,) if op == ENCODE else (SAME, ERROR))} for op in operations}
        rows.append({"type": c.type, "name": c.type_name, "operations": ops,
                     "not_run": sum(v.status == NOT_RUN for v in vs),
                     "failed": sum(v.status in FAILED for v in vs)})
    return rows


def _judged(verdicts: list[Verdict]) -> dict[str, int]:
    """The cell of one operation and kind: passed of judged (the cases not run are counted apart)."""
    judged = [v for v in verdicts if v.status != NOT_RUN]
    return {"passed": sum(v.status == PASS for v in judged), "total": len(judged)}


def _dialect_summary(d: str, vs: list[Verdict], operations: Sequence[str]) -> dict[str, Any]:
    rows = _type_rows(vs, operations)
    return {"engine": ENGINES[d], **counts(vs),
            "operations": {op: counts([v for v in vs if v.op == op]) for op in operations},
            "failing_types": [r["type"] for r in rows if r["failed"]],
            "types": rows}


def summary(run: Run, hints: list[Hint] | None = None) -> dict[str, Any]:
    """The report as data (``--json``): per operation, per dialect, per type id, the hints, every failure."""
    if hints is None:
        hints = find_hints(run.verdicts)
    dialects = {d: _dialect_summary(d, [v for v in run.verdicts if v.case.dialect == d], run.operations)
                for d in dict.fromkeys(v.case.dialect for v in run.verdicts)}
    total = counts(run.verdicts)
    return {"ok": total["passed"] == total["total"] > 0, "command": run.command, **total,
            "operations": {op: counts([v for v in run.verdicts if v.op == op]) for op in run.operations},
            "unsupported_operations": list(run.unsupported),
            "time": {"limit": run.time_limit, "elapsed": round(run.elapsed, 1),
                     "stopped": run.stopped or None},
            "dialects": dialects,
            "adapter": {"starts": run.starts, "late_answers_ignored": run.stale, "problems": run.problems,
                        "declared_operations": None if run.declared is None else list(run.declared)},
            "hints": [h.to_json() for h in hints],
            "failures": [v.to_json() for v in run.verdicts if v.status in FAILED],
            "not_run": [{"case": v.case.name, "dialect": v.case.dialect, "op": v.op}
                        for v in run.verdicts if v.status == NOT_RUN]}


def _cell(c: dict[str, int]) -> str:
    return f"{c['passed']}/{c['total']}" if c["total"] else "-"


def _table(info: dict[str, Any], operations: Sequence[str]) -> list[str]:
    columns = [col for col in COLUMNS if col[0] in operations]
    groups: list[str] = []
    for op in dict.fromkeys(col[0] for col in columns):
        span = sum(col[0] == op for col in columns) * WIDTH
        groups.append(f"{op:>{span}}")
    out = [f"  {'':<30}" + "".join(groups),
           f"  {'type':<30}" + "".join(f"{sub:>{WIDTH}}" for _, _, sub in columns) + f"{'not run':>{WIDTH + 1}}"]
    for r in info["types"]:
        label = f"{r['type']:>3} {r['name']}" if r["type"] is not None else f"  - {r['name']}"
        cells = "".join(f"{_cell(r['operations'][op][expect]):>{WIDTH}}" for op, expect, _ in columns)
        not_run = str(r["not_run"]) if r["not_run"] else "-"
        out.append(f"  {label:<30}{cells}{not_run:>{WIDTH + 1}}" + ("   FAIL" if r["failed"] else ""))
    return out


def _counts_line(c: dict[str, int]) -> str:
    """``34/160 passed, 126 failed (12 hung), 84 not run``: the judged cases, then those not run."""
    judged = c["total"] - c["not_run"]
    line = f"{c['passed']}/{judged} passed"
    if c["failed"]:
        line += f", {c['failed']} failed"
        stops = [f"{c[k]} {k}" for k in ("hung", "crashed") if c[k]]
        line += f" ({', '.join(stops)})" if stops else ""
    if c["not_run"]:
        line += f", {c['not_run']} not run"
    return line


def _dialect_text(d: str, info: dict[str, Any], operations: Sequence[str]) -> list[str]:
    out = ["", f"{d}: judged by {info['engine']}"] + _table(info, operations)
    for op, c in info["operations"].items():
        out.append(f"{d} {op + ':':<10} {_counts_line(c)}")
    if info["failing_types"]:
        names = {r["type"]: r["name"] for r in info["types"]}
        out.append(f"{d} failing type ids: "
                   + ", ".join(f"{t} {names[t]}" if t is not None else names[t] for t in info["failing_types"]))
    return out


def _run_lines(run: Run, data: dict[str, Any]) -> list[str]:
    """What was run and how: the operations, the time limit, the adapter's starts and problems."""
    ops = ", ".join(run.operations) or "none"
    if run.unsupported:
        ops += f" ({', '.join(run.unsupported)}: not supported by the adapter)"
    limit = "no time limit" if run.time_limit is None else f"time limit {run.time_limit:g} s"
    out = ["", f"operations: {ops}", f"time: {run.elapsed:.1f} s ({limit})"
           + (f"; stopped: {run.stopped}" if run.stopped else "")]
    adapter = data["adapter"]
    late = adapter["late_answers_ignored"]
    out.append(f"adapter: started {adapter['starts']} time{'s' if adapter['starts'] != 1 else ''}"
               + (f", {late} late answers ignored" if late else ""))
    problems = adapter["problems"]
    out += [f"  problem: {_one_line(p, 400)}" for p in problems[:10]]
    if len(problems) > 10:
        out.append(f"  ... and {len(problems) - 10} more problems (--json lists all)")
    return out


def _last_line(c: dict[str, int], stopped: str) -> str:
    if c["failed"]:
        stops = [f"{c[k]} {k}" for k in ("hung", "crashed") if c[k]]
        line = f"FAIL: {c['failed']} of {c['total']} cases failed" + (f" ({', '.join(stops)})" if stops else "")
        return line + (f"; {c['not_run']} not run" if c["not_run"] else "")
    if c["not_run"]:
        return f"INCOMPLETE: {c['passed']} of {c['total']} cases passed, {c['not_run']} not run ({stopped})"
    if not c["total"]:
        return "FAIL: no case was run"
    return f"PASS: {c['total']} of {c['total']} cases"


def to_text(run: Run, show: int = 10) -> str:
    hints = find_hints(run.verdicts)
    data = summary(run, hints)
    out = [f"conformance of: {' '.join(run.command)}"]
    for d, info in data["dialects"].items():
        out += _dialect_text(d, info, run.operations)
    out += _run_lines(run, data)
    if hints:
        out += ["", "hints (patterns the failures match):"]
        out += [f"  {h.text()}" for h in hints]
    failing = [v for v in run.verdicts if v.status in FAILED]
    if failing:
        shown = _pick(failing, show)
        more = "; --show N for more, --json for all" if len(shown) < len(failing) else ""
        out += ["", f"first failing cases ({len(shown)} of {len(failing)}{more}):"]
        for v in shown:
            out += [""] + describe_failure(v)
    out += ["", _last_line(counts(run.verdicts), run.stopped)]
    return "\n".join(out) + "\n"


def _pick(failing: list[Verdict], show: int) -> list[Verdict]:
    """The failures to print: the first of each dialect, operation and type id, then the next ones,
    in corpus order."""
    if show < 0:
        return failing
    seen: set[tuple[str, str, int | None]] = set()
    first = []
    for v in failing:
        key = (v.case.dialect, v.op, v.case.type)
        if key not in seen:
            seen.add(key)
            first.append(v)
    first_ids = {id(v) for v in first}
    chosen = {id(v) for v in (first + [v for v in failing if id(v) not in first_ids])[:show]}
    return [v for v in failing if id(v) in chosen]


def to_json(run: Run) -> str:
    return json.dumps(summary(run), indent=1) + "\n"


__all__ = ["ERROR", "OPERATIONS", "SAME", "counts", "describe_failure", "hex_excerpt", "summary", "to_json",
           "to_text"]
