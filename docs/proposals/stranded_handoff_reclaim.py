"""The reclaim half of revision 4's stranded hand-off measurement
(proposal-holes-first.md, "Stranded hand-offs"): the reclaim golden
variants and harder ones (small swap, every size, 2 and 4 CPUs), seeds
1-10, windows 1 and 0, both proposals. Per variant and policy: pages
swapped out, mTHP fallbacks, order-0 failures, hand-offs, and the
allocations that took a handed range (handoff_takes; with a core built
with -DXP_HANDED_COUNT_ONLY, the failures that had one in reach).

    python docs/proposals/stranded_handoff_reclaim.py
    python docs/proposals/stranded_handoff_reclaim.py docs/proposals/grid-v1.toml

With a sweep spec instead: every run of its cells for both proposals,
and how many of them took a handed range (a run that takes none is
revision 4's run unchanged).
"""
import sys

from swaplab import _core, reclaim, sweeps

if len(sys.argv) > 1:
    spec = sweeps.normalize_spec(sweeps.load_toml(sys.argv[1]))
    spec["policy"] = ["proposal-holes-first", "proposal-compact"]
    runs = with_take = takes = 0
    checked: dict = {}
    for cell in sweeps.cells(spec):
        _cid, pol, kw, _sizes, _m = sweeps._task(cell, False, checked)
        t = _core.run(policy=pol, metrics=False, **kw)["device"].get("handoff_takes", 0)
        runs += 1
        with_take += t > 0
        takes += t
        if t:
            print(f"takes {t}: {cell}", flush=True)
    print(f"{sys.argv[1]}: {runs} runs, {with_take} with a take, {takes} takes")
    sys.exit(0)

SMALL = 24 << 20
HARDER = [
    ("usemem-all-24M", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096,
                                  "mthp_mask": 0x3fc, "swap_bytes": SMALL}),
    ("usemem-16K-64K-24M", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096,
                                      "mthp_mask": 0x14, "swap_bytes": SMALL}),
    ("pmbench-zipf-16K-64K-2cpu", "pmbench", {"nr_procs": 2, "nr_cpus": 2, "wss_pages": 4096,
                                              "limit_pages": 2048, "accesses": 8000, "dist": 1,
                                              "zipf_s": 0.9, "mthp_mask": 0x14}),
    ("pmbench-zipf-16K-64K-2cpu-16M", "pmbench", {"nr_procs": 2, "nr_cpus": 2, "wss_pages": 4096,
                                                  "limit_pages": 2048, "accesses": 8000, "dist": 1,
                                                  "zipf_s": 0.9, "mthp_mask": 0x14,
                                                  "swap_bytes": 16 << 20}),
    ("pmbench-uniform-all-2cpu-16M", "pmbench", {"nr_procs": 2, "nr_cpus": 2, "wss_pages": 4096,
                                                 "limit_pages": 2048, "accesses": 8000,
                                                 "mthp_mask": 0x3fc, "swap_bytes": 16 << 20}),
]
BUILD = {"jobs": 3, "generations": 3, "size_median_pages": 1536, "size_max_pages": 8192,
         "swap_bytes": SMALL}
for lim in (4096, 2048):
    HARDER += [(f"build-16K-64K-24M-{lim}", "build", dict(BUILD, limit_pages=lim, mthp_mask=0x1c)),
               (f"build-all-24M-{lim}-4cpu", "build", dict(BUILD, limit_pages=lim, mthp_mask=0x3fc,
                                                           jobs=4, nr_cpus=4))]
HARDER.append(("build-all-24M-2048", "build", dict(BUILD, limit_pages=2048, mthp_mask=0x3fc)))

for label, name, over in list(reclaim.GOLDEN_VARIANTS) + HARDER:
    for pol in ("proposal-holes-first", "proposal-compact"):
        t = dict(swpout=0, mthp_fallback=0, order0_fail=0, handoffs=0, takes=0)
        for seed in range(1, 11):
            for window in (1, 0):
                prm, _preset = reclaim.base_params(name)
                prm.update(over, seed=seed)
                raw = _core.rrun(prm, policy=pol, check=0, cost=None, window=window, layout=0)
                h = raw.get("dev_handoffs") or {}
                t["swpout"] += sum(raw["swpout"])
                t["mthp_fallback"] += sum(raw["swpout_fallback"][1:])
                t["order0_fail"] += raw["dev_alloc_fail"][0]
                t["handoffs"] += h.get("handoffs", 0)
                t["takes"] += h.get("handoff_takes", 0)
        print(f"{label:32s} {pol:22s} " + " ".join(f"{k} {v}" for k, v in t.items()), flush=True)
