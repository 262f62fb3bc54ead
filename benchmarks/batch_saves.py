"""A studio's worth of Godot 3 saves for the batch acceptance run and the batch benchmark (issue 25).

Every generated save takes its layers from an engine-made file (fixtures/: Godot 3.2.3's
``store_var`` in both byte orders, ``open_encrypted_with_pass`` and ``open_compressed`` in all four
modes) and gets new values through the library's writer (``SaveFile.from_header``), so the files
are what the engine writes with other values.  Some would lose data under the strict policy (an
``EncodedObjectAsID``, which Godot 4 cannot hold); some are bad bytes (random, cut short, one byte
of ciphertext flipped, a broken compressed block), spread through the run; a few are Godot 4 saves
the engine wrote, which come back unchanged.  The manifest says what each file should end as, by
construction, so the checks do not ask the converter what it meant to do.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import godot_formats as gf

PASSWORD = "hunter2"  # the password of the engine-made encrypted fixtures
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: What each kind of input should end as: ``(status, error_kind)``.
EXPECTED = {"ok": ("converted", None), "godot4": ("unchanged", None), "lossy": ("failed", "would lose"),
            "bad": ("failed", "bad input")}


def _fixture(jsonl: str, name: str) -> bytes:
    for line in (FIXTURES / jsonl).read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["name"] == name:
            return bytes.fromhex(case["file_hex"])
    raise KeyError(name)


def templates() -> dict[str, dict[str, Any]]:
    """The layers of each engine-made Godot 3 save, as ``SaveFile.header`` gives them."""
    files = {
        "plain": _fixture("nodepath_padding/godot3_nodepath_saves.jsonl", "plain"),
        "big_endian": _fixture("nodepath_padding/godot3_nodepath_saves.jsonl", "big_endian"),
        "encrypted": _fixture("nodepath_padding/godot3_nodepath_saves.jsonl", "encrypted"),
        "fastlz": _fixture("containers/godot3_containers.jsonl", "g3_cmp_m0_save"),
        "deflate": _fixture("containers/godot3_containers.jsonl", "g3_cmp_m1_save"),
        "zstd": _fixture("containers/godot3_containers.jsonl", "g3_cmp_m2_save"),
        "gzip": _fixture("containers/godot3_containers.jsonl", "g3_cmp_m3_save"),
    }
    out = {}
    for layer, data in files.items():
        header = gf.open(data, password=PASSWORD).header
        for only_those_values in ("padding", "plaintext_md5", "slack"):
            header.pop(only_those_values, None)
        out[layer] = header
    return out


def godot4_saves() -> list[bytes]:
    """The engine-made Godot 4 saves (Godot 4.6): converting them to Godot 4 changes nothing."""
    lines = (FIXTURES / "nodepath_padding/godot4_nodepath_saves.jsonl").read_text(encoding="utf-8").splitlines()
    return [bytes.fromhex(json.loads(line)["file_hex"]) for line in lines]


def values_for(i: int, *, large: bool = False, lossy: bool = False) -> list[Any]:
    """A player's save: a dictionary of state, a chapter name, a NodePath, a float; a large one also
    carries a map of 64 K cells and a 256 kB blob."""
    rng = random.Random(i)
    player: dict[str, Any] = {
        "name": f"player{i}", "level": rng.randrange(1, 100), "gold": rng.randrange(10**9),
        "target": gf.NodePath(f"World/Player{i % 7}:position"),
        "position": gf.Vector2(rng.randrange(-4096, 4096) / 8, rng.randrange(-4096, 4096) / 8),
        "flags": {"door_open": bool(i % 2), "met_king": bool(i % 3)},
        "inventory": [rng.randrange(1000) for _ in range(rng.randrange(1, 24))],
    }
    if lossy:
        player["owner"] = gf.EncodedObjectAsID(object_id=1000 + i)  # an object id: Godot 4 has no such value
    values: list[Any] = [player, f"chapter {i % 12}", gf.NodePath("../Enemies/Boss:modulate:a"), rng.random()]
    if large:
        values.append([rng.randrange(256) for _ in range(65536)])
        values.append(rng.randbytes(1 << 18))
    return values


def _bad(i: int, good: bytes, rng: random.Random) -> bytes:
    """Bad bytes of four kinds, in turn: random, cut short, a flipped byte of an encrypted save's
    ciphertext (its MD5 no longer matches), and a compressed save whose block is garbage."""
    kind = i % 4
    if kind == 0:
        return rng.randbytes(64 + i % 300)
    if kind == 1:
        return good[: len(good) // 2 + 1]
    raw = bytearray(good)
    raw[-(1 + i % 16)] ^= 0x5A if kind == 2 else 0xFF
    if kind == 3:
        raw[30:40] = bytes(10)
    return bytes(raw)


def generate(root: Path, n: int, *, large: int = 0, lossy_every: int = 23, bad_every: int = 37,
             godot4_every: int = 97, per_folder: int = 500, seed: int = 25) -> dict[str, str]:
    """Write ``n`` small saves (and ``large`` large ones) below ``root`` in folders of
    ``per_folder``; returns the manifest: each key (path relative to ``root``) and its kind (a key
    of :data:`EXPECTED`)."""
    headers = templates()
    layers = sorted(headers)
    g4 = godot4_saves()
    rng = random.Random(seed)
    manifest: dict[str, str] = {}
    for i in range(n + large):
        big = i >= n
        key = f"{'large' if big else f'{i // per_folder:03d}'}/save_{i:06d}.sav"
        layer = layers[i % len(layers)]
        if i % godot4_every == godot4_every - 1 and not big:
            kind, data = "godot4", g4[i % len(g4)]
        elif i % lossy_every == lossy_every - 1:
            kind = "lossy"
            data = gf.SaveFile.from_header(headers[layer], values_for(i, lossy=True), password=PASSWORD,
                                           allow_objects=True).to_bytes()
        else:
            kind = "ok"
            data = gf.SaveFile.from_header(headers[layer], values_for(i, large=big), password=PASSWORD).to_bytes()
        if i % bad_every == bad_every - 1 and not big:
            bad_layer = headers["encrypted"] if i % 4 == 2 else headers["zstd"] if i % 4 == 3 else headers[layer]
            good = gf.SaveFile.from_header(bad_layer, values_for(i), password=PASSWORD).to_bytes()
            kind, data = "bad", _bad(i, good, rng)
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        manifest[key] = kind
    return manifest
