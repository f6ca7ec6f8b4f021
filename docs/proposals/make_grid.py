#!/usr/bin/env python3
"""Issue 11's grid report from `swaplab sweep` tables.

    python docs/proposals/make_grid.py OUT-v1 OUT-thp-swap [DIR=SPEC.toml ...]

reads OUT/table.csv of the sweeps of docs/proposals/grid-v1.toml and
grid-thp-swap.toml and writes docs/proposals/grid.md, the seed means
docs/data/proposals-grid.json and the plots docs/proposals/*.svg (with
matplotlib). Nothing here is edited by hand: re-run it after the sweeps.
DIR=SPEC.toml reads the cells of SPEC that DIR/cells.jsonl holds, for a
sweep stopped before it wrote its table. --base JSON takes the seed means
of an earlier docs/data/proposals-grid.json for every (cell, policy) that
no sweep directory holds (a policy whose goldens have not changed gives the
same numbers; its avoidable-failure columns are then missing).
"""
import csv
import os
import sys
from collections import defaultdict

from swaplab.params import ParamError
from swaplab.results import write_json, write_output

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFS = ["linux-6.12", "linux-6.18", "first-fit", "buddy", "noncontig"]
PROPOSALS = ["proposal-reuse", "proposal-retag", "proposal-reserve", "proposal-holes", "proposal-holes-first",
             "proposal-compact", "proposal-kcompact"]
POLICIES = REFS + PROPOSALS
WORKLOADS = [("thp-swap-v1", False, False), ("thp-swap-v1", True, False), ("thp-swap", False, False),
             ("thp-swap", False, True), ("thp-swap", True, False), ("thp-swap", True, True)]
SHOWN_MIN = 10.0      # a pair is a target pair where 6.18 falls back this much (%)
REMOVE = 0.9          # ... and the target removes this share of it
WORSE_PP = 0.5        # no pair worse than 6.18 by more than this (pp)
FF_PP = 2.0           # within this of first-fit (pp)


def label(wl, small, aligned):
    return wl + (" -a" if aligned else "") + (" -s" if small else "")


def size_text(kb):
    return f"{kb // 1024}M" if kb >= 1024 else f"{kb}K"


def mthp_text(m):
    sizes = m.split(",")
    return "all 16K–2M" if len(sizes) == 8 else ", ".join(sizes)


def mean(v):
    return sum(v) / len(v) if v else None


def table(arg):
    """The rows of one sweep: DIR (its table.csv), or DIR=SPEC.toml: the cells
    of SPEC that DIR/cells.jsonl holds (a sweep stopped before its end)."""
    if "=" in arg:
        from swaplab import sweeps
        d, spec = arg.split("=", 1)
        grid = sweeps.cells(sweeps.normalize_spec(sweeps.load_toml(spec)))
        done = sweeps.read_done(os.path.join(d, "cells.jsonl"))
        grid = [c for c in grid if sweeps.cell_id(c) in done]
        return [{k: ("" if v is None else str(sweeps._csv_value(v))) for k, v in r.items()}
                for r in sweeps.table_rows(grid, done, False)]
    path = os.path.join(arg, "table.csv")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise ParamError(f"cannot read sweep table '{path}': {e.strerror}") from None


def load(tables):
    """{config: {policy: {'sizes': {kb: [seed means]}, 'f0': [per seed]}}}, and
    where the table has them (since the avoidable-failure columns) 'free':
    {kb: [per seed: fallbacks while 2^order slots were free, % of folios]}
    and 'f0free' the order-0 failures while a slot was free."""
    seen = set()
    data = defaultdict(lambda: defaultdict(lambda: {"sizes": defaultdict(list), "n": defaultdict(list), "f0": {},
                                                    "free": defaultdict(list), "aligned": defaultdict(list),
                                                    "total": defaultdict(list),
                                                    "f0free": {}}))
    for t in tables:
        for r in t:
            key = (r["cell"], r["size_kb"])
            if key in seen:
                continue
            seen.add(key)
            cfg = (r["workload"], r["small_folios"] == "true", r["aligned_swapin"] == "true", r["mthp"],
                   r["swap_size"], r["device"], r["region_offset"])
            cell = data[cfg][r["policy"]]
            if r["mean_fallback_pct"] != "":
                cell["sizes"][int(r["size_kb"])].append(float(r["mean_fallback_pct"]))
            cell["n"][int(r["size_kb"])].append(int(r["swpout"]) + int(r["swpout_fallback"]))
            cell["f0"][r["seed"]] = int(r["order0_alloc_fail"])
            if r.get("swpout_fallback_free", "") != "":
                n = int(r["swpout"]) + int(r["swpout_fallback"])
                if n:
                    cell["free"][int(r["size_kb"])].append(100.0 * int(r["swpout_fallback_free"]) / n)
                    cell["aligned"][int(r["size_kb"])].append(100.0 * int(r["swpout_fallback_aligned"]) / n)
                    cell["total"][int(r["size_kb"])].append(100.0 * int(r["swpout_fallback"]) / n)
                cell["f0free"][r["seed"]] = int(r["order0_alloc_fail_free"])
    return data


def merge_base(data, path, nseeds):
    """Adds an earlier proposals-grid.json's seed means for the (cell,
    policy) pairs no sweep directory holds, as nseeds equal seeds: the
    fallback, folios and order-0 failures, and the avoidable-failure
    columns where the base has them."""
    try:
        with open(path, encoding="utf-8") as f:
            base = __import__("json").load(f)
    except (OSError, ValueError) as e:
        raise ParamError(f"cannot read base grid '{path}': {e}") from None
    labels = {label(*w): w for w in WORKLOADS}
    have = {(cfg, p) for cfg, pols in data.items() for p in pols}
    added = 0
    for r in base["rows"]:
        cfg = (*labels[r["workload"]], r["mthp"], r["swap"], r["device"], r["region_offset"])
        for p, f0 in r["order0_fail"].items():
            if (cfg, p) in have:
                continue
            cell = data[cfg][p]
            added += not cell["f0"]
            cell["f0"].update({str(i + 1): f0 for i in range(nseeds)})
            if r["fallback_pct"].get(p) is not None:
                cell["sizes"][r["size_kb"]] = [r["fallback_pct"][p]] * nseeds
            if r["folios"].get(p) is not None:
                cell["n"][r["size_kb"]] = [r["folios"][p]] * nseeds
            # the avoidable-failure columns, where the base has them
            for col, key in (("fallback_free_pct", "free"), ("fallback_aligned_pct", "aligned"),
                             ("fallback_total_pct", "total")):
                if r.get(col, {}).get(p) is not None:
                    cell[key][r["size_kb"]] = [r[col][p]] * nseeds
            if r.get("order0_fail_free", {}).get(p) is not None:
                cell["f0free"].update({str(i + 1): r["order0_fail_free"][p] for i in range(nseeds)})
    return added


def order_key(cfg, mthps, sizes, offsets):
    wl, small, aligned, mthp, swap, dev, off = cfg
    return (WORKLOADS.index((wl, small, aligned)), mthps.index(mthp), sizes.index(swap),
            ["zram", "ssd"].index(dev), offsets.index(off))


def pairs(data):
    """One row per (config, size): seed means per policy, order-0 failures."""
    mthps, swaps, offsets = [], [], []
    for cfg in data:
        for lst, v in ((mthps, cfg[3]), (swaps, cfg[4]), (offsets, cfg[6])):
            if v not in lst:
                lst.append(v)
    mthps.sort(key=lambda m: (len(m.split(",")), m != "64K", m))
    swaps.sort(key=lambda s: int(s[:-1]))
    offsets.sort(key=lambda o: (o != "0", o))
    rows = []
    nseeds = max(len(p["f0"]) for c in data.values() for p in c.values())
    # each cell's policies in POLICIES' order, whatever order the sweeps
    # came in, so that the JSON's keys do not move between regenerations
    rank = {p: i for i, p in enumerate(POLICIES)}
    for cfg in sorted(data, key=lambda c: order_key(c, mthps, swaps, offsets)):
        # a policy with some seeds missing in a cell (a stopped sweep) is
        # left out of that cell
        pol = {p: data[cfg][p] for p in sorted(data[cfg], key=lambda p: (rank.get(p, len(rank)), p))
               if len(data[cfg][p]["f0"]) == nseeds}
        kbs = sorted({kb for p in pol.values() for kb in p["sizes"]})
        f0 = {p: mean(list(v["f0"].values())) for p, v in pol.items()}
        f0free = {p: mean(list(v["f0free"].values())) for p, v in pol.items() if len(v["f0free"]) == nseeds}
        for kb in kbs:
            vals = {p: (round(mean(v["sizes"][kb]), 3) if v["sizes"].get(kb) else None) for p, v in pol.items()}
            folios = {p: mean(v["n"][kb]) for p, v in pol.items() if v["n"].get(kb)}
            free = {p: round(mean(v["free"][kb]), 3) for p, v in pol.items() if v["free"].get(kb)}
            aligned = {p: round(mean(v["aligned"][kb]), 3) for p, v in pol.items() if v["aligned"].get(kb)}
            total = {p: round(mean(v["total"][kb]), 3) for p, v in pol.items() if v["total"].get(kb)}
            rows.append({"workload": label(*cfg[:3]), "mthp": cfg[3], "swap": cfg[4], "device": cfg[5],
                         "region_offset": cfg[6], "size_kb": kb, "fallback_pct": vals, "order0_fail": f0,
                         "fallback_free_pct": free, "fallback_aligned_pct": aligned,
                         "fallback_total_pct": total, "order0_fail_free": f0free,
                         "folios": {p: round(n, 1) for p, n in folios.items()}})
    return rows


def assess(rows, prop):
    """Target counts for one proposal."""
    out = {"target_pairs": 0, "met_90": 0, "met_90_overfull": 0, "target_pairs_overfull": 0,
           "missed_90": {"space": [], "contiguity": [], "placement": []},
           "worse_than_6.18": [], "more_order0_failures": [], "above_first_fit": [], "pairs": 0, "cells": set(),
           "worse_than_6.18_raw": [], "more_order0_failures_raw": [], "above_first_fit_raw": []}
    f0_seen = set()
    for r in rows:
        v = r["fallback_pct"]
        if any(v.get(p) is None for p in ("linux-6.18", prop, "first-fit")):
            continue
        out["pairs"] += 1
        out["cells"].add((r["workload"], r["mthp"], r["swap"], r["device"], r["region_offset"]))
        # overfull: the run's data does not fit the device even in any
        # free slots (noncontig fails order-0 allocations there)
        over = (r["order0_fail"].get("noncontig") or 0) > 0
        L, P, ff, nc = v["linux-6.18"], v[prop], v["first-fit"], v.get("noncontig")
        name = (r["workload"], r["mthp"], r["swap"], r["device"], r["region_offset"], r["size_kb"])
        FOLIOS[name] = r["folios"].get("linux-6.18")
        if "," in r["mthp"] and L >= SHOWN_MIN:
            out["target_pairs"] += 1
            out["target_pairs_overfull"] += over
            if P <= (1 - REMOVE) * L:
                out["met_90"] += 1
                out["met_90_overfull"] += over
            else:
                # space: even slots taken anywhere (noncontig) keep more than
                # a tenth; contiguity: first-fit does; else placement
                kind = ("space" if nc is not None and nc > (1 - REMOVE) * L else
                        "contiguity" if ff > (1 - REMOVE) * L else "placement")
                out["missed_90"][kind].append(name + (L, P, ff, nc))
        kind = "space" if over else "other"
        # an overfull cell is judged on its avoidable failures (fallbacks
        # while 2^order slots were free; order-0 failures while one was),
        # where the table has them; the raw counts stay listed as "raw"
        fr = r["fallback_free_pct"]
        judge = over and all(fr.get(p) is not None for p in ("linux-6.18", prop, "first-fit"))
        if P > L + WORSE_PP:
            out["worse_than_6.18_raw" if judge else "worse_than_6.18"].append(name + (L, P, kind))
        if judge and fr[prop] > fr["linux-6.18"] + WORSE_PP:
            out["worse_than_6.18"].append(name + (fr["linux-6.18"], fr[prop], kind))
        if P > ff + FF_PP:
            out["above_first_fit_raw" if judge else "above_first_fit"].append(name + (ff, P, kind))
        if judge and fr[prop] > fr["first-fit"] + FF_PP:
            out["above_first_fit"].append(name + (fr["first-fit"], fr[prop], kind))
        cfg = name[:5]
        if cfg not in f0_seen:
            f0_seen.add(cfg)
            a, b = r["order0_fail"].get("linux-6.18"), r["order0_fail"].get(prop)
            fa, fb = r["order0_fail_free"].get("linux-6.18"), r["order0_fail_free"].get(prop)
            j0 = over and fa is not None and fb is not None
            if a is not None and b is not None and b > a:
                out["more_order0_failures_raw" if j0 else "more_order0_failures"].append(cfg + (a, b, kind))
            if j0 and fb > fa:
                out["more_order0_failures"].append(cfg + (fa, fb, kind))
    return out


FOLIOS = {}   # (cell, size) -> linux-6.18's folios of that size per run


def fmt(x):
    return "–" if x is None else f"{x:.1f}"


def pair_name(t):
    n = FOLIOS.get(tuple(t[:6]))
    folios = f" ({n:.1f} folios/run under 6.18)" if n is not None else ""
    return f"{t[0]} {mthp_text(t[1])} {t[2]} {t[3]} offset {t[4]}: {size_text(t[5])}{folios}"


def misses(prop, a):
    """The lines of grid.md's "Where PROP misses": its own misses of each
    target, each pair with 6.18's folios per run, so that a pair of a few
    folios reads as such."""
    L = [f"### Where {prop} misses\n",
         "Placement-bound misses of the 90 % target (6.18 / proposal / first-fit / noncontig):\n"]
    L += [f"* {pair_name(t)}: {fmt(t[6])} / {fmt(t[7])} / {fmt(t[8])} / {fmt(t[9])}"
          for t in a["missed_90"]["placement"]] or ["* none"]
    L.append("\nMore than 0.5 pp worse than linux-6.18 (6.18 / proposal):\n")
    L += [f"* {pair_name(t)}: {fmt(t[6])} / {fmt(t[7])}{' (overfull)' if t[-1] == 'space' else ''}"
          for t in a["worse_than_6.18"]] or ["* none"]
    L.append("\nMore order-0 allocation failures than linux-6.18 (mean per run, 6.18 / proposal):\n")
    L += [f"* {t[0]} {mthp_text(t[1])} {t[2]} {t[3]} offset {t[4]}: {t[5]:.1f} / {t[6]:.1f} "
          f"(+{100 * (t[6] - t[5]) / t[5]:.2f} %){' (overfull)' if t[-1] == 'space' else ''}"
          for t in a["more_order0_failures"]] or ["* none"]
    for kind, where in (("other", "outside the overfull cells"), ("space", "in the overfull cells, on avoidable failures")):
        sel = [t for t in a["above_first_fit"] if t[-1] == kind]
        L.append(f"\nMore than 2 pp above first-fit {where} ({len(sel)}; first-fit / proposal):\n")
        L += [f"* {pair_name(t)}: {fmt(t[6])} / {fmt(t[7])}" for t in sel] or ["* none"]
    L.append("")
    return L


def report(rows, res, meta):
    cols = [p for p in POLICIES if any(r["fallback_pct"].get(p) is not None for r in rows)]
    n_cfg = len({(r["workload"], r["mthp"], r["swap"], r["device"], r["region_offset"]) for r in rows})
    L = []
    L.append("# The issue 11 grid: proposals against the references\n")
    L.append("Generated by `docs/proposals/make_grid.py` from the tables of `swaplab sweep "
             "docs/proposals/grid-v1.toml` and `grid-thp-swap.toml` (do not edit by hand). "
             f"{n_cfg} cells (workload × mTHP set × swap size × device × region offset) × "
             f"{len(cols)} policies × seeds {meta['seeds']}, {meta['iterations']} iterations: "
             "workloads thp-swap-v1 (with and without -s) and thp-swap (plain, -a, -s, -a -s); mTHP sets "
             "{64K}, {16K,64K}, {64K,2M}, {16K,64K,256K}, {32K,64K,128K}, {16K,64K,256K,1M}, all "
             "16K–2M; swap 48M, 64M, 128M; devices zram and ssd; region A at offset 0 (2 MiB "
             "aligned), 704K, and 1028K with region B at 12K (docs/placement.md).\n")
    cov = defaultdict(lambda: defaultdict(set))
    for r in rows:
        fam = r["workload"].split(" ")[0]
        for p in cols:
            if r["fallback_pct"].get(p) is not None or p in r["order0_fail"]:
                cov[p][fam].add(r["region_offset"])
    L.append("Coverage (region offsets each policy was run at, per workload): " + "; ".join(
        f"{p}: " + ", ".join(f"{fam} {'/'.join(sorted(o, key=lambda x: (x != '0', x)))}"
                             for fam, o in sorted(cov[p].items()))
        for p in cols) + ". Target counts are over the pairs where the proposal has data.\n")
    L.append("The newest mainline read here (7.x, swap table phase III) allocates as linux-6.18 does "
             "(docs/policies/linux-7.x.md), so linux-6.18 stands for it in every table.\n")
    L.append("A size's fallback per run is its mean over the iterations that swapped that size out "
             "(an iteration with none is no data, not 0 %: docs/sweep.md); the earlier grid of this page "
             "counted those as 0, so sizes with a few folios per run (256K and above; each miss below "
             "gives 6.18's folios per run) read higher here than there. On thp-swap with a ssd at "
             "region offset 1028K,12K the model swaps out no mTHP folio at all (every size 0/0), so "
             "those cells hold no pairs. That is the workload, not a fault: a ssd swaps in order 0 "
             "(no synchronous I/O, docs/workloads.md rule 2), so after the warm-up the only new mTHP "
             "folios are the 256 chunks an iteration drops and rewrites, and thp-swap's chunks are 64 "
             "KiB from the region's start; 4 KiB past a 64 KiB boundary each one straddles two aligned "
             "64 KiB ranges that keep other pages, and a fault there takes order 0 (rule 1). On zram "
             "the warm-up's folios come back whole and keep swapping out.\n")
    L.append("Each value is the mean over the seeds of a size's mean fallback per iteration (%); "
             "docs/data/proposals-grid.json holds every (cell, size) with each policy's seed mean and "
             "the mean order-0 allocation failures per run.\n")
    L.append("## The targets\n")
    L.append(f"Counted over (cell, size) pairs. **Target pairs**: a multi-size cell where linux-6.18 falls "
             f"back ≥ {SHOWN_MIN:g} %; met when the proposal keeps ≤ {100 * (1 - REMOVE):g} % of 6.18's "
             "fallback. A missed target pair is **space-bound** when even `noncontig` (any free slots, no "
             "contiguity) keeps more than that, **contiguity-bound** when noncontig does not but "
             "first-fit (the best contiguous reference) does, and **placement-bound** otherwise: only "
             "the last kind is the proposal's own miss. The other three criteria are split by whether the cell "
             "is **overfull** (space): its data does not fit the device even in any free slots "
             "(`noncontig` fails order-0 allocations there: every 48M cell, and -s at 64M where the "
             "60M region and region B do not fit); order-0 failures and fallback there depend on which "
             "folios happen to be swapped out when the device is full. So an overfull cell is judged on its "
             "**avoidable failures** (docs/sweep.md): a fallback of order k counts only when the devices "
             "had at least 2^k free slots at that moment (`swpout_fallback_free`, as % of the size's "
             "folios), an order-0 failure only when a slot was free (`order0_alloc_fail_free`); "
             "`noncontig` has none by construction. The raw counts over those cells are the last column.\n")
    L.append("| proposal | target pairs (other / overfull) | ≥ 90 % removed (other / overfull) | missed: space | missed: contiguity | "
             "missed: placement | > 0.5 pp worse than 6.18 (overfull / other) | cells with more order-0 "
             "failures (overfull / other) | > 2 pp above first-fit (overfull / other) | overfull, raw counts: "
             "worse / more order-0 failures / above first-fit |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    def split(lst):
        n = sum(1 for t in lst if t[-1] == "space")
        return f"{len(lst)} ({n} / {len(lst) - n})"
    for p, a in res.items():
        tp, tpo, m, mo = a["target_pairs"], a["target_pairs_overfull"], a["met_90"], a["met_90_overfull"]
        L.append(f"| {p} | {tp} ({tp - tpo} / {tpo}) | {m} ({m - mo} / {mo}) | {len(a['missed_90']['space'])} | "
                 f"{len(a['missed_90']['contiguity'])} | {len(a['missed_90']['placement'])} | "
                 f"{split(a['worse_than_6.18'])} of {a['pairs']} | {split(a['more_order0_failures'])} | "
                 f"{split(a['above_first_fit'])} | {len(a['worse_than_6.18_raw'])} / "
                 f"{len(a['more_order0_failures_raw'])} / {len(a['above_first_fit_raw'])} |")
    L.append("")
    over = [r for r in rows if (r["order0_fail"].get("noncontig") or 0) > 0]
    if over and any(r["fallback_free_pct"] for r in over):
        L.append("### Avoidable failures in the overfull cells\n")
        L.append(f"Over the {len(over)} (cell, size) pairs of the overfull cells, the mean per pair of each "
                 "policy's fallback (% of the size's folios over the run's iterations together, not the mean per iteration of the tables): all of it; the part "
                 "made while the devices had 2^order free slots (free); the part made while one of them had "
                 "2^order free slots naturally aligned together (aligned: a search over the whole device "
                 "would have found a place); and the order-0 failures per run, all and while a slot was "
                 "free.\n")
        L.append("| policy | pairs with the columns | fallback, all | free | aligned | order-0 failures | "
                 "of which while a slot was free |")
        L.append("|---|---|---|---|---|---|---|")
        cfgs = {}
        for r in over:
            cfgs[(r["workload"], r["mthp"], r["swap"], r["device"], r["region_offset"])] = r
        for p in cols:
            tot = [r for r in over if p in r["fallback_free_pct"]]
            if not tot:
                continue
            def m(key):
                return mean([r[key][p] for r in tot if r[key].get(p) is not None])
            f0 = mean([c["order0_fail"][p] for c in cfgs.values() if p in c["order0_fail"]])
            f0f = mean([c["order0_fail_free"][p] for c in cfgs.values() if p in c["order0_fail_free"]])
            L.append(f"| {p} | {len(tot)} | {fmt(m('fallback_total_pct'))} | {fmt(m('fallback_free_pct'))} | {fmt(m('fallback_aligned_pct'))} | "
                     f"{f0:.0f} | {f0f:.1f} |")
        L.append("")
    # the two best: the most target pairs met among the proposals run on
    # the most cells (a proposal run on fewer cells is not compared on
    # count; a size with no folios under one policy is no pair for it, not
    # fewer cells); two, since the leading pair can trade one target for
    # another
    for best in sorted(res, key=lambda p: (len(res[p]["cells"]), res[p]["met_90"]), reverse=True)[:2]:
        L.extend(misses(best, res[best]))
    head = "| workload | mTHP | swap | device | offset | size | " + " | ".join(cols) + " |"
    rule = "|" + "---|" * (6 + len(cols))

    def line(r):
        v = r["fallback_pct"]
        return (f"| {r['workload']} | {mthp_text(r['mthp'])} | {r['swap']} | {r['device']} | "
                f"{r['region_offset']} | {size_text(r['size_kb'])} | " + " | ".join(fmt(v.get(p)) for p in cols) + " |")
    L.append("## The issue's headline rows (64M zram, offset 0)\n")
    L.append(head)
    L.append(rule)
    for r in rows:
        if r["swap"] == "64M" and r["device"] == "zram" and r["region_offset"] == "0" and r["workload"] in ("thp-swap -a", "thp-swap-v1") \
                and r["mthp"] in ("64K", "64K,2M", "16K,64K,256K,1M", "16K,32K,64K,128K,256K,512K,1M,2M",
                                  "16K,64K,256K", "32K,64K,128K"):
            L.append(line(r))
    L.append("\nPlots (offset 0, 64M zram): docs/proposals/thp-swap-a-64K-2M.svg, "
             "docs/proposals/thp-swap-a-16K-64K-256K-1M.svg.\n")
    L.append(f"## Multi-size cells where linux-6.18 falls back {SHOWN_MIN:g} % or more\n")
    L.append(head)
    L.append(rule)
    for r in rows:
        if "," in r["mthp"] and (r["fallback_pct"].get("linux-6.18") or 0) >= SHOWN_MIN:
            L.append(line(r))
    L.append("")
    return "\n".join(L) + "\n"


def plot(rows, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("make_grid: matplotlib missing, no plots", file=sys.stderr)
        return
    for mthp, name in (("64K,2M", "thp-swap-a-64K-2M"), ("16K,64K,256K,1M", "thp-swap-a-16K-64K-256K-1M")):
        sel = [r for r in rows if r["workload"] == "thp-swap -a" and r["mthp"] == mthp and r["swap"] == "64M"
               and r["device"] == "zram" and r["region_offset"] == "0"]
        pols = [p for p in POLICIES if any(r["fallback_pct"].get(p) is not None for r in sel)]
        if not sel:
            continue
        fig, ax = plt.subplots(figsize=(8, 3.6))
        w = 0.8 / max(1, len(pols))
        for i, p in enumerate(pols):
            ax.bar([j + i * w for j in range(len(sel))], [r["fallback_pct"].get(p) or 0 for r in sel], w, label=p)
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(sel))])
        ax.set_xticklabels([size_text(r["size_kb"]) for r in sel])
        ax.set_ylabel("fallback % (mean of 5 seeds)")
        ax.set_title(f"thp-swap -a, mTHP {mthp_text(mthp)}, 64M zram, offset 0")
        ax.legend(fontsize=7, ncol=3)
        fig.tight_layout()
        path = os.path.join(out_dir, name + ".svg")
        fig.savefig(path + ".tmp.svg", format="svg", metadata={"Date": None})
        plt.close(fig)
        with open(path + ".tmp.svg", encoding="utf-8") as f:
            svg = f.read()
        os.unlink(path + ".tmp.svg")
        write_output(path, svg, "plot")


def main(argv):
    base = None
    if len(argv) >= 2 and argv[0] == "--base":
        base, argv = argv[1], argv[2:]
    if len(argv) < 1:
        print("usage: make_grid.py [--base GRID.json] SWEEP-DIR [SWEEP-DIR...]", file=sys.stderr)
        return 2
    try:
        tables = [table(a) for a in argv]
        data = load(tables)
        if base:
            nseeds = max(len(p["f0"]) for c in data.values() for p in c.values())
            print(f"make_grid: {merge_base(data, base, nseeds)} (cell, policy) pairs from {base}",
                  file=sys.stderr)
    except ParamError as e:
        print(f"make_grid: {e}", file=sys.stderr)
        return 2
    rows = pairs(data)
    seeds = {int(r["seed"]) for t in tables for r in t}
    its = {r["iterations"] for t in tables for r in t}
    meta = {"seeds": f"{min(seeds)}–{max(seeds)}", "iterations": ",".join(sorted(its))}
    res = {p: assess(rows, p) for p in PROPOSALS if any(r["fallback_pct"].get(p) is not None for r in rows)}
    write_output(os.path.join(HERE, "grid.md"), report(rows, res, meta), "grid.md")
    summary = {p: {"target_pairs": a["target_pairs"], "met_90": a["met_90"],
                   "target_pairs_overfull": a["target_pairs_overfull"], "met_90_overfull": a["met_90_overfull"],
                   "missed_90": {k: len(v) for k, v in a["missed_90"].items()},
                   "worse_than_6.18": len(a["worse_than_6.18"]), "pairs": a["pairs"],
                   "worse_than_6.18_overfull": sum(1 for t in a["worse_than_6.18"] if t[-1] == "space"),
                   "more_order0_failures": len(a["more_order0_failures"]),
                   "more_order0_failures_overfull": sum(1 for t in a["more_order0_failures"] if t[-1] == "space"),
                   "above_first_fit": len(a["above_first_fit"]),
                   "above_first_fit_overfull": sum(1 for t in a["above_first_fit"] if t[-1] == "space"),
                   # overfull cells by their raw counts (before the avoidable-failure judging)
                   "overfull_raw": {"worse_than_6.18": len(a["worse_than_6.18_raw"]),
                                    "more_order0_failures": len(a["more_order0_failures_raw"]),
                                    "above_first_fit": len(a["above_first_fit_raw"])}}
               for p, a in res.items()}
    write_json(os.path.join(ROOT, "docs", "data", "proposals-grid.json"),
               {"schema": "swaplab.proposals-grid/3", "generated_by": "docs/proposals/make_grid.py",
                "specs": ["docs/proposals/grid-v1.toml", "docs/proposals/grid-thp-swap.toml"],
                "seeds": meta["seeds"], "iterations": meta["iterations"], "targets": summary,
                "rows": rows}, "json")
    plot(rows, HERE)
    for p, s in summary.items():
        print(p, s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
