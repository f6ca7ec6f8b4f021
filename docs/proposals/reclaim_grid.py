#!/usr/bin/env python3
"""Issue 11's grid on the reclaim-driven workloads (issue 13,
docs/workloads-reclaim.md): every swap-out comes from reclaim under a
memory limit, none from MADV_PAGEOUT.

    python docs/proposals/reclaim_grid.py [-j 2] [--seeds 5] [--workload W,...]
        [--mthp SET ...] [--fill 85,97] [--policy P,...]
        [--json docs/data/proposals-reclaim-grid.json] [--md docs/proposals/reclaim-grid.md]

Runs each (workload, mTHP set, fill level, seed, policy) on the model in
this process's workers (`swaplab run WORKLOAD ...`, the Python API
underneath) and writes the seed means per (cell, size, policy) and
docs/proposals/reclaim-grid.md, judged on issue 11's targets by
make_grid.py's assess(). Nothing here is edited by hand: re-run it after a
policy changes. Deterministic: the same tree and options give the same
files.

The fill level sizes the device from the run's own peak swap use: a first
run of linux-6.18 on an ample device (256 MiB, peak below half of it)
gives the peak P (slots in use) of that workload, mTHP set and seed, and
the grid's device is P / fill, rounded up to 64 KiB. The peak is a
property of the workload (the pages over the limit), not of the device or
the policy, so every policy's run then peaks at about that fill (the
JSON's device_peak_pct says how close).
"""
import argparse
import json
import math
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import make_grid as mg  # noqa: E402  (docs/proposals/make_grid.py: assess(), the targets)
from swaplab.params import ParamError, check_policy_name, parse_count, parse_mthp, shown  # noqa: E402
from swaplab.kernel.agree import DEFAULT_COST, cost_from_calibration  # noqa: E402
from swaplab.reclaim import build_parser, params_from_args, run_reclaim  # noqa: E402
from swaplab.results import write_json, write_output  # noqa: E402

PROG = "reclaim_grid.py"
# (name, `swaplab run` arguments): two processes on the harness's 2 CPUs
# (the live kernel here), a 32 MiB limit; each writes its memory before
# the measured part, so about 61 MiB of it sits in swap at the peak.
WORKLOADS = {
    "pmbench-uniform": "pmbench --procs 2 --wss 46M --limit 32M --accesses 1000000 --cpus 2",
    "pmbench-zipf": "pmbench --procs 2 --wss 46M --limit 32M --accesses 1000000 --cpus 2 --dist zipf",
    "usemem-reread": "usemem --procs 4 --size 23M --limit 32M --reread 1 --cpus 2",
    "build": "build --jobs 32 --generations 16 --size-median 2560K --limit 32M --cpus 2",
}
MTHPS = ["64K", "16K,64K", "64K,2M", "16K,64K,256K", "32K,64K,128K", "16K,64K,256K,1M",
         "16K,32K,64K,128K,256K,512K,1M,2M"]
FILLS = [85, 97]
POLICIES = ["linux-6.12", "linux-6.18", "first-fit", "buddy", "noncontig", "proposal-holes-first",
            "proposal-compact", "proposal-kcompact"]
PROPOSALS = [p for p in POLICIES if p.startswith("proposal-")]
CALIBRATE_POLICY = "linux-6.18"
CALIBRATE_BYTES = 256 << 20
ROUND = 64 << 10
JSON_OUT = os.path.join("docs", "data", "proposals-reclaim-grid.json")
# the cost model agree uses (F34's fit of user + system time, one-byte pages)
COST = cost_from_calibration(os.path.join(ROOT, DEFAULT_COST))
MD_OUT = os.path.join("docs", "proposals", "reclaim-grid.md")


def run_one(task):
    """One model run: task = (workload, mthp, swap bytes, seed, policy) ->
    per size [swpout, swpout_fallback, of those fallbacks the ones made while
    the device had 2^order free slots, and while it had them aligned],
    order-0 failures (and while a slot was free), oom, peak slots, entries
    moved (proposal-compact's step and proposal-kcompact's worker), the
    predicted system time (s)."""
    wl, mthp, swap, seed, pol = task
    args = WORKLOADS[wl].split() + ["--mthp", mthp, "--swap-size", f"{swap // 1024}K", "--seed", str(seed), "-q"]
    prm, pre = params_from_args(build_parser().parse_args(args))
    r = run_reclaim(prm, pol, 0, COST, pre)
    return task, {"sizes": {int(kb): [s["swpout"], s["swpout_fallback"], s["swpout_fallback_free"],
                                      s["swpout_fallback_aligned"]] for kb, s in r["sizes"].items() if kb != "4"},
                  "order0_fail": r["order0"]["alloc_fail"], "order0_fail_free": r["order0"]["alloc_fail_free"],
                  "oom": r["reclaim"]["oom"],
                  "peak": r["reclaim"]["swap_peak"],
                  "moves": sum(r.get(k, {}).get("moves", 0) for k in ("compact", "kcompact")),
                  "sys": r["cost"]["predicted_sys_seconds"]}


def run_all(tasks, jobs):
    if jobs == 1:
        return dict(map(run_one, tasks))
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return dict(pool.imap_unordered(run_one, tasks, chunksize=4))


def device_bytes(peak_pages, fill):
    return math.ceil(peak_pages * 4096 * 100 / fill / ROUND) * ROUND


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def cell_label(cell):
    wl, mthp, fill = cell
    return f"{wl} {mg.mthp_text(mthp)} at {fill} %"


def grid(opts):
    """Runs the grid; returns (rows, devices, meta)."""
    seeds = range(1, opts.seeds + 1)
    t0 = time.time()
    cal = run_all([(wl, m, CALIBRATE_BYTES, s, CALIBRATE_POLICY) for wl in opts.workload for m in opts.mthp
                   for s in seeds], opts.jobs)
    devices = {}
    for (wl, m, _, s, _), r in cal.items():
        if r["peak"] * 4096 * 2 > CALIBRATE_BYTES or r["oom"] or r["order0_fail"]:
            raise ParamError(f"workload {wl} peaks at {r['peak'] * 4096 >> 20} MiB, not below half of "
                             f"the {CALIBRATE_BYTES >> 20} MiB calibration device")
        for f in opts.fill:
            devices[(wl, m, f, s)] = (r["peak"], device_bytes(r["peak"], f))
    tasks = [(wl, m, devices[(wl, m, f, s)][1], s, p) for wl in opts.workload for m in opts.mthp
             for f in opts.fill for s in seeds for p in opts.policy]
    res = run_all(tasks, opts.jobs)
    wall = time.time() - t0
    rows = []
    for wl in opts.workload:
        for m in opts.mthp:
            kbs = parse_mthp(m)
            for f in opts.fill:
                runs = {p: [res[(wl, m, devices[(wl, m, f, s)][1], s, p)] for s in seeds] for p in opts.policy}
                f0 = {p: mean([r["order0_fail"] for r in rs]) for p, rs in runs.items()}
                f0free = {p: mean([r["order0_fail_free"] for r in rs]) for p, rs in runs.items()}
                oom = {p: mean([r["oom"] for r in rs]) for p, rs in runs.items()}
                moves = {p: mean([r["moves"] for r in rs]) for p, rs in runs.items() if p in PROPOSALS}
                sys_s = {p: round(mean([r["sys"] for r in rs]), 4) for p, rs in runs.items()}
                peak = {p: round(mean([100.0 * r["peak"] * 4096 / devices[(wl, m, f, s)][1]
                                       for s, r in zip(seeds, rs)]), 2) for p, rs in runs.items()}
                for kb in kbs:
                    fb, n, free, aligned = {}, {}, {}, {}
                    for p, rs in runs.items():
                        # a seed that swapped no folio of this size out is no data, not 0 %
                        per = [r["sizes"].get(kb, [0, 0, 0, 0]) for r in rs]
                        per = [v for v in per if v[0] + v[1]]
                        for out, i in ((fb, 1), (free, 2), (aligned, 3)):
                            out[p] = round(mean([100.0 * v[i] / (v[0] + v[1]) for v in per]), 3) if per else None
                        n[p] = round(sum(v[0] + v[1] for v in per) / len(rs), 1)
                    rows.append({"workload": wl, "mthp": m, "swap": f"{f} %", "device": "zram", "region_offset": "–",
                                 "size_kb": kb, "fallback_pct": fb, "order0_fail": f0, "oom": oom, "moves": moves,
                                 "predicted_sys_seconds": sys_s,
                                 "device_peak_pct": peak, "folios": n,
                                 # the avoidable failures (grid.md): fallbacks made while
                                 # the device had 2^order free slots, and had them aligned
                                 "fallback_free_pct": free, "fallback_aligned_pct": aligned,
                                 "fallback_total_pct": fb, "order0_fail_free": f0free})
    meta = {"seeds": f"1–{opts.seeds}", "runs": len(tasks) + len(cal), "wall_seconds": round(wall, 1),
            "devices": {f"{wl} {m} {f} % seed {s}": {"peak_pages": v[0], "swap_bytes": v[1]}
                        for (wl, m, f, s), v in sorted(devices.items(), key=lambda kv: (
                            opts.workload.index(kv[0][0]), opts.mthp.index(kv[0][1]), kv[0][2], kv[0][3]))}}
    return rows, meta


def assess_all(rows, policies):
    return {p: mg.assess(rows, p) for p in policies if p in PROPOSALS and
            any(r["fallback_pct"].get(p) is not None for r in rows)}


def summary(res):
    return {p: {"target_pairs": a["target_pairs"], "met_90": a["met_90"],
                "missed_90": {k: len(v) for k, v in a["missed_90"].items()},
                "pairs": a["pairs"], "worse_than_6.18": len(a["worse_than_6.18"]),
                "more_order0_failures": len(a["more_order0_failures"]),
                "above_first_fit": len(a["above_first_fit"])} for p, a in res.items()}


def fmt(x):
    return "–" if x is None else f"{x:.1f}"


def pair_text(t):
    """A pair of assess()'s lists: (workload, mthp, fill, device, offset, kb, ...)."""
    n = mg.FOLIOS.get(tuple(t[:6]))
    folios = f" ({n:.0f} folios/run under 6.18)" if n is not None else ""
    return f"{t[0]} {mg.mthp_text(t[1])} at {t[2]}: {mg.size_text(t[5])}{folios}"


def report(rows, res, meta, opts):
    cols = [p for p in POLICIES if p in opts.policy]
    cells = list(dict.fromkeys((r["workload"], r["mthp"], r["swap"]) for r in rows))
    L = ["# Issue 11's grid on the reclaim-driven workloads\n",
         f"Generated by `docs/proposals/reclaim_grid.py` (do not edit by hand). {len(cells)} cells "
         f"(workload × mTHP set × fill level) × {len(cols)} policies × seeds {meta['seeds']}, "
         f"{meta['runs']} model runs with the calibration runs. Every swap-out comes from reclaim "
         "under a 32 MiB memory limit (docs/workloads-reclaim.md), on zram, two CPUs:\n"]
    for wl in opts.workload:
        L.append(f"* {wl}: `swaplab run {WORKLOADS[wl]}`")
    L.append("\nThe fill level sizes the device from the run's own peak swap use: linux-6.18 on an ample "
             "256 MiB device gives the peak of that workload, mTHP set and seed, and the device is that "
             "peak / fill, rounded up to 64 KiB. Each policy's mean peak is in the JSON "
             "(`device_peak_pct`). A fill just past full is left out: there every policy, noncontig too, "
             "fails thousands of order-0 swap-outs and OOMs thousands of times a run, so the fallback "
             "measures which folios reached a full device.\n")
    L.append("Each value is the mean over the seeds of the size's fallback in the run (% of the size's "
             "folios swapped out or fallen back, over the whole run); a seed with no folio of the size "
             "is no data. docs/data/proposals-reclaim-grid.json holds every (cell, size) with each "
             "policy's seed means of fallback %, folios per run, order-0 failures, OOMs and device peak. "
             "linux-6.18 stands for the newest mainline (docs/policies/linux-7.x.md).\n")
    over = {(r["workload"], r["mthp"], r["swap"]) for r in rows if (r["order0_fail"].get("noncontig") or 0) > 0}
    L.append("## The targets\n")
    L.append(f"The thp-swap grid's rules (grid.md, \"The targets\"; make_grid.py's assess()), over (cell, size) "
             f"pairs. **Target pairs**: a multi-size cell where linux-6.18 falls back ≥ {mg.SHOWN_MIN:g} %; met "
             f"when the proposal keeps ≤ {100 * (1 - mg.REMOVE):g} % of 6.18's fallback. A missed pair is "
             "**space-bound** when noncontig keeps more than that, **contiguity-bound** when first-fit does, "
             "**placement-bound** (the proposal's own miss) otherwise. Only an overfull cell would be judged "
             "on its avoidable failures"
             + (", as in grid.md: noncontig fails order-0 swap-outs in " + str(len(over)) + " cells.\n" if over else
                "; no cell is overfull (noncontig never fails an order-0 swap-out), so every cell is judged on its "
                "raw counts.\n"))
    L.append("| proposal | pairs | target pairs | ≥ 90 % removed | missed: space | missed: contiguity | "
             "missed: placement | > 0.5 pp worse than 6.18 | cells with more order-0 failures | "
             "> 2 pp above first-fit |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for p, a in res.items():
        L.append(f"| {p} | {a['pairs']} | {a['target_pairs']} | {a['met_90']} | {len(a['missed_90']['space'])} | "
                 f"{len(a['missed_90']['contiguity'])} | {len(a['missed_90']['placement'])} | "
                 f"{len(a['worse_than_6.18'])} | {len(a['more_order0_failures'])} | {len(a['above_first_fit'])} |")
    L.append("\nPer workload and fill level: target pairs, and per proposal the pairs met / > 0.5 pp worse "
             "than 6.18 / > 2 pp above first-fit.\n")
    L.append("| workload | fill | pairs | target pairs | " + " | ".join(res) + " |")
    L.append("|" + "---|" * (4 + len(res)))
    for wl in opts.workload:
        for f in opts.fill:
            sel = [r for r in rows if r["workload"] == wl and r["swap"] == f"{f} %"]
            sub = {p: mg.assess(sel, p) for p in res}
            any_a = next(iter(sub.values()), None)
            L.append(f"| {wl} | {f} % | {len(sel)} | {any_a['target_pairs'] if any_a else '–'} | " +
                     " | ".join(f"{a['met_90']} / {len(a['worse_than_6.18'])} / {len(a['above_first_fit'])}"
                                for a in sub.values()) + " |")
    tp = [r for r in rows if "," in r["mthp"] and (r["fallback_pct"].get("linux-6.18") or 0) >= mg.SHOWN_MIN]
    if tp:
        L.append(f"\nEvery policy on the {len(tp)} target pairs: the mean of its fallback over them, and the pairs "
                 "where it keeps ≤ 10 % of 6.18's (the target's test, for the references too). first-fit defines "
                 "the contiguity-bound misses; buddy is a contiguous allocator as well.\n")
        L.append("| policy | mean fallback on the target pairs (%) | ≤ 10 % of 6.18's |")
        L.append("|---|---|---|")
        for p in cols:
            v = [r["fallback_pct"].get(p) for r in tp]
            if any(x is None for x in v):
                continue
            met = sum(x <= (1 - mg.REMOVE) * r["fallback_pct"]["linux-6.18"] for x, r in zip(v, tp))
            L.append(f"| {p} | {mean(v):.1f} | {met} |")
        L.append(f"\nAt the moment of each fallback (the avoidable failures of grid.md, here as a diagnostic): "
                 "the mean over the target pairs of the fallback made while the device had 2^order free slots "
                 "(free), and while it had them naturally aligned together (aligned: a search of the whole "
                 "device would have found a place). A fallback with no aligned free run is decided by where "
                 "earlier folios went, not by the search.\n")
        L.append("| policy | fallback (%) | of it: free | of it: aligned |")
        L.append("|---|---|---|---|")
        for p in cols:
            v = [(r["fallback_pct"].get(p), r["fallback_free_pct"].get(p), r["fallback_aligned_pct"].get(p))
                 for r in tp]
            if any(x is None for t in v for x in t):
                continue
            L.append(f"| {p} | {mean([t[0] for t in v]):.1f} | {mean([t[1] for t in v]):.1f} | "
                     f"{mean([t[2] for t in v]):.1f} |")
    L.append("\nFew folios make a noisy pair: each pair below gives linux-6.18's folios of that size per run.\n")
    for p, a in res.items():
        L.append(f"### {p}\n")
        L.append("Placement-bound misses of the 90 % target (6.18 / proposal / first-fit / noncontig):\n")
        L += [f"* {pair_text(t)}: {fmt(t[6])} / {fmt(t[7])} / {fmt(t[8])} / {fmt(t[9])}"
              for t in a["missed_90"]["placement"]] or ["* none"]
        L.append("\nMore than 0.5 pp worse than linux-6.18 (6.18 / proposal):\n")
        L += [f"* {pair_text(t)}: {fmt(t[6])} / {fmt(t[7])}" for t in a["worse_than_6.18"]] or ["* none"]
        L.append("\nMore order-0 allocation failures than linux-6.18 (mean per run, 6.18 / proposal):\n")
        L += [f"* {t[0]} {mg.mthp_text(t[1])} at {t[2]}: {t[5]:.1f} / {t[6]:.1f}"
              for t in a["more_order0_failures"]] or ["* none"]
        L.append("\nMore than 2 pp above first-fit (first-fit / proposal):\n")
        L += [f"* {pair_text(t)}: {fmt(t[6])} / {fmt(t[7])}" for t in a["above_first_fit"]] or ["* none"]
        L.append("")
    firsts = [next(x for x in rows if (x["workload"], x["mthp"], x["swap"]) == c) for c in cells]
    L.append("## Predicted system time and moves\n")
    L.append("The cost model's system time (agree's calibration: F34's fit, one-byte pages; "
             "docs/reclaim.md \"Cost model\"), per workload and fill: each policy's mean over the cells "
             "of its time against linux-6.18's in the same cell (%, seed means; below 100: less), and the "
             "proposals' entries moved per run (mean over the cells).\n")
    L.append("| workload | fill | " + " | ".join(cols) + " | " + " | ".join(f"moves: {p}" for p in res) + " |")
    L.append("|" + "---|" * (2 + len(cols) + len(res)))
    for wl in opts.workload:
        for f in opts.fill:
            sel = [r for r in firsts if r["workload"] == wl and r["swap"] == f"{f} %"]
            rel = [fmt(mean([100.0 * r["predicted_sys_seconds"][p] / r["predicted_sys_seconds"]["linux-6.18"]
                             for r in sel])) if "linux-6.18" in cols else "–" for p in cols]
            mv = [f"{mean([r['moves'][p] for r in sel]):.0f}" for p in res]
            L.append(f"| {wl} | {f} % | " + " | ".join(rel) + " | " + " | ".join(mv) + " |")
    L.append("")
    L.append("## Every pair\n")
    L.append("Seed means, fallback %; folios per run under linux-6.18 in brackets.\n")
    L.append("| workload | mTHP | fill | size | " + " | ".join(cols) + " |")
    L.append("|" + "---|" * (4 + len(cols)))
    for r in rows:
        n = r["folios"].get("linux-6.18")
        L.append(f"| {r['workload']} | {mg.mthp_text(r['mthp'])} | {r['swap']} | {mg.size_text(r['size_kb'])}"
                 f"{'' if n is None else f' ({n:.0f})'} | " + " | ".join(fmt(r["fallback_pct"].get(p)) for p in cols)
                 + " |")
    L.append("\n## Order-0 failures, OOMs and the device's peak\n")
    L.append("Per fill level and policy, over the cells: the order-0 swap-outs that found no slot and the "
             "OOMs (mean per run, summed over the cells), and the lowest and highest mean device peak of a "
             "cell (% of the device).\n")
    L.append("| fill | policy | order-0 failures | OOMs | device peak |")
    L.append("|---|---|---|---|---|")
    for f in opts.fill:
        sel = [r for r in firsts if r["swap"] == f"{f} %"]
        for p in cols:
            pk = [r["device_peak_pct"][p] for r in sel]
            L.append(f"| {f} % | {p} | {sum(r['order0_fail'][p] for r in sel):g} | {sum(r['oom'][p] for r in sel):g} | "
                     f"{min(pk):.1f}–{max(pk):.1f} % |")
    L.append("\nThe calibration is linux-6.18's peak; a policy whose runs keep more in swap (linux-6.12 "
             "above) peaks above the fill.")
    L.append("")
    return "\n".join(L) + "\n"


def parse_args(argv):
    from swaplab.cli import _Parser
    ap = _Parser(prog=PROG, description="Issue 11's grid on the reclaim-driven workloads.")
    ap.add_argument("-j", "--jobs", default="2", help="worker processes (default 2)")
    ap.add_argument("--seeds", default="5", help="seeds 1..N (default 5)")
    ap.add_argument("--workload", default=",".join(WORKLOADS), help="comma-separated: " + ", ".join(WORKLOADS))
    ap.add_argument("--mthp", action="append", help="an mTHP set, e.g. 16K,64K (repeat; default the 7 sets)")
    ap.add_argument("--fill", default=",".join(map(str, FILLS)), help="device peak use, %% (default 85,97)")
    ap.add_argument("--policy", default=",".join(POLICIES), help="comma-separated policies")
    ap.add_argument("--json", default=os.path.join(ROOT, JSON_OUT), help="seed means (JSON)")
    ap.add_argument("--md", default=os.path.join(ROOT, MD_OUT), help="the report (Markdown)")
    a = ap.parse_args(argv)

    a.jobs = parse_count(a.jobs, "-j", 1, 64)
    a.seeds = parse_count(a.seeds, "--seeds", 1, 100)
    a.workload = [w.strip() for w in a.workload.split(",")]
    for w in a.workload:
        if w not in WORKLOADS:
            raise ParamError(f"unknown workload '{shown(w)}' (known: {', '.join(WORKLOADS)})")
    a.fill = [parse_count(f, "--fill", 50, 99) for f in a.fill.split(",")]
    a.mthp = [",".join(f"{k // 1024}M" if k >= 1024 else f"{k}K" for k in parse_mthp(m)) for m in a.mthp or MTHPS]
    a.policy = [p.strip() for p in a.policy.split(",")]
    for p in a.policy:
        check_policy_name(p)
    for p in ("linux-6.18", "first-fit", "noncontig"):
        if p not in a.policy:
            raise ParamError(f"--policy must include {p} (the targets are judged against it)")
    for lst, what in ((a.workload, "--workload"), (a.fill, "--fill"), (a.mthp, "--mthp"), (a.policy, "--policy")):
        if len(set(lst)) != len(lst):
            raise ParamError(f"{what} names a value twice")
    return a


def main(argv):
    try:
        opts = parse_args(argv)
        rows, meta = grid(opts)
    except ParamError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    mg.FOLIOS.clear()
    res = assess_all(rows, opts.policy)
    write_output(opts.md, report(rows, res, meta, opts), "--md")
    write_json(opts.json, {"schema": "swaplab.proposals-reclaim-grid/1", "generated_by": "docs/proposals/reclaim_grid.py",
                           "workloads": {w: WORKLOADS[w] for w in opts.workload}, "fills": opts.fill,
                           "seeds": meta["seeds"], "policies": opts.policy, "targets": summary(res),
                           "devices": meta["devices"], "rows": rows}, "--json")
    print(f"{PROG}: {meta['runs']} runs in {meta['wall_seconds']} s on {opts.jobs} workers", file=sys.stderr)
    for p, s in summary(res).items():
        print(p, json.dumps(s), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
