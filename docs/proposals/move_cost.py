"""proposal-compact's moves priced with the cost model (proposal-compact.md,
"Moves in calibrated terms").

    python docs/proposals/move_cost.py > docs/data/proposal-compact-move-cost.json

Runs the cells of the target-pairs table of proposal-compact.md (the rows
that proposal-holes-first misses for contiguity or placement) with seeds
1-5 under linux-6.18, proposal-holes-first and proposal-compact, and sums per run
(mean over the seeds, summed over the cells) the swap terms of the cost
model: folios and pages swapped out and in, splits (fallbacks) and moves.
They are priced with the uncalibrated defaults (sl_cost_default); with
the calibration in use (agree.DEFAULT_COST: F34's fit), where a move is
one 4K page swapped in and out again; and with the move's copy measured on
this kernel's zram (kernel-findings F32, MOVE_COST): for the content of the
calibration's own runs, and for pages that compress 2:1, where every 4K
page swapped out and in also pays the extra compression and decompression
F32 measured. Deterministic (the measurement is read from its file).
"""
import json
import os
import sys

from swaplab import _core
from swaplab.kernel.agree import DEFAULT_COST
from swaplab.params import params_from_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL = "16K,32K,64K,128K,256K,512K,1M,2M"
# linux-6.18 as the base: what fewer fallbacks themselves cost or save
POLICIES = ("linux-6.18", "proposal-holes-first", "proposal-compact")
MOVE_COST = os.path.join("docs", "data", "kernel-move-cost-6.18-f32.json")


def cells() -> list:
    """(workload, options) of each distinct cell of the target-pairs table."""
    with open(os.path.join(ROOT, "docs", "proposals", "proposal-compact.md")) as f:
        doc = f.read().splitlines()
    head = next(i for i, ln in enumerate(doc)
                if ln.startswith("| workload | mTHP | swap | device | offset | size | folios/run"))
    out = []
    for ln in doc[head + 2:]:
        if not ln.startswith("|"):
            break
        wl, mthp, swap, dev, off = (x.strip() for x in ln.strip("|").split("|")[:5])
        flags = wl.split()
        opts = {"swap_size": swap, "device": dev, "region_offset": off,
                "mthp": ALL if mthp.startswith("all") else mthp.replace(" ", ""),
                "aligned_swapin": "-a" in flags, "small_folios": "-s" in flags}
        cell = (flags[0], opts)
        if cell not in out:
            out.append(cell)
    return out


def counts(workload: str, opts: dict, policy: str, seed: int) -> dict:
    wp = params_from_options(workload, policy, seed=seed, **opts)
    r = _core.run(policy=policy, **wp.core_kwargs())
    c = {"out_folios": 0, "out_pages": 0, "in_folios": 0, "in_pages": 0, "fallbacks": 0,
         "moves": r["device"].get("compact", {}).get("moves", 0)}
    for it in r["iterations"]:
        for o, n in enumerate(it["swpout"]):
            c["out_folios"] += n
            c["out_pages"] += n << o
        for o, n in enumerate(it["swpin"]):
            c["in_folios"] += n
            c["in_pages"] += n << o
        c["fallbacks"] += sum(it["swpout_fallback"])
    return c


def seconds(t: dict, cost: dict) -> float:
    return 1e-9 * (t["out_folios"] * cost["swpout_folio"] + t["out_pages"] * cost["swpout_page"] +
                   t["in_folios"] * cost["swpin_folio"] + t["in_pages"] * cost["swpin_page"] +
                   t["fallbacks"] * cost["split"] + t["moves"] * cost["compact_move"])


def main() -> int:
    cs = cells()
    totals = {}
    for pol in POLICIES:
        t = dict.fromkeys(("out_folios", "out_pages", "in_folios", "in_pages", "fallbacks", "moves"), 0)
        for wl, opts in cs:
            for seed in range(1, 6):
                for k, v in counts(wl, opts, pol, seed).items():
                    t[k] += v
        totals[pol] = {k: v / 5 for k, v in t.items()}
    unc = {k: v for k, v in _core.cost_default().items() if k != "name"}
    with open(os.path.join(ROOT, DEFAULT_COST)) as f:
        q = json.load(f)["sl_cost_model"]
    move = q["swpin_folio"] + q["swpin_page"] + q["swpout_folio"] + q["swpout_page"]
    with open(os.path.join(ROOT, MOVE_COST)) as f:
        m = json.load(f)["summary"]
    # the calibration's runs wrote one-byte pages ("byte"); a 2:1 page ("mixed")
    # adds its extra compression to every page written, its decompression to every page read
    mixed = dict(q, compact_move=m["mixed"]["move"],
                 swpout_page=q["swpout_page"] + m["mixed"]["write"] - m["byte"]["write"],
                 swpin_page=q["swpin_page"] + m["mixed"]["read"] - m["byte"]["read"])
    priced = {}
    for name, cost in (("uncalibrated", unc), ("calibrated", dict(q, compact_move=move)),
                       ("calibrated, split 5 us", dict(q, compact_move=move, split=5000.0)),
                       ("calibrated, move measured (F32)", dict(q, compact_move=m["byte"]["move"])),
                       ("calibrated, pages compressing 2:1 (F32)", mixed)):
        s = {p: round(seconds(totals[p], cost), 3) for p in POLICIES}
        saved = s["proposal-holes-first"] - s["proposal-compact"]
        moves = totals["proposal-compact"]["moves"]
        priced[name] = {"seconds": s, "compact_move_ns": round(cost["compact_move"], 1),
                        "split_ns": cost["split"],
                        "break_even_move_ns": round(cost["compact_move"] + 1e9 * saved / moves, 1)}
    json.dump({"what": "proposal-compact's target-pair cells, swap terms per run summed over the cells",
               "cells": len(cs), "seeds": [1, 2, 3, 4, 5], "totals_per_run": totals, "priced": priced},
              sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
