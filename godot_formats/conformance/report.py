"""The report card of a conformance run: dialect x type id, passed/total, then the failing cases
(docs/conformance.md, "Reading the report")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import ENGINES, ERROR, SAME, Verdict, _one_line, describe_failure, hex_excerpt
from .runner import Run


def _type_rows(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    rows: dict[tuple[bool, int], dict[str, Any]] = {}
    for v in verdicts:
        c = v.case
        key = (c.type is None, c.type if c.type is not None else 0)
        row = rows.setdefault(key, {"type": c.type, "name": c.type_name,
                                    "same": {"passed": 0, "total": 0}, "error": {"passed": 0, "total": 0}})
        cell = row[c.expect]
        cell["total"] += 1
        cell["passed"] += v.passed
    return [rows[k] for k in sorted(rows)]


def summary(run: Run) -> dict[str, Any]:
    """The report as data (``--json``): per dialect, per type id, and every failure."""
    dialects: dict[str, Any] = {}
    for d in dict.fromkeys(v.case.dialect for v in run.verdicts):
        vs = [v for v in run.verdicts if v.case.dialect == d]
        rows = _type_rows(vs)
        dialects[d] = {
            "engine": ENGINES[d],
            "passed": sum(v.passed for v in vs), "total": len(vs),
            "failing_types": [r["type"] for r in rows if any(r[k]["passed"] < r[k]["total"] for k in (SAME, ERROR))],
            "types": [{"type": r["type"], "name": r["name"], "same_bytes": r["same"], "refused": r["error"]}
                      for r in rows],
        }
    failures = [v.to_json() for v in run.verdicts if not v.passed]
    return {"ok": not failures and bool(run.verdicts), "command": run.command,
            "passed": sum(v.passed for v in run.verdicts), "total": len(run.verdicts),
            "dialects": dialects,
            "adapter": {"starts": run.starts, "late_answers_ignored": run.stale, "problems": run.problems},
            "failures": failures}


def _cell(c: dict[str, int]) -> str:
    return f"{c['passed']}/{c['total']}" if c["total"] else "-"


def to_text(run: Run, show: int = 10) -> str:
    data = summary(run)
    out = [f"conformance of: {' '.join(run.command)}"]
    for d, info in data["dialects"].items():
        out += ["", f"{d}: judged by {info['engine']}",
                f"  {'type':<30} {'same bytes':>10} {'refused':>9}"]
        for r in info["types"]:
            label = f"{r['type']:>3} {r['name']}" if r["type"] is not None else f"  - {r['name']}"
            failed = r["type"] in info["failing_types"]
            out.append(f"  {label:<30} {_cell(r['same_bytes']):>10} {_cell(r['refused']):>9}"
                       + ("   FAIL" if failed else ""))
        line = f"{d}: {info['passed']}/{info['total']} passed"
        if info["failing_types"]:
            names = {r["type"]: r["name"] for r in info["types"]}
            listed = ", ".join(f"{t} {names[t]}" if t is not None else names[t] for t in info["failing_types"])
            line += f", {info['total'] - info['passed']} failed; failing type ids: {listed}"
        out.append(line)
    adapter = data["adapter"]
    late = adapter["late_answers_ignored"]
    out += ["", f"adapter: started {adapter['starts']} time{'s' if adapter['starts'] != 1 else ''}"
                + (f", {late} late answers ignored" if late else "")]
    out += [f"  problem: {_one_line(p, 400)}" for p in adapter["problems"]]
    failing = [v for v in run.verdicts if not v.passed]
    if failing:
        shown = _pick(failing, show)
        more = "; --show N for more, --json for all" if len(shown) < len(failing) else ""
        out += ["", f"first failing cases ({len(shown)} of {len(failing)}{more}):"]
        for v in shown:
            out += [""] + describe_failure(v)
    out += ["", f"FAIL: {len(failing)} of {len(run.verdicts)} cases failed" if failing
            else f"PASS: {len(run.verdicts)} of {len(run.verdicts)} cases"]
    return "\n".join(out) + "\n"


def _pick(failing: list[Verdict], show: int) -> list[Verdict]:
    """The failures to print: the first of each dialect and type id, then the next ones, in corpus order."""
    if show < 0:
        return failing
    seen: set[tuple[str, int | None]] = set()
    first = []
    for v in failing:
        key = (v.case.dialect, v.case.type)
        if key not in seen:
            seen.add(key)
            first.append(v)
    rest = [v for v in failing if v not in first]
    chosen = {id(v) for v in (first + rest)[:show]}
    return [v for v in failing if id(v) in chosen]


def to_json(run: Run) -> str:
    return json.dumps(summary(run), indent=1) + "\n"


__all__ = ["ERROR", "SAME", "describe_failure", "hex_excerpt", "summary", "to_json", "to_text"]
