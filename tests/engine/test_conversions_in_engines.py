"""The real engines load our converted resource saves with the right values (the engines judge).

Godot 3 -> 4: Godot 4.6 loads each Godot 3.2.3-made save (fixtures/resources/godot3/all.res,
all_c.res, save.res, and the .tres forms when our text form works) and our Godot 4 conversion of
it, and must see the same value in every stored property of every resource (main and
sub-resources) in both. The expected values are what the engine itself makes of the Godot 3
original, so nothing here trusts our encoder.

Godot 4 -> 3: Godot 3.2.3 loads our lossy Godot 3 conversion of the Godot 4.6-made saves
(fixtures/resources/godot4/all.res, save.res), and what it prints for each property (``var2str``)
must equal ``to_text(value, "godot3")`` of that property in our converted ResourceFile. The
engine's print is the judge of our model's value.

Each engine runs once for the whole module (one project with every file in it: a Godot 4 run
costs about 5 s, a Godot 3 run well under 1 s). The drivers and the walker are GDScript files in
fixtures/resources/: ``engine_check/check3.gd``/``check4.gd`` load every file without the cache and
print every ``PROPERTY_USAGE_STORAGE`` property of every resource they reach with the fixtures'
own ``godot3/walk.gd``/``godot4/walk.gd`` (the printer of the ``*.json`` fixtures; README.md there
describes its output), the same way ``fixtures/resources/make.py`` ran the generators.

The scripts sit at the ``res://`` paths the files reference (``data.gd``, ``sub.gd``,
``save_data.gd``, ``inner.gd``). ``sub.gd`` and ``inner.gd`` are the fixture folders' own.
``data.gd`` is not: the 3.x class (AllTypes3) and the 4.x one (AllTypes4) name some properties
differently (``quat_v``/``quaternion_v``, ``pool_int``/``packed_int32`` ...) and the 4.x one has
more, and an engine silently drops a stored property its script does not have, which would hide
exactly the values under test. So the check uses ``engine_check/godot4/data.gd`` (the 3.x class's
properties in 4.x GDScript) and ``engine_check/godot3/data.gd``/``save_data.gd`` (the 4.x classes'
properties in 3.x GDScript); the Godot 4.x ``save_data.gd`` already has every 3.x property.

The text form is being written elsewhere: its cases run once ``read_text`` reads
fixtures/resources/godot3/all.tres, and are skipped, with the reason, while it raises
NotImplementedError.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from godot_formats import open_resource, oracle
from godot_formats.core import types as t
from godot_formats.oracle import godot3 as godot3_oracle
from godot_formats.oracle._process import run
from godot_formats.oracle.godot4 import _engine_version, _run_engine, build_pck
from godot_formats.resources import ExtResource, Resource, ResourceFile
from godot_formats.resources.model import holds_reference
from godot_formats.resources.text import read_text
from godot_formats.views.text import to_text

pytestmark = pytest.mark.engine

RES = Path(__file__).resolve().parents[2] / "fixtures" / "resources"
G3_DIR, G4_DIR, CHECK_DIR = RES / "godot3", RES / "godot4", RES / "engine_check"

G3_MISSING = oracle.godot3_available()
G4_MISSING = oracle.godot4_available()
needs_godot3 = pytest.mark.skipif(G3_MISSING is not None, reason=str(G3_MISSING))
needs_godot4 = pytest.mark.skipif(G4_MISSING is not None, reason=str(G4_MISSING))


def _text_missing() -> str | None:
    """Why the text cases cannot run (None: they can): our text reader is not written yet.

    Only NotImplementedError skips; any other error of the reader is a bug, which the text
    cases then show.
    """
    try:
        read_text((G3_DIR / "all.tres").read_bytes())
    except NotImplementedError as e:
        return ("the resource text form is not implemented yet: godot_formats.resources.text.read_text raised "
                f"NotImplementedError({str(e)!r}) on fixtures/resources/godot3/all.tres")
    except Exception:  # a broken reader is for the text cases to show, not a reason to skip them
        return None
    return None


TEXT_MISSING = _text_missing()

# ---------------------------------------------------------------------------------------------
# the cases


@dataclass(frozen=True)
class Case:
    """One file of ours for an engine to load: ``source`` (a fixture) written in ``form``."""

    source: Path
    form: str  # "binary" or "text"

    @property
    def id(self) -> str:
        return f"{self.source.name}->{self.form}"

    @property
    def name(self) -> str:
        """The file's name in the engine's project (res://in/<name>), also its walk's tag."""
        return f"{self.source.name.replace('.', '_')}__{self.form}.{'tres' if self.form == 'text' else 'res'}"

    @property
    def needs_text(self) -> bool:
        return self.form == "text" or self.source.suffix == ".tres"


def _original_name(source: Path) -> str:
    """The name of a fixture itself in the engine's project."""
    return f"{source.name.replace('.', '_')}__original{source.suffix}"


def _cases(folder: Path, stems: tuple[str, ...]) -> list[Case]:
    return [Case(folder / stem, form) for stem in stems for form in ("binary", "text")]


#: Godot 3.2.3's saves, converted to Godot 4 (binary sources first: they need no text reader).
G4_CASES = _cases(G3_DIR, ("all.res", "all_c.res", "save.res", "all.tres", "save.tres"))
#: Godot 4.6's saves, converted to Godot 3 with policy="lossy".
G3_CASES = _cases(G4_DIR, ("all.res", "save.res", "all.tres", "save.tres"))


def _params(cases: list[Case]) -> list[Any]:
    marks = {True: [pytest.mark.skipif(TEXT_MISSING is not None, reason=str(TEXT_MISSING))], False: []}
    return [pytest.param(c, id=c.id, marks=marks[c.needs_text]) for c in cases]


def _active(cases: list[Case]) -> list[Case]:
    return [c for c in cases if TEXT_MISSING is None or not c.needs_text]


def _to_godot4(case: Case) -> bytes:
    return open_resource(case.source).to_bytes(format=case.form, dialect="godot4")


def _godot3_model(case: Case) -> ResourceFile:
    """Our converted ResourceFile: the model whose values the engine's prints are checked against."""
    return open_resource(case.source).convert("godot3", policy="lossy")[0]


def _to_godot3(case: Case) -> bytes:
    return open_resource(case.source).to_bytes(format=case.form, dialect="godot3", policy="lossy")


# ---------------------------------------------------------------------------------------------
# running an engine once over every file, and reading what walk.gd printed


@dataclass
class Walks:
    """What one engine run printed: each loaded file's walk (by tag), and the rest of its output.

    A walk maps the property chain of each resource (``main``, ``main.sub.child``,
    ``main.sub_list[1]``) to ``{"class", "resource_path", "properties": {name: desc},
    "extra": {name: {key: text}}}``, as ``make.py`` reads the same lines into the ``*.json`` fixtures.
    """

    walks: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # files the engine could not load (@@LOADFAIL)
    log: list[str] = field(default_factory=list)
    build_errors: dict[str, str] = field(default_factory=dict)  # case id -> why we wrote no file
    seconds: float = 0.0

    def walk(self, name: str) -> dict[str, dict[str, Any]]:
        """The walk of the file ``name``, or a failure that shows why there is none."""
        if name in self.failed or name not in self.walks:
            pytest.fail(f"the engine did not load {name}:\n" + _log_about(self.log, name))
        return self.walks[name]


def _log_about(log: list[str], name: str) -> str:
    """The engine's output from ``@@LOAD name`` to the next load (its errors about that file)."""
    start = next((i for i, line in enumerate(log) if line == f"@@LOAD {name}"), 0)
    end = next((i for i in range(start + 1, len(log)) if log[i].startswith("@@LOAD ")), len(log))
    return "\n".join(log[start:end][-60:])


def _hex(text: str) -> str:
    return bytes.fromhex(text).decode("utf-8")


def _parse(lines: list[str]) -> Walks:
    """The @@RES/@@PROP/@@EXTRA lines of walk.gd, filed by tag; the other lines go to the log."""
    out = Walks()
    for line in lines:
        tag, *parts = line.split(" ")
        if tag == "@@RES":
            walk, chain, cls, path = parts[:4]
            out.walks.setdefault(walk, {})[chain] = {
                "class": cls, "resource_path": _hex(path), "properties": {}, "extra": {}}
        elif tag == "@@PROP":
            walk, chain, name, desc = parts[:4]
            out.walks[walk][chain]["properties"][name] = json.loads(_hex(desc))
        elif tag == "@@EXTRA":
            walk, chain, name, key, text = parts[:5]
            out.walks[walk][chain]["extra"].setdefault(name, {})[key] = _hex(text)
        elif tag == "@@LOADFAIL":
            out.failed.append(parts[0])
            out.log.append(line)
        else:
            out.log.append(line)
    if "@@DONE" not in out.log:
        raise AssertionError("the engine did not run the check to its end:\n" + "\n".join(out.log[-60:]))
    return out


def _inputs(cases: list[Case], write: Callable[[Case], bytes], originals: bool) -> tuple[dict[str, bytes], Walks]:
    """The files to load, ``res://in/<name>``: each case written by us (and each fixture itself when
    ``originals``). A case our library cannot write is kept as its error, for its test to show."""
    files: dict[str, bytes] = {}
    errors: dict[str, str] = {}
    for case in cases:
        if originals:
            files[_original_name(case.source)] = case.source.read_bytes()
        try:
            files[case.name] = write(case)
        except Exception:  # the case's own test reports it; the other cases still run
            errors[case.id] = traceback.format_exc()
    return files, Walks(build_errors=errors)


def _project_list(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files under res://in/ and the list the driver reads (res://engine_check.txt)."""
    return {"engine_check.txt": "".join(n + "\n" for n in files).encode(), **{"in/" + n: b for n, b in files.items()}}


G4_PROJECT = ('config_version=5\n\n[application]\n\nconfig/name="engine_check"\n'
              'run/main_scene="res://main.tscn"\n')
G4_MAIN = ('[gd_scene format=3]\n\n[ext_resource type="Script" path="res://check4.gd" id="1"]\n\n'
           '[node name="Main" type="Node"]\nscript = ExtResource("1")\n')
G3_PROJECT = 'config_version=4\n\n[application]\n\nconfig/name="engine_check"\n'


def _run_godot4(files: Mapping[str, bytes]) -> list[str]:
    """Godot 4.6 (web build, headless Chromium) over ``files``: the lines it printed (as make.py's run_godot4)."""
    project = {
        "project.godot": G4_PROJECT.encode(), ".godot/global_script_class_cache.cfg": b"list=[]\n",
        "main.tscn": G4_MAIN.encode(), "check4.gd": (CHECK_DIR / "check4.gd").read_bytes(),
        "walk.gd": (G4_DIR / "walk.gd").read_bytes(),
        "data.gd": (CHECK_DIR / "godot4" / "data.gd").read_bytes(),  # AllTypes3's properties, in 4.x
        "sub.gd": (G4_DIR / "sub.gd").read_bytes(),
        "save_data.gd": (G4_DIR / "save_data.gd").read_bytes(),  # has every property of the 3.x SaveData
        "inner.gd": (G4_DIR / "inner.gd").read_bytes(),
        **_project_list(files),
    }
    r = _run_engine(build_pck(project, _engine_version()), 180, "resource engine check (Godot 4.6)")
    # The web build often ends, after @@DONE (at quit), with the crash "page.evaluate: RuntimeError: null
    # function", even for a project that loads only an engine-made .res: what it printed is complete, and
    # _parse wants @@DONE. The exit/crash goes to the log.
    return [("[E] " if e else "") + line for line, e in zip(r.lines, r.kinds)] + [f"exit {r.exit} crash {r.crash}"]


def _run_godot3(files: Mapping[str, bytes]) -> list[str]:
    """Godot 3.2.3 (``godot3-server --no-window -s check3.gd``) over ``files`` in a throwaway project
    (HOME and XDG_* inside it, as make.py's run_godot3): the lines it printed on stderr."""
    project = {
        "project.godot": G3_PROJECT.encode(), "check3.gd": (CHECK_DIR / "check3.gd").read_bytes(),
        "walk.gd": (G3_DIR / "walk.gd").read_bytes(),
        "data.gd": (CHECK_DIR / "godot3" / "data.gd").read_bytes(),  # AllTypes4's properties, in 3.x
        "sub.gd": (G3_DIR / "sub.gd").read_bytes(),
        "save_data.gd": (CHECK_DIR / "godot3" / "save_data.gd").read_bytes(),  # + the 4.x typed, sn, v4
        "inner.gd": (G3_DIR / "inner.gd").read_bytes(),
        **_project_list(files),
    }
    exe = godot3_oracle.binary()
    assert exe is not None
    with tempfile.TemporaryDirectory(prefix="gf-res-check3-") as tmp:
        for name, data in project.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_bytes(data)
        env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp,
                   LANG="en_US.UTF-8")
        # A runtime error inside _init() leaves a Godot 3 engine idling: stop it then.
        p = run([exe, "--no-window", "-s", "check3.gd"], cwd=Path(tmp), env=env, timeout=120,
                what="resource engine check (Godot 3.2.3)", abort=re.compile(r"^SCRIPT ERROR: _init: "),
                abort_grace=2.0)
    return p.stderr.splitlines() + [f"exit {p.returncode}"]


def _engine_run(cases: list[Case], write: Callable[[Case], bytes], originals: bool,
                engine: Callable[[Mapping[str, bytes]], list[str]]) -> Walks:
    files, pending = _inputs(_active(cases), write, originals)
    start = time.monotonic()
    walks = _parse(engine(files))
    walks.seconds = time.monotonic() - start
    walks.build_errors = pending.build_errors
    return walks


@pytest.fixture(scope="module")
def godot4_walks() -> Walks:
    """One Godot 4.6 run over every Godot 3 original and every conversion of ours."""
    if G4_MISSING is not None:
        pytest.skip(G4_MISSING)
    return _engine_run(G4_CASES, _to_godot4, True, _run_godot4)


@pytest.fixture(scope="module")
def godot3_walks() -> Walks:
    """One Godot 3.2.3 run over every Godot 3 conversion of ours."""
    if G3_MISSING is not None:
        pytest.skip(G3_MISSING)
    return _engine_run(G3_CASES, _to_godot3, False, _run_godot3)


def _built(walks: Walks, case: Case) -> None:
    if case.id in walks.build_errors:
        pytest.fail(f"our library could not write {case.id}:\n{walks.build_errors[case.id]}")


# ---------------------------------------------------------------------------------------------
# our model, printed as walk.gd prints the engine's objects


def _holds_reference(value: Any) -> bool:
    """walk.gd's has_obj: does the value hold a resource (so var2str alone would not show it)?"""
    return holds_reference(value)


def _ext_class(ext: ExtResource) -> str:
    """The class the engine gives a loaded external resource: a .gd Script is a GDScript."""
    return "GDScript" if ext.type == "Script" and ext.path.endswith(".gd") else ext.type


class _ModelWalk:
    """walk.gd's walk over our ResourceFile: every resource by the property chain that first
    reaches it, every stored property as ``to_text(value, dialect)`` or, for values holding
    resources, walk.gd's ``{"ref"}``/``{"ext"}``/``{"array"}``/``{"dict"}`` forms.

    Properties are visited in the engine's order (``engine``: the engine's walk of the same file),
    then those the engine did not list, so both walks name each shared resource by the same chain.
    """

    def __init__(self, rf: ResourceFile, dialect: str, engine: Mapping[str, Mapping[str, Any]]) -> None:
        self.dialect, self.engine = dialect, engine
        self.seen: dict[int, str] = {id(rf.main): "main"}
        self.queue: list[tuple[Resource, str]] = [(rf.main, "main")]
        self.resources: dict[str, dict[str, Any]] = {}
        while self.queue:
            self._visit(*self.queue.pop(0))

    def _visit(self, res: Resource, chain: str) -> None:
        order = list(self.engine.get(chain, {}).get("properties", {}))
        names = [n for n in order if n in res.properties] + [n for n in res.properties if n not in order]
        props = {n: self.desc(res.properties[n], f"{chain}.{n}") for n in names}
        extra = {n: self._extra(res.properties[n]) for n in names}
        self.resources[chain] = {"class": res.type, "properties": props,
                                 "extra": {n: e for n, e in extra.items() if e}}

    def _extra(self, value: Any) -> dict[str, str]:
        """walk.gd's @@EXTRA: what var2str does not show (a Dictionary's key order, a RID's id)."""
        if isinstance(value, Mapping):
            return {"keys_in_order": to_text(list(value.keys()), self.dialect)}
        if isinstance(value, t.RID):
            return {"rid_id": to_text(value.id, self.dialect)}
        return {}

    def desc(self, value: Any, path: str) -> Any:
        if not _holds_reference(value):
            return to_text(value, self.dialect)
        if isinstance(value, list):
            return {"array": [self.desc(v, f"{path}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, Mapping):
            return {"dict": [[self.desc(k, path + "{key}"), self.desc(v, f"{path}[{k}]")] for k, v in value.items()]}
        if id(value) in self.seen:
            return {"ref": self.seen[id(value)]}
        if isinstance(value, ExtResource):
            self.seen[id(value)] = value.path
            return {"ext": value.path, "class": _ext_class(value)}
        self.seen[id(value)] = path
        self.queue.append((value, path))
        return {"ref": path}


# ---------------------------------------------------------------------------------------------
# comparing


def _show(desc: Any) -> str:
    return desc if isinstance(desc, str) else json.dumps(desc, ensure_ascii=False)


def _walk_differences(what: str, expected: Mapping[str, Mapping[str, Any]], got: Mapping[str, Mapping[str, Any]],
                      expected_name: str, got_name: str, every_expected_only: bool = False) -> list[str]:
    """Every difference between two walks, one line each: resource, property, both texts.

    ``every_expected_only``: compare only the properties ``expected`` has (our model stores only
    what the file holds; the engine also lists properties left at their defaults).
    """
    out = []
    for chain in sorted(set(expected) | set(got)):
        if chain not in got or chain not in expected:
            have = got_name if chain in got else expected_name
            out.append(f"{what}: resource {chain} only in the {have} walk")
            continue
        a, b = expected[chain], got[chain]
        if a["class"] != b["class"]:
            out.append(f"{what}: {chain}: class {expected_name} {a['class']} != {got_name} {b['class']}")
        for kind in ("properties", "extra"):
            names = list(a[kind]) if every_expected_only else list(dict.fromkeys([*a[kind], *b[kind]]))
            for name in names:
                ea, eb = a[kind].get(name, "<absent>"), b[kind].get(name, "<absent>")
                if ea != eb:
                    label = name if kind == "properties" else f"{name} (extra: what var2str hides)"
                    out.append(f"{what}: {chain}.{label}: {expected_name} {_show(ea)!r} != {got_name} {_show(eb)!r}")
    return out


def _strip_paths(walk: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A walk without the resources' load paths (the two files have other names and other ids)."""
    return {chain: {k: v for k, v in entry.items() if k != "resource_path"} for chain, entry in walk.items()}


# ---------------------------------------------------------------------------------------------
# 1. Godot 4.6 loads our Godot 4 conversions of Godot 3.2.3's saves as it loads the saves themselves


@needs_godot4
@pytest.mark.parametrize("case", _params(G4_CASES))
def test_godot4_loads_our_conversion_as_the_godot3_original(case: Case, godot4_walks: Walks) -> None:
    """Every stored property of every resource: the engine's text from our file equals its text
    from the Godot 3 original (both loaded with CACHE_MODE_IGNORE, the same scripts)."""
    _built(godot4_walks, case)
    original = _strip_paths(godot4_walks.walk(_original_name(case.source)))
    ours = _strip_paths(godot4_walks.walk(case.name))
    assert len(original) > 1, "the walk reached no sub-resource"
    kept = _metadata_we_keep(case, original, ours)
    diff = _walk_differences(case.id, _key_order_kept(case, original), _key_order_kept(case, ours), "original", "ours")
    assert not diff, "Godot 4.6 loads our conversion differently from the original:\n" + "\n".join(diff)
    if case.source.name.startswith("all"):
        assert kept, "the metadata of the Godot 3 save did not reach Godot 4"


def _metadata_we_keep(case: Case, original: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]) -> int:
    """Godot 4.6 drops a Godot 3 save's metadata (its ``__meta__`` Dictionary: Godot 4 reads only
    ``metadata/<key>`` properties), and our conversion keeps it in Godot 4's form: so the engine's
    load of our file holds ``metadata/<key>`` properties its load of the original lacks.  Each is
    checked against the Godot 3.2.3 engine's own print of that ``__meta__`` (the fixture's
    ``<file>.json``), converted key by key, and then taken out of the comparison with the original."""
    from godot_formats import convert_value
    from godot_formats.views.text import from_text

    judge = case.source.with_name(case.source.name.replace("_c.res", ".res") + ".json")
    engine3 = json.loads(judge.read_text(encoding="utf-8"))["resources"] if judge.exists() else {}
    kept = 0
    for chain, entry in ours.items():
        extra = [k for k in entry.get("properties", {}) if k.startswith("metadata/")
                 and k not in original.get(chain, {}).get("properties", {})]
        if not extra:
            continue
        entry["properties"] = dict(entry["properties"])  # the walk is shared with the other tests
        meta3 = from_text(engine3[chain]["properties"]["__meta__"], "godot3")
        for name in extra:
            value, _ = convert_value(meta3[name[len("metadata/"):]], "godot3", "godot4")
            assert entry["properties"].pop(name) == to_text(value, "godot4"), (chain, name)
            kept += 1
    return kept


@needs_godot4
@pytest.mark.parametrize("case", _params(G4_CASES))
def test_godot4_keeps_every_property_we_convert(case: Case, godot4_walks: Walks) -> None:
    """No property our Godot 4 file stores is silently dropped by Godot 4.6 (an engine drops a
    stored property its object does not have, without a word): each one is in the engine's walk.
    This also guards the test above from comparing two walks that both miss a value."""
    _built(godot4_walks, case)
    engine = godot4_walks.walk(case.name)
    rf, _ = open_resource(case.source).convert("godot4")  # as _to_godot4 writes it (strict: no loss)
    model = _ModelWalk(rf, "godot4", engine).resources
    dropped = [f"{case.id}: {chain}.{name} (ours: {_show(desc)!r})"
               for chain, entry in model.items() for name, desc in entry["properties"].items()
               if name not in engine.get(chain, {}).get("properties", {})]
    assert not dropped, "Godot 4.6 dropped properties our Godot 4 file stores:\n" + "\n".join(dropped)


# ---------------------------------------------------------------------------------------------
# 2. Godot 3.2.3 loads our Godot 3 conversions of Godot 4.6's saves with our model's values

#: A RID: Godot 3.2.3's binary loader reads one back as an int (parse_variant: ``case VARIANT_RID:
#: r_v = f->get_32()``; its own save of a RID reloads as the int 129, fixtures/resources/godot3/rid.res.json)
#: and its text saver writes nothing (the file no longer loads). So our conversion writes null, and
#: reports the loss; the engine loads null.


def _godot3_differences(case: Case, walks: Walks, skip: Callable[[str, str], bool]) -> list[str]:
    engine = walks.walk(case.name)
    model = _ModelWalk(_godot3_model(case), "godot3", engine).resources
    expected = {chain: {**entry, "properties": {n: d for n, d in entry["properties"].items() if not skip(chain, n)},
                        "extra": {n: d for n, d in entry["extra"].items() if not skip(chain, n)}}
                for chain, entry in model.items()}
    return _walk_differences(case.id, _key_order_kept(case, expected), _key_order_kept(case, _strip_paths(engine)),
                             "ours", "engine", every_expected_only=True)


def _key_order_kept(case: Case, walk: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The walk, without the Dictionaries' key order when the case writes text: a ``.tres`` sorts its
    keys, as the engines' own text savers do (fixtures/resources/godot*/all.tres), so the order of a
    binary original cannot survive the text form, ours or the engine's."""
    if not case.id.endswith("->text"):
        return walk
    return {chain: {**entry, "extra": {n: {k: v for k, v in e.items() if k != "keys_in_order"} if isinstance(e, dict)
                                       else e for n, e in entry.get("extra", {}).items()}}
            for chain, entry in walk.items()}


@needs_godot3
@pytest.mark.parametrize("case", _params(G3_CASES))
def test_godot3_loads_our_conversion_with_our_values(case: Case, godot3_walks: Walks) -> None:
    """For every property of every resource of our converted file: var2str of what Godot 3.2.3
    loaded equals to_text(value, "godot3") of our model's value (references: the same resource
    graph, shared resources shared). The engine behaviours above are left to their own test."""
    _built(godot3_walks, case)

    diff = _godot3_differences(case, godot3_walks, lambda chain, name: False)
    assert not diff, "Godot 3.2.3 loads our Godot 3 file with other values than our model's:\n" + "\n".join(diff)


@needs_godot3
def test_a_rid_becomes_null_for_godot3_and_is_reported(godot3_walks: Walks) -> None:
    case = next(c for c in G3_CASES if c.id == "all.res->binary")
    _built(godot3_walks, case)
    assert godot3_walks.walk(case.name)["main"]["properties"]["rid_v"] == "null"
    _, losses = open_resource(case.source).convert("godot3", policy="lossy")
    assert any(loss.path == "main:rid_v" and "keep no RID" in loss.reason for loss in losses)


# ---------------------------------------------------------------------------------------------
# 3. Godot 3.2.3 loads what ``set`` and ``edit`` wrote over its own saves, with the new value


def _edited(name: str, how: str) -> bytes:
    """Godot 3.2.3's ``name`` changed as the commands change it: ``set`` (level 12 -> 13 through
    the model) or ``edit`` (its .tres text with level = 14, written back in the file's own form)."""
    from godot_formats.commands.resourcechange import parse_resource_edit, render_resource

    data = (G3_DIR / name).read_bytes()
    rf = open_resource(data)
    if how == "set":
        rf.main.properties["level"] = 13
        return rf.to_bytes()
    text = render_resource(rf, data)
    assert "\nlevel = 12\n" in text
    return parse_resource_edit(text.replace("\nlevel = 12\n", "\nlevel = 14\n"), rf).to_bytes()


EDITS = {f"{how}_{name}": (name, how) for name in ("save.res", "save_c.res", "save.tres") for how in ("set", "edit")}


@pytest.fixture(scope="module")
def edited_walks() -> Walks:
    """One Godot 3.2.3 run over every edited file."""
    if G3_MISSING is not None:
        pytest.skip(G3_MISSING)
    files = {key: _edited(name, how) for key, (name, how) in EDITS.items()}
    return _parse(_run_godot3(files))


@needs_godot3
@pytest.mark.parametrize("key", sorted(EDITS))
def test_godot3_loads_what_set_and_edit_wrote(key: str, edited_walks: Walks) -> None:
    name, how = EDITS[key]
    engine = edited_walks.walk(key)
    assert engine["main"]["properties"]["level"] == ("13" if how == "set" else "14")
    ours = open_resource(_edited(name, how))
    assert open_resource(_edited(name, how)).format == open_resource(G3_DIR / name).format
    model = _ModelWalk(ours, "godot3", engine).resources
    diff = _walk_differences(key, model, _strip_paths(engine), "ours", "engine", every_expected_only=True)
    assert not diff, "Godot 3.2.3 loads the edited file with other values than ours:\n" + "\n".join(diff)
