"""swaplab kernel move-cost: what the copy of one swap-entry move costs on
this kernel's zram (docs/kernel-findings.md F32).

proposal-compact moves swapped-out entries between slots; no kernel does,
so the move cannot be measured whole. This measures its I/O: a 4 KiB block
of a zram device read (decompressed), written to a free block (compressed)
and discarded (its compressed object freed), in swaplab-mdriver, on a zram
device of our own that is not swap. Each content runs on a fresh device,
the contents alternating round by round; the machine is restored on every
exit path, and `swaplab kernel cleanup` undoes a killed run.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import tempfile
import time

from .. import __version__
from ..params import ParamError
from ..results import machine_info
from . import machine as M
from .harness import drive

SCHEMA = "swaplab.move-cost/1"
CONTENTS = ("same", "byte", "mixed", "random")
STEPS = ("read", "write", "discard", "empty_read")
LIMITS = {"slots": (4, 1 << 22), "moves": (10, 10_000_000), "repeats": (1, 100)}


def check_params(contents: list, slots: int, moves: int, repeats: int, cpu: int) -> None:
    """Raises ParamError naming the first bad parameter; changes nothing."""
    for c in contents:
        if c not in CONTENTS:
            raise ParamError(f"--content: unknown content '{c}' (known: {', '.join(CONTENTS)})")
    if not contents:
        raise ParamError("--content: at least one content")
    if len(set(contents)) != len(contents):
        raise ParamError("--content: a content is named twice")
    for name, v in (("slots", slots), ("moves", moves), ("repeats", repeats)):
        lo, hi = LIMITS[name]
        if not lo <= v <= hi:
            raise ParamError(f"--{name} {v} is out of range ({lo}..{hi})")
    if slots % 2:
        raise ParamError(f"--slots {slots} must be even (half the blocks hold a page)")
    if cpu < 0:
        raise ParamError(f"--cpu {cpu} is not a CPU number")


def preflight(cpu: int, allow_other_swap: bool) -> dict:
    """Every check, nothing changed. Returns the tools found."""
    tools = M.check_can_run([], cpu)
    drv = M.driver_path("swaplab-mdriver")
    if not os.access(drv, os.X_OK):
        raise M.HarnessRefused(f"the move driver {drv} is missing; reinstall swaplab (pip install .)")
    M.check_no_state()
    if not allow_other_swap:
        M.check_no_other_swap()
    return tools


def _one(tools: dict, content: str, slots: int, moves: int, seed: int, cpu: int) -> dict:
    """One content on a fresh zram block device; returns the driver's output
    with the device's description."""
    state = M.State()
    sess = M.Session(state, tools)
    tmp = state.data["tmpdir"] = tempfile.mkdtemp(prefix="swaplab-movecost-")
    out = os.path.join(tmp, "raw.json")
    info = {}

    def prepare():
        sess.create_zram(slots * 4096, swap=False)
        info["zram"] = z = sess.zram_info()
        mm_stat = os.path.join(state.data["sysfs_root"], "block", f"zram{z['id']}", "mm_stat")
        return [M.driver_path("swaplab-mdriver"), "--dev", z["device"], "--mm-stat", mm_stat,
                "--json", out, "--slots", str(slots), "--moves", str(moves), "--content", content,
                "--seed", str(seed), "--cpu", str(cpu), "--parent-pid", str(os.getpid())]

    def collect():
        with open(out) as f:
            return json.load(f)

    try:
        raw = drive(state, tools, prepare, collect, "move driver")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    raw["zram"] = info["zram"]
    for k in ("mm_stat_filled", "mm_stat_end"):
        raw[k] = dict(zip(M.ZRAM_MM_STAT, raw[k]))
    return raw


def summarize(runs: list) -> dict:
    """Per content: the median over its repeats of each step's median (ns),
    of the system time a move (µs), and the compression of the filled device
    (orig / compr; None for same-filled pages, which take no compressed
    space)."""
    out = {}
    for c in dict.fromkeys(r["content"] for r in runs):
        rs = [r for r in runs if r["content"] == c]
        s = {st: round(statistics.median(r["steps_ns"][st]["median"] for r in rs), 1) for st in STEPS}
        s["move"] = round(s["read"] + s["write"] + s["discard"], 1)
        s["sys_us_per_move"] = round(statistics.median(r["sys_s"] / r["moves"] for r in rs) * 1e6, 3)
        s["wall_us_per_move"] = round(statistics.median(r["wall_s"] / r["moves"] for r in rs) * 1e6, 3)
        mm = rs[0]["mm_stat_filled"]
        s["compression"] = round(mm["orig_data_size"] / mm["compr_data_size"], 3) \
            if mm["compr_data_size"] else None
        s["same_pages"] = mm["same_pages"]
        s["huge_pages"] = mm["huge_pages"]
        s["repeats"] = len(rs)
        out[c] = s
    return out


def run(contents: list, slots: int = 8192, moves: int = 100000, repeats: int = 3, seed: int = 1,
        cpu: int = 0, allow_other_swap: bool = False, progress=None) -> dict:
    """The whole measurement. Raises ParamError or HarnessRefused (nothing
    changed), HarnessError or Signalled (restored)."""
    check_params(contents, slots, moves, repeats, cpu)
    tools = preflight(cpu, allow_other_swap)
    t0 = time.monotonic()
    runs = []
    for rep in range(repeats):
        for c in contents:
            if progress:
                progress(f"repeat {rep + 1}/{repeats}: {c}")
            raw = _one(tools, c, slots, moves, seed + rep, cpu)
            raw["repeat"] = rep
            runs.append(raw)
    return {"schema": SCHEMA, "swaplab_version": __version__, "machine": machine_info(),
            "kernel": {"release": platform.uname().release, "version": platform.uname().version,
                       "comp_algorithm": runs[0]["zram"].get("comp_algorithm")},
            "params": {"contents": list(contents), "slots": slots, "moves": moves, "repeats": repeats,
                       "seed": seed, "cpu": cpu},
            "wall_seconds": round(time.monotonic() - t0, 3),
            "summary": summarize(runs), "runs": runs}
