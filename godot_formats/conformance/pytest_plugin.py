"""A pytest plugin: the engines' corpus as the parametrized fixture ``godot_conformance_case``.

Installed with the package (entry point ``pytest11``), it does nothing until a run opts in, so
other projects' test runs are not affected: a test that asks for ``godot_conformance_case`` is
skipped, saying how to opt in, unless the run has

* ``--godot-conformance`` (both corpora) or ``--godot-conformance=godot4`` (a comma-separated list), or
* the ini setting ``godot_conformance = godot3, godot4`` (``[tool.pytest.ini_options]``, pytest.ini, ...).

Then the test runs once per case (ids ``godot4/encode:vector2``, ...)::

    def test_godot_conformance(godot_conformance_case):
        godot_conformance_case.check(my_roundtrip)   # (data, dialect, objects) -> bytes; raises to refuse

Without the entry point (``pip install`` not done), load it with ``-p godot_formats.conformance.pytest_plugin``
or ``pytest_plugins = ["godot_formats.conformance.pytest_plugin"]`` in the root conftest.py.
"""

from __future__ import annotations

import pytest

from . import DIALECTS, cases

FIXTURE = "godot_conformance_case"
OPTION = "--godot-conformance"
INI = "godot_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("godot-conformance", "Godot binary serialization conformance (godot_formats)")
    group.addoption(OPTION, nargs="?", const=",".join(DIALECTS), default=None, metavar="DIALECTS",
                    help=f"run tests taking the {FIXTURE} fixture once per engine case "
                         f"(default: {', '.join(DIALECTS)}; or a comma-separated list)")
    parser.addini(INI, f"dialects whose engine cases {FIXTURE} runs (comma-separated; empty: off)", default="")


def selected_dialects(config: pytest.Config) -> list[str]:
    """The dialects a run opted in to (empty: not opted in)."""
    text = config.getoption(OPTION.lstrip("-").replace("-", "_"))
    if text is None:
        text = str(config.getini(INI) or "")
    names = [n.strip() for n in text.replace(" ", ",").split(",") if n.strip()]
    if names in (["true"], ["all"], ["1"], ["yes"]):
        return list(DIALECTS)
    unknown = [n for n in names if n not in DIALECTS]
    if unknown:
        raise pytest.UsageError(f"{OPTION}/{INI}: no corpus for {', '.join(unknown)} "
                                f"(choose from {', '.join(DIALECTS)})")
    return names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if FIXTURE not in metafunc.fixturenames:
        return
    dialects = selected_dialects(metafunc.config)
    if not dialects:
        metafunc.parametrize(FIXTURE, [pytest.param(None, marks=pytest.mark.skip(
            reason=f"Godot conformance cases run only when asked: {OPTION} or the ini setting {INI}"))],
            ids=["godot-conformance-off"])
        return
    corpus = cases(dialects)
    metafunc.parametrize(FIXTURE, corpus, ids=[str(c) for c in corpus])
