"""F33: the system time of pages that compress 2:1 against one-byte pages,
on the live kernel, and F32's per-page account of the difference.

    python docs/experiments/page-content.py --json docs/data/page-content-6.18-f33.json

Runs agree's 18 reclaim settings (usemem, pmbench, build at two sizes;
4K only, 64K, every size; --stat-flush 1, as agree does) with
`--page-content byte` and `--page-content mixed`, the order of the two
alternating run by run, --repeats times each, seed --seed. For each
setting: the workload's system time (median over the repeats) of each
content, their difference, and the difference F32 predicts: every 4K page
written to zram costs (mixed write - byte write) more, every page read
(mixed read - byte read) more, with the pages counted in the mixed runs
(mean). Root, zram and a cgroup v1 memory controller; the machine should
be idle (system time). Every run restores the machine (the harness).
"""
import argparse
import json
import os
import statistics
import sys
import time

from swaplab.kernel import agree, reclaim as R
from swaplab.results import machine_info

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
F32 = os.path.join(ROOT, "docs", "data", "kernel-move-cost-6.18-f32.json")


def per_page_ns() -> dict:
    """F32's extra cost of a mixed page over a one-byte page (ns)."""
    with open(F32) as f:
        s = json.load(f)["summary"]
    return {"out": s["mixed"]["write"] - s["byte"]["write"], "in": s["mixed"]["read"] - s["byte"]["read"]}


def kernel_run(workload: str, opts: list, mthp: str, seed: int, content: str) -> dict:
    argv = agree.run_argv(workload, opts, mthp, seed) + ["--stat-flush", str(agree.STAT_FLUSH),
                                                         "--page-content", content]
    a = R.build_parser().parse_args(argv)
    res, _ = R.run_kernel(R.params_from_args(a, argv))
    zram = res["kernel"]["zram"]
    return {"content": content, "sys_seconds": res["time"]["sys_seconds"],
            "user_seconds": res["time"]["user_seconds"],
            "pages_out": res["pages"]["swapped_out"], "pages_in": res["pages"]["swapped_in"],
            "zram": {k: zram.get(k) for k in ("comp_algorithm", "disksize")}}


def summarize(runs: list, extra: dict) -> dict:
    b = [r for r in runs if r["content"] == "byte"]
    m = [r for r in runs if r["content"] == "mixed"]
    sb = statistics.median(r["sys_seconds"] for r in b)
    sm = statistics.median(r["sys_seconds"] for r in m)
    out_p = statistics.mean(r["pages_out"] for r in m)
    in_p = statistics.mean(r["pages_in"] for r in m)
    pred = (out_p * extra["out"] + in_p * extra["in"]) * 1e-9
    return {"sys_byte": round(sb, 6), "sys_mixed": round(sm, 6), "measured_delta": round(sm - sb, 6),
            "pages_out": out_p, "pages_in": in_p, "predicted_delta": round(pred, 6),
            "ratio": round((sm - sb) / pred, 3) if pred else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    extra = per_page_ns()
    t0 = time.monotonic()
    rows = []
    k = 0
    for w, sizes in agree.SIZES.items():
        for label, opts in sizes:
            for mlabel, mthp in agree.MTHP:
                runs = []
                for rep in range(a.repeats):
                    order = ("byte", "mixed") if k % 2 == 0 else ("mixed", "byte")
                    k += 1
                    for c in order:
                        r = kernel_run(w, opts, mthp, a.seed, c)
                        r["repeat"] = rep
                        runs.append(r)
                s = summarize(runs, extra)
                rows.append({"workload": w, "size": label, "mthp": mlabel, "summary": s, "runs": runs})
                print(f"{w:8} {label:10} {mlabel:4} sys byte {s['sys_byte']:.3f} mixed {s['sys_mixed']:.3f} "
                      f"delta {s['measured_delta']:.3f} predicted {s['predicted_delta']:.3f} "
                      f"ratio {s['ratio']}", file=sys.stderr)
    meas = sum(r["summary"]["measured_delta"] for r in rows)
    pred = sum(r["summary"]["predicted_delta"] for r in rows)
    doc = {"what": "F33: system time of 2:1 pages against one-byte pages, and F32's per-page prediction",
           "machine": machine_info(), "seed": a.seed, "repeats": a.repeats,
           "stat_flush": agree.STAT_FLUSH, "per_page_extra_ns": extra,
           "total": {"measured_delta": round(meas, 6), "predicted_delta": round(pred, 6),
                     "ratio": round(meas / pred, 3)},
           "wall_seconds": round(time.monotonic() - t0, 1), "settings": rows}
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
