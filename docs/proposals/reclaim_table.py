#!/usr/bin/env python3
"""The proposals on the reclaim-driven presets (issue 11's grid: "add the
reclaim-driven workloads when they exist"; docs/workloads-reclaim.md).

    python docs/proposals/reclaim_table.py --json docs/data/proposals-reclaim.json [--seeds 5]

Runs each preset below on each policy and seed with the model (`swaplab
run PRESET --policy P --seed S [--cpus N]`, the Python API underneath) and
writes, per (setting, policy), the seed means of every mTHP size's
fallback %, the order-0 swap-outs that found no slot (`alloc_fail`), the
device's peak use and the share of operations after which its free-cluster
list was empty, and the predicted system time with the calibration agree
uses (agree.DEFAULT_COST: F34's fit) for one-byte pages and for pages
that compress 2:1 (`--page-content mixed`: F32's extra a page swapped out
and in, F33); then prints the Markdown tables of docs/proposals/README.md,
"Reclaim-driven presets". Deterministic: the same tree gives the same file.
"""
import argparse
import json
import os
import statistics
import sys

from swaplab.kernel.agree import DEFAULT_COST, cost_from_calibration
from swaplab.reclaim import MIXED_PAGE_EXTRA_NS, build_parser, params_from_args, run_reclaim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COST = cost_from_calibration(os.path.join(ROOT, DEFAULT_COST))

POLICIES = ("linux-6.12", "linux-6.18", "proposal-holes-first", "proposal-compact", "first-fit", "buddy",
            "noncontig")
# (label, preset, options): kbuild-v5 on the harness's 2 CPUs and on the
# published machine's 32 (where 6.18 falls back), the 64K make and usemem
SETTINGS = (("kbuild-v5, 2 CPUs", "kbuild-v5", []),
            ("kbuild-v5, 32 CPUs", "kbuild-v5", ["--cpus", "32"]),
            ("kbuild-v5, 32 CPUs, 32 generations", "kbuild-v5", ["--cpus", "32", "--generations", "32"]),
            ("make-j96-1152m-64k", "make-j96-1152m-64k", []),
            ("usemem-2024", "usemem-2024", []))


def one(preset: str, opts: list, policy: str, seed: int) -> dict:
    a = build_parser().parse_args([preset, *opts, "--seed", str(seed), "-q"])
    prm, pre = params_from_args(a)
    r = run_reclaim(prm, policy, 0, COST, pre)
    pg = r["pages"]
    # the cost is linear: mixed pages add their extra per page swapped out and in
    mixed = r["cost"]["predicted_sys_seconds"] + 1e-9 * (pg["swapped_out"] * MIXED_PAGE_EXTRA_NS["swpout_page"] +
                                                         pg["swapped_in"] * MIXED_PAGE_EXTRA_NS["swpin_page"])
    return {"sys_byte": r["cost"]["predicted_sys_seconds"], "sys_mixed": mixed,"fallback_pct": {kb: s["fallback_pct"] for kb, s in r["sizes"].items() if kb != "4"},
            "alloc_fail": r["order0"]["alloc_fail"], "oom": r["reclaim"]["oom"],
            "swap_peak_pct": 100.0 * r["reclaim"]["swap_peak"] * 4096 / prm["swap_bytes"],
            "free_empty_pct": (r.get("clusters") or {}).get("free_empty_pct")}


def mean(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.mean(xs), 2) if xs else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    rows = []
    for label, preset, opts in SETTINGS:
        for pol in POLICIES:
            runs = [one(preset, opts, pol, s) for s in range(1, a.seeds + 1)]
            sizes = sorted({kb for r in runs for kb in r["fallback_pct"]}, key=int)
            rows.append({"setting": label, "preset": preset, "options": opts, "policy": pol, "seeds": a.seeds,
                         "fallback_pct": {kb: mean([r["fallback_pct"].get(kb) for r in runs]) for kb in sizes},
                         "alloc_fail": mean([r["alloc_fail"] for r in runs]),
                         "oom": sum(r["oom"] for r in runs),
                         "swap_peak_pct": mean([r["swap_peak_pct"] for r in runs]),
                         "free_empty_pct": mean([r["free_empty_pct"] for r in runs]),
                         "predicted_sys_seconds": {"byte": round(statistics.mean(r["sys_byte"] for r in runs), 4),
                                                   "mixed": round(statistics.mean(r["sys_mixed"] for r in runs), 4)}})
            print(label, pol, rows[-1]["fallback_pct"], file=sys.stderr)
    with open(a.json, "w") as f:
        json.dump({"schema": "swaplab.proposals-reclaim/1", "policies": POLICIES, "rows": rows}, f, indent=1)
        f.write("\n")
    for label, _, _ in SETTINGS:
        sel = [r for r in rows if r["setting"] == label]
        sizes = sorted({kb for r in sel for kb in r["fallback_pct"]}, key=int)
        names = [f"{kb}K" if int(kb) < 1024 else f"{int(kb) // 1024}M" for kb in sizes]
        print(f"\n{label} (seed means; fallback % per size, order-0 swap-outs without a slot, device peak)\n")
        print("| policy | " + " | ".join(names) + " | order-0 no slot | peak |")
        print("|---|" + "---|" * (len(sizes) + 2))
        for r in sel:
            cells = ["0" if r["fallback_pct"][kb] == 0 else f"{r['fallback_pct'][kb]:.1f}" for kb in sizes]
            print(f"| {r['policy']} | " + " | ".join(cells) + f" | {r['alloc_fail']:g} | {r['swap_peak_pct']:.0f} % |")
    print("\nPredicted system time (s, seed means, agree's default fit): one-byte pages / pages that compress 2:1\n")
    print("| setting | " + " | ".join(POLICIES) + " |")
    print("|---|" + "---|" * len(POLICIES))
    for label, _, _ in SETTINGS:
        by = {r["policy"]: r["predicted_sys_seconds"] for r in rows if r["setting"] == label}
        print(f"| {label} | " + " | ".join(f"{by[p]['byte']:.2f} / {by[p]['mixed']:.2f}" for p in POLICIES) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
